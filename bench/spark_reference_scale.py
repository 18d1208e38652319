"""A reference-backed model of millions of states on Spark local[2], against the embedded engine.

    python bench/spark_reference_scale.py                       # kraft, 2 partitions, 5 brokers, RF 3
    python bench/spark_reference_scale.py --brokers 5 --rf 2    # 243,578 states (a quicker run)
    python bench/spark_reference_scale.py --quick               # 1 partition, 3 brokers, RF 2, every level
                                                                # on Spark (no warm-up on the driver): a smoke run

The model is the reassignment reference (`ReassignmentModel`, profile kraft) in the packed,
tabulated form of checker/packed/reassignment.py: int64 states whose successors are the reference's
own answers, tabulated per partition-local situation. Its ints are only meaningful with the tables
that interned them, so the embedded run goes first and the executors receive its tables
with the model (pickled): every situation they meet is already there. Both engines explore the same kernel: the embedded engine's array store and the Spark
engine (`explore_spark`, local[2], every level past the warm-up on Spark). The script prints
both engines' counts (states, transitions, depth, edges per action kind), whether they are
identical, the times, and the Spark run's per-level bytes shuffled and driver memory growth.
Properties are not evaluated here (the packed form decides them with its own bit words, which
the embedded check path uses); tests/spark compares verdicts on the object models.
Never asserts: it prints figures.
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace
from typing import Any

import numpy as np
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.protocol import Model
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.reassignment import PackedReassignment
from kreassign.checker.spark.engine import explore_spark, spark_session
from kreassign.checker.spark.options import SparkOptions
from tabulate import tabulate


class PackedKernel(Model):
    """The Model protocol over PackedReassignment: int64 states, a numpy successor kernel."""

    def __init__(self, profile: str, bounds: Bounds):
        self.profile, self.bounds = profile, bounds
        self.packed = PackedReassignment(ReassignmentModel(profile, bounds))
        self.name = f"{profile}-packed"

    def init_states(self) -> list[int]:
        return [int(self.packed.init_state)]

    def successor_arrays(self, states: np.ndarray):
        positions, ids, nexts, _ = self.packed.successor_arrays(states)
        return positions, ids, nexts

    def action_of(self, action_id: int) -> Any:
        return self.packed.action_of(action_id)

    def action_kind(self, action: Any) -> str:
        return type(getattr(action, "action", action)).__name__

    def successors(self, state: int):
        _, ids, nexts = self.successor_arrays(np.array([state], dtype=np.int64))
        for i, n in zip(ids.tolist(), nexts.tolist()):
            yield self.action_of(i), n

    def properties(self) -> list:
        return []


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="kraft")
    parser.add_argument("--partitions", type=int, help="default: 2 (with --quick 1)")
    parser.add_argument("--brokers", type=int, help="default: 5 (with --quick 3)")
    parser.add_argument("--rf", type=int, help="default: 3 (with --quick 2)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--quick", action="store_true", help="the smallest bounds: 1 partition, 3 brokers, RF 2")
    args = parser.parse_args(argv)
    for name, full, quick in (("partitions", 2, 1), ("brokers", 5, 3), ("rf", 3, 2)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    bounds = replace(DEFAULT_SUITE[args.profile], brokers=args.brokers, rf=args.rf, partitions=args.partitions)
    model = PackedKernel(args.profile, bounds)
    rows = []
    embedded = None
    if True:  # (first: it tabulates every reachable situation, which the executors then receive)
        started = time.perf_counter()
        embedded = explore(model)
        rows.append(["embedded", f"{embedded.states:,}", f"{embedded.transitions:,}", embedded.depth,
                     f"{time.perf_counter() - started:.1f}", f"{rss_mb():,.0f}"])
        print(f"embedded: {embedded.states:,} states in {time.perf_counter() - started:.1f} s", flush=True)
    sc = spark_session(args.master).sparkContext
    before = rss_mb()
    levels: list[dict[str, Any]] = []
    started = time.perf_counter()
    # --quick: levels this small would all run on the driver; every level on Spark sends the tables to the executors
    spark = explore_spark(model, SparkOptions(warmup=not args.quick), sc=sc, level_log=levels)
    seconds = time.perf_counter() - started
    rows.append([f"Spark {args.master}", f"{spark.states:,}", f"{spark.transitions:,}", spark.depth, f"{seconds:.1f}",
                 f"{rss_mb():,.0f} (+{rss_mb() - before:,.0f} during the run)"])
    print(tabulate(rows, headers=["engine", "states", "transitions", "depth", "seconds", "driver max RSS MB"],
                   tablefmt="github", disable_numparse=True))
    if embedded is not None:
        same = ((embedded.states, embedded.transitions, embedded.depth, embedded.per_action_edges)
                == (spark.states, spark.transitions, spark.depth, spark.per_action_edges))
        print(f"identical counts (states, transitions, depth, edges per action kind): {same}")
    print(tabulate([[lv["level"], lv["where"], f"{lv['new_states']:,}", f"{lv['visited']:,}",
                     f"{lv.get('shuffled_bytes', 0):,}", f"{lv.get('shuffled_bytes', 0) / max(lv['new_states'], 1):.1f}",
                     f"{lv['seconds']:.2f}"] for lv in levels],
                   headers=["level", "where", "new states", "visited", "candidate bytes shuffled", "per new state", "s"],
                   tablefmt="github", disable_numparse=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
