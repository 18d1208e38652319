"""The bound flags on the command line (`--brokers`, `--rf`, `--targets` ...), shared by
`check` and `fuzz`: `add_bound_arguments` declares them, `bound_overrides` reads them back
as the mapping `bounds_from_mapping` takes (the TOML form is in bounds.py).
"""

from __future__ import annotations

import argparse
from typing import Any

from kreassign.checker.config.bounds import ConfigError

BOUND_FLAGS = ("brokers", "partitions", "rf", "reassigns", "cancels", "failures", "failovers", "log_length",
               "create_partitions", "min_insync")
#: switches of the issue-14 capabilities (bounds.py documents them)
CAPABILITY_SWITCHES = ("broker_view", "throttles", "fair", "broker_replicas", "leader_balance", "delete_topic",
                       "zk_versions", "znode_batch", "zk_events", "broker_isr")


def add_bound_arguments(parser: argparse.ArgumentParser) -> None:
    """The bound flags shared by `check` and `fuzz` (read back by `bound_overrides`)."""
    for name in BOUND_FLAGS:
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, dest=name, metavar="N")
    parser.add_argument("--targets", help='"all" RF-subsets, "permutations", or replica lists like "1,2;3,4"')
    parser.add_argument("--initial", help='initial replicas per partition, like "1,2;2,3"')
    parser.add_argument("--elections", help="comma-separated: PREFERRED,UNCLEAN")
    parser.add_argument("--unclean", action="store_true", default=None, help="the topic allows unclean elections")
    parser.add_argument("--replication", action="store_true", default=None, help="switch on the replication layer")
    parser.add_argument("--znode", action="store_true", default=None, help="zk/kip236: the /admin/reassign_partitions route")
    parser.add_argument("--no-isr-changes", action="store_true", help="leaders never change the ISR")
    parser.add_argument("--broker-view", action="store_true", default=None,
                        help="check the brokers' own view (under-replicated partitions)")
    parser.add_argument("--throttles", action="store_true", default=None,
                        help="move replicas with kafka-reassign-partitions.sh --throttle; check the throttles")
    parser.add_argument("--fair", action="store_true", default=None,
                        help="liveness under weak fairness, brokers may stay down (lasso counterexamples)")
    parser.add_argument("--broker-replicas", action="store_true", default=None,
                        help="the logs brokers host, as they act on the metadata they replay")
    parser.add_argument("--leader-balance", action="store_true", default=None,
                        help="the controller's periodic preferred-leader balancing (auto.leader.rebalance.enable)")
    parser.add_argument("--zk-versions", action="store_true", default=None,
                        help="zk: the controller's cached leader/ISR with zkVersions; check what the controller remembers")
    parser.add_argument("--znode-batch", action="store_true", default=None,
                        help="zk: /admin/reassign_partitions batches and the forced cancel (delete it, bounce the "
                        "controller); needs --znode and --partitions >= 2")
    parser.add_argument("--zk-events", action="store_true", default=None,
                        help="zk: the controller's identity (resign / elect, from the failovers budget) and its "
                        "event queue (with --zk-versions, ISR notifications wait behind the run)")
    parser.add_argument("--broker-isr", action="store_true", default=None,
                        help="kraft/zk: the leaders' ISR maintenance (fetches, lag, expiry, AlterPartition in flight; "
                        "turns on --replication; with --broker-replicas, the followers' fetchers)")
    parser.add_argument("--delete-topic", action="store_true", default=None,
                        help="the admin may delete the topic during a reassignment (zk: deferred until it ends)")
    parser.add_argument("--elr", choices=("on", "off"),
                        help="kraft: eligible leader replicas (KIP-966; default: what the Kafka release formats a new "
                        "cluster with, on from 4.1)")
    parser.add_argument("--actors", metavar="A,B",
                        help="tools and automation acting beside the controller: rebalancer, auto-throttler, "
                        "second-operator (these two need --throttles), bad-plans")
    parser.add_argument("--kraft-actions", metavar="A,B",
                        help="kraft: also explore the controller's own actions: controlled-shutdown, restart, "
                        "balance-leaders, elect-unclean (docs/kafka.md)")


def _lists(text: str, flag: str) -> list[list[int]]:
    try:
        return [[int(b) for b in part.split(",")] for part in text.split(";") if part.strip()]
    except ValueError:
        raise ConfigError(f"--{flag}: expected broker ids like \"1,2;3,4\", got {text!r}") from None


def bound_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {k: getattr(args, k) for k in BOUND_FLAGS if getattr(args, k) is not None}
    if args.targets is not None:
        out["targets"] = args.targets if args.targets in ("all", "permutations") else _lists(args.targets, "targets")
    if args.initial is not None:
        out["initial"] = _lists(args.initial, "initial")
    if args.elections is not None:
        out["elections"] = [e.strip() for e in args.elections.split(",") if e.strip()]
    if getattr(args, "elr", None):
        out["elr"] = args.elr
    if getattr(args, "kafka_version", None):  # declared with the Kafka flags (checker/oracle/kafka_flags.py)
        from kreassign.spec.kafka_releases import parse_version

        try:
            out["kafka_version"] = parse_version(args.kafka_version)
        except ValueError as e:
            raise ConfigError(f"--kafka-version: {e}") from None
    if getattr(args, "actors", None):
        out["actors"] = [a.strip() for a in args.actors.split(",") if a.strip()]
    if getattr(args, "kraft_actions", None):
        out["kraft_actions"] = [a.strip() for a in args.kraft_actions.split(",") if a.strip()]
    for flag in ("unclean", "replication", "znode") + CAPABILITY_SWITCHES:
        if getattr(args, flag):
            out[flag] = True
    if args.no_isr_changes:
        out["isr_changes"] = False
    return out


