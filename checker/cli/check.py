"""`kreassign check`: explore every profile's bounded configuration and report each property.

With no arguments it runs the default suite (every profile at small bounds) and prints
a properties × profiles matrix. The exit code is 1 iff a violation is not declared as
known (spec/known_violations.py), 2 for bad usage or configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from typing import Any

from tabulate import tabulate

from kreassign.checker.check.run import HOLDS, KNOWN, NOT_CHECKED, VIOLATED, CheckResult, check_model
from kreassign.checker.models.bounds import Bounds, ConfigError, bounds_from_mapping, load_config
from kreassign.checker.models.bound_flags import add_bound_arguments, bound_overrides
from kreassign.checker.models.registry import QUOTA, REASSIGNMENT, build_model, model_kind
from kreassign.checker.models.suite import DEFAULT_SUITE, QUOTA_SUITE

def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", action="append", dest="profiles", metavar="P",
                        help="profile to check (repeatable; default: the whole suite)")
    parser.add_argument("--config", help="TOML file with [bounds] (and optionally [profiles] names)")
    parser.add_argument("--engine", choices=["embedded", "spark"], default="embedded",
                        help="embedded BFS (default) or Apache Spark")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: %(default)s)")
    parser.add_argument("--resume", metavar="DIR", help="Spark: continue an interrupted run from its checkpoint directory")
    parser.add_argument("--checkpoint", metavar="DIR", help="Spark: checkpoint every BFS level to DIR")
    parser.add_argument("--impl", metavar="SPEC",
                        help="check another implementation in lockstep with the reference: module:Class or 'exec:COMMAND'")
    parser.add_argument("--json", action="store_true", help="machine-readable results on stdout")
    parser.add_argument("--out", default="kreassign-out", help="directory for counterexample files (default: %(default)s)")
    parser.add_argument("--no-liveness", action="store_true", help="skip the graph (liveness) properties")
    parser.add_argument("--no-minimize", action="store_true", help="keep BFS counterexamples as found")
    parser.add_argument("--symmetry", action="store_true",
                        help="explore broker-renaming orbits (profiles zk and kip455; use --targets permutations)")
    add_bound_arguments(parser)
    parser.set_defaults(func=run)


def _plan(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """(profile, bounds) pairs to run."""
    overrides = bound_overrides(args)
    base = None
    names = args.profiles
    if args.config:
        base, config_names = load_config(args.config)
        names = names or config_names
    if args.impl and args.engine == "spark":
        raise ConfigError("--impl runs the implementation in this process's lockstep; it cannot run on Spark")
    if args.impl and not names:
        names = ["kraft"]  # an implementation is checked against one profile; kraft unless told otherwise
    names = names or list(DEFAULT_SUITE) + list(QUOTA_SUITE)
    plan = []
    for name in names:
        kind = model_kind(name)
        if kind == REASSIGNMENT:
            start = base or DEFAULT_SUITE.get(name, Bounds())
            plan.append((name, bounds_from_mapping(overrides, base=start, where="flags") if overrides else start))
        else:
            plan.append((name, None))
    return plan


def _progress(profile: str):
    if not sys.stderr.isatty():
        return None
    started = time.perf_counter()

    def report(states: int, depth: int, rate: float) -> None:
        if time.perf_counter() - started > 2:
            print(f"\rChecking {profile}: states={states:,} depth={depth} states/s={rate:,.0f}   ",
                  end="", file=sys.stderr, flush=True)

    return report


def _explorer(args: argparse.Namespace):
    """The engine: the embedded BFS, or Spark (checker/spark/engine.py) with the run's options."""
    if args.engine != "spark":
        from kreassign.checker.explore.bfs import explore

        return explore
    from kreassign.checker.spark.engine import spark_explorer

    return spark_explorer(master=args.master, checkpoint_dir=args.checkpoint, resume_dir=args.resume)


def _factory(kind: str, args: argparse.Namespace):
    if args.impl:
        from kreassign.checker.oracle.differential import differential_factory

        return differential_factory(args.impl)
    return lambda p, b: build_model(kind, p, b)


def run_one(profile: str, bounds: Any, args: argparse.Namespace) -> CheckResult:
    kind = model_kind(profile)
    if kind == QUOTA:
        from kreassign.checker.models.quota import default_quota_bounds

        bounds = default_quota_bounds(profile)
    return check_model(
        profile,
        bounds,
        factory=_factory(kind, args),
        explorer=_explorer(args),
        engine=args.engine,
        model_kind=kind,
        out_dir=args.out,
        liveness_check=not args.no_liveness,
        minimize_counterexamples=not args.no_minimize,
        progress=_progress(profile),
        symmetry=args.symmetry,
    )


def _cell(v) -> str:
    if v.status == HOLDS:
        return "holds"
    if v.status == KNOWN:
        return f"known ({v.length} steps)"
    if v.status == NOT_CHECKED:
        return "-"
    return f"VIOLATED ({v.length} steps)"


def report(results: list[CheckResult]) -> str:
    names: list[str] = []
    for r in results:
        for n in r.properties:
            if n not in names:
                names.append(n)
    rows = [[n] + [_cell(r.properties[n]) if n in r.properties else "" for r in results] for n in names]
    table = tabulate(rows, headers=["property"] + [r.profile for r in results], tablefmt="simple")
    summary = tabulate(
        [[r.profile, f"{r.states:,}", f"{r.transitions:,}", r.depth, f"{r.seconds:.2f}"] for r in results],
        headers=["profile", "states", "transitions", "depth", "seconds"],
        tablefmt="simple",
    )
    lines = [table, "", summary]
    files = [(r.profile, n, v.counterexample) for r in results for n, v in r.properties.items()
             if v.status in (VIOLATED, KNOWN) and v.counterexample]
    if files:
        lines.append("")
        lines += [f"{'VIOLATED' if r_status(results, p, n) == VIOLATED else 'known'} {p} {n}: {f}" for p, n, f in files]
    return "\n".join(lines)


def r_status(results: list[CheckResult], profile: str, name: str) -> str:
    return next(r.properties[name].status for r in results if r.profile == profile)


def run(args: argparse.Namespace) -> int:
    try:
        plan = _plan(args)
    except (ConfigError, ValueError) as e:
        print(f"kreassign check: {e}", file=sys.stderr)
        return 2
    results = []
    for profile, bounds in plan:
        try:
            results.append(run_one(profile, bounds, args))
        except ModuleNotFoundError as e:
            if e.name not in ("kreassign.checker.spark.engine", "kreassign.checker.oracle.differential"):
                raise
            print(f"kreassign check: {'--engine spark' if 'spark' in e.name else '--impl'} is not implemented yet",
                  file=sys.stderr)
            return 2
        except ValueError as e:
            print(f"kreassign check: {e}", file=sys.stderr)
            return 2
        if sys.stderr.isatty():
            print("\r" + " " * 70 + "\r", end="", file=sys.stderr)
    unexpected = sum(len(r.unexpected) for r in results)
    if args.json:
        print(json.dumps({"results": [r.to_json() for r in results], "unexpected_violations": unexpected}, indent=1))
    else:
        print(report(results))
        print(f"\n{unexpected} unexpected violation(s)" if unexpected else "\nno unexpected violations")
    return 1 if unexpected else 0


__all__ = ["DEFAULT_SUITE", "register", "replace", "run"]
