"""The brokers' own replica management (issue 26, item 2; bounds broker_isr): the partition leader's ISR
maintenance, the followers' fetchers, and what a replica still does once it is no longer one.

Kafka 3.9.2 kafka/cluster/Partition.scala (the same in 4.x's core), on top of the replication layer
(reference/replication.py: logs, produce, fetch, high watermark):

- **A fetch** (`ReplicaFetch`; Partition.fetchRecords): the leader answers only a replica it knows
  (followerReplicaOrThrow: `getReplica`, the leader's remoteReplicasMap = the assignment it applied;
  NOT_LEADER_OR_FOLLOWER / UNKNOWN_LEADER_EPOCH otherwise) and, in the ZooKeeper era, only a follower at
  its own leader epoch (localLogWithEpochOrThrow: FENCED_LEADER_EPOCH). It records the follower's
  position (Replica.updateFetchStateOrThrow: a follower at the leader's log end is caught up now) and calls
  maybeExpandIsr: no AlterPartition in flight, not yet in the ISR, eligible (isReplicaIsrEligible — KRaft
  KIP-841: not fenced, not shutting down; ZooKeeper: alive) and in sync (isFollowerInSync: its log end at or
  past the high watermark and past the start of the leader's current epoch, KAFKA-7128). Then the leader
  sends AlterPartition(ISR + follower) and holds a PendingExpandIsr (KIP-497).
- **Lag** (`LagExpire`): replica.lag.time.max.ms passes since a follower was last caught up
  (Replica.isCaughtUp: log end equal to the leader's, or caught up within the lag time).
- **Expiry** (`LeaderMaybeShrinkIsr`; maybeShrinkIsr / getOutOfSyncReplicas, the isr-expiration task):
  with nothing in flight, AlterPartition without the ISR members out of sync — lagging, or unknown to the
  leader (`getReplica(...).fold(true)`: an ISR member that is no longer a replica, KAFKA-9672).
- **The answer** (`AlterPartitionArrive`): the controller validates the request as it is now — KRaft
  ReplicationControlManager.alterPartition (stale epochs, members not replicas: INVALID_REQUEST, KIP-841
  INELIGIBLE_REPLICA), ZooKeeper KafkaController.tryProcessAlterPartition — through the profile's own
  `alter_partition`. The leader then holds the committed ISR again (handleAlterPartitionUpdate /
  handleAlterPartitionError).
- **The high watermark** (maybeIncrementLeaderHW) waits for the *maximal* ISR — the committed ISR plus a
  pending joiner (KIP-497: "adding additional replicas to the ISR makes it more restrictive and therefore
  safe") — and for every replica caught up and eligible (shouldWaitForReplicaToJoinIsr).
- **Fetchers** (with broker_replicas): a follower's fetcher starts when it becomes a follower (makeFollower →
  addFetcherForPartitions: KRaft when it replays a change that makes it a replica, ZooKeeper on a
  LeaderAndIsr) and stops before its partition is dropped (ReplicaManager.stopPartitions: "First stop
  fetchers for all partitions", removeFetcherForPartitions, then delete) or when it becomes leader or gets
  StopReplica. A fetcher that still runs fetches with what its broker last applied, whatever the leader
  or the controller hold by now.

Left out: the leader's own view of the assignment lags nowhere (`leader_view`: a KRaft leader replays at
once, a ZooKeeper leader holds the controller's assignment of the LeaderAndIsr it would get next); an AlterPartition refused
with a stale epoch is dropped at once (Kafka keeps it pending until the new metadata arrives, which here
is already there); min.insync.replicas does not hold back the high watermark (the default bound 1).

The strategies a test replaces: `knows_replica`, `in_sync`, `hw_waits_for`, `out_of_sync`, `stopped_fetchers`.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import copy
from dataclasses import replace
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import NO_LEADER, BrokerIsr, ClusterState, Partition

from . import zk_controller as C
from . import zk_requests as R
from .enabled_actions import get_broker_id, get_partition
from .replication import common_prefix_len, refresh_high_watermark
from .steps import Step

InFlight = tuple[str, int, int, tuple[int, ...], int, int, int]
NO_JOINER = -1

#: the step of every other action (Capabilities' own dispatch)
Inner = Callable[[Any, ClusterState, Any], Step]


def with_broker_isr(cluster: ClusterState) -> ClusterState:
    """Switch the layer on: nobody lags, nothing in flight; with broker_replicas every follower hosting
    its log fetches."""
    fetchers = None
    if cluster.hosted is not None:
        fetchers = tuple(sorted(_following(cluster)))
    return replace(cluster, broker_isr=BrokerIsr(fetchers=fetchers))


def _following(cluster: ClusterState) -> set[tuple[int, str, int]]:
    """The (broker, topic, partition) whose broker, by what it last applied, follows the partition with a
    log: KRaft: it hosts the log (applyDelta: makeFollower); ZooKeeper: its last LeaderAndIsr made it a
    follower and it has not stopped."""
    if cluster.requests is not None:
        hosted = set(cluster.hosted or ())
        return {(b, t, i) for b, t, i, _, role in cluster.requests.known if role == R.FOLLOWER and (b, t, i) in hosted}
    out = set()
    for b, t, i in cluster.hosted or ():
        p = cluster.partition(t, i)
        if p is None or b != p.leader:
            out.add((b, t, i))
    return out


def log_end_equal(part: Partition, broker: int) -> bool:
    """Replica.isCaughtUp's first case: the follower's log is the leader's."""
    return part.log is not None and part.log.log_of(broker) == part.log.log_of(part.leader)


def epoch_start(part: Partition) -> int:
    """leaderEpochStartOffsetOpt: where the leader's current epoch starts in its log (its end if none yet)."""
    log = part.log.log_of(part.leader)
    return next((k for k, e in enumerate(log) if e == part.leader_epoch), len(log))


def leader_view(cluster: ClusterState, topic: str, partition: int, part: Partition) -> tuple[int, ...]:
    """The replicas the leader's last metadata named: KRaft the partition's (a change record moves replicas and
    the partition epoch together); zk the controller's assignment its LeaderAndIsr requests carry
    (controllerContext, ahead of ZooKeeper's during phase B: B2 sets RS = TRS in memory, B3 sends it with a new
    leader epoch, B6 writes ZooKeeper)."""
    zk = cluster.zk
    if zk is None:
        return part.replicas
    return (C.memory_of(zk, topic, partition) or C.plain(part.replicas)).replicas


def inflight_of(layer: BrokerIsr, topic: str, partition: int) -> InFlight | None:
    return next((f for f in layer.inflight if f[:2] == (topic, partition)), None)


def maximal_isr(part: Partition, request: InFlight | None) -> tuple[int, ...]:
    """PartitionState.maximalIsr: the committed ISR plus a pending joiner (a request the partition has moved
    past since is no longer pending: the leader reset to the committed state)."""
    if request is None or request[4] == NO_JOINER or request[5] or request[6] or request[4] in part.isr:
        return part.isr
    return part.isr + (request[4],)


class LeaderIsrManager:
    """What the leaders and followers do (Partition / ReplicaManager); each method a replaceable strategy."""

    # -- the leader's checks -----------------------------------------------------------------------
    def knows_replica(self, cluster: ClusterState, topic: str, partition: int, part: Partition, broker: int) -> bool:
        """Partition.getReplica: the follower is in the assignment the leader applied (remoteReplicasMap)."""
        return broker in leader_view(cluster, topic, partition, part) and broker != part.leader

    def eligible(self, cluster: ClusterState, broker: int) -> bool:
        """isReplicaIsrEligible: KRaft (KIP-841) not fenced and not shutting down; ZooKeeper alive."""
        return cluster.is_active(broker)

    def in_sync(self, part: Partition, broker: int) -> bool:
        """isFollowerInSync: the follower's log end is at or past the high watermark and past the start of the
        leader's current epoch (only the prefix it shares with the leader counts: a fetch truncates first)."""
        end = common_prefix_len(part.log.log_of(part.leader), part.log.log_of(broker))
        return end >= part.log.hw and end >= epoch_start(part)

    def out_of_sync(self, cluster: ClusterState, layer: BrokerIsr, topic: str, partition: int,
                    part: Partition) -> tuple[int, ...]:
        """getOutOfSyncReplicas: ISR members other than the leader that are unknown to it or not caught up."""
        return tuple(b for b in part.isr if b != part.leader and (
            not self.knows_replica(cluster, topic, partition, part, b)
            or ((topic, partition, b) in layer.lagging and not log_end_equal(part, b))))

    def hw_waits_for(self, cluster: ClusterState, layer: BrokerIsr, topic: str, partition: int,
                     part: Partition) -> tuple[int, ...]:
        """maybeIncrementLeaderHW: the maximal ISR (KIP-497) and every replica caught up and eligible
        (shouldWaitForReplicaToJoinIsr)."""
        waits = set(maximal_isr(part, inflight_of(layer, topic, partition)))
        for b in part.replicas:
            if (b != part.leader and self.eligible(cluster, b) and (topic, partition, b) not in layer.lagging
                    and self.knows_replica(cluster, topic, partition, part, b)):
                waits.add(b)
        return tuple(sorted(waits))

    # -- fetchers ------------------------------------------------------------------------------------
    def stopped_fetchers(self, before: ClusterState, after: ClusterState) -> set[tuple[int, str, int]]:
        """The fetchers the step stops: those whose broker no longer follows (became leader, StopReplica) and,
        first of all, those of a dropped partition (stopPartitions: removeFetcherForPartitions, then delete)."""
        dropped = set(before.hosted or ()) - set(after.hosted or ())
        return (_following(before) - _following(after)) | dropped

    # -- the actions ---------------------------------------------------------------------------------
    def apply(self, profile: Any, state: ClusterState, action: Any, inner: Inner) -> Step:
        """Any action with the layer on: the layer's own, or `inner`'s; then the leaders' bookkeeping."""
        if isinstance(action, A.ReplicaFetch):
            step = self.replica_fetch(profile, state, action.topic, action.partition, action.broker)
        elif isinstance(action, A.LagExpire):
            step = self.lag_expire(state, action.topic, action.partition, action.broker)
        elif isinstance(action, A.LeaderMaybeShrinkIsr):
            step = self.maybe_shrink_isr(state, action.topic, action.partition)
        elif isinstance(action, A.AlterPartitionArrive):
            step = self.alter_partition_arrive(profile, state, action.topic, action.partition, inner)
        else:
            step = inner(profile, state, action)
        if step.state is state:
            return step
        return Step(self.after_step(state, step.state), step.response)

    def replica_fetch(self, profile: Any, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        """Partition.fetchRecords from follower `broker`, then updateFollowerFetchState → maybeExpandIsr."""
        part = get_partition(state, topic, partition)
        get_broker_id(state, broker)
        layer = state.broker_isr
        if part.leader == NO_LEADER or broker == part.leader or not state.is_active(part.leader):
            return Step(state, M.Ack(M.NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER"))
        if not state.is_active(broker) or (layer.fetchers is not None and (broker, topic, partition) not in layer.fetchers):
            return Step(state, M.Ack(M.NOT_LEADER_OR_FOLLOWER, f"broker {broker} runs no fetcher for {topic}-{partition}"))
        if state.requests is not None:  # ZooKeeper: the fetch carries the follower's leader epoch
            known = R.known_of(state, broker, topic, partition)
            if known is None or known[3] != 0:
                return Step(state, M.Ack(M.FENCED_LEADER_EPOCH, "FENCED_LEADER_EPOCH"))
        if not self.knows_replica(state, topic, partition, part, broker):  # followerReplicaOrThrow
            return Step(state, M.Ack(M.NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER"))
        if broker in part.replicas:
            state = profile.follower_fetch(state, topic, partition, broker).state
        part = state.partition(topic, partition)
        lagging = layer.lagging
        if log_end_equal(part, broker):  # caught up now (lastCaughtUpTimeMs = the fetch's time)
            lagging = tuple(x for x in lagging if x != (topic, partition, broker))
        inflight = layer.inflight
        if (inflight_of(layer, topic, partition) is None and broker not in part.isr
                and self.eligible(state, broker) and self.in_sync(part, broker)):  # maybeExpandIsr
            inflight = tuple(sorted(inflight + ((topic, partition, part.leader, part.isr + (broker,), broker, 0, 0),)))
        return Step(replace(state, broker_isr=replace(layer, lagging=lagging, inflight=inflight)), M.Ack())

    def lag_expire(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        """replica.lag.time.max.ms passes for a follower that is behind the leader's log end."""
        part = get_partition(state, topic, partition)
        layer = state.broker_isr
        if (part.leader == NO_LEADER or broker == part.leader or broker not in part.replicas
                or log_end_equal(part, broker) or (topic, partition, broker) in layer.lagging):
            return Step(state, M.Ack())
        lagging = tuple(sorted(layer.lagging + ((topic, partition, broker),)))
        return Step(replace(state, broker_isr=replace(layer, lagging=lagging)), M.Ack())

    def maybe_shrink_isr(self, state: ClusterState, topic: str, partition: int) -> Step:
        """Partition.maybeShrinkIsr: with nothing in flight, AlterPartition without the out-of-sync members."""
        part = get_partition(state, topic, partition)
        layer = state.broker_isr
        if part.leader == NO_LEADER or not state.is_active(part.leader) or inflight_of(layer, topic, partition):
            return Step(state, M.Ack())
        out = self.out_of_sync(state, layer, topic, partition, part)
        if not out:
            return Step(state, M.Ack())
        new_isr = tuple(b for b in part.isr if b not in out)
        request = (topic, partition, part.leader, new_isr, NO_JOINER, 0, 0)
        return Step(replace(state, broker_isr=replace(layer, inflight=tuple(sorted(layer.inflight + (request,))))),
                    M.Ack())

    def alter_partition_arrive(self, profile: Any, state: ClusterState, topic: str, partition: int,
                               inner: Inner) -> Step:
        """The controller handles the in-flight AlterPartition (with the epochs it was sent with); the leader
        then holds the committed state."""
        layer = state.broker_isr
        request = inflight_of(layer, topic, partition)
        if request is None:
            return Step(state, M.Ack())
        _, _, leader, new_isr, _, le_behind, pe_behind = request
        state = replace(state, broker_isr=replace(layer, inflight=tuple(f for f in layer.inflight if f != request)))
        part = get_partition(state, topic, partition)
        versions = getattr(profile, "alter_partition_versions", (0, 3))
        if getattr(profile, "alter_partition_model_guards", False):
            # zk: KafkaController.tryProcessAlterPartition (3.9.2) checks epochs, recovery state and liveness
            # only, not that members are assigned or caught up: the leader's checks are the ones that count
            profile = copy(profile)
            profile.alter_partition_model_guards = False
        return inner(profile, state, A.AlterPartition(topic, partition, leader, new_isr, part.leader_epoch - le_behind,
                                                      part.partition_epoch - pe_behind, versions[1]))

    # -- after every step -------------------------------------------------------------------------------
    def after_step(self, before: ClusterState, after: ClusterState) -> ClusterState:
        """The leaders' bookkeeping after any step: requests the partition moved past are stale, new replicas
        start lagging and removed ones are forgotten (updateAssignmentAndIsr; a new leader resets: makeLeader
        → resetReplicaState), the high watermark waits for the maximal ISR, fetchers start and stop."""
        layer = after.broker_isr
        if layer is None:
            return after
        lagging, inflight = set(layer.lagging), []
        old = {(t, i): p for t, i, p in before.partitions()}
        for request in layer.inflight:
            p, q = old.get(request[:2]), after.partition(*request[:2])
            if q is None:
                continue
            if p is not None:
                request = request[:5] + (max(request[5], int(q.leader_epoch != p.leader_epoch)),
                                         max(request[6], int(q.partition_epoch != p.partition_epoch)))
            inflight.append(request)
        for t, i, q in after.partitions():
            p = old.get((t, i))
            if p is None:
                continue
            if q.leader != p.leader:  # makeLeader: ISR members caught up now, the others not
                lagging -= {x for x in lagging if x[:2] == (t, i)}
                lagging |= {(t, i, b) for b in q.replicas if b not in q.isr and b != q.leader}
            lagging -= {(t, i, b) for b in set(p.replicas) - set(q.replicas)}
            lagging |= {(t, i, b) for b in set(q.replicas) - set(p.replicas) if b != q.leader}  # ReplicaState.Empty
            lagging -= {(t, i, q.leader)}
        fetchers = layer.fetchers
        if fetchers is not None:
            started = _following(after) - _following(before)
            fetchers = tuple(sorted((set(fetchers) - self.stopped_fetchers(before, after)) | started))
        layer = BrokerIsr(tuple(sorted(x for x in lagging if after.partition(x[0], x[1]) is not None)),
                          tuple(sorted(inflight)), fetchers)
        after = replace(after, broker_isr=layer)
        for t, i, q in list(after.partitions()):
            p = old.get((t, i))
            if q.log is None or p is None or p.log is None:
                continue
            # the profile refreshed the high watermark over the committed ISR; the leader waits for more
            base = replace(q, log=replace(q.log, hw=p.log.hw, committed=p.log.committed))
            r = refresh_high_watermark(base, self.hw_waits_for(after, layer, t, i, base))
            if r.log != q.log:
                after = after.with_partition(t, i, r)
        return after

    # -- what the explorer offers -------------------------------------------------------------------------
    def enabled(self, cluster: ClusterState) -> list[Any]:
        """The layer's actions that would change something, in a fixed order."""
        layer = cluster.broker_isr
        out: list[Any] = []
        for t, i, p in cluster.partitions():
            if p.leader == NO_LEADER or p.log is None:
                continue
            fetching = ([b for b, tt, ii in layer.fetchers if (tt, ii) == (t, i)] if layer.fetchers is not None
                        else list(p.replicas))
            for b in sorted(set(fetching)):
                if b != p.leader and cluster.is_active(b):
                    a = A.ReplicaFetch(t, i, b)
                    if self.replica_fetch(_Plain(), cluster, t, i, b).state != cluster:
                        out.append(a)
            for b in sorted(p.replicas):
                if b != p.leader and not log_end_equal(p, b) and (t, i, b) not in layer.lagging:
                    out.append(A.LagExpire(t, i, b))
            if self.maybe_shrink_isr(cluster, t, i).state is not cluster:
                out.append(A.LeaderMaybeShrinkIsr(t, i))
            if inflight_of(layer, t, i) is not None and not (cluster.zk is not None and cluster.zk.pending):
                # zk: the AlterPartition is a controller event, queued behind a reassignment's run (whose steps
                # are split only for the crashes between them): offered once the run is done
                out.append(A.AlterPartitionArrive(t, i))
        return out


class _Plain:
    """The data plane alone (replication.follower_fetch), to ask whether a fetch would change anything."""

    @staticmethod
    def follower_fetch(state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        from .replication import follower_fetch

        return follower_fetch(state, topic, partition, broker)


__all__ = ["NO_JOINER", "LeaderIsrManager", "inflight_of", "log_end_equal", "maximal_isr", "with_broker_isr"]
