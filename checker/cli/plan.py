"""`kreassign plan PLAN.json`: what can go wrong with this reassignment on this cluster (docs/plan.md).

Reads Kafka's own files (the plan, `--current` assignment JSON, `--describe` text), checks
every partition's move exhaustively (one check per distinct shape, in parallel), prints
the phases, the risks and the rollback JSON. Exit 0: no risk found; 1: a risk; 2: bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from kreassign.checker.plan.check import PlanOptions
from kreassign.checker.plan.formats import parse_current, parse_describe, parse_plan, read_text
from kreassign.checker.plan.run import load_moves, run_plan
from kreassign.checker.plan.text import render
from kreassign.checker.report.html import plan_report
from kreassign.checker.report.write import write_text_atomically
from kreassign.checker.status.plan_inputs import rack_notes
from kreassign.checker.traces.format import trace_from_json, write_trace
from kreassign.reference import PROFILES

from kreassign.errors import UsageError
from kreassign.flag_values import say, seconds
from kreassign.outputs import check_outputs


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan", metavar="PLAN.json", help="the reassignment JSON you would pass to --execute")
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT",
                        help="read the current assignment, ISRs, leaders, live brokers, racks and the release from this "
                        "cluster (instead of --current/--describe/--live; read-only)")
    parser.add_argument("--command-config", metavar="FILE",
                        help="with --bootstrap-server: Kafka client properties (SASL/SSL), as Kafka's tools take them")
    parser.add_argument("--timeout", type=seconds("--timeout"), default=30.0, metavar="SECONDS",
                        help="with --bootstrap-server: how long each request may take (default: %(default)s)")
    parser.add_argument("--current", metavar="CURRENT.json",
                        help="the current-assignment JSON kafka-reassign-partitions.sh prints (or the whole message)")
    parser.add_argument("--describe", metavar="DESCRIBE.txt",
                        help="output of kafka-topics.sh --describe: leaders, ISRs, min.insync.replicas, unclean")
    parser.add_argument("--profile", default=None, choices=list(PROFILES),
                        help="the controller to model (default: kraft; with --bootstrap-server, the cluster's)")
    parser.add_argument("--kafka-version", metavar="V",
                        help="kraft: the Kafka release whose rules the plan is checked under (default: the newest)")
    parser.add_argument("--live", metavar="IDS", help="live brokers, like 1,2,3,5 (others are down; default: all)")
    parser.add_argument("--failures", type=int, default=1, metavar="N",
                        help="broker failures to consider during the move (default: %(default)s)")
    parser.add_argument("--failovers", type=int, default=0, metavar="N",
                        help="controller failovers to consider (default: %(default)s)")
    parser.add_argument("--cancel", action=argparse.BooleanOptionalAction, default=True,
                        help="consider cancelling the move (default: yes)")
    parser.add_argument("--overrides", type=int, default=0, metavar="N",
                        help="extra requests while it moves: the same target, the original, or another broker "
                        "(default: %(default)s)")
    parser.add_argument("--min-isr", type=int, metavar="N",
                        help="min.insync.replicas for every topic (default: from --describe's Configs, else 1)")
    parser.add_argument("--no-liveness", action="store_true", help="skip 'the move can always finish'")
    parser.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: one per CPU)")
    parser.add_argument("--phases", action="store_true", help="print every partition's phases (default: up to 20 partitions)")
    parser.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    parser.add_argument("--rollback-out", metavar="FILE", help="write the rollback JSON to FILE (atomically)")
    parser.add_argument("--out", metavar="DIR", help="write each finding's trace (replayable, shape ids) to DIR")
    parser.set_defaults(func=run)


def _ids(text: str, flag: str) -> set[int]:
    try:
        return {int(b) for b in text.split(",") if b.strip()}
    except ValueError:
        raise UsageError(f"{flag}: expected broker ids like 1,2,3, got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    for flag in ("failures", "failovers", "overrides"):
        if getattr(args, flag) < 0:
            raise UsageError(f"--{flag}: must not be negative")
    if args.min_isr is not None and args.min_isr < 1:
        raise UsageError("--min-isr: must be at least 1")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs: must be at least 1")
    # every output by the rule of kreassign/outputs.py, before the run: never over an input of this run
    check_outputs({"--html": args.html, "--rollback-out": args.rollback_out},
                  {"PLAN.json": args.plan, "--current": args.current, "--describe": args.describe,
                   "--command-config": args.command_config}, dirs={"--out": args.out})
    plan = parse_plan(read_text(args.plan), args.plan)
    version = ""
    if args.kafka_version is not None:
        from kreassign.checker.implementations.kafka.releases import parse_version

        if (args.profile or "kraft") != "kraft":
            raise UsageError(f"--kafka-version: applies to the kraft profile only, not {args.profile!r}")
        version = parse_version(args.kafka_version)
    racks: dict[int, str | None] = {}
    if args.bootstrap_server:
        for flag in ("current", "describe", "live"):
            if getattr(args, flag):
                raise UsageError(f"--{flag}: --bootstrap-server reads it from the cluster; give one or the other")
        current, current_file, describe, live, profile_name, version, racks = _from_cluster(args, version)
        describe_file = args.bootstrap_server
    else:
        if args.command_config:
            raise UsageError("--command-config: goes with --bootstrap-server")
        current_file, describe_file = args.current, args.describe
        current = parse_current(read_text(args.current), args.current) if args.current else None
        describe = parse_describe(read_text(args.describe), args.describe) if args.describe else None
        live = _ids(args.live, "--live") if args.live else None
        profile_name = args.profile or "kraft"
    moves = load_moves(plan, args.plan, current, current_file, describe, describe_file, live, args.min_isr)
    options = PlanOptions(profile_name, args.failures, args.failovers, args.cancel, args.overrides,
                          not args.no_liveness, version)

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rchecking shapes: {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)

    result = run_plan(plan, moves, options, current, current_file, jobs=args.jobs, progress=progress)
    if args.rollback_out and result.rollback:
        write_text_atomically(args.rollback_out, result.rollback + "\n", "--rollback-out")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, t in result.traces.items():
            trace = trace_from_json(t["trace"])
            ids = ", ".join(f"{s}={b}" for s, b in sorted(t["brokers"].items()) if s != b)
            trace.summary = (f"{name.split('__')[0]} (as t-0 in this replayable trace"
                             f"{'; brokers ' + ids if ids else ''}): {trace.summary}")
            write_trace(trace, os.path.join(args.out, f"{name}.json"))
    if args.html:
        write_text_atomically(args.html, plan_report(result, args.plan), "--html")
    notes = rack_notes(plan, racks) if racks else []
    if args.json:
        out = result.to_json()
        if args.bootstrap_server:
            out["cluster"] = {"bootstrap": args.bootstrap_server, "live": sorted(live or ()),
                              "racks": {str(b): r for b, r in sorted(racks.items())}, "rack_notes": notes}
        print(json.dumps(out, indent=1))
    else:
        print(render(result, args.plan, args.phases or len(result.partitions) <= 20))
        for n in notes:
            print(f"rack note: {n}")
    return 1 if result.risks else 0


def _from_cluster(args: argparse.Namespace, version: str):
    """The plan's inputs read from the cluster (checker/status/plan_inputs.py): (current, its name, describe,
    live brokers, profile, Kafka release, racks)."""
    from kreassign.checker.cli.status import read_live
    from kreassign.checker.status.plan_inputs import plan_inputs
    from kreassign.checker.status.release import rules_of

    snapshot = read_live(args.bootstrap_server, args.command_config, args.timeout,
                         topics=sorted({e.topic for e in parse_plan(read_text(args.plan), args.plan).entries}),
                         log=say if sys.stderr.isatty() else (lambda _line: None), unknown_topic=args.plan)
    rules = rules_of(snapshot, version or None)
    profile_name = args.profile or rules.profile
    if profile_name != "kraft" and version:
        raise UsageError(f"--kafka-version: applies to the kraft profile only, not {profile_name!r}")
    inputs = plan_inputs(snapshot)
    say(f"plan: {args.bootstrap_server}: {rules.said}") if sys.stderr.isatty() else None
    return (inputs.current, args.bootstrap_server, inputs.describe, inputs.live, profile_name,
            rules.kafka_version if profile_name == "kraft" else "", inputs.racks)
