"""One SparkSession for every Spark test: local[2] (with task retries), quiet logs, UI off.

A new session costs about 5 s, so it is session-scoped; `local[2,3]` is local[2] with up to
3 attempts per task (local mode ignores spark.task.maxFailures), which the fault test needs.
"""

from __future__ import annotations

import os

import pytest

MASTER = os.environ.get("KREASSIGN_SPARK_TEST_MASTER", "local[2,3]")


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from kreassign.checker.spark.engine import spark_session

    session = spark_session(MASTER, partitions=2)
    yield session
    session.stop()


@pytest.fixture
def sc(spark):
    return spark.sparkContext
