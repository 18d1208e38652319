"""The release matrix: every Kafka release in lockstep with the reference (docs/kafka.md; prints, never asserts).

    python bench/kafka_releases.py                          # every release, default kraft bounds and b4 rf3 f1
    python bench/kafka_releases.py --release 4.4.0 --config default --json
    python bench/kafka_releases.py --quick                  # small bounds, the newest release only: a smoke run
    python bench/kafka_releases.py --config small           # small bounds on every release

For each release and configuration: the reference alone (states), then the same exploration in
lockstep with that release's controller (states, transitions compared, mismatches, seconds). The
state counts must be equal: the model continues from Kafka's states, so a difference in counts
means the two explored different graphs. Releases come from the Maven cache (fetched on first use).

    python bench/kafka_releases.py --before              # the same lockstep against the reference as it was
                                                         # before it followed the releases (3.9's rules, no ELR)
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from kreassign.checker.check.run import check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.implementations.kafka import KafkaImplementation, KafkaOptions, make_spec
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.kafka_lockstep import (
    KafkaLockstepModel,
    LockstepStats,
    kafka_factory,
    reference_profile,
)
from kreassign.spec import kafka_releases
from tabulate import tabulate

CONFIGS = {
    "small": Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, failovers=1, elections=("PREFERRED", "UNCLEAN")),
    "default": Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1),  # the default suite's kraft bounds
    "b4r3f1": Bounds(brokers=4, rf=3, reassigns=2, cancels=1, failures=1),  # --brokers 4 --rf 3 --failures 1
}


def run(version: str, name: str, bounds: Bounds, elr: bool, before: bool = False) -> dict:
    t0 = time.perf_counter()
    ref = explore(ReassignmentModel(reference_profile(kafka_version=version, elr=elr), bounds), keep_graph=False)
    ref_s = time.perf_counter() - t0
    impl = KafkaImplementation(KafkaOptions(kafka_version=version, elr=elr))
    factory = kafka_factory(make_spec(kafka_version=version, elr=elr), impl=impl)
    try:
        t0 = time.perf_counter()
        if before:  # Kafka 3.9's rules against this release: the mismatches the reference had to explain
            stats = LockstepStats()
            model = KafkaLockstepModel(bounds, impl, impl.spec, stats)
            model.profile = reference_profile(kafka_version="3.9.2", elr=False)
            result = explore(model, keep_graph=False)
        else:
            result = check_model("kraft", bounds, factory=factory, liveness_check=False,
                                 minimize_counterexamples=False)
            stats = factory.stats
        lock_s = time.perf_counter() - t0
    finally:
        factory.close()
        impl.close()
    return {"release": version, "metadata_version": impl.metadata_version, "elr": elr, "config": name,
            "reference_states": ref.states, "states": result.states, "transitions": stats.steps,
            "mismatches": stats.mismatches, "allowed": dict(stats.allowed),
            "reference_s": round(ref_s, 2), "lockstep_s": round(lock_s, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--release", action="append", help="a release (repeatable; default: every release of the matrix)")
    p.add_argument("--config", action="append", choices=sorted(CONFIGS), help="repeatable (default: default, b4r3f1)")
    p.add_argument("--quick", action="store_true",
                   help="the small configuration on the newest release only (unless --release/--config say otherwise)")
    p.add_argument("--elr", choices=("on", "off", "both"), default="both",
                   help="eligible leader replicas: off, on (where the release has it), or both (default)")
    p.add_argument("--before", action="store_true",
                   help="against the reference as it was before it followed the releases (3.9's rules, no ELR)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    versions = args.release or ([kafka_releases.NEWEST] if args.quick else [r.version for r in kafka_releases.RELEASES])
    configs = args.config or (["small"] if args.quick else ["default", "b4r3f1"])
    rows = []
    for v in versions:
        latest = kafka_releases.release(v).latest_production
        modes = [m for m in ((False,) if args.elr == "off" else (True,) if args.elr == "on" else (False, True))
                 if not m or kafka_releases.elr_possible(v, latest)]
        for elr in modes:
            for c in configs:
                row = run(v, c, CONFIGS[c], elr, args.before)
                rows.append(row)
                print(f"{v} ELR {'on' if elr else 'off'} {c}: {row['states']:,} states, {row['transitions']:,} "
                      f"transitions, {row['mismatches']} mismatches ({row['lockstep_s']} s)", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(tabulate([[r["release"], r["metadata_version"], "on" if r["elr"] else "off", r["config"],
                         f"{r['reference_states']:,}",
                         f"{r['states']:,}", f"{r['transitions']:,}", r["mismatches"],
                         r["lockstep_s"]] for r in rows],
                       headers=["release", "metadata.version", "ELR", "bounds", "reference states", "lockstep states",
                                "transitions", "mismatches", "seconds"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
