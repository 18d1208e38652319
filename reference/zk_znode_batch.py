"""`/admin/reassign_partitions` holding a batch, and the forced cancel of before KIP-455 (bounds: znode_batch).

Before KIP-455 (Kafka < 2.4) the only way to reassign was to write the znode, and the tool
(`kafka-reassign-partitions --zookeeper --execute`) wrote every partition of a plan at once, refusing
while the znode existed ("There is an existing assignment running."). The controller (Kafka 3.9.2
KafkaController) handles the batch as one event:

- processZkPartitionReassignment reads the znode and calls maybeTriggerPartitionReassignment, which
  runs onPartitionReassignment for each entry in turn (here: `ZkProfile.znode_reassign_all`, step U
  queued for each entry, `zk_controller.schedule`);
- each partition completes on its own (B7, removePartitionFromReassigningPartitions):
  maybeRemoveFromZkReassignment rewrites the znode without that partition's entry — only an entry
  whose replicas equal the completed assignment (KAFKA-9089, Kafka 2.5) — and deletes the znode once
  the last entry is gone (`zk_controller.step_b7`; the model keeps the znode as
  `ZkController.admin_znode`, absent when empty). Kafka 1.0 could delete it early, on a controller
  failover, before every entry was re-read (KAFKA-6193, fixed in 1.1.0).

The forced cancel operators used before KIP-455 (KAFKA-6304; KIP-236's motivation): delete the znode
by hand, then bounce the controller. Deleting it does nothing to the controller (3.9.2
PartitionReassignmentHandler overrides handleCreation only; maybeRemoveFromZkReassignment returns
when the znode is absent), so the reassignments go on. The bounce is the model's ControllerFailover:
the new controller's initializePartitionReassignments finds no znode, and then

- Kafka >= 2.4 (KIP-455, KAFKA-8345): maybeResumeReassignments resumes every partition whose topic
  znode has adding / removing replicas: the forced cancel cancels nothing (`zk` profile);
- Kafka < 2.4 (e.g. 2.3 onPartitionReassignment, step 1: the topic znode's replicas := OAR + RAR,
  version 1, with no adding / removing fields): the new controller reads a plain assignment; the
  partition keeps target ∪ original as its replicas for good, over-replicated until an operator
  reassigns it again (`ZkPre24Profile`, the documented outcome of the manual cancel).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from itertools import product
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.messages import NONE, Ack
from kreassign.spec.state import ClusterState

from .enabled_actions import get_partition
from .profile_base import Profile
from .steps import ActionNotSupported, Step
from .zk import ZkProfile

Entries = tuple[tuple[str, int, tuple[int, ...]], ...]
#: (profile, state, entries) -> Step: the tool's write of a batch and the controller's handling of it
BatchWrite = Callable[[Profile, ClusterState, Entries], Step]

MSG_NO_NODE = "Node does not exist: /admin/reassign_partitions"


def write_batch(profile: Profile, state: ClusterState, entries: Entries) -> Step:
    """Kafka's: the tool writes every entry at once (refused while the znode exists), the controller's
    processZkPartitionReassignment triggers onPartitionReassignment for each (ZkProfile.znode_reassign_all)."""
    if not isinstance(profile, ZkProfile):
        raise ActionNotSupported(f"profile {profile.name}: ZnodeReassignBatch is modelled for the zk profile only")
    return profile.znode_reassign_all(state, entries)


def delete_znode(state: ClusterState) -> Step:
    """The operator deletes /admin/reassign_partitions. The controller is not told (its watch fires on
    creation only, Kafka 3.9.2 PartitionReassignmentHandler); its partitionsBeingReassigned and the
    topic znodes' adding / removing replicas are untouched, so the reassignments go on."""
    zk = state.zk
    if zk is None:
        raise ActionNotSupported("ZnodeDelete: the state has no zk controller")
    if not zk.admin_znode:
        return Step(state, Ack(NONE, MSG_NO_NODE))
    return Step(replace(state, zk=replace(zk, admin_znode=())), Ack())


@dataclass(frozen=True)
class ZnodeBatch:
    """The rules of the znode_batch actions; Kafka's by default, replaceable by a test."""

    write: BatchWrite = write_batch

    def apply(self, profile: Profile, state: ClusterState, action: Any) -> Step:
        if isinstance(action, A.ZnodeReassignBatch):
            for t, p, _ in action.entries:
                get_partition(state, t, p)
            return self.write(profile, state, tuple((t, p, tuple(r)) for t, p, r in action.entries))
        if isinstance(action, A.ZnodeDelete):
            return delete_znode(state)
        raise ActionNotSupported(f"unknown action {action!r}")


def flatten_unrecorded_reassignments(state: ClusterState) -> ClusterState:
    """What a Kafka < 2.4 topic znode holds of a partition left half-moved: replicas = target ∪ original
    (2.3 onPartitionReassignment wrote OAR + RAR) as a plain assignment — no adding / removing fields
    (TopicZNode version 1). Partitions still named by /admin/reassign_partitions keep their reassignment:
    the 2.3 controller resumed those from the znode."""
    zk = state.zk
    named = {(t, p) for t, p, _ in (zk.admin_znode if zk is not None else ())}
    for t, i, part in list(state.partitions()):
        if part.reassigning and (t, i) not in named:
            state = state.with_partition(t, i, replace(part, adding=(), removing=()))
    return state


class ZkPre24Profile(ZkProfile):
    """The `zk` profile with the controller start-up of Kafka < 2.4: a new controller resumes only the
    reassignments /admin/reassign_partitions names (2.3 initializePartitionReassignment); the others stay
    as ZooKeeper holds them, a plain target ∪ original. Not a profile of its own (the rest of the
    pre-2.4 controller is not modelled): the release behaviour of the forced cancel, for the docs and
    tests."""

    description = "zk with the pre-2.4 controller start-up (the forced cancel leaves target ∪ original)"

    def controller_failover(self, state: ClusterState) -> Step:
        return super().controller_failover(flatten_unrecorded_reassignments(state))


def znode_batch_actions(state: ClusterState, targets: Iterable[tuple[str, int, tuple[int, ...]]]) -> list[Any]:
    """What the explorer offers with znode_batch: a batch naming every partition of `targets` at once, each
    with one of its targets (also while the znode exists: the tool refuses), while the controller is between
    events (it handles the znode's creation as one, like ZnodeReassign); the operator's delete while the
    znode exists (at any time: it is no controller event)."""
    zk = state.zk
    if zk is None:
        return []
    out: list[Any] = []
    if zk.active and not zk.pending:
        by_partition: dict[tuple[str, int], list[tuple[int, ...]]] = {}
        for t, p, r in targets:
            by_partition.setdefault((t, p), []).append(tuple(r))
        parts = sorted(by_partition)
        for combo in product(*(by_partition[k] for k in parts)):
            out.append(A.ZnodeReassignBatch(tuple((t, p, r) for (t, p), r in zip(parts, combo))))
    if zk.admin_znode:
        out.append(A.ZnodeDelete())
    return out


__all__ = ["MSG_NO_NODE", "ZkPre24Profile", "ZnodeBatch", "delete_znode",
           "flatten_unrecorded_reassignments", "write_batch", "znode_batch_actions"]
