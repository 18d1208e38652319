"""The real kraft model against TLC, side by side (prints figures, asserts only equal counts).

    python bench/real_models.py                          # default, b5r3_f1, b5r3_f2
    python bench/real_models.py --config b5r3_f2 --workers 1 2
    python bench/real_models.py --config b5r3_re3 --no-tlc   # kreassign only
    python bench/real_models.py --memory                     # also bytes/state and table size
    python bench/real_models.py --reference-too              # also kreassign --no-kernel (the reference tabulates)
    python bench/real_models.py --no-tlc --baseline /tmp/basevenv/bin/python   # against another installation
    python bench/real_models.py --quick                      # default config, 1 worker, --memory --reference-too;
                                                             # TLC too if found, else its column is skipped

For each configuration of ../shared/anchor-kraft (KraftReassign.tla, the TLA+ twin of
`kreassign check --profile kraft`), TLC runs on the twin and `kreassign check --no-liveness
--no-minimize --json` on the same bounds, each as a whole process (JVM / interpreter start
included), with 1 and 2 workers (TLC `-workers N`, kreassign `--workers N`). The counts
(distinct states, transitions = TLC's states generated - 1, depth) must be equal, or the
script exits 1. It prints wall seconds, distinct states/s, transitions/s, the ratio
TLC time / kreassign time, and the packed path's bytes per stored state (its visited set,
parents, actions; the table of local situations is reported apart; --memory, one more run
per configuration; --reference-too, one more run with the kraft kernel off). TLC is found through
TLA_JAR or ../shared/tools/tla2tools.jar. `--baseline PYTHON` runs the same kreassign check with
another installation's interpreter (e.g. a checkout of the previous commit, `git worktree add
/tmp/base HEAD~1 && python -m venv /tmp/basevenv && /tmp/basevenv/bin/pip install -e /tmp/base`),
alternating with this one round by round, and prints the ratio baseline / this (counts must be
equal too). Timing on a shared machine is noisy: run on an idle one, and several rounds (--rounds)
to take the median.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
TWIN = SHARED / "anchor-kraft"

#: configuration -> kreassign bound flags (the first line of each .cfg says the same)
CONFIGS = {
    "default": "--brokers 4 --rf 2 --reassigns 2 --cancels 1 --failures 1",
    "b4_fo1": "--brokers 4 --rf 2 --reassigns 2 --cancels 1 --failures 1 --failovers 1",
    "b5r3_f1": "--brokers 5 --rf 3 --reassigns 2 --cancels 1 --failures 1",
    "b5r3_f2": "--brokers 5 --rf 3 --reassigns 2 --cancels 1 --failures 2",
    "b5r3_re3": "--brokers 5 --rf 3 --reassigns 3 --cancels 1 --failures 1",
    "b6r3_f1": "--brokers 6 --rf 3 --reassigns 2 --cancels 1 --failures 1",
}
DEFAULT_CONFIGS = ("default", "b5r3_f1", "b5r3_f2")


def tla_jar() -> Path | None:
    jar = os.environ.get("TLA_JAR")
    path = Path(jar) if jar else SHARED / "tools" / "tla2tools.jar"
    return path if path.is_file() else None


def run_tlc(jar: Path, config: str, workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        for f in TWIN.iterdir():
            if f.is_file():
                shutil.copy(f, tmp)
        cmd = ["java", "-XX:+UseParallelGC", "-cp", str(jar), "tlc2.TLC", "-workers", str(workers),
               "-metadir", os.path.join(tmp, "meta"), "-noGenerateSpecTE", "-config", f"{config}.cfg",
               "KraftReassign.tla"]
        started = time.perf_counter()
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False).stdout
        seconds = time.perf_counter() - started
    found = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", out)
    depth = re.search(r"depth of the complete state graph search is (\d+)", out)
    if not found or not depth:
        raise SystemExit(f"TLC on {config} printed no counts:\n{out[-2000:]}")
    generated, distinct = (int(x.replace(",", "")) for x in found.groups())
    return {"states": distinct, "transitions": generated - 1, "depth": int(depth.group(1)), "seconds": seconds}


def run_kreassign(config: str, workers: int, kernel: bool = True, python: str = sys.executable) -> dict:
    # Kafka 3.9's rules, ELR off: what the TLA+ twin (../shared/anchor-kraft) encodes
    cmd = [python, "-m", "kreassign.cli", "check", "--profile", "kraft", "--kafka-version", "3.9.2",
           "--targets", "all", *CONFIGS[config].split(), "--no-liveness", "--no-minimize", "--json",
           "--out", tempfile.mkdtemp(), "--workers", str(workers), *([] if kernel else ["--no-kernel"])]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    try:
        result = json.loads(proc.stdout)["results"][0]
    except (ValueError, KeyError, IndexError):
        raise SystemExit(f"kreassign on {config} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}") from None
    return {"states": result["states"], "transitions": result["transitions"], "depth": result["depth"],
            "seconds": seconds}


def packed_memory(config: str) -> tuple[float, int]:
    """(bytes per stored state, bytes of the tabulated table) of the packed path, in process."""
    from kreassign.checker.check.run import reassignment_factory
    from kreassign.checker.config.bounds import bounds_from_mapping
    from kreassign.checker.packed.bfs import explore_packed
    from kreassign.checker.packed.reassignment import PackedReassignment

    flags = CONFIGS[config].split()
    bounds = bounds_from_mapping({**{k[2:]: int(v) for k, v in zip(flags[::2], flags[1::2])}, "kafka_version": "3.9.2"})
    packed = PackedReassignment(reassignment_factory("kraft", bounds), workers=1)
    result = explore_packed(packed, liveness=False)
    return result.bytes_per_state, packed.table_bytes()


def median_run(fn, rounds: int) -> dict:
    runs = [fn() for _ in range(rounds)]
    out = dict(runs[0])
    out["seconds"] = statistics.median(r["seconds"] for r in runs)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action="append", choices=sorted(CONFIGS))
    parser.add_argument("--workers", type=int, nargs="+", help="default: 1 2 (with --quick 1)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-tlc", action="store_true", help="kreassign only (no Java needed)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--reference-too", action="store_true",
                        help="also time kreassign with the kraft kernel off (--no-kernel: the reference tabulates)")
    parser.add_argument("--baseline", metavar="PYTHON",
                        help="also time kreassign as another installation's interpreter runs it (ratio baseline/this)")
    parser.add_argument("--memory", action="store_true",
                        help="also explore each configuration in process for bytes/state and the table size")
    parser.add_argument("--quick", action="store_true",
                        help="the default configuration, 1 worker, with --memory and --reference-too; without TLC "
                             "(TLA_JAR) its column is skipped instead of exit 2")
    args = parser.parse_args()
    if args.quick:
        args.config = args.config or ["default"]
        args.memory = args.reference_too = True
    args.workers = args.workers or ([1] if args.quick else [1, 2])
    jar = None if args.no_tlc else tla_jar()
    if not args.no_tlc and jar is None:
        if not args.quick:
            print("TLC not found: set TLA_JAR or put tla2tools.jar in ../shared/tools (or --no-tlc)", file=sys.stderr)
            return 2
        print("TLC not found (TLA_JAR unset, no ../shared/tools/tla2tools.jar): the TLC columns are skipped",
              flush=True)
    rows, report, mismatches = [], [], 0
    for config in args.config or DEFAULT_CONFIGS:
        per_state, table = packed_memory(config) if args.memory else (None, None)
        for workers in args.workers:
            if args.baseline:  # alternate the two, round by round, so that a busy spell hits both alike
                pairs = [(run_kreassign(config, workers), run_kreassign(config, workers, python=args.baseline))
                         for _ in range(args.rounds)]
                mine = dict(pairs[0][0], seconds=statistics.median(p[0]["seconds"] for p in pairs))
                base = dict(pairs[0][1], seconds=statistics.median(p[1]["seconds"] for p in pairs))
            else:
                mine = median_run(lambda c=config, w=workers: run_kreassign(c, w), args.rounds)
                base = None
            tlc = median_run(lambda c=config, w=workers: run_tlc(jar, c, w), args.rounds) if jar else None
            plain = (median_run(lambda c=config, w=workers: run_kreassign(c, w, kernel=False), args.rounds)
                     if args.reference_too else None)
            same = all(other is None or all(mine[k] == other[k] for k in ("states", "transitions", "depth"))
                       for other in (tlc, plain, base))
            mismatches += not same
            entry = {"config": config, "workers": workers, "kreassign": mine, "tlc": tlc, "no_kernel": plain,
                     "baseline": base,
                     "bytes_per_state": per_state, "table_bytes": table, "same_counts": same}
            report.append(entry)
            rows.append([config, workers, f"{mine['states']:,}", f"{mine['transitions']:,}", mine["depth"],
                         f"{tlc['seconds']:.1f}" if tlc else "-", f"{mine['seconds']:.2f}",
                         f"{tlc['seconds'] / mine['seconds']:.2f}x" if tlc else "-",
                         f"{plain['seconds']:.1f}" if plain else "-",
                         f"{base['seconds']:.2f}" if base else "-",
                         f"{base['seconds'] / mine['seconds']:.3f}" if base else "-",
                         f"{mine['states'] / mine['seconds']:,.0f}", f"{mine['transitions'] / mine['seconds']:,.0f}",
                         f"{per_state:.0f}" if per_state else "-", f"{table / 2**20:.1f}" if table else "-",
                         "yes" if same else "NO"])
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(tabulate(rows, headers=["config", "workers", "states", "transitions", "depth", "TLC s", "kreassign s",
                                      "TLC/kreassign", "--no-kernel s", "baseline s", "baseline/this", "states/s", "transitions/s", "bytes/state", "table MiB",
                                      "same counts"]))
    if mismatches:
        print(f"{mismatches} configuration(s) with counts different from TLC's (or the baseline's)", file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
