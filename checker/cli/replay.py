"""`kreassign replay FILE`: re-execute a counterexample trace against the reference
(or, with `--impl`, against another implementation).

Exit codes (kreassign/errors.py): 0 the violation reproduces, 1 it does not (a mismatch),
2 the file is missing, unreadable or not a valid trace (the message names the file and
the field path) or --impl names nothing loadable, 3 the implementation crashed or hung.
"""

from __future__ import annotations

import argparse
import json

from kreassign.checker.traces.load import DECODE_ERRORS, load
from kreassign.checker.traces.replay import replay

from kreassign.errors import InfraError, KreassignError, UsageError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a counterexample trace (JSON)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument("--impl", metavar="SPEC", help="replay against another implementation: module:Class or 'exec:COMMAND'")
    from kreassign.checker.oracle.kafka_flags import add_arguments as add_kafka_arguments

    add_kafka_arguments(parser)  # --impl kafka: --kafka-classpath, --metadata-version (docs/kafka.md)
    parser.set_defaults(func=run)


def _replay(args: argparse.Namespace, trace):
    if not args.impl:
        return replay(trace)
    try:
        from kreassign.checker.oracle.differential import ReplayImplementationError, replay_against_impl
    except ModuleNotFoundError as e:
        raise InfraError(f"--impl: cannot import {e.name}") from None
    from kreassign.checker.oracle.kafka_flags import impl_spec

    spec = impl_spec(args)
    try:
        if spec.startswith("kafka"):  # the reference at Kafka's metadata.version, with the declared differences
            from kreassign.checker.oracle.kafka_lockstep import replay_against_kafka

            return replay_against_kafka(trace, spec)
        from kreassign.checker.oracle.kafka_flags import impl_timeout

        return replay_against_impl(trace, spec, impl_timeout(args))
    except ReplayImplementationError as e:  # the implementation broke during the replay: infrastructure
        if getattr(e.__context__, "exit_code", None) == 2:  # ... unless --impl names nothing loadable
            raise UsageError(f"--impl: {e}") from None
        raise InfraError(f"{args.file}: --impl {args.impl}: {e}") from None


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the violation reproduces against the reference, 1 when it does not."""
    trace, _ = load(args.file)
    try:
        result = _replay(args, trace)
    except KreassignError as e:
        if e.exit_code == 2 and args.file not in str(e):
            raise UsageError(f"{args.file}: {e}") from None
        raise
    except DECODE_ERRORS as e:  # a state the model decodes but cannot step from
        raise UsageError(f"{args.file}: cannot replay: {type(e).__name__}: {' '.join(str(e).split())[:200]}") from None
    if args.json:
        print(json.dumps({"file": args.file, "reproduces": result.reproduces, "steps_matched": result.steps_matched,
                          "mismatch": result.mismatch, "diffs": result.diffs}))
    elif result.reproduces:
        print(f"reproduces: {trace.profile} violates {trace.property} after {len(trace.steps)} step(s)")
    else:
        print(f"does not reproduce: {result.mismatch}")
        for d in result.diffs:
            print(f"  {d}")
    return 0 if result.reproduces else 1
