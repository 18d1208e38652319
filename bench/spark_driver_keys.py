"""The driver's memory for the discovery keys of a Spark search: every level's kept in memory, or spilled.

    python bench/spark_driver_keys.py            # kraft --partitions 2 --brokers 5 --rf 3 --failures 1 (2,982,186 states)
    python bench/spark_driver_keys.py --quick    # the default kraft suite model: a smoke run

Runs `explore_spark` twice in one session, `--no-liveness`: with `SparkOptions(spill_keys=None)` (every level's
keys in the driver's memory: the engine before) and spilled (a level of at least 2**16 keys moves to a
memory-mapped file once the next level is found, where the default, 2**20, would spill none of this model's
levels: its widest has 486,922 states; --quick spills every level). Prints, per
run, the peak of the driver's Python allocations (tracemalloc) during the search, what stays allocated after it
(the result and the search kept for its paths), each per state, the seconds, and whether the counts and every
counterexample path are the same: as the embedded engine's with --quick, as the first row's otherwise (the
object engine, the one with comparable paths, takes minutes on the full model). A first run, not shown, takes
the one-time allocations (the session's, the model's); not with --quick. Never asserts.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from dataclasses import replace

import numpy as np
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark.engine import spark_session
from kreassign.checker.spark.options import SparkOptions
from kreassign.checker.spark.run import SparkRun
from tabulate import tabulate

FLAGS = "--partitions 2 --brokers 5 --rf 3 --failures 1"


def measured(sc, model, options: SparkOptions):
    """(answers, peak bytes, retained bytes, seconds, spilled levels) of one run."""
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    run = SparkRun(sc, model, options)
    result = run.run()
    seconds = time.perf_counter() - started
    gc.collect()
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    spilled = sum(1 for k in run.search.level_keys if isinstance(k, np.memmap))
    return answers(result), peak, retained, seconds, spilled


def answers(result) -> tuple:
    return (result.states, result.transitions, result.depth,
            {n: [str(a) for a, _ in v.path] for n, v in sorted(result.violations.items())})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the default kraft suite model, every level spilled")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv)
    bounds = DEFAULT_SUITE["kraft"] if args.quick else replace(DEFAULT_SUITE["kraft"], partitions=2, brokers=5, rf=3,
                                                               failures=1)
    model = build_model("reassignment", "kraft", bounds)
    want = answers(explore(model)) if args.quick else None  # (the object engine: minutes on the full model)
    sc = spark_session(args.master).sparkContext
    base = SparkOptions(liveness=False)
    spill = SparkOptions(liveness=False, spill_keys=1 if args.quick else 1 << 16)
    if not args.quick:  # a first run, not shown: the session's and the model's one-time allocations
        measured(sc, model, base)
    rows = []
    for name, options in (("every level in memory (before)", replace(base, spill_keys=None)),
                          (f"spilled (spill_keys={spill.spill_keys:,})", spill)):
        got, peak, retained, seconds, spilled = measured(sc, model, options)
        want = got if want is None else want  # (full run: the spilled run against the one before)
        states = got[0]
        rows.append([name, f"{states:,}", f"{peak / 2**20:,.1f}", f"{peak / states:.1f}", f"{retained / 2**20:,.1f}",
                     f"{retained / states:.1f}", spilled, f"{seconds:.1f}", "yes" if got == want else "NO"])
    print(f"kraft {'(default suite model)' if args.quick else FLAGS}, --no-liveness, {args.master}"
          + ("" if args.quick else "; Python allocations after a first run"))
    print(tabulate(rows, headers=["keys", "states", "driver peak MiB (Python)", "peak B/state", "retained MiB",
                                  "retained B/state", "levels spilled", "seconds", "same answers"],
                   tablefmt="github", disable_numparse=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
