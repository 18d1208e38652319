"""`kreassign check --engine spark` on the packed path against the embedded engine, side by side in one run.

    python bench/spark_packed.py                  # kraft b5r3_f2 (207,646 states) and b5r3_f1 (67,547)
    python bench/spark_packed.py --config p2b5r3_f1   # two partitions (2,982,186 states)
    python bench/spark_packed.py --object-too     # also Spark on the object path (--no-fast: the engine before
                                                  # issue 28; minutes per row)
    python bench/spark_packed.py --levels-too     # also Spark in the levels layout (--spark-layout levels: one job
                                                  # per level); the plain Spark rows take the resident layout
    python bench/spark_packed.py --liveness       # with the eventually properties (default: --no-liveness)
    python bench/spark_packed.py --quick          # the default kraft suite model, embedded and local[2]: a smoke run
    python bench/spark_packed.py --baseline /tmp/basevenv/bin/python   # each Spark row also run by another
                                                  # installation (e.g. the previous commit: see bench/real_models.py)

Each row is one whole `kreassign check --profile kraft ... --json` process, as a user runs it (interpreter,
JVM and session start included): the embedded engine, then Spark on local[1] and local[2]. Wall time, and
CPU seconds of the whole process tree (the driver, the JVM, the Python workers: utime + stime read from
/proc every POLL seconds while it runs, so a process that lives less than that may be missed), states per
CPU-second, and the ratios to the embedded engine. Every Spark row is checked to give the embedded engine's
states, transitions, depth and verdicts (status and counterexample length of every property): "same"
says so. `--baseline PYTHON` runs each Spark row a second time with that interpreter (another checkout's
installation), right after this one's, and adds the ratio baseline CPU / this CPU ("baseline / this").
Figures are comparable only within one run of the script on an otherwise idle machine.
Never asserts: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proc_tree import POLL, TreeMeter

CONFIGS = {
    "b5r3_f2": ["--brokers", "5", "--rf", "3", "--failures", "2"],
    "b5r3_f1": ["--brokers", "5", "--rf", "3", "--failures", "1"],
    "p2b5r3_f1": ["--partitions", "2", "--brokers", "5", "--rf", "3", "--failures", "1"],
    "default": [],
}
FULL = ["b5r3_f2", "b5r3_f1"]
QUICK = ["default"]
def run_check(args: list[str], python: str = sys.executable) -> dict:
    """One `kreassign check ... --json` process: its JSON, wall seconds and CPU seconds of its process tree."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen([python, "-c", "from kreassign.cli import main; raise SystemExit(main())",
                                 "check", *args, "--json"], stdout=out, stderr=subprocess.DEVNULL)
        meter = TreeMeter({"run": [proc.pid]})
        while proc.poll() is None:
            meter.poll()
            time.sleep(POLL)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode()
    try:
        report = json.loads(text)
    except ValueError:
        report = {"error": text[-500:]}
    return {"report": report, "wall": wall, "cpu": meter.cpu_seconds("run"), "exit": proc.returncode}


def answers(report: dict) -> tuple:
    """What must be identical across engines: counts and each property's verdict and trace length."""
    r = report.get("results", [{}])[0]
    props = r.get("properties", {})
    verdicts = []
    for name in sorted(props) if isinstance(props, dict) else []:
        p = props[name]
        verdicts.append((name, p.get("status"), p.get("length"),
                         tuple(sorted((f, (v or {}).get("length") if isinstance(v, dict) else v)
                                      for f, v in (p.get("findings") or {}).items()))))
    return r.get("states"), r.get("transitions"), r.get("depth"), tuple(verdicts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{' and '.join(QUICK)} instead of {' and '.join(FULL)}")
    parser.add_argument("--config", action="append", choices=list(CONFIGS))
    parser.add_argument("--object-too", action="store_true", help="also Spark on the object path (--no-fast)")
    parser.add_argument("--liveness", action="store_true", help="check the eventually properties too")
    parser.add_argument("--levels-too", action="store_true",
                        help="also Spark in the levels layout (--spark-layout levels: one job per level)")
    parser.add_argument("--baseline", metavar="PYTHON", help="also run each Spark row with this interpreter")
    args = parser.parse_args(argv)
    if args.baseline and not Path(args.baseline).is_file():
        parser.error(f"--baseline: no such interpreter: {args.baseline}")
    names = args.config or (QUICK if args.quick else FULL)
    engines = [("embedded", []), ("spark local[1]", ["--engine", "spark", "--master", "local[1]"]),
               ("spark local[2]", ["--engine", "spark", "--master", "local[2]"])]
    if args.quick:  # one JVM: the whole code path, no figures to quote
        del engines[1]
    if args.levels_too:
        engines += [(f"{label} levels", [*extra, "--spark-layout", "levels"]) for label, extra in engines[1:]]
    if args.object_too:
        engines += [("spark local[1] object path", ["--engine", "spark", "--master", "local[1]", "--no-fast"]),
                    ("spark local[2] object path", ["--engine", "spark", "--master", "local[2]", "--no-fast"])]
    rows, mismatches = [], 0
    for name in names:
        base = ["--profile", "kraft", *CONFIGS[name], *([] if args.liveness else ["--no-liveness"])]
        measured = {}
        for engine, extra in engines:
            runs = [(engine, sys.executable)]
            if args.baseline and engine != "embedded":
                runs.append((f"{engine}, baseline", args.baseline))
            for label, python in runs:
                m = measured[label] = run_check(base + extra, python)
                print(f"{name} {label}: {m['wall']:.1f} s wall, {m['cpu']:.1f} CPU-s, exit {m['exit']}",
                      file=sys.stderr, flush=True)
        e = measured["embedded"]
        want = answers(e["report"])
        for engine, m in measured.items():
            got = answers(m["report"])
            same = got == want and m["exit"] == e["exit"]
            mismatches += not same
            states = got[0] or 0
            rate = states / m["cpu"] if m["cpu"] else 0.0
            e_rate = (want[0] or 0) / e["cpu"] if e["cpu"] else 0.0
            rows.append([name, engine, f"{states:,}", f"{got[1] or 0:,}", got[2], f"{m['wall']:.1f}", f"{m['cpu']:.1f}",
                         f"{rate:,.0f}", f"{m['wall'] / e['wall']:.2f}x", f"{rate / e_rate if e_rate else 0:.2f}",
                         "yes" if same else "NO"])
            if engine.endswith(", baseline"):
                this = measured[engine.removesuffix(", baseline")]
                rows.append([name, "baseline / this", "", "", "", f"{m['wall'] / this['wall']:.2f}",
                             f"{m['cpu'] / this['cpu']:.2f}", "", "", "", ""])
        if "spark local[1]" not in measured:
            continue
        one, two = measured["spark local[1]"], measured["spark local[2]"]
        rows.append([name, "local[1] wall / local[2] wall", "", "", "", f"{one['wall'] / two['wall']:.2f}", "", "", "",
                     "", ""])
    print(tabulate(rows, headers=["config", "engine", "states", "transitions", "depth", "wall s", "CPU-s",
                                  "states/CPU-s", "wall / embedded", "rate / embedded", "same"],
                   disable_numparse=True))
    print(f"{mismatches} row(s) differing from the embedded engine")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
