"""`kreassign show FILE` and `kreassign replay FILE`."""

from __future__ import annotations

import argparse
import json
import sys

from .render import render_dot, render_table
from .replay import replay
from .trace import TraceError, read_trace


def register_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a counterexample trace (JSON)")
    parser.add_argument("--format", choices=["table", "dot", "json"], default="table",
                        help="table (default), Graphviz dot, or the raw JSON")
    parser.set_defaults(func=run_show)


def run_show(args: argparse.Namespace) -> int:
    try:
        trace = read_trace(args.file)
    except TraceError as e:
        print(f"kreassign show: {e}", file=sys.stderr)
        return 1
    if args.format == "dot":
        print(render_dot(trace))
    elif args.format == "json":
        print(json.dumps(trace.to_json(), indent=1))
    else:
        print(render_table(trace))
    return 0


def register_replay(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a counterexample trace (JSON)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument("--impl", metavar="SPEC", help="replay against another implementation: module:Class or 'exec:COMMAND'")
    parser.set_defaults(func=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    """Exit 0 when the violation reproduces against the reference, 1 when it does not."""
    try:
        trace = read_trace(args.file)
        if args.impl:
            try:
                from .differential import replay_against_impl
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
