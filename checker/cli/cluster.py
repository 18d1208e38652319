"""`kreassign cluster start|fetch`: a real Kafka cluster on this machine, from a released Kafka
(docs/cluster.md).

    kreassign cluster fetch 4.4.0 3.9.2           # the brokers' jars, by Maven (once; start does it too)
    kreassign cluster start                       # the newest release, KRaft, 1 controller, 3 brokers
    kreassign cluster start --kafka-version 3.9.2 --mode zk --brokers 4 --json

`start` prints the bootstrap address and the nodes (one JSON line with --json) once every broker is registered
and unfenced, and keeps the cluster up until Ctrl-C (or SIGTERM), which kills every JVM and removes its
directory: exit 0. Exit codes (kreassign/errors.py): 2 a bad flag (named), 3 Maven, Java or a cluster that
cannot start (the message says what did not happen and ends with the log that says why), 130 Ctrl-C before the
cluster was up (nothing is left either).
"""

from __future__ import annotations

import argparse
import json
import signal
import time

from kreassign.errors import UsageError
from kreassign.flag_values import integer, say, seconds
from kreassign.interrupts import reliable_ctrl_c

#: ClusterSpec's fields -> the flags that set them (a bad value is reported by its flag)
FLAGS = {"version": "--kafka-version", "mode": "--mode", "controllers": "--controllers",
         "brokers": "--brokers", "metadata_version": "--metadata-version", "elr": "--elr",
         "session_timeout_ms": "--session-timeout-ms", "broker_config": "--broker-config",
         "heap_mb": "--heap-mb", "start_timeout_s": "--start-timeout"}


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="cluster_command", metavar="ACTION")
    start = sub.add_parser("start", help="start a cluster and keep it up until Ctrl-C",
                           description="Start a Kafka cluster from a released Kafka (each node its own JVM, "
                           "every listener on 127.0.0.1) and keep it up until Ctrl-C, which removes "
                           "everything.")
    start.add_argument("--kafka-version", metavar="V", help="the release (default: the newest supported)")
    start.add_argument("--mode", default="kraft", metavar="kraft|zk",
                       help="KRaft (default) or ZooKeeper (3.9 only)")
    start.add_argument("--controllers", type=integer("--controllers"), default=1, metavar="N",
                       help="KRaft controllers: 1 (default) or 3")
    start.add_argument("--brokers", type=integer("--brokers"), default=3, metavar="N",
                       help="brokers: 3 (default) to 6")
    start.add_argument("--metadata-version", metavar="MV", help="KRaft: format with this metadata.version")
    start.add_argument("--elr", metavar="on|off", help="KRaft 4.x: eligible leader replicas at format")
    start.add_argument("--session-timeout-ms", type=integer("--session-timeout-ms"), default=6000, metavar="MS",
                       help="broker session timeout (KRaft) or ZooKeeper session timeout (zk): default 6000")
    start.add_argument("--broker-config", action="append", default=[], metavar="KEY=VALUE",
                       help="an extra server.properties setting of every broker (repeatable)")
    start.add_argument("--heap-mb", type=integer("--heap-mb"), default=256, metavar="MB",
                       help="each JVM's -Xmx (256)")
    start.add_argument("--start-timeout", type=seconds("--start-timeout"), default=120.0, metavar="S",
                       help="seconds to wait for the cluster to be up (120)")
    start.add_argument("--json", action="store_true", help="one JSON line: bootstrap, nodes, directory")
    start.set_defaults(func=run_start)
    fetch = sub.add_parser("fetch", help="resolve brokers' jars with Maven into the cache",
                           description="Resolve a broker's jars (org.apache.kafka:kafka_2.13 and its "
                           "dependencies) of Kafka releases with Maven (the user's own Maven configuration) "
                           "into the per-user cache.")
    fetch.add_argument("versions", nargs="*", metavar="VERSION", help="releases, e.g. 4.4.0 3.9.2")
    fetch.add_argument("--all", action="store_true", help="every supported release")
    fetch.add_argument("--force", action="store_true", help="resolve again even if cached")
    fetch.add_argument("--json", action="store_true", help="machine-readable output")
    fetch.set_defaults(func=run_fetch)
    parser.set_defaults(func=_usage)


def _usage(args: argparse.Namespace) -> int:
    raise UsageError("expected an action: start [--kafka-version V ...] | fetch VERSION... | fetch --all")


def spec_from_args(args: argparse.Namespace):
    """The ClusterSpec the flags ask for; a bad value is a UsageError naming its flag."""
    from kreassign.checker.cluster import ClusterSpec, ClusterSpecError
    from kreassign.spec import kafka_releases

    elr = None
    if args.elr is not None:
        if args.elr not in ("on", "off"):
            raise UsageError(f"--elr: on or off, not {args.elr!r}")
        elr = args.elr == "on"
    settings = []
    for item in args.broker_config:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--broker-config: expected KEY=VALUE, got {item!r}")
        settings.append((key.strip(), value))
    try:
        return ClusterSpec(version=args.kafka_version or kafka_releases.NEWEST, mode=args.mode,
                           controllers=args.controllers, brokers=args.brokers,
                           metadata_version=args.metadata_version, elr=elr,
                           session_timeout_ms=args.session_timeout_ms, broker_config=tuple(settings),
                           heap_mb=args.heap_mb, start_timeout_s=args.start_timeout)
    except ClusterSpecError as e:
        raise UsageError(f"{FLAGS.get(e.field, e.field)}: {str(e).split(': ', 1)[1]}") from None


def run_start(args: argparse.Namespace) -> int:
    from kreassign.checker.cluster import start_cluster

    spec = spec_from_args(args)

    def terminate(_signum, _frame):
        raise KeyboardInterrupt  # SIGTERM / SIGHUP end the cluster like Ctrl-C

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, terminate)
    with reliable_ctrl_c():  # a Ctrl-C landing in a gc callback is delivered again, not lost
        return _run(args, spec, start_cluster)


def _run(args: argparse.Namespace, spec, start_cluster) -> int:
    cluster = start_cluster(spec, log=say)  # Ctrl-C here: cleaned up, then exit 130
    with cluster:
        try:  # from here on Ctrl-C is the way to stop the cluster: exit 0
            info = {"kafka_version": spec.version, "mode": spec.mode, "cluster_id": cluster.cluster_id,
                    "bootstrap": cluster.bootstrap, "active_controller": cluster.active_controller(),
                    "directory": str(cluster.directory), "started_in_s": round(cluster.started_in_s or 0, 1),
                    "nodes": [n.to_json() for n in cluster.nodes]}
            if args.json:
                print(json.dumps(info), flush=True)
            else:
                _print_cluster(info)
            _watch(cluster)
        except KeyboardInterrupt:
            say("cluster: stopping (Ctrl-C)")
    return 0


def _print_cluster(info: dict) -> None:
    from tabulate import tabulate

    print(f"bootstrap: {info['bootstrap']}")
    print(tabulate([[n["name"], n["role"], n["id"] if n["id"] is not None else "", f"{n['host']}:{n['port']}",
                     n["pid"]] for n in info["nodes"]], headers=["node", "role", "id", "address", "pid"]))
    print(f"active controller: {info['active_controller']}; cluster id {info['cluster_id']}; "
          f"directory {info['directory']} (removed at exit)")
    print("Ctrl-C stops the cluster and removes everything.", flush=True)


def _watch(cluster) -> None:
    """Until Ctrl-C: say once when a node ends on its own (someone killed it, or it crashed)."""
    reported: set[str] = set()
    while True:
        for n in cluster.nodes:
            if n.state == "exited" and n.name not in reported:
                reported.add(n.name)
                say(f"cluster: {n.name} has exited (see {cluster.directory}/{n.name}/logs/server.log)")
        time.sleep(1.0)


def run_fetch(args: argparse.Namespace) -> int:
    from kreassign.checker.implementations.kafka import releases

    versions = releases.requested_versions(args.versions, args.all)
    done = []
    for v in versions:
        was_cached = releases.cached(v, "broker") is not None and not args.force
        got = releases.fetch(v, force=args.force, log=say, kind="broker")
        done.append({"version": v, "lib": str(got.lib), "jars": len(got.jars), "was_cached": was_cached})
    if args.json:
        print(json.dumps({"releases": done}, indent=1))
    else:
        for d in done:
            cached = " (cached)" if d["was_cached"] else ""
            print(f"Kafka {d['version']} broker: {d['jars']} jars in {d['lib']}{cached}")
    return 0


__all__ = ["FLAGS", "register", "run_fetch", "run_start", "spec_from_args"]
