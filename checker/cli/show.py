"""`kreassign show FILE`: a counterexample trace as a table, Graphviz dot or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from kreassign.checker.traces.format import TraceError, read_trace
from kreassign.checker.traces.render import render_dot, render_table


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a counterexample trace (JSON)")
    parser.add_argument("--format", choices=["table", "dot", "json"], default="table",
                        help="table (default), Graphviz dot, or the raw JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
