"""The ZooKeeper znodes the `zk` controller persists, encoded and decoded as Kafka writes them.

Kafka 3.9 kafka.zk.ZkData:

- `/admin/reassign_partitions` (ReassignPartitionsZNode, version 1):
  `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}`;
- `/brokers/topics/[topic]` (TopicZNode, version 3): the full replica list of each partition
  and, for partitions being reassigned, their adding / removing replicas, keyed by the
  partition id as a string: `{"version":3,"partitions":{"0":[2,3,1]},"adding_replicas":{"0":[2,3]},
  "removing_replicas":{"0":[1]}}` (a partition with no adding or removing replicas has no key there);
- `/brokers/topics/[topic]/partitions/[p]/state` (TopicPartitionStateZNode, version 1): leader,
  leader epoch, ISR and the epoch of the controller that wrote it; its zkVersion is the znode's
  stat, not its data.

Jackson writes compact JSON; the key order of Kafka's Scala maps is a hash order, which the
decoders (Kafka's and these) ignore, so the encoders use the order of the source. What the model
does not keep is written as Kafka writes its default: no `topic_id`, no `leader_recovery_state`
(RECOVERED), and the partition state's `controller_epoch` is the current controller's.

`read_zookeeper(zookeeper_content(state))` is what a newly elected controller reads: the rebuild on
failover goes through it (reference/zk_controller.controller_startup).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from kreassign.spec.state import ClusterState

from .steps import Plan

REASSIGN_PARTITIONS = "/admin/reassign_partitions"


def topic_path(topic: str) -> str:
    return f"/brokers/topics/{topic}"


def state_path(topic: str, partition: int) -> str:
    return f"/brokers/topics/{topic}/partitions/{partition}/state"


def _dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _ints(value: object, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in value):
        raise ValueError(f"{where}: expected a list of broker ids, got {value!r}")
    return tuple(value)


# -- /admin/reassign_partitions -------------------------------------------------------------------


def encode_reassignment(entries: Iterable[tuple[str, int, tuple[int, ...]]]) -> bytes:
    """ReassignPartitionsZNode.encode: LegacyPartitionAssignment(version 1, [topic, partition, replicas])."""
    return _dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r)} for t, p, r in entries]})


def decode_reassignment(data: bytes) -> tuple[tuple[str, int, tuple[int, ...]], ...]:
    """ReassignPartitionsZNode.decode: a map TopicPartition -> replicas (a later entry for the same
    partition wins, Scala's toMap); sorted by topic and partition, as the model keeps the znode."""
    doc = json.loads(data)
    out: dict[tuple[str, int], tuple[int, ...]] = {}
    for k, e in enumerate(doc["partitions"]):
        out[(e["topic"], e["partition"])] = _ints(e["replicas"], f"partitions[{k}].replicas")
    return tuple((t, p, r) for (t, p), r in sorted(out.items()))


# -- /brokers/topics/[topic] ------------------------------------------------------------------------


def encode_topic(assignment: Mapping[int, Plan]) -> bytes:
    """TopicZNode.encode (version 3): replicas of every partition; adding / removing only where non-empty."""
    parts = sorted(assignment.items())
    return _dumps({
        "version": 3,
        "partitions": {str(p): list(a.replicas) for p, a in parts},
        "adding_replicas": {str(p): list(a.adding) for p, a in parts if a.adding},
        "removing_replicas": {str(p): list(a.removing) for p, a in parts if a.removing},
    })


def decode_topic(data: bytes) -> dict[int, Plan]:
    """TopicZNode.decode: ReplicaAssignment(replicas, adding, removing) per partition; a partition absent
    from adding_replicas / removing_replicas (or a znode without those keys, version 1–2) has none."""
    doc = json.loads(data)
    adding, removing = doc.get("adding_replicas", {}), doc.get("removing_replicas", {})
    return {
        int(p): Plan(_ints(r, f"partitions.{p}"), _ints(adding.get(p, []), f"adding_replicas.{p}"),
                     _ints(removing.get(p, []), f"removing_replicas.{p}"))
        for p, r in doc.get("partitions", {}).items()
    }


# -- /brokers/topics/[topic]/partitions/[p]/state --------------------------------------------------


class PartitionState(NamedTuple):
    """LeaderIsrAndControllerEpoch as TopicPartitionStateZNode.decode returns it (zk_version: the stat's)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    zk_version: int


def encode_partition_state(leader: int, leader_epoch: int, isr: Iterable[int], controller_epoch: int) -> bytes:
    """TopicPartitionStateZNode.encode (version 1; leader_recovery_state only when not RECOVERED)."""
    return _dumps({"version": 1, "leader": leader, "leader_epoch": leader_epoch,
                   "controller_epoch": controller_epoch, "isr": list(isr)})


def decode_partition_state(data: bytes, zk_version: int) -> PartitionState:
    doc = json.loads(data)
    return PartitionState(doc["leader"], doc["leader_epoch"], _ints(doc["isr"], "isr"), doc["controller_epoch"],
                          zk_version)


# -- the whole of it ---------------------------------------------------------------------------------


def zookeeper_content(state: ClusterState) -> dict[str, tuple[bytes, int]]:
    """What ZooKeeper holds of the state: path -> (data, zkVersion). Only the persisted part is read:
    the Partition fields, `/admin/reassign_partitions` (absent when empty, as Kafka deletes it) and the
    controller epoch; never the controller's memory. Topic znodes' versions are not modelled (0)."""
    zk = state.zk
    epoch = zk.epoch if zk is not None else 0
    out: dict[str, tuple[bytes, int]] = {}
    for t in state.topics:
        out[topic_path(t.name)] = (encode_topic({i: Plan(p.replicas, p.adding, p.removing)
                                                 for i, p in enumerate(t.partitions)}), 0)
        for i, p in enumerate(t.partitions):
            out[state_path(t.name, i)] = (encode_partition_state(p.leader, p.leader_epoch, p.isr, epoch),
                                          p.partition_epoch)
    if zk is not None and zk.admin_znode:
        out[REASSIGN_PARTITIONS] = (encode_reassignment(zk.admin_znode), 0)
    return out


class ZooKeeperView(NamedTuple):
    """What a controller reads at start-up, decoded."""

    assignments: dict[tuple[str, int], Plan]  # getReplicaAssignmentAndTopicIdForTopics
    reassignments: tuple[tuple[str, int, tuple[int, ...]], ...]  # getPartitionReassignment
    states: dict[tuple[str, int], PartitionState]  # getTopicPartitionStates


def read_zookeeper(content: Mapping[str, tuple[bytes, int]]) -> ZooKeeperView:
    assignments: dict[tuple[str, int], Plan] = {}
    states: dict[tuple[str, int], PartitionState] = {}
    reassignments: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    for path, (data, version) in content.items():
        parts = path.strip("/").split("/")
        if path == REASSIGN_PARTITIONS:
            reassignments = decode_reassignment(data)
        elif parts[:2] == ["brokers", "topics"] and len(parts) == 3:
            for p, a in decode_topic(data).items():
                assignments[(parts[2], p)] = a
        elif parts[:2] == ["brokers", "topics"] and len(parts) == 6 and parts[3] == "partitions" and parts[5] == "state":
            states[(parts[2], int(parts[4]))] = decode_partition_state(data, version)
    return ZooKeeperView(assignments, reassignments, states)


__all__ = [
    "REASSIGN_PARTITIONS",
    "PartitionState",
    "ZooKeeperView",
    "decode_partition_state",
    "decode_reassignment",
    "decode_topic",
    "encode_partition_state",
    "encode_reassignment",
    "encode_topic",
    "read_zookeeper",
    "state_path",
    "topic_path",
    "zookeeper_content",
]
