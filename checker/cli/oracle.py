"""`kreassign oracle`: the reference served as JSON lines on stdin/stdout (docs/oracle.md).

One request per line, one reply per line, flushed at once; a malformed line gets an
error reply and the session goes on; end of input ends the session with exit 0. The op
table lives in checker/oracle/server.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from kreassign.reference import PROFILES

from kreassign.checker.oracle.server import OPS, QUOTA_PROFILES, Oracle


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="kraft", choices=list(PROFILES) + list(QUOTA_PROFILES),
                        help="profile of requests that name none (default: %(default)s)")
    parser.add_argument("--list-ops", action="store_true", help="print the ops and their parameters, then exit")
    parser.set_defaults(func=run)


def serve(oracle: Oracle, stdin: TextIO, stdout: TextIO) -> int:
    """Answer every line of `stdin` on `stdout` until end of input."""
    while True:
        line = stdin.readline()
        if not line:
            return 0
        if not line.strip():
            continue
        reply = oracle.handle_line(line)
        stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        stdout.flush()


def run(args: argparse.Namespace) -> int:
    if args.list_ops:
        width = max(len(n) for n in OPS)
        for op in OPS.values():
            print(f"{op.name:<{width}}  {op.summary}\n{'':<{width}}  params: {op.params or '-'}")
        return 0
    try:
        return serve(Oracle(args.profile), sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        return 130


__all__ = ["register", "run", "serve"]
