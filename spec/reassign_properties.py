"""What must hold of reassignment: the model state with its ghost variables, and the properties.

The explorer's state is a `ModelState`: the cluster, one `Ghost` per partition (what
the admin asked for, which the cluster itself does not remember), and the budget of
admin requests, failures and failovers still allowed. Ghosts are written by the model
from each action and its response; properties read them.

Each property names its source and the profiles that promise it: a profile promises a
property when its algorithm keeps it at every bound. For every other property the profile
declares *findings* (spec/findings.py): the named ways it breaks it, each with a signature
that recognises it; a violation no signature matches is unexpected. Where Kafka keeps only a
weaker guarantee than a generic property, the weaker one is a property of its own here
(`reassignment_can_finish_in_sync` beside `reassignment_can_finish`).
"""

from __future__ import annotations

from typing import NamedTuple

from kreassign.spec.properties import Property
from kreassign.spec.state import NO_LEADER, ClusterState

ALL = ("kraft", "kraft-3.7", "zk", "kip455", "kip236")


class Ghost(NamedTuple):
    """Per-partition bookkeeping of the admin's intent (not part of Kafka's state)."""

    original: tuple[int, ...] | None = None  # replicas when the current reassignment began (None: idle)
    requested: tuple[int, ...] | None = None  # the latest accepted target (None after a cancel)
    cancelled: bool = False  # a cancel was accepted and the partition has not settled yet


class ModelState(NamedTuple):
    cluster: ClusterState
    ghosts: tuple[Ghost, ...]  # one per partition, in ClusterState.partitions() order
    budget: tuple[int, ...]  # (reassign requests, cancels, failures, failovers) left


class Ending(NamedTuple):
    """A reassignment that ended on an edge: how, and the ghost it had."""

    index: int  # partition index in ClusterState.partitions() order
    kind: str  # "completed" or "cancelled"
    original: tuple[int, ...]
    requested: tuple[int, ...] | None


class Transition(NamedTuple):
    """The action of an edge, labelled with the reassignments that ended on it (for the properties)."""

    action: object
    response: object = None
    endings: tuple[Ending, ...] = ()
    after: ClusterState | None = None  # the successor before the explorer renamed its epochs

    def __str__(self) -> str:
        return str(self.action)


def _parts(ms: ModelState):
    for (t, i, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        yield t, i, p, g


# -- state invariants -------------------------------------------------------------------------------


def target_in_replicas(ms: ModelState) -> bool:
    """While a reassignment is in flight, its requested target replicas are all assigned."""
    return all(g.requested is None or not p.reassigning or set(g.requested) <= set(p.replicas) for _, _, p, g in _parts(ms))


def original_in_replicas(ms: ModelState) -> bool:
    """While a reassignment is in flight, the original replicas are all still assigned (none dropped early)."""
    return all(g.original is None or not p.reassigning or set(g.original) <= set(p.replicas) for _, _, p, g in _parts(ms))


def adding_removing_disjoint(ms: ModelState) -> bool:
    """No replica is both being added and being removed."""
    return all(not set(p.adding) & set(p.removing) for _, _, p, _ in _parts(ms))


def isr_in_replicas(ms: ModelState) -> bool:
    """Every in-sync replica is an assigned replica (ISR ⊆ replicas, seed 004)."""
    return all(set(p.isr) <= set(p.replicas) for _, _, p, _ in _parts(ms))


def leader_in_isr(ms: ModelState) -> bool:
    """A partition's leader is in its ISR, or there is no leader (seed 004)."""
    return all(p.leader == NO_LEADER or p.leader in p.isr for _, _, p, _ in _parts(ms))


def isr_non_empty(ms: ModelState) -> bool:
    """The ISR is never empty (KRaft without ELR never writes an empty ISR; ZK keeps the last member); under
    ELR (KIP-966) an empty ISR is written instead, only for a leaderless partition whose eligible leader
    replicas or last known leader name a broker that may lead it again."""
    return all(len(p.isr) > 0 or (p.leader == NO_LEADER and (p.elr or any(b != NO_LEADER for b in p.last_known_elr)))
               for _, _, p, _ in _parts(ms))


def replication_factor_bounded(ms: ModelState) -> bool:
    """While in flight, the replica list is no larger than original ∪ requested target."""
    for _, _, p, g in _parts(ms):
        if g.original is not None and g.requested is not None and p.reassigning:
            if len(p.replicas) > len(set(g.original) | set(g.requested)):
                return False
    return True


def committed_records_kept(ms: ModelState) -> bool:
    """With the replication layer: no record at or below a high watermark is ever lost (seed 004)."""
    for _, _, p, _ in _parts(ms):
        if p.log is not None and p.leader != NO_LEADER:
            committed = p.log.committed
            if p.log.log_of(p.leader)[: len(committed)] != committed:
                return False
    return True


# -- transition properties --------------------------------------------------------------------------


def epochs_monotone(prev: ModelState, action, nxt: ModelState) -> bool:
    """Leader and partition epochs never go back, every change of a partition's leader or ISR moves its
    partition epoch forward, and every change of leader moves its leader epoch forward (fencing by
    KIP-101 / KIP-320 relies on it).

    The explorer renames epochs (normalize_epochs in checker/models/reassign.py), so the stored
    predecessor's epochs are not Kafka's; the step was applied to that renamed predecessor, so its
    epochs and the un-renamed successor (`Transition.after`) are in one frame, and "moves forward" is
    checked there. Comparing the renamed successor instead would be vacuous (both 0 without logs).
    """
    after = getattr(action, "after", None)
    if after is None:  # no un-renamed successor: only "never goes back" can be checked
        after = nxt.cluster
    for (_, _, p), (_, _, q) in zip(prev.cluster.partitions(), after.partitions()):
        if q.leader_epoch < p.leader_epoch or q.partition_epoch < p.partition_epoch:
            return False
        if (q.leader, q.isr) != (p.leader, p.isr) and q.partition_epoch == p.partition_epoch:
            return False
        if q.leader != p.leader and q.leader_epoch == p.leader_epoch:
            return False
    return True


def _endings(action, nxt: ModelState) -> list:
    """(ending, partition after the edge) for every reassignment that ended on this edge."""
    endings = getattr(action, "endings", ())
    if not endings:  # most edges end nothing (a list, not a generator: this is asked on every edge)
        return []
    parts = list(nxt.cluster.partitions())
    return [(e, parts[e.index][2]) for e in endings]


def completion_reaches_target(prev: ModelState, action, nxt: ModelState) -> bool:
    """A completed reassignment leaves exactly the requested replicas, all in the ISR (KIP-455)."""
    for e, q in _endings(action, nxt):
        if e.kind == "completed" and e.requested is not None:
            if set(q.replicas) != set(e.requested) or not set(e.requested) <= set(q.isr):
                return False
    return True


def cancel_restores_original_replicas(prev: ModelState, action, nxt: ModelState) -> bool:
    """A cancelled reassignment leaves exactly the original replica set (KIP-455 cancellation, KIP-236)."""
    return all(set(q.replicas) == set(e.original) for e, q in _endings(action, nxt) if e.kind == "cancelled")


def cancel_restores_original_order(prev: ModelState, action, nxt: ModelState) -> bool:
    """A cancelled reassignment restores the original list in its original order (KIP-236 rollback)."""
    return all(q.replicas == e.original for e, q in _endings(action, nxt) if e.kind == "cancelled")


def replication_factor_restored(prev: ModelState, action, nxt: ModelState) -> bool:
    """When a reassignment ends, the replication factor is the intended one: the target's after a
    completion, the original's after a cancel."""
    for e, q in _endings(action, nxt):
        intended = e.original if e.kind == "cancelled" or e.requested is None else e.requested
        if len(q.replicas) != len(intended):
            return False
    return True


ADMIN_ACTIONS = ("Reassign", "Cancel", "AlterReassignments", "ControllerStep", "ZnodeReassign", "CancelAll",
                 "ToolExecute", "ToolCancel")


def admin_action_keeps_a_leader(prev: ModelState, action, nxt: ModelState) -> bool:
    """No admin action (or controller step it triggers) leaves a partition leaderless while a live
    in-sync replica exists."""
    if type(getattr(action, "action", action)).__name__ not in ADMIN_ACTIONS:
        return True
    for (_, _, p), (_, _, q) in zip(prev.cluster.partitions(), nxt.cluster.partitions()):
        if q.leader == NO_LEADER and p.leader != NO_LEADER:
            if any(nxt.cluster.is_active(b) for b in q.isr if b in q.replicas):
                return False
    return True


def cancel_rejected_cleanly(prev: ModelState, action, nxt: ModelState) -> bool:
    """A cancel that is answered with an error changes nothing (it reverts cleanly or not at all)."""
    act = getattr(action, "action", action)
    if type(act).__name__ != "Cancel":
        return True
    response = getattr(action, "response", None)
    try:
        code = response.partition_error(act.topic, act.partition)[0]
    except (AttributeError, KeyError):
        return True
    # the un-renamed successor: a rejected cancel that only bumped an epoch changed something too
    after = getattr(action, "after", None) or nxt.cluster
    return code == 0 or prev.cluster == after


def reassignment_finished(ms: ModelState) -> bool:
    """Goal of the liveness check: no reassignment is in flight."""
    return all(g.original is None for g in ms.ghosts)


def targets_live_and_in_sync(ms: ModelState) -> bool:
    """Every in-flight reassignment's target (the original, once cancelled) is live and in the ISR."""
    for (_, _, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        if g.original is not None:
            target = g.requested if g.requested is not None else g.original
            if not all(b in p.isr and ms.cluster.is_active(b) for b in target):
                return False
    return True


PROPERTIES: tuple[Property, ...] = (
    Property.always("target_in_replicas", target_in_replicas, description=target_in_replicas.__doc__,
                    source="KIP-455: R = original + target while reassigning", promised_by=ALL),
    Property.always("original_in_replicas", original_in_replicas, description=original_in_replicas.__doc__,
                    source="KIP-455 / KRaft PartitionReassignmentReplicas", promised_by=("kraft", "kraft-3.7", "zk", "kip455")),
    Property.always("adding_removing_disjoint", adding_removing_disjoint, description=adding_removing_disjoint.__doc__,
                    source="KIP-455: AR = target − R, RR = R − target", promised_by=("zk", "kip455")),
    Property.always("isr_in_replicas", isr_in_replicas, description=isr_in_replicas.__doc__,
                    source="seed 004 (replication design)", promised_by=("kraft", "kraft-3.7")),
    Property.always("leader_in_isr", leader_in_isr, description=leader_in_isr.__doc__,
                    source="seed 004 (replication design)", promised_by=ALL),
    Property.always("isr_non_empty", isr_non_empty, description=isr_non_empty.__doc__,
                    source="KRaft PartitionChangeBuilder; ZK removeReplicasFromIsr", promised_by=ALL),
    Property.always("replication_factor_bounded", replication_factor_bounded,
                    description=replication_factor_bounded.__doc__, source="KIP-455", promised_by=("zk",)),
    Property.always("committed_records_kept", committed_records_kept, description=committed_records_kept.__doc__,
                    source="seed 004: the high watermark", promised_by=()),  # unclean election: a finding
    Property.transition("epochs_monotone", epochs_monotone, description=epochs_monotone.__doc__,
                        source="KIP-101, KIP-320", promised_by=ALL),
    Property.transition("completion_reaches_target", completion_reaches_target,
                        description=completion_reaches_target.__doc__, source="KIP-455, KAFKA-15665; KAFKA-19975 (4.3)",
                        promised_by=("kraft<4.3", "zk")),
    Property.transition("cancel_restores_original_replicas", cancel_restores_original_replicas,
                        description=cancel_restores_original_replicas.__doc__, source="KIP-455, KIP-236",
                        promised_by=("zk", "kip236")),
    Property.transition("cancel_restores_original_order", cancel_restores_original_order,
                        description=cancel_restores_original_order.__doc__, source="KIP-236 rollback",
                        promised_by=("kip236",)),
    Property.transition("replication_factor_restored", replication_factor_restored,
                        description=replication_factor_restored.__doc__, source="KIP-455", promised_by=("zk", "kip236")),
    Property.transition("admin_action_keeps_a_leader", admin_action_keeps_a_leader,
                        description=admin_action_keeps_a_leader.__doc__, source="KIP-455, KRaft revert",
                        promised_by=("kraft", "kraft-3.7", "kip455", "kip236")),
    Property.transition("cancel_rejected_cleanly", cancel_rejected_cleanly,
                        description=cancel_rejected_cleanly.__doc__, source="KIP-455 error codes", promised_by=ALL),
    Property.eventually("reassignment_can_finish", reassignment_finished,
                        description="From every reachable state, under the fairness that live target replicas "
                        "eventually catch up, a state with no reassignment in flight stays reachable.",
                        source="KIP-455", promised_by=("kraft<4.3",)),
    Property.eventually("reassignment_can_finish_in_sync", reassignment_finished,
                        description="From every reachable state in which every in-flight reassignment's target "
                        "replicas are live and in the ISR, a state with no reassignment in flight stays reachable "
                        "(the weaker guarantee: Kafka completes once the target has caught up).",
                        source="KIP-455; KRaft isReassignmentComplete; ZK onPartitionReassignment",
                        promised_by=("kraft<4.3", "zk", "kip455", "kip236"),
                        extra={"from": targets_live_and_in_sync}),
)
