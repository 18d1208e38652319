"""What `kreassign status` knows of a cluster: one `Snapshot`, read once through the Admin client (or from the
JSON a previous run saved, `--snapshot FILE`), never written back.

Everything the analysis uses is here and nothing else: the brokers (registered, fenced, racks), the release
signals (finalized and supported features, the brokers' inter.broker.protocol.version), every partition's
replicas, ISR, leader and ELR, the in-flight reassignments, and the configs that matter to a move
(min.insync.replicas, unclean.leader.election.enable, the replication throttles).

A saved snapshot is checked field by field (SnapshotError, exit 2, `FILE: field: why`), Kafka's own limits
included (spec/kafka_limits.py): topic names Topic.validate accepts, partition and broker ids that are
non-negative Java ints, a leader that is a broker id, -1 or null.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from kreassign.spec.kafka_limits import broker_problem, leader_problem, partition_problem, topic_problem

from kreassign.errors import UsageError

FORMAT = "kreassign-status-snapshot"
FORMAT_VERSION = 1

#: the topic configs a move depends on (KIP-73 throttles; durability)
TOPIC_KEYS = ("min.insync.replicas", "unclean.leader.election.enable", "leader.replication.throttled.replicas",
              "follower.replication.throttled.replicas")
#: the broker configs: the throttle rates kafka-reassign-partitions.sh sets (and clears), the release in zk mode
BROKER_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
               "replica.alter.log.dirs.io.max.bytes.per.second", "inter.broker.protocol.version")


class SnapshotError(UsageError):
    """A saved snapshot that cannot be read; the message names the file and field (exit 2)."""


@dataclass(frozen=True)
class LivePartition:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int | None
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    reassigning: bool = False  # listed by ListPartitionReassignments

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def original(self) -> tuple[int, ...]:
        """What a cancel reverts to: the replicas that are not adding, in the current order (KRaft's
        PartitionReassignmentRevert; the ZooKeeper controller's origin)."""
        return tuple(b for b in self.replicas if b not in self.adding)

    @property
    def target(self) -> tuple[int, ...]:
        return tuple(b for b in self.replicas if b not in self.removing)


@dataclass
class Snapshot:
    bootstrap: str
    cluster_id: str | None
    mode: str  # "kraft" or "zk"
    brokers: dict[int, dict[str, Any]]  # id -> {"rack", "fenced"}: registered brokers
    fenced_known: bool  # False: fenced brokers are not listed (Kafka < 4.0, ZooKeeper mode)
    finalized: dict[str, int]
    supported: dict[str, dict[str, int]]
    partitions: list[LivePartition]
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    broker_configs: dict[int, dict[str, str]] = field(default_factory=dict)
    read_in_s: float = 0.0

    @property
    def live(self) -> set[int]:
        """Registered and unfenced: the brokers that can host a replica in the ISR now."""
        return {b for b, info in self.brokers.items() if not info.get("fenced")}

    def in_flight(self) -> list[LivePartition]:
        return [p for p in self.partitions if p.reassigning]

    def topic_config(self, topic: str, key: str) -> str | None:
        return self.topic_configs.get(topic, {}).get(key)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": FORMAT_VERSION, "bootstrap": self.bootstrap,
                "cluster_id": self.cluster_id, "mode": self.mode,
                "brokers": {str(b): v for b, v in sorted(self.brokers.items())}, "fenced_known": self.fenced_known,
                "finalized": self.finalized, "supported": self.supported,
                "partitions": [_partition_json(p) for p in self.partitions],
                "topic_configs": self.topic_configs,
                "broker_configs": {str(b): v for b, v in sorted(self.broker_configs.items())},
                "read_in_s": round(self.read_in_s, 3)}


def _partition_json(p: LivePartition) -> dict[str, Any]:
    d = asdict(p)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}


# -- from a saved snapshot ---------------------------------------------------------------------------------


def _need(data: dict, key: str, kind: type | tuple[type, ...], where: str, file: str) -> Any:
    if key not in data:
        raise SnapshotError(f"{file}: {where}{key}: missing")
    v = data[key]
    if not isinstance(v, kind) or (isinstance(v, bool) and kind is int):
        raise SnapshotError(f"{file}: {where}{key}: expected {getattr(kind, '__name__', 'a value')}, "
                            f"got {type(v).__name__}")
    return v


def _ids(v: Any, where: str, file: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in v):
        raise SnapshotError(f"{file}: {where}: expected a list of broker ids")
    for k, b in enumerate(v):
        _refuse(file, f"{where}[{k}]", broker_problem(b))
    return tuple(v)


def _refuse(file: str, where: str, problem: str | None) -> None:
    if problem is not None:
        raise SnapshotError(f"{file}: {where}: {problem}")


def _broker_key(k: str, where: str, file: str) -> int:
    """A broker id as a JSON object's key ("1"): ASCII digits within Java's int."""
    if not (k.isascii() and k.isdigit()):
        raise SnapshotError(f"{file}: {where}.{k[:40]}: expected a broker id")
    _refuse(file, f"{where}.{k[:40]}", broker_problem(int(k)) if len(k.lstrip("0")) <= 10 else
            f"broker id {k[:24]}... does not fit Kafka's 32-bit int")
    return int(k)


def snapshot_from_json(data: Any, file: str) -> Snapshot:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SnapshotError(f"{file}: not a kreassign status snapshot (expected \"format\": \"{FORMAT}\"; "
                            "`kreassign status --json` writes one under \"snapshot\")")
    if data.get("version") != FORMAT_VERSION:
        raise SnapshotError(f"{file}: version: expected {FORMAT_VERSION}, got {data.get('version')!r}")
    mode = _need(data, "mode", str, "", file)
    if mode not in ("kraft", "zk"):
        raise SnapshotError(f"{file}: mode: expected \"kraft\" or \"zk\", got {mode!r}")
    brokers: dict[int, dict[str, Any]] = {}
    for k, v in _need(data, "brokers", dict, "", file).items():
        if not isinstance(v, dict):
            raise SnapshotError(f"{file}: brokers.{k[:40]}: expected a broker id and an object")
        brokers[_broker_key(k, "brokers", file)] = v
    parts = []
    for i, p in enumerate(_need(data, "partitions", list, "", file)):
        w = f"partitions[{i}]."
        if not isinstance(p, dict):
            raise SnapshotError(f"{file}: partitions[{i}]: expected an object")
        leader = p.get("leader")
        if leader is not None and (not isinstance(leader, int) or isinstance(leader, bool)):
            raise SnapshotError(f"{file}: {w}leader: expected a broker id or null")
        if leader is not None:
            _refuse(file, f"{w}leader", leader_problem(leader))
        topic, partition = _need(p, "topic", str, w, file), _need(p, "partition", int, w, file)
        _refuse(file, f"{w}topic", topic_problem(topic))
        _refuse(file, f"{w}partition", partition_problem(partition))
        parts.append(LivePartition(
            topic, partition,
            _ids(_need(p, "replicas", list, w, file), w + "replicas", file), _ids(_need(p, "isr", list, w, file), w + "isr", file),
            leader, *(_ids(p.get(k, []), w + k, file) for k in ("elr", "last_known_elr", "adding", "removing")),
            bool(p.get("reassigning", False))))
    topic_configs = _need(data, "topic_configs", dict, "", file)
    for t in topic_configs:
        _refuse(file, f"topic_configs.{t[:40]}", topic_problem(t))
    broker_configs = {_broker_key(k, "broker_configs", file): v
                      for k, v in _need(data, "broker_configs", dict, "", file).items() if k.isdigit()}
    return Snapshot(data.get("bootstrap", "?"), data.get("cluster_id"), mode, brokers,
                    bool(data.get("fenced_known", False)), dict(data.get("finalized", {})),
                    dict(data.get("supported", {})), parts, topic_configs, broker_configs,
                    float(data.get("read_in_s", 0.0)))


def read_snapshot_file(path: str) -> Snapshot:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SnapshotError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise SnapshotError(f"{path}: not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None
    if isinstance(data, dict) and "snapshot" in data and "format" not in data:
        data = data["snapshot"]  # the whole `status --json` output
    return snapshot_from_json(data, path)


# -- from the cluster ----------------------------------------------------------------------------------------


def read_cluster(admin: Any, bootstrap: str, *, timeout_s: float = 30.0, topics: list[str] | None = None) -> Snapshot:
    """One read of everything `status` needs, through the Admin client (`checker/cluster/admin.py`'s
    ClusterAdmin); read-only: no request here changes the cluster."""
    import time

    began = time.monotonic()
    cluster = admin.describe_cluster(include_fenced=True, timeout_s=timeout_s)
    fenced_known = bool(cluster.get("fenced_known"))
    brokers = {int(b["id"]): {"rack": b.get("rack"), "fenced": bool(b.get("fenced", False))}
               for b in cluster["brokers"]}
    features = admin.features_full(timeout_s=timeout_s)
    finalized = {k: int(v) for k, v in features.get("finalized", {}).items()}
    mode = "kraft" if "metadata.version" in finalized else "zk"
    names = topics if topics is not None else admin.list_topics(timeout_s=timeout_s)
    described = admin.describe_topics(names, timeout_s=timeout_s) if names else {}
    listed = {(r["topic"], r["partition"]): r for r in admin.list_reassignments(timeout_s=timeout_s)}
    parts = []
    for topic in sorted(described):
        for p in described[topic]["partitions"]:
            r = listed.get((topic, p["partition"]))
            parts.append(LivePartition(
                topic, p["partition"], tuple(p["replicas"]), tuple(p["isr"]), p["leader"],
                tuple(sorted(p.get("elr") or ())), tuple(p.get("last_known_elr") or ()),
                tuple(r["adding"]) if r else (), tuple(r["removing"]) if r else (), r is not None))
    # a broker's configs are asked of that broker itself: a fenced one would only time out
    live = sorted(b for b, info in brokers.items() if not info["fenced"])
    configs = admin.describe_configs([("topic", t) for t in sorted(described)] + [("broker", str(b)) for b in live],
                                     keys=list(TOPIC_KEYS + BROKER_KEYS), timeout_s=timeout_s)
    topic_configs = {t: {k: v for k, v in c.items() if k in TOPIC_KEYS}
                     for t, c in configs.get("topic", {}).items() if "error_class" not in c}
    broker_configs = {int(b): {k: v for k, v in c.items() if k in BROKER_KEYS}
                      for b, c in configs.get("broker", {}).items() if "error_class" not in c}
    return Snapshot(bootstrap, cluster.get("cluster_id"), mode, brokers, fenced_known, finalized,
                    features.get("supported", {}), parts, topic_configs, broker_configs, time.monotonic() - began)


__all__ = [
    "BROKER_KEYS",
    "FORMAT",
    "TOPIC_KEYS",
    "LivePartition",
    "Snapshot",
    "SnapshotError",
    "read_cluster",
    "read_snapshot_file",
    "snapshot_from_json",
]
