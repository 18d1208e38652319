"""The `zk` controller's requests to brokers, in flight, and what brokers do with them (issue 14, item 1).

On with bounds broker_replicas for the `zk` profile (`ClusterState.requests`). Kafka 3.9:

- **Sending** (ControllerChannelManager / ControllerBrokerRequestBatch): one queue and one
  RequestSendThread per broker, so requests to one broker arrive in order and requests to
  different brokers interleave freely. A batch goes to live brokers only
  (`liveOrShuttingDownBrokerIds`); `removeBroker` drops a dead broker's queue, and a controller
  that resigns or dies drops them all. Within one batch a broker gets one LeaderAndIsr per
  partition (the map keeps the last one put).
- **LeaderAndIsr** (`addLeaderAndIsrRequestForBrokers`): the leader, ISR and leader epoch
  (`partitionLeadershipInfo`) and the controller's full assignment (replicas, adding, removing).
- **StopReplica** (`addStopReplicaRequestForBrokers`): the partition's current leader epoch and
  deletePartition: false when a replica goes OfflineReplica, true at ReplicaDeletionStarted.
- **UpdateMetadata** is left out: it feeds the broker's metadata cache (clients, KIP-841's ISR
  eligibility), which nothing here models; queueing it would only multiply interleavings.
- **The broker** (ReplicaManager.becomeLeaderOrFollower): a LeaderAndIsr whose leader epoch is
  not newer than the one the broker holds is ignored (ZooKeeper mode); one that names the
  broker a replica makes it leader or follower at that epoch and creates the log (makeLeader /
  makeFollower → createLogIfNotExists). One that does not name it is ignored.
  (ReplicaManager.stopReplicas): accepted if the broker holds no partition (deleted even so,
  "in case replica manager doesn't hold them anymore") or the request's epoch is not older
  than the broker's; delete=false stops the fetcher (the partition stays, role "stopped"),
  delete=true removes the partition and deletes the log.
- A broker that fails loses its queue and its memory, not its logs.

Epochs in requests and in brokers' memory are stored relative to the partition's current leader
epoch and compacted (`to_relative`), so the explorer's epoch renaming leaves them alone and they
stay finite; the zk profile turns them absolute for the length of one action (`to_absolute`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from kreassign.spec.state import NO_LEADER, BrokerRequests, ClusterState, ControlRequest

LEADER_AND_ISR = "LeaderAndIsr"
STOP_REPLICA = "StopReplica"
LEADER, FOLLOWER, STOPPED = "leader", "follower", "stopped"

Known = tuple[int, str, int, int, str]  # (broker, topic, partition, leader epoch, role)


# -- the layer and its canonical form ------------------------------------------------------------


def initial_requests(cluster: ClusterState) -> BrokerRequests:
    """A fresh cluster: no request in flight; every live replica leads or follows at the current epoch."""
    known = []
    for t, i, p in cluster.partitions():
        for b in p.replicas:
            if cluster.is_active(b):
                known.append((b, t, i, 0, LEADER if b == p.leader else FOLLOWER))
    return BrokerRequests(queues=(), known=tuple(sorted(known)))


def queue_of(cluster: ClusterState, broker: int) -> tuple[ControlRequest, ...]:
    for b, q in cluster.requests.queues if cluster.requests is not None else ():
        if b == broker:
            return q
    return ()


def known_of(cluster: ClusterState, broker: int, topic: str, partition: int) -> Known | None:
    for k in cluster.requests.known if cluster.requests is not None else ():
        if k[:3] == (broker, topic, partition):
            return k
    return None


def _with_queue(cluster: ClusterState, broker: int, queue: tuple[ControlRequest, ...]) -> ClusterState:
    r = cluster.requests
    rows = [(b, q) for b, q in r.queues if b != broker]
    if queue:
        rows.append((broker, queue))
    return replace(cluster, requests=replace(r, queues=tuple(sorted(rows, key=lambda row: row[0]))))


def _with_known(cluster: ClusterState, broker: int, topic: str, partition: int, entry: Known | None) -> ClusterState:
    r = cluster.requests
    rows = [k for k in r.known if k[:3] != (broker, topic, partition)]
    if entry is not None:
        rows.append(entry)
    return replace(cluster, requests=replace(r, known=tuple(sorted(rows))))


def _map_epochs(cluster: ClusterState, fn) -> ClusterState:
    """Rewrite every epoch of the layer with fn(epoch, partition's current leader epoch, topic, partition)."""
    r = cluster.requests
    if r is None or (not r.queues and not r.known):
        return cluster
    current = {(t, i): p.leader_epoch for t, i, p in cluster.partitions()}
    queues = tuple((b, tuple(replace(q, leader_epoch=fn(q.leader_epoch, current.get((q.topic, q.partition), 0),
                                                        q.topic, q.partition)) for q in queue))
                   for b, queue in r.queues)
    known = tuple(sorted((b, t, i, fn(e, current.get((t, i), 0), t, i), role) for b, t, i, e, role in r.known))
    return replace(cluster, requests=BrokerRequests(queues, known))


def to_absolute(cluster: ClusterState) -> ClusterState:
    """The stored (relative) epochs as Kafka's: the partition's current leader epoch + offset."""
    return _map_epochs(cluster, lambda e, cur, t, i: cur + e)


def to_relative(cluster: ClusterState) -> ClusterState:
    """Kafka's epochs as stored: order-preserving and dense below the current epoch (current → 0, the
    next older epoch mentioned → -1, ...). Only comparisons between these epochs and the current one
    are ever made, so the renaming changes no behaviour and keeps the states finite."""
    r = cluster.requests
    if r is None or (not r.queues and not r.known):
        return cluster
    current = {(t, i): p.leader_epoch for t, i, p in cluster.partitions()}
    used: dict[tuple[str, int], set[int]] = {}
    for _, queue in r.queues:
        for q in queue:
            used.setdefault((q.topic, q.partition), set()).add(q.leader_epoch)
    for _, t, i, e, _ in r.known:
        used.setdefault((t, i), set()).add(e)
    rank: dict[tuple[str, int], dict[int, int]] = {}
    for tp, epochs in used.items():
        cur = current.get(tp, 0)
        below = sorted({e for e in epochs if e < cur}, reverse=True)
        rank[tp] = {cur: 0, **{e: -(k + 1) for k, e in enumerate(below)}}
    return _map_epochs(cluster, lambda e, cur, t, i: rank[(t, i)].get(e, e - cur))


# -- the controller's side: queueing requests ----------------------------------------------------------


def _assignment(cluster: ClusterState, topic: str, partition: int):
    """controllerContext.partitionFullReplicaAssignment (the controller's memory; ZooKeeper's if unknown)."""
    zk = cluster.zk
    for t, i, replicas, adding, removing in zk.memory if zk is not None else ():
        if (t, i) == (topic, partition):
            return replicas, adding, removing
    p = cluster.partition(topic, partition)
    return p.replicas, p.adding, p.removing


def _enqueue(cluster: ClusterState, broker: int, request: ControlRequest) -> ClusterState:
    if not cluster.is_active(broker):  # sendRequest: "since it is offline" (no queue for a dead broker)
        return cluster
    return _with_queue(cluster, broker, queue_of(cluster, broker) + (request,))


def send_leader_and_isr(cluster: ClusterState, topic: str, partition: int, recipients: Iterable[int]) -> ClusterState:
    """addLeaderAndIsrRequestForBrokers + sendRequestsToBrokers: the partition's current leadership and the
    controller's assignment to each live recipient (once each)."""
    if cluster.requests is None:
        return cluster
    p = cluster.partition(topic, partition)
    replicas, adding, removing = _assignment(cluster, topic, partition)
    request = ControlRequest(LEADER_AND_ISR, topic, partition, p.leader_epoch, p.leader, p.isr, replicas, adding,
                             removing)
    for b in dict.fromkeys(recipients):
        if b >= 0 and not _already_queued(queue_of(cluster, b), request):
            cluster = _enqueue(cluster, b, request)
    return cluster


def _already_queued(queue: tuple[ControlRequest, ...], request: ControlRequest) -> bool:
    """Is the same LeaderAndIsr queued with no StopReplica of the partition after it? The broker would ignore
    the second copy (same leader epoch), so it is not queued again (as within one of Kafka's batches)."""
    for k in range(len(queue) - 1, -1, -1):
        q = queue[k]
        if (q.topic, q.partition) != (request.topic, request.partition):
            continue
        if q == request:
            return True
        if q.kind == STOP_REPLICA:
            return False
    return False


def send_stop_replica(cluster: ClusterState, topic: str, partition: int, brokers: Iterable[int],
                      delete: bool) -> ClusterState:
    """addStopReplicaRequestForBrokers + send: StopReplica with the partition's current leader epoch."""
    if cluster.requests is None:
        return cluster
    p = cluster.partition(topic, partition)
    request = ControlRequest(STOP_REPLICA, topic, partition, p.leader_epoch, delete=delete)
    for b in dict.fromkeys(brokers):
        cluster = _enqueue(cluster, b, request)
    return cluster


def broker_gone(cluster: ClusterState, broker: int) -> ClusterState:
    """The broker fails: removeBroker drops its queue; the broker process loses its memory (not its logs)."""
    r = cluster.requests
    if r is None:
        return cluster
    return replace(cluster, requests=BrokerRequests(tuple(row for row in r.queues if row[0] != broker),
                                                    tuple(k for k in r.known if k[0] != broker)))


def controller_gone(cluster: ClusterState) -> ClusterState:
    """The controller dies or resigns: its channel manager, every queue with it, is gone."""
    r = cluster.requests
    return cluster if r is None or not r.queues else replace(cluster, requests=replace(r, queues=()))


# -- the broker's side: handling the head of its queue ----------------------------------------------------


def _host(cluster: ClusterState, broker: int, topic: str, partition: int, hosted: bool) -> ClusterState:
    logs = set(cluster.hosted or ())
    (logs.add if hosted else logs.discard)((broker, topic, partition))
    return replace(cluster, hosted=tuple(sorted(logs)))


def become_leader_or_follower(cluster: ClusterState, broker: int, request: ControlRequest) -> ClusterState:
    """ReplicaManager.becomeLeaderOrFollower for one partition (absolute epochs)."""
    known = known_of(cluster, broker, request.topic, request.partition)
    if known is not None and request.leader_epoch <= known[3]:
        return cluster  # an older or the same leader epoch: ignored (ZooKeeper controller)
    if broker not in request.replicas:
        return cluster  # "itself is not in assigned replica list": ignored
    role = LEADER if request.leader == broker else FOLLOWER
    cluster = _with_known(cluster, broker, request.topic, request.partition,
                          (broker, request.topic, request.partition, request.leader_epoch, role))
    return _host(cluster, broker, request.topic, request.partition, True)  # createLogIfNotExists


def stop_replica(cluster: ClusterState, broker: int, request: ControlRequest) -> ClusterState:
    """ReplicaManager.stopReplicas for one partition (absolute epochs)."""
    known = known_of(cluster, broker, request.topic, request.partition)
    if known is not None and request.leader_epoch < known[3]:
        return cluster  # FENCED_LEADER_EPOCH: ignored
    if request.delete:
        cluster = _with_known(cluster, broker, request.topic, request.partition, None)
        return _host(cluster, broker, request.topic, request.partition, False)
    if known is None:
        return cluster
    return _with_known(cluster, broker, request.topic, request.partition, known[:4] + (STOPPED,))


def pop(cluster: ClusterState, broker: int) -> tuple[ClusterState, ControlRequest | None]:
    """Take the head of the broker's queue (None if empty or the broker is down)."""
    queue = queue_of(cluster, broker)
    if not queue or not cluster.is_active(broker):
        return cluster, None
    return _with_queue(cluster, broker, queue[1:]), queue[0]


def fetching_follower(cluster: ClusterState, topic: str, partition: int, broker: int) -> bool:
    """Does the broker follow the partition at its current leader epoch with a log to fetch into?"""
    p = cluster.partition(topic, partition)
    known = known_of(cluster, broker, topic, partition)
    return (known is not None and known[4] == FOLLOWER and known[3] == 0 and p is not None
            and p.leader != NO_LEADER and (broker, topic, partition) in (cluster.hosted or ()))


__all__ = ["FOLLOWER", "LEADER", "LEADER_AND_ISR", "STOPPED", "STOP_REPLICA", "become_leader_or_follower",
           "broker_gone", "controller_gone", "fetching_follower", "initial_requests", "known_of", "pop", "queue_of",
           "send_leader_and_isr", "send_stop_replica", "stop_replica", "to_absolute", "to_relative"]
