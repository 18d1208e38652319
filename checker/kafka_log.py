"""Read Kafka's own ZooKeeper-controller and state-change log lines as partial observations.

Each recognised line says something about one partition (or the controller) at the moment
it was logged, in Kafka's words; `parse_log` turns it into an `Observation` carrying only
the fields that line carries (docs/validate-trace.md lists every pattern). The lines are
those of Kafka 2.4 – 3.9's KafkaController (kafka.controller.KafkaController) and its
state-change logger (ZkPartitionStateMachine, ZkReplicaStateMachine), e.g. from seed 003:

    Successfully updated assignment of partition T-0 to ReplicaAssignment(replicas=4,5,6,1,2,3, addingReplicas=4,5,6, removingReplicas=1,2,3)
    Updated leader epoch for partition T-0 to 6, zkVersion=8
    Changed partition T-0 from OnlinePartition to OnlinePartition with state LeaderAndIsr(leader=4, leaderEpoch=7, isr=List(5, 1, 6, 2, 3, 4), leaderRecoveryState=RECOVERED, zkVersion=12)
    Partition T-0 state changed to (Leader:4,ISR:5,6,2,3,4,...,LeaderEpoch:8,ZkVersion:13,ControllerEpoch:1) after removing replica 1 from the ISR as part of transition to OfflineReplica

Anything before the message (timestamps, `INFO [Controller id=1]`, a logger suffix such as
`(state.change.logger)`) is ignored. Lines that carry no partition state (LeaderAndIsr /
UpdateMetadata / StopReplica sends) only name brokers, which `broker_ids` collects to
build the initial cluster. Field names (`Observation.fields`):

| field | meaning in the model |
|---|---|
| `replicas`, `adding`, `removing` | the partition's assignment as persisted (ZooKeeper) |
| `leader`, `isr` (compared as a set), `leader_epoch`, `partition_epoch` (zkVersion) | the partition state znode |
| `controller_epoch` | the active controller's epoch |
| `memory_replicas`, `memory_adding`, `memory_removing` | the controller context's assignment (zk) |
| `memory_target` | target of the controller context's assignment (zk) |
| `target_in_isr` | every target replica is in the ISR |
| `next_step` | the partition's next pending onPartitionReassignment step (zk) |
| `leader_live` | the current leader's broker is live |
| `znode_entry` | the partition's /admin/reassign_partitions entry, about to be removed (None: no entry) |
| `znode_empty` | /admin/reassign_partitions holds nothing (controller-wide) |

`removed_replica` marks an OfflineReplica ISR removal: one ZooKeeper write among
possibly several of a single model step (docs/validate-trace.md, "Sub-steps").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

TP = r"(?P<topic>\S+)-(?P<partition>\d+)"
IDS = r"[-\d, ]*"


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
    recognised: int = 0  # lines matching a known pattern (with or without partition state)
    ignored: list[int] = field(default_factory=list)  # non-blank lines no pattern matched
    total: int = 0  # lines in the file


def _ids(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"-?\d+", text))


def _kv_colon(text: str) -> dict[str, str]:
    """`Leader:1,ISR:1,2,3,LeaderEpoch:6,...` (commas inside ISR) as a dict."""
    return {m.group(1): m.group(2) for m in re.finditer(r"(\w+):([^:]*?)(?=,\w+:|$)", text)}


def _kv_equals(text: str) -> dict[str, str]:
    """`leader=4, leaderEpoch=7, isr=List(5, 1, 6), zkVersion=12` as a dict."""
    out = {}
    for m in re.finditer(r"(\w+)=(\w*\([^)]*\)|[^,)]*)", text):
        out[m.group(1)] = m.group(2).strip()
    return out


def _leader_and_isr(d: dict[str, str]) -> list[tuple[str, Any]]:
    """Fields of a LeaderAndIsr printed either way (Leader:/leader=, ISR:/isr=List(...), ...)."""
    lower = {k.lower(): v for k, v in d.items()}
    out: list[tuple[str, Any]] = []
    if "leader" in lower:
        out.append(("leader", int(lower["leader"])))
    if "isr" in lower:
        out.append(("isr", _ids(lower["isr"])))
    if "leaderepoch" in lower:
        out.append(("leader_epoch", int(lower["leaderepoch"])))
    for key in ("zkversion", "partitionepoch"):
        if key in lower:
            out.append(("partition_epoch", int(lower[key])))
            break
    if "controllerepoch" in lower:
        out.append(("controller_epoch", int(lower["controllerepoch"])))
    return out


ASSIGNMENT = r"ReplicaAssignment\(replicas=(?P<r>[\d,]*), addingReplicas=(?P<a>[\d,]*), removingReplicas=(?P<rr>[\d,]*)\)"

PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # KafkaController.updateReplicaAssignmentForPartition: the topic znode written (steps U and B6)
    ("assignment written", re.compile(rf"Successfully updated assignment of partition {TP} to {ASSIGNMENT}")),
    # KafkaController.updateLeaderEpochAndSendRequest (A1, or B3 keeping a live leader)
    ("leader epoch bumped", re.compile(rf"Updated leader epoch for partition {TP} to (?P<le>\d+), zkVersion=(?P<zv>\d+)")),
    # the same, state-change log: the LeaderAndIsr sent with the controller's assignment
    ("LeaderAndIsr sent", re.compile(
        rf"Sent LeaderAndIsr request \((?P<lai>[^)]*)\) with new replica assignment {ASSIGNMENT} "
        rf"to leader (?P<to>-?\d+) for partition being reassigned {TP}")),
    # KafkaController.maybeCompleteReassignment: after an ISR change, phase B is next
    ("target caught up", re.compile(
        rf"Target replicas \w*\((?P<t>{IDS})\) have all caught up with the leader for reassigning partition {TP}")),
    # KafkaController.moveReassignedPartitionLeaderIfRequired (B3), three variants
    ("leader not in target", re.compile(
        rf"Leader (?P<l>-?\d+) for partition {TP} being reassigned, is not in the new list of replicas "
        rf"(?P<r>[\d,]*)\. Re-electing leader")),
    ("leader in target and alive", re.compile(
        rf"Leader (?P<l>-?\d+) for partition {TP} being reassigned, is already in the new list of replicas "
        rf"(?P<r>[\d,]*) and is alive")),
    ("leader in target but dead", re.compile(
        rf"Leader (?P<l>-?\d+) for partition {TP} being reassigned, is already in the new list of replicas "
        rf"(?P<r>[\d,]*) but is dead")),
    # ZkPartitionStateMachine: a leader election written
    ("partition state changed", re.compile(
        rf"Changed partition {TP} from (?P<from>\w+) to (?P<to>\w+) with state (?:LeaderAndIsr)?\((?P<lai>.*)\)")),
    # ZkReplicaStateMachine.doRemoveReplicasFromIsr: one ISR removal written
    ("replica removed from the ISR", re.compile(
        rf"Partition {TP} state changed to \((?P<lai>[^)]*)\) after removing replica (?P<rep>-?\d+) from the ISR "
        rf"as part of transition to (?P<st>\w+)")),
    # KafkaController.maybeRemoveFromZkReassignment (B7)
    ("znode entries removed", re.compile(
        r"Removing partitions \w*\((?P<m>.*)\) from the list of reassigned partitions in zookeeper")),
    # ... and the znode is deleted: nothing is left in it
    ("znode deleted", re.compile(r"No more partitions need to be reassigned\. Deleting zk path")),
]

# lines that carry no partition state but are Kafka's (they only name brokers)
NO_STATE = re.compile(
    r"Sending (?:LeaderAndIsr|UpdateMetadata|StopReplica) request|Processing automatic preferred replica leader election"
)
BROKER_LISTS = (
    re.compile(r"to broker (?P<b>\d+)"),
    re.compile(r"to brokers \w*\((?P<bs>[\d, ]*)\)"),
)


def _observation(kind: str, m: re.Match[str], line: int, text: str) -> list[Observation]:
    g = m.groupdict()
    tp = (g["topic"], int(g["partition"])) if g.get("topic") else (None, None)
    fields: list[tuple[str, Any]] = []
    removed = None
    if kind == "assignment written":
        fields = [("replicas", _ids(g["r"])), ("adding", _ids(g["a"])), ("removing", _ids(g["rr"]))]
    elif kind == "leader epoch bumped":
        fields = [("leader_epoch", int(g["le"])), ("partition_epoch", int(g["zv"]))]
    elif kind == "LeaderAndIsr sent":
        fields = _leader_and_isr(_kv_colon(g["lai"]))
        fields += [("memory_replicas", _ids(g["r"])), ("memory_adding", _ids(g["a"])),
                   ("memory_removing", _ids(g["rr"]))]
    elif kind == "target caught up":
        fields = [("memory_target", _ids(g["t"])), ("target_in_isr", True), ("next_step", "U")]
    elif kind.startswith("leader "):
        fields = [("leader", int(g["l"])), ("memory_replicas", _ids(g["r"])), ("memory_adding", ()),
                  ("memory_removing", ()), ("next_step", "B3")]
        if kind != "leader not in target":
            fields.append(("leader_live", kind.endswith("alive")))
    elif kind == "partition state changed":
        inner = g["lai"]
        fields = _leader_and_isr(_kv_equals(inner) if "=" in inner else _kv_colon(inner))
    elif kind == "replica removed from the ISR":
        fields = _leader_and_isr(_kv_colon(g["lai"]))
        removed = int(g["rep"])
    elif kind == "znode entries removed":
        out = []
        for e in re.finditer(rf"{TP} -> \w*\((?P<t>{IDS})\)", g["m"]):
            # logged before the rewrite: the entry is still there, with the replicas it lists
            out.append(Observation(line, text, e.group("topic"), int(e.group("partition")),
                                   (("znode_entry", _ids(e.group("t"))),), what=kind))
        return out
    elif kind == "znode deleted":
        return [Observation(line, text, None, None, (("znode_empty", True),), what=kind)]
    return [Observation(line, text, tp[0], tp[1], tuple(fields), removed_replica=removed, what=kind)]


def parse_log(text: str) -> ParsedLog:
    """Every recognised line as observations (in file order), plus the broker ids the log names."""
    lines = text.splitlines()
    parsed = ParsedLog([], total=len(lines))
    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        found = False
        for kind, pattern in PATTERNS:
            m = pattern.search(line)
            if m:
                found = True
                parsed.observations += _observation(kind, m, n, line)
                break
        if not found and NO_STATE.search(line):
            found = True
        for pattern in BROKER_LISTS:
            for m in pattern.finditer(line):
                parsed.broker_ids.update(_ids(m.group(1)))
        if found:
            parsed.recognised += 1
        else:
            parsed.ignored.append(n)
    for obs in parsed.observations:
        for name in ("replicas", "adding", "removing", "memory_replicas", "memory_target"):
            v = obs.get(name)
            if v:
                parsed.broker_ids.update(v)
    return parsed


__all__ = ["PATTERNS", "Observation", "ParsedLog", "parse_log"]
