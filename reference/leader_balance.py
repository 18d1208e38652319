"""Automatic preferred-leader balancing beside reassignments (issue 14, item 4).

Mirrors Kafka 3.8 KafkaController.checkAndTriggerAutoLeaderRebalance (the periodic task of
`auto.leader.rebalance.enable`): partitions are grouped by their preferred replica
(`replicas.head`); for a broker whose share of partitions led by someone else exceeds
`leader.imbalance.per.broker.percentage` (default 10), every such partition whose preferred
replica can lead (`canPreferredReplicaBeLeader`: live and in the ISR) gets a PREFERRED
election. Partitions being reassigned are not skipped: their preferred replica is the first
of the *target* (KRaft: replicas = target ++ removing), so a completed reassignment's
leadership moves to the target's first replica.

Before Kafka 3.4 the candidates were filtered with `controllerContext.partitionsBeingReassigned
.isEmpty`: one ongoing reassignment, of any partition, blocked all balancing (KAFKA-10149,
commit 47adb86). `skip_while_reassigning=True` is that rule.

The election itself is the profile's own ElectLeaders(PREFERRED), so every profile's rules
decide who leads.
"""

from __future__ import annotations

from fractions import Fraction

from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import ClusterState

from .profile_base import Profile
from .steps import Step

DEFAULT_IMBALANCE_PERCENTAGE = 10  # leader.imbalance.per.broker.percentage


def can_preferred_lead(state: ClusterState, topic: str, index: int) -> bool:
    """canPreferredReplicaBeLeader: the preferred replica is live and in the ISR."""
    p = state.partition(topic, index)
    return bool(p.replicas) and state.is_active(p.replicas[0]) and p.replicas[0] in p.isr


def candidates(state: ClusterState, *, percentage: int = DEFAULT_IMBALANCE_PERCENTAGE,
               skip_while_reassigning: bool = False) -> list[tuple[str, int]]:
    """The partitions checkAndTriggerAutoLeaderRebalance would elect, in (topic, partition) order."""
    if skip_while_reassigning and any(p.reassigning for _, _, p in state.partitions()):
        return []  # Kafka < 3.4: controllerContext.partitionsBeingReassigned.isEmpty
    by_preferred: dict[int, list[tuple[str, int, bool]]] = {}
    for t, i, p in state.partitions():
        if p.replicas:
            by_preferred.setdefault(p.replicas[0], []).append((t, i, p.leader != p.replicas[0]))
    out = []
    for parts in by_preferred.values():
        off = [(t, i) for t, i, not_preferred in parts if not_preferred]
        if Fraction(len(off), len(parts)) > Fraction(percentage, 100):
            out += [(t, i) for t, i in off if can_preferred_lead(state, t, i)]
    return sorted(out)


def auto_leader_balance(profile: Profile, state: ClusterState, **kw) -> Step:
    """One run of the periodic task: a PREFERRED election for every candidate partition."""
    for t, i in candidates(state, **kw):
        state = profile.apply(state, A.ElectLeaders(t, i, A.PREFERRED)).state
    return Step(state, M.Ack())


__all__ = ["DEFAULT_IMBALANCE_PERCENTAGE", "auto_leader_balance", "can_preferred_lead", "candidates"]
