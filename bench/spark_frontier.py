"""Per-level bytes shuffled by the Spark engine, next to the frontier and the visited set.

    python bench/spark_frontier.py                  # kip236 (the default suite's largest) and anchor N6_fail
    python bench/spark_frontier.py --model zk --master 'local[2]'
    python bench/spark_frontier.py --quick          # anchor N4_fail only: a smoke run of the whole path

Every level runs on Spark (no warm-up on the driver). For each level it prints the new states
(the frontier), the states visited so far, the bytes the level's job wrote to the shuffle
(Spark's own metric, from the JVM's status store: what really went through the shuffle) and the
bytes the tasks handed to it (the candidates, counted by the tasks), per new state. With visited
sets resident in their buckets, the bytes follow the frontier; when the visited sets went
through the shuffle every level (the design before issue 17), they grew with the visited column.
Never asserts; checks the counts against the embedded engine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from anchor_model import anchor_model
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark.engine import explore_spark, spark_session
from kreassign.checker.spark.jobs import shuffle_write_by_job
from kreassign.checker.spark.options import SparkOptions

MODELS = {
    "kip236": lambda: build_model("reassignment", "kip236", DEFAULT_SUITE["kip236"]),
    "zk": lambda: build_model("reassignment", "zk", DEFAULT_SUITE["zk"]),
    "kip455": lambda: build_model("reassignment", "kip455", DEFAULT_SUITE["kip455"]),
    "anchor N4_fail": lambda: anchor_model("N4_fail"),
    "anchor N6_fail": lambda: anchor_model("N6_fail"),
    "anchor N7_fail": lambda: anchor_model("N7_fail"),
}


def run(sc: Any, name: str) -> None:
    model = MODELS[name]()
    embedded = explore(model)
    levels: list[dict[str, Any]] = []
    started = time.perf_counter()
    result = explore_spark(model, SparkOptions(warmup=False), sc=sc, level_log=levels)
    seconds = time.perf_counter() - started
    assert (result.states, result.transitions, result.depth) == (embedded.states, embedded.transitions, embedded.depth)
    by_job = shuffle_write_by_job(sc)
    rows = []
    for entry in levels:
        n = entry["level"]
        # level n's candidates are written to the shuffle by level n+1's job (its map stage)
        written = by_job.get(f"kreassign: BFS level {n + 1} of {getattr(model, 'name', 'the model')}", 0)
        rows.append([n, f"{entry['new_states']:,}", f"{entry['visited']:,}", f"{entry.get('shuffled_bytes', 0):,}",
                     f"{written:,}", f"{written / max(entry['new_states'], 1):,.0f}",
                     f"{written / max(entry['visited'], 1):,.1f}", f"{entry['job_seconds']:.2f}"])
    print(f"\n{name}: {result.states:,} states, {result.transitions:,} transitions, depth {result.depth}, "
          f"{seconds:.1f} s on {sc.master}")
    print(tabulate(rows, headers=["level", "new states", "visited", "candidate bytes (tasks)",
                                  "shuffle write (Spark)", "bytes/new state", "bytes/visited", "job s"],
                   tablefmt="github", disable_numparse=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", choices=sorted(MODELS))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--quick", action="store_true", help="anchor N4_fail only (the smallest model)")
    args = parser.parse_args(argv)
    sc = spark_session(args.master, partitions=2).sparkContext
    for name in args.model or (["anchor N4_fail"] if args.quick else ["kip236", "anchor N6_fail"]):
        run(sc, name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
