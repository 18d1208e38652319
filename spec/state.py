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
propagation delay (brokers see the controller's writes at once; except for
`zk` with broker_replicas, where the controller's requests wait in per-broker
queues, `BrokerRequests`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

NO_LEADER = -1


def replace(obj: Any, /, **changes: Any) -> Any:
    """`dataclasses.replace`, with the same result, made fast for the frozen values of the model.

    The explorer replaces partitions, topics and clusters millions of times, and the generic
    `dataclasses.replace` walks the fields in Python on every call; this one calls a function
    generated once per class (`_replacer`) that handles every field, changed or kept, in line.
    """
    return _REPLACERS[type(obj)](obj, **changes)


class _Replacers(dict):
    """class -> its `replace`, made on first use."""

    def __missing__(self, cls: type) -> Callable[..., Any]:
        fn = self[cls] = _replacer(cls)
        return fn


_REPLACERS = _Replacers()
_KEEP = object()  # "this field is not changed"


def _replacer(cls: type) -> Callable[..., Any]:
    """`replace` for one dataclass: `def r(obj, *, a=_KEEP, ...)` that makes the new value from each field,
    `obj.a if a is _KEEP else a`. A frozen slots class whose `__init__` is the generated one (it only
    stores the fields) gets its slots set directly, which is what that `__init__` does, at half the cost
    of its `object.__setattr__` calls; any other dataclass gets its constructor called."""
    fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else None
    if not fields or any(not f.init or f.kw_only or f.name.startswith("_") for f in fields):
        return dataclasses.replace  # the general case (init=False / keyword-only fields): the library's
    names = [f.name for f in fields]
    params = ", ".join(f"{n}=_KEEP" for n in names)
    values = [f"obj.{n} if {n} is _KEEP else {n}" for n in names]
    namespace: dict[str, Any] = {"_KEEP": _KEEP, "cls": cls, "new": object.__new__}
    plain_init = (getattr(cls, "__slots__", None) == tuple(names) and not hasattr(cls, "__post_init__")
                  and getattr(cls.__init__, "__code__", None) is not None
                  and cls.__init__.__code__.co_filename == "<string>")  # made by @dataclass
    if plain_init:
        namespace.update({f"set_{n}": getattr(cls, n).__set__ for n in names})
        body = "".join(f"    set_{n}(o, {v})\n" for n, v in zip(names, values))
        code = f"def replace_{cls.__name__}(obj, *, {params}):\n    o = new(cls)\n{body}    return o\n"
    else:
        code = f"def replace_{cls.__name__}(obj, *, {params}):\n    return cls({', '.join(values)})\n"
    exec(code, namespace)  # noqa: S102 -- code made above from the class's own field names
    return namespace[f"replace_{cls.__name__}"]

TopicPartition = tuple[str, int]


def ordered_minus(a: Iterable[int], b: Iterable[int]) -> tuple[int, ...]:
    """`a − b` of KAFKA-SEMANTICS.md: the elements of a not in b, keeping a's order."""
    bs = set(b)
    return tuple([x for x in a if x not in bs])  # a list first: a generator costs twice as much here


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

    def shared_with_leader(self, leader: int, broker: int) -> int:
        """How many records `broker`'s log shares with the leader's (their common prefix)."""
        return common_prefix_len(self.log_of(leader), self.log_of(broker))


def common_prefix_len(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """The length of the longest common prefix of two logs (records are their leader epochs)."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


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
    elr: tuple[int, ...] = ()  # KRaft with ELR on (KIP-966): eligible leader replicas, ascending
    last_known_elr: tuple[int, ...] = ()  # KRaft with ELR on: the last known leader (at most one broker)

    #: added after the JSON form was fixed: omitted from JSON at their default (older files stay identical)
    OPTIONAL_JSON_FIELDS: ClassVar[tuple[str, ...]] = ("elr", "last_known_elr")

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
    min_insync_replicas: int = 1  # the topic's effective min.insync.replicas (ELR's bound; Kafka's default 1)

    #: added after the JSON form was fixed: omitted from JSON at their default (older files stay identical)
    OPTIONAL_JSON_FIELDS: ClassVar[tuple[str, ...]] = ("min_insync_replicas",)


@dataclass(frozen=True, slots=True)
class ZkController:
    """The `zk` profile's controller: what lives only in memory, and the admin znode.

    The partitions' replicas/adding/removing/isr/leader/epochs in ClusterState are the
    ZooKeeper (persisted) view; `memory` is the controller context's assignment, which
    onPartitionReassignment updates at different steps than ZooKeeper, and which a
    failover rebuilds from ZooKeeper.

    `leadership` (bounds: zk_versions = true, else None) is controllerContext.partitionLeadershipInfo:
    per partition the cached leader, ISR and how many zkVersions the cache is behind ZooKeeper's
    partition state znode (cached zkVersion = Partition.partition_epoch − behind). Kept as a
    difference so that the explorer's epoch renaming, which zeroes ZooKeeper's versions, keeps
    the two in step; the cached leader epoch always equals ZooKeeper's (only the controller
    changes a leader epoch, and it refreshes the cache when it writes).
    """

    #: added after the JSON form was fixed: omitted from JSON at their default (older files stay identical)
    OPTIONAL_JSON_FIELDS: ClassVar[tuple[str, ...]] = ("leadership", "deleting", "controller_id")

    active: bool = True  # an active controller exists (False between a crash and the next election)
    epoch: int = 1  # controller epoch, bumped at every failover
    # controller context: (topic, partition, replicas, adding, removing) for every partition
    memory: tuple[tuple[str, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...] = ()
    # partitionsBeingReassigned: (topic, partition, target replicas)
    being_reassigned: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    # content of /admin/reassign_partitions: (topic, partition, target replicas)
    admin_znode: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    # the controller's pending work: (topic, partition, next step of onPartitionReassignment, or "N": an
    # ISR change notification to process, zk_versions only)
    pending: tuple[tuple[str, int, str], ...] = ()
    # the cached leader and ISR: (topic, partition, leader, isr, zkVersions behind ZooKeeper)
    leadership: tuple[tuple[str, int, int, tuple[int, ...], int], ...] | None = None
    # topics queued for deletion (/admin/delete_topics, TopicDeletionManager; bounds: delete_topic)
    deleting: tuple[str, ...] = ()
    # the broker that is (active) or last was (not active) the controller, /controller's brokerid
    # (bounds: zk_events; None: the controller's identity is not modelled)
    controller_id: int | None = None


@dataclass(frozen=True, slots=True)
class Kip236Admin:
    """The `kip236` profile's admin znodes (seed 001's submission protocol)."""

    cancel_marker: bool = False  # /admin/reassign_cancel exists
    # /admin/reassign_partitions_extra: (topic, partition, replicas)
    extra: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    # route a partition's ongoing reassignment came through: (topic, partition, "legacy" | "requests")
    routes: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """A request the `zk` controller queued for one broker (ControllerChannelManager; bounds: broker_replicas).

    `leader_epoch` is kept relative to the partition's current leader epoch (0: the current one,
    -1: the next older one the brokers' requests or memory mention, ...), so that the explorer's
    renaming of a partition's epochs leaves it alone; only its order against other epochs matters.
    """

    kind: str  # "LeaderAndIsr" or "StopReplica"
    topic: str
    partition: int
    leader_epoch: int
    leader: int = NO_LEADER  # LeaderAndIsr: the leader, ISR and the controller's assignment
    isr: tuple[int, ...] = ()
    replicas: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    delete: bool = False  # StopReplica: deletePartition


@dataclass(frozen=True, slots=True)
class BrokerRequests:
    """`zk` with broker_replicas: the requests in flight to each broker and what each broker keeps in memory.

    `queues`: (broker, its FIFO of requests) for every broker with a non-empty queue, sorted by broker
    (one RequestSendThread per broker: FIFO per broker, any interleaving across brokers).
    `known`: ReplicaManager's partitions, (broker, topic, partition, leader epoch (relative, as in
    ControlRequest), role "leader" | "follower" | "stopped"), sorted; lost when the broker fails.
    """

    queues: tuple[tuple[int, tuple[ControlRequest, ...]], ...] = ()
    known: tuple[tuple[int, str, int, int, str], ...] = ()


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
class ActorMemory:
    """What the tools and automation acting beside the controller remember between two of their steps
    (bounds: actors; reference/actors.py). Each field belongs to one actor and is None / empty when
    that actor is not modelled or remembers nothing.

    `snapshot` (rebalancer): the reassignments it listed when it last read, (topic, partition, target
    replicas) sorted; () = it read and saw none moving, None = nothing read (or already acted on).
    `cache` (auto-throttler): the throttled replicas and rated brokers it computed from the moves it
    saw when it last read; None = never read. `written`: what it last wrote back (None: nothing yet).
    `verifies` (second-operator): (operator, its --verify listed a reassignment in progress, that --verify
    has finished: cleared the throttles, or had nothing to clear), one entry per operator whose --verify
    has listed, sorted.
    """

    snapshot: tuple[tuple[str, int, tuple[int, ...]], ...] | None = None
    cache: ReplicationThrottles | None = None
    written: ReplicationThrottles | None = None
    verifies: tuple[tuple[int, bool, bool], ...] = ()


@dataclass(frozen=True, slots=True)
class BrokerIsr:
    """The partition leaders' ISR maintenance and the followers' fetchers (bounds: broker_isr; reference/broker_isr.py).

    `lagging`: (topic, partition, follower) whose last caught-up time is older than replica.lag.time.max.ms
    (Replica.isCaughtUp is false unless its log end equals the leader's), sorted.
    `inflight`: the leaders' AlterPartition requests not yet answered, at most one per partition (Partition's
    PendingExpandIsr / PendingShrinkIsr): (topic, partition, leader, new ISR, the joining broker or -1 for a
    shrink, leader epochs behind (0/1), partition epochs behind (0/1)), sorted; behind > 0: the partition
    changed since it was sent, so the leader has reset to the committed ISR and the controller will refuse it.
    `fetchers`: (broker, topic, partition) whose replica fetcher runs, sorted (with broker_replicas; None without).
    """

    lagging: tuple[tuple[str, int, int], ...] = ()
    inflight: tuple[tuple[str, int, int, tuple[int, ...], int, int, int], ...] = ()
    fetchers: tuple[tuple[int, str, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class ClusterState:
    """The whole model state. Brokers sorted by id, topics sorted by name."""

    #: fields added after the JSON form was fixed: omitted from JSON while they hold their default,
    #: so that older trace and state files stay byte-identical and still decode
    OPTIONAL_JSON_FIELDS: ClassVar[tuple[str, ...]] = ("throttles", "hosted", "requests", "actors", "broker_isr")

    brokers: tuple[Broker, ...]
    topics: tuple[Topic, ...]
    zk: ZkController | None = None  # `zk` profile only
    kip236: Kip236Admin | None = None  # `kip236` profile only
    throttles: ReplicationThrottles | None = None  # the reassignment tool's throttles (bounds: throttles = true)
    # the logs brokers host on disk, (broker, topic, partition) sorted, as each broker last acted on the
    # metadata it replayed (bounds: broker_replicas = true); None when that layer is off
    hosted: tuple[tuple[int, str, int], ...] | None = None
    # `zk` with broker_replicas: the controller's requests in flight and the brokers' memory; None otherwise
    requests: BrokerRequests | None = None
    # what the tools and automation acting beside the controller remember (bounds: actors); None otherwise
    actors: ActorMemory | None = None
    # the leaders' ISR maintenance and the followers' fetchers (bounds: broker_isr = true); None when off
    broker_isr: BrokerIsr | None = None

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

    def partition_count(self) -> int:
        count = 0
        for t in self.topics:
            count += len(t.partitions)
        return count

    # -- functional updates ------------------------------------------------
    def with_partition(self, name: str, index: int, part: Partition) -> ClusterState:
        topics = list(self.topics)
        for k, t in enumerate(topics):
            if t.name == name:
                topics[k] = replace(t, partitions=t.partitions[:index] + (part,) + t.partitions[index + 1 :])
        return replace(self, topics=tuple(topics))

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
    "common_prefix_len",
    "ActorMemory",
    "Broker",
    "BrokerIsr",
    "BrokerRequests",
    "ClusterState",
    "ControlRequest",
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
    "replace",
]
