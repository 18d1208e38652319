"""`kreassign validate-trace FILE`: is an observed run one that a profile allows?

FILE is a JSON-lines trace of observed states and actions, or Kafka's own controller and
state-change log lines (docs/validate-trace.md). Exit code: 0 when the trace is valid,
1 when it is not (the first illegal transition is reported with its line number and the
states around it) or when the search hit --max-states first (reported as inconclusive),
2 for usage errors (missing file, malformed trace, unknown profile).
"""

from __future__ import annotations

import argparse
import json
import sys

from .trace_validation import SearchLimits, TraceFormatError, guess_format, report, result_json, validate_text


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the trace: JSON lines, or Kafka controller / state-change log lines")
    parser.add_argument("--format", choices=["jsonl", "kafka-log"],
                        help="the file's format (default: jsonl if its first line is a JSON object, else kafka-log)")
    parser.add_argument("--profile", metavar="P",
                        help="the profile the run must follow (default: zk for Kafka logs; for JSON lines the file's "
                        "\"profile\", else kraft)")
    limits = SearchLimits()
    parser.add_argument("--max-unlogged", type=int, default=limits.max_unlogged, metavar="N",
                        help="unlogged actions allowed between two observations (default: %(default)s)")
    parser.add_argument("--max-requests", type=int, default=limits.max_requests, metavar="N",
                        help="of which admin requests (default: %(default)s)")
    parser.add_argument("--max-failures", type=int, default=limits.max_failures, metavar="N",
                        help="of which broker failures (default: %(default)s)")
    parser.add_argument("--max-failovers", type=int, default=limits.max_failovers, metavar="N",
                        help="of which controller failovers (default: %(default)s)")
    parser.add_argument("--max-states", type=int, default=limits.max_states, metavar="N",
                        help="states searched between two observations before giving up (default: %(default)s)")
    parser.add_argument("--all-explanations", action="store_true",
                        help="keep every state that matches a line within the bounds, not only those reached with "
                        "the fewest unlogged actions (complete for the bounds, slower)")
    parser.add_argument("--elections", default="", help="ElectLeaders types unlogged actions may use: PREFERRED,UNCLEAN")
    parser.add_argument("--json", action="store_true", help="machine-readable verdict on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kreassign.reference import PROFILES

    if args.profile is not None and args.profile not in PROFILES:
        print(f"kreassign validate-trace: --profile: unknown profile {args.profile!r}; known: {', '.join(PROFILES)}",
              file=sys.stderr)
        return 2
    for flag in ("max_unlogged", "max_requests", "max_failures", "max_failovers", "max_states"):
        if getattr(args, flag) < 0:
            print(f"kreassign validate-trace: --{flag.replace('_', '-')}: must not be negative", file=sys.stderr)
            return 2
    elections = tuple(e.strip() for e in args.elections.split(",") if e.strip())
    bad = [e for e in elections if e not in ("PREFERRED", "UNCLEAN")]
    if bad:
        print(f"kreassign validate-trace: --elections: unknown election type {bad[0]!r} (PREFERRED or UNCLEAN)",
              file=sys.stderr)
        return 2
    try:
        with open(args.file, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        print(f"kreassign validate-trace: {args.file}: no such file", file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as e:
        print(f"kreassign validate-trace: {args.file}: cannot read: {e}", file=sys.stderr)
        return 2
    fmt = args.format or guess_format(text)
    limits = SearchLimits(args.max_unlogged, args.max_requests, args.max_failures, args.max_failovers,
                          args.max_states, elections, shortest=not args.all_explanations)
    try:
        result = validate_text(text, fmt, args.profile, limits)
    except TraceFormatError as e:
        print(f"kreassign validate-trace: {args.file}: {e}", file=sys.stderr)
        return 2
    except ValueError as e:  # e.g. a profile named by the file that does not exist
        print(f"kreassign validate-trace: {args.file}: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result_json(result, args.file), indent=1))
    else:
        print(report(result, args.file))
    return 0 if result.valid else 1


__all__ = ["register", "run"]
