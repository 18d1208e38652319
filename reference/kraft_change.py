"""KRaft's PartitionChangeBuilder: every partition change goes through `build_change`.

Kafka 3.9, org.apache.kafka.controller.PartitionChangeBuilder, in this order
(KAFKA-SEMANTICS.md, kraft, "Build"):

1. complete the reassignment if needed (the completion rule is a strategy: it is
   the one thing `kraft-3.7` changes);
2. elect a leader (ONLINE / PREFERRED / UNCLEAN) over the target ISR and replicas;
3. bump the leader epoch without a leader change when replicas are removed;
4. write the ISR if the election did not, it changed, and it is non-empty;
5. leader_epoch + 1 iff the record carries a leader; partition_epoch + 1 on every record.

A change is a *record*: a dict of the fields it sets (PartitionChangeRecord). It is
replayed onto the partition by `apply_record`, so a request that touches the same
partition twice replays two records, as the controller does.
"""

from __future__ import annotations

from collections.abc import Callable

from kreassign.spec.actions import ONLINE, PREFERRED, UNCLEAN
from kreassign.spec.state import NO_LEADER, ClusterState, Partition, ordered_minus, replace

Record = dict[str, object]

# A completion rule: (R', I', AR) -> complete? (R' and I' are the lists after dropping RR).
CompletionRule = Callable[[tuple[int, ...], tuple[int, ...], tuple[int, ...]], bool]


def all_target_replicas_in_isr(r: tuple[int, ...], i: tuple[int, ...], adding: tuple[int, ...]) -> bool:
    """Kafka >= 3.8 (KAFKA-15665): complete iff every target replica is in the target ISR."""
    return set(r) <= set(i)


def adding_replicas_in_isr(r: tuple[int, ...], i: tuple[int, ...], adding: tuple[int, ...]) -> bool:
    """Kafka 3.7: complete iff every *adding* replica is in the target ISR (retained ones may lag)."""
    return set(adding) <= set(i)


def complete_if_needed(
    replicas: tuple[int, ...],
    isr: tuple[int, ...],
    adding: tuple[int, ...],
    removing: tuple[int, ...],
    rule: CompletionRule,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """PartitionChangeBuilder.completeReassignmentIfNeeded on the target lists."""
    if not adding and not removing:
        return replicas, isr, adding, removing
    if removing:
        new_isr = ordered_minus(isr, removing)
        new_replicas = ordered_minus(replicas, removing)
    else:
        new_isr, new_replicas = isr, replicas
    if not new_isr or not new_replicas:
        return replicas, isr, adding, removing
    if not rule(new_replicas, new_isr, adding):
        return replicas, isr, adding, removing
    return new_replicas, new_isr, (), ()


def elect(
    state: ClusterState, current_leader: int, replicas: tuple[int, ...], isr: tuple[int, ...], election: str
) -> tuple[int, bool]:
    """PartitionChangeBuilder.electLeader: (leader, unclean?). Valid = in the target ISR and active."""
    is_active = state.is_active  # (`b in isr and is_active(b)` is "valid", written out: asked for every change)
    if election == PREFERRED:
        if replicas and replicas[0] in isr and is_active(replicas[0]):
            return replicas[0], False
        if current_leader != NO_LEADER and current_leader in isr and is_active(current_leader):
            return current_leader, False
        for b in replicas[1:]:
            if b in isr and is_active(b):
                return b, False
        return NO_LEADER, False
    if current_leader != NO_LEADER and current_leader in isr and is_active(current_leader):
        return current_leader, False
    for b in replicas:
        if b in isr and is_active(b):
            return b, False
    if election == UNCLEAN:
        for b in replicas:
            if is_active(b):
                return b, True
    return NO_LEADER, False


def build_change(
    state: ClusterState,
    part: Partition,
    rule: CompletionRule,
    *,
    replicas: tuple[int, ...] | None = None,
    isr: tuple[int, ...] | None = None,
    adding: tuple[int, ...] | None = None,
    removing: tuple[int, ...] | None = None,
    election: str = ONLINE,
    bump_leader_epoch_on_isr_shrink: bool = False,
) -> Record | None:
    """The PartitionChangeRecord for a change with the given targets (None = the partition's own).

    Returns None when the change sets no field (Kafka writes no record then).
    `bump_leader_epoch_on_isr_shrink`: metadata.version < 3.6-IV0 (KAFKA-15021) or ZooKeeper
    migration: an ISR write that drops a member also sets the leader field
    (PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded).
    """
    r = part.replicas if replicas is None else replicas
    i = part.isr if isr is None else isr
    ar = part.adding if adding is None else adding
    rr = part.removing if removing is None else removing
    r, i, ar, rr = complete_if_needed(r, i, ar, rr, rule)

    record: Record = {}
    leader, unclean = elect(state, part.leader, r, i, election)
    if leader != part.leader:
        record["leader"] = leader
        if unclean:
            record["isr"] = (leader,)
    if "leader" not in record and r is not part.replicas and not set(part.replicas) <= set(r):
        record["leader"] = part.leader  # an epoch bump without a leader change
    if "isr" not in record and i and i != part.isr:
        record["isr"] = i
    if bump_leader_epoch_on_isr_shrink and "leader" not in record and "isr" in record \
            and not set(part.isr) <= set(record["isr"]):
        record["leader"] = part.leader
    if r and r != part.replicas:
        record["replicas"] = r
    if rr != part.removing:
        record["removing"] = rr
    if ar != part.adding:
        record["adding"] = ar
    return record or None


def apply_record(part: Partition, record: Record | None) -> Partition:
    """Replay a PartitionChangeRecord (PartitionRegistration.merge)."""
    if not record:
        return part
    leader_epoch = part.leader_epoch + 1 if "leader" in record else part.leader_epoch
    return replace(part, **record, leader_epoch=leader_epoch, partition_epoch=part.partition_epoch + 1)
