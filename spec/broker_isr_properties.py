"""What Kafka promises of the leaders' ISR maintenance and the followers' fetchers (issue 26, item 2),
checked with `broker_isr = true` (reference/broker_isr.py).

Sources: Kafka 3.9.2 kafka/cluster/Partition.scala (maybeExpandIsr, isFollowerInSync, maybeShrinkIsr,
getOutOfSyncReplicas, maybeIncrementLeaderHW, checkEnoughReplicasReachOffset, PendingExpandIsr),
kafka/server/ReplicaManager.scala (stopPartitions: fetchers stop before the partition is dropped);
KIP-497 (the maximal ISR), KIP-841 (ISR eligibility), KAFKA-7128 (a joiner has caught up to the current
leader epoch), KAFKA-6638 / KAFKA-9672 (a replica no longer assigned leaves the ISR and is not added back).
"""

from __future__ import annotations

from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import NO_LEADER, ClusterState

ISR_PROFILES = ("kraft", "kraft-3.7", "zk")

_INFLIGHT_JOINER, _LE_BEHIND, _PE_BEHIND = 4, 5, 6


def _after(action, nxt: ModelState) -> ClusterState:
    return getattr(action, "after", None) or nxt.cluster


def _shared(p, broker: int) -> int:
    return p.log.shared_with_leader(p.leader, broker)


def _pending_joiners(cluster: ClusterState) -> set[tuple[str, int, int]]:
    """(topic, partition, broker) a leader holds as a pending ISR member (its maximal ISR beyond the ISR)."""
    layer = cluster.broker_isr
    if layer is None:
        return set()
    return {(f[0], f[1], f[_INFLIGHT_JOINER]) for f in layer.inflight
            if f[_INFLIGHT_JOINER] >= 0 and not f[_LE_BEHIND] and not f[_PE_BEHIND]}


def acked_on_every_isr_member(ms: ModelState) -> bool:
    """Every record below the high watermark (what acks=all acknowledged) is on every ISR member's log."""
    for _, _, p in ms.cluster.partitions():
        if p.log is None or p.leader == NO_LEADER:
            continue
        if any(_shared(p, b) < p.log.hw for b in p.isr):
            return False
    return True


def isr_joiner_in_sync(prev: ModelState, action, nxt: ModelState) -> bool:
    """A follower the leader's AlterPartition adds to the ISR had caught up to the high watermark."""
    if prev.cluster.broker_isr is None or type(getattr(action, "action", action)).__name__ != "AlterPartitionArrive":
        return True
    after = _after(action, nxt)
    for (t, i, p), (_, _, q) in zip(prev.cluster.partitions(), after.partitions()):
        if q.log is None or q.leader == NO_LEADER:
            continue
        if any(_shared(q, b) < p.log.hw for b in set(q.isr) - set(p.isr)):
            return False
    return True


def removed_replica_not_readmitted(prev: ModelState, action, nxt: ModelState) -> bool:
    """A broker that is not a replica of the partition is not added to its ISR, committed or pending."""
    if prev.cluster.broker_isr is None:
        return True
    after = _after(action, nxt)
    before_pending = _pending_joiners(prev.cluster)
    for (t, i, p), (_, _, q) in zip(prev.cluster.partitions(), after.partitions()):
        joiners = set(q.isr) - set(p.isr)
        joiners |= {b for tt, ii, b in _pending_joiners(after) - before_pending if (tt, ii) == (t, i)}
        if any(b not in p.replicas or b not in q.replicas for b in joiners):
            return False
    return True


def no_fetcher_without_log(ms: ModelState) -> bool:
    """A broker's replica fetcher runs only for a partition whose log it still hosts."""
    c = ms.cluster
    if c.broker_isr is None or c.broker_isr.fetchers is None:
        return True
    hosted = set(c.hosted or ())
    return all(f in hosted for f in c.broker_isr.fetchers)


def still_assigned(cluster: ClusterState, topic: str, partition: int, p) -> set[int]:
    """The replicas both ZooKeeper / the metadata and (zk) the controller's assignment still name."""
    # twin: reference/broker_isr.py leader_view (intersected with the partition's replicas)
    out = set(p.replicas)
    zk = cluster.zk
    for t, i, replicas, _, _ in zk.memory if zk is not None else ():
        if (t, i) == (topic, partition):
            out &= set(replicas)
    return out


def isr_shrinks_only_out_of_sync(prev: ModelState, action, nxt: ModelState) -> bool:
    """The leader's isr-expiration task asks to remove only followers that are out of sync (lagging behind
    its log end, or no longer assigned)."""
    if prev.cluster.broker_isr is None or type(getattr(action, "action", action)).__name__ != "LeaderMaybeShrinkIsr":
        return True
    after = _after(action, nxt)
    layer = prev.cluster.broker_isr
    for request in after.broker_isr.inflight:
        if request[_INFLIGHT_JOINER] >= 0 or request in layer.inflight:
            continue
        t, i = request[0], request[1]
        p = prev.cluster.partition(t, i)
        for b in set(p.isr) - set(request[3]):
            lagging = (t, i, b) in layer.lagging and p.log.log_of(b) != p.log.log_of(p.leader)
            if b in still_assigned(prev.cluster, t, i, p) and not lagging:
                return False
    return True


BROKER_ISR_PROPERTIES: tuple[Property, ...] = (
    Property.always(
        "acked_on_every_isr_member", acked_on_every_isr_member, description=acked_on_every_isr_member.__doc__,
        source="Partition.maybeIncrementLeaderHW / checkEnoughReplicasReachOffset (Kafka 3.9.2): the high "
        "watermark waits for the maximal ISR (KIP-497 PendingExpandIsr)", promised_by=ISR_PROFILES),
    Property.transition(
        "isr_joiner_in_sync", isr_joiner_in_sync, description=isr_joiner_in_sync.__doc__,
        source="Partition.maybeExpandIsr / isFollowerInSync (Kafka 3.9.2); KAFKA-7128", promised_by=ISR_PROFILES),
    Property.transition(
        "removed_replica_not_readmitted", removed_replica_not_readmitted,
        description=removed_replica_not_readmitted.__doc__,
        source="Partition.fetchRecords / followerReplicaOrThrow, canAddReplicaToIsr (Kafka 3.9.2); "
        "KRaft ReplicationControlManager.alterPartition (INVALID_REQUEST); KAFKA-6638, KAFKA-9672",
        promised_by=ISR_PROFILES),
    Property.always(
        "no_fetcher_without_log", no_fetcher_without_log, description=no_fetcher_without_log.__doc__,
        source="ReplicaManager.stopPartitions (Kafka 3.9.2): removeFetcherForPartitions before the log is "
        "deleted", promised_by=ISR_PROFILES),
    Property.transition(
        "isr_shrinks_only_out_of_sync", isr_shrinks_only_out_of_sync,
        description=isr_shrinks_only_out_of_sync.__doc__,
        source="Partition.maybeShrinkIsr / getOutOfSyncReplicas, Replica.isCaughtUp (replica.lag.time.max.ms)",
        promised_by=ISR_PROFILES),
)

__all__ = ["BROKER_ISR_PROPERTIES", "ISR_PROFILES", "acked_on_every_isr_member", "isr_joiner_in_sync",
           "isr_shrinks_only_out_of_sync", "no_fetcher_without_log", "removed_replica_not_readmitted",
           "still_assigned"]
