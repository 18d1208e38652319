"""Topics that change during a reassignment (issue 14, item 4): CreatePartitions.

What Kafka does (3.8): the replication factor of the new partitions is read off *one
existing partition's full replica list*, adding and removing replicas included:

- KRaft, ReplicationControlManager.createPartitionsForTopic: `PartitionRegistration
  partitionInfo = topicInfo.parts.values().iterator().next(); short replicationFactor =
  (short) partitionInfo.replicas.length;` (the first partition of the topic's map: partition 0);
- ZooKeeper, AdminZkClient.createNewPartitionsAssignment: `existingAssignmentPartition0 =
  existingAssignment(0).replicas` and `replicationFactor = existingAssignmentPartition0.size`.

So while partition 0 is being reassigned the new partitions get |original ∪ target| replicas
(`replicas = target ++ removing` during a KRaft reassignment). The pre-KIP-455 tool refused
to add partitions during a reassignment "since during reassignment there is no meaningful
notion of replication factor" (AdminUtils, KAFKA-5856 review); that check is gone. The
broker's own notion (broker_view.replication_factor: replicas − adding) is the one a
property can hold the new partitions to.

Placement is not what is checked: new partitions go round-robin over the active brokers in
id order from the partition's index (a stand-in for StripedReplicaPlacer / AdminUtils), with
INVALID_REPLICATION_FACTOR (38) when fewer brokers are active than replicas are needed, and
the request naming fewer partitions than the topic has is INVALID_PARTITIONS (37).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kreassign.spec import messages as M
from kreassign.spec.state import ClusterState, Partition, ReplicaLog, Topic

from .broker_view import replication_factor
from .common import get_partition
from .values import InvalidAction, Step

INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38

#: how many replicas a new partition gets, from the topic's existing partitions
RfRule = Callable[[Topic], int]


def partition_zero_replicas(topic: Topic) -> int:
    """Kafka (KRaft and ZK): partition 0's full replica list, adding and removing replicas included."""
    return len(topic.partitions[0].replicas)


def partition_zero_replication_factor(topic: Topic) -> int:
    """The broker's replication factor of partition 0 (replicas − adding while reassigning)."""
    return replication_factor(topic.partitions[0])


def create_partitions(state: ClusterState, topic: str, count: int, rf_rule: RfRule = partition_zero_replicas) -> Step:
    """CreatePartitions(topic, count) with controller-chosen assignments."""
    t = state.topic(topic)
    if t is None:
        raise InvalidAction(f"unknown topic {topic!r}")
    get_partition(state, topic, 0)
    if count <= len(t.partitions):
        return Step(state, M.Ack(INVALID_PARTITIONS, f"Topic currently has {len(t.partitions)} partitions, "
                                 f"which is higher than the requested {count}."))
    rf = rf_rule(t)
    active = [b.id for b in state.brokers if b.registered and b.active]
    if rf > len(active):
        return Step(state, M.Ack(INVALID_REPLICATION_FACTOR, f"Unable to replicate the partition {rf} time(s): "
                                 f"The target replication factor of {rf} cannot be reached because only "
                                 f"{len(active)} broker(s) are registered."))
    with_log = t.partitions[0].log is not None
    parts = list(t.partitions)
    for index in range(len(parts), count):
        replicas = tuple(active[(index + k) % len(active)] for k in range(rf))
        log = ReplicaLog(logs=tuple((b, ()) for b in sorted(replicas))) if with_log else None
        parts.append(Partition(replicas=replicas, isr=replicas, leader=replicas[0], log=log))
    topics = tuple(replace(x, partitions=tuple(parts)) if x.name == topic else x for x in state.topics)
    return Step(replace(state, topics=topics), M.Ack())


__all__ = ["INVALID_PARTITIONS", "INVALID_REPLICATION_FACTOR", "RfRule", "create_partitions",
           "partition_zero_replicas", "partition_zero_replication_factor"]
