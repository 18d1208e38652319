"""What must hold of the `zk` controller's requests to brokers (issue 14, item 1; bounds broker_replicas, zk).

The brokers act on the LeaderAndIsr / StopReplica requests queued for them
(`ClusterState.requests`, reference/zk_requests.py); these properties say what that may and may
not do to the logs they host.

Sources: Kafka 3.9 KafkaController.onPartitionReassignment / stopRemovedReplicasOfReassignedPartition
(StopReplica(delete = true) to the removed replicas, sent to live brokers only, "TODO: Eventually
partition reassignment could use a callback that does retries if deletion failed"),
ReplicaStateMachine (OfflineReplica → StopReplica(delete = false), ReplicaDeletionStarted →
StopReplica(delete = true)), ReplicaManager.becomeLeaderOrFollower (a follower starts fetching only
from the LeaderAndIsr that makes it one) and stopReplicas; KAFKA-16120 (StopReplica without delete
left stray partitions), KAFKA-13972 (stray replicas after a cancelled reassignment).
"""

from __future__ import annotations

from kreassign.spec.fairness import Fairness
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import ClusterState

ZK = ("zk",)
TOLD = ("leader", "follower")  # roles a handled LeaderAndIsr gives (a stopped partition no longer fetches)


def _hosted(cluster: ClusterState) -> set:
    return set(cluster.hosted or ())


def last_in_sync_log_kept(prev: ModelState, action, nxt: ModelState) -> bool:
    """No step deletes the log of the last live in-sync replica: a deleted log's broker is not in the
    partition's ISR, or another ISR member is live after the step."""
    if prev.cluster.requests is None:
        return True
    after = getattr(action, "after", None) or nxt.cluster
    for b, t, i in _hosted(prev.cluster) - _hosted(after):
        p = prev.cluster.partition(t, i)
        if p is not None and b in p.isr and not any(after.is_active(x) for x in p.isr if x != b):
            return False
    return True


def isr_joiner_told_by_leader_and_isr(prev: ModelState, action, nxt: ModelState) -> bool:
    """A follower joins the ISR only after its broker handled a LeaderAndIsr that made it a replica (it
    leads or follows the partition in memory; a newly elected leader is told by the request that follows)."""
    told = prev.cluster.requests
    if told is None:
        return True
    after = getattr(action, "after", None) or nxt.cluster
    roles = {(b, t, i) for b, t, i, _, role in told.known if role in TOLD}
    for (t, i, p), (_, _, q) in zip(prev.cluster.partitions(), after.partitions()):
        if any((b, t, i) not in roles for b in set(q.isr) - set(p.isr) if b != q.leader):
            return False
    return True


def quiet(ms: ModelState) -> bool:
    """The premise: the controller has no work left and every live broker's queue is drained (a dead
    broker has no queue: removeBroker dropped it)."""
    c = ms.cluster
    zk = c.zk
    if zk is not None and zk.active and zk.pending:
        return False
    return not any(c.is_active(b) for b, _ in (c.requests.queues if c.requests is not None else ()))


def no_live_strays(ms: ModelState) -> bool:
    """Goal: no live broker hosts a log of a partition it is not a replica of (ZooKeeper's replicas)."""
    c = ms.cluster
    for b, t, i in c.hosted or ():
        p = c.partition(t, i)
        if c.is_active(b) and (p is None or b not in p.replicas):
            return False
    return True


ZK_REQUEST_PROPERTIES: tuple[Property, ...] = (
    Property.transition("last_in_sync_log_kept", last_in_sync_log_kept, description=last_in_sync_log_kept.__doc__,
                        source="ReplicaManager.stopReplicas (StopReplica delete = true deletes the log); "
                        "KafkaController.stopRemovedReplicasOfReassignedPartition", promised_by=ZK),
    Property.transition("isr_joiner_told_by_leader_and_isr", isr_joiner_told_by_leader_and_isr,
                        description=isr_joiner_told_by_leader_and_isr.__doc__,
                        source="ReplicaManager.becomeLeaderOrFollower / makeFollowers (a follower fetches once "
                        "told)", promised_by=ZK),
    Property.eventually(
        "no_strays_once_quiet", no_live_strays,
        description="In every fair run in which, from some point on, the controller has no work left and every "
        "live broker's request queue is drained, eventually no live broker hosts a log of a partition it is not "
        "a replica of.",
        source="KafkaController.stopRemovedReplicasOfReassignedPartition; KAFKA-16120, KAFKA-13972",
        promised_by=ZK, extra={"fairness": Fairness(quiet)},
    ),
)

ZK_REQUEST_PROPERTY_NAMES = tuple(p.name for p in ZK_REQUEST_PROPERTIES)

__all__ = ["ZK_REQUEST_PROPERTIES", "ZK_REQUEST_PROPERTY_NAMES", "isr_joiner_told_by_leader_and_isr",
           "last_in_sync_log_kept", "no_live_strays", "quiet"]
