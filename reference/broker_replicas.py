"""Broker-side replica lifecycle (issue 14, item 1): which logs each broker hosts, as it last acted on
the metadata it has replayed.

KRaft brokers follow the metadata log: `ReplicaManager.applyDelta` (Kafka 3.8) turns each
partition change into local changes — a broker that becomes a replica creates the partition's
log and starts following or leading (`localChanges.leaders/followers`), one that is no longer a
replica stops it and deletes the log (`localChanges.deletes`, `stopPartitions(...,
deleteLocalLog = true)`). A broker that is down replays nothing until it is back. The ZooKeeper
era did the same through LeaderAndIsr and StopReplica(delete = true) requests; its stray-replica
bugs came from deletions that did not happen (KAFKA-16120: StopReplica sent with delete = false
during migration; KAFKA-13972: a StopReplica ignored because the epoch was not bumped after a
cancelled reassignment; KAFKA-14616: a topic recreated while a broker was offline).

Here the metadata a broker replays is the partition state of the cluster; a broker acts on it
as one step (`BrokerReplay(b)`), so everything between two such steps is the broker lagging
behind. A follower can fetch, and so be added to the ISR, only once it hosts the log: the
replica manager creates the log when the metadata makes it a replica.

The ZooKeeper era (`zk` profile, whose state then carries `ClusterState.requests`): brokers act on
the controller's LeaderAndIsr / StopReplica requests, queued per broker (`zk_requests`), and
`BrokerReplay(b)` is broker b handling the head of its queue.

The strategies a test replaces are `BrokerReplicaManager.deletes` (which logs a replay removes),
`handle` (what a zk broker does with one request) and `can_fetch`.
"""

from __future__ import annotations

from dataclasses import replace

from kreassign.spec import messages as M
from kreassign.spec.state import ClusterState

from . import zk_requests as R
from .enabled_actions import get_broker_id
from .steps import Step

Hosted = tuple[int, str, int]  # (broker, topic, partition)


def assigned(cluster: ClusterState, broker: int) -> set[tuple[str, int]]:
    """The partitions the metadata says `broker` is a replica of (adding and removing ones included)."""
    return {(t, i) for t, i, p in cluster.partitions() if broker in p.replicas}


def initial_hosted(cluster: ClusterState) -> tuple[Hosted, ...]:
    """Every replica of a freshly created cluster hosts its log."""
    return tuple(sorted((b, t, i) for t, i, p in cluster.partitions() for b in p.replicas))


def with_broker_replicas(cluster: ClusterState) -> ClusterState:
    """Switch the layer on (bounds broker_replicas): every replica hosts its log; for `zk`, no request is
    in flight and every live replica knows its role at the current leader epoch."""
    requests = R.initial_requests(cluster) if cluster.zk is not None else None
    return replace(cluster, hosted=initial_hosted(cluster), requests=requests)


def hosts(cluster: ClusterState, broker: int, topic: str, partition: int) -> bool:
    return cluster.hosted is None or (broker, topic, partition) in cluster.hosted


def strays(cluster: ClusterState) -> tuple[Hosted, ...]:
    """Logs hosted by a broker that is not a replica of their partition."""
    if cluster.hosted is None:
        return ()
    out = []
    for b, t, i in cluster.hosted:
        p = cluster.partition(t, i)
        if p is None or b not in p.replicas:
            out.append((b, t, i))
    return tuple(out)


class BrokerReplicaManager:
    """What a broker does with the metadata it replays (ReplicaManager.applyDelta)."""

    def deletes(self, cluster: ClusterState, broker: int, mine: set[tuple[str, int]]) -> set[tuple[str, int]]:
        """The hosted logs the replay deletes: those of partitions the broker is no longer a replica of."""
        return {(t, i) for b, t, i in cluster.hosted or () if b == broker and (t, i) not in mine}

    def replay(self, cluster: ClusterState, broker: int) -> Step:
        """BrokerReplay(b): create the logs of the partitions b is a replica of, delete the others'
        (zk: handle the head of b's request queue)."""
        b = cluster.broker(get_broker_id(cluster, broker))
        if cluster.hosted is None or not (b.registered and b.active):
            return Step(cluster, M.Ack())
        if cluster.requests is not None:
            rest, request = R.pop(cluster, broker)
            if request is None:
                return Step(cluster, M.Ack())
            return Step(R.to_relative(self.handle(R.to_absolute(rest), broker, request_absolute(cluster, request))),
                        M.Ack())
        mine = assigned(cluster, broker)
        gone = self.deletes(cluster, broker, mine)
        kept = {h for h in cluster.hosted if h[0] != broker or (h[1], h[2]) not in gone}
        kept |= {(broker, t, i) for t, i in mine - gone}
        return Step(replace(cluster, hosted=tuple(sorted(kept))), M.Ack())

    def handle(self, cluster: ClusterState, broker: int, request) -> ClusterState:
        """zk: what the broker does with one request (epochs absolute): becomeLeaderOrFollower / stopReplicas."""
        if request.kind == R.LEADER_AND_ISR:
            return R.become_leader_or_follower(cluster, broker, request)
        return R.stop_replica(cluster, broker, request)

    def can_fetch(self, cluster: ClusterState, topic: str, partition: int, broker: int) -> bool:
        """A follower fetches (and can join the ISR) only once it hosts the partition's log (zk: and
        follows it at the current leader epoch, as the LeaderAndIsr requests it handled told it)."""
        if cluster.requests is not None:
            return R.fetching_follower(cluster, topic, partition, broker)
        return hosts(cluster, broker, topic, partition)

    def replay_changes(self, cluster: ClusterState, broker: int) -> bool:
        """Would BrokerReplay(broker) change anything? (the explorer offers only replays that do; zk: only
        a live broker with a request queued)"""
        if cluster.requests is not None:
            return cluster.is_active(broker) and bool(R.queue_of(cluster, broker))
        return self.replay(cluster, broker).state != cluster


def request_absolute(cluster: ClusterState, request):
    """A stored request with its leader epoch as Kafka's (the partition's current epoch + offset)."""
    p = cluster.partition(request.topic, request.partition)
    return replace(request, leader_epoch=request.leader_epoch + (p.leader_epoch if p is not None else 0))


__all__ = ["BrokerReplicaManager", "Hosted", "assigned", "hosts", "initial_hosted", "strays", "with_broker_replicas"]
