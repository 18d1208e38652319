"""Lockstep speed against Kafka 3.9's KRaft controller (prints figures, never asserts on time).

    python bench/kafka_lockstep.py                  # the default kraft configuration, and a larger one
    python bench/kafka_lockstep.py --config default --json
    python bench/kafka_lockstep.py --quick          # the small configuration only: a smoke run

For each configuration: the reference alone (the embedded BFS), then the same exploration in
lockstep with Kafka's controller in one JVM (`--impl kafka`, docs/kafka.md): states, transitions
compared, seconds, transitions per second, the overhead factor against the reference alone, and
the JVM's start-up (to the first reply, including the adapter's compilation when the cache is cold).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.implementations.kafka import KafkaImplementation, KafkaOptions
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.kafka_lockstep import KafkaLockstepModel, LockstepStats, reference_profile
from kreassign.spec.actions import ListReassignments
from kreassign.spec.state import make_cluster
from tabulate import tabulate

CONFIGS = {
    # the default suite's kraft bounds (checker/check/suite.py)
    "default": Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1),
    "elections": Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=2, failovers=1,
                        elections=("PREFERRED", "UNCLEAN")),
    "rf3": Bounds(brokers=4, rf=3, reassigns=1, cancels=1, failures=1),
    "small": Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1),  # --quick
}


def run(name: str, bounds: Bounds, metadata_version: str) -> dict:
    t0 = time.perf_counter()
    ref = explore(ReassignmentModel(reference_profile(metadata_version), bounds), keep_graph=False)
    ref_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    impl = KafkaImplementation(KafkaOptions(metadata_version=metadata_version))
    impl.reset("kraft", make_cluster([1], {}))
    impl.apply(ListReassignments())  # the JVM is up and has answered once
    startup = time.perf_counter() - t0
    stats = LockstepStats()
    try:
        t0 = time.perf_counter()
        lock = explore(KafkaLockstepModel(bounds, impl, impl.spec, stats), keep_graph=False)
        lock_s = time.perf_counter() - t0
    finally:
        impl.close()
    return {
        "config": name, "metadata_version": metadata_version, "states": lock.states, "transitions": lock.transitions,
        "same_counts": (ref.states, ref.transitions) == (lock.states, lock.transitions),
        "mismatches": stats.mismatches, "reference_s": round(ref_s, 2), "lockstep_s": round(lock_s, 2),
        "jvm_startup_s": round(startup, 2), "lockstep_transitions_per_s": round(lock.transitions / lock_s),
        "reference_transitions_per_s": round(ref.transitions / ref_s), "overhead": round(lock_s / ref_s, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=list(CONFIGS), action="append")
    parser.add_argument("--metadata-version", default="3.9-IV0")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="the small configuration only")
    args = parser.parse_args(argv)
    names = args.config or (["small"] if args.quick else ["default", "elections"])
    rows = [run(n, CONFIGS[n], args.metadata_version) for n in names]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(tabulate([[r["config"], f"{r['states']:,}", f"{r['transitions']:,}", r["mismatches"], r["reference_s"],
                     r["lockstep_s"], f"{r['lockstep_transitions_per_s']:,}", f"{r['overhead']}x", r["jvm_startup_s"]]
                    for r in rows],
                   headers=["config", "states", "transitions", "mismatches", "reference s", "lockstep s",
                            "lockstep transitions/s", "overhead", "JVM start s"], tablefmt="simple"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
