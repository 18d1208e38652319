"""Fixtures for the tests that run Kafka's KRaft controller (Java 17 + ../shared/kafka, both present in CI)."""

from __future__ import annotations

import pytest
from kreassign.checker.oracle.kafka import KafkaImplementation, KafkaOptions


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/kafka/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.kafka)


@pytest.fixture(scope="session")
def kafka():
    """One JVM for the session (metadata.version 3.9-IV0)."""
    impl = KafkaImplementation(KafkaOptions())
    yield impl
    impl.close()
