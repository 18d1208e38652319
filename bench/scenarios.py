"""Scenarios per minute on real clusters: `kreassign conformance` campaigns side by side (prints figures).

    python bench/scenarios.py                                  # 10 scenarios, KRaft 4.4.0 and ZooKeeper 3.9.2
    python bench/scenarios.py --scenarios 200 --modes kraft    # the issue's full KRaft run
    python bench/scenarios.py --scenarios 200 --modes zk --seed 5000 --out /tmp/zk-runs
    python bench/scenarios.py --length 3 --faults kill,pause   # shorter scenarios, two faults
    python bench/scenarios.py --quick                          # 1 scenario of 2 steps, KRaft only: a smoke run

Each campaign is one `kreassign conformance --json` process (one cluster, started once and reused by every
scenario). For each it prints: scenarios, how many agree / diverge / could not run, the faults injected by
kind, steps, the cluster's start, seconds per scenario, scenarios per minute with and without the start, and
the ratio of the modes' speeds. Divergent scenarios are kept under --out (replay them with
`kreassign conformance --replay FILE`). Exit 1 if any scenario diverged or could not run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

RELEASE = {"kraft": "4.4.0", "zk": "3.9.2"}


def campaign(mode: str, args: argparse.Namespace, out: str) -> dict:
    argv = [sys.executable, "-m", "kreassign", "conformance", "--mode", mode, "--kafka-version", RELEASE[mode],
            "--scenarios", str(args.scenarios), "--seed", str(args.seed), "--length", str(args.length),
            "--faults", args.faults, "--minimize-runs", str(args.minimize_runs), "--out", f"{out}/{mode}",
            "--json"]
    t0 = time.monotonic()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)  # progress lines pass on stderr
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        raise SystemExit(f"{mode}: kreassign conformance exited {proc.returncode}")
    data = json.loads(proc.stdout)
    data["wall"] = wall
    return data


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenarios", type=int, help="default: 10 (with --quick 1)")
    p.add_argument("--modes", nargs="+", choices=["kraft", "zk"], help="default: kraft zk (with --quick kraft)")
    p.add_argument("--seed", type=int, default=3000)
    p.add_argument("--length", type=int, help="default: 7 (with --quick 2)")
    p.add_argument("--faults", default="kill,stop,failover,pause")
    p.add_argument("--minimize-runs", type=int, help="default: 3 (with --quick 1)")
    p.add_argument("--out", help="keep every scenario and run here (default: a temporary folder)")
    p.add_argument("--quick", action="store_true", help="one KRaft cluster, 1 scenario of 2 steps")
    args = p.parse_args()
    for name, full, quick in (("scenarios", 10, 1), ("modes", ["kraft", "zk"], ["kraft"]), ("length", 7, 2),
                              ("minimize_runs", 3, 1)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    out = args.out or tempfile.mkdtemp(prefix="kreassign-bench-scenarios-")
    rows = []
    for mode in args.modes:
        d = campaign(mode, args, out)
        t = d["totals"]
        running = t["seconds"] - t["cluster_start_seconds"]
        rows.append((mode, d["kafka_version"], t, running, d["wall"]))
    print(f"{'mode':6} {'release':8} {'scen':>5} {'agree':>5} {'div':>4} {'err':>4} {'steps':>6} "
          f"{'start s':>8} {'s/scen':>7} {'scen/min':>9} {'w/o start':>9}  faults")
    speeds = {}
    for mode, version, t, running, _wall in rows:
        per_min = 60 * t["scenarios"] / running if running > 0 else 0.0
        speeds[mode] = per_min
        print(f"{mode:6} {version:8} {t['scenarios']:5d} {t['agree']:5d} {t['diverge']:4d} {t['errors']:4d} "
              f"{t['steps']:6d} {t['cluster_start_seconds']:8.1f} {t['seconds_per_scenario']:7.1f} "
              f"{t['scenarios_per_minute']:9.2f} {per_min:9.2f}  {json.dumps(t['faults'])}")
    if len(speeds) == 2 and speeds["zk"]:
        print(f"ratio kraft/zk scenarios per minute (without the start): {speeds['kraft'] / speeds['zk']:.2f}")
    print(f"scenarios and runs: {out}")
    return 1 if any(t["diverge"] or t["errors"] for _m, _v, t, _r, _w in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
