"""Infrastructure failures are InfraError (exit 3) with their real cause, never a finding (exit 1)."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("pyspark")

from kreassign.checker.spark import jobs, session

from kreassign.errors import InfraError, UsageError


def test_an_unreachable_master_fails_at_once():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # a port probe before any JVM starts, so the answer does not wait for Spark's minute of retries
    with pytest.raises(InfraError, match=rf"Spark master spark://127.0.0.1:{port} is unreachable"):
        session.check_reachable(f"spark://127.0.0.1:{port}", 5)


def test_conf_flags_are_key_value_pairs():
    assert session.spark_conf(["spark.executor.memory=4g", "a.b= x=y"]) == {"spark.executor.memory": "4g", "a.b": " x=y"}
    with pytest.raises(UsageError, match="--conf 'spark.executor.memory': expected KEY=VALUE"):
        session.spark_conf(["spark.executor.memory"])


class JavaError(Exception):
    """What Py4J raises for a Java exception: the exception object with its class and cause chain."""

    class Obj:
        def __init__(self, cls, message, cause=None):
            self.cls, self.message, self.cause = cls, message, cause

        def getClass(self):
            return type("C", (), {"getName": lambda _: self.cls})()

        def getMessage(self):
            return self.message

        def getCause(self):
            return self.cause

    def __init__(self, java):
        super().__init__("An error occurred while calling o204.count.")
        self.java_exception = java


def test_errors_name_the_java_exception_its_cause_and_the_stage():
    java = JavaError.Obj("org.apache.spark.SparkException",
                         "Job aborted due to stage failure: Task 1 in stage 7.0 failed 4 times\nmore",
                         JavaError.Obj("java.io.IOException", "No space left on device"))
    with pytest.raises(InfraError) as info:
        jobs.run_job(lambda: (_ for _ in ()).throw(JavaError(java)), what="BFS level 3 of kraft")
    message = str(info.value)
    assert message.startswith("Spark: BFS level 3 of kraft failed: org.apache.spark.SparkException: "
                              "Job aborted due to stage failure: Task 1 in stage 7.0 failed 4 times")
    assert "caused by java.io.IOException: No space left on device" in message and "o204.count" not in message


def test_engine_bugs_keep_their_traceback():
    with pytest.raises(KeyError):
        jobs.run_job(lambda: {}["x"])


@pytest.mark.spark
def test_a_bad_kreassign_setting_exits_2_and_the_jvm_the_run_started_is_gone(tmp_path):
    """`kreassign check --engine spark --conf spark.kreassign.partitions=x`: the JVM starts, the setting is read
    from the session and refused (exit 2, one line naming it), and the JVM is gone when the process has exited
    (engine._end_jvm; PySpark's JVM used to outlive it by a second or two). The JVM is found by a marker on its
    command line (SPARK_SUBMIT_OPTS, which kreassign extends, never replaces)."""
    import os
    import subprocess
    import sys
    import uuid

    marker = f"-Dkreassign.test.run={uuid.uuid4().hex}"
    cmd = [sys.executable, "-c", "from kreassign.cli import main; raise SystemExit(main())", "check", "--profile",
           "kip455", "--engine", "spark", "--master", "local[1]", "--conf", "spark.kreassign.partitions=x",
           "--no-liveness"]
    with open(tmp_path / "stderr", "w") as err:  # (a file, not a pipe: reading a pipe would wait for the JVM too)
        done = subprocess.run(cmd, cwd=tmp_path, env={**os.environ, "SPARK_SUBMIT_OPTS": marker},
                              stdout=subprocess.DEVNULL, stderr=err, timeout=300, check=False)
    stderr = (tmp_path / "stderr").read_text()
    assert done.returncode == 2
    assert stderr.strip().splitlines()[-1] == \
        "kreassign check: spark.kreassign.partitions: expected a number of buckets, got 'x'"
    assert "Traceback" not in stderr

    def marked() -> list[str]:
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(pid)
            except OSError:
                pass
        return found

    assert marked() == []
