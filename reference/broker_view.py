"""The broker's own view of a partition: what `kafka.cluster.Partition` computes from the
assignment the controller sent it (Kafka 3.8, core/src/main/scala/kafka/cluster/Partition.scala).

A broker keeps an `AssignmentState`: `SimpleAssignmentState(replicas)` or, while adding or
removing replicas is non-empty, `OngoingReassignmentState(adding, removing, replicas)`
(`updateAssignmentAndIsr`). From it:

- `replicationFactor` = `replicas.diff(addingReplicas).size` while reassigning ("keep the size
  of the original replicas"), else `replicas.size` — adding replicas never count;
- `isUnderReplicated` = `isLeader && replicationFactor - isr.size > 0`: only the leader reports it
  (the `UnderReplicated` gauge is 0 on followers);
- `isAddingLocalReplica` = the local broker is in `addingReplicas` (ReplicaFetcherThread counts
  its fetched bytes as reassignment traffic: `isReassigning && isAddingLocalReplica`);
- `ReplicasCount` / `InSyncReplicasCount` gauges: reported by the leader only, 0 elsewhere;
- `isUnderMinIsr` = leader and `isr.size < min(min.insync.replicas, remoteReplicas + 1)`.

Pure functions of the partition as the broker holds it (`spec.state.Partition`) and the local
broker id; `replicas.diff(adding)` is Scala's multiset difference, which on duplicate-free lists
is `ordered_minus`.
"""

from __future__ import annotations

from collections.abc import Callable

from kreassign.spec.state import NO_LEADER, Partition, ordered_minus

#: a replication-factor rule: the strategy a broken variant replaces in tests
ReplicationFactorRule = Callable[[Partition], int]


def replication_factor(part: Partition) -> int:
    """AssignmentState.replicationFactor: the original replicas' count while reassigning."""
    if part.reassigning:  # OngoingReassignmentState
        return len(ordered_minus(part.replicas, part.adding))
    return len(part.replicas)  # SimpleAssignmentState


def is_leader(part: Partition, local_broker: int) -> bool:
    """Partition.isLeader: leaderReplicaIdOpt.contains(localBrokerId)."""
    return part.leader != NO_LEADER and part.leader == local_broker


def is_under_replicated(part: Partition, local_broker: int, rf: ReplicationFactorRule = replication_factor) -> bool:
    """Partition.isUnderReplicated: only the leader reports it; adding replicas are not counted."""
    return is_leader(part, local_broker) and rf(part) - len(part.isr) > 0


def is_reassigning(part: Partition) -> bool:
    """Partition.isReassigning: the assignment state is an OngoingReassignmentState."""
    return part.reassigning


def is_adding_replica(part: Partition, replica: int) -> bool:
    """Partition.isAddingReplica (the leader's view of a fetching follower)."""
    return part.reassigning and replica in part.adding


def is_adding_local_replica(part: Partition, local_broker: int) -> bool:
    """Partition.isAddingLocalReplica: this broker's replica is being added by a reassignment."""
    return is_adding_replica(part, local_broker)


def replicas_count(part: Partition, local_broker: int) -> int:
    """The ReplicasCount gauge: the replication factor on the leader, 0 elsewhere."""
    return replication_factor(part) if is_leader(part, local_broker) else 0


def in_sync_replicas_count(part: Partition, local_broker: int) -> int:
    """The InSyncReplicasCount gauge: |isr| on the leader, 0 elsewhere."""
    return len(part.isr) if is_leader(part, local_broker) else 0


def is_under_min_isr(part: Partition, local_broker: int, min_insync_replicas: int) -> bool:
    """Partition.isUnderMinIsr: on the leader, |isr| < min(min.insync.replicas, |replicas|).

    effectiveMinIsr counts the leader's remoteReplicasMap (every follower, adding and removing
    ones included) plus itself, i.e. all assigned replicas.
    """
    return is_leader(part, local_broker) and len(part.isr) < min(min_insync_replicas, len(part.replicas))


def under_replicated_reporters(part: Partition, brokers, rf: ReplicationFactorRule = replication_factor) -> tuple[int, ...]:
    """The brokers whose UnderReplicated gauge is 1 for this partition (at most the leader)."""
    return tuple(b for b in brokers if is_under_replicated(part, b, rf))


__all__ = [
    "ReplicationFactorRule",
    "in_sync_replicas_count",
    "is_adding_local_replica",
    "is_adding_replica",
    "is_leader",
    "is_reassigning",
    "is_under_min_isr",
    "is_under_replicated",
    "replicas_count",
    "replication_factor",
    "under_replicated_reporters",
]
