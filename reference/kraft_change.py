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
from dataclasses import dataclass

from kreassign.spec.actions import ONLINE, PREFERRED, UNCLEAN
from kreassign.spec.state import NO_LEADER, ClusterState, Partition, ordered_minus, replace

Record = dict[str, object]

# A completion rule: (R', I', AR, RR) -> complete? (R' and I' are the lists after dropping RR).
# Twins: checker/packed/kraft_vector.py (VectorKernel.partition_change, numpy), checker/z3/reassign.py
# (completion_rule).
CompletionRule = Callable[[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]], bool]


def all_target_replicas_in_isr(r: tuple[int, ...], i: tuple[int, ...], adding: tuple[int, ...],
                               removing: tuple[int, ...] = ()) -> bool:
    """Kafka 3.8 - 4.2 (KAFKA-15665): complete iff every target replica is in the target ISR."""
    return set(r) <= set(i)


def adding_replicas_in_isr(r: tuple[int, ...], i: tuple[int, ...], adding: tuple[int, ...],
                           removing: tuple[int, ...] = ()) -> bool:
    """Kafka 3.7: complete iff every *adding* replica is in the target ISR (retained ones may lag)."""
    return set(adding) <= set(i)


def adding_in_isr_all_targets_if_shrinking(r: tuple[int, ...], i: tuple[int, ...], adding: tuple[int, ...],
                                           removing: tuple[int, ...] = ()) -> bool:
    """Kafka >= 4.3 (KAFKA-19975, apache/kafka#21114, PartitionReassignmentReplicas.maybeCompleteReassignment):
    every adding replica in the target ISR, and, only when the replication factor shrinks (fewer adding than
    removing replicas), every target replica too."""
    if not set(adding) <= set(i):
        return False
    return len(adding) >= len(removing) or set(r) <= set(i)


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
    if not rule(new_replicas, new_isr, adding, removing):
        return replicas, isr, adding, removing
    return new_replicas, new_isr, (), ()


NO_LEADER_CHANGE = -2  # PartitionChangeRecord's default leader: the field is not written


@dataclass(frozen=True)
class ElrRules:
    """Eligible leader replicas (KIP-966) as a release's PartitionChangeBuilder applies them, when the
    feature eligible.leader.replicas.version is 1 (maybePopulateTargetElr, tryElection,
    maybeUpdateRecordElr, maybeUpdateLastKnownLeader; useLastKnownLeaderInBalancedRecovery is true)."""

    #: getTopicEffectiveMinIsr: min(the topic's min.insync.replicas, partition 0's full replica count)
    min_isr: int
    #: maybeUpdateLastKnownLeader: "4.1.1" (MINOR apache/kafka#20629: set when the record sets leader -1,
    #: cleared when it sets a leader) or "4.0" (set when the record writes an empty ISR, cleared while the
    #: partition has or keeps a leader)
    last_known_leader_rule: str = "4.1.1"
    #: canElectLastKnownLeader refuses a last known leader that is not an acceptable leader (KAFKA-19522, 4.1.0)
    last_known_leader_must_be_acceptable: bool = True


def elect(
    state: ClusterState, current_leader: int, replicas: tuple[int, ...], isr: tuple[int, ...], election: str,
    elr: tuple[int, ...] = (), last_known: int | None = None,
) -> tuple[int, bool]:
    """PartitionChangeBuilder.electLeader: (leader, unclean?). Valid = in the target ISR (or, the ISR being
    empty, in the target ELR) and active; `last_known`: the last known leader canElectLastKnownLeader allows
    (ELR on), elected uncleanly when nothing else is valid."""
    is_active = state.is_active  # (`b in isr and is_active(b)` is "valid", written out: asked for every change)
    if not isr and elr:
        isr = elr  # isValidNewLeader: in the ISR, or in the ELR when the ISR is empty
    if election == PREFERRED:
        if replicas and replicas[0] in isr and is_active(replicas[0]):
            return replicas[0], False
        if current_leader != NO_LEADER and current_leader in isr and is_active(current_leader):
            return current_leader, False
        for b in replicas[1:]:
            if b in isr and is_active(b):
                return b, False
        if last_known is not None:
            return last_known, True
        return NO_LEADER, False
    if current_leader != NO_LEADER and current_leader in isr and is_active(current_leader):
        return current_leader, False
    for b in replicas:
        if b in isr and is_active(b):
            return b, False
    if last_known is not None:
        return last_known, True
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
    elr: ElrRules | None = None,
    unclean_shutdown: tuple[int, ...] = (),
) -> Record | None:
    """The PartitionChangeRecord for a change with the given targets (None = the partition's own).

    Returns None when the change sets no field (Kafka writes no record then).
    `bump_leader_epoch_on_isr_shrink`: metadata.version < 3.6-IV0 (KAFKA-15021) or ZooKeeper
    migration: an ISR write that drops a member also sets the leader field
    (PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded).
    `elr`: the ELR rules when eligible leader replicas are on (None: off; a partition's leftover ELR is
    then cleared by its next change, as Kafka does after a downgrade); `unclean_shutdown`: brokers
    that restarted uncleanly, kept out of the ELR (handleBrokerShutdown with ELR on).
    """
    # twin: checker/packed/kraft_vector.py VectorKernel.partition_change (and complete_if_needed, elect)
    r = part.replicas if replicas is None else replicas
    i = part.isr if isr is None else isr
    ar = part.adding if adding is None else adding
    rr = part.removing if removing is None else removing
    r, i, ar, rr = complete_if_needed(r, i, ar, rr, rule)

    # maybePopulateTargetElr: below the min ISR, the ISR's leavers join the ELR (never filtered by replicas)
    target_elr = part.elr
    if elr is not None:
        if len(i) >= elr.min_isr:
            target_elr = ()
        else:
            target_elr = tuple(sorted((set(target_elr) | set(part.isr)) - set(i) - set(unclean_shutdown)))
    last_known = None
    if elr is not None and not target_elr and not i and len(part.last_known_elr) == 1 and (
            not elr.last_known_leader_must_be_acceptable or state.is_active(part.last_known_elr[0])):
        last_known = part.last_known_elr[0]  # canElectLastKnownLeader

    record: Record = {}
    leader, unclean = elect(state, part.leader, r, i, election, target_elr if elr is not None else (), last_known)
    if leader != part.leader:
        if leader in target_elr:  # an election from the ELR is clean: the new leader is the ISR
            i = (leader,)
            target_elr = tuple(b for b in target_elr if b != leader)
        record["leader"] = leader
        if unclean:
            record["isr"] = (leader,)
    if "leader" not in record and r is not part.replicas and not set(part.replicas) <= set(r):
        record["leader"] = part.leader  # an epoch bump without a leader change
    # maybeUpdateRecordElr: an unclean election (or ELR off) clears the ELR
    if "isr" in record or elr is None:
        target_elr = ()
    if target_elr != part.elr:
        record["elr"] = target_elr
    if "isr" not in record and (i or elr is not None) and i != part.isr:
        record["isr"] = i  # with ELR on the ISR may be written empty
    if bump_leader_epoch_on_isr_shrink and "leader" not in record and "isr" in record \
            and not set(part.isr) <= set(record["isr"]):
        record["leader"] = part.leader
    if elr is not None:
        _update_last_known_leader(part, record, elr.last_known_leader_rule)
    if r and r != part.replicas:
        record["replicas"] = r
    if rr != part.removing:
        record["removing"] = rr
    if ar != part.adding:
        record["adding"] = ar
    return record or None


def _update_last_known_leader(part: Partition, record: Record, rule: str) -> None:
    """PartitionChangeBuilder.maybeUpdateLastKnownLeader: the last known leader in lastKnownElr."""
    new_leader = record.get("leader", NO_LEADER_CHANGE)
    if rule == "4.1.1":
        if new_leader == NO_LEADER and not part.last_known_elr:
            record["last_known_elr"] = (part.leader,)  # the first time the partition becomes leaderless
        elif isinstance(new_leader, int) and new_leader >= 0 and part.last_known_elr:
            record["last_known_elr"] = ()
        return
    if record.get("isr") == () and not (len(part.last_known_elr) == 1 and part.last_known_elr[0] == part.leader):
        record["last_known_elr"] = (part.leader,)
    elif (new_leader >= 0 or (part.leader != NO_LEADER and new_leader != NO_LEADER)) and part.last_known_elr:
        record["last_known_elr"] = ()


def apply_record(part: Partition, record: Record | None) -> Partition:
    """Replay a PartitionChangeRecord (PartitionRegistration.merge)."""
    if not record:
        return part
    leader_epoch = part.leader_epoch + 1 if "leader" in record else part.leader_epoch
    return replace(part, **record, leader_epoch=leader_epoch, partition_epoch=part.partition_epoch + 1)
