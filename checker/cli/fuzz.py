"""`kreassign fuzz`: Hypothesis stateful testing of the reference, or of another implementation.

Long random runs of one profile's model (checker/fuzz/stateful.py): every `always` and
`transition` property checked at every step, each violation shrunk to a short program
and written as a counterexample trace. With `--impl`, every step is also applied to the
implementation and compared with the reference (checker/oracle/differential.py). The run ends
with the number of distinct states it visited next to the exhaustive count for the same
bounds (checker/explore/bfs.py). Exit code (kreassign/errors.py): 0 when only known violations
(properties with findings in spec/findings.py) or none were found, 1 otherwise, 2 for bad
usage or input, 3 when the implementation under test crashed or hung, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.config.bound_flags import add_bound_arguments, bound_overrides
from kreassign.checker.config.bounds import Bounds, bounds_from_mapping, load_config
from kreassign.checker.config.limits import refuse_absurd
from kreassign.checker.fuzz.stateful import (
    EXAMPLE_FOUND,
    KNOWN,
    NOT_CHECKED,
    PASSED,
    VIOLATED,
    FuzzResult,
    fuzz_settings,
    run_fuzz,
)
from kreassign.checker.models.registry import QUOTA, REASSIGNMENT, build_model, model_kind
from kreassign.spec.findings import known_violation
from tabulate import tabulate

from kreassign.errors import FINDING, INFRA, OK, UsageError
from kreassign.interrupts import reliable_ctrl_c
from kreassign.outputs import check_outputs

DEFAULT_MAX_STATES = 1_000_000  # the exhaustive count stops (and says so) beyond this


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="kraft", help="profile to fuzz (default: %(default)s)")
    parser.add_argument("--examples", type=int, default=200, metavar="N",
                        help="random programs to run (Hypothesis max_examples; default: %(default)s)")
    parser.add_argument("--steps", type=int, default=50, metavar="N",
                        help="at most N actions per program (stateful_step_count; default: %(default)s)")
    parser.add_argument("--seed", type=int,
                        help="Hypothesis seed (default: a random one, printed); the same seed repeats the run")
    parser.add_argument("--impl", metavar="SPEC",
                        help="also run another implementation in lockstep: module:Class, file.py:Class or 'exec:COMMAND'")
    parser.add_argument("--config", help="TOML file with [bounds] (checker/config/bounds.py)")
    add_bound_arguments(parser)
    from kreassign.checker.oracle.kafka_flags import add_arguments as add_kafka_arguments

    add_kafka_arguments(parser)  # --impl kafka: --kafka-classpath, --metadata-version (docs/kafka.md)
    parser.add_argument("--out", default="kreassign-out", help="directory for counterexample files (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    parser.add_argument("--no-exhaustive", action="store_true", help="do not count the exhaustive state space")
    parser.add_argument("--force", action="store_true",
                        help="run even when the estimated state space of the bounds is absurd")
    parser.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES, metavar="N",
                        help="stop the exhaustive count after N states (default: %(default)s)")
    parser.set_defaults(func=run)


def _bounds(args: argparse.Namespace) -> Any:
    kind = model_kind(args.profile)
    if kind == QUOTA:
        from kreassign.checker.models.quota import default_quota_bounds, quota_bounds_for_check

        bounds = quota_bounds_for_check(args.profile, args.config)  # the handlers profiles: [quota_handlers]
        return bounds if bounds is not None else default_quota_bounds(args.profile)
    base = None
    if args.config:
        base, _ = load_config(args.config)
    start = base or DEFAULT_SUITE.get(args.profile, Bounds())
    overrides = bound_overrides(args)
    return bounds_from_mapping(overrides, base=start, where="flags") if overrides else start


def _exhaustive(kind: str, profile: str, bounds: Any, max_states: int) -> tuple[int, bool, Any]:
    """(distinct states, complete?, membership test) of the reference model at the same bounds."""
    from kreassign.checker.explore.bfs import explore

    result = explore(build_model(kind, profile, bounds), max_states=max_states, keep_graph=True)
    index = result.graph.index if result.graph is not None else {}
    return result.states, result.complete, index


def coverage(result: FuzzResult, exhaustive: int | None, complete: bool, outside: int | None) -> dict[str, Any]:
    """Distinct states of the fuzz run against the exhaustive count; `ratio` is the share of the exhaustive
    states the run reached (states outside it, which only a diverging implementation produces, excluded)."""
    ratio = (result.states - (outside or 0)) / exhaustive if exhaustive else None
    return {"fuzz": result.states, "exhaustive": exhaustive, "exhaustive_complete": complete,
            "ratio": round(ratio, 4) if ratio is not None else None, "fuzz_states_not_in_exhaustive": outside}


def _row(name: str, o) -> list[str]:
    if o.status == PASSED:
        cell = "passed"
    elif o.status == NOT_CHECKED:
        cell = "- (graph property: kreassign check)" if o.kind == "eventually" else "-"
    elif o.status == EXAMPLE_FOUND:
        cell = f"example found ({o.length} steps)"
    elif o.kind == "sometimes":
        cell = "no example seen (kreassign check searches them all)"
    elif o.status == KNOWN:
        cell = f"known ({o.length} steps; {o.known_file})"
    else:
        cell = f"VIOLATED (shrunk to {o.length} steps: {o.counterexample})"
    return [name, o.kind, cell]


def report(result: FuzzResult, cov: dict[str, Any], impl: str | None) -> str:
    bounds = ", ".join(f"{k}={v}" for k, v in result.bounds.items()) if isinstance(result.bounds, dict) else ""
    lines = [
        f"kreassign fuzz: profile {result.profile}" + (f" against {impl}" if impl else "") + f" ({bounds})",
        (f"{result.examples} examples x <= {result.max_steps} steps, seed {result.seed}: "
         f"{result.runs:,} runs, {result.steps:,} steps in {result.seconds:.1f} s"),
    ]
    if cov["exhaustive"] is None:
        lines.append(f"distinct states: {result.states:,} (exhaustive count skipped)")
    else:
        at_least = "" if cov["exhaustive_complete"] else ">= "
        lines.append(f"distinct states: fuzz {result.states:,} / exhaustive {at_least}{cov['exhaustive']:,} "
                     f"({100 * cov['ratio']:.1f} % of the exhaustive states reached)")
        if cov["fuzz_states_not_in_exhaustive"]:
            lines.append(f"  {cov['fuzz_states_not_in_exhaustive']} fuzz state(s) are not reachable in the reference model")
    lines.append("")
    rows = [_row(n, o) for n, o in result.properties.items()]
    lines.append(tabulate(rows, headers=["property", "kind", "result"], tablefmt="simple"))
    if result.programs:
        lines += ["", "Hypothesis's shrunk program(s):"]
        for p in result.programs:
            lines += ["", p]
    for e in result.errors:
        lines += ["", f"ERROR {e}"]
    unexpected = len(result.unexpected) + len(result.errors)
    lines += ["", f"{unexpected} unexpected violation(s)" if unexpected else "no unexpected violations"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    with reliable_ctrl_c():  # Hypothesis's gc callback would otherwise swallow a Ctrl-C
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    for flag in ("examples", "steps", "max_states"):
        if getattr(args, flag) < 1:
            raise UsageError(f"--{flag.replace('_', '-')}: must be at least 1")
    check_outputs(dirs={"--out": args.out}, inputs={"--config": args.config})  # docs/outputs.md
    try:
        kind = model_kind(args.profile)
        bounds = _bounds(args)
    except ValueError as e:  # ConfigError (a UsageError) or an unknown profile
        raise UsageError(str(e)) from None
    if isinstance(bounds, Bounds):
        refuse_absurd(args.profile, bounds, force=args.force)
    if args.seed is None:  # pick one ourselves, so that every run can be repeated
        args.seed = random.SystemRandom().randrange(2**32)
    factory = None
    try:
        if args.impl:
            if kind != REASSIGNMENT:
                raise UsageError(f"--impl checks reassignment profiles only, not {args.profile!r}")
            from kreassign.checker.oracle.differential import differential_factory
            from kreassign.checker.oracle.kafka_flags import impl_spec

            spec = impl_spec(args)
            if spec.startswith("kafka"):  # Kafka's KRaft controller (docs/kafka.md)
                from kreassign.checker.oracle.kafka_flags import controller_actions
                from kreassign.checker.oracle.kafka_lockstep import kafka_factory

                factory = kafka_factory(spec, controller_actions(args))
            else:
                from kreassign.checker.oracle.kafka_flags import impl_timeout

                factory = differential_factory(spec, impl_timeout(args))
            model = factory(args.profile, bounds)  # an ImplementationError carries its exit code (2 spec, 3 crash)
        else:
            model = build_model(kind, args.profile, bounds)
        result = run_fuzz(
            model,
            model_kind=kind,
            seed=args.seed,
            known=lambda name: known_violation(args.profile, name, getattr(args, "kafka_version", None)),
            out_dir=args.out,
            hypothesis_settings=fuzz_settings(args.examples, args.steps),
        )
    finally:
        if factory is not None:
            factory.close()
    exhaustive, complete, outside = None, False, None
    if not args.no_exhaustive:
        exhaustive, complete, index = _exhaustive(kind, args.profile, bounds, args.max_states)
        outside = sum(1 for s in result.visited if s not in index) if complete else None
    cov = coverage(result, exhaustive, complete, outside)
    unexpected = len(result.unexpected) + len(result.errors)
    crashed = [e for e in result.errors if e.startswith("ImplementationError:")]  # the adapter, not the reference
    if args.json:
        print(json.dumps({
            "profile": result.profile,
            "engine": "hypothesis",
            "implementation": args.impl,
            "bounds": result.bounds,
            "examples": result.examples,
            "max_steps": result.max_steps,
            "seed": result.seed,
            "runs": result.runs,
            "steps": result.steps,
            "seconds": round(result.seconds, 3),
            "states": cov,
            "properties": {n: {"status": o.status, "kind": o.kind, "length": o.length,
                               "counterexample": o.counterexample, "known": o.known_file}
                           for n, o in result.properties.items()},
            "programs": result.programs,
            "errors": result.errors,
            "unexpected_violations": unexpected,
        }, indent=1))
    else:
        print(report(result, cov, args.impl))
    if crashed:
        print(f"kreassign fuzz: the implementation failed: {crashed[0][len('ImplementationError: '):]}", file=sys.stderr)
        return INFRA
    return FINDING if unexpected else OK


__all__ = ["VIOLATED", "coverage", "register", "report", "run"]
