"""Read a KRaft metadata log and check it record by record against a KRaft profile.

Input: the output of `kafka-dump-log.sh --cluster-metadata-decoder --files …/__cluster_metadata-0/*.log`
(Kafka 3.x and 4.0: core's kafka/tools/DumpLogSegments.scala; 4.4: tools' org/apache/kafka/tools/
DumpLogSegments.java, the same lines; a real 3.9.2 / 4.0.2 / 4.4.0 cluster's output is in
tests/fixtures/kraft_metadata_real/): batch header lines
`baseOffset: B lastOffset: L count: N … isControl: false …` followed by one line per record,

    | offset: 12 CreateTime: 1700000000000 keySize: -1 valueSize: 30 sequence: -1 headerKeys: [] payload: {"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,"topicId":"…","isr":[1,2]}}

where `data` is the record as Kafka's generated JSON converter writes it (field names of
metadata/src/main/resources/common/metadata/*.json in camelCase; tagged fields left out when
they hold their default, so a PartitionChangeRecord only carries the fields it changes).
Also read: what `kafka-metadata-shell.sh` prints for a partition — the PartitionRecord JSON
(Kafka 3.0 – 3.4, possibly pretty-printed over several lines) or `PartitionRegistration(…)`
(3.5+) — as the partition's full state at that point.

A metadata log is the controller's own sequence of decisions, so the check is strict
(`check_metadata`): each record must be what the profile's reference writes for one action
taken in the state the previous records built — a PartitionChangeRecord one of
AlterPartition (any ISR the leader may have sent), AlterPartitionReassignments (the target
it shows, or a cancel) or an election; a batch that fences / unfences a broker exactly the
records of `BrokerFail` / `BrokerRecover`, one that puts it in controlled shutdown those of
`BrokerControlledShutdown`, a live broker's new registration those of `BrokerRestart`. Epochs are replayed as Kafka does
(`kraft_change.apply_record` = PartitionRegistration.merge), so a record that bumps the
leader epoch when the reference does not is caught too. A partition's PartitionRecord
(creation, or a snapshot) is its initial state; the ELR fields (4.x, KIP-966) are replayed and
compared like the ISR, with the topic's min.insync.replicas from the log's ConfigRecords. Records
about things outside the model (topic deletion, an ELR cleared by a configuration change, a
partition whose creation is not in the log) are counted as not understood and make the verdict
INCONCLUSIVE, never INVALID. With `topics`, only those topics' records are checked (a broker's
batch on its changes of them); the others are skipped and counted.

Each partition is modelled as its own one-partition topic `T/P` (the kraft reference never
relates partitions of one topic except through the topic's unclean-election flag, which is
copied), so that partitions the log does not create need no placeholders.

A record Kafka's controller cannot have written is bad input (a `UsageError`, exit 2, `line N: data.field:
why`; spec/kafka_limits.py): a topic name Topic.validate refuses (TOPIC_RECORD's name, a metadata-shell
path), a partition id or broker id that is negative or beyond Java's int, a leader other than a broker id
or -1 (NO_LEADER; -2 NO_LEADER_CHANGE in a PartitionChangeRecord), a leader or partition epoch below -1
(the records' default, "no epoch") or beyond Java's int.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

from kreassign.reference import ActionNotSupported, InvalidAction, Profile
from kreassign.reference.kraft_change import apply_record
from kreassign.spec import actions as A
from kreassign.spec.kafka_limits import (
    NO_EPOCH,
    NO_LEADER,
    NO_LEADER_CHANGE,
    broker_problem,
    epoch_problem,
    int32_problem,
    leader_problem,
    partition_problem,
    topic_problem,
)
from kreassign.spec.state import Broker, ClusterState, Partition, Topic, ordered_minus

from kreassign.errors import UsageError

BATCH = re.compile(r"baseOffset: (?P<base>-?\d+) lastOffset: (?P<last>-?\d+) count: \S+.*?isControl: (?P<ctl>true|false)")
RECORD = re.compile(r"\|\s*offset: (?P<offset>\d+) .*?(?: payload: (?P<payload>.*))?$")
# `--skip-record-metadata`: the record line is only its payload (DumpLogSegments.dumpLog, 3.9 - 4.4)
BARE_RECORD = re.compile(r"^\|\s+payload: (?P<payload>.*)$")
SHELL_TEXT = re.compile(r"PartitionRegistration\((?P<body>replicas=.*)\)\s*$")
SHELL_PATH = re.compile(r"\bcat\s+(?:/image)?/topics/(?:byName/)?(?P<topic>[^/\s]+)/(?P<partition>\d+)(?:/data)?\s*$")

# record types that say nothing about partitions or brokers the model tracks: read and skipped
IRRELEVANT = {
    "FEATURE_LEVEL_RECORD", "NO_OP_RECORD", "PRODUCER_IDS_RECORD", "ACCESS_CONTROL_ENTRY_RECORD",
    "REMOVE_ACCESS_CONTROL_ENTRY_RECORD", "CLIENT_QUOTA_RECORD", "USER_SCRAM_CREDENTIAL_RECORD",
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD", "DELEGATION_TOKEN_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD",
    "ZK_MIGRATION_STATE_RECORD", "BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD",
    "REGISTER_CONTROLLER_RECORD", "UNREGISTER_CONTROLLER_RECORD", "UNREGISTER_BROKER_RECORD",
}
# record types about one topic (by name or id): with `topics`, those of other topics are skipped
PARTITION_TYPES = {"PARTITION_RECORD", "PARTITION_CHANGE_RECORD", "PARTITION_STATE"}


@dataclass(frozen=True)
class MetaRecord:
    """One metadata record (or one metadata-shell partition state) of the input."""

    line: int
    text: str
    type: str  # PARTITION_CHANGE_RECORD, ...; "PARTITION_STATE" for a metadata-shell partition
    data: dict
    batch: int = -1  # index of its batch; -1: no batch header seen
    offset: int | None = None
    topic: str | None = None  # metadata shell: the topic named by the `cat` path, if any


@dataclass
class MetadataLog:
    records: list[MetaRecord]
    total: int = 0
    shapes: Counter = field(default_factory=Counter)  # recognised lines by shape
    other: list[int] = field(default_factory=list)  # lines that are not records (other output, blank excluded)
    undecoded: list[int] = field(default_factory=list)  # records printed without a decodable payload


def looks_like_metadata_log(text: str) -> bool:
    """Whether the text is kafka-dump-log metadata output or a metadata-shell partition state."""
    head = text[:20000]
    return ('payload: {"type":' in head or "PartitionRegistration(replicas=" in head
            or ("baseOffset:" in head and "| offset:" in head)
            or bool(re.search(r'^\s*\{\s*$', head, re.MULTILINE) and '"partitionEpoch"' in head))


def _json(line: int, text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"line {line}: {what} is not valid JSON (column {e.colno}: {e.msg})") from None


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def _registration(line: int, text: str, body: str) -> dict:
    """`PartitionRegistration(replicas=[1, 2], directories=[…], isr=[…], …, partitionEpoch=3)` as PartitionRecord JSON."""
    out: dict[str, Any] = {}
    for m in re.finditer(r"(\w+)=(\[[^\]]*\]|[^,)]*)", body):
        key, value = m.group(1), m.group(2).strip()
        if key in ("replicas", "isr", "removingReplicas", "addingReplicas"):
            out[key] = _ints(value)
        elif key in ("leader", "leaderEpoch", "partitionEpoch"):
            try:
                out[key] = int(value)
            except ValueError:
                raise UsageError(f"line {line}: PartitionRegistration: {key}={value!r} is not an integer") from None
    missing = [k for k in ("replicas", "isr", "leader", "leaderEpoch", "partitionEpoch") if k not in out]
    if missing:
        raise UsageError(f"line {line}: PartitionRegistration without {', '.join(missing)}")
    return out


def parse_metadata_log(text: str) -> MetadataLog:
    """Every record of a kafka-dump-log metadata dump / metadata-shell output, in file order."""
    lines = text.splitlines()
    log = MetadataLog([], total=len(lines))
    batch, control = -1, False
    shell_topic: tuple[str, int] | None = None
    block: list[str] = []
    block_start = 0
    depth = 0
    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if block:  # inside a pretty-printed metadata-shell JSON object
            block.append(line)
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                data = _json(block_start, " ".join(block), "the metadata-shell JSON starting here")
                log.records.append(_shell_record(block_start, data, shell_topic))
                log.shapes["metadata-shell partition (JSON)"] += 1
                block = []
            continue
        if not line:
            continue
        m = BATCH.search(line)
        if m:
            batch += 1
            control = m.group("ctl") == "true"
            log.shapes["batch header"] += 1
            continue
        m = RECORD.search(line) or BARE_RECORD.search(line)
        if m:
            payload = m.group("payload")
            if control:
                log.shapes["control record"] += 1
                continue
            if payload is None or not payload.lstrip().startswith("{"):
                log.shapes["record without a decoded payload"] += 1
                log.undecoded.append(n)
                continue
            data = _json(n, payload, "payload")
            if not isinstance(data, dict) or not isinstance(data.get("type"), str) or not isinstance(data.get("data"), dict):
                raise UsageError(f"line {n}: payload: expected {{\"type\": …, \"version\": …, \"data\": {{…}}}}")
            offset = int(m.group("offset")) if "offset" in m.re.groupindex else None
            log.records.append(MetaRecord(n, line, data["type"], data["data"], batch, offset))
            log.shapes[data["type"]] += 1
            continue
        m = SHELL_PATH.search(line)
        if m:
            shell_topic = (m.group("topic"), int(m.group("partition")))
            _refuse(n, "topic", topic_problem(shell_topic[0]))
            _refuse(n, "partition", partition_problem(shell_topic[1]))
            log.shapes["metadata-shell command"] += 1
            continue
        m = SHELL_TEXT.search(line)
        if m:
            log.records.append(_shell_record(n, _registration(n, line, m.group("body")), shell_topic))
            log.shapes["metadata-shell partition (PartitionRegistration)"] += 1
            continue
        if line.startswith("{"):
            depth = line.count("{") - line.count("}")
            if depth > 0:
                block, block_start = [line], n
                continue
            data = _json(n, line, "line")
            if isinstance(data, dict) and "partitionEpoch" in data:
                log.records.append(_shell_record(n, data, shell_topic))
                log.shapes["metadata-shell partition (JSON)"] += 1
                continue
        log.other.append(n)
    if block:
        raise UsageError(f"line {block_start}: the JSON object starting here is not closed")
    return log


def _shell_record(line: int, data: dict, named: tuple[str, int] | None) -> MetaRecord:
    if named is not None and "partitionId" not in data:
        data = {**data, "partitionId": named[1]}
    return MetaRecord(line, json.dumps(data, sort_keys=True), "PARTITION_STATE", data,
                      topic=named[0] if named is not None else None)


# -- the check -------------------------------------------------------------------------------------------


@dataclass
class Finding:
    """The first record the profile cannot have written."""

    record: MetaRecord
    reason: str
    before: str  # the partition (or broker) before the record
    observed: str  # after the record, as the log has it
    model: str  # the closest the reference gets
    actions: str  # the action(s) tried for the closest
    differs: list[str]


@dataclass
class MetadataResult:
    verdict: str  # VALID | INVALID | INCONCLUSIVE
    profile: str
    total_lines: int
    shapes: Counter
    explained: Counter  # records explained, by type
    not_understood: dict[str, list[int]]  # why -> lines
    other_lines: list[int]
    finding: Finding | None = None
    explanation: list[tuple[int, str, str]] = field(default_factory=list)  # (line, record type, action)
    partitions: int = 0
    brokers: int = 0
    states: dict[int, ClusterState] = field(default_factory=dict)  # after each batch, by its last offset (keep_states)
    other_topics: list[int] = field(default_factory=list)  # lines about topics outside `topics`, not checked
    topics: tuple[str, ...] | None = None  # the topics checked (None: all)
    final_state: ClusterState | None = None  # the state the records built, up to the finding if any


def _key(topic: str, partition: int) -> str:
    return f"{topic}/{partition}"


def _ids(data: dict, name: str, line: int) -> tuple[int, ...]:
    v = data.get(name)
    if not isinstance(v, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in v):
        raise UsageError(f"line {line}: data.{name}: expected a list of broker ids, got {json.dumps(v)}")
    for k, b in enumerate(v):
        _refuse(line, f"data.{name}[{k}]", broker_problem(b))
    return tuple(v)


def _refuse(line: int, field: str, problem: str | None) -> None:
    if problem is not None:
        raise UsageError(f"line {line}: {field}: {problem}")


#: what Kafka allows in each integer field the check reads (spec/kafka_limits.py); other fields: any int32
_INT_RULES = {
    "partitionId": partition_problem,
    "brokerId": broker_problem,
    "id": broker_problem,  # FenceBrokerRecord / UnfenceBrokerRecord
    "leader": lambda v: leader_problem(v, (NO_LEADER,)),
    "leaderEpoch": lambda v: epoch_problem(v, "leader epoch", (NO_EPOCH,)),
    "partitionEpoch": lambda v: epoch_problem(v, "partition epoch", (NO_EPOCH,)),
}


def _int(data: dict, name: str, line: int, default: int | None = None) -> int:
    v = data.get(name, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise UsageError(f"line {line}: data.{name}: expected an integer, got {json.dumps(v)}")
    rule = _INT_RULES.get(name)
    _refuse(line, f"data.{name}", rule(v) if rule is not None else int32_problem(v, name))
    return v


def _partition_of(data: dict, line: int) -> Partition:
    """PartitionRecord JSON (PartitionRecord.json, 3.9) as a model partition."""
    return Partition(
        replicas=_ids(data, "replicas", line), isr=_ids(data, "isr", line), leader=_int(data, "leader", line),
        adding=_ids(data, "addingReplicas", line) if "addingReplicas" in data else (),
        removing=_ids(data, "removingReplicas", line) if "removingReplicas" in data else (),
        leader_epoch=_int(data, "leaderEpoch", line), partition_epoch=_int(data, "partitionEpoch", line),
        elr=_elr(data, "eligibleLeaderReplicas", line), last_known_elr=_elr(data, "lastKnownElr", line))


def _elr(data: dict, name: str, line: int) -> tuple[int, ...]:
    """An ELR field (PartitionRecord / PartitionChangeRecord v2+, KIP-966): absent or null is empty; the ELR is
    a set, kept ascending as the model keeps it."""
    if data.get(name) is None:
        return ()
    ids = _ids(data, name, line)
    return tuple(sorted(ids)) if name == "eligibleLeaderReplicas" else ids


CHANGE_FIELDS = {"isr": "isr", "leader": "leader", "replicas": "replicas", "removingReplicas": "removing",
                 "addingReplicas": "adding", "eligibleLeaderReplicas": "elr", "lastKnownElr": "last_known_elr"}


def change_of(data: dict, line: int) -> dict:
    """A PartitionChangeRecord's fields as a `kraft_change` record (absent = unchanged; leader -2 = no change)."""
    out: dict[str, Any] = {}
    for name, ours in CHANGE_FIELDS.items():
        if name not in data or data[name] is None:
            continue
        if name == "leader":
            leader = data[name]
            if not (isinstance(leader, int) and not isinstance(leader, bool) and leader == NO_LEADER_CHANGE):
                out[ours] = _int(data, name, line)
        elif ours in ("elr", "last_known_elr"):
            out[ours] = _elr(data, name, line)
        else:
            out[ours] = _ids(data, name, line)
    return out


def describe(p: Partition | None) -> str:
    if p is None:
        return "unknown"
    elr = (f" elr={list(p.elr)}" if p.elr else "") + (f" last_known_elr={list(p.last_known_elr)}"
                                                       if p.last_known_elr else "")
    return (f"replicas={list(p.replicas)} adding={list(p.adding)} removing={list(p.removing)} isr={sorted(p.isr)} "
            f"leader={p.leader} leader_epoch={p.leader_epoch} partition_epoch={p.partition_epoch}{elr}")


def partition_diff(observed: Partition, model: Partition) -> list[str]:
    out = []
    for name in ("replicas", "adding", "removing", "isr", "leader", "leader_epoch", "partition_epoch", "elr",
                 "last_known_elr"):
        a, b = getattr(observed, name), getattr(model, name)
        if name in ("isr", "elr"):
            a, b = sorted(a), sorted(b)
        if a != b:
            out.append(f"{name}: the log has {a if not isinstance(a, tuple) else list(a)}, "
                       f"the model has {b if not isinstance(b, tuple) else list(b)}")
    return out


def _same(p: Partition | None, q: Partition | None) -> bool:
    if p is None or q is None:
        return p is q
    return (p.replicas, p.adding, p.removing, p.leader, p.leader_epoch, p.partition_epoch, p.last_known_elr) == (
        q.replicas, q.adding, q.removing, q.leader, q.leader_epoch, q.partition_epoch, q.last_known_elr) \
        and set(p.isr) == set(q.isr) and set(p.elr) == set(q.elr)


class MetadataChecker:
    """Replays the records onto a model state and asks the reference for each step (module docstring)."""

    def __init__(self, profile: Profile, topics: frozenset[str] | None = None):
        self.profile = profile
        self.topics = topics  # check only these topics' records (None: all)
        self.state = ClusterState(brokers=(), topics=())
        self.names: dict[str, str] = {}  # topicId -> name
        self.unclean: dict[str, bool] = {}  # topic -> unclean.leader.election.enable ("" = the cluster default)
        self.min_isr: dict[str, int] = {}  # topic -> min.insync.replicas ("" = the cluster default)
        self.other_topics: list[int] = []  # lines of records about topics outside `topics`, skipped
        self.untracked: set[str] = set()  # partitions whose state is unknown (created before the log)
        self.explained: Counter = Counter()
        self.not_understood: dict[str, list[int]] = {}
        self.explanation: list[tuple[int, str, str]] = []
        self.assumed_brokers: list[int] = []

    # -- state helpers -----------------------------------------------------------------------------
    def topic_name(self, rec: MetaRecord) -> str:
        if rec.topic is not None:
            return rec.topic
        tid = rec.data.get("topicId")
        if not isinstance(tid, str):
            raise UsageError(f"line {rec.line}: data.topicId: expected a string")
        return self.names.get(tid, tid)

    def key_of(self, rec: MetaRecord) -> str:
        return _key(self.topic_name(rec), _int(rec.data, "partitionId", rec.line))

    def part(self, key: str, state: ClusterState | None = None) -> Partition | None:
        return (state or self.state).partition(key, 0)

    def put(self, state: ClusterState, key: str, part: Partition) -> ClusterState:
        if state.topic(key) is not None:
            return state.with_partition(key, 0, part)
        topic = key.rsplit("/", 1)[0]
        new = self._configured(Topic(key, (part,)), topic)
        return replace(state, topics=tuple(sorted(state.topics + (new,), key=lambda t: t.name)))

    def _configured(self, t: Topic, topic: str) -> Topic:
        """`t` with its topic's configuration as the log set it: the topic's own, else the cluster default's
        (resource "" of type BROKER), else Kafka's default (unclean off, min.insync.replicas 1)."""
        return replace(t, unclean_leader_election=self.unclean.get(topic, self.unclean.get("", False)),
                       min_insync_replicas=self.min_isr.get(topic, self.min_isr.get("", 1)))

    def ensure_brokers(self, ids, line: int) -> None:
        for b in ids:
            if b >= 0 and self.state.broker(b) is None:
                self.state = self.state.with_broker(Broker(b))
                self.assumed_brokers.append(b)

    def skip(self, why: str, line: int) -> None:
        self.not_understood.setdefault(why, []).append(line)

    def explain(self, rec: MetaRecord, action: str) -> None:
        self.explained[rec.type] += 1
        self.explanation.append((rec.line, rec.type, action))

    # -- one batch -----------------------------------------------------------------------------------
    def batch(self, recs: list[MetaRecord]) -> Finding | None:
        if self.topics is not None:
            recs = self._mine(recs)
        brokers = [r for r in recs if self._broker_change(r) is not None]
        if len(brokers) == 1:
            return self.broker_step(recs, brokers[0])
        if len(brokers) > 1:
            # the Raft client appends the records of events that come together in one batch (the append linger):
            # two brokers fenced at once in 4.4.0 gave [fence 3, no-op, change, fence 1]. A broker event's partition
            # changes come before its broker record (generateLeaderAndIsrUpdates, then the registration change), so
            # each broker record closes its own event; anything after the last one belongs to it
            events, current = [], []
            for r in recs:
                current.append(r)
                if self._broker_change(r) is not None:
                    events.append(current)
                    current = []
            events[-1] += current
            for event in events:
                [brec] = [r for r in event if self._broker_change(r) is not None]
                found = self.broker_step(event, brec)
                if found is not None:
                    return found
            return None
        for rec in recs:
            found = self.record(rec)
            if found is not None:
                return found
        return None

    def _mine(self, recs: list[MetaRecord]) -> list[MetaRecord]:
        """The batch without the records about topics outside `self.topics` (counted in `other_topics`)."""
        for r in recs:  # a topic's name comes in the batch that creates it
            if r.type == "TOPIC_RECORD" and isinstance(r.data.get("topicId"), str):
                self.names[r.data["topicId"]] = r.data.get("name")
        out = []
        for r in recs:
            topic = None
            if r.type in PARTITION_TYPES or r.type in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD"):
                topic = self.topic_name(r)
            elif r.type == "CONFIG_RECORD" and r.data.get("resourceType") == 2:
                topic = r.data.get("resourceName")
            elif r.type == "CLEAR_ELR_RECORD" and r.data.get("topicName"):
                topic = r.data.get("topicName")
            if topic is not None and topic not in self.topics:
                self.other_topics.append(r.line)
            else:
                out.append(r)
        return out

    @staticmethod
    def _broker_change(rec: MetaRecord) -> str | None:
        """fence / unfence / register / shutdown for the records that change a broker's state, else None."""
        t, d = rec.type, rec.data
        if t == "FENCE_BROKER_RECORD":
            return "fence"
        if t == "UNFENCE_BROKER_RECORD":
            return "unfence"
        if t == "REGISTER_BROKER_RECORD":
            return "register"
        if t == "BROKER_REGISTRATION_CHANGE_RECORD":
            if d.get("inControlledShutdown") == 1:
                return "shutdown"
            if d.get("fenced") == 1:
                return "fence"
            if d.get("fenced") == -1:
                return "unfence"
        return None

    def record(self, rec: MetaRecord) -> Finding | None:
        t, d = rec.type, rec.data
        if t == "TOPIC_RECORD":
            name, tid = d.get("name"), d.get("topicId")
            if not isinstance(name, str) or not isinstance(tid, str):
                raise UsageError(f"line {rec.line}: TOPIC_RECORD needs \"name\" and \"topicId\" strings")
            _refuse(rec.line, "data.name", topic_problem(name))
            self.names[tid] = name
            self.explain(rec, "topic created")
        elif t == "PARTITION_RECORD" or t == "PARTITION_STATE":
            return self.partition_record(rec)
        elif t == "PARTITION_CHANGE_RECORD":
            return self.change(rec)
        elif t == "CONFIG_RECORD":
            name = d.get("name")
            # resourceType 2 TOPIC, 4 BROKER (name "": the cluster default) — ConfigResource.Type ids
            if name in ("unclean.leader.election.enable", "min.insync.replicas") and d.get("resourceType") in (2, 4) \
                    and (d.get("resourceType") == 2 or d.get("resourceName") == ""):
                topic = d.get("resourceName") if d.get("resourceType") == 2 else ""
                value = d.get("value")
                if name == "unclean.leader.election.enable":
                    if value is None:
                        self.unclean.pop(topic, None)
                    else:
                        self.unclean[topic] = str(value).lower() == "true"
                else:
                    try:
                        if value is None:
                            self.min_isr.pop(topic, None)
                        else:
                            self.min_isr[topic] = int(value)
                    except ValueError:
                        raise UsageError(f"line {rec.line}: CONFIG_RECORD min.insync.replicas: {value!r} is not "
                                         "an integer") from None
                self.state = replace(self.state, topics=tuple(
                    self._configured(x, x.name.rsplit("/", 1)[0]) for x in self.state.topics))
                self.explain(rec, f"{'topic' if topic else 'cluster default'} configuration ({name})")
            else:
                self.explained[t] += 1  # other configurations do not enter the model
        elif t == "CLEAR_ELR_RECORD":
            self.clear_elr(rec)
        elif t == "REMOVE_TOPIC_RECORD":
            tid = d.get("topicId")
            name = self.names.get(tid, tid)
            gone = [x.name for x in self.state.topics if x.name.rsplit("/", 1)[0] == name]
            self.state = replace(self.state, topics=tuple(x for x in self.state.topics if x.name not in gone))
            self.skip("topic deletion (not in the model)", rec.line)
        elif self._broker_change(rec) is not None:
            return self.broker_step([rec], rec)
        elif t in IRRELEVANT or t == "BROKER_REGISTRATION_CHANGE_RECORD":
            self.explained[t] += 1
        else:
            self.skip(f"record type {t} (not in the model)", rec.line)
        return None

    def clear_elr(self, rec: MetaRecord) -> None:
        """ClearElrRecord (Kafka 4.0+, KIP-966): the ELR and last known ELR of the topic's partitions (every
        topic's when the name is empty) cleared — written when a topic is created and when its (or the cluster's)
        min.insync.replicas changes (ConfigurationControlManager / ReplicationControlManager, 4.0). Not an action
        of the model: explained when there was nothing to clear, else applied and not understood."""
        topic = rec.data.get("topicName") or ""
        touched = False
        topics = []
        for x in self.state.topics:
            p = x.partitions[0]
            if (not topic or x.name.rsplit("/", 1)[0] == topic) and (p.elr or p.last_known_elr):
                touched = True
                x = replace(x, partitions=(replace(p, elr=(), last_known_elr=()),))
            topics.append(x)
        self.state = replace(self.state, topics=tuple(topics))
        if touched:
            self.skip("ELR cleared by a min.insync.replicas change (not in the model)", rec.line)
        else:
            self.explain(rec, "ELR cleared: nothing to clear")

    def partition_record(self, rec: MetaRecord) -> Finding | None:
        key = self.key_of(rec)
        new = _partition_of(rec.data, rec.line)
        old = self.part(key)
        if old is not None and not _same(old, new):
            diff = partition_diff(new, old)
            return Finding(rec, "the partition's full state (snapshot or metadata shell) differs from the state "
                           "the previous records built", describe(old), describe(new), describe(old),
                           "none: a state restatement changes nothing", diff)
        self.untracked.discard(key)
        self.ensure_brokers(new.replicas, rec.line)
        self.state = self.put(self.state, key, new)
        what = "initial state (partition created)" if old is None else "state restated, equal"
        self.explain(rec, what)
        return None

    def candidates(self, key: str, part: Partition, after: Partition) -> list[Any]:
        """Every action that may have written a change of `part` into `after`."""
        out: list[Any] = []
        base = tuple(after.isr)
        removing_in_isr = [b for b in part.isr if b in part.removing and b not in base]
        # a completing AlterPartition's ISR still held the removing replicas the record drops: the fullest first
        for k in range(len(removing_in_isr), -1, -1):
            for extra in combinations(removing_in_isr, k):
                isr = tuple(b for b in part.isr if b in base or b in extra) + tuple(b for b in base if b not in part.isr)
                out.append(A.AlterPartition(key, 0, part.leader, isr, part.leader_epoch, part.partition_epoch))
        out.append(A.Cancel(key, 0))
        target = ordered_minus(after.replicas, after.removing)
        if target:
            out.append(A.Reassign(key, 0, target))
        out += [A.ElectLeaders(key, 0, A.PREFERRED), A.ElectLeaders(key, 0, A.UNCLEAN)]
        return out

    def apply(self, state: ClusterState, action: Any) -> ClusterState | None:
        try:
            return self.profile.apply(state, action).state
        except (InvalidAction, ActionNotSupported, ValueError, KeyError):
            return None

    def change(self, rec: MetaRecord) -> Finding | None:
        key = self.key_of(rec)
        part = self.part(key)
        if part is None:
            self.untracked.add(key)
            self.skip("change of a partition created before the log starts (its state is unknown)", rec.line)
            return None
        after = apply_record(part, change_of(rec.data, rec.line))
        best: tuple[int, Any, Partition] | None = None
        for action in self.candidates(key, part, after):
            s2 = self.apply(self.state, action)
            if s2 is None:
                continue
            model = self.part(key, s2)
            if _same(model, after) and all(_same(self.part(x.name, s2), x.partitions[0]) for x in self.state.topics
                                           if x.name != key):
                self.state = self.put(self.state, key, after)
                self.explain(rec, _action_text(action))
                return None
            score = len(partition_diff(after, model))
            if best is None or score < best[0]:
                best = (score, action, model)
        model = best[2] if best else part
        return Finding(rec, "no action of the profile writes this change in this state", describe(part), describe(after),
                       describe(model), _action_text(best[1]) if best else "none applies",
                       partition_diff(after, model))

    def broker_step(self, recs: list[MetaRecord], brec: MetaRecord) -> Finding | None:
        kind = self._broker_change(brec)
        d = brec.data
        bid = _int(d, "id" if brec.type in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD") else "brokerId", brec.line)
        changes = [r for r in recs if r.type == "PARTITION_CHANGE_RECORD"]
        others = [r for r in recs if r is not brec and r.type != "PARTITION_CHANGE_RECORD"]
        known = self.state.broker(bid)
        # the log's own view: every record of the batch replayed
        observed = self.state
        unknown: list[MetaRecord] = []
        for r in changes:
            key = self.key_of(r)
            part = self.part(key, observed)
            if part is None:
                unknown.append(r)
                continue
            observed = self.put(observed, key, apply_record(part, change_of(r.data, r.line)))
        if kind == "register":
            fenced = d.get("fenced", True) is not False
            if known is not None and known.registered and changes:
                # a fenced broker registering a new incarnation after an unclean shutdown (SIGKILL: no previous
                # broker epoch): ClusterControlManager.registerBroker runs the unclean-shutdown handler in the
                # same batch, which with ELR removes the broker from every ELR it is in
                # (ReplicationControlManager.handleBrokerUncleanShutdown, 4.x) — the reference's BrokerRestart.
                # A batch without changes is a clean registration (or nothing to remove): registration alone.
                action = A.BrokerRestart(bid)
                observed = observed.with_broker(Broker(bid, registered=True, active=False))
            elif known is None or not known.active:
                observed = observed.with_broker(Broker(bid, registered=True, active=not fenced))
                action = None
                for r in changes:  # a first registration writes no partition change: not modelled
                    self.skip("partition change in a registration batch (not in the model)", r.line)
            else:
                # a new incarnation of a live broker (restarted before its session expired): registered fenced,
                # and from 4.0 its replicas leave the ISRs as in a fence (KAFKA-18106) — the reference's BrokerRestart
                action = A.BrokerRestart(bid)
                observed = observed.with_broker(Broker(bid, registered=True, active=not fenced))
        elif kind == "shutdown":
            # inControlledShutdown: 1 (processBrokerHeartbeat, wantShutDown while leading): the broker leaves every
            # ISR and its leaderships move in this batch; its fence record follows alone once it stops leading
            if known is None:
                self.ensure_brokers([bid], brec.line)
                known = self.state.broker(bid)
            action = A.BrokerControlledShutdown(bid)
            observed = observed.with_broker(replace(known, registered=True, active=False))
        else:
            if known is None:
                self.ensure_brokers([bid], brec.line)
                known = self.state.broker(bid)
                observed = observed.with_broker(known)
            action = A.BrokerFail(bid) if kind == "fence" else A.BrokerRecover(bid)
            observed = observed.with_broker(replace(known, registered=True, active=(kind == "unfence")))
        for r in unknown:
            self.skip("change of a partition created before the log starts (its state is unknown)", r.line)
        if action is None:
            self.state = observed
            self.explain(brec, f"broker {bid} registered{' (fenced)' if d.get('fenced', True) is not False else ''}")
            return self._rest(others)
        model = self.apply(self.state, action)
        if model is not None and self._agrees(model, observed):
            self.state = observed
            for r in sorted([brec] + [r for r in changes if r not in unknown], key=lambda r: r.line):
                self.explain(r, _action_text(action) if r is brec else f"part of {_action_text(action)}")
            return self._rest(others)
        return self._broker_finding(brec, changes, action, model, observed)

    def _agrees(self, model: ClusterState, observed: ClusterState) -> bool:
        if {b.id: (b.registered, b.active) for b in model.brokers} != {b.id: (b.registered, b.active) for b in observed.brokers}:
            return False
        return all(_same(self.part(x.name, model), x.partitions[0]) for x in observed.topics)

    def _broker_finding(self, brec, changes, action, model, observed) -> Finding:
        recs = {self.key_of(r): r for r in changes}
        if model is not None:
            for x in observed.topics:
                m = self.part(x.name, model)
                if not _same(m, x.partitions[0]):
                    rec = recs.get(x.name, brec)
                    return Finding(rec, f"{_action_text(action)} does not write this (partition {x.name.replace('/', '-')})",
                                   describe(self.part(x.name)), describe(x.partitions[0]), describe(m),
                                   _action_text(action), partition_diff(x.partitions[0], m))
        return Finding(brec, "no action of the profile changes the brokers this way", "", "", "",
                       _action_text(action) if action is not None else "none", [])

    def _rest(self, others: list[MetaRecord]) -> Finding | None:
        for r in others:
            found = self.record(r)
            if found is not None:
                return found
        return None


def _action_text(action: Any) -> str:
    text = str(action)
    return re.sub(r"(\S+)/(\d+)-0\b", r"\1-\2", text)


def check_metadata(log: MetadataLog, profile: Profile, keep_states: bool = False,
                   topics: Iterable[str] | None = None) -> MetadataResult:
    """The verdict on a parsed metadata log (module docstring). `keep_states`: also return the model
    state after each batch (partitions as one-partition topics `T/P`, see the module docstring). `topics`:
    check only these topics' records (the brokers' are checked too, restricted to them); the other topics'
    records are skipped and counted, never checked."""
    only = frozenset(topics) if topics is not None else None
    checker = MetadataChecker(profile, only)
    batches: list[list[MetaRecord]] = []
    for rec in log.records:
        if rec.batch >= 0 and batches and batches[-1][0].batch == rec.batch:
            batches[-1].append(rec)
        else:
            batches.append([rec])
    finding = None
    states: dict[int, ClusterState] = {}
    for recs in batches:
        finding = checker.batch(recs)
        if finding is not None:
            break
        if keep_states and recs[-1].offset is not None:
            states[recs[-1].offset] = checker.state
    not_understood = dict(checker.not_understood)
    if log.undecoded:
        not_understood["records printed without a decoded payload"] = list(log.undecoded)
    if finding is not None:
        verdict = "INVALID"
    elif not_understood or not checker.explanation:
        verdict = "INCONCLUSIVE"
    else:
        verdict = "VALID"
    return MetadataResult(verdict, profile.name, log.total, log.shapes, checker.explained, not_understood,
                          log.other, finding, checker.explanation, partitions=len(checker.state.topics),
                          brokers=len(checker.state.brokers), states=states, other_topics=checker.other_topics,
                          topics=tuple(sorted(only)) if only is not None else None, final_state=checker.state)


def report_metadata(result: MetadataResult, path: str) -> str:
    explained = sum(result.explained.values())
    nu = sum(len(v) for v in result.not_understood.values())
    lines = [f"kreassign validate-trace: {path} (kraft-metadata, profile {result.profile})",
             (f"{result.total_lines} lines: {sum(result.shapes.values())} recognised, {explained} records explained, "
             f"{nu} not understood, {len(result.other_lines)} other lines skipped"),
             f"{result.partitions} partition(s), {result.brokers} broker(s) tracked"]
    if result.topics is not None:
        lines.append(f"only topic(s) {', '.join(result.topics)}: {len(result.other_topics)} record(s) of other topics "
                     "skipped")
    lines += [f"  {n:>7} {shape}" for shape, n in sorted(result.shapes.items())]
    for why, where in result.not_understood.items():
        lines.append(f"  not understood: {why}: {len(where)} line(s), first at line {where[0]}")
    if result.verdict == "INVALID":
        f = result.finding
        lines.append(f"INVALID at line {f.record.line} (offset {f.record.offset}): {f.reason}")
        lines.append(f"  line {f.record.line}: {f.record.text}")
        if f.before:
            lines.append(f"  before:      {f.before}")
        lines.append(f"  the log:     {f.observed}")
        lines.append(f"  the model:   {f.model}   (closest: {f.actions})")
        lines += [f"  differs: {d}" for d in f.differs]
    elif result.verdict == "VALID":
        lines.append(f"VALID: every record is a step of {result.profile}")
        lines += [f"  line {ln:>6} {t}: {a}" for ln, t, a in result.explanation[:200]]
        if len(result.explanation) > 200:
            lines.append(f"  ... ({len(result.explanation) - 200} more)")
    else:
        lines.append("INCONCLUSIVE: no record contradicts the profile, but some could not be checked (listed above)"
                     if result.explanation else "INCONCLUSIVE: nothing in the file could be checked")
    return "\n".join(lines)


def metadata_json(result: MetadataResult, path: str) -> dict[str, Any]:
    f = result.finding
    return {
        "file": path, "format": "kraft-metadata", "profile": result.profile, "verdict": result.verdict,
        "valid": result.verdict == "VALID", "inconclusive": result.verdict == "INCONCLUSIVE",
        "lines": result.total_lines, "shapes": dict(result.shapes), "explained": dict(result.explained),
        "not_understood": result.not_understood, "other_lines": len(result.other_lines),
        "topics": list(result.topics) if result.topics is not None else None,
        "other_topic_records": len(result.other_topics),
        "explanation": [{"line": ln, "record": t, "action": a} for ln, t, a in result.explanation],
        "failure": None if f is None else {
            "line": f.record.line, "offset": f.record.offset, "record": f.record.type, "text": f.record.text,
            "reason": f.reason, "before": f.before, "observed": f.observed, "model": f.model,
            "closest_action": f.actions, "differs": f.differs},
    }


__all__ = ["MetaRecord", "MetadataLog", "MetadataResult", "check_metadata", "looks_like_metadata_log",
           "metadata_json", "parse_metadata_log", "report_metadata"]
