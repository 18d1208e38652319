"""The KRaft metadata log of a scenario's run (issue 24, items 3-4; docs/scenarios.md "The metadata log"):
dumped with Kafka's own dump-log tool and checked record by record against the model by validate-trace.

    text = dump_metadata_log(cluster)                       # kafka-dump-log --cluster-metadata-decoder output
    divergences = validate_metadata_log(text, scenario)     # [] when every record is a step of the profile

The dump runs the release's own `DumpLogSegments` in a JVM on the cluster's broker classpath, over the active
controller's `__cluster_metadata-0/*.log` segments: the Scala `kafka.tools.DumpLogSegments` of the core jar in 3.9
and 4.0, the Java `org.apache.kafka.tools.DumpLogSegments` of kafka-tools in 4.4 (moved by KAFKA-14579); whichever
jar of the release holds it. The flags (`--cluster-metadata-decoder --files a,b`) are the same in all three. The check is
`validate_text(..., "kraft-metadata")`, the function behind `kreassign validate-trace`, restricted to the
scenario's topic (the log also holds the other scenarios' topics, the brokers, the features ...) at the
scenario's release.
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

from kreassign.checker.cluster import Cluster, ClusterError
from kreassign.checker.implementations.kafka import releases
from kreassign.checker.kafka_logs.kraft_metadata_log import MetadataResult
from kreassign.checker.traces.validation import validate_text
from kreassign.spec.state import ClusterState

from .format import Scenario
from .run import RunResult

METADATA_PARTITION = "__cluster_metadata-0"
#: the dump-log tool's main class, newest first: moved from core (Scala) to tools (Java) by KAFKA-14579
DUMP_CLASSES = ("org.apache.kafka.tools.DumpLogSegments", "kafka.tools.DumpLogSegments")
DUMP_TIMEOUT_S = 60.0


@cache
def dump_class(lib: Path) -> str:
    """The dump-log tool's main class in a release's lib directory (whichever jar holds it)."""
    wanted = {c.replace(".", "/") + ".class": c for c in DUMP_CLASSES}
    found: set[str] = set()
    for jar in sorted(lib.glob("*.jar")):
        if not (jar.name.startswith("kafka") and ("tools" in jar.name or jar.name.startswith("kafka_"))):
            continue
        try:
            with zipfile.ZipFile(jar) as z:
                found |= {wanted[n] for n in z.namelist() if n in wanted}
        except (OSError, zipfile.BadZipFile):
            continue
    for c in DUMP_CLASSES:
        if c in found:
            return c
    raise ClusterError(f"no DumpLogSegments class in {lib} (looked for {', '.join(DUMP_CLASSES)})")


def metadata_segments(cluster: Cluster, node: int | None = None) -> list[Path]:
    """The `.log` segments of a controller's copy of the metadata log, oldest first (default: the active
    controller's)."""
    if cluster.spec.mode != "kraft":
        raise ClusterError(f"{cluster.spec.describe()}: a ZooKeeper-mode cluster has no metadata log")
    if node is None:
        try:
            node = cluster.active_controller()
        except ClusterError:
            node = cluster.controllers[0]
    folder = cluster.data_dir(node) / METADATA_PARTITION
    segments = sorted(folder.glob("*.log"))
    if not segments:
        raise ClusterError(f"{cluster.spec.describe()}: no metadata log segment in {folder}")
    return segments


def dump_metadata_log(cluster: Cluster, *, node: int | None = None, timeout_s: float = DUMP_TIMEOUT_S) -> str:
    """The cluster's metadata log as `kafka-dump-log.sh --cluster-metadata-decoder` prints it, from the active
    controller's segments (or `node`'s): Kafka's own tool run on the cluster's release. A ClusterError (exit 3)
    if the tool fails or takes longer than `timeout_s`."""
    segments = metadata_segments(cluster, node)
    lib = releases.cached(cluster.spec.version, "broker")
    if lib is None:
        raise ClusterError(f"Kafka {cluster.spec.version}'s broker jars are not in the cache")
    main = dump_class(lib.lib)
    argv = cluster.tool_argv(main, ["--cluster-metadata-decoder", "--files", ",".join(str(s) for s in segments)])
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"{cluster.spec.describe()}: {main} did not finish within {timeout_s:.0f} s") from None
    out = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0 or "Dumping " not in out:
        err = done.stderr.decode("utf-8", errors="replace").strip().splitlines()[-5:]
        raise ClusterError(f"{cluster.spec.describe()}: {main} failed (exit {done.returncode}) on "
                           f"{segments[0].parent}" + ("".join(f"\n  {e}" for e in err) if err else ""))
    return out


def check_metadata_log(text: str, scenario: Scenario) -> MetadataResult:
    """validate-trace's verdict on `text` (a metadata log dump) for `scenario`: profile kraft at the scenario's
    release (its metadata.version and ELR setting from the log's own feature records), only the scenario's
    topic (and the brokers' records as they touch it). `kreassign validate-trace FILE --kafka-version V --topic T`
    says the same. Unreadable text is a UsageError naming the line (exit 2)."""
    result = validate_text(text, "kraft-metadata", scenario.profile, kafka_version=scenario.kafka_version,
                           topics=[scenario.topic])
    assert isinstance(result, MetadataResult)
    return result


def validate_metadata_log(text: str, scenario: Scenario, run: RunResult | None = None) -> list[dict[str, Any]]:
    """The divergences of kind "metadata_log" between the metadata log of a run of `scenario` (`text`, as
    dump_metadata_log returns it, taken after the run) and the model, in run.py's shape (step, kind, action,
    what, ...); [] when they agree:

    - the first record of the scenario's topic that no action of the profile writes (INVALID), with its line,
      offset, the partition before it, as the log has it and as the model has it, and the fields that differ;
    - records of the topic the model cannot check (INCONCLUSIVE: e.g. a topic deletion, a cleared ELR), or no
      record of the topic at all;
    - a step the run did (`run`: run_scenario's result, or a ScenarioWaitError's `.result`) that must leave a
      mark and has none, in order: a broker killed or stopped and never fenced (or put in controlled shutdown),
      restarted and never registered or unfenced, an accepted request that changes the assignment and wrote no
      record;
    - the state the records built, at the end, against the state the scenario's last step expects — when `run`
      did every step.

    With `run` None (a run that ended without a result) only the records are checked.
    `step` is the scenario step the record belongs to, found by aligning the actions that explain the topic's
    records with the steps (a request with a reassign or cancel, a fence with a kill or stop of that broker, a
    registration or unfence with its restart; ISR changes belong to the step before them)."""
    if scenario.mode != "kraft":
        raise ValueError(f"a {scenario.mode} scenario has no metadata log (scenarios/zk_logs.py reads its logs)")
    result = check_metadata_log(text, scenario)
    steps = scenario.steps
    topic_line = next((line for line, kind, _a in result.explanation if kind == "TOPIC_RECORD"), None)
    events = [(line, action) for line, _k, action in result.explanation if topic_line is not None and line > topic_line]
    base = {"kind": "metadata_log", "verdict": result.verdict}
    out: list[dict[str, Any]] = []
    if topic_line is None and result.finding is None:
        out.append({**base, "step": 0, "action": steps[0].describe() if steps else "",
                    "what": f"the metadata log holds no TopicRecord of {scenario.topic}"})
        return out
    if result.finding is not None:
        f = result.finding
        k = _step_of(steps, [a for line, a in events if line < f.record.line], f.actions, scenario.initial)
        out.append({**base, "step": k, "action": steps[k].describe() if steps else "", "line": f.record.line,
                    "offset": f.record.offset, "record": f.record.type,
                    "what": f"line {f.record.line} (offset {f.record.offset}, {f.record.type}): {f.reason}",
                    "before": f.before, "observed": f.observed, "expected": f.model, "closest": f.actions,
                    "differs": list(f.differs), "text": f.record.text[:2000]})
        return out
    if result.not_understood:
        k = _step_of(steps, [a for _line, a in events], None, scenario.initial)
        for why, lines in result.not_understood.items():
            out.append({**base, "step": k, "action": steps[k].describe() if steps else "", "line": lines[0],
                        "what": f"not understood: {why} ({len(lines)} record(s), first at line {lines[0]})"})
    done = 0 if run is None else len(run.steps) - (run.failed is not None)
    _k, matched = _align(steps, [a for _line, a in events], scenario.initial)
    for j in range(done):
        if _writes(steps, j, scenario.initial) and j not in matched:
            out.append({**base, "step": j, "action": steps[j].describe(),
                        "what": f"no record of the log is step {j}'s ({steps[j].describe()}): "
                                + ("no fence or controlled shutdown of the broker" if steps[j].do in ("kill", "stop")
                                   else "no registration or unfence of the broker" if steps[j].do == "restart"
                                   else "no reassignment or cancel written")})
    # the final state is compared with the last step's expectation — when the model determines the end: steps
    # done after one it does not (generate.recover_all) leave the end open
    last = len(steps) - 1 if steps and steps[-1].expect is not None else None
    finished = run is not None and run.failed is None and len(run.steps) == len(steps)
    if last is not None and finished and result.final_state is not None:
        for d in _final_differences(result.final_state, scenario.topic, steps[last].expect):
            out.append({**base, "step": last, "action": steps[last].describe(),
                        "what": f"the log's last state of {d['field']} is not the model's", **d})
    return out


def _kind(action: str | None) -> tuple[str, int | None] | None:
    """What an explanation's action says about the scenario's steps: a request, a fence or a return of a broker."""
    if not action:
        return None
    m = re.match(r"(?:part of )?(Reassign|Cancel)\(", action)
    if m:
        return ("request", None)
    m = re.match(r"(?:part of )?(BrokerFail|BrokerControlledShutdown)\((\d+)\)", action)
    if m:
        return ("down", int(m.group(2)))
    m = re.match(r"(?:part of )?BrokerRestart\((\d+)\)", action)
    if m:  # a live broker registering again: it went down and came back in one step
        return ("restart", int(m.group(1)))
    m = re.match(r"(?:part of )?BrokerRecover\((\d+)\)|broker (\d+) registered", action)
    if m:
        return ("up", int(m.group(1) or m.group(2)))
    return None


def _matches(step: Any, kind: tuple[str, int | None]) -> bool:
    if kind[0] == "request":
        return step.do in ("reassign", "cancel") and (step.expect is None or step.expect.get("error") == "NONE")
    if kind[0] == "down":
        return step.do in ("kill", "stop") and step.broker == kind[1]
    return step.do == "restart" and step.broker == kind[1]


def _align(steps: tuple, actions: list[str], initial: dict[int, tuple[int, ...]]) -> tuple[int, set[int]]:
    """The explained actions (in log order, from the topic's creation) aligned with the steps: each action that
    marks a step moves to the first step at or after the current one it matches. A broker's second fence while it
    is down (a controlled shutdown's fence, a session expiry after it) or second return while it is up (its
    registration, then its unfence) marks nothing; a request marks only a step whose request changes the
    assignment (`_writes`). The current step at the end, and the steps matched."""
    k, matched, down = 0, set(), set()
    for a in actions:
        kind = _kind(a)
        if kind is None:
            continue
        if kind[0] in ("down", "up"):
            if (kind[0] == "down") == (kind[1] in down):
                continue
            down = down | {kind[1]} if kind[0] == "down" else down - {kind[1]}
        elif kind[0] == "restart":
            down = down - {kind[1]}
        start = k + 1 if k in matched else k  # one mark per step: its request, or its broker's change
        j = next((j for j in range(start, len(steps)) if _matches(steps[j], kind) and _writes(steps, j, initial)),
                 None)
        if j is not None:
            k = j
            matched.add(j)
    return k, matched


def _writes(steps: tuple, j: int, initial: dict[int, tuple[int, ...]]) -> bool:
    """Whether step j must leave a mark in the log: a broker killed, stopped or restarted; an accepted request
    that changes the partition's replicas, adding or removing (Kafka writes no record for a change to nothing)."""
    step = steps[j]
    if step.do in ("kill", "stop", "restart"):
        return True
    if step.do not in ("reassign", "cancel") or step.expect is None or step.expect.get("error") != "NONE":
        return False
    prev = next((steps[i].expect for i in range(j - 1, -1, -1) if steps[i].expect is not None), None)
    key = str(step.partition)
    now = (step.expect.get("partitions") or {}).get(key)
    if now is None:
        return False
    if prev is None:
        before = (list(initial.get(step.partition, ())), [], [])
    else:
        p = (prev.get("partitions") or {}).get(key) or {}
        before = (p.get("replicas"), p.get("adding"), p.get("removing"))
    return (now.get("replicas"), now.get("adding"), now.get("removing")) != before


def _step_of(steps: tuple, actions: list[str], failing: str | None, initial: dict[int, tuple[int, ...]]) -> int:
    """The step of the record after `actions` (the explained actions of the topic's records before it, in log
    order; `_align`), or the next step `failing` (the closest action to the record) matches."""
    k, _matched = _align(steps, actions, initial)
    kind = _kind(failing)
    if kind is not None:
        j = next((j for j in range(k, len(steps)) if _matches(steps[j], kind) and _writes(steps, j, initial)), None)
        if j is not None:
            return j
    return min(k, max(len(steps) - 1, 0))


def _final_differences(state: ClusterState, topic: str, expect: dict[str, Any]) -> list[dict[str, Any]]:
    """The log's final state of the topic's partitions (and the live brokers) against a step's `expect`."""
    out = []
    live = sorted(b.id for b in state.brokers if b.registered and b.active)
    if expect.get("brokers") is not None and sorted(expect["brokers"]) != live:
        out.append({"field": "brokers", "expected": sorted(expect["brokers"]), "observed": live})
    for p, e in (expect.get("partitions") or {}).items():
        part = state.partition(f"{topic}/{p}", 0)
        if part is None:
            out.append({"field": f"partition {p}", "expected": e, "observed": None})
            continue
        seen = {"replicas": list(part.replicas), "isr": sorted(part.isr),
                "leader": part.leader if part.leader >= 0 else None, "adding": sorted(part.adding),
                "removing": sorted(part.removing), "elr": sorted(part.elr)}
        for key, v in e.items():
            if v is not None and key in seen and seen[key] != v:
                out.append({"field": f"partition {p} {key}", "expected": v, "observed": seen[key]})
    return out


__all__ = ["DUMP_CLASSES", "check_metadata_log", "dump_class", "dump_metadata_log", "metadata_segments",
           "validate_metadata_log"]
