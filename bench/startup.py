"""Start-up time of the `kreassign` command: `--version`, `--help` and `check --help`.

Whole-process wall time (Python start included), median of several runs, printed with
the heavy modules each command imported (none for --version / --help: the subcommands
are registered lazily, see kreassign/cli.py). Run: python bench/startup.py [RUNS] (default 7);
python bench/startup.py --quick is one run of each (a smoke run).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = [["--version"], ["--help"], ["check", "--help"], ["prove", "--help"], ["fuzz", "--help"]]
HEAVY = ("z3", "pyspark", "hypothesis", "numpy", "networkx")
PROBE = ("import sys; from kreassign.cli import main\n"
         "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
         f"sys.stderr.write('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))")


def wall(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kreassign", *argv], stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def heavy(argv: list[str]) -> str:
    err = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=False).stderr
    return err.rpartition("HEAVY:")[2].strip() or "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, help="runs per command, the median is printed (default: 7)")
    parser.add_argument("--quick", action="store_true", help="one run of each command")
    args = parser.parse_args(argv)
    runs = args.runs or (1 if args.quick else 7)
    base = wall(["-c", "pass"][:0] or ["--version"], 1) and None  # warm the file cache
    python_only = statistics.median(
        [_t(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)) for _ in range(runs)])
    print(f"python -c pass: {python_only:.3f} s (the floor)")
    print(f"{'command':<24} {'median s':>9} {'over python':>12}  heavy modules imported")
    for command in COMMANDS:
        t = wall(command, runs)
        print(f"{'kreassign ' + ' '.join(command):<24} {t:>9.3f} {t - python_only:>12.3f}  {heavy(command)}")
    del base


def _t(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
