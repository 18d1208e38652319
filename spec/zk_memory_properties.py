"""What a ZooKeeper controller remembers (issue 14, item 3), checked with `zk_versions = true`.

The `zk` controller keeps in memory what ZooKeeper also holds (the assignment, the cached leader
and ISR with their zkVersion) and what only it knows (the partitions being reassigned with their
targets, the queued work). A failover loses memory; the new controller rebuilds it from ZooKeeper
(KafkaController.onControllerFailover: initializeControllerContext, updateLeaderAndIsrCache,
initializePartitionReassignments). Sources: KIP-455 ("the latest reassignment wins", the znode
versus API precedence), Kafka 3.9 KafkaController / ControllerContext / KafkaZkClient.

The admin's intent is what the controller recorded when it accepted the request
(`partitionsBeingReassigned` and its target: a later request replaces it, a cancel's target is the
origin), read from the old controller on the failover edge. `failover_state_from_zookeeper` needs
to run the failover itself on a state stripped of memory: the model passes the reference's
failover in (`zk_memory_properties(failover)`), as spec/ may not import reference/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import ClusterState, ZkController

Failover = Callable[[ClusterState], ClusterState]


def _targets(zk: ZkController | None) -> dict[tuple[str, int], tuple[int, ...]]:
    return {(t, p): r for t, p, r in (zk.being_reassigned if zk is not None else ())}


def _is_failover(label) -> bool:
    return type(getattr(label, "action", label)).__name__ == "ControllerFailover"


def resumed_not_recorded(prev: ModelState, label, nxt: ModelState) -> list[tuple[str, int, tuple[int, ...]]]:
    """(topic, partition, target) of every reassignment the new controller resumes on a failover edge with a
    target other than the one the old controller had recorded as the admin's latest."""
    old = prev.cluster.zk
    if not _is_failover(label) or old is None or not old.active:
        return []
    after = getattr(label, "after", None) or nxt.cluster
    recorded = _targets(old)
    return [(t, p, r) for (t, p), r in sorted(_targets(after.zk).items()) if recorded.get((t, p)) != r]


def superseded_reassignment_never_resumed(prev: ModelState, label, nxt: ModelState) -> bool:
    """A new controller resumes only the reassignment the admin asked for last: never one that a later
    request superseded or a cancel withdrew, and never one that was not in flight."""
    return not resumed_not_recorded(prev, label, nxt)


def forget_memory(cluster: ClusterState) -> ClusterState:
    """The state as a newly elected controller finds it: ZooKeeper only. Memory, partitionsBeingReassigned,
    the queued work and the cached leadership are gone; the admin znode and the controller epoch are
    persisted in ZooKeeper."""
    zk = cluster.zk
    if zk is None:
        return cluster
    return replace(cluster, zk=ZkController(active=zk.active, epoch=zk.epoch, admin_znode=zk.admin_znode,
                                            leadership=None if zk.leadership is None else ()))


def failover_state_from_zookeeper(failover: Failover) -> Callable[..., bool]:
    def holds(prev: ModelState, label, nxt: ModelState) -> bool:
        """After a failover the controller's state is a function of what ZooKeeper holds: the failover run
        on the state stripped of the old controller's memory gives the same state."""
        if not _is_failover(label) or prev.cluster.zk is None:
            return True
        after = getattr(label, "after", None) or nxt.cluster
        return failover(forget_memory(prev.cluster)) == after

    holds.__name__ = "failover_state_from_zookeeper"
    return holds


def cache_disagreements(cluster: ClusterState) -> list[str]:
    """Where an idle, active controller's caches differ from ZooKeeper (empty: they agree, or work is queued)."""
    zk = cluster.zk
    if zk is None or not zk.active or zk.pending:
        return []
    out = []
    memory = {(t, p): (r, a, d) for t, p, r, a, d in zk.memory}
    cached = {(t, p): (ld, isr, behind) for t, p, ld, isr, behind in zk.leadership or ()}
    reassigning = {}
    for t, i, part in cluster.partitions():
        if memory.get((t, i)) != (part.replicas, part.adding, part.removing):
            out.append(f"{t}-{i}: assignment {memory.get((t, i))} in memory, "
                       f"{(part.replicas, part.adding, part.removing)} in ZooKeeper")
        if zk.leadership is not None and cached.get((t, i)) != (part.leader, part.isr, 0):
            out.append(f"{t}-{i}: leader/ISR/versions behind {cached.get((t, i))} cached, "
                       f"{(part.leader, part.isr, 0)} in ZooKeeper")
        if part.reassigning:
            reassigning[(t, i)] = part.target
    if _targets(zk) != reassigning:
        out.append(f"being reassigned {_targets(zk)} in memory, {reassigning} reassigning in ZooKeeper")
    return out


def controller_cache_agrees_with_zookeeper(ms: ModelState) -> bool:
    """Whenever the controller is idle (no write in flight, no notification unread), its caches agree with
    ZooKeeper: the assignment (with adding / removing), the cached leader, ISR and zkVersion, and the
    partitions being reassigned with their targets."""
    return not cache_disagreements(ms.cluster)


SOURCE = "KIP-455; KafkaController.onControllerFailover / initializePartitionReassignments (Kafka 3.9)"


def zk_memory_properties(failover: Failover) -> tuple[Property, ...]:
    """The properties of `zk_versions = true`; `failover` is the model's ControllerFailover step."""
    from_zk = failover_state_from_zookeeper(failover)
    return (
        Property.transition("superseded_reassignment_never_resumed", superseded_reassignment_never_resumed,
                            description=superseded_reassignment_never_resumed.__doc__,
                            source="KIP-455: the latest reassignment wins; " + SOURCE, promised_by=()),
        Property.transition("failover_state_from_zookeeper", from_zk, description=from_zk.__doc__,
                            source=SOURCE, promised_by=("zk",)),
        Property.always("controller_cache_agrees_with_zookeeper", controller_cache_agrees_with_zookeeper,
                        description=controller_cache_agrees_with_zookeeper.__doc__,
                        source="ControllerContext, KafkaZkClient.updateLeaderAndIsr, processIsrChangeNotification "
                        "(Kafka 3.9)", promised_by=("zk",)),
    )


ZK_MEMORY_PROPERTY_NAMES = ("superseded_reassignment_never_resumed", "failover_state_from_zookeeper",
                            "controller_cache_agrees_with_zookeeper")

__all__ = [
    "ZK_MEMORY_PROPERTY_NAMES",
    "cache_disagreements",
    "controller_cache_agrees_with_zookeeper",
    "failover_state_from_zookeeper",
    "forget_memory",
    "resumed_not_recorded",
    "superseded_reassignment_never_resumed",
    "zk_memory_properties",
]
