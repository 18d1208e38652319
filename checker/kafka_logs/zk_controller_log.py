"""Read Kafka's own ZooKeeper-era controller, state-change and broker log lines as partial observations.

Each line is matched against the shapes of `kafka_log_shapes` (Kafka 1.0 – 3.9's log
statements, docs/validate-trace.md lists them per version). A *state* line becomes an
`Observation` carrying only the fields that line carries; *creation* lines give new partitions'
replicas; *context* lines are Kafka's and consistent with any state; *outside* lines are counted
as not understood; lines of other loggers are skipped and counted (`ParsedLog.ignored`).
Anything before the message (timestamps, levels, thread names, container prefixes) is ignored;
docker json-file lines are unwrapped. Field names (`Observation.fields`):

| field | meaning in the model |
|---|---|
| `replicas`, `adding`, `removing` | the partition's assignment as persisted (ZooKeeper) |
| `leader`, `isr` (compared as a set), `leader_epoch`, `partition_epoch` (zkVersion) | the partition state znode |
| `controller_epoch` | the active controller's epoch (from `[Controller id=C epoch=E]`) |
| `memory_replicas`, `memory_adding`, `memory_removing` | the controller context's assignment (zk) |
| `memory_target` | target of the controller context's assignment (zk) |
| `target_in_isr` | every target replica is in the ISR |
| `next_step` | the partition's next pending onPartitionReassignment step (zk) |
| `leader_live` | the current leader's broker is live |
| `znode_entry` | the partition's /admin/reassign_partitions entry, about to be removed (None: no entry) |
| `znode_empty` | /admin/reassign_partitions holds nothing (controller-wide) |

`removed_replica` marks an OfflineReplica ISR removal: one ZooKeeper write among
possibly several of a single model step (docs/validate-trace.md, "Sub-steps").

A value Kafka itself cannot have printed is bad input (a `UsageError`, exit 2, `line N: field: why`):
a topic name Topic.validate refuses, a partition or broker id that is negative or beyond Java's int,
a leader other than a broker id, -1 (NoLeader) or -2 (LeaderDuringDelete), a leader epoch or zkVersion
below -2 (kafka.api.LeaderAndIsr.NoEpoch / EpochDuringDelete, kafka.zk.ZkVersion.MatchAnyVersion /
UnknownVersion) or beyond Java's int, a negative controller epoch (spec/kafka_limits.py).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.checker.kafka_logs.zk_log_shapes import (
    BY_NAME,
    CONTROLLER_EPOCH,
    ELECTION_FIELDS,
    FAILED_ELECTION,
    IDS,
    INVALID_NEW_REPLICA,
    SHAPES,
    TP,
    Shape,
    ids,
    kv_colon,
    match_line,
    state_fields,
    tp_of,
)
from kreassign.spec.kafka_limits import (
    EPOCH_DURING_DELETE,
    LEADER_DURING_DELETE,
    NO_EPOCH,
    NO_LEADER,
    ZK_MATCH_ANY_VERSION,
    ZK_UNKNOWN_VERSION,
    broker_problem,
    epoch_problem,
    leader_problem,
    partition_problem,
    topic_problem,
)

from kreassign.errors import UsageError


@dataclass(frozen=True)
class Observation:
    """What one line of an observed trace says; only `fields` present are checked."""

    line: int  # 1-based line number in the file
    text: str  # the line (stripped)
    topic: str | None = None  # None: a controller-wide observation
    partition: int | None = None
    fields: tuple[tuple[str, Any], ...] = ()  # (name, value) pairs, in a fixed order
    removed_replica: int | None = None  # an OfflineReplica ISR removal of this replica (a sub-step write)
    action: Any = None  # jsonl: the logged action that led to this observation
    state: Any = None  # jsonl: the full observed ClusterState
    response: Any = None  # jsonl: the logged response (JSON), compared when present
    what: str = ""  # a short name of the line's kind, for reports
    creation: bool = False  # the partition's creation: its first appearance may be the initial state itself

    def get(self, name: str, default: Any = None) -> Any:
        for k, v in self.fields:
            if k == name:
                return v
        return default

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.fields)


@dataclass
class ParsedLog:
    observations: list[Observation]
    broker_ids: set[int] = field(default_factory=set)
    recognised: int = 0  # lines of a known shape (state, context, creation or outside)
    ignored: list[int] = field(default_factory=list)  # non-blank lines of other loggers (skipped, counted)
    total: int = 0  # lines in the file
    shapes: Counter = field(default_factory=Counter)  # recognised lines by shape name
    outside: dict[str, list[int]] = field(default_factory=dict)  # shape -> lines outside the model
    created: dict[tuple[str, int], tuple[tuple[int, ...], int]] = field(default_factory=dict)  # (replicas, line)
    targets: list[tuple[str, int, tuple[int, ...]]] = field(default_factory=list)  # reassignment targets named
    elections: bool = False  # the log shows preferred leader elections


def _unwrap(line: str) -> str:
    """A docker json-file line `{"log": "...", "stream": ..., "time": ...}` as the line it wraps."""
    if line.startswith('{"log":'):
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            return line
        if isinstance(data, dict) and isinstance(data.get("log"), str):
            return data["log"].strip()
    return line


def _assignments(text: str) -> list[tuple[str, int, tuple[int, ...]]]:
    """`Map(t-0 -> ReplicaAssignment(replicas=1,2, ...), ...)` / `Map(t-0 -> Vector(1, 2))` / `[t,0] -> List(1,2)`."""
    out = []
    for e in re.finditer(rf"{TP} -> (?:ReplicaAssignment\(replicas=(?P<ra>[\d,]*)[^)]*\)|\w*\((?P<rl>{IDS})\))", text):
        tp = tp_of(e)
        out.append((tp[0], tp[1], ids(e.group("ra") if e.group("ra") is not None else e.group("rl"))))
    return out


def _observations(shape: Shape, m: re.Match[str], line: int, text: str, parsed: ParsedLog) -> list[Observation]:
    g = m.groupdict()
    kind = shape.name
    tp = tp_of(m)
    topic, partition = tp if tp else (None, None)
    fields: list[tuple[str, Any]] = []
    removed = None
    creation = False
    if kind == "assignment written":
        fields = [("replicas", ids(g["r"])), ("adding", ids(g["a"])), ("removing", ids(g["rr"]))]
    elif kind == "leader epoch bumped":
        fields = [("leader_epoch", int(g["le"]))]
        if g.get("zv") is not None:
            fields.append(("partition_epoch", int(g["zv"])))
    elif kind == "LeaderAndIsr sent to a reassigned partition's leader":
        fields = state_fields(g["lai"])
        fields += [("memory_replicas", ids(g["r"])), ("memory_adding", ids(g["a"])),
                   ("memory_removing", ids(g["rr"]))]
    elif kind == "target caught up":
        fields = [("memory_target", ids(g["t"])), ("target_in_isr", True), ("next_step", "U")]
    elif kind.startswith("leader ") and "target" in kind:
        fields = [("leader", int(g["l"])), ("memory_replicas", ids(g["r"])), ("memory_adding", ()),
                  ("memory_removing", ()), ("next_step", "B3")]
        if kind != "leader not in target":
            fields.append(("leader_live", kind.endswith("alive")))
    elif kind == "ISR written for AlterPartition":
        fields = state_fields(g["lai"])
    elif kind == "partition state changed":
        fields = state_fields(g["lai"])
        creation = g["from"] in ("NewPartition", "NonExistentPartition")
    elif kind == "replica removed from the ISR":
        fields = state_fields(g["lai"])
        removed = int(g["rep"])
    elif kind in ("LeaderAndIsr sent", "UpdateMetadata sent"):
        fields = state_fields(g["lai"], memory=kind == "LeaderAndIsr sent")
        if dict(fields).get("leader") == -2:  # LeaderDuringDelete: the topic is being deleted
            parsed.outside.setdefault("topic deletion (UpdateMetadata with leader -2)", []).append(line)
            return []
    elif kind == "ISR updated":  # logged by the leader ([Partition T-P broker=LEADER]) after its write
        fields = [("leader", int(g["b"])), ("isr", ids(g["isr"])), ("partition_epoch", int(g["zv"]))]
    elif kind == "preferred election completed":
        fields = [("leader", int(g["l"]))]
    elif kind == "znode entries removed":
        out = []
        for e in re.finditer(rf"{TP} -> \w*\((?P<t>{IDS})\)", g["m"]):
            etp = tp_of(e)
            # logged before the rewrite: the entry is still there, with the replicas it lists
            out.append(Observation(line, text, etp[0], etp[1], (("znode_entry", ids(e.group("t"))),), what=kind))
        return out
    elif kind == "znode deleted":
        return [Observation(line, text, None, None, (("znode_empty", True),), what=kind)]
    else:
        return []
    if not fields:
        return []
    ce = CONTROLLER_EPOCH.search(text)
    if ce and kind in ("partition state changed", "LeaderAndIsr sent", "UpdateMetadata sent", "replica removed from the ISR"):
        fields.append(("controller_epoch", int(ce.group("ce"))))
    return [Observation(line, text, topic, partition, tuple(fields), removed_replica=removed, what=kind,
                        creation=creation)]


def _failed_election(shape: Shape, m: re.Match[str], n: int, line: str, lines: list[str]) -> Observation | None:
    """A "failed partition state change" line whose next line names its cause as an election that found no leader
    under a strategy of ELECTION_FIELDS: Kafka wrote nothing for the partition (doElectLeaderForPartitions puts it
    in failedElections and writes only the partitions that got a leader), so the line is a no-op whose cause is
    checked — the model's state at that point must not elect a leader under that strategy either (its field
    false). Another cause (a ZooKeeper error, another controller's epoch, an invalid transition), an unread
    strategy or no exception line: None, and the line stays outside the model."""
    if shape.name == "failed replica state change" and n < len(lines):
        e = INVALID_NEW_REPLICA.match(_unwrap(lines[n].strip()))
        g = m.groupdict()
        if e is not None and tp_of(e) == tp_of(m) and int(e.group("b")) == int(g["b"]) \
                and f"from {e.group('from')} to NewReplica failed" in line:
            topic, partition = tp_of(m)
            return Observation(n, line, topic, partition, (("next_step", "A2"),),
                               what=f"{e.group('from')} -> NewReplica refused in step A2 (no write)")
        return None
    if shape.name != "failed partition state change" or n >= len(lines):
        return None
    e = FAILED_ELECTION.match(_unwrap(lines[n].strip()))
    if e is None or tp_of(e) != tp_of(m) or e.group("strategy") not in ELECTION_FIELDS:
        return None
    topic, partition = tp_of(m)
    fields: tuple[tuple[str, Any], ...] = ((ELECTION_FIELDS[e.group("strategy")], False),)
    return Observation(n, line, topic, partition, fields, what=f"failed election ({e.group('strategy')}, no write)")


def _context(shape: Shape, m: re.Match[str], line: int, parsed: ParsedLog) -> None:
    """What creation and context lines tell about the cluster: new partitions' replicas, targets, brokers."""
    g = m.groupdict()
    if shape.name == "new topics":
        if g["deleted"].strip() and not re.fullmatch(r"\w*\(\s*\)", g["deleted"].strip()):
            parsed.outside.setdefault("topic deletion", []).append(line)
        for t, i, replicas in _assignments(g["assign"]):
            _check_tp(line, t, i)
            _check_ids(line, "replicas", replicas)
            parsed.created.setdefault((t, i), (replicas, line))
    elif shape.name == "partition created":
        tp = tp_of(m)
        _check_tp(line, *tp)
        _check_ids(line, "replicas", ids(g["r"]))
        parsed.created.setdefault(tp, (ids(g["r"]), line))
    elif shape.name == "reassignments at startup":
        for t, i, replicas in _assignments(g["m"]):
            _check_tp(line, t, i)
            _check_ids(line, "replicas", replicas)
            if (t, i, replicas) not in parsed.targets:
                parsed.targets.append((t, i, replicas))
    elif shape.name in ("preferred election started", "preferred election completed"):
        # an election happened (the auto-rebalance check alone logs "Processing automatic ..." every few minutes)
        parsed.elections = True
    if shape.name == "replica state changed":
        _refuse(line, "broker", broker_problem(int(g["b"])))
        parsed.broker_ids.add(int(g["b"]))


#: the fields of an observation that hold broker ids
_ID_FIELDS = ("replicas", "adding", "removing", "isr", "memory_replicas", "memory_adding", "memory_removing",
              "memory_target", "znode_entry")


def _refuse(line: int, field: str, problem: str | None) -> None:
    if problem is not None:
        raise UsageError(f"line {line}: {field}: {problem}")


def _check_ids(line: int, field: str, values: Any) -> None:
    for k, b in enumerate(values or ()):
        _refuse(line, f"{field}[{k}]", broker_problem(b))


def _check_tp(line: int, topic: str | None, partition: int | None) -> None:
    if topic is not None:
        _refuse(line, "topic", topic_problem(topic))
    if partition is not None:
        _refuse(line, "partition", partition_problem(partition))


def _check_observation(obs: Observation) -> None:
    """Refuse what Kafka cannot have printed (spec/kafka_limits.py), naming the line and the field."""
    _check_tp(obs.line, obs.topic, obs.partition)
    for name, value in obs.fields:
        if name in _ID_FIELDS:
            _check_ids(obs.line, name, value)
        elif name == "leader":
            _refuse(obs.line, name, leader_problem(value, (NO_LEADER, LEADER_DURING_DELETE)))
        elif name == "leader_epoch":
            _refuse(obs.line, name, epoch_problem(value, "leader epoch", (NO_EPOCH, EPOCH_DURING_DELETE)))
        elif name == "partition_epoch":
            _refuse(obs.line, "zkVersion", epoch_problem(value, "zkVersion", (ZK_MATCH_ANY_VERSION, ZK_UNKNOWN_VERSION)))
        elif name == "controller_epoch":
            _refuse(obs.line, name, epoch_problem(value, "controller epoch"))
    if obs.removed_replica is not None:
        _refuse(obs.line, "removed replica", broker_problem(obs.removed_replica))


def parse_log(text: str) -> ParsedLog:
    """Every recognised line as observations (in file order), plus what the log says about the cluster."""
    lines = text.splitlines()
    parsed = ParsedLog([], total=len(lines))
    for n, raw in enumerate(lines, start=1):
        line = _unwrap(raw.strip())
        if not line:
            continue
        found = match_line(line)
        if found is None:
            parsed.ignored.append(n)
            continue
        shape, m = found
        parsed.recognised += 1
        parsed.shapes[shape.name] += 1
        failed = _failed_election(shape, m, n, line, lines)
        if failed is not None:
            _check_observation(failed)
            parsed.observations.append(failed)
            continue
        if shape.kind == "outside":
            parsed.outside.setdefault(shape.name, []).append(n)
            continue
        if shape.kind == "state":
            found_here = _observations(shape, m, n, line, parsed)
            for obs in found_here:
                _check_observation(obs)
            parsed.observations += found_here
        _context(shape, m, n, parsed)
        for pattern in BROKER_LISTS:
            for b in pattern.finditer(line):
                _check_ids(n, "broker", ids(b.group(1)))
                parsed.broker_ids.update(ids(b.group(1)))
    parsed.observations = _unwritten_removals(parsed.observations)
    for obs in parsed.observations:
        for name in ("replicas", "adding", "removing", "memory_replicas", "memory_target"):
            v = obs.get(name)
            if v:
                parsed.broker_ids.update(v)
    for replicas, _ in parsed.created.values():
        parsed.broker_ids.update(replicas)
    for _, _, replicas in parsed.targets:
        parsed.broker_ids.update(replicas)
    return parsed


def _unwritten_removals(observations: list[Observation]) -> list[Observation]:
    """Kafka logs "... after removing replica R from the ISR ..." also for a partition whose ISR does not hold R
    (ZkReplicaStateMachine.doRemoveReplicasFromIsr logs leaderAndIsrsWithoutReplica, unwritten, with the
    others; seen in 3.9.2: a controlled shutdown's removal, then the broker failure's again): such a line shows
    the partition's state as the last line showed it, epochs and all, and is read as that state, not as a
    write."""
    last: dict[tuple[str, int], tuple] = {}
    out = []
    for obs in observations:
        key = (obs.topic, obs.partition)
        shown = tuple(obs.get(n) for n in ("leader", "isr", "leader_epoch", "partition_epoch"))
        if obs.removed_replica is not None and last.get(key) == shown and obs.removed_replica not in shown[1]:
            obs = replace(obs, removed_replica=None, what=obs.what + " (no write: not in the ISR)")
        if None not in shown:
            last[key] = (shown[0], shown[1], shown[2], shown[3])
        out.append(obs)
    return out


BROKER_LISTS = (
    re.compile(r"to broker (\d+)"),
    re.compile(r"to brokers \w*\(([\d, ]*)\)"),
)
# the shapes as the old name (kept for callers)
PATTERNS = [(s.name, s.pattern) for s in SHAPES]


__all__ = ["BY_NAME", "PATTERNS", "SHAPES", "Observation", "ParsedLog", "kv_colon", "parse_log"]
