"""Kafka's three files an operator holds before `kafka-reassign-partitions.sh --execute`.

- the plan: reassignment JSON (`--generate`'s "Proposed partition reassignment
  configuration", Cruise Control, a script), read by reference/reassign_json.py;
- the current assignment: the same JSON format, as `--execute` prints it under "Current
  partition replica assignment" (the whole printed message is accepted too);
- `kafka-topics.sh --describe` text (TopicCommand.TopicDescription / PartitionDescription
  printDescription, 2.x to 3.9): leaders, ISRs, in-flight reassignments, non-default configs.

Every error is a `PlanInputError` naming the file and the field or line, and when the
file looks like another of these formats, which one was expected and which one it is.
Names and numbers Kafka itself would refuse are errors too (spec/kafka_limits.py: Topic.validate's
topic names, non-negative int32 partition and broker ids, a leader that is a broker id or -1/none).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from kreassign.reference.reassign_json import (
    ReassignJsonError,
    ReassignmentPlanJson,
    parse_reassignment_json,
)
from kreassign.spec.kafka_limits import broker_problem, leader_problem, partition_problem, topic_problem

from kreassign.errors import UsageError

PLAN = "a reassignment plan JSON (kafka-reassign-partitions.sh --generate's proposed configuration)"
CURRENT = "Kafka's current-assignment JSON (what kafka-reassign-partitions.sh --execute prints for rollback)"
DESCRIBE = "the text output of kafka-topics.sh --describe"

_CURRENT_HEADER = "Current partition replica assignment"
_ROLLBACK_FOOTER = "Save this to use as the"
_PROPOSED_HEADER = "Proposed partition reassignment configuration"


class PlanInputError(UsageError):
    """Bad input file (exit 2): `file: where: problem`."""

    def __init__(self, file: str, where: str, problem: str):
        super().__init__(f"{file}: {where + ': ' if where else ''}{problem}")
        self.file, self.where, self.problem = file, where, problem


def guess_format(text: str) -> str | None:
    """What a file looks like, for error messages that say which format the user handed over."""
    s = text.lstrip("\ufeff \t\r\n")
    if s.startswith("Topic:") or re.search(r"^\s*Topic:\s*\S+\s+Partition:", text, re.MULTILINE):
        return DESCRIBE
    if s.startswith(_CURRENT_HEADER):
        return "the whole message kafka-reassign-partitions.sh --execute prints"
    if re.search(r"^\[(bounds|profiles)\]", text, re.MULTILINE):
        return "a kreassign bounds TOML file"
    if re.match(r"^\[\d{4}-\d\d-\d\d", s):
        return "a Kafka log file"
    if s.startswith("{"):
        try:
            data = json.loads(s)
        except ValueError:
            return None
        if isinstance(data, dict):
            if data.get("format") == "kreassign-trace":
                return "a kreassign trace file"
            if "brokers" in data and "topics" in data:
                return "a kreassign cluster state JSON"
            if "partitions" in data and "version" in data:
                return "a reassignment JSON"
            if "topics" in data and "version" in data:
                return "a --topics-to-move-json-file JSON (topics to move, not a plan)"
    return None


def _wrong(file: str, expected: str, text: str, problem: str) -> PlanInputError:
    looks = guess_format(text)
    same = looks == "a reassignment JSON" and expected in (PLAN, CURRENT)
    hint = f" (expected {expected}; this looks like {looks})" if looks and not same else ""
    return PlanInputError(file, "", problem + hint)


def read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PlanInputError(path, "", e.strerror or str(e)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise PlanInputError(path, "", f"not UTF-8 text (byte {e.start})") from None


def parse_plan(text: str, file: str) -> ReassignmentPlanJson:
    """The plan; a describe output, a trace or a TOML file handed over instead is named as such."""
    if not text.lstrip("\ufeff \t\r\n").startswith("{"):
        raise _wrong(file, PLAN, text, "not JSON")
    try:
        return parse_reassignment_json(text)
    except ReassignJsonError as e:
        raise _wrong_field(file, PLAN, text, e) from None


def _wrong_field(file: str, expected: str, text: str, e: ReassignJsonError) -> PlanInputError:
    looks = guess_format(text)
    if looks and looks != "a reassignment JSON":
        return PlanInputError(file, e.path, f"{e.problem} (expected {expected}; this looks like {looks})")
    return PlanInputError(file, e.path, e.problem)


def extract_current_json(text: str) -> tuple[str, int]:
    """The JSON of a current-assignment file: the file itself, or the JSON line of the whole
    message `--execute` prints (then with the line number it starts on, for errors)."""
    if _CURRENT_HEADER not in text:
        return text, 0
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if _CURRENT_HEADER in line)
    for i in range(start + 1, len(lines)):
        s = lines[i].strip()
        if s.startswith((_ROLLBACK_FOOTER, _PROPOSED_HEADER)):
            break
        if s.startswith("{"):
            return s, i
    return "", start


def parse_current(text: str, file: str) -> ReassignmentPlanJson:
    """Kafka's current-assignment JSON (or the whole `--execute` message holding it)."""
    body, line = extract_current_json(text)
    if not body.lstrip("\ufeff \t\r\n").startswith("{"):
        where = f"line {line + 1}" if line else ""
        raise _wrong(file, CURRENT, text, f"{where + ': ' if where else ''}no JSON found")
    try:
        return parse_reassignment_json(body)
    except ReassignJsonError as e:
        raise _wrong_field(file, CURRENT, text, e) from None


# -- kafka-topics.sh --describe ------------------------------------------------------------

#: the keys TopicCommand prints, 2.x to 3.9 (longest first so "Adding Replicas" beats "Replicas")
_KEYS = ("Removing Replicas", "Adding Replicas", "ReplicationFactor", "MarkedForDeletion", "PartitionCount",
         "LastKnownElr", "Partition", "Replicas", "TopicId", "Configs", "Offline", "Leader", "Topic", "Isr", "Elr")
_KEY_RE = re.compile(r"(?:^|\s)(" + "|".join(re.escape(k) for k in _KEYS) + r"):[ \t]?")


@dataclass(frozen=True)
class DescribedPartition:
    topic: str
    partition: int
    leader: int | None  # None: "Leader: none"
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    line: int = 0  # 1-based line in the file


@dataclass
class Describe:
    """What `kafka-topics.sh --describe` printed: per-topic non-default configs, per-partition state."""

    configs: dict[str, dict[str, str]] = field(default_factory=dict)
    partitions: dict[tuple[str, int], DescribedPartition] = field(default_factory=dict)

    def min_isr(self, topic: str, default: int = 1) -> int:
        return int(self.configs.get(topic, {}).get("min.insync.replicas", default))

    def unclean(self, topic: str, default: bool = False) -> bool:
        value = self.configs.get(topic, {}).get("unclean.leader.election.enable")
        return default if value is None else value.strip().lower() == "true"


def _fields(line: str) -> dict[str, str]:
    """`Key: value` pairs of one line; tabs or spaces between them (copy-paste turns tabs into spaces)."""
    matches = list(_KEY_RE.finditer(line))
    out = {}
    for m, nxt in zip(matches, matches[1:] + [None]):
        out[m.group(1)] = line[m.end(): nxt.start() if nxt else len(line)].strip()
    return out


def _int(text: str) -> int:
    """An integer as Kafka prints one: ASCII digits, maybe a minus (Python's int() also takes "١" or "1_0")."""
    text = text.strip()
    if not text.lstrip("-").isascii() or not text.lstrip("-").isdigit():
        raise ValueError(text)
    return int(text)


def _ids(value: str, file: str, where: str) -> tuple[int, ...]:
    value = value.strip()
    if not value:
        return ()
    try:
        ids = tuple(_int(v) for v in value.split(","))
    except ValueError:
        raise PlanInputError(file, where, f"expected broker ids like 1,2,3, got {value!r}") from None
    for b in ids:
        problem = broker_problem(b)
        if problem is not None:
            raise PlanInputError(file, where, problem)
    return ids


def _configs(value: str) -> dict[str, str]:
    """`a=1,b=x,y`: a comma inside a value (cleanup.policy=compact,delete) belongs to that value."""
    out: dict[str, str] = {}
    last = None
    for piece in value.split(","):
        if "=" in piece:
            last, v = piece.split("=", 1)
            out[last.strip()] = v.strip()
        elif last is not None and piece:
            out[last] += "," + piece
    return out


def parse_describe(text: str, file: str) -> Describe:
    """Parse `kafka-topics.sh --describe` output; an unknown line is an error naming its number."""
    d = Describe()
    seen_any = False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.lstrip("\ufeff")
        if not line.strip():
            continue
        f = _fields(line)
        if "Topic" not in f:
            if not seen_any:
                raise _wrong(file, DESCRIBE, text, f"line {n}: expected 'Topic: NAME ...'")
            raise PlanInputError(file, f"line {n}", f"expected a 'Topic: ...' line of {DESCRIBE}, got {raw[:60]!r}")
        seen_any = True
        topic = f["Topic"]
        problem = topic_problem(topic)
        if problem is not None:
            raise PlanInputError(file, f"line {n}: Topic", problem)
        if "Partition" in f:
            where = f"line {n}"
            for key in ("Leader", "Replicas", "Isr"):
                if key not in f:
                    raise PlanInputError(file, where, f"missing '{key}:' in a partition line")
            try:
                partition = _int(f["Partition"])
            except ValueError:
                raise PlanInputError(file, where, f"Partition: expected an integer, got {f['Partition']!r}") from None
            problem = partition_problem(partition)
            if problem is not None:
                raise PlanInputError(file, f"{where}: Partition", problem)
            leader_text = f["Leader"]
            if leader_text in ("none", "-1"):
                leader = None
            else:
                try:
                    leader = _int(leader_text)
                except ValueError:
                    raise PlanInputError(file, where, f"Leader: expected a broker id or none, got {leader_text!r}") from None
                problem = leader_problem(leader)
                if problem is not None:
                    raise PlanInputError(file, f"{where}: Leader", problem)
            p = DescribedPartition(topic, partition, leader, _ids(f["Replicas"], file, f"{where}: Replicas"),
                                   _ids(f["Isr"], file, f"{where}: Isr"),
                                   _ids(f.get("Adding Replicas", ""), file, f"{where}: Adding Replicas"),
                                   _ids(f.get("Removing Replicas", ""), file, f"{where}: Removing Replicas"), n)
            if not p.replicas:
                raise PlanInputError(file, where, "Replicas: empty")
            if (topic, partition) in d.partitions:
                raise PlanInputError(file, where, f"{topic}-{partition} described twice "
                                     f"(first at line {d.partitions[(topic, partition)].line})")
            d.partitions[(topic, partition)] = p
        elif "PartitionCount" in f:
            d.configs[topic] = _configs(f.get("Configs", ""))
        else:
            raise PlanInputError(file, f"line {n}", "a 'Topic:' line with neither 'Partition:' nor 'PartitionCount:'")
    if not seen_any:
        raise PlanInputError(file, "", f"empty: expected {DESCRIBE}")
    return d
