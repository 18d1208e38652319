"""`kreassign oracle`: the reference served as JSON lines on stdin/stdout (docs/oracle.md).

One request per line, one reply per line, flushed at once; a malformed line gets an
error reply and the session goes on (bytes that are not UTF-8, integers beyond Python's digit
limit and absurd nesting included); end of input ends the session with exit 0, Ctrl-C with 130. The op
table lives in checker/oracle/server.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from kreassign.checker.oracle.server import OPS, QUOTA_PROFILES, Oracle
from kreassign.reference import PROFILES


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="kraft", choices=list(PROFILES) + list(QUOTA_PROFILES),
                        help="profile of requests that name none (default: %(default)s)")
    parser.add_argument("--list-ops", action="store_true", help="print the ops and their parameters, then exit")
    parser.set_defaults(func=run)


def _lines(stdin: TextIO):
    """The request lines; bytes that are not UTF-8 become U+FFFD, which then fails as invalid JSON
    (an error reply), instead of ending the session with a UnicodeDecodeError."""
    raw = getattr(stdin, "buffer", None)
    while True:
        line = raw.readline().decode("utf-8", errors="replace") if raw is not None else stdin.readline()
        if not line:
            return
        yield line


def _encode(reply: dict) -> str:
    try:
        return json.dumps(reply, separators=(",", ":"))
    except ValueError as e:  # e.g. an echoed id beyond Python's integer digit limit
        return json.dumps({"id": None, "ok": False, "error": {"code": "invalid_request",
                                                              "message": f"cannot encode the reply: {str(e)[:200]}"}})


def serve(oracle: Oracle, stdin: TextIO, stdout: TextIO) -> int:
    """Answer every line of `stdin` on `stdout` until end of input."""
    for line in _lines(stdin):
        if not line.strip():
            continue
        reply = oracle.handle_line(line)
        stdout.write(_encode(reply) + "\n")
        stdout.flush()
    return 0


def run(args: argparse.Namespace) -> int:
    if args.list_ops:
        width = max(len(n) for n in OPS)
        for op in OPS.values():
            print(f"{op.name:<{width}}  {op.summary}\n{'':<{width}}  params: {op.params or '-'}")
        return 0
    # Ctrl-C: kreassign.cli.main says so on stderr and exits 130; stdout, the protocol, gets nothing
    return serve(Oracle(args.profile), sys.stdin, sys.stdout)


__all__ = ["register", "run", "serve"]
