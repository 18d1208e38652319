"""A large search on a two-worker Spark standalone cluster of this machine, side by side with the embedded engine.

    python bench/spark_standalone_scale.py                 # kraft --partitions 3 --brokers 5 --rf 3 --failures 1
                                                           #   --cancels 2 (the large run; many minutes, GBs)
    python bench/spark_standalone_scale.py --quick         # --partitions 2 --brokers 4 --rf 2 --failures 1: a smoke run
    python bench/spark_standalone_scale.py --no-embedded   # the cluster run alone
    python bench/spark_standalone_scale.py --executor-memory 6g --worker-memory 7g --buckets 4 --layout levels
    python bench/spark_standalone_scale.py --layout levels # one Spark job per level (8 buckets, DISK_ONLY)
    python bench/spark_standalone_scale.py --medium --one-worker-too   # --partitions 2 --brokers 5 --rf 3
                                                           #   --failures 1 (2,982,186 states) on one worker, then two

Starts a master and two workers of one core each on 127.0.0.1 (checker/spark/standalone.py: stopped when the
script ends, also on failure and Ctrl-C), then runs `kreassign check --engine spark --master spark://...
--json FILE` as a user would, and the embedded engine on the same flags. Prints, per engine: states, transitions,
depth, wall seconds, CPU seconds (the driver's process tree; the workers' trees: their executor JVMs and Python
workers), peak resident memory of the driver's tree and of the workers' trees, bytes per state, and whether
the answers (counts, depth, every property's verdict) are identical. Never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kreassign.checker.cluster.procs import interrupt_and_reap
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proc_tree import POLL, TreeMeter

LARGE = ["--partitions", "3", "--brokers", "5", "--rf", "3", "--failures", "1", "--cancels", "2"]
QUICK = ["--partitions", "2", "--brokers", "4", "--rf", "2", "--failures", "1"]
MEDIUM = ["--partitions", "2", "--brokers", "5", "--rf", "3", "--failures", "1"]


def run(args: list[str], out: Path, extra_roots: list[int]) -> dict:
    """One `kreassign check ... --json out` process, metered with the cluster's processes (`extra_roots`)."""
    cmd = [sys.executable, "-c", "from kreassign.cli import main; raise SystemExit(main())", "check", *args,
           "--json", str(out)]
    started = time.perf_counter()
    log = out.with_suffix(".stderr")
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    meter = TreeMeter({"driver": [proc.pid], "workers": extra_roots})
    last = started
    try:
        while proc.poll() is None:
            meter.poll()
            if time.perf_counter() - last > 60:  # a line a minute: long runs show they are alive (CI logs too)
                last = time.perf_counter()
                lines = log.read_text(errors="replace").splitlines()
                print(f"  ... {last - started:.0f} s, driver {meter.peak_rss['driver'] / 2**20:,.0f} MiB, workers "
                      f"{meter.peak_rss['workers'] / 2**20:,.0f} MiB: {lines[-1][:120] if lines else ''}",
                      file=sys.stderr, flush=True)
            time.sleep(POLL)
    finally:  # (interrupted: the run stops too, before the cluster does)
        interrupt_and_reap(proc, 30)
    wall = time.perf_counter() - started
    stderr = log.read_text(errors="replace")
    try:
        report = json.loads(out.read_text())
    except (OSError, ValueError):
        report = {"error": stderr[-800:]}
    return {"report": report, "wall": wall, "exit": proc.returncode, "meter": meter}


def answers(report: dict) -> tuple:
    r = (report.get("results") or [{}])[0]
    props = r.get("properties") or {}
    return (r.get("states"), r.get("transitions"), r.get("depth"), r.get("complete"),
            tuple(sorted((n, (p or {}).get("status"), (p or {}).get("length")) for n, p in props.items())))


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # (the `with` blocks then stop the run and the cluster)


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small configuration (a smoke run)")
    parser.add_argument("--medium", action="store_true", help=f"a medium configuration ({' '.join(MEDIUM)})")
    parser.add_argument("--one-worker-too", action="store_true", help="also on a cluster of one worker of one core "
                        "(first), and the ratio of the wall times")
    parser.add_argument("--no-embedded", action="store_true", help="skip the embedded engine's run")
    parser.add_argument("--executor-memory", help="spark.executor.memory (default 4g; 1g with --quick)")
    parser.add_argument("--worker-memory", help="each worker's memory (default 5g; 2g with --quick)")
    parser.add_argument("--storage", default="DISK_ONLY", help="spark.kreassign.storage: how the search's RDDs are "
                        "cached (default DISK_ONLY: the executors' heaps hold only the records in flight)")
    parser.add_argument("--layout", choices=["resident", "levels"], default="resident",
                        help="--spark-layout (default resident: one long-lived task per worker core)")
    parser.add_argument("--buckets", type=int, help="hash buckets (spark.kreassign.partitions; default: one per "
                        "worker core with the resident layout, 8 with the levels layout: four tasks per level on "
                        "each worker, a quarter of its visited set each)")
    parser.add_argument("--driver-memory", default="2g", help="spark.driver.memory (default 2g)")
    args = parser.parse_args(argv)
    args.executor_memory = args.executor_memory or ("1g" if args.quick else "4g")
    args.worker_memory = args.worker_memory or ("2g" if args.quick else "5g")
    from kreassign.checker.spark.standalone import standalone_cluster

    config = QUICK if args.quick else MEDIUM if args.medium else LARGE
    resident = args.layout == "resident"
    flags = ["--profile", "kraft", *config, "--no-liveness", "--no-minimize", "--force"]
    rows, measured = [], {}
    with tempfile.TemporaryDirectory(prefix="kreassign-standalone-") as tmp:
        root = Path(tmp)
        for n in ([1, 2] if args.one_worker_too else [2]):
            with standalone_cluster(root / f"cluster{n}", os.environ, workers=n, cores=1,
                                    memory=args.worker_memory) as cluster:
                print(f"cluster up: {cluster.url}, {n} worker(s) of 1 core", file=sys.stderr, flush=True)
                spark = ["--engine", "spark", "--master", cluster.url,
                         "--conf", f"spark.executor.memory={args.executor_memory}",
                         "--conf", f"spark.driver.memory={args.driver_memory}",
                         "--conf", f"spark.kreassign.partitions={args.buckets or (n if resident else 8)}",
                         "--conf", f"spark.kreassign.storage={args.storage}", "--spark-layout", args.layout]
                workers = [p.pid for p in cluster.processes[1:]]
                measured[f"spark, {n} worker{'s' if n > 1 else ''}"] = run(flags + spark, root / f"spark{n}.json", workers)
        if not args.no_embedded:
            measured["embedded"] = run(flags, root / "embedded.json", [])
    want = answers(measured["embedded"]["report"]) if "embedded" in measured else None
    for engine, m in measured.items():
        got, meter = answers(m["report"]), m["meter"]
        states = got[0] or 0
        cpu = meter.cpu_seconds("driver") + meter.cpu_seconds("workers")
        driver, workers = meter.peak_rss["driver"], meter.peak_rss["workers"]
        rows.append([engine, f"{states:,}", f"{got[1] or 0:,}", got[2], m["exit"], f"{m['wall']:.0f}", f"{cpu:.0f}",
                     f"{states / cpu if cpu else 0:,.0f}", f"{driver / 2**20:,.0f}", f"{workers / 2**20:,.0f}",
                     f"{(driver + workers) / states if states else 0:.0f}",
                     "—" if want is None else ("yes" if got == want else "NO")])
        if "error" in m["report"]:
            print(f"{engine}: {m['report']['error']}", file=sys.stderr)
    print(f"kraft {' '.join(config)}, --no-liveness, --spark-layout {args.layout}")
    print(tabulate(rows, headers=["engine", "states", "transitions", "depth", "exit", "wall s", "CPU-s",
                                  "states/CPU-s", "driver peak MiB", "workers peak MiB", "bytes/state", "same"],
                   disable_numparse=True))
    if args.one_worker_too:
        one, two = measured["spark, 1 worker"]["wall"], measured["spark, 2 workers"]["wall"]
        print(f"1 worker wall / 2 workers wall: {one / two:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
