"""Pieces every profile shares: lookups with clear errors, and the enabled-action enumeration.

The enumeration lists candidates from an ActionSpace in one fixed order and keeps the
ones whose actor could act (a leader exists for an ISR change, a broker is up to
fail, ...). Admin requests are always enabled: an error response is an outcome too.
Profiles add their own (e.g. `zk`'s ControllerStep) through `extra_actions`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import NO_LEADER, ClusterState, Partition

from .steps import ActionSpace, InvalidAction


def get_partition(state: ClusterState, topic: str, partition: int) -> Partition:
    p = state.partition(topic, partition)
    if p is None:
        if state.topic(topic) is None:
            raise InvalidAction(f"unknown topic {topic!r}")
        raise InvalidAction(f"unknown partition {topic}-{partition}")
    return p


def get_broker_id(state: ClusterState, broker: int) -> int:
    if state.broker(broker) is None:
        raise InvalidAction(f"unknown broker {broker}")
    return broker


def list_reassigning(
    state: ClusterState, request: M.ListPartitionReassignmentsRequest
) -> M.ListPartitionReassignmentsResponse:
    """ListPartitionReassignments over the partitions' own lists: only reassigning partitions,
    with replicas / adding / removing; a null topic list means all; unknown names are skipped."""
    if request.topics is None:
        wanted = [(t.name, tuple(range(len(t.partitions)))) for t in state.topics]
    else:
        wanted = [(t.name, tuple(t.partition_indexes)) for t in request.topics]
    topics = []
    for name, indexes in wanted:
        ongoing = []
        for i in indexes:
            p = state.partition(name, i)
            if p is not None and p.reassigning:
                ongoing.append(M.OngoingPartitionReassignment(i, p.replicas, p.adding, p.removing))
        if ongoing:
            topics.append(M.OngoingTopicReassignment(name, tuple(ongoing)))
    return M.ListPartitionReassignmentsResponse(topics=tuple(topics))


def log_caught_up(part: Partition, broker: int) -> bool:
    """With the replication layer on, a follower may join the ISR only when its log equals the leader's."""
    if part.log is None or part.leader == NO_LEADER:
        return True
    return part.log.log_of(broker) == part.log.log_of(part.leader)


def isr_expand_candidates(state: ClusterState, part: Partition) -> Iterable[int]:
    """Followers the leader may add: replicas outside the ISR, active, caught up."""
    if part.leader == NO_LEADER:
        return ()
    isr = set(part.isr)
    return [b for b in sorted(part.replicas) if b not in isr and state.is_active(b) and log_caught_up(part, b)]


def isr_shrink_candidates(state: ClusterState, part: Partition) -> Iterable[int]:
    """Followers the leader may drop: ISR members other than the leader."""
    if part.leader == NO_LEADER:
        return ()
    return [b for b in sorted(part.isr) if b != part.leader]


def admin_requests(space: ActionSpace) -> tuple[Any, ...]:
    """The admin's requests of the common enumeration, which every state offers alike (made once per space:
    the explorer enumerates millions of states)."""
    try:
        return _admin_requests(space)
    except TypeError:  # a space holding lists (decoded from JSON) is not hashable: no cache
        return _admin_requests.__wrapped__(space)


@lru_cache(maxsize=64)
def _admin_requests(space: ActionSpace) -> tuple[Any, ...]:
    out: list[Any] = []
    if space.reassign:
        for t, p, replicas in space.targets:
            out.append(A.Reassign(t, p, replicas))
    if space.cancel:
        seen = set()
        for t, p, _ in space.targets:
            if (t, p) not in seen:
                seen.add((t, p))
                out.append(A.Cancel(t, p))
    if space.znode:
        for t, p, replicas in space.targets:
            out.append(A.ZnodeReassign(t, p, replicas))
    return tuple(out)


def default_enabled_actions(state: ClusterState, space: ActionSpace, extra: Iterable[Any] = ()) -> list[Any]:
    """The common enumeration, in a fixed order: admin, ISR, brokers, elections, log, extras."""
    # twin: checker/packed/kraft_kernel.py KraftKernel.enabled
    # twin: checker/packed/kraft_vector.py VectorKernel.tabulate
    out = list(admin_requests(space))
    parts = list(state.partitions())
    if space.isr_changes:
        for t, i, part in parts:
            for b in isr_expand_candidates(state, part):
                out.append(A.LeaderExpandIsr(t, i, b))
            for b in isr_shrink_candidates(state, part):
                out.append(A.LeaderShrinkIsr(t, i, b))
    if space.failures:
        for b in state.brokers:
            if b.registered and b.active:
                out.append(A.BrokerFail(b.id))
            elif b.registered:
                out.append(A.BrokerRecover(b.id))
    for election in space.elections:
        for t, i, _ in parts:
            out.append(A.ElectLeaders(t, i, election))
    if space.replication:
        for t, i, part in parts:
            if part.log is None or part.leader == NO_LEADER:
                continue
            if len(part.log.log_of(part.leader)) < space.log_length:
                out.append(A.Produce(t, i))
            for b in sorted(part.replicas):
                if b != part.leader and state.is_active(b) and not log_caught_up(part, b):
                    out.append(A.FollowerFetch(t, i, b))
    out.extend(extra)
    if space.failover:
        out.append(A.ControllerFailover())
    return out
