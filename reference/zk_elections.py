"""ZooKeeper-era controller mechanics shared by `zk`, `kip455` and `kip236`.

Leader elections and the OfflineReplica ISR removal of Kafka's ZooKeeper controller
(kafka.controller.PartitionStateMachine / ReplicaStateMachine /
PartitionLeaderElectionAlgorithms), as pure functions over one partition. "Live" is
`Broker.active`. Every write to a partition's leader-and-ISR znode bumps the leader
epoch and the znode version (`partition_epoch`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from kreassign.spec.state import NO_LEADER, ClusterState, Partition


def write_leader_and_isr(part: Partition, leader: int, isr: tuple[int, ...]) -> Partition:
    """LeaderAndIsr.newLeaderAndIsr: every ZK write bumps leader_epoch and the zkVersion."""
    return replace(
        part,
        leader=leader,
        isr=isr,
        leader_epoch=part.leader_epoch + 1,
        partition_epoch=part.partition_epoch + 1,
    )


def offline_election(
    state: ClusterState, assignment: Iterable[int], part: Partition, unclean: bool
) -> tuple[int, tuple[int, ...]] | None:
    """OfflinePartitionLeaderElection: first live in-sync replica in assignment order, else (if
    unclean) the first live replica with isr = [it]; None if no leader can be elected.

    The new ISR is the live part of the ISR (clean) or just the new leader (unclean).
    """
    assignment = tuple(assignment)
    isr = set(part.isr)
    for b in assignment:
        if state.is_active(b) and b in isr:
            return b, tuple(r for r in part.isr if state.is_active(r))
    if unclean:
        for b in assignment:
            if state.is_active(b):
                return b, (b,)
    return None


def reassign_election(state: ClusterState, target: Iterable[int], part: Partition) -> tuple[int, tuple[int, ...]] | None:
    """ReassignPartitionLeaderElection: first target replica that is live and in the ISR; no unclean fallback."""
    isr = set(part.isr)
    for b in target:
        if state.is_active(b) and b in isr:
            return b, part.isr
    return None


def preferred_election(state: ClusterState, assignment: Iterable[int], part: Partition) -> tuple[int, tuple[int, ...]] | None:
    """PreferredReplicaPartitionLeaderElection: the first assigned replica, if live and in the ISR."""
    assignment = tuple(assignment)
    if assignment and state.is_active(assignment[0]) and assignment[0] in part.isr:
        return assignment[0], part.isr
    return None


def remove_replica_from_isr(part: Partition, replica: int) -> Partition:
    """ReplicaStateMachine's OfflineReplica ISR removal (doRemoveReplicasFromIsr).

    Only partitions whose ISR holds the replica are written. A one-member ISR is kept
    unchanged (the last replica stays, so that an unclean election is needed later);
    otherwise the replica leaves. If it was the leader, the leader becomes -1. The
    leader epoch is bumped on every such write.
    """
    if replica not in part.isr:
        return part
    isr = part.isr if len(part.isr) == 1 else tuple(r for r in part.isr if r != replica)
    leader = NO_LEADER if part.leader == replica else part.leader
    return write_leader_and_isr(part, leader, isr)
