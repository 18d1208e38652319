"""The engine on a real (local) Spark standalone cluster, run through `spark-submit`.

The module starts a master and two one-core workers from the pyspark installation (loopback
only, ports chosen free, everything under tmp_path) and stops them at the end. One application
(tests/spark/cluster_driver.py) runs `kreassign check --engine spark` under spark-submit and
then a search during which the test kills an executor JVM; the tests check that:

- the application ran on the master (spark-submit's --master won over kreassign's local[*]),
  with both executors, and spark-submit's --conf and spark-defaults.conf won over kreassign's
  defaults, and the JSON result records the master and the executors;
- the run survived the killed executor (Spark recomputed the lost cached runs and shuffle
  files from their lineage) with the embedded engine's counts, verdicts and counterexamples;
- a second application, asking for executors larger than any worker, submitted alongside the
  first (so that its start and wait cost no extra time), gives up with exit code 3.

Slow (a cluster and an application start in 20-60 s): marked `slow`, still run in CI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark.standalone import master_state, standalone_cluster, stop, wait_for

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
KILL_AT = 3  # the executor dies after level 3 of the 10
START_SECONDS = 180  # bounds every wait: a loaded 2-core machine starts a JVM in 5-30 s (standalone.py's too)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("standalone")
    with standalone_cluster(root, os.environ, workers=2, cores=1, memory="1g", defaults={"spark.task.maxFailures": "6"}) as c:
        yield {"url": c.url, "ui": c.ui, "env": c.env, "root": c.root, "home": c.home}


def executor_pids(app_id: str) -> list[int]:
    """The executor JVMs of the application (children of the workers this module started)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in cmd and app_id.encode() in cmd:
                pids.append(int(entry))
    return sorted(pids)


@pytest.fixture(scope="module")
def starved(cluster):
    """`kreassign check` under spark-submit asking for executors with more memory than any worker
    has, submitted once both workers are up and left to give up (--spark-timeout 5) while the main
    application runs: its JVM start and its wait overlap the main application's instead of adding to them."""
    script = cluster["root"] / "kreassign_submit.py"
    script.write_text("import sys\nfrom kreassign.cli import main\n"
                      "sys.exit(main(['check', '--engine', 'spark', *sys.argv[1:]]))\n")
    cmd = [os.path.join(cluster["home"], "bin", "spark-submit"), "--master", cluster["url"],
           "--conf", "spark.executor.memory=64g", str(script), "--profile", "kraft", "--spark-timeout", "5",
           "--out", str(cluster["root"] / "starved")]
    log_path = cluster["root"] / "starved.log"
    with open(log_path, "w") as log:
        app = subprocess.Popen(cmd, env=cluster["env"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield {"app": app, "log": log_path}
    finally:
        stop([app])


@pytest.fixture(scope="module")
def submitted(cluster, starved):
    """The application, with an executor killed after level KILL_AT of its second phase (the
    starved application runs alongside: it is submitted first)."""
    out = cluster["root"] / "out"
    out.mkdir()
    cmd = [os.path.join(cluster["home"], "bin", "spark-submit"), "--master", cluster["url"],
           "--conf", "spark.sql.shuffle.partitions=3", "--conf", "spark.executor.memory=768m",
           str(HERE / "cluster_driver.py"), str(out), str(KILL_AT)]
    with open(cluster["root"] / "driver.log", "w") as log:
        app = subprocess.Popen(cmd, env=cluster["env"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    killed = None
    try:
        wait_for("the application to reach the kill point", lambda: (out / "ready").exists() or app.poll() is not None,
                 600)
        if (out / "ready").exists():
            app_id = (out / "ready").read_text()
            victims = executor_pids(app_id)
            if victims:
                os.kill(victims[0], signal.SIGKILL)
                killed = {"app_id": app_id, "pid": victims[0], "executors": len(victims)}
            (out / "killed").touch()
        app.wait(timeout=600)
    finally:
        stop([app])
    driver_log = (cluster["root"] / "driver.log").read_text()
    assert app.returncode == 0, driver_log[-3000:]
    return {"check": json.loads((out / "check.json").read_text()), "fault": json.loads((out / "fault.json").read_text()),
            "killed": killed, "master": master_state(cluster["ui"]), "url": cluster["url"]}


def test_spark_submit_runs_on_the_cluster_with_the_users_settings(submitted):
    check = submitted["check"]
    assert check["exit_code"] == 0
    (result,) = check["result"]["results"]
    spark = result["spark"]
    assert spark["master"] == submitted["url"]  # spark-submit's --master, not kreassign's local[*]
    assert spark["executors_registered"] == 2 and spark["executors_used"] >= 1
    apps = submitted["master"]["activeapps"] + submitted["master"]["completedapps"]
    assert spark["app_id"] in [a["id"] for a in apps]  # the master ran it
    assert check["settings"]["spark.task.maxFailures"] == "6"  # spark-defaults.conf over kreassign's 4
    assert check["settings"]["spark.sql.shuffle.partitions"] == "3"  # spark-submit --conf over kreassign's 200
    assert check["settings"]["spark.ui.enabled"] == "false"  # kreassign's default where the user set nothing
    embedded = explore(build_model("reassignment", "kip455", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)))
    assert (result["states"], result["transitions"], result["depth"]) == (
        embedded.states, embedded.transitions, embedded.depth)


def test_a_killed_executor_changes_nothing(submitted):
    assert submitted["killed"] is not None and submitted["killed"]["executors"] == 2  # one of two killed mid-run
    fault = submitted["fault"]
    embedded = explore(build_model("reassignment", "kip455", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)))
    assert (fault["states"], fault["transitions"], fault["depth"], fault["complete"], fault["edges"]) == (
        embedded.states, embedded.transitions, embedded.depth, embedded.complete, embedded.per_action_edges)
    assert fault["violations"] == {n: repr(v.path) for n, v in embedded.violations.items()}
    assert fault["levels"] > KILL_AT + 1  # levels ran after the kill
    assert len(fault["executors_lost"]) == 1 and fault["executors_lost"][0]["reason"]  # and the run says so


def test_a_cluster_without_room_for_the_application_fails_fast_with_exit_3(cluster, starved):
    """Executors asking for more memory than any worker has are never granted: instead of hanging,
    `kreassign check` gives up after --spark-timeout with the infrastructure exit code."""
    app = starved["app"]
    app.wait(timeout=START_SECONDS)
    output = starved["log"].read_text()  # (spark-submit merges the Python driver's stderr into its stdout)
    assert app.returncode == 3, output[-2000:]
    assert "no executor registered" in output and "spark.executor.memory=64g" in output
    # the master was asked for 64g executors, more than any worker has, and granted none; the
    # main application running alongside had both workers' cores by then, or got them after
    state = master_state(cluster["ui"])
    (asked,) = [a for a in state["activeapps"] + state["completedapps"] if a["memoryperexecutor"] == 64 * 1024]
    assert asked["cores"] == 0 and all(w["memory"] < 64 * 1024 for w in state["workers"])
