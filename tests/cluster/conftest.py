"""The cluster tier: real Kafka clusters, each node a JVM on 127.0.0.1 (docs/cluster.md). Needs Java 17 and
the brokers' jars (`kreassign cluster fetch 4.4.0 3.9.2`, which .ci/run does; a missing release is fetched on
first use). Deselect with -m 'not cluster'."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/cluster/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.cluster)
