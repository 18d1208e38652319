"""`kreassign replay FILE`: re-execute a counterexample trace against the reference
(or, with `--impl`, against another implementation)."""

from __future__ import annotations

import argparse
import json
import sys

from kreassign.checker.traces.format import TraceError, read_trace
from kreassign.checker.traces.replay import replay


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a counterexample trace (JSON)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument("--impl", metavar="SPEC", help="replay against another implementation: module:Class or 'exec:COMMAND'")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the violation reproduces against the reference, 1 when it does not."""
    try:
        trace = read_trace(args.file)
        if args.impl:
            try:
                from kreassign.checker.oracle.differential import replay_against_impl
            except ModuleNotFoundError:
                print("kreassign replay: --impl is not implemented yet", file=sys.stderr)
                return 2
            result = replay_against_impl(trace, args.impl)
        else:
            result = replay(trace)
    except TraceError as e:
        print(f"kreassign replay: {e}", file=sys.stderr)
        return 1
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
