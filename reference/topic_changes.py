"""Topics that change during a reassignment (issue 14, item 4): CreatePartitions, DeleteTopic.

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
id order from the partition's index (a stand-in for StripedReplicaPlacer / AdminUtils, whose
choice is random), with INVALID_REPLICATION_FACTOR (38) when fewer brokers are active than
replicas are needed, and the request naming fewer partitions than the topic has is
INVALID_PARTITIONS (37). Under KRaft (`kraft=True`, checked in lockstep against Kafka 3.9:
tests/kafka/test_topic_changes_kafka.py) the rules are StripedReplicaPlacer's: fenced brokers
are usable after every unfenced one, so a partition may get a fenced replica outside its ISR;
the error messages are ReplicationControlManager's. The lockstep allows the placement itself
to differ (checker/implementations/kafka/differences.py), never the replication factor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import ClusterState, Partition, ReplicaLog, Topic

from .broker_view import replication_factor
from .enabled_actions import get_partition
from .kraft import KraftProfile
from .steps import ActionNotSupported, InvalidAction, Step

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


def create_partitions(state: ClusterState, topic: str, count: int, rf_rule: RfRule = partition_zero_replicas,
                      kraft: bool = False, cordon_wording: bool = False) -> Step:
    """CreatePartitions(topic, count) with controller-chosen assignments (`kraft`: the KRaft controller's
    checks, messages and placement rules; else the ZooKeeper-era ones). `cordon_wording`: the placer's
    messages from Kafka 4.3 on, which name cordoned log directories (KIP-1066, KAFKA-19774)."""
    t = state.topic(topic)
    if t is None:
        raise InvalidAction(f"unknown topic {topic!r}")
    get_partition(state, topic, 0)
    if count <= len(t.partitions):
        if kraft:  # ReplicationControlManager.createPartitions
            message = (f"Topic already has {len(t.partitions)} partition(s)." if count == len(t.partitions) else
                       f"The topic {topic} currently has {len(t.partitions)} partition(s); {count} would not be "
                       "an increase.")
        else:
            message = f"Topic currently has {len(t.partitions)} partitions, which is higher than the requested {count}."
        return Step(state, M.Ack(INVALID_PARTITIONS, message))
    rf = rf_rule(t)
    if kraft:
        return _kraft_place(state, t, count, rf, cordon_wording)
    active = [b.id for b in state.brokers if b.registered and b.active]
    if rf > len(active):
        return Step(state, M.Ack(INVALID_REPLICATION_FACTOR, f"Unable to replicate the partition {rf} time(s): "
                                 f"The target replication factor of {rf} cannot be reached because only "
                                 f"{len(active)} broker(s) are registered."))
    return _grown(state, t, count, lambda index: tuple(active[(index + k) % len(active)] for k in range(rf)))


def _kraft_place(state: ClusterState, t: Topic, count: int, rf: int, cordon_wording: bool = False) -> Step:
    """StripedReplicaPlacer's checks and rules, without its randomness: the registered brokers are usable
    (fenced ones too, after every unfenced one), the first replica is unfenced, and
    the ISR is the unfenced replicas (createPartitions filters it with isActive), led by its first."""
    registered = [b.id for b in state.brokers if b.registered]
    active = [b for b in registered if state.is_active(b)]
    fenced = [b for b in registered if not state.is_active(b)]
    if not active:  # StripedReplicaPlacer.throwInvalidReplicationFactorIfZero
        return Step(state, M.Ack(INVALID_REPLICATION_FACTOR, "All brokers are currently fenced" + (
            ", or have all their log directories cordoned." if cordon_wording else ".")))
    if rf > len(registered):  # throwInvalidReplicationFactorIfTooFewBrokers
        return Step(state, M.Ack(INVALID_REPLICATION_FACTOR, f"The target replication factor of {rf} cannot be "
                                 f"reached because only {len(registered)} broker(s) are registered" + (
                                     " or some brokers have all their log directories cordoned." if cordon_wording
                                     else ".")))
    return _grown(state, t, count, lambda index: tuple(
        ([active[(index + k) % len(active)] for k in range(len(active))] + fenced)[:rf]))


def _grown(state: ClusterState, t: Topic, count: int, place) -> Step:
    with_log = t.partitions[0].log is not None
    parts = list(t.partitions)
    for index in range(len(parts), count):
        replicas = place(index)
        isr = tuple(b for b in replicas if state.is_active(b))
        log = ReplicaLog(logs=tuple((b, ()) for b in sorted(replicas))) if with_log else None
        parts.append(Partition(replicas=replicas, isr=isr, leader=isr[0], log=log))
    topics = tuple(replace(x, partitions=tuple(parts)) if x.name == t.name else x for x in state.topics)
    return Step(replace(state, topics=topics), M.Ack())


# -- DeleteTopic (bounds: delete_topic) ----------------------------------------------------------------
#
# KRaft (Kafka 3.9): QuorumController.deleteTopics -> ReplicationControlManager.deleteTopic writes one
# RemoveTopicRecord, whatever the topic's partitions are doing; replay(RemoveTopicRecord) drops the
# topic, its partitions (their adding/removing replicas with them), its entry of `reassigningTopics`
# (what ListPartitionReassignments lists) and its configs. A reassignment in flight simply ends with
# its topic.
#
# ZooKeeper (KafkaController / TopicDeletionManager): DeleteTopics writes /admin/delete_topics/<topic>;
# processTopicDeletion enqueues it but marks it ineligible while a partition of it is being reassigned
# (markTopicIneligibleForDeletion "topic reassignment in progress"; onPartitionReassignment does the
# same for a reassignment starting later), and step B of a completing reassignment (a cancel completes
# that way too) calls resumeDeletionForTopics. `ResumeTopicDeletion` is that resumption as its own
# controller step: it deletes a queued topic once nothing of a reassignment names it.
# Not modelled: a reassignment or cancel requested while the topic is queued is refused by Kafka
# (maybeTriggerPartitionReassignment: UNKNOWN_TOPIC_OR_PARTITION "The partition does not exist.");
# here the zk profile still accepts it, and the deletion waits for it.

#: Errors.UNKNOWN_TOPIC_OR_PARTITION's default message (DeleteTopics of a topic that does not exist)
UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."


def _unknown_topic() -> M.Ack:
    return M.Ack(M.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE)


def _names(entries, topic: str) -> bool:
    return any(e[0] == topic for e in entries)


def reassignment_in_progress(state: ClusterState, topic: str) -> bool:
    """Does any partition of `topic` have a reassignment anywhere in the controller's state (zk: the
    controller's context, its pending steps, the admin znode)?"""
    t = state.topic(topic)
    if t is not None and any(p.reassigning for p in t.partitions):
        return True
    zk = state.zk
    if zk is None:
        return False
    return (_names(zk.being_reassigned, topic) or _names(zk.admin_znode, topic) or _names(zk.pending, topic)
            or any(e[0] == topic and (e[3] or e[4]) for e in zk.memory))


def remove_topic(state: ClusterState, topic: str) -> ClusterState:
    """The state without `topic`: its partitions, and every controller entry naming it."""
    state = replace(state, topics=tuple(t for t in state.topics if t.name != topic))
    zk = state.zk
    if zk is not None:
        state = replace(state, zk=replace(
            zk,
            memory=tuple(e for e in zk.memory if e[0] != topic),
            being_reassigned=tuple(e for e in zk.being_reassigned if e[0] != topic),
            admin_znode=tuple(e for e in zk.admin_znode if e[0] != topic),
            pending=tuple(e for e in zk.pending if e[0] != topic),
            deleting=tuple(n for n in zk.deleting if n != topic),
            # the cached leader and ISR (bounds: zk_versions), gone with the partitions
            leadership=None if zk.leadership is None else tuple(e for e in zk.leadership if e[0] != topic),
        ))
    return state


def kraft_delete_topic(state: ClusterState, topic: str) -> Step:
    """ReplicationControlManager.deleteTopic + replay(RemoveTopicRecord): the topic goes at once."""
    if state.topic(topic) is None:
        return Step(state, _unknown_topic())
    return Step(remove_topic(state, topic), M.Ack())


def zk_delete_topic(state: ClusterState, topic: str) -> Step:
    """AdminZkClient.deleteTopic: queue the topic (/admin/delete_topics); an already queued topic is
    accepted again (ZkAdminManager swallows TopicAlreadyMarkedForDeletionException)."""
    if state.topic(topic) is None:
        return Step(state, _unknown_topic())
    zk = state.zk
    if topic in zk.deleting:
        return Step(state, M.Ack())
    return Step(replace(state, zk=replace(zk, deleting=zk.deleting + (topic,))), M.Ack())


def zk_resume_topic_deletion(state: ClusterState, topic: str) -> Step:
    """TopicDeletionManager.resumeDeletions: delete a queued topic that is eligible (no reassignment)."""
    zk = state.zk
    if zk is None or topic not in zk.deleting or reassignment_in_progress(state, topic):
        return Step(state, M.Ack())
    return Step(remove_topic(state, topic), M.Ack())


def delete_topic(profile, state: ClusterState, action) -> Step:
    """DeleteTopic / ResumeTopicDeletion under `profile`: KRaft deletes at once, ZooKeeper queues."""
    if state.kip236 is not None or (state.zk is None and not isinstance(profile, KraftProfile)):
        raise ActionNotSupported(f"profile {profile.name}: topic deletion is modelled for kraft and zk only")
    if state.zk is None:
        if not isinstance(action, A.DeleteTopic):
            raise ActionNotSupported(f"profile {profile.name}: {action} is the ZooKeeper controller's")
        return kraft_delete_topic(state, action.topic)
    if isinstance(action, A.DeleteTopic):
        return zk_delete_topic(state, action.topic)
    return zk_resume_topic_deletion(state, action.topic)


def topic_deletion_actions(state: ClusterState, topics: tuple[str, ...]) -> list:
    """The deletions worth exploring: DeleteTopic of each existing topic not yet queued; zk: the
    controller's ResumeTopicDeletion of each queued topic that is eligible."""
    queued = state.zk.deleting if state.zk is not None else ()
    out: list = [A.DeleteTopic(t) for t in topics if state.topic(t) is not None and t not in queued]
    out += [A.ResumeTopicDeletion(t) for t in queued if not reassignment_in_progress(state, t)]
    return out


__all__ = ["INVALID_PARTITIONS", "INVALID_REPLICATION_FACTOR", "RfRule", "create_partitions", "delete_topic",
           "kraft_delete_topic", "partition_zero_replicas", "partition_zero_replication_factor",
           "reassignment_in_progress", "remove_topic", "topic_deletion_actions", "zk_delete_topic",
           "zk_resume_topic_deletion"]
