"""State values of the reassignment model.

What is modelled: a cluster of brokers (registered, active), topics with
partitions (replicas, adding, removing, isr, leader, epochs), optionally a
replication layer (each replica's log as a tuple of the leader epochs its
records were written in, the leader's high watermark), and for the `zk`
profile the ZooKeeper controller's persisted-versus-in-memory views.

Every value here is an immutable, hashable frozen dataclass built only from
ints, strs, bools, tuples and None, so that two equal states hash equally
(the canonical form) and a state round-trips through JSON (``to_json`` /
``from_json``, documented in docs/state-format.md).

Left out on purpose: log directories, rack awareness, throttles, topic
deletion in flight, controller epochs on the broker side, metadata
propagation delay (brokers see the controller's writes at once).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import ClassVar

NO_LEADER = -1

TopicPartition = tuple[str, int]


def ordered_minus(a: Iterable[int], b: Iterable[int]) -> tuple[int, ...]:
    """`a − b` of KAFKA-SEMANTICS.md: the elements of a not in b, keeping a's order."""
    bs = set(b)
    return tuple(x for x in a if x not in bs)


def distinct(a: Iterable[int]) -> tuple[int, ...]:
    """Remove duplicates keeping the first occurrence (Scala's `distinct`)."""
    seen: set[int] = set()
    out = []
    for x in a:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Broker:
    """A broker as the controller sees it."""

    id: int  # broker id, >= 0
    registered: bool = True  # known to the controller (KRaft: registered; ZK: has a /brokers/ids entry once)
    active: bool = True  # KRaft: registered, unfenced, not shutting down; ZK: live


@dataclass(frozen=True, slots=True)
class ReplicaLog:
    """The replication layer of one partition (seed 004): logs, high watermark, what is committed.

    A log is the tuple of leader epochs in which its records were written, so two
    logs agree on a prefix iff they are equal on it (divergence is visible).
    """

    logs: tuple[tuple[int, tuple[int, ...]], ...]  # (broker id, log) sorted by broker id
    hw: int = 0  # the leader's high watermark: min log end offset over the ISR, never decreasing
    committed: tuple[int, ...] = ()  # ghost: the longest prefix ever below a high watermark

    def log_of(self, broker: int) -> tuple[int, ...]:
        for b, log in self.logs:
            if b == broker:
                return log
        return ()

    def with_log(self, broker: int, log: tuple[int, ...]) -> ReplicaLog:
        d = dict(self.logs)
        d[broker] = log
        return replace(self, logs=tuple(sorted(d.items())))


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition's replica assignment and leadership (for `zk`: as persisted in ZooKeeper)."""

    replicas: tuple[int, ...]  # ordered; replicas[0] is the preferred leader
    isr: tuple[int, ...]  # in-sync replicas, in Kafka's order
    leader: int = NO_LEADER  # a broker id or NO_LEADER (-1)
    adding: tuple[int, ...] = ()  # replicas being added by the ongoing reassignment
    removing: tuple[int, ...] = ()  # replicas being removed by the ongoing reassignment
    leader_epoch: int = 0
    partition_epoch: int = 0  # KRaft partition epoch; for `zk` the state znode's zkVersion
    original: tuple[int, ...] | None = None  # kip236 only: original_replicas recorded at submission
    log: ReplicaLog | None = None  # the replication layer, when switched on

    @property
    def reassigning(self) -> bool:
        return bool(self.adding) or bool(self.removing)

    @property
    def origin(self) -> tuple[int, ...]:
        """`original = replicas − adding` (KAFKA-SEMANTICS.md, partition state)."""
        return ordered_minus(self.replicas, self.adding)

    @property
    def target(self) -> tuple[int, ...]:
        """`target = replicas − removing`."""
        return ordered_minus(self.replicas, self.removing)


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    partitions: tuple[Partition, ...]  # index = partition id
    unclean_leader_election: bool = False  # the topic's unclean.leader.election.enable


@dataclass(frozen=True, slots=True)
class ZkController:
    """The `zk` profile's controller: what lives only in memory, and the admin znode.

    The partitions' replicas/adding/removing/isr/leader/epochs in ClusterState are the
    ZooKeeper (persisted) view; `memory` is the controller context's assignment, which
    onPartitionReassignment updates at different steps than ZooKeeper, and which a
    failover rebuilds from ZooKeeper.
    """

    active: bool = True  # an active controller exists (False between a crash and the next election)
    epoch: int = 1  # controller epoch, bumped at every failover
    # controller context: (topic, partition, replicas, adding, removing) for every partition
    memory: tuple[tuple[str, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...] = ()
    # partitionsBeingReassigned: (topic, partition, target replicas)
    being_reassigned: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    # content of /admin/reassign_partitions: (topic, partition, target replicas)
    admin_znode: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    # the controller's pending work: (topic, partition, next step of onPartitionReassignment)
    pending: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Kip236Admin:
    """The `kip236` profile's admin znodes (seed 001's submission protocol)."""

    cancel_marker: bool = False  # /admin/reassign_cancel exists
    # /admin/reassign_partitions_extra: (topic, partition, replicas)
    extra: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    # route a partition's ongoing reassignment came through: (topic, partition, "legacy" | "requests")
    routes: tuple[tuple[str, int, str], ...] = ()


ThrottledReplica = tuple[str, int, int]  # (topic, partition, broker): "partition:broker" in a topic config


@dataclass(frozen=True, slots=True)
class ReplicationThrottles:
    """The replication-throttle configs kafka-reassign-partitions.sh sets (`--throttle`) and clears.

    `leader` / `follower`: the entries of each topic's `leader.replication.throttled.replicas` /
    `follower.replication.throttled.replicas` (sorted); `brokers`: the brokers whose
    `leader.replication.throttled.rate` / `follower.replication.throttled.rate` are set.
    """

    leader: tuple[ThrottledReplica, ...] = ()
    follower: tuple[ThrottledReplica, ...] = ()
    brokers: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.leader or self.follower or self.brokers)


@dataclass(frozen=True, slots=True)
class ClusterState:
    """The whole model state. Brokers sorted by id, topics sorted by name."""

    #: fields added after the JSON form was fixed: omitted from JSON while they hold their default,
    #: so that older trace and state files stay byte-identical and still decode
    OPTIONAL_JSON_FIELDS: ClassVar[tuple[str, ...]] = ("throttles", "hosted")

    brokers: tuple[Broker, ...]
    topics: tuple[Topic, ...]
    zk: ZkController | None = None  # `zk` profile only
    kip236: Kip236Admin | None = None  # `kip236` profile only
    throttles: ReplicationThrottles | None = None  # the reassignment tool's throttles (bounds: throttles = true)
    # the logs brokers host on disk, (broker, topic, partition) sorted, as each broker last acted on the
    # metadata it replayed (bounds: broker_replicas = true); None when that layer is off
    hosted: tuple[tuple[int, str, int], ...] | None = None

    # -- lookups ---------------------------------------------------------
    def broker(self, broker_id: int) -> Broker | None:
        for b in self.brokers:
            if b.id == broker_id:
                return b
        return None

    def is_registered(self, broker_id: int) -> bool:
        b = self.broker(broker_id)
        return b is not None and b.registered

    def is_active(self, broker_id: int) -> bool:
        b = self.broker(broker_id)
        return b is not None and b.registered and b.active

    def topic(self, name: str) -> Topic | None:
        for t in self.topics:
            if t.name == name:
                return t
        return None

    def partition(self, name: str, index: int) -> Partition | None:
        t = self.topic(name)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index]

    def partitions(self) -> Iterable[tuple[str, int, Partition]]:
        for t in self.topics:
            for i, p in enumerate(t.partitions):
                yield t.name, i, p

    # -- functional updates ------------------------------------------------
    def with_partition(self, name: str, index: int, part: Partition) -> ClusterState:
        topics = tuple(
            replace(t, partitions=t.partitions[:index] + (part,) + t.partitions[index + 1 :])
            if t.name == name
            else t
            for t in self.topics
        )
        return replace(self, topics=topics)

    def with_broker(self, broker: Broker) -> ClusterState:
        brokers = tuple(sorted([b for b in self.brokers if b.id != broker.id] + [broker], key=lambda b: b.id))
        return replace(self, brokers=brokers)


def make_cluster(
    brokers: int | Iterable[int],
    assignments: dict[str, list[list[int]]],
    *,
    unclean: Iterable[str] = (),
    replication_layer: bool = False,
) -> ClusterState:
    """A healthy cluster: every replica in the ISR, the first replica leads, epochs 0.

    `brokers` is a count (ids 0..n-1) or an iterable of ids; `assignments` maps a
    topic name to the replica list of each of its partitions.
    """
    ids = list(range(brokers)) if isinstance(brokers, int) else sorted(brokers)
    unclean = set(unclean)
    topics = []
    for name in sorted(assignments):
        parts = []
        for replicas in assignments[name]:
            r = tuple(replicas)
            log = ReplicaLog(logs=tuple((b, ()) for b in sorted(r))) if replication_layer else None
            parts.append(Partition(replicas=r, isr=r, leader=r[0] if r else NO_LEADER, log=log))
        topics.append(Topic(name=name, partitions=tuple(parts), unclean_leader_election=name in unclean))
    return ClusterState(brokers=tuple(Broker(i) for i in ids), topics=tuple(topics))


__all__ = [
    "NO_LEADER",
    "Broker",
    "ClusterState",
    "Kip236Admin",
    "Partition",
    "ReplicaLog",
    "ReplicationThrottles",
    "Topic",
    "TopicPartition",
    "ZkController",
    "distinct",
    "field",
    "make_cluster",
    "ordered_minus",
]
