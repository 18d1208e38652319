"""`kreassign status --bootstrap-server HOST:PORT`: why each reassignment in flight is where it is, what it
waits on, what a cancel would leave, and which replication throttles are left behind (docs/status.md).

Reads the cluster once through Kafka's Admin client and never writes to it. Exit 0: nothing stuck and
nothing left behind; 1: something is; 2: bad usage or input; 3: the cluster could not be reached or read.
"""

from __future__ import annotations

import argparse
import json
import sys

from kreassign.errors import UsageError
from kreassign.flag_values import integer, say, seconds
from kreassign.outputs import check_outputs


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT",
                        help="the cluster to read, as Kafka's tools take it (HOST:PORT[,HOST:PORT...])")
    parser.add_argument("--command-config", metavar="FILE",
                        help="Kafka client properties (SASL/SSL settings), as Kafka's tools take them")
    parser.add_argument("--snapshot", metavar="FILE",
                        help="explain a snapshot saved by an earlier `status --json` instead of reading a cluster")
    parser.add_argument("--kafka-version", metavar="V",
                        help="kraft: check under this release's rules (default: the release the cluster reports)")
    parser.add_argument("--topic", action="append", metavar="NAME",
                        help="read only this topic (repeatable; default: every topic)")
    parser.add_argument("--timeout", type=seconds("--timeout"), default=30.0, metavar="SECONDS",
                        help="how long each request to the cluster may take (default: %(default)s)")
    parser.add_argument("--search-states", type=integer("--search-states"), default=None, metavar="N",
                        help="states searched to find where a partition is in the model (default: 50000)")
    parser.add_argument("--brief", action="store_true", help="details only for partitions that are not just catching up")
    parser.add_argument("--json", action="store_true", help="machine-readable result on stdout (with the snapshot)")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    parser.set_defaults(func=run)


def read_live(bootstrap: str, command_config: str | None, timeout_s: float, *, topics: list[str] | None = None,
              log=None, unknown_topic: str = "--topic"):
    """One snapshot of a live cluster (checker/status/snapshot.py); a cluster that cannot be reached or read
    is one line naming the address (exit 3); a topic it does not have is a usage error naming `unknown_topic`."""
    from kreassign.checker.cluster.admin import AdminError, AdminRequestError
    from kreassign.checker.cluster.external import ClusterUnreachable, connect, reach
    from kreassign.checker.status.snapshot import read_cluster

    with connect(bootstrap, command_config, log=log) as admin:
        reach(admin, bootstrap, timeout_s)
        try:
            return read_cluster(admin, bootstrap, timeout_s=timeout_s, topics=topics)
        except AdminRequestError as e:
            if e.error_class == "UnknownTopicOrPartitionException" and topics:
                raise UsageError(f"{unknown_topic}: {e.message} (on the cluster at {bootstrap})") from None
            raise ClusterUnreachable(f"{bootstrap}: reading the cluster failed: {e.error_class}: {e.message}") from None
        except AdminError as e:
            raise ClusterUnreachable(f"{bootstrap}: reading the cluster failed: {e}") from None


def _snapshot(args: argparse.Namespace):
    from kreassign.checker.status.snapshot import read_snapshot_file

    if args.snapshot:
        if args.bootstrap_server or args.command_config:
            raise UsageError("--snapshot: explains a saved snapshot; it does not go with --bootstrap-server or "
                             "--command-config")
        return read_snapshot_file(args.snapshot)
    if not args.bootstrap_server:
        raise UsageError("--bootstrap-server: required (or --snapshot FILE)")
    progress = say if not args.json or sys.stderr.isatty() else (lambda _line: None)
    return read_live(args.bootstrap_server, args.command_config, args.timeout, topics=args.topic, log=progress)


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise UsageError("--timeout: must be more than 0 seconds")
    if args.search_states is not None and args.search_states < 1:
        raise UsageError("--search-states: must be at least 1")
    check_outputs({"--html": args.html}, {"--snapshot": args.snapshot, "--command-config": args.command_config})
    version = None
    if args.kafka_version is not None:
        from kreassign.checker.implementations.kafka.releases import parse_version

        version = parse_version(args.kafka_version)
    from kreassign.checker.status.locate import LOCATE_STATES
    from kreassign.checker.status.release import rules_of
    from kreassign.checker.status.run import run_status
    from kreassign.checker.status.text import render

    snapshot = _snapshot(args)
    if version and snapshot.mode != "kraft":
        raise UsageError("--kafka-version: applies to KRaft clusters; this one runs in ZooKeeper mode")
    rules = rules_of(snapshot, version)
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            print(f"\ranalyzing reassignments: {done}/{total}", end="" if done < total else "\n", file=sys.stderr,
                  flush=True)

    result = run_status(snapshot, rules, search_states=args.search_states or LOCATE_STATES, progress=progress)
    if args.html:
        from kreassign.checker.report.html import status_report
        from kreassign.checker.report.write import write_text_atomically

        write_text_atomically(args.html, status_report(result), "--html")
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        print(render(result, details=not args.brief))
    return result.exit_code


__all__ = ["read_live", "register", "run"]
