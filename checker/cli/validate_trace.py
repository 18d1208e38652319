"""`kreassign validate-trace FILE`: is an observed run one that a profile allows?

FILE is a JSON-lines trace of observed states and actions, Kafka's own controller,
state-change and broker log lines, or a KRaft metadata log as `kafka-dump-log.sh
--cluster-metadata-decoder` prints it (docs/validate-trace.md). Exit code (kreassign/errors.py):
0 VALID (every line explained), 1 INVALID (the first illegal transition is reported with its
line number, the states around it and a field diff), 4 INCONCLUSIVE (lines outside the model,
or the search hit a limit), 2 for unreadable input or bad usage (the message names the file
and line).
"""

from __future__ import annotations

import argparse
import json

from kreassign.checker.traces.validation import SearchLimits, guess_format, report, result_json, validate_text

from kreassign.errors import FINDING, INCONCLUSIVE, OK, UsageError
from kreassign.outputs import read_text

EXIT = {"VALID": OK, "INVALID": FINDING, "INCONCLUSIVE": INCONCLUSIVE}


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the trace: JSON lines, Kafka controller / state-change / broker "
                        "log lines, or a KRaft metadata log (kafka-dump-log.sh --cluster-metadata-decoder)")
    parser.add_argument("--format", choices=["jsonl", "kafka-log", "kraft-metadata"],
                        help="the file's format (default: kraft-metadata if it holds decoded metadata records, jsonl if "
                        "its first line is a JSON object, else kafka-log)")
    parser.add_argument("--profile", metavar="P",
                        help="the profile the run must follow (default: zk for Kafka logs, kraft for metadata logs; for "
                        "JSON lines the file's \"profile\", else kraft)")
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
    parser.add_argument("--max-candidates", type=int, default=limits.max_candidates, metavar="N",
                        help="candidate states kept per line; beyond, a rejection is only INCONCLUSIVE "
                        "(default: %(default)s)")
    parser.add_argument("--elections", default="", help="ElectLeaders types unlogged actions may use: PREFERRED,UNCLEAN "
                        "(default: PREFERRED when the log shows preferred elections, else none)")
    parser.add_argument("--kraft-actions", default="", metavar="A,B",
                        help="kraft: unlogged actions may also be the controller's own: controlled-shutdown, restart, "
                        "balance-leaders, elect-unclean (as check --kraft-actions)")
    parser.add_argument("--kafka-version", metavar="V",
                        help="kraft: the Kafka release whose rules the trace must follow (default: the newest); a "
                        "metadata log's own records give its metadata.version and ELR")
    parser.add_argument("--topic", action="append", metavar="T",
                        help="kraft-metadata: check only topic T's records (repeatable; the brokers' records are "
                        "checked as they touch T; default: every topic)")
    parser.add_argument("--json", action="store_true", help="machine-readable verdict on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kreassign.checker.models.quota_handlers import HANDLERS_PROFILES
    from kreassign.reference import PROFILES

    if args.profile is not None and args.profile not in PROFILES and args.profile not in HANDLERS_PROFILES:
        raise UsageError(f"--profile: unknown profile {args.profile!r}; known: {', '.join(PROFILES)}, "
                         f"{', '.join(HANDLERS_PROFILES)}")
    for flag in ("max_unlogged", "max_requests", "max_failures", "max_failovers", "max_states"):
        if getattr(args, flag) < 0:
            raise UsageError(f"--{flag.replace('_', '-')}: must not be negative")
    elections = tuple(e.strip() for e in args.elections.split(",") if e.strip())
    bad = [e for e in elections if e not in ("PREFERRED", "UNCLEAN")]
    if bad:
        raise UsageError(f"--elections: unknown election type {bad[0]!r} (PREFERRED or UNCLEAN)")
    from kreassign.reference.kraft import CONTROLLER_ACTIONS

    kraft_actions = tuple(a.strip() for a in args.kraft_actions.split(",") if a.strip())
    bad = [a for a in kraft_actions if a not in CONTROLLER_ACTIONS]
    if bad:
        raise UsageError(f"--kraft-actions: unknown action {bad[0]!r} (known: {', '.join(CONTROLLER_ACTIONS)})")
    text = _read(args.file)
    fmt = args.format or guess_format(text)
    if args.topic and fmt != "kraft-metadata":
        raise UsageError(f"--topic: only for a KRaft metadata log, not {fmt}")
    if args.max_candidates < 1:
        raise UsageError("--max-candidates: must be at least 1")
    limits = SearchLimits(args.max_unlogged, args.max_requests, args.max_failures, args.max_failovers,
                          args.max_states, elections, shortest=not args.all_explanations,
                          max_candidates=args.max_candidates, kraft_actions=kraft_actions)
    try:
        version = None
        if args.kafka_version is not None:
            from kreassign.checker.implementations.kafka.releases import parse_version

            version = parse_version(args.kafka_version)
        result = validate_text(text, fmt, args.profile, limits, version, topics=args.topic)  # a TraceFormatError (exit 2) names the line
    except UsageError as e:
        if args.file in str(e):
            raise
        raise UsageError(f"{args.file}: {e}") from None
    except (ValueError, RecursionError) as e:  # e.g. a profile named by the file that does not exist
        raise UsageError(f"{args.file}: {' '.join(str(e).split())[:300]}") from None
    if args.json:
        print(json.dumps(result_json(result, args.file), indent=1))
    else:
        print(report(result, args.file))
    return EXIT[result.verdict]


def _read(path: str) -> str:
    return read_text(path, "a trace")


__all__ = ["register", "run"]
