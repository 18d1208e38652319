"""The real profiles at bounds larger than the default suite: no unexpected violation, no finding missing.

Findings are declared for every bound (spec/findings.py), not tuned to the default suite's:
this sweep runs each reassignment profile at more brokers, RF 3, more requests, failures and
failovers, two partitions, and prints, per configuration, its states, seconds and verdicts.
A configuration passes when no property is `violated` (a violation no signature explains)
or `finding-missing` (a finding declared at smaller bounds did not occur).

    python bench/bounds_sweep.py                 # the whole sweep (a few minutes on 2 cores)
    python bench/bounds_sweep.py --quick         # the slice tests/unit/test_findings_sweep.py runs
    python bench/bounds_sweep.py --profile zk    # one profile

Exit code 1 if any configuration fails (so the sweep can gate a release), 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time

from kreassign.checker.check.run import FAILING, KNOWN, check_model
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.config.bounds import Bounds, bounds_from_mapping

#: (profile, bounds overriding the profile's default-suite bounds); the first QUICK rows are the test slice
SWEEP: list[tuple[str, dict]] = [
    # the report: kip455 at brokers 4 flagged reassignment_can_finish before findings had signatures
    ("kip455", {"brokers": 4, "rf": 2, "reassigns": 2, "cancels": 1}),
    ("kraft-3.7", {"brokers": 4, "reassigns": 3, "cancels": 1, "failures": 0}),
    ("kraft", {"brokers": 4, "rf": 3, "reassigns": 2, "cancels": 1, "failures": 1}),
    ("kraft-3.7", {"brokers": 4, "rf": 3, "reassigns": 2, "cancels": 1, "failures": 1}),
    # more brokers, failovers
    ("kraft", {"brokers": 5, "reassigns": 2, "cancels": 1, "failures": 1}),
    ("kip236", {"brokers": 4, "reassigns": 2, "cancels": 1, "failures": 1, "failovers": 1}),
    ("zk", {"brokers": 3, "reassigns": 2, "cancels": 1, "failures": 1, "failovers": 2}),
    # RF 3
    ("zk", {"brokers": 4, "rf": 3, "reassigns": 2, "cancels": 1, "failures": 1}),
    ("kip455", {"brokers": 4, "rf": 3, "reassigns": 2, "cancels": 1, "failures": 1}),
    ("kip236", {"brokers": 4, "rf": 3, "reassigns": 2, "cancels": 1, "failures": 1}),
    # more brokers, requests, failures, failovers
    ("kraft", {"brokers": 4, "reassigns": 3, "cancels": 1, "failures": 0}),
    ("kraft", {"brokers": 4, "reassigns": 2, "cancels": 2, "failures": 2, "failovers": 1}),
    ("kraft-3.7", {"brokers": 5, "reassigns": 2, "cancels": 1, "failures": 2}),
    ("zk", {"brokers": 4, "reassigns": 2, "cancels": 1, "failures": 1, "failovers": 1}),
    ("zk", {"brokers": 3, "reassigns": 3, "cancels": 1, "failures": 2, "failovers": 1}),
    ("kip455", {"brokers": 4, "reassigns": 2, "cancels": 1, "failures": 1, "failovers": 1}),
    ("kip455", {"brokers": 3, "reassigns": 2, "cancels": 2, "failures": 2, "failovers": 1}),
    ("kip236", {"brokers": 5, "reassigns": 2, "cancels": 1, "failures": 1}),
    ("kip236", {"brokers": 3, "reassigns": 3, "cancels": 1, "failures": 2}),
    # two partitions
    ("kraft", {"brokers": 3, "partitions": 2, "reassigns": 2, "cancels": 1, "failures": 1}),
    ("kip455", {"brokers": 3, "partitions": 2, "reassigns": 2, "cancels": 1, "failures": 1}),
    # the replication layer (logs, high watermark), clean and unclean elections
    ("kraft", {"brokers": 3, "reassigns": 1, "cancels": 1, "failures": 1, "replication": True}),
    ("zk", {"brokers": 3, "reassigns": 1, "cancels": 1, "failures": 1, "failovers": 0, "replication": True,
            "unclean": True}),
]
QUICK = 4


def bounds_of(profile: str, overrides: dict) -> Bounds:
    return bounds_from_mapping(overrides, base=DEFAULT_SUITE[profile], where="sweep")


def run(profile: str, overrides: dict):
    """Check one configuration of the sweep (liveness on, no minimization: only verdicts count)."""
    return check_model(profile, bounds_of(profile, overrides), minimize_counterexamples=False)


def verdict_line(result) -> str:
    statuses = [v.status for v in result.properties.values()]
    bad = [f"{n}={v.status}" + (f"({','.join(v.missing)})" if v.missing else "")
           for n, v in result.properties.items() if v.status in FAILING]
    known = sum(s == KNOWN for s in statuses)
    return f"{statuses.count('holds')} hold, {known} known, {len(bad)} failing" + (": " + "; ".join(bad) if bad else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only the first {QUICK} configurations")
    parser.add_argument("--profile", action="append", help="only these profiles")
    args = parser.parse_args(argv)
    rows = SWEEP[:QUICK] if args.quick else SWEEP
    if args.profile:
        rows = [r for r in rows if r[0] in args.profile]
    failing = 0
    total = time.perf_counter()
    print(f"{'profile':10} {'bounds (over the default suite)':62} {'states':>9} {'seconds':>8}  verdicts")
    for profile, overrides in rows:
        started = time.perf_counter()
        result = run(profile, overrides)
        seconds = time.perf_counter() - started
        failing += bool(result.unexpected)
        shown = " ".join(f"{k}={v}" if not isinstance(v, bool) else k for k, v in overrides.items() if v is not False)
        print(f"{profile:10} {shown:62} {result.states:>9,} {seconds:>8.1f}  {verdict_line(result)}", flush=True)
    print(f"{len(rows)} configurations, {failing} failing, {time.perf_counter() - total:.0f} s")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
