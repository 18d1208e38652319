"""`kreassign report TRACE... --out report.html`: counterexample traces as one self-contained HTML file
(docs/report.md). A directory argument means every trace file in it. `--out -` writes the HTML to stdout.
The output follows the rule of kreassign/outputs.py (docs/outputs.md): never over a trace it reads, a device,
FIFO or socket. Exit 0, 2 for a bad file or output, 3 when the disk fails the write."""

from __future__ import annotations

import argparse
import glob
import os
import sys

from kreassign.checker.report.html import traces_report
from kreassign.checker.report.write import write_text_atomically
from kreassign.checker.traces.format import TraceError, read_trace

from kreassign.errors import UsageError
from kreassign.outputs import STDOUT, check_outputs


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="trace files (JSON) or directories of them")
    parser.add_argument("--out", "-o", required=True, metavar="FILE", help="the HTML file to write (atomically; '-': stdout)")
    parser.add_argument("--title", default="kreassign report", help="page title (default: %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    files: list[str] = []
    for t in args.traces:
        files += sorted(glob.glob(os.path.join(t, "*.json"))) if os.path.isdir(t) else [t]
    if not files:
        raise UsageError(f"{', '.join(args.traces)}: no trace files")
    check_outputs({"--out": args.out}, {"TRACE": files}, stdout={"--out"})
    traces = []
    for f in files:
        try:
            traces.append((os.path.splitext(os.path.basename(f))[0], read_trace(f)))
        except TraceError as e:
            raise UsageError(f"{e} (expected a kreassign trace file)") from None  # read_trace names the file
    write_text_atomically(args.out, traces_report(traces, args.title), "--out", stdout=True)
    if args.out == STDOUT:  # stdout is the report's
        print(f"<stdout>: {len(traces)} trace(s)", file=sys.stderr)
    else:
        print(f"{args.out}: {len(traces)} trace(s)")
    return 0
