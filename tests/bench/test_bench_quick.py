"""Every bench/ script, run as a user runs it in its quick mode, so that none can rot (issue 29).

`python bench/X.py --quick` exercises the script's whole code path on its smallest configuration in
seconds and prints its table; each test checks the exit code (0: the scripts exit 1 only when their
own cross-checks fail, e.g. counts different from TLC's or a diverging scenario) and that the
figures were printed. Never asserts on a time (bench/ convention). The scripts that start Spark,
Kafka's controller in a JVM or a real Kafka cluster carry the tier's marker (spark, kafka,
cluster), so `-m 'not spark and not kafka and not cluster'` leaves the fast ones; CI runs them all.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
#: modules of bench/ that other scripts import and that are not run on their own
HELPERS = {"anchor_model.py", "proc_tree.py"}

#: script -> (lines its quick mode must print, as regular expressions; marks). Counts are pinned only where
#: they are TLC's (anchor); elsewhere the lines say what the script cross-checks (same counts, same verdicts,
#: no mismatch), so that a change of the model does not break a smoke test.
SCRIPTS: dict[str, tuple[list[str], tuple[pytest.MarkDecorator, ...]]] = {
    "anchor.py": ([r"config +distinct .* TLC s / ours", r"N4_fail +1,992 +15,648 +11 +yes"], ()),
    "bounds_sweep.py": ([r"profile +bounds \(over the default suite\) +states +seconds +verdicts",
                         r"4 configurations, 0 failing"], ()),
    "issue14_capabilities.py": ([r"property +variant +bounds +verdict +length +seconds",
                                 r"no_stray_replicas .* violated", r"--quick: 1 slow row\(s\) left out"], ()),
    "issue26_capabilities.py": ([r"capability +property +variant +profile +bounds +verdict +length +seconds",
                                 r"6 liveness .* reassignment_completes_once_awaited_in_sync .* violated +3 "], ()),
    "kafka_lockstep.py": ([r"config +states +transitions +mismatches .* JVM start s", r"small +[\d,]+ +[\d,]+ +0 "],
                          (pytest.mark.kafka,)),
    "kafka_releases.py": ([r"release +metadata\.version +ELR +bounds +reference states +lockstep states",
                           r"\d+\.\d+\.\d+ +\S+ +off +small +"], (pytest.mark.kafka,)),
    "plan_bench.py": ([r"partitions=\d+ shapes=\d+ .*states=[\d,]+", r"wall=[\d.]+s cpu=[\d.]+s"], ()),
    "prove_times.py": ([r"profile +property +verdict +brokers +seconds", r"whole run: [\d.]+s for \d+ verdicts",
                        r"kraft +[\d.]+ \(\d+\)"], ()),
    "real_models.py": ([r"config +workers +states .* same counts", r"default +1 +[\d,]+ +[\d,]+ +\d+ .* yes$"], ()),
    "reductions.py": ([r"row +reduction +states before +states after",
                       r"p2b3 +--compositional +[\d,]+ +[\d,]+ .* yes$", r"b3_f1-subsume +--subsume .* yes$"], ()),
    "startup.py": ([r"python -c pass: [\d.]+ s", r"kreassign check --help +[\d.]+ "], ()),
    "validate_log.py": ([r"log: [\d,]+ lines, 16 partitions", r"verdict: VALID", r"validate-trace: [\d.]+ s wall"], ()),
    "status_bench.py": ([r"run +wall s +read s +model s +shapes +partitions +moving +stuck +exit",
                         r"median wall [\d.]+ s for 50 partitions"], (pytest.mark.cluster,)),
    "scenarios.py": ([r"mode +release +scen +agree +div +err .* faults", r"kraft +4\.4\.0 +1 +1 +0 +0 "],
                     (pytest.mark.cluster,)),
    "spark_scaling.py": ([r"model +engine +states .* time / embedded", r"kip455 +spark local\[2\] +[\d,]+ ",
                          r"kip455: local\[2\] is [\d.]+x local\[1\]"], (pytest.mark.spark,)),
    "spark_packed.py": ([r"config +engine +states .* rate / embedded +same", r"default +spark local\[2\] +[\d,]+ .* yes$",
                         r"0 row\(s\) differing"], (pytest.mark.spark,)),
    "spark_replicas.py": ([r"executors +buckets +states +situations tabulated",
                           r"2 +situation buckets \(after\) +[\d,]+ +[\d,]+ .* 1\.00x"], (pytest.mark.spark,)),
    "spark_standalone_scale.py": ([r"engine +states +transitions +depth +exit .* same",
                                   r"spark, 2 workers +[\d,]+ +[\d,]+ +\d+ +0 .* yes$"], (pytest.mark.spark,)),
    "spark_frontier.py": ([r"anchor N4_fail: 1,992 states, 15,648 transitions, depth 11",
                           r"\| level +\| new states +\| visited"], (pytest.mark.spark,)),
    "spark_driver_memory.py": ([r"kip455 .*: [\d,]+ states", r"\| distributed fixpoint \(after\) +\|"],
                               (pytest.mark.spark,)),
    "spark_driver_keys.py": ([r"\| every level in memory \(before\) +\| [\d,]+ .* \| 0 +\| [\d.]+ +\| yes",
                              r"\| spilled \(spill_keys=1\) +\| [\d,]+ .* \| [1-9]\d* +\| [\d.]+ +\| yes"],
                             (pytest.mark.spark,)),
    "spark_reference_scale.py": ([r"\| Spark local\[2\] +\| [\d,]+ ",
                                  r"identical counts \(states, transitions, depth, edges per action kind\): True"],
                                 (pytest.mark.spark,)),
}
#: extra arguments (never a different mode: only where the script would write outside a temporary place)
EXTRA = {"scenarios.py": lambda tmp: ["--out", str(tmp / "scenarios")]}


def test_every_bench_script_has_a_quick_test():
    scripts = {p.name for p in BENCH.glob("*.py")} - HELPERS
    assert scripts == set(SCRIPTS), "a bench/ script without its quick test here, or one test too many"


@pytest.mark.parametrize("script", [pytest.param(name, marks=marks) for name, (_, marks) in SCRIPTS.items()])
def test_quick_mode_runs_and_prints_its_figures(script, tmp_path):
    argv = [sys.executable, str(BENCH / script), "--quick", *EXTRA.get(script, lambda _t: [])(tmp_path)]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)
    shown = f"$ {' '.join(argv[1:])}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0, shown
    for pattern in SCRIPTS[script][0]:
        assert re.search(pattern, proc.stdout, re.MULTILINE), f"no line matching {pattern!r}\n{shown}"
