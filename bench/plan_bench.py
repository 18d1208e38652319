"""`kreassign plan` on a realistic cluster: 200 (and with --scale 2.5, 500) partitions, 2 workers.

Prints partitions, distinct shapes (the deduplication), states, wall seconds and CPU seconds
(this process and its workers), so that a loaded machine can be told apart from a slow run.
Usage: python bench/plan_bench.py [--scale 1] [--jobs 2] [--profile kraft]
       python bench/plan_bench.py --quick      # --scale 0.05 (13 partitions): a smoke run
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))

import plan_cluster
from kreassign.checker.plan.check import PlanOptions
from kreassign.checker.plan.formats import parse_current, parse_describe, parse_plan
from kreassign.checker.plan.run import load_moves, run_plan


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, help="partition counts × this (default 1 = 200 partitions; --quick 0.05)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--profile", default="kraft")
    ap.add_argument("--failures", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="--scale 0.05: one or two partitions per topic")
    args = ap.parse_args()
    if args.scale is None:
        args.scale = 0.05 if args.quick else 1.0
    topics = [(n, max(1, round(c * args.scale)), rf) for n, c, rf in plan_cluster.TOPICS]
    current, plan, describe = plan_cluster.cluster(topics)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d)
        (p / "plan.json").write_text(plan_cluster.reassignment_json(plan))
        plan_json = parse_plan((p / "plan.json").read_text(), "plan.json")
    cur = parse_current(plan_cluster.reassignment_json(current), "current.json")
    desc = parse_describe(describe, "describe.txt")
    moves = load_moves(plan_json, "plan.json", cur, "current.json", desc, "describe.txt")
    t0, c0 = time.perf_counter(), cpu()
    result = run_plan(plan_json, moves, PlanOptions(args.profile, args.failures), cur, "current.json", jobs=args.jobs)
    wall, used = time.perf_counter() - t0, cpu() - c0
    risky = sum(1 for x in result.partitions if x["verdict"] == "risk")
    print(f"profile={args.profile} failures={args.failures} jobs={args.jobs}")
    print(f"partitions={len(result.partitions)} shapes={result.shapes} (dedup ×{len(result.partitions) / result.shapes:.1f}) "
          f"states={result.states:,} risky_partitions={risky}")
    print(f"wall={wall:.1f}s cpu={used:.1f}s partitions/s={len(result.partitions) / wall:.1f}")


if __name__ == "__main__":
    main()
