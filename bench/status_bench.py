"""How long `kreassign status` takes on a real cluster with many partitions (issue 25).

Starts a KRaft cluster of the newest release (4 brokers, 127.0.0.1 only, removed at the end, also on Ctrl-C),
creates `--partitions` partitions (RF 3, over topics of 50), stops broker 4 and moves `--moving` of them
onto it, so that those reassignments are stuck, and leaves the throttles of one executed move behind. Then
runs `kreassign status --bootstrap-server ... --json` as a user would, `--runs` times, and prints the wall
time of each run with its parts: reading the cluster (the Admin client) and the analysis (the model), and
the number of distinct shapes the analysis checked.

    python bench/status_bench.py                      # 1,000 partitions, 100 moving
    python bench/status_bench.py --partitions 200 --moving 20 --runs 1
    python bench/status_bench.py --snapshot-out snap.json   # keep the last run's snapshot (status --snapshot)
    python bench/status_bench.py --quick              # 50 partitions, 5 moving, 1 run: a smoke run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kreassign.checker.cluster import ClusterSpec, start_cluster
from kreassign.checker.scenarios import reassign_tool as RT

PER_TOPIC = 50


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, help="default: 1000 (with --quick 50)")
    ap.add_argument("--moving", type=int, help="default: 100 (with --quick 5)")
    ap.add_argument("--runs", type=int, help="default: 3 (with --quick 1)")
    ap.add_argument("--snapshot-out", metavar="FILE")
    ap.add_argument("--quick", action="store_true", help="50 partitions (one topic), 5 moving, 1 run")
    args = ap.parse_args()
    for name, full, quick in (("partitions", 1000, 50), ("moving", 100, 5), ("runs", 3, 1)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    topics = max(1, args.partitions // PER_TOPIC)
    with start_cluster(ClusterSpec(brokers=4), log=lambda line: print(line, file=sys.stderr, flush=True)) as c:
        began = time.monotonic()
        for k in range(topics):
            assignment = {p: [1 + (p + k) % 3, 1 + (p + k + 1) % 3, 1 + (p + k + 2) % 3] for p in range(PER_TOPIC)}
            c.admin.create_topic(f"bench-{k:03d}", assignment=assignment, timeout_s=60)
        names = [f"bench-{k:03d}" for k in range(topics)]
        c.wait_for("every partition in sync", lambda: None if all(
            len(p["isr"]) == 3 for d in c.admin.describe_topics(names, timeout_s=30).values()
            for p in d["partitions"]) else "not in sync", 180)
        print(f"created {topics * PER_TOPIC} partitions in {time.monotonic() - began:.1f} s", file=sys.stderr)
        RT.execute(c, names[0], 0, [1, 2, 4], throttle_bps=1_000_000)  # completes; its throttles stay behind
        c.wait_for("the throttled move done", lambda: "moving" if c.admin.list_reassignments() else None, 60)
        c.stop(4)
        c.wait_for("broker 4 fenced", lambda: "4 listed" if 4 in c.admin.broker_ids() else None, 60)
        moves = [(names[i // PER_TOPIC], i % PER_TOPIC) for i in range(1, args.moving + 1)]
        replies = c.admin.alter_reassignments([(t, p, [4, 2, 3] if (p + int(t[-3:])) % 3 != 2 else [4, 1, 2])
                                               for t, p in moves], timeout_s=60)
        refused = [r for r in replies if r["error_class"]]
        print(f"{len(moves) - len(refused)} reassignments in flight onto the stopped broker 4", file=sys.stderr)
        rows = []
        for run in range(args.runs):
            t0 = time.monotonic()
            r = subprocess.run([sys.executable, "-m", "kreassign", "status", "--bootstrap-server", c.bootstrap,
                                "--json"], capture_output=True, text=True, check=False)
            wall = time.monotonic() - t0
            out = json.loads(r.stdout)
            rows.append((run + 1, wall, out["read_seconds"], out["analysis_seconds"], out["shapes"],
                         out["partition_count"], out["reassigning"], r.returncode,
                         sum(p["verdict"] == "stuck" for p in out["partitions"])))
            if args.snapshot_out:
                Path(args.snapshot_out).write_text(json.dumps(out["snapshot"], indent=1) + "\n")
    print(f"{'run':>3} {'wall s':>7} {'read s':>7} {'model s':>7} {'shapes':>6} {'partitions':>10} "
          f"{'moving':>6} {'stuck':>5} {'exit':>4}")
    for run, wall, read, model, shapes, parts, moving, rc, stuck in rows:
        print(f"{run:>3} {wall:>7.1f} {read:>7.2f} {model:>7.2f} {shapes:>6} {parts:>10} {moving:>6} {stuck:>5} {rc:>4}")
    walls = sorted(w for _, w, *_ in rows)
    print(f"median wall {walls[len(walls) // 2]:.1f} s for {rows[0][5]} partitions "
          f"(the JVM of the Admin client starts in every run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
