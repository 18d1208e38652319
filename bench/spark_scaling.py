"""Benchmark the Spark engine against the embedded one (prints figures and ratios, never asserts).

    python bench/spark_scaling.py                 # anchor N7_fail and kip236 (the largest default model)
    python bench/spark_scaling.py --quick         # anchor N4_fail and kip455, one timed run each: a smoke run
    python bench/spark_scaling.py --repeat 5 --json

For each model: the embedded engine, then Spark on local[1] (one bucket) and local[2] (two
buckets), each session warmed up by one untimed run (JIT, Python workers, the model built on
the executors), then `--repeat` timed runs; the best is reported (the per-level costs are
those of the best local[2] run). Every run is checked to
give the embedded engine's counts. From the per-level costs of the local[2] runs it
estimates what a 16-executor cluster would explore per hour (see `estimate`).

The figures are only comparable within one run of this script on an otherwise idle machine:
Spark's fixed cost per level is dominated by scheduling, which another busy process on a
2-core machine slows down more than it slows the embedded engine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from anchor_model import anchor_model
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark.engine import explore_spark, spark_session
from kreassign.checker.spark.options import SparkOptions

#: name -> (model factory, explore options)
MODELS: dict[str, tuple[Callable[[], Any], dict[str, Any]]] = {
    "anchor N7_fail": (lambda: anchor_model("N7_fail"), {"check_deadlock": True}),
    "anchor N5_fail": (lambda: anchor_model("N5_fail"), {"check_deadlock": True}),
    "anchor N4_fail": (lambda: anchor_model("N4_fail"), {"check_deadlock": True}),
    # the largest default reassignment model: the most transitions and the most work per state
    # (zk has more states, 9,495, but half the transitions and 33 levels of 300 states)
    "kip236": (lambda: build_model("reassignment", "kip236", DEFAULT_SUITE["kip236"]), {}),
    "kip455": (lambda: build_model("reassignment", "kip455", DEFAULT_SUITE["kip455"]), {}),
    "zk": (lambda: build_model("reassignment", "zk", DEFAULT_SUITE["zk"]), {}),
}
FULL = ["anchor N7_fail", "kip236"]
QUICK = ["anchor N4_fail", "kip455"]  # the smallest: the whole code path in seconds, no figures to quote
SMALL_LEVEL = 0.01  # levels with fewer new states than this share of the largest measure the fixed cost


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, Any, list[float]]:
    """(best time, last result, every time): the best of `repeat` runs, as timeit reports, since
    other processes on the machine only ever add time."""
    seconds, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - started)
    return min(seconds), result, seconds


def counts(result: Any) -> tuple[int, int, int]:
    return result.states, result.transitions, result.depth


def bench_spark(master: str, buckets: int, names: list[str], repeat: int,
                embedded: dict[str, Any]) -> dict[str, dict[str, Any]]:
    started = time.perf_counter()
    spark = spark_session(master, partitions=buckets)
    session_seconds = time.perf_counter() - started
    sc = spark.sparkContext
    out = {}
    try:
        for name in names:
            make, options = MODELS[name]
            model = make()
            logs: list[list[dict[str, Any]]] = []

            def run(model: Any = model, options: dict[str, Any] = options,
                    logs: list[list[dict[str, Any]]] = logs) -> Any:
                logs.append([])
                return explore_spark(model, SparkOptions(partitions=buckets, **options), sc=sc, level_log=logs[-1])

            warm_started = time.perf_counter()
            warm = run()
            warm_seconds = time.perf_counter() - warm_started
            seconds, result, all_seconds = timed(run, repeat)
            best_log = logs[1 + all_seconds.index(seconds)]
            if counts(result) != counts(embedded[name]["result"]) or counts(warm) != counts(result):
                print(f"!! {name} on {master}: counts {counts(result)} differ from the embedded engine's",
                      file=sys.stderr)
            out[name] = {"seconds": seconds, "all": all_seconds, "warmup": warm_seconds, "result": result,
                         "levels": best_log, "session": session_seconds}
    finally:
        spark.stop()
    return out


def _spin(n: int) -> float:
    started = time.perf_counter()
    x = 0
    for i in range(n):
        x += i
    return time.perf_counter() - started


def machine_parallelism(n: int = 10_000_000) -> float:
    """How much faster two CPU-bound processes run than one, side by side, on this machine (2.0 on two
    real cores): the ceiling for local[2] over local[1]."""
    import multiprocessing

    alone = min(_spin(n) for _ in range(2))
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # start the workers
        started = time.perf_counter()
        pool.map(_spin, [n, n])
        together = time.perf_counter() - started
    return 2 * alone / together


def level_costs(levels: list[dict[str, Any]]) -> dict[str, float]:
    """The fixed cost of a Spark level (median over the small ones) and the work rate of the rest.

    The first levels run on the driver (they cost less than a Spark job); they count as work. When every
    level ran on the driver (a model small enough, or a fast machine) there is no fixed cost to measure: 0."""
    spark = [lv for lv in levels if lv["where"] == "spark"]
    if spark:
        largest = max(lv["new_states"] for lv in spark)
        small = [lv["seconds"] for lv in spark if lv["new_states"] <= SMALL_LEVEL * largest]
        fixed = statistics.median(small or [min(lv["seconds"] for lv in spark)])
    else:  # every level was quick enough for the driver (a small model): no Spark level to measure
        fixed = 0.0
    total = sum(lv["seconds"] for lv in levels)
    states = sum(lv["new_states"] for lv in levels)
    work = max(total - fixed * len(spark), 1e-9)
    return {"fixed_per_level": fixed, "levels": len(levels), "spark_levels": len(spark), "total": total,
            "work_seconds": work, "states_per_work_second": states / work}


def estimate(costs: dict[str, float], cores_per_run: int, executors: int = 16, cores_per_executor: int = 1,
             cluster_fixed: float = 0.5, efficiency: float = 0.7) -> float:
    """States per hour on `executors` executors, from the local per-level costs.

    The work rate per core is the local one (`states_per_work_second` / `cores_per_run`); a cluster
    scales it by its cores times `efficiency` (shuffles over the network instead of local disk,
    stragglers: 0.7 is a conventional figure for shuffle-bound Spark jobs); each level pays
    `cluster_fixed` seconds (scheduling 16 executors and fetching shuffle blocks: the local fixed
    cost is 0.1–0.3 s), over as many levels as the local run had.
    """
    per_core = costs["states_per_work_second"] / cores_per_run
    rate = per_core * executors * cores_per_executor * efficiency
    return max(3600.0 - costs["levels"] * cluster_fixed, 0.0) * rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{' and '.join(QUICK)} instead of {' and '.join(FULL)}")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), help="models to run")
    parser.add_argument("--repeat", type=int, help="timed runs per engine (default: 3, with --quick 1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = args.models or (QUICK if args.quick else FULL)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    ceiling = machine_parallelism(1_000_000 if args.quick else 10_000_000)

    embedded: dict[str, dict[str, Any]] = {}
    for name in names:
        make, options = MODELS[name]
        model = make()
        explore(model, **options)  # warm caches like the Spark runs' warm-up
        seconds, result, all_seconds = timed(lambda m=model, o=options: explore(m, **o), args.repeat)
        embedded[name] = {"seconds": seconds, "all": all_seconds, "result": result}
    local1 = bench_spark("local[1]", 1, names, args.repeat, embedded)
    local2 = bench_spark("local[2]", 2, names, args.repeat, embedded)

    rows, report = [], {}
    for name in names:
        e, one, two = embedded[name], local1[name], local2[name]
        states = e["result"].states
        costs = level_costs(two["levels"])
        costs1 = level_costs(one["levels"])
        report[name] = {
            "states": states, "transitions": e["result"].transitions, "depth": e["result"].depth,
            "embedded_s": e["seconds"], "local1_s": one["seconds"], "local2_s": two["seconds"],
            "embedded_states_per_s": states / e["seconds"], "local1_states_per_s": states / one["seconds"],
            "local2_states_per_s": states / two["seconds"],
            "local2_over_local1": one["seconds"] / two["seconds"],
            "local2_slowdown_vs_embedded": two["seconds"] / e["seconds"],
            "local1_warmup_s": one["warmup"], "local2_warmup_s": two["warmup"],
            "session_start_s": one["session"],
            "per_level_local2": costs, "per_level_local1": costs1,
            "cluster16x1_states_per_hour": estimate(costs, 2),
            "cluster16x4_states_per_hour": estimate(costs, 2, cores_per_executor=4),
            "levels_local2": two["levels"],
        }
        for engine, d in (("embedded", e), ("spark local[1]", one), ("spark local[2]", two)):
            rows.append([name, engine, f"{states:,}", f"{e['result'].transitions:,}", e["result"].depth,
                         f"{d['seconds']:.2f}", f"{states / d['seconds']:,.0f}", f"{d['seconds'] / e['seconds']:.1f}x"])
    if args.json:
        print(json.dumps({"machine_parallelism": ceiling, "models": report}, indent=1, default=str))
        return 0
    print(tabulate(rows, headers=["model", "engine", "states", "transitions", "depth", "seconds (best)",
                                  "states/s", "time / embedded"]))
    print()
    print(f"this machine runs two CPU-bound processes {ceiling:.2f}x as fast as one (2.00 on two real cores): "
          "the ceiling for local[2] over local[1]")
    for name, r in report.items():
        c = r["per_level_local2"]
        print(f"{name}: local[2] is {r['local2_over_local1']:.2f}x local[1]; local[2] takes "
              f"{r['local2_slowdown_vs_embedded']:.1f}x the embedded engine's time")
        if c["spark_levels"]:
            print(f"  per level on local[2]: {c['fixed_per_level']:.3f} s fixed (median of the Spark levels with at "
                  f"most {SMALL_LEVEL:.0%} of the largest level's states), {c['levels']} levels of which "
                  f"{c['levels'] - c['spark_levels']} on the driver, {c['work_seconds']:.2f} s of work at "
                  f"{c['states_per_work_second']:,.0f} states/s on 2 cores; warm-up run {r['local2_warmup_s']:.1f} s; "
                  f"a new session {r['session_start_s']:.1f} s")
        else:  # (a small model: each level took less than a Spark job costs, so none went to Spark)
            print(f"  per level on local[2]: all {c['levels']} levels ran on the driver, none on Spark: no fixed "
                  f"cost to measure, and the estimate below is the driver's rate ({c['work_seconds']:.2f} s of "
                  f"work); warm-up run {r['local2_warmup_s']:.1f} s; a new session {r['session_start_s']:.1f} s")
        print(f"  16 executors x 1 core: ~{r['cluster16x1_states_per_hour'] / 1e6:,.0f} M states/hour; "
              f"x 4 cores: ~{r['cluster16x4_states_per_hour'] / 1e6:,.0f} M states/hour (see estimate())")
        print("  levels (local[2], new states:seconds, * on the driver): " + " ".join(
            f"{lv['new_states']}{'*' if lv['where'] == 'driver' else ''}:{lv['seconds']:.2f}s"
            for lv in r["levels_local2"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
