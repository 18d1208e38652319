"""What a running cluster is asked during a scenario: the named wait conditions (each returns None once it
holds, or what is still missing, for `Cluster.wait_for`), and one observation of the scenario's topic.

In ZooKeeper mode a broker is "fenced" once its ephemeral /brokers/ids znode is gone (its session expired, or it
shut down) and the brokers' metadata no longer lists it; the controller is the broker in /controller, as
DescribeCluster reports it; the observation adds what ZooKeeper holds (znodes.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kreassign.checker.cluster import Cluster

from . import znodes
from .format import Wait


def observe(cluster: Cluster, topic: str) -> dict[str, Any]:
    """The topic as the cluster reports it: per partition replicas, isr (sorted: a set), leader, elr (sorted),
    adding and removing (from ListPartitionReassignments; empty when none is listed); the registered,
    unfenced brokers; the active controller."""
    described = cluster.admin.describe_topics([topic])[topic]["partitions"]
    listed = {r["partition"]: r for r in cluster.admin.list_reassignments() if r["topic"] == topic}
    parts = {}
    for p in described:
        r = listed.get(p["partition"])
        parts[str(p["partition"])] = {
            "replicas": list(p["replicas"]), "isr": sorted(p["isr"]),
            "leader": p["leader"], "adding": sorted(r["adding"]) if r else [],
            "removing": sorted(r["removing"]) if r else [], "elr": sorted(p["elr"]),
        }
    if cluster.spec.mode == "zk":
        return {"partitions": parts, "brokers": sorted(cluster.admin.broker_ids()),
                "controller": cluster.admin.describe_cluster()["controller"],
                "znodes": znodes.observe(cluster, topic, sorted(int(p) for p in parts))}
    return {"partitions": parts, "brokers": sorted(cluster.admin.broker_ids()),
            "controller": cluster.admin.quorum()["leader"]}


def check_of(cluster: Cluster, topic: str, wait: Wait) -> Callable[[], str | None]:
    """The wait as a condition: None once it holds, else what is missing."""
    admin = cluster.admin

    def partition() -> dict[str, Any]:
        for p in admin.describe_topics([topic])[topic]["partitions"]:
            if p["partition"] == wait.partition:
                return p
        raise KeyError(wait.partition)

    def listed() -> bool:
        return any(r["topic"] == topic and r["partition"] == wait.partition for r in admin.list_reassignments())

    if wait.until == "reassignment_done":
        return lambda: f"{topic}-{wait.partition} still listed as reassigning" if listed() else None
    if wait.until == "reassignment_listed":
        return lambda: None if listed() else f"no reassignment of {topic}-{wait.partition} listed"
    if wait.until == "isr_size":
        def isr_size() -> str | None:
            isr = partition()["isr"]
            low = wait.at_least is not None and len(isr) < wait.at_least
            high = wait.at_most is not None and len(isr) > wait.at_most
            return f"ISR of {topic}-{wait.partition} is {isr}" if low or high else None
        return isr_size
    if wait.until == "broker_fenced" and cluster.spec.mode == "zk":
        return lambda: (f"broker-{wait.broker}'s /brokers/ids znode is still there"
                        if znodes.registered(cluster, wait.broker) else
                        f"broker-{wait.broker} still in the brokers' metadata"
                        if wait.broker in admin.broker_ids() else None)
    if wait.until == "broker_registered" and cluster.spec.mode == "zk":
        return lambda: (f"broker-{wait.broker} has no /brokers/ids znode"
                        if not znodes.registered(cluster, wait.broker) else None
                        if wait.broker in admin.broker_ids() else
                        f"broker-{wait.broker} not yet in the brokers' metadata")
    if wait.until == "controller_active" and cluster.spec.mode == "zk":
        return lambda: None if admin.describe_cluster()["controller"] is not None else "no controller broker"
    if wait.until == "broker_fenced":
        return lambda: (f"broker-{wait.broker} still registered and unfenced"
                        if wait.broker in admin.broker_ids() else None)
    if wait.until == "broker_registered":
        return lambda: (None if wait.broker in admin.broker_ids()
                        else f"broker-{wait.broker} not registered and unfenced")
    if wait.until == "controller_active":
        return lambda: None if admin.quorum()["leader"] in cluster.controllers else "no quorum leader"
    raise ValueError(f"unknown condition {wait.until!r}")


__all__ = ["check_of", "observe"]
