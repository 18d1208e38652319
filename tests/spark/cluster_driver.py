"""Run by tests/spark/test_spark_cluster.py through `spark-submit` on a local standalone cluster.

Two phases in one application (an application costs the cluster ~20 s to start):

1. `kreassign check --engine spark --json FILE` exactly as a user would run it under spark-submit
   (no --master: spark-submit's wins; the JSON to a file, since spark-submit merges the driver's
   stderr into its stdout), recorded in OUT/check.json with the settings the session ended up
   with (to show spark-submit's --conf and spark-defaults.conf won);
2. the same model explored again with every level on Spark (no warm-up on the driver; the levels layout,
   whose lineage Spark recomputes), pausing
   after level KILL_AT until the test has killed an executor JVM: OUT/fault.json holds the counts
   and counterexample paths, which the test compares with the embedded engine's, and the executors
   the run reports lost.

Usage: spark-submit ... cluster_driver.py OUT KILL_AT
"""

from __future__ import annotations

import json
import os
import sys
import time

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark import engine, run
from kreassign.checker.spark.options import SparkOptions

from kreassign.cli import main

BOUNDS = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)  # kip455: 457 states, 10 levels
FLAGS = ["--profile", "kip455", "--brokers", "3", "--rf", "2", "--reassigns", "1", "--cancels", "1", "--failures", "1"]


def check_phase(out: str) -> None:
    # kip455 at these bounds is tiny: on a fast machine every level takes under DRIVER_LEVEL_SECONDS and
    # the warm-up would run them all on the driver, leaving the executors idle; the test asserts they ran
    run.DRIVER_LEVEL_SECONDS = 0.0
    result = os.path.join(out, "result.json")
    code = main(["check", "--engine", "spark", *FLAGS, "--json", result, "--no-minimize", "--out", os.path.join(out, "cx")])
    conf = engine.spark_context().getConf()
    settings = {k: conf.get(k, None) for k in ("spark.task.maxFailures", "spark.sql.shuffle.partitions",
                                               "spark.ui.enabled", "spark.python.worker.reuse")}
    with open(result) as f:
        document = json.load(f)
    with open(os.path.join(out, "check.json"), "w") as f:
        json.dump({"exit_code": code, "result": document, "settings": settings}, f)


def fault_phase(out: str, kill_at: int) -> None:
    sc = engine.spark_context()
    run.PROGRESS_INTERVAL = 0  # a progress call after every level

    def progress(states: int, depth: int, rate: float) -> None:
        if depth == kill_at + 1:  # levels 0..kill_at done and cached on the executors
            with open(os.path.join(out, "ready"), "w") as f:
                f.write(sc.applicationId)
            deadline = time.monotonic() + 300
            while not os.path.exists(os.path.join(out, "killed")) and time.monotonic() < deadline:
                time.sleep(0.2)

    levels: list[dict] = []
    info: dict = {}
    result = engine.explore_spark(build_model("reassignment", "kip455", BOUNDS),
                                  SparkOptions(warmup=False, progress=progress, layout="levels"), sc=sc, level_log=levels, run_info=info)
    with open(os.path.join(out, "fault.json"), "w") as f:
        json.dump({"states": result.states, "transitions": result.transitions, "depth": result.depth,
                   "complete": result.complete, "edges": result.per_action_edges,
                   "violations": {n: repr(v.path) for n, v in result.violations.items()},
                   "executors_used": info.get("executors_used"), "executors_lost": info.get("executors_lost"),
                   "levels": len(levels)}, f)


if __name__ == "__main__":
    check_phase(sys.argv[1])
    fault_phase(sys.argv[1], int(sys.argv[2]))
