"""`kreassign report TRACE... --out report.html`: counterexample traces as one self-contained HTML file
(docs/report.md). A directory argument means every trace file in it. Exit 0, or 2 for a bad file."""

from __future__ import annotations

import argparse
import glob
import os

from kreassign.checker.report.html import traces_report
from kreassign.checker.report.write import write_text_atomically
from kreassign.checker.traces.format import TraceError, read_trace

from kreassign.errors import UsageError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="trace files (JSON) or directories of them")
    parser.add_argument("--out", "-o", required=True, metavar="FILE", help="the HTML file to write (atomically)")
    parser.add_argument("--title", default="kreassign report", help="page title (default: %(default)s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    files: list[str] = []
    for t in args.traces:
        files += sorted(glob.glob(os.path.join(t, "*.json"))) if os.path.isdir(t) else [t]
    if not files:
        raise UsageError(f"{', '.join(args.traces)}: no trace files")
    traces = []
    for f in files:
        try:
            traces.append((os.path.splitext(os.path.basename(f))[0], read_trace(f)))
        except TraceError as e:
            raise UsageError(f"{e} (expected a kreassign trace file)") from None  # read_trace names the file
    write_text_atomically(args.out, traces_report(traces, args.title))
    print(f"{args.out}: {len(traces)} trace(s)")
    return 0
