"""Kafka's own limits on the names and numbers kreassign reads: input Kafka itself would refuse is refused.

One place for every reader (reassignment JSON, `kafka-topics.sh --describe` text, Kafka's logs, KRaft
metadata logs, traces, scenario files, status snapshots). Each rule is read from Kafka's released
`-sources` jars on Maven Central (the release named with it); the 3.9.2 and 4.x rules are the same.

Topic names — `org.apache.kafka.common.internals.Topic.validate` / `detectInvalidTopic` (kafka-clients
3.9.2 and 4.3.1, the same code; 4.4.0's class file has the same constants): not empty, not ``"."`` or
``".."``, at most `MAX_NAME_LENGTH` = 249 characters (Java's `String.length()`: UTF-16 code units),
only `LEGAL_CHARS` = ``[a-zA-Z0-9._-]`` (`containsValidPattern`: ASCII letters and digits, '.', '_', '-').
Checked in Kafka's order, so the reason given is the one Kafka would give.

Numbers — every partition id, broker id, epoch and zkVersion is a Java `int` (the protocol's and the
metadata records' `int32`: e.g. PartitionRecord.json, kafka-metadata 4.3.1), so `INT32_MIN`..`INT32_MAX`:

- partition id: >= 0 (partitions are numbered 0..n-1: ReplicationControlManager.createTopic, 4.3.1);
- broker id: >= 0 (`node.id` is `atLeast(0)`: KRaftConfigs, kafka-server 4.0.2; `broker.id` >= 0 once
  generated or set: KafkaConfig, kafka_2.13 3.9.2; a replica set with a negative id is invalid:
  org.apache.kafka.metadata.Replicas.validate / validateIsr, kafka-metadata 4.3.1);
- leader: a broker id or `NO_LEADER` = -1 (LeaderConstants.NO_LEADER, kafka-metadata 3.9.2 / 4.3.1;
  kafka.api.LeaderAndIsr.NoLeader, 3.9.2); `NO_LEADER_CHANGE` = -2 in a PartitionChangeRecord only
  (LeaderConstants), `LEADER_DURING_DELETE` = -2 in a ZooKeeper-era topic deletion (LeaderAndIsr, 3.9.2);
- leader epoch, partition epoch: >= 0 (org.apache.kafka.metadata.LeaderAndIsr.INITIAL_LEADER_EPOCH /
  INITIAL_PARTITION_EPOCH = 0, kafka-metadata 4.3.1; kafka.api.LeaderAndIsr.InitialLeaderEpoch /
  InitialPartitionEpoch, 3.9.2; bumped from there); -1 is Kafka's "no epoch" (`NO_EPOCH`:
  kafka.api.LeaderAndIsr.NoEpoch 3.9.2,
  RecordBatch.NO_PARTITION_LEADER_EPOCH, and the default of PartitionRecord's LeaderEpoch and
  PartitionEpoch), -2 `EPOCH_DURING_DELETE` (LeaderAndIsr.EpochDuringDelete, 3.9.2) — readers allow
  those only where Kafka prints them;
- zkVersion (the ZooKeeper-era partition epoch): >= 0, -1 `ZK_MATCH_ANY_VERSION` and -2
  `ZK_UNKNOWN_VERSION` (kafka.zk.ZkVersion, kafka_2.13 3.9.2);
- controller epoch: >= 0 (KafkaController.InitialControllerEpoch = 0, 3.9.2).

The `*_problem` functions return ``None`` for a legal value, else one short phrase without the field's
path, which each reader puts in its own error style (the file, the field path or the line, exit 2).
`state_problem` walks a decoded ClusterState and returns (field path, phrase) of the first value a
cluster cannot hold; `action_problem` only the wire's limit (int32) on a decoded action, since Kafka
answers a request with a bad name or id with an error the reference reproduces.
Values must already be of the right type (readers check str / int first). Lowest layer: spec only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from .state import ClusterState

#: Java's int (the protocol's and metadata records' int32)
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
#: org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH
TOPIC_MAX_LENGTH = 249
#: org.apache.kafka.common.internals.Topic.LEGAL_CHARS
TOPIC_LEGAL_CHARS = "[a-zA-Z0-9._-]"
_LEGAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

NO_LEADER = -1  # LeaderConstants.NO_LEADER / LeaderAndIsr.NoLeader
NO_LEADER_CHANGE = -2  # LeaderConstants.NO_LEADER_CHANGE (PartitionChangeRecord)
LEADER_DURING_DELETE = -2  # kafka.api.LeaderAndIsr.LeaderDuringDelete (ZooKeeper era)
NO_EPOCH = -1  # kafka.api.LeaderAndIsr.NoEpoch, RecordBatch.NO_PARTITION_LEADER_EPOCH
EPOCH_DURING_DELETE = -2  # kafka.api.LeaderAndIsr.EpochDuringDelete (ZooKeeper era)
ZK_MATCH_ANY_VERSION = -1  # kafka.zk.ZkVersion.MatchAnyVersion
ZK_UNKNOWN_VERSION = -2  # kafka.zk.ZkVersion.UnknownVersion


def _show(value: Any, width: int = 40) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def topic_problem(name: str) -> str | None:
    """Why Kafka's Topic.validate refuses `name` (in its order: empty, '.', '..', length, characters), or None."""
    if not name:
        return "empty topic name"
    if name in (".", ".."):
        return f"topic name {name!r} is not allowed (Kafka's Topic.validate)"
    length = len(name.encode("utf-16-le")) // 2  # Java's String.length(): UTF-16 code units
    if length > TOPIC_MAX_LENGTH:
        return (f"topic name {_show(name)} is {length} characters long, longer than Kafka's maximum "
                f"of {TOPIC_MAX_LENGTH} (Topic.validate)")
    bad = next((c for c in name if c not in _LEGAL), None)
    if bad is not None:
        return (f"topic name {_show(name)} contains {bad!r}; Kafka allows only ASCII letters, digits, "
                f"'.', '_' and '-' {TOPIC_LEGAL_CHARS} (Topic.validate)")
    return None


def int32_problem(value: int, what: str, minimum: int = INT32_MIN, allowed: Iterable[int] = ()) -> str | None:
    """Why `value` is not a legal `what`: beyond Java's int, or below `minimum` and not one of `allowed`."""
    if value > INT32_MAX or value < INT32_MIN:
        bound = f"at most {INT32_MAX}" if value > INT32_MAX else f"at least {INT32_MIN}"
        return f"{what} {_show(value, 24)} does not fit Kafka's 32-bit int ({bound})"
    if value < minimum and value not in allowed:
        extra = "".join(f", or {a}" for a in sorted(allowed, reverse=True))
        if minimum == 0 and not extra:
            return f"negative {what} {value}"
        return f"invalid {what} {value} ({minimum} or more{extra})"
    return None


def partition_problem(value: int) -> str | None:
    """A partition id: 0..INT32_MAX."""
    return int32_problem(value, "partition id", 0)


def broker_problem(value: int) -> str | None:
    """A broker id (a replica, an ISR member, a broker's own id): 0..INT32_MAX."""
    return int32_problem(value, "broker id", 0)


def brokers_problem(values: Iterable[int]) -> tuple[int, str] | None:
    """(index, phrase) of the first illegal broker id of a list, or None."""
    for k, b in enumerate(values):
        why = broker_problem(b)
        if why is not None:
            return k, why
    return None


def leader_problem(value: int, allowed: Iterable[int] = (NO_LEADER,)) -> str | None:
    """A leader: a broker id, or one of Kafka's special values `allowed` (-1: no leader)."""
    allowed = tuple(allowed)
    if INT32_MIN <= value < 0 and value not in allowed:
        return f"invalid leader {value} (a broker id{''.join(f' or {a}' for a in allowed)})"
    return int32_problem(value, "leader")


def epoch_problem(value: int, what: str = "leader epoch", allowed: Iterable[int] = ()) -> str | None:
    """A leader epoch, partition epoch, zkVersion or controller epoch: 0..INT32_MAX, or one of `allowed`."""
    return int32_problem(value, what, 0, allowed)


# -- decoded states and actions ----------------------------------------------------------------------------


def _first(checks: Iterable[tuple[str, str | None]]) -> tuple[str, str] | None:
    for path, why in checks:
        if why is not None:
            return path, why
    return None


def _ids(path: str, values: Iterable[int]) -> Iterable[tuple[str, str | None]]:
    for k, b in enumerate(values):
        yield f"{path}[{k}]", broker_problem(b)


#: a log offset is a Java long
INT64 = (-(2**63), 2**63 - 1)
INT32 = (INT32_MIN, INT32_MAX)


def _ints(value: Any, path: str, bounds: tuple[int, int] = INT32) -> Iterable[tuple[str, str | None]]:
    """Every int inside `value` (a dataclass, tuple or int) within `bounds` (Java's int, or long)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if not bounds[0] <= value <= bounds[1]:
            bits = 32 if bounds == INT32 else 64
            yield path, f"{_show(value, 24)} does not fit Kafka's {bits}-bit int"
    elif isinstance(value, tuple):
        for k, v in enumerate(value):
            yield from _ints(v, f"{path}[{k}]", bounds)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _ints(getattr(value, f.name), f"{path}.{f.name}" if path else f.name, bounds)


def _state_checks(state: ClusterState) -> Iterable[tuple[str, str | None]]:
    for i, b in enumerate(state.brokers):
        yield f"brokers[{i}].id", broker_problem(b.id)
    for ti, t in enumerate(state.topics):
        yield f"topics[{ti}].name", topic_problem(t.name)
        yield f"topics[{ti}].min_insync_replicas", int32_problem(t.min_insync_replicas, "min.insync.replicas", 1)
        for pi, p in enumerate(t.partitions):
            base = f"topics[{ti}].partitions[{pi}]"
            for name in ("replicas", "isr", "adding", "removing", "elr", "last_known_elr"):
                yield from _ids(f"{base}.{name}", getattr(p, name))
            if p.original is not None:
                yield from _ids(f"{base}.original", p.original)
            yield f"{base}.leader", leader_problem(p.leader)
            yield f"{base}.leader_epoch", epoch_problem(p.leader_epoch)
            yield f"{base}.partition_epoch", epoch_problem(p.partition_epoch, "partition epoch")
            if p.log is not None:
                yield from _ints(p.log, f"{base}.log", INT64)
    if state.zk is not None:
        yield "zk.epoch", epoch_problem(state.zk.epoch, "controller epoch")
    # the controller's tables, the admin znodes, the tool's throttles, the brokers' logs and requests: they
    # may hold what a client asked for (a znode written by hand, a plan's broker ids), which Kafka refuses
    # with an error later, so only the wire's limit applies
    for name in ("zk", "kip236", "throttles", "hosted", "requests"):
        yield from _ints(getattr(state, name), name)


def state_problem(state: ClusterState) -> tuple[str, str] | None:
    """(field path, phrase) of the first name or number in `state` that Kafka would refuse, or None.

    Paths are those of the state's JSON form (docs/state-format.md), e.g. ``topics[0].name``."""
    return _first(_state_checks(state))


def action_problem(action: Any) -> tuple[str, str] | None:
    """(field path, phrase) of the first number of a decoded action that does not fit Kafka's int32, or None.

    Only the wire's limit: a client can send a request naming a topic Kafka refuses, a negative broker id
    or partition, and Kafka answers it with an error (INVALID_REPLICA_ASSIGNMENT, UNKNOWN_TOPIC_OR_PARTITION)
    that the reference reproduces — such an action is a legitimate observation, not bad input. A number
    beyond int32 cannot be sent at all."""
    return _first(_ints(action, ""))


__all__ = [
    "EPOCH_DURING_DELETE",
    "INT32_MAX",
    "INT32_MIN",
    "LEADER_DURING_DELETE",
    "NO_EPOCH",
    "NO_LEADER",
    "NO_LEADER_CHANGE",
    "TOPIC_LEGAL_CHARS",
    "TOPIC_MAX_LENGTH",
    "ZK_MATCH_ANY_VERSION",
    "ZK_UNKNOWN_VERSION",
    "action_problem",
    "broker_problem",
    "brokers_problem",
    "epoch_problem",
    "int32_problem",
    "leader_problem",
    "partition_problem",
    "state_problem",
    "topic_problem",
]
