"""The scenario file (docs/scenarios.md): a release, a seed, the model it was drawn from, a cluster shape, and
steps — each a real action on the cluster followed by waits (named conditions with timeouts) and, where the
model determines it, the state the step is expected to reach.

Reading checks every field and fails with one line naming it (ScenarioError, exit 2); writing is atomic
(temp file + rename). The topic must be one Kafka accepts and partition numbers must fit Kafka's int32
(spec/kafka_limits.py: Topic.validate's at most 249 characters of [a-zA-Z0-9._-], not "." or "..").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kreassign.spec.kafka_limits import partition_problem, topic_problem

from kreassign.errors import UsageError
from kreassign.outputs import read_text, write_text_atomically

FORMAT = "kreassign-scenario"
FORMAT_VERSION = 1

#: the real actions a step may do, and the fields each needs beside "do"
STEP_KINDS = {
    "reassign": ("topic", "partition", "target"),  # AlterPartitionReassignments with a target
    "cancel": ("topic", "partition"),  # AlterPartitionReassignments with null
    "kill": ("broker",),  # SIGKILL of a broker
    "stop": ("broker",),  # SIGTERM: a clean (controlled) shutdown
    "restart": ("broker",),  # start a stopped or killed broker again
    "kill_controller": (),  # SIGKILL of the active controller, then started again
    # zk: /controller deleted, every broker re-elects (KafkaController.ControllerChangeHandler.handleDeletion ->
    # Reelect): the model's ControllerFailover, with no broker dying
    "reelect_controller": (),
    # a follower held behind: its fetches of the partition throttled (a replication throttle of 1 B/s) while
    # records are produced, until its leader drops it from the ISR; it stays behind until "resume"
    "pause": ("topic", "partition", "broker"),
    "resume": ("topic", "partition", "broker"),  # the throttle removed: the follower catches up
}
#: how a reassign or cancel step is sent: Kafka's Admin client (default), or Kafka's own reassignment tool
#: (kafka-reassign-partitions.sh: --execute with a plan file, --cancel with its rollback file)
VIA = ("admin", "tool")
#: the named conditions a wait may ask, and the fields each needs beside "until" and "timeout_s"
WAIT_KINDS = {
    "reassignment_done": ("partition",),  # no reassignment of the partition is listed
    "reassignment_listed": ("partition",),  # a reassignment of the partition is listed
    "isr_size": ("partition",),  # with "at_least" and/or "at_most"
    "broker_fenced": ("broker",),  # not among the registered, unfenced brokers
    "broker_registered": ("broker",),  # among them
    "controller_active": (),  # the metadata quorum has a leader
}
MAX_TIMEOUT_S = 600
MODES = ("kraft", "zk")
#: steps only one mode has: in ZooKeeper mode the controller is a broker, moved by re-election
MODE_STEPS = {"kill_controller": "kraft", "reelect_controller": "zk"}
#: the profile a mode's scenarios are drawn from (mapping.PROFILE_OF_MODE says the same)
MODE_PROFILES = {"kraft": "kraft", "zk": "zk"}


class ScenarioError(UsageError, ValueError):
    """A malformed scenario file; the message names the file and the field (exit code 2)."""


@dataclass(frozen=True)
class Wait:
    until: str
    timeout_s: float
    partition: int | None = None
    broker: int | None = None
    at_least: int | None = None
    at_most: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"until": self.until}
        for key in ("partition", "broker", "at_least", "at_most"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["timeout_s"] = self.timeout_s
        return out

    def describe(self) -> str:
        parts = [f"{k}={getattr(self, k)}" for k in ("partition", "broker", "at_least", "at_most")
                 if getattr(self, k) is not None]
        return f"{self.until}({', '.join(parts)})"


@dataclass(frozen=True)
class Step:
    do: str
    topic: str | None = None
    partition: int | None = None
    target: tuple[int, ...] | None = None
    broker: int | None = None
    waits: tuple[Wait, ...] = ()
    model: tuple[str, ...] = ()  # the model's actions this step covers (the cluster's own steps included)
    expect: dict[str, Any] | None = None  # the state the model says the step reaches (None: not determined)
    note: str = ""
    via: str = "admin"  # reassign / cancel: "admin" or "tool" (VIA)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"do": self.do}
        for key in STEP_KINDS[self.do]:
            v = getattr(self, key)
            out[key] = list(v) if isinstance(v, tuple) else v
        if self.via != "admin":
            out["via"] = self.via
        out["waits"] = [w.to_json() for w in self.waits]
        out["model"] = list(self.model)
        out["expect"] = self.expect
        if self.note:
            out["note"] = self.note
        return out

    def describe(self) -> str:
        args = ", ".join(f"{k}={list(v) if isinstance(v, tuple) else v}"
                         for k in STEP_KINDS[self.do] for v in (getattr(self, k),))
        return f"{self.do}({args}{', via=tool' if self.via == 'tool' else ''})"


@dataclass(frozen=True)
class Scenario:
    kafka_version: str
    seed: int
    profile: str
    bounds: dict[str, Any]  # Bounds.to_json() of the model it was drawn from
    brokers: int
    controllers: int
    topic: str
    initial: dict[int, tuple[int, ...]]  # partition -> initial replicas
    steps: tuple[Step, ...]
    mode: str = "kraft"
    generator: dict[str, Any] = field(default_factory=dict)  # how it was drawn: {"kind": "walk", ...}
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "kafka_version": self.kafka_version,
            "mode": self.mode,
            "seed": self.seed,
            "profile": self.profile,
            "bounds": self.bounds,
            "generator": self.generator,
            "cluster": {"brokers": self.brokers, "controllers": self.controllers, "topic": self.topic,
                        "initial": {str(p): list(r) for p, r in sorted(self.initial.items())}},
            "notes": list(self.notes),
            "steps": [s.to_json() for s in self.steps],
        }


def dumps(scenario: Scenario) -> str:
    return json.dumps(scenario.to_json(), indent=1, sort_keys=False) + "\n"


def write_scenario(scenario: Scenario, path: str) -> None:
    """All or nothing (temp file + rename); an unwritable destination is a ScenarioError naming it."""
    try:
        write_text_atomically(path, dumps(scenario))
    except OSError as e:
        raise ScenarioError(f"{path}: cannot write: {e.strerror or e}") from None


def read_scenario(path: str) -> Scenario:
    text = read_text(path, "a scenario file", ScenarioError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except (ValueError, RecursionError) as e:
        raise ScenarioError(f"{path}: invalid JSON: {str(e)[:200]}") from None
    try:
        return scenario_from_json(data)
    except ScenarioError as e:
        raise ScenarioError(f"{path}: {e}") from None


# -- validation -------------------------------------------------------------------------------------------

def _get(data: dict, key: str, where: str, kinds: type | tuple[type, ...], *, optional: bool = False) -> Any:
    if key not in data:
        if optional:
            return None
        raise ScenarioError(f"{where}{key}: missing")
    v = data[key]
    kinds_t = kinds if isinstance(kinds, tuple) else (kinds,)
    if (isinstance(v, bool) and bool not in kinds_t) or not isinstance(v, kinds_t):
        names = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds_t)
        raise ScenarioError(f"{where}{key}: expected {names}, got {_short(v)}")
    return v


_TYPE_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "an object", float: "a number",
               bool: "true or false"}


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, str) else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _broker_id(v: Any, where: str, brokers: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= brokers:
        raise ScenarioError(f"{where}: expected a broker id from 1 to {brokers}, got {_short(v)}")
    return v


def _replicas(v: Any, where: str, brokers: int) -> tuple[int, ...]:
    if not isinstance(v, list) or not v:
        raise ScenarioError(f"{where}: expected a non-empty list of broker ids, got {_short(v)}")
    out = tuple(_broker_id(b, f"{where}[{k}]", brokers) for k, b in enumerate(v))
    if len(set(out)) != len(out):
        raise ScenarioError(f"{where}: duplicate broker ids in {list(out)}")
    return out


def _wait_from_json(d: Any, where: str, brokers: int, partitions: set[int]) -> Wait:
    if not isinstance(d, dict):
        raise ScenarioError(f"{where}: expected an object, got {_short(d)}")
    until = _get(d, "until", where + ".", str)
    if until not in WAIT_KINDS:
        raise ScenarioError(f"{where}.until: unknown condition {until!r} (known: {', '.join(WAIT_KINDS)})")
    allowed = {"until", "timeout_s", *WAIT_KINDS[until]} | ({"at_least", "at_most"} if until == "isr_size" else set())
    for key in d:
        if key not in allowed:
            raise ScenarioError(f"{where}.{key}: not a field of an {until} wait (fields: {', '.join(sorted(allowed))})")
    timeout = _get(d, "timeout_s", where + ".", (int, float))
    if not 0 < timeout <= MAX_TIMEOUT_S:
        raise ScenarioError(f"{where}.timeout_s: expected more than 0 and at most {MAX_TIMEOUT_S}, got {timeout}")
    kw: dict[str, Any] = {}
    if "partition" in WAIT_KINDS[until]:
        p = _get(d, "partition", where + ".", int)
        if p not in partitions:
            raise ScenarioError(f"{where}.partition: no partition {p} in the scenario's topic")
        kw["partition"] = p
    if "broker" in WAIT_KINDS[until]:
        kw["broker"] = _broker_id(_get(d, "broker", where + ".", int), f"{where}.broker", brokers)
    if until == "isr_size":
        for key in ("at_least", "at_most"):
            v = _get(d, key, where + ".", int, optional=True)
            if v is not None and not 0 <= v <= brokers:
                raise ScenarioError(f"{where}.{key}: expected 0 to {brokers}, got {v}")
            kw[key] = v
        if kw["at_least"] is None and kw["at_most"] is None:
            raise ScenarioError(f"{where}: an isr_size wait needs at_least or at_most")
    return Wait(until, float(timeout), **kw)


def _step_from_json(d: Any, where: str, sc: dict[str, Any]) -> Step:
    if not isinstance(d, dict):
        raise ScenarioError(f"{where}: expected an object, got {_short(d)}")
    do = _get(d, "do", where + ".", str)
    if do not in STEP_KINDS:
        raise ScenarioError(f"{where}.do: unknown action {do!r} (known: {', '.join(STEP_KINDS)})")
    if MODE_STEPS.get(do, sc["mode"]) != sc["mode"]:
        raise ScenarioError(f"{where}.do: {do} is a step of {MODE_STEPS[do]} mode, not of {sc['mode']}")
    allowed = {"do", "waits", "model", "expect", "note", *STEP_KINDS[do]} | (
        {"via"} if do in ("reassign", "cancel") else set())
    for key in d:
        if key not in allowed:
            raise ScenarioError(f"{where}.{key}: not a field of a {do} step (fields: {', '.join(sorted(allowed))})")
    brokers = sc["brokers"]
    kw: dict[str, Any] = {}
    if "topic" in STEP_KINDS[do]:
        topic = _get(d, "topic", where + ".", str)
        if topic != sc["topic"]:
            raise ScenarioError(f"{where}.topic: {topic!r} is not the scenario's topic {sc['topic']!r}")
        p = _get(d, "partition", where + ".", int)
        if p not in sc["partitions"]:
            raise ScenarioError(f"{where}.partition: no partition {p} in topic {topic!r}")
        kw.update(topic=topic, partition=p)
    if do == "reassign":
        kw["target"] = _replicas(d.get("target"), f"{where}.target", brokers)
    if "broker" in STEP_KINDS[do]:
        kw["broker"] = _broker_id(_get(d, "broker", where + ".", int), f"{where}.broker", brokers)
    waits = _get(d, "waits", where + ".", list, optional=True) or []
    kw["waits"] = tuple(_wait_from_json(w, f"{where}.waits[{k}]", brokers, sc["partitions"])
                        for k, w in enumerate(waits))
    model = _get(d, "model", where + ".", list, optional=True) or []
    if not all(isinstance(m, str) for m in model):
        raise ScenarioError(f"{where}.model: expected a list of strings (the model's actions)")
    kw["model"] = tuple(model)
    expect = d.get("expect")
    if expect is not None and not isinstance(expect, dict):
        raise ScenarioError(f"{where}.expect: expected an object or null, got {_short(expect)}")
    kw["expect"] = expect
    kw["note"] = _get(d, "note", where + ".", str, optional=True) or ""
    via = _get(d, "via", where + ".", str, optional=True) or "admin"
    if via not in VIA:
        raise ScenarioError(f"{where}.via: expected one of {', '.join(VIA)}, got {via!r}")
    kw["via"] = via
    return Step(do, **kw)


def scenario_from_json(data: Any) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError("expected a JSON object")
    if data.get("format") != FORMAT:
        raise ScenarioError(f"format: expected {FORMAT!r}, got {_short(data.get('format'))}")
    version = _get(data, "format_version", "", int)
    if version != FORMAT_VERSION:
        raise ScenarioError(f"format_version: unsupported version {version} (this tool reads {FORMAT_VERSION})")
    kafka_version = _get(data, "kafka_version", "", str)
    from kreassign.spec import kafka_releases

    try:
        kafka_releases.release(kafka_version)
    except ValueError as e:
        raise ScenarioError(f"kafka_version: {e}") from None
    mode = _get(data, "mode", "", str)
    if mode not in MODES:
        raise ScenarioError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    seed = _get(data, "seed", "", int)
    profile = _get(data, "profile", "", str)
    if profile != MODE_PROFILES[mode]:
        raise ScenarioError(f"profile: {mode} scenarios are drawn from the {MODE_PROFILES[mode]} profile, "
                            f"not {profile!r}")
    if mode == "zk" and not kafka_version.startswith("3."):
        raise ScenarioError(f"kafka_version: zk mode needs Kafka 3.x (4.0 removed ZooKeeper), not {kafka_version}")
    bounds = _get(data, "bounds", "", dict)
    from kreassign.checker.config.bounds import ConfigError, bounds_from_mapping

    try:
        b = bounds_from_mapping(bounds)
    except ConfigError as e:
        raise ScenarioError(str(e)) from None
    generator = _get(data, "generator", "", dict, optional=True) or {}
    cluster = _get(data, "cluster", "", dict)
    for key in cluster:
        if key not in ("brokers", "controllers", "topic", "initial"):
            raise ScenarioError(f"cluster.{key}: unknown field (fields: brokers, controllers, topic, initial)")
    brokers = _get(cluster, "brokers", "cluster.", int)
    if not 3 <= brokers <= 6:
        raise ScenarioError(f"cluster.brokers: expected 3 to 6, got {brokers}")
    if brokers != b.brokers:
        raise ScenarioError(f"cluster.brokers: {brokers}, but bounds.brokers is {b.brokers}")
    controllers = _get(cluster, "controllers", "cluster.", int)
    if controllers not in (1, 3):
        raise ScenarioError(f"cluster.controllers: expected 1 or 3, got {controllers}")
    if mode == "zk" and controllers != 1:
        raise ScenarioError(f"cluster.controllers: zk mode has 1 (the ZooKeeper server), got {controllers}")
    topic = _get(cluster, "topic", "cluster.", str)
    problem = topic_problem(topic)  # Kafka's Topic.validate
    if problem is not None:
        raise ScenarioError(f"cluster.topic: {problem}")
    raw_initial = _get(cluster, "initial", "cluster.", dict)
    initial: dict[int, tuple[int, ...]] = {}
    for key, replicas in raw_initial.items():
        if not (key.isascii() and key.isdigit()):
            raise ScenarioError(f"cluster.initial.{key[:40]}: a partition number, not {_short(key)}")
        # int() refuses 4,300+ digits: anything past Java's int's 10 is beyond it anyway
        problem = partition_problem(int(key)) if len(key.lstrip("0")) <= 10 else \
            f"partition id {_short(key)} does not fit Kafka's 32-bit int"
        if problem is not None:
            raise ScenarioError(f"cluster.initial.{key[:40]}: {problem}")
        initial[int(key)] = _replicas(replicas, f"cluster.initial.{key}", brokers)
    if sorted(initial) != list(range(len(initial))) or not initial:
        raise ScenarioError(f"cluster.initial: partitions must be 0..n-1, got {sorted(initial)}")
    if [list(initial[p]) for p in sorted(initial)] != b.initial_assignment():
        raise ScenarioError(f"cluster.initial: {[list(initial[p]) for p in sorted(initial)]} is not the model's "
                            f"initial assignment {b.initial_assignment()}")
    sc = {"brokers": brokers, "topic": topic, "partitions": set(initial), "mode": mode}
    steps = _get(data, "steps", "", list)
    notes = _get(data, "notes", "", list, optional=True) or []
    if not all(isinstance(n, str) for n in notes):
        raise ScenarioError("notes: expected a list of strings")
    return Scenario(kafka_version=kafka_version, seed=seed, profile=profile, bounds=bounds, brokers=brokers,
                    controllers=controllers, topic=topic, initial=initial,
                    steps=tuple(_step_from_json(s, f"steps[{k}]", sc) for k, s in enumerate(steps)),
                    mode=mode, generator=generator, notes=tuple(notes))


__all__ = ["FORMAT", "FORMAT_VERSION", "MODES", "MODE_PROFILES", "MODE_STEPS", "STEP_KINDS", "VIA", "WAIT_KINDS", "Scenario", "ScenarioError", "Step", "Wait",
           "dumps", "read_scenario", "scenario_from_json", "write_scenario"]
