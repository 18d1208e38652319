"""What must hold when a topic changes under a reassignment (issue 14, item 4).

Checked when the bounds allow CreatePartitions (`create_partitions = N`) or DeleteTopic
(`delete_topic = true`, the last section). Source: the
replication factor of a topic is the one its brokers report (Partition.scala's
`AssignmentState.replicationFactor`: replicas − adding, "keep the size of the original
replicas"); KAFKA-5856's review: "during reassignment there is no meaningful notion of
replication factor" in the raw replica list, which is why AdminUtils once refused to add
partitions while a reassignment ran.
"""

from __future__ import annotations

from kreassign.spec.fairness import Fairness
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState
from kreassign.spec.state import ordered_minus


def created_partitions_get_replication_factor(prev: ModelState, action, nxt: ModelState) -> bool:
    """Partitions added by CreatePartitions get the topic's replication factor (partition 0's replicas
    minus its adding replicas), never |original ∪ target| of a reassignment in flight."""
    act = getattr(action, "action", action)
    if type(act).__name__ != "CreatePartitions":
        return True
    after = getattr(action, "after", None) or nxt.cluster
    before = prev.cluster.topic(act.topic)
    grown = after.topic(act.topic)
    if before is None or grown is None:
        return True
    p0 = before.partitions[0]
    rf = len(ordered_minus(p0.replicas, p0.adding))
    return all(len(p.replicas) == rf for p in grown.partitions[len(before.partitions):])


def preferred_leaders_lead(ms: ModelState) -> bool:
    """Goal: every partition whose preferred replica is live and in sync is led by it."""
    c = ms.cluster
    return all(p.leader == p.replicas[0] for _, _, p in c.partitions()
               if p.replicas and c.is_active(p.replicas[0]) and p.replicas[0] in p.isr)


LEADER_BALANCE_PROPERTIES: tuple[Property, ...] = (
    Property.eventually(
        "preferred_leader_eventually_leads", preferred_leaders_lead,
        description="In every fair run (the controller's periodic balancing is weakly fair), every partition "
        "whose preferred replica is live and in sync is eventually led by it, whatever other partition is being "
        "reassigned; a completed reassignment's leadership moves to its target's first replica.",
        source="KafkaController.checkAndTriggerAutoLeaderRebalance; KAFKA-10149 (fixed in 3.4.0)",
        promised_by=ALL,
        extra={"fairness": Fairness(lambda ms: True)},
    ),
)


TOPIC_CHANGE_PROPERTIES: tuple[Property, ...] = (
    Property.transition("created_partitions_get_replication_factor", created_partitions_get_replication_factor,
                        description=created_partitions_get_replication_factor.__doc__,
                        source="Partition.scala AssignmentState.replicationFactor; KAFKA-5856 review",
                        promised_by=ALL),
)

# -- topic deletion during a reassignment (bounds: delete_topic) ------------------------------------------


def _names_missing_topic(entries, cluster) -> bool:
    return any(cluster.topic(e[0] if isinstance(e, tuple) else e) is None for e in entries)


def no_reassignment_outlives_its_topic(ms: ModelState) -> bool:
    """No reassignment state names a topic that no longer exists: a deleted topic's reassignments are
    gone with it (KRaft: replay(RemoveTopicRecord) drops it from `reassigningTopics`, so
    ListPartitionReassignments cannot report it; ZooKeeper: nothing of the controller's context, its
    pending work, the admin znodes or the deletion queue outlives the topic)."""
    c = ms.cluster
    zk = c.zk
    if zk is None:
        return True
    return not any(_names_missing_topic(entries, c) for entries in
                   (zk.memory, zk.being_reassigned, zk.admin_znode, zk.pending, zk.deleting, zk.leadership or ()))


def accepted_deletion_takes_effect(prev: ModelState, label, nxt: ModelState) -> bool:
    """An accepted DeleteTopic deletes the topic, with every partition and reassignment of it (KRaft:
    at once), or queues it for deletion (ZooKeeper: /admin/delete_topics); a resumed deletion deletes it."""
    act = getattr(label, "action", label)
    kind = type(act).__name__
    if kind not in ("DeleteTopic", "ResumeTopicDeletion"):
        return True
    if getattr(getattr(label, "response", None), "error_code", 0) != 0:
        return True
    after = getattr(label, "after", None) or nxt.cluster
    if after.topic(act.topic) is None:
        return True
    return kind == "DeleteTopic" and after.zk is not None and act.topic in after.zk.deleting


def _being_reassigned(cluster, topic: str) -> bool:
    """controllerContext.partitionsBeingReassigned names a partition of `topic` (zk), or one of its
    partitions has adding or removing replicas."""
    t = cluster.topic(topic)
    if t is not None and any(p.adding or p.removing for p in t.partitions):
        return True
    return cluster.zk is not None and any(e[0] == topic for e in cluster.zk.being_reassigned)


def reassigning_topic_not_deleted(prev: ModelState, label, nxt: ModelState) -> bool:
    """ZooKeeper: a topic with a partition being reassigned is not deleted; its deletion waits until
    the reassignment completes or is cancelled (markTopicIneligibleForDeletion)."""
    after = getattr(label, "after", None) or nxt.cluster
    return all(after.topic(t.name) is not None or not _being_reassigned(prev.cluster, t.name)
               for t in prev.cluster.topics)


_DELETE_SOURCE = ("Kafka 3.9 ReplicationControlManager.deleteTopic / replay(RemoveTopicRecord); "
                  "KafkaController.processTopicDeletion, TopicDeletionManager")

TOPIC_DELETION_PROPERTIES: tuple[Property, ...] = (
    Property.always("no_reassignment_outlives_its_topic", no_reassignment_outlives_its_topic,
                    description=no_reassignment_outlives_its_topic.__doc__, source=_DELETE_SOURCE, promised_by=ALL),
    Property.transition("accepted_deletion_takes_effect", accepted_deletion_takes_effect,
                        description=accepted_deletion_takes_effect.__doc__, source=_DELETE_SOURCE, promised_by=ALL),
)

#: only where deletion waits for reassignments (zk); KRaft deletes a reassigning topic by design
ZK_TOPIC_DELETION_PROPERTIES: tuple[Property, ...] = (
    Property.transition("reassigning_topic_not_deleted", reassigning_topic_not_deleted,
                        description=reassigning_topic_not_deleted.__doc__,
                        source="KafkaController.onPartitionReassignment / processTopicDeletion: "
                        "markTopicIneligibleForDeletion(\"topic reassignment in progress\")", promised_by=("zk",)),
)


def topic_deletion_properties(deferred: bool) -> tuple[Property, ...]:
    """The properties checked with `delete_topic`: ZooKeeper-style controllers (deferred requests) also
    promise that a topic being reassigned is not deleted."""
    return TOPIC_DELETION_PROPERTIES + (ZK_TOPIC_DELETION_PROPERTIES if deferred else ())


__all__ = ["LEADER_BALANCE_PROPERTIES", "TOPIC_CHANGE_PROPERTIES", "TOPIC_DELETION_PROPERTIES",
           "ZK_TOPIC_DELETION_PROPERTIES", "accepted_deletion_takes_effect", "created_partitions_get_replication_factor",
           "no_reassignment_outlives_its_topic", "preferred_leaders_lead", "reassigning_topic_not_deleted",
           "topic_deletion_properties"]
