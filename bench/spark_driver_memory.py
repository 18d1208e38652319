"""Driver memory per state of a Spark run with liveness: the graph on the driver vs the distributed fixpoint.

    python bench/spark_driver_memory.py              # kip236, the default suite's largest reassignment model
    python bench/spark_driver_memory.py --profile zk
    python bench/spark_driver_memory.py --quick      # kip455 with 1 reassignment (457 states): a smoke run

Measures the peak of Python allocations on the driver (tracemalloc) during
`explore_spark(model, SparkOptions(keep_graph=True))` (what liveness needed before issue 17: the whole
state graph comes to the driver) and during `explore_spark(model, SparkOptions(liveness=True))` followed
by the classification of every `eventually` property's stuck states (what `kreassign check --engine
spark` does now), each divided by the number of states; and checks both give the embedded checker's
lassos.
Never asserts on the figures.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from dataclasses import replace

from kreassign.checker.check.run import _classify_stuck
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark.engine import explore_spark, spark_session
from kreassign.checker.spark.options import SparkOptions
from kreassign.spec.properties import EVENTUALLY
from tabulate import tabulate


def peak(run):
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    value = run()
    seconds = time.perf_counter() - started
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return value, top, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", help="a profile of the default suite (default: kip236, with --quick kip455)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--quick", action="store_true",
                        help="kip455 (the default suite's smallest model) with one reassignment instead of two")
    args = parser.parse_args(argv)
    args.profile = args.profile or ("kip455" if args.quick else "kip236")
    sc = spark_session(args.master, partitions=2).sparkContext
    bounds = replace(DEFAULT_SUITE[args.profile], reassigns=1) if args.quick else DEFAULT_SUITE[args.profile]
    model = build_model("reassignment", args.profile, bounds)
    goals = [p for p in model.properties() if p.kind == EVENTUALLY]

    def with_graph():
        result = explore_spark(model, SparkOptions(keep_graph=True), sc=sc)
        return result.states, {p.name: _classify_stuck(result.graph, p, (), True).unexpected for p in goals}

    def distributed():
        result = explore_spark(model, SparkOptions(liveness=True), sc=sc)
        return result.states, {p.name: result.classify_stuck(p, (), True)[0] for p in goals}

    embedded_graph = explore(model, keep_graph=True).graph
    expected = {p.name: _classify_stuck(embedded_graph, p, (), True).unexpected for p in goals}
    del embedded_graph
    (states, before), before_peak, before_s = peak(with_graph)
    (_, after), after_peak, after_s = peak(distributed)

    def states_only(found):
        return {n: None if v is None else ([s for s, _ in v[0]], v[1]) for n, v in found.items()}

    shown = f"{args.profile} (--quick: 1 reassignment)" if args.quick else args.profile
    print(f"{shown}: {states:,} states, {len(goals)} eventually properties; lassos as the embedded engine's: "
          f"after {after == expected} (labels included), before {states_only(before) == states_only(expected)} "
          "(states; the graph's labels are decoded from JSON)")
    print(tabulate([["graph on the driver (before)", f"{before_peak / 2**20:,.1f}", f"{before_peak / states:,.0f}",
                     f"{before_s:.1f}"],
                    ["distributed fixpoint (after)", f"{after_peak / 2**20:,.1f}", f"{after_peak / states:,.0f}",
                     f"{after_s:.1f}"]],
                   headers=["liveness", "driver peak MiB (Python)", "bytes per state", "seconds"], tablefmt="github",
                   disable_numparse=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
