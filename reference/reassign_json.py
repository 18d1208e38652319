"""Kafka's reassignment JSON, the `kafka-reassign-partitions.sh` file format, as values.

    {"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3],"log_dirs":["any","any","any"]}]}

Parsing follows kafka.admin.ReassignPartitionsCommand.parsePartitionReassignmentData
and the checks of parseExecuteAssignmentArgs (empty list, empty replica list, duplicate
partitions, duplicate replicas), made stricter where Kafka is lenient (unknown keys,
a missing "version", bools as ints, negative ids) and every error names the field,
e.g. ``partitions[2].replicas[1]``. Topic names, partition ids and broker ids follow
Kafka's own limits (spec/kafka_limits.py: Topic.validate's 249 characters of
[a-zA-Z0-9._-], not "." or ".."; ids are non-negative Java ints), which the controller
would otherwise refuse only after `--execute`. Writing follows formatAsReassignmentJson: compact,
Kafka's key order. The rollback JSON is what `--execute` prints as "Current partition
replica assignment" (currentPartitionReplicaAssignmentToString). KIP-236's
"original_replicas" key is accepted on request. Pure functions: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kreassign.spec.kafka_limits import INT32_MAX, broker_problem, partition_problem, topic_problem
from kreassign.spec.messages import (
    ERROR_NAMES,
    NONE,
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignableTopic,
)
from kreassign.spec.state import ClusterState, ordered_minus

#: The only "version" Kafka's tool reads (ReassignPartitionsCommand.EarliestVersion).
VERSION = 1
#: The log directory that lets the broker choose (ReassignPartitionsCommand.AnyLogDir).
ANY_LOG_DIR = "any"
_TOP_KEYS = ("version", "partitions")
_ENTRY_KEYS = ("topic", "partition", "replicas", "log_dirs")
_KIP236_KEY = "original_replicas"
_KIP236_HINT = {_KIP236_KEY: "KIP-236's key; accept it with allow_original_replicas=True or --kip236"}


class ReassignJsonError(ValueError):
    """Malformed reassignment JSON; `path` names the field (``""`` for the document itself)."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path or '<root>'}: {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True, slots=True)
class ReassignmentEntry:
    """One element of "partitions": the target replicas of one partition."""

    topic: str
    partition: int
    replicas: tuple[int, ...]  # ordered; the first is the preferred leader
    log_dirs: tuple[str, ...] | None = None  # one per replica ("any" = broker's choice), or absent
    original_replicas: tuple[int, ...] | None = None  # KIP-236 only: the assignment to roll back to


@dataclass(frozen=True, slots=True)
class ReassignmentPlanJson:
    """A whole reassignment JSON document (version 1), entries in file order."""

    entries: tuple[ReassignmentEntry, ...]


Assignment = ClusterState | Mapping[tuple[str, int], Sequence[int]]


# -- reading -------------------------------------------------------------------


class _Object(dict):
    """A JSON object that remembers the keys it saw more than once (the last value wins, as in Jackson)."""

    duplicates: tuple[str, ...] = ()


def _object_hook(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    if len(obj) < len(pairs):
        seen: set[str] = set()
        repeated = []
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        obj.duplicates = tuple(repeated)
    return obj


def parse_reassignment_json(text: str, *, allow_original_replicas: bool = False) -> ReassignmentPlanJson:
    """Parse reassignment JSON text; invalid JSON is reported with its line and column."""
    try:
        data = json.loads(text, object_pairs_hook=_object_hook)
    except json.JSONDecodeError as e:
        raise ReassignJsonError("", f"invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise ReassignJsonError("", "invalid JSON: nested too deeply") from None
    except ValueError as e:  # an integer beyond Python's 4300-digit conversion limit
        raise ReassignJsonError("", f"invalid JSON: {' '.join(str(e).split())[:120]}") from None
    return plan_from_json_data(data, allow_original_replicas=allow_original_replicas)


def plan_from_json_data(data: Any, *, allow_original_replicas: bool = False) -> ReassignmentPlanJson:
    """Check already-loaded JSON data and build the plan (parsePartitionReassignmentData + execute checks)."""
    _check_keys(data, "", _TOP_KEYS, "a reassignment JSON object")
    if "version" not in data:
        raise ReassignJsonError("version", 'missing required field (Kafka assumes 1; write "version": 1)')
    _require(data, "", ("partitions",))
    _check_version(data["version"])
    partitions = _list(data["partitions"], "partitions", "a list of partition entries")
    if not partitions:
        raise ReassignJsonError(
            "partitions", "empty list (Kafka: Partition reassignment list cannot be empty)"
        )
    entries: list[ReassignmentEntry] = []
    first_at: dict[tuple[str, int], int] = {}
    for i, raw in enumerate(partitions):
        entry = _entry(raw, f"partitions[{i}]", allow_original_replicas)
        key = (entry.topic, entry.partition)
        if key in first_at:
            raise ReassignJsonError(
                f"partitions[{i}]",
                f"duplicate entry for {entry.topic}-{entry.partition} (first at partitions[{first_at[key]}])",
            )
        first_at[key] = i
        entries.append(entry)
    return ReassignmentPlanJson(tuple(entries))


def _describe(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _check_keys(
    data: Any, path: str, known: Sequence[str], what: str, hints: Mapping[str, str] | None = None
) -> None:
    """`data` must be an object with no duplicate and no unknown key (`hints` explain some unknown keys)."""
    if not isinstance(data, dict):
        raise ReassignJsonError(path, f"expected {what}, got {_describe(data)}")
    duplicates = getattr(data, "duplicates", ())
    if duplicates:
        raise ReassignJsonError(_join(path, duplicates[0]), "duplicate key")
    for key in data:
        if key not in known:
            hint = f" ({hints[key]})" if hints and key in hints else ""
            raise ReassignJsonError(_join(path, key), f"unknown field{hint}")


def _require(data: dict, path: str, keys: Sequence[str]) -> None:
    for key in keys:
        if key not in data:
            raise ReassignJsonError(_join(path, key), "missing required field")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check_version(value: Any) -> None:
    if not _is_int(value):
        raise ReassignJsonError("version", f"expected the integer {VERSION}, got {_describe(value)}")
    if value != VERSION:
        raise ReassignJsonError("version", f"unsupported version {value} (Kafka supports only {VERSION})")


def _is_int(value: Any) -> bool:
    """JSON integers only: true/false are not integers, 1.0 is not either (Kafka's DecodeJson[Int])."""
    return isinstance(value, int) and not isinstance(value, bool)


def _list(value: Any, path: str, what: str) -> list:
    if not isinstance(value, list):
        raise ReassignJsonError(path, f"expected {what}, got {_describe(value)}")
    return value


def _id(value: Any, path: str, what: str) -> int:
    """A partition or broker id: a non-negative Java Int (spec/kafka_limits.py)."""
    if not _is_int(value):
        raise ReassignJsonError(path, f"expected a {what} (an integer), got {_describe(value)}")
    problem = partition_problem(value) if what == "partition id" else broker_problem(value)
    if problem is not None:
        raise ReassignJsonError(path, problem)
    return value


def _entry(raw: Any, path: str, allow_original_replicas: bool) -> ReassignmentEntry:
    if allow_original_replicas:
        _check_keys(raw, path, (*_ENTRY_KEYS, _KIP236_KEY), "a partition entry object")
    else:
        _check_keys(raw, path, _ENTRY_KEYS, "a partition entry object", _KIP236_HINT)
    _require(raw, path, ("topic", "partition", "replicas"))
    topic = raw["topic"]
    if not isinstance(topic, str):
        raise ReassignJsonError(f"{path}.topic", f"expected a topic name (a string), got {_describe(topic)}")
    problem = topic_problem(topic)  # Kafka's Topic.validate: empty, ".", "..", > 249 chars, not [a-zA-Z0-9._-]
    if problem is not None:
        raise ReassignJsonError(f"{path}.topic", problem)
    partition = _id(raw["partition"], f"{path}.partition", "partition id")
    replicas = _replica_list(raw["replicas"], f"{path}.replicas")
    log_dirs = _log_dirs(raw["log_dirs"], f"{path}.log_dirs", len(replicas)) if "log_dirs" in raw else None
    original = _replica_list(raw[_KIP236_KEY], f"{path}.{_KIP236_KEY}") if _KIP236_KEY in raw else None
    return ReassignmentEntry(topic, partition, replicas, log_dirs, original)


def _replica_list(value: Any, path: str) -> tuple[int, ...]:
    """Broker ids, non-empty and distinct (parseExecuteAssignmentArgs' replica checks)."""
    items = _list(value, path, "a list of broker ids")
    if not items:
        raise ReassignJsonError(path, "empty replica list (Kafka: Partition replica list cannot be empty)")
    first_at: dict[int, int] = {}
    for k, item in enumerate(items):
        broker = _id(item, f"{path}[{k}]", "broker id")
        if broker in first_at:
            raise ReassignJsonError(
                f"{path}[{k}]", f"broker {broker} appears more than once (first at [{first_at[broker]}])"
            )
        first_at[broker] = k
    return tuple(items)


def _log_dirs(value: Any, path: str, n_replicas: int) -> tuple[str, ...]:
    """One absolute path or "any" per replica (ReassignPartitionsCommand: sizes must match)."""
    items = _list(value, path, "a list of log directories")
    for k, item in enumerate(items):
        if not isinstance(item, str) or not item:
            raise ReassignJsonError(
                f"{path}[{k}]", f'expected a log directory or "any", got {_describe(item)}'
            )
    if len(items) != n_replicas:
        raise ReassignJsonError(
            path, f"{len(items)} log dirs for {n_replicas} replicas (the sizes must match)"
        )
    return tuple(items)


# -- writing -------------------------------------------------------------------


def plan_to_json_data(plan: ReassignmentPlanJson) -> dict[str, Any]:
    """The JSON data of a plan, keys in Kafka's order; optional keys only when present."""
    return {"version": VERSION, "partitions": [_entry_data(e) for e in plan.entries]}


def _entry_data(entry: ReassignmentEntry) -> dict[str, Any]:
    data: dict[str, Any] = {
        "topic": entry.topic,
        "partition": entry.partition,
        "replicas": list(entry.replicas),
    }
    if entry.log_dirs is not None:
        data["log_dirs"] = list(entry.log_dirs)
    if entry.original_replicas is not None:
        data[_KIP236_KEY] = list(entry.original_replicas)
    return data


def format_reassignment_json(plan: ReassignmentPlanJson) -> str:
    """Canonical text: compact, as ReassignPartitionsCommand.formatAsReassignmentJson writes it."""
    return json.dumps(plan_to_json_data(plan), separators=(",", ":"))


# -- cluster checks and rollback ---------------------------------------------------


def check_against_cluster(plan: ReassignmentPlanJson, state: ClusterState) -> None:
    """The cluster-dependent checks of `--execute`: topics and partitions exist, brokers are registered."""
    for i, entry in enumerate(plan.entries):
        path = f"partitions[{i}]"
        topic = state.topic(entry.topic)
        if topic is None:
            raise ReassignJsonError(f"{path}.topic", f"unknown topic {entry.topic!r}")
        count = len(topic.partitions)
        if entry.partition >= count:
            has = f"partitions 0..{count - 1}" if count else "no partitions"
            raise ReassignJsonError(
                f"{path}.partition", f"no partition {entry.partition} in topic {entry.topic!r} ({has})"
            )
        for k, broker in enumerate(entry.replicas):
            if not state.is_registered(broker):
                raise ReassignJsonError(f"{path}.replicas[{k}]", f"broker {broker} is not registered")


def _lookup(current: Assignment) -> Callable[[str, int], tuple[int, ...] | None]:
    """Current replicas of a partition: the full list, which includes adding and removing replicas."""
    if isinstance(current, ClusterState):

        def from_state(topic: str, partition: int) -> tuple[int, ...] | None:
            part = current.partition(topic, partition)
            return None if part is None else part.replicas

        return from_state

    def from_mapping(topic: str, partition: int) -> tuple[int, ...] | None:
        replicas = current.get((topic, partition))
        return None if replicas is None else tuple(replicas)

    return from_mapping


def rollback_plan(plan: ReassignmentPlanJson, current: Assignment) -> ReassignmentPlanJson:
    """The JSON `--execute` prints to save for rollback: the current replicas of the plan's partitions.

    Sorted by topic then partition with "any" log dirs, so the text equals Kafka's
    (currentPartitionReplicaAssignmentToString, compareTopicPartitions).
    """
    replicas_of = _lookup(current)
    entries = []
    for i, entry in enumerate(plan.entries):
        replicas = replicas_of(entry.topic, entry.partition)
        if replicas is None:
            raise ReassignJsonError(
                f"partitions[{i}]",
                f"Unable to find partition: {entry.topic}-{entry.partition} in the current assignment",
            )
        entries.append(
            ReassignmentEntry(entry.topic, entry.partition, replicas, (ANY_LOG_DIR,) * len(replicas))
        )
    return ReassignmentPlanJson(tuple(sorted(entries, key=lambda e: (e.topic, e.partition))))


# -- requests and responses -------------------------------------------------------


def to_request(plan: ReassignmentPlanJson) -> AlterPartitionReassignmentsRequest:
    """The AlterPartitionReassignments request of `--execute`: topics in first-appearance order.

    Log dirs are not part of this request (Kafka sends them with AlterReplicaLogDirs),
    nor are KIP-236's original replicas.
    """
    return _grouped(plan, lambda e: e.replicas)


def to_cancel_request(plan: ReassignmentPlanJson) -> AlterPartitionReassignmentsRequest:
    """The request of `--cancel`: null replicas for every partition the file names (cancelAssignment)."""
    return _grouped(plan, lambda e: None)


def _grouped(
    plan: ReassignmentPlanJson, replicas: Callable[[ReassignmentEntry], tuple[int, ...] | None]
) -> AlterPartitionReassignmentsRequest:
    topics: dict[str, list[ReassignablePartition]] = {}
    for e in plan.entries:
        topics.setdefault(e.topic, []).append(ReassignablePartition(e.partition, replicas(e)))
    return AlterPartitionReassignmentsRequest(
        topics=tuple(ReassignableTopic(name, tuple(parts)) for name, parts in topics.items())
    )


def from_request(request: AlterPartitionReassignmentsRequest) -> ReassignmentPlanJson:
    """The reassignment JSON of a request, entries in request order.

    A cancellation (null replicas) has no form in this JSON; other errors name the
    field of the resulting JSON, which is checked like a parsed file.
    """
    if not any(t.partitions for t in request.topics):
        raise ReassignJsonError("topics", "no partitions: the reassignment JSON needs at least one")
    partitions = []
    for ti, topic in enumerate(request.topics):
        for pi, part in enumerate(topic.partitions):
            if part.replicas is None:
                raise ReassignJsonError(
                    f"topics[{ti}].partitions[{pi}].replicas",
                    "null replicas cancel a reassignment, which the reassignment JSON cannot express",
                )
            partitions.append(
                {"topic": topic.name, "partition": part.partition_index, "replicas": list(part.replicas)}
            )
    return plan_from_json_data({"version": VERSION, "partitions": partitions})


def from_list_response(response: ListPartitionReassignmentsResponse) -> ReassignmentPlanJson:
    """The ongoing reassignments of a ListPartitionReassignments response, replicas = target.

    target = replicas − removing (KIP-455), sorted like `--list` prints them; resubmitting
    this JSON asks for the reassignments already in flight.
    """
    if response.error_code != NONE:
        name = ERROR_NAMES.get(response.error_code, str(response.error_code))
        raise ReassignJsonError("error_code", f"the response failed with {name}: {response.error_message}")
    if not any(t.partitions for t in response.topics):
        raise ReassignJsonError("topics", "No partition reassignments found (nothing to write)")
    partitions = sorted(
        (
            {
                "topic": t.name,
                "partition": p.partition_index,
                "replicas": list(ordered_minus(p.replicas, p.removing_replicas)),
            }
            for t in response.topics
            for p in t.partitions
        ),
        key=lambda d: (d["topic"], d["partition"]),
    )
    return plan_from_json_data({"version": VERSION, "partitions": partitions})


__all__ = [
    "ANY_LOG_DIR",
    "INT32_MAX",
    "VERSION",
    "Assignment",
    "ReassignJsonError",
    "ReassignmentEntry",
    "ReassignmentPlanJson",
    "check_against_cluster",
    "format_reassignment_json",
    "from_list_response",
    "from_request",
    "parse_reassignment_json",
    "plan_from_json_data",
    "plan_to_json_data",
    "rollback_plan",
    "to_cancel_request",
    "to_request",
]
