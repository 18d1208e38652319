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

from kreassign.spec.messages import NONE
from kreassign.spec.per_partition import (
    ENDINGS,
    EVERY_EDGE,
    EdgeScope,
    PartitionEdge,
    every_edge,
    every_partition,
    request_code,
)
from kreassign.spec.properties import Property
from kreassign.spec.state import NO_LEADER, ClusterState, Partition

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


# -- state invariants -------------------------------------------------------------------------------
# Each is defined on one partition and its ghost (`<name>_at`), with its array form over
# spec/partition_masks.StateMasks (`_<name>_masks`); the cluster-wide predicate is derived
# (spec/per_partition.py).


def target_in_replicas_at(p: Partition, g: Ghost) -> bool:
    """While a reassignment is in flight, its requested target replicas are all assigned."""
    return g.requested is None or not p.reassigning or set(g.requested) <= set(p.replicas)


def _target_in_replicas_masks(m):
    return ~m.has_requested | ~m.reassigning | ((m.requested & ~m.replicas) == 0)


target_in_replicas = every_partition(target_in_replicas_at, _target_in_replicas_masks)


def original_in_replicas_at(p: Partition, g: Ghost) -> bool:
    """While a reassignment is in flight, the original replicas are all still assigned (none dropped early)."""
    return g.original is None or not p.reassigning or set(g.original) <= set(p.replicas)


def _original_in_replicas_masks(m):
    return ~m.has_original | ~m.reassigning | ((m.original & ~m.replicas) == 0)


original_in_replicas = every_partition(original_in_replicas_at, _original_in_replicas_masks)


def adding_removing_disjoint_at(p: Partition, g: Ghost) -> bool:
    """No replica is both being added and being removed."""
    return not set(p.adding) & set(p.removing)


def _adding_removing_disjoint_masks(m):
    return (m.adding & m.removing) == 0


adding_removing_disjoint = every_partition(adding_removing_disjoint_at, _adding_removing_disjoint_masks)


def isr_in_replicas_at(p: Partition, g: Ghost) -> bool:
    """Every in-sync replica is an assigned replica (ISR ⊆ replicas, seed 004)."""
    return set(p.isr) <= set(p.replicas)


def _isr_in_replicas_masks(m):
    return (m.isr & ~m.replicas) == 0


isr_in_replicas = every_partition(isr_in_replicas_at, _isr_in_replicas_masks)


def leader_in_isr_at(p: Partition, g: Ghost) -> bool:
    """A partition's leader is in its ISR, or there is no leader (seed 004)."""
    return p.leader == NO_LEADER or p.leader in p.isr


def _leader_in_isr_masks(m):
    return (m.leader == NO_LEADER) | m.has(m.isr, m.leader)


leader_in_isr = every_partition(leader_in_isr_at, _leader_in_isr_masks)


def isr_non_empty_at(p: Partition, g: Ghost) -> bool:
    """The ISR is never empty (KRaft without ELR never writes an empty ISR; ZK keeps the last member); under
    ELR (KIP-966) an empty ISR is written instead, only for a leaderless partition whose eligible leader
    replicas or last known leader name a broker that may lead it again."""
    return len(p.isr) > 0 or (p.leader == NO_LEADER
                              and (bool(p.elr) or any(b != NO_LEADER for b in p.last_known_elr)))


def _isr_non_empty_masks(m):
    return (m.isr != 0) | ((m.leader == NO_LEADER) & ((m.elr != 0) | m.last_known_leader))


isr_non_empty = every_partition(isr_non_empty_at, _isr_non_empty_masks)


def replication_factor_bounded_at(p: Partition, g: Ghost) -> bool:
    """While in flight, the replica list is no larger than original ∪ requested target."""
    if g.original is not None and g.requested is not None and p.reassigning:
        return len(p.replicas) <= len(set(g.original) | set(g.requested))
    return True


def _replication_factor_bounded_masks(m):
    return (~(m.has_original & m.has_requested & m.reassigning)
            | (m.replica_count <= m.count(m.original | m.requested)))


replication_factor_bounded = every_partition(replication_factor_bounded_at, _replication_factor_bounded_masks)


def committed_records_kept_at(p: Partition, g: Ghost) -> bool:
    """With the replication layer: no record at or below a high watermark is ever lost (seed 004)."""
    if p.log is not None and p.leader != NO_LEADER:
        committed = p.log.committed
        return p.log.log_of(p.leader)[: len(committed)] == committed
    return True


# no array form: the view holds no log (and without the replication layer the property is not checked)
committed_records_kept = every_partition(committed_records_kept_at)


# -- transition properties --------------------------------------------------------------------------
# Each is defined on one partition's part of an edge (`<name>_at(edge)`, a spec/per_partition.PartitionEdge)
# within its scope, with its array form over spec/partition_masks.EdgeMasks.


def epochs_monotone_at(e: PartitionEdge) -> bool:
    """Leader and partition epochs never go back, every change of a partition's leader or ISR moves its
    partition epoch forward, and every change of leader moves its leader epoch forward (fencing by
    KIP-101 / KIP-320 relies on it).

    The explorer renames epochs (normalize_epochs in checker/models/reassign.py), so the stored
    predecessor's epochs are not Kafka's; the step was applied to that renamed predecessor, so its
    epochs and the un-renamed successor (`Transition.after`) are in one frame, and "moves forward" is
    checked there. Comparing the renamed successor instead would be vacuous (both 0 without logs).
    """
    p, leader_step, partition_step = e.before, e.leader_epoch_step, e.partition_epoch_step
    if leader_step < 0 or partition_step < 0:
        return False
    leader_moved = e.leader != p.leader
    if partition_step == 0 and (leader_moved or e.isr != p.isr):
        return False
    return not (leader_moved and leader_step == 0)


def _epochs_monotone_masks(m):
    leader_moved = m.leader != m.before_leader
    moved = leader_moved | (m.isr != m.before_isr).any(1)
    return ((m.leader_epoch_step >= 0) & (m.partition_epoch_step >= 0)
            & ~(moved & (m.partition_epoch_step == 0)) & ~(leader_moved & (m.leader_epoch_step == 0)))


epochs_monotone = every_edge(epochs_monotone_at, EVERY_EDGE, _epochs_monotone_masks)


def completion_reaches_target_at(e: PartitionEdge) -> bool:
    """A completed reassignment leaves exactly the requested replicas, all in the ISR (KIP-455)."""
    end = e.ending
    if end.kind != "completed" or end.requested is None:
        return True
    return set(e.replicas) == set(end.requested) and set(end.requested) <= set(e.isr)


def _completion_reaches_target_masks(m):
    return (m.ended_cancelled | ~m.ending_has_requested
            | ((m.replicas_mask == m.ending_requested_mask) & ((m.ending_requested_mask & ~m.isr_mask) == 0)))


completion_reaches_target = every_edge(completion_reaches_target_at, ENDINGS,
                                       _completion_reaches_target_masks)


def cancel_restores_original_replicas_at(e: PartitionEdge) -> bool:
    """A cancelled reassignment leaves exactly the original replica set (KIP-455 cancellation, KIP-236)."""
    return e.ending.kind != "cancelled" or set(e.replicas) == set(e.ending.original)


def _cancel_restores_original_replicas_masks(m):
    return ~m.ended_cancelled | (m.replicas_mask == m.ending_original_mask)


cancel_restores_original_replicas = every_edge(cancel_restores_original_replicas_at, ENDINGS,
                                               _cancel_restores_original_replicas_masks)


def cancel_restores_original_order_at(e: PartitionEdge) -> bool:
    """A cancelled reassignment restores the original list in its original order (KIP-236 rollback)."""
    return e.ending.kind != "cancelled" or e.replicas == e.ending.original


def _cancel_restores_original_order_masks(m):
    return ~m.ended_cancelled | (m.replicas == m.ending_original).all(1)


cancel_restores_original_order = every_edge(cancel_restores_original_order_at, ENDINGS,
                                            _cancel_restores_original_order_masks)


def replication_factor_restored_at(e: PartitionEdge) -> bool:
    """When a reassignment ends, the replication factor is the intended one: the target's after a
    completion, the original's after a cancel."""
    end = e.ending
    intended = end.original if end.kind == "cancelled" or end.requested is None else end.requested
    return len(e.replicas) == len(intended)


def _replication_factor_restored_masks(m):
    by_original = m.ended_cancelled | ~m.ending_has_requested
    return (by_original & (m.replica_count == m.ending_original_count)) | (
        ~by_original & (m.replica_count == m.ending_requested_count))


replication_factor_restored = every_edge(replication_factor_restored_at, ENDINGS,
                                         _replication_factor_restored_masks)


ADMIN_ACTIONS = ("Reassign", "Cancel", "AlterReassignments", "ControllerStep", "ZnodeReassign", "CancelAll",
                 "ToolExecute", "ToolCancel")


def admin_action_keeps_a_leader_at(e: PartitionEdge) -> bool:
    """No admin action (or controller step it triggers) leaves a partition leaderless while a live
    in-sync replica exists."""
    if e.leader == NO_LEADER and e.before.leader != NO_LEADER:
        return not any(b in e.active for b in e.isr if b in e.replicas)
    return True


def _admin_action_keeps_a_leader_masks(m):
    return ~((m.leader == NO_LEADER) & (m.before_leader != NO_LEADER)
             & ((m.isr_mask & m.replicas_mask & m.active) != 0))


admin_action_keeps_a_leader = every_edge(admin_action_keeps_a_leader_at, EdgeScope(frozenset(ADMIN_ACTIONS)),
                                         _admin_action_keeps_a_leader_masks)


def cancel_rejected_cleanly_at(e: PartitionEdge) -> bool:
    """A cancel that is answered with an error changes nothing (it reverts cleanly or not at all)."""
    # `changed` is in the un-renamed successor's frame: a rejected cancel bumping an epoch changed something
    return e.code == NONE or not e.changed


def _cancel_rejected_cleanly_masks(m):
    return (m.code == NONE) | ~m.changed


def rejected_cancel_left_the_rest(prev: ModelState, label, nxt: ModelState) -> bool:
    """What a partition's view cannot see: a rejected cancel leaves the brokers and the controller-wide state
    (ZooKeeper's, KIP-236's, throttles, ...) as they were too. With every partition unchanged this is
    `prev.cluster == after`, the whole cluster."""
    act = getattr(label, "action", label)
    if type(act).__name__ != "Cancel" or request_code(act, getattr(label, "response", None)) == NONE:
        return True
    return prev.cluster == (getattr(label, "after", None) or nxt.cluster)


cancel_rejected_cleanly = every_edge(cancel_rejected_cleanly_at, EdgeScope(frozenset({"Cancel"})),
                                     _cancel_rejected_cleanly_masks, clause=rejected_cancel_left_the_rest)


def reassignment_finished_at(p: Partition, g: Ghost) -> bool:
    """Goal of the liveness check: no reassignment is in flight."""
    return g.original is None


def _reassignment_finished_masks(m):
    return ~m.has_original


reassignment_finished = every_partition(reassignment_finished_at, _reassignment_finished_masks)


def _accepted_target(ms: ModelState, topic: str, index: int) -> tuple[int, ...] | None:
    """zk: the target of a request the controller has accepted but not yet applied — step U of
    onPartitionReassignment pending with partitionsBeingReassigned recording the target (reassignTo(origin) for
    a cancel). Kafka runs the request and step U in one controller event (processApiPartitionReassignment →
    onPartitionReassignment, KafkaController 3.9.2), so no state exists where the old target is still the one
    the controller heads for; the model's ghost only catches up at step U. None elsewhere."""
    zk = ms.cluster.zk
    if zk is None or (topic, index, "U") not in zk.pending:
        return None
    return next((r for t, i, r in zk.being_reassigned if (t, i) == (topic, index)), None)


def targets_live_and_in_sync(ms: ModelState) -> bool:
    """Every in-flight reassignment's target (the original, once cancelled; zk: the target of an accepted request
    whose step U is pending) is live and in the ISR."""
    for (topic, index, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        if g.original is not None:
            target = _accepted_target(ms, topic, index)
            if target is None:
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
                        # kept by kraft 3.8 - 4.2 and zk on the default bounds, but with findings under wider ones:
                        # kraft a growing override (targets of two sizes), zk an ISR shrink after step U decided
                        # (zk_events)
                        promised_by=()),
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
