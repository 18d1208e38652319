"""/admin/reassign_partitions batches and the forced cancel (issue 26, item 3), checked with `znode_batch = true`.

What the ZooKeeper controller promises about the znode the tool writes a batch into (Kafka 3.9.2
KafkaController: processZkPartitionReassignment, maybeTriggerPartitionReassignment,
removePartitionFromReassigningPartitions, maybeRemoveFromZkReassignment, initializePartitionReassignments):

- an entry leaves the znode only when its partition completed with those replicas, or when someone
  acted on that partition explicitly (an API reassignment or cancel, which takes precedence, KAFKA-9089;
  the operator deleting the znode; the topic's deletion): never because *another* partition of the
  batch completed (KAFKA-6193: Kafka 1.0 deleted the znode early on a failover);
- every entry the znode holds is being reassigned by the active controller towards its replicas: no
  entry is silently forgotten (KAFKA-9478: entries nobody acts on keep the znode, and so every later
  batch, blocked for good);
- after the forced cancel (delete the znode, bounce the controller; KAFKA-6304), a partition left
  half-moved is in a state Kafka documents: resumed by the new controller (Kafka >= 2.4,
  maybeResumeReassignments from the topic znode's adding / removing replicas), or a plain assignment
  (Kafka < 2.4: target ∪ original) — never reassigning in ZooKeeper with no controller working on it.
"""

from __future__ import annotations

from typing import Any

from kreassign.spec.fairness import Fairness
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import NO_LEADER, ClusterState

Entry = tuple[str, int, tuple[int, ...]]

# the actions that may remove a partition's entry explicitly: those naming the partition ...
_NAMING = ("Reassign", "Cancel", "ToolExecute", "ToolCancel")
# ... and those acting on every partition (or every partition of a topic)
_ALL = ("ZnodeDelete", "CancelAll")
_TOPIC = ("CancelTopic", "DeleteTopic", "ResumeTopicDeletion")


def _explicit(action: Any, topic: str, partition: int) -> bool:
    """Did this action ask for the partition's znode entry to go (KafkaController 3.9.2
    processApiPartitionReassignment: maybeRemoveFromZkReassignment for every partition of the request)?"""
    name = type(action).__name__
    if name in _ALL:
        return True
    if name in _TOPIC:
        return action.topic == topic
    if name in _NAMING:
        return (action.topic, action.partition) == (topic, partition)
    if name == "AlterReassignments":
        topics = action.request.topics
        if topics is None:
            return True
        return any(tr.name == topic and (tr.partitions is None or any(p.partition_index == partition
                                                                      for p in tr.partitions)) for tr in topics)
    return False


def entries_dropped_early(prev: ModelState, label: Any, nxt: ModelState) -> list[Entry]:
    """The /admin/reassign_partitions entries this edge removed although their partition did not complete
    with those replicas and the action did not name it."""
    before = prev.cluster.zk
    cluster: ClusterState = getattr(label, "after", None) or nxt.cluster
    after = cluster.zk
    if before is None or after is None or not before.admin_znode:
        return []
    action = getattr(label, "action", label)
    kept = set(after.admin_znode)
    out = []
    for t, p, r in before.admin_znode:
        if (t, p, r) in kept or _explicit(action, t, p):
            continue
        part = cluster.partition(t, p)
        if part is None or (not part.reassigning and part.replicas == tuple(r)):
            continue  # the topic is gone, or the partition completed with these replicas (B7)
        out.append((t, p, r))
    return out


def znode_entry_removed_only_when_done(prev: ModelState, label: Any, nxt: ModelState) -> bool:
    """An entry leaves /admin/reassign_partitions only when its partition completed with those replicas or an
    action named it (API reassign / cancel, the operator's delete, topic deletion) — never because another
    partition of the batch completed."""
    return not entries_dropped_early(prev, label, nxt)


def entries_not_acted_on(cluster: ClusterState) -> list[Entry]:
    """Entries of /admin/reassign_partitions the active controller is not reassigning towards their replicas."""
    zk = cluster.zk
    if zk is None or not zk.active:
        return []
    targets = {(t, p): r for t, p, r in zk.being_reassigned}
    return [(t, p, r) for t, p, r in zk.admin_znode if targets.get((t, p)) != tuple(r)]


def znode_entries_being_reassigned(ms: ModelState) -> bool:
    """Every entry /admin/reassign_partitions holds is being reassigned by the active controller towards its
    replicas: no partition of a batch is silently forgotten."""
    return not entries_not_acted_on(ms.cluster)


def orphan_reassignments(cluster: ClusterState) -> list[tuple[str, int]]:
    """Partitions reassigning in ZooKeeper (adding / removing replicas in the topic znode) that an idle, active
    controller is not reassigning. The forced-cancel slice of zk_memory_properties.cache_disagreements."""
    zk = cluster.zk
    if zk is None or not zk.active or zk.pending:
        return []
    working = {(t, p) for t, p, _ in zk.being_reassigned}
    return [(t, i) for t, i, part in cluster.partitions() if part.reassigning and (t, i) not in working]


def half_moved_partition_resumed(ms: ModelState) -> bool:
    """A partition left half-moved (by the forced cancel or anything else) is either being reassigned by the
    controller or holds a plain assignment: never adding / removing replicas in ZooKeeper that no controller
    works on (ListPartitionReassignments would report it for ever, nothing would finish it)."""
    return not orphan_reassignments(ms.cluster)


SOURCE = "Kafka 3.9.2 KafkaController"
ZNODE_BATCH_PROPERTIES = (
    Property.transition(
        "znode_entry_removed_only_when_done", znode_entry_removed_only_when_done,
        description=znode_entry_removed_only_when_done.__doc__,
        source=SOURCE + ".removePartitionFromReassigningPartitions / maybeRemoveFromZkReassignment / "
        "processApiPartitionReassignment; KAFKA-6193 (1.1.0), KAFKA-9089 (2.5.0)",
        promised_by=("zk",)),
    Property.always(
        "znode_entries_being_reassigned", znode_entries_being_reassigned,
        description=znode_entries_being_reassigned.__doc__,
        source=SOURCE + ".processZkPartitionReassignment / maybeTriggerPartitionReassignment / "
        "initializePartitionReassignments; KAFKA-9478",
        promised_by=("zk",)),
    Property.always(
        "half_moved_partition_resumed", half_moved_partition_resumed,
        description=half_moved_partition_resumed.__doc__,
        source=SOURCE + ".initializePartitionReassignments / maybeResumeReassignments (KIP-455, KAFKA-8345, "
        "2.4.0); the forced cancel: KAFKA-6304",
        promised_by=("zk",)),
)

def znode_entries_live_and_led(ms: ModelState) -> bool:
    """Every entry of /admin/reassign_partitions names live target replicas and a partition with a leader."""
    c = ms.cluster
    for t, p, r in c.zk.admin_znode if c.zk is not None else ():
        part = c.partition(t, p)
        if part is None or part.leader == NO_LEADER or not all(c.is_active(b) for b in r):
            return False
    return True


def znode_deleted(ms: ModelState) -> bool:
    return ms.cluster.zk is None or not ms.cluster.zk.admin_znode


#: with `fair = true` too: the batch ends
ZNODE_BATCH_LIVENESS = Property.eventually(
    "znode_batch_drains", znode_deleted,
    description="In every fair run in which, from some point on, every entry of /admin/reassign_partitions names "
    "live target replicas of a partition with a leader, the znode is eventually deleted: every partition of the "
    "batch is moved (or explicitly cancelled), none is left to block the next batch for ever.",
    source=SOURCE + ".maybeRemoveFromZkReassignment (the znode deleted with its last entry); KAFKA-9478",
    promised_by=("zk",),
    extra={"fairness": Fairness(znode_entries_live_and_led)},
)

__all__ = ["ZNODE_BATCH_LIVENESS", "ZNODE_BATCH_PROPERTIES", "entries_dropped_early", "entries_not_acted_on", "half_moved_partition_resumed",
           "orphan_reassignments", "znode_deleted", "znode_entries_being_reassigned", "znode_entries_live_and_led",
           "znode_entry_removed_only_when_done"]
