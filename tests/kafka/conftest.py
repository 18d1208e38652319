"""Fixtures for the tests that run Kafka's KRaft controller: Java 17 and the releases resolved by Maven
(`kreassign kafka fetch --all`, which .ci/run does; a release missing from the cache is fetched on first use)."""

from __future__ import annotations

import pytest
from kreassign.checker.implementations.kafka import KafkaImplementation, KafkaOptions

#: the release most tests pin: their counts, findings and curated traces were read from Kafka 3.9
KAFKA_39 = "3.9.2"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/kafka/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.kafka)


@pytest.fixture(scope="session")
def kafka():
    """One JVM for the session: Kafka 3.9.2 at its default metadata.version (3.9-IV0)."""
    impl = KafkaImplementation(KafkaOptions(kafka_version=KAFKA_39))
    yield impl
    impl.close()
