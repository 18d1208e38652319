"""`kreassign show FILE`: a counterexample trace as a table, Graphviz dot or JSON.

Exit codes (kreassign/errors.py): 0 rendered, 2 the file is missing, unreadable or not a
valid trace (the message names the file and the field path or line).
"""

from __future__ import annotations

import argparse
import json

from kreassign.checker.traces.load import DECODE_ERRORS, load
from kreassign.checker.traces.render import render_dot, render_table

from kreassign.errors import UsageError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a counterexample trace (JSON)")
    parser.add_argument("--format", choices=["table", "dot", "json"], default="table",
                        help="table (default), Graphviz dot, or the raw JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    trace, _ = load(args.file)  # a UsageError (exit 2) names the file and the field
    try:
        if args.format == "dot":
            text = render_dot(trace)
        elif args.format == "json":
            text = json.dumps(trace.to_json(), indent=1)
        else:
            text = render_table(trace)
    except DECODE_ERRORS as e:
        # the fields read_trace checks are fine, but a state inside does not have the shape of its model
        raise UsageError(f"{args.file}: cannot render the trace: a state or action is malformed "
                         f"({type(e).__name__}: {e})") from None
    print(text)
    return 0
