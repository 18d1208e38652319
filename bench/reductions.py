"""States before and after each sound reduction, side by side in one run (prints figures, asserts only verdicts).

    python bench/reductions.py                 # every row below
    python bench/reductions.py --row p2b5      # one row
    python bench/reductions.py --timeout 600   # give the unreduced runs more time
    python bench/reductions.py --quick         # two small rows (seconds each): a smoke run

Each row runs `kreassign check --profile kraft` (whole process, liveness included unless the
reduction is safety-only) on the same bounds without and with a reduction: `--compositional`
(each distinct partition against the shared brokers, checker/packed/compositional.py) or
`--subsume` (budget subsumption, safety only). It prints distinct states, seconds and peak
memory of both, and whether every property's verdict and counterexample length agree. An
unreduced run that exceeds --timeout (default 300 s) is reported as such; that is the point
of the reduction. Timing on a shared machine is noisy: run on an idle one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from tabulate import tabulate

BASE = "--reassigns 2 --cancels 1 --targets all --kafka-version 3.9.2"  # the rules the README table was measured on
#: row -> (bound flags, reduction flag, extra flags shared by both runs)
ROWS = {
    "p2b4": ("--partitions 2 --brokers 4 --rf 3 --failures 1", "--compositional", ""),
    "p2b5": ("--partitions 2 --brokers 5 --rf 3 --failures 1", "--compositional", ""),
    "p3b4": ("--partitions 3 --brokers 4 --rf 2 --failures 1", "--compositional", ""),
    "p2b6": ("--partitions 2 --brokers 6 --rf 3 --failures 1", "--compositional", ""),
    "b5r3_f2-subsume": ("--brokers 5 --rf 3 --failures 2", "--subsume", "--no-liveness"),
}
#: --quick: the same two reductions on the smallest bounds where they apply (seconds, no timeout)
QUICK_ROWS = {
    "p2b3": ("--partitions 2 --brokers 3 --rf 2 --failures 0", "--compositional", ""),
    "b3_f1-subsume": ("--brokers 3 --rf 2 --failures 1", "--subsume", "--no-liveness"),
}


def run(flags: str, timeout: float) -> dict:
    """One whole `kreassign check` process: its JSON result, wall seconds and peak resident memory."""
    cmd = [sys.executable, "-m", "kreassign.cli", "check", "--profile", "kraft", *BASE.split(), *flags.split(),
           "--no-minimize", "--json", "--out", tempfile.mkdtemp()]
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                return {"timeout": True, "seconds": timeout}
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        out.seek(0)
        stdout = out.read().decode()
    try:
        result = json.loads(stdout)["results"][0]
    except (ValueError, KeyError, IndexError):
        raise SystemExit(f"kreassign {flags} failed (status {status})") from None
    verdicts = {n: (v["status"], v["length"]) for n, v in result["properties"].items()}
    return {"timeout": False, "seconds": seconds, "states": result["states"], "verdicts": verdicts,
            "peak_mib": usage.ru_maxrss / 1024, "reduction": result.get("reduction")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--row", action="append", choices=sorted(ROWS))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds an unreduced run may take")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help=f"only the small rows {', '.join(QUICK_ROWS)}")
    args = parser.parse_args()
    rows = {**ROWS, **QUICK_ROWS}
    table, report, disagreements = [], [], 0
    for row in args.row or list(QUICK_ROWS if args.quick else ROWS):
        flags, reduction, extra = rows[row]
        reduced = run(f"{flags} {reduction} {extra}", timeout=1e9)
        whole = run(f"{flags} {extra}", timeout=args.timeout)
        same = None if whole["timeout"] else whole["verdicts"] == reduced["verdicts"]
        disagreements += same is False
        report.append({"row": row, "flags": flags, "reduction": reduction, "whole": whole, "reduced": reduced,
                       "same_verdicts": same})
        table.append([row, reduction, "timeout" if whole["timeout"] else f"{whole['states']:,}", f"{reduced['states']:,}",
                      f">{args.timeout:.0f}" if whole["timeout"] else f"{whole['seconds']:.1f}", f"{reduced['seconds']:.1f}",
                      "-" if whole["timeout"] else f"{whole['peak_mib']:.0f}", f"{reduced['peak_mib']:.0f}",
                      "-" if same is None else "yes" if same else "NO"])
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(tabulate(table, headers=["row", "reduction", "states before", "states after", "s before", "s after",
                                       "MiB before", "MiB after", "same verdicts"]))
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
