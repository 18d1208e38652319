"""The replication layer (seed 004): logs, fetching, the high watermark, what is committed.

A log is the tuple of leader epochs its records were written in, so a follower that
kept records from an old leader diverges visibly. Produce appends one record at the
leader; a follower fetch truncates to the longest common prefix with the leader and
copies one record. The high watermark is the length of the prefix every ISR member
shares with the leader; it never decreases while it fits the leader's log, and the
ghost `committed` remembers the longest prefix that was ever below it, so that "no
record at or below a high watermark is ever lost" is a plain state invariant
(`committed` must stay a prefix of the leader's log).

The profiles decide who leads and who is in the ISR; this module only moves records.
"""

from __future__ import annotations

from dataclasses import replace

from kreassign.spec.messages import LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, Ack
from kreassign.spec.state import NO_LEADER, ClusterState, Partition, common_prefix_len

from .enabled_actions import get_partition
from .steps import InvalidAction, Step


def refresh_high_watermark(part: Partition, members: tuple[int, ...] | None = None) -> Partition:
    """Advance the leader's high watermark to what every ISR member shares with the leader (`members`: the
    replicas the leader waits for instead of the ISR; bounds broker_isr, reference/broker_isr.py)."""
    log = part.log
    if log is None or part.leader == NO_LEADER:
        return part
    leader_log = log.log_of(part.leader)
    waits_for = part.isr if members is None else members
    shared = min((common_prefix_len(leader_log, log.log_of(b)) for b in waits_for), default=len(leader_log))
    hw = min(max(log.hw, shared), len(leader_log))
    committed = log.committed
    if hw > len(committed) and leader_log[: len(committed)] == committed:
        committed = leader_log[:hw]
    if hw == log.hw and committed == log.committed:
        return part
    return replace(part, log=replace(log, hw=hw, committed=committed))


def refresh_all(state: ClusterState) -> ClusterState:
    """Refresh every partition's high watermark (run by Profile.apply after each action)."""
    out = state
    for t, i, p in state.partitions():
        q = refresh_high_watermark(p)
        if q is not p:
            out = out.with_partition(t, i, q)
    return out


def produce(state: ClusterState, topic: str, partition: int) -> Step:
    """The leader appends one record written in its current leader epoch."""
    part = get_partition(state, topic, partition)
    if part.log is None:
        raise InvalidAction(f"{topic}-{partition} has no replication layer")
    if part.leader == NO_LEADER:
        return Step(state, Ack(LEADER_NOT_AVAILABLE, "LEADER_NOT_AVAILABLE"))
    log = part.log.log_of(part.leader) + (part.leader_epoch,)
    part = refresh_high_watermark(replace(part, log=part.log.with_log(part.leader, log)))
    return Step(state.with_partition(topic, partition, part), Ack())


def follower_fetch(state: ClusterState, topic: str, partition: int, broker: int) -> Step:
    """A follower truncates to its common prefix with the leader and copies the next record."""
    part = get_partition(state, topic, partition)
    if part.log is None:
        raise InvalidAction(f"{topic}-{partition} has no replication layer")
    if part.leader == NO_LEADER or broker == part.leader:
        return Step(state, Ack(NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER"))
    if broker not in part.replicas:
        return Step(state, Ack(NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER"))
    leader_log = part.log.log_of(part.leader)
    mine = part.log.log_of(broker)
    n = common_prefix_len(leader_log, mine)
    new = leader_log[: n + 1] if n < len(leader_log) else leader_log[:n]
    part = refresh_high_watermark(replace(part, log=part.log.with_log(broker, new)))
    return Step(state.with_partition(topic, partition, part), Ack())
