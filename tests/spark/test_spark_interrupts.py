"""Ctrl-C in `kreassign check --engine spark` (issue 29): exit 130, no traceback, one line, no process left.

The cases of the other subcommands, and the helpers these use, are in
tests/unit/test_interrupts_every_command.py (its docstring says how a run is started, when it counts as
working and what is asserted). Spark's are here because they start a JVM (local[1]) and its Python workers.

Ctrl-C while a level ran on Spark used to print two tracebacks: PySpark's SparkContext installs a SIGINT
handler that calls the JVM from inside the signal handler, re-entering the Py4J call the driver was blocked
in (kreassign/interrupts.py, checker/spark/engine.py). Ctrl-C while PySpark was still starting the JVM left
that JVM running (and writing to the terminal) until it had started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))

from test_interrupts_every_command import (
    BIG_KRAFT,
    GONE_TIMEOUT,
    assert_interrupted,
    cmdline,
    group_members,
    on_stderr,
    proc_stat,
    processes,
    runs,  # noqa: F401 - the fixture
    start,
    wait_until,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPARK = ["--engine", "spark", "--master", "local[1]"]


def _python_workers(leader: int) -> set[int]:
    """The process groups of PySpark's Python worker daemons under `leader` (started by the JVM for the first
    task; the daemon makes a process group of its own, so the leader's group does not hold them)."""
    parents = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        st = proc_stat(name)
        if st is not None:
            parents[int(name)] = st
    out = set()
    for pid, (_, parent, pgid) in parents.items():
        if "pyspark.daemon" not in cmdline(pid):
            continue
        ancestor = parent
        while ancestor > 1 and ancestor != leader and ancestor in parents:
            ancestor = parents[ancestor][1]
        if ancestor == leader:
            out.add(pgid)
    return out


@pytest.mark.parametrize("layout", ["levels", "resident"])
def test_ctrl_c_while_a_level_runs_on_spark(layout, tmp_path, runs) -> None:  # noqa: F811
    """levels: with liveness (the default), the levels layout's jobs; resident: --no-liveness, its barrier stage
    (the coordinator waits on its tasks' sockets, the stage's job runs in a thread of its own)."""
    pytest.importorskip("pyspark")
    extra = ["--no-liveness", "--spark-layout", "resident"] if layout == "resident" else []
    run = start(["check", *SPARK, *BIG_KRAFT, *extra, "--progress-interval", "0.2", "--out", str(tmp_path / "out")],
                tmp_path)
    runs.append(run)
    wait_until(run, lambda r: bool(_python_workers(r.pid)) and on_stderr("progress kraft:")(r),
               "levels on Spark (its Python workers up, a progress line)")
    workers = _python_workers(run.pid)
    try:
        out, err = assert_interrupted(run, "group")
        assert "kreassign check: interrupted: kraft while exploring after at least" in err
        assert out.rstrip().endswith("exit 130 (interrupted: 1 of 1 profile(s) incomplete or not run)")
        deadline = time.monotonic() + GONE_TIMEOUT
        while (left := {g: group_members(g) for g in workers if group_members(g)}) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, f"PySpark's Python workers outlived the run: {left}"
    finally:
        for g in workers:
            with contextlib.suppress(OSError):
                os.killpg(g, signal.SIGKILL)


@pytest.mark.parametrize("to", ["group", "leader"])
def test_ctrl_c_while_spark_starts_its_jvm(to, tmp_path, runs) -> None:  # noqa: F811
    pytest.importorskip("pyspark")
    run = start(["check", *SPARK, *BIG_KRAFT, "--out", str(tmp_path / "out")], tmp_path)
    runs.append(run)
    wait_until(run, processes(1, "spark"), "spark-submit launching the JVM")
    _, err = assert_interrupted(run, to)
    assert "kreassign check: interrupted: kraft while starting" in err
