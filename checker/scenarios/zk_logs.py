"""ZooKeeper mode: the controller's own logs of a scenario, validated against the zk profile (issue 24, item 4).

Every broker may have been the controller during a scenario (a re-election moves it), so the lines are those of
every broker's `controller.log` and `state-change.log` (the files Kafka's distribution writes; docs/cluster.md),
merged in the order of their log4j timestamps, from the scenario topic's creation on, without the lines about
other topics (other scenarios on the same cluster). They go through validate-trace's ZooKeeper log reader
(`checker/kafka_logs/zk_controller_log.py`) under the `zk` profile, as `kreassign validate-trace` does.

`validate_zk_logs(cluster, scenario)` returns divergences (dicts of kind "controller_log", as run.py's): none when
the verdict is VALID; one naming the first line no run of the profile explains (INVALID), or why the log could
not be decided (INCONCLUSIVE: lines outside the model, a search limit).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from kreassign.checker.cluster import Cluster
from kreassign.checker.traces.validation import SearchLimits, ValidationResult, validate_text

from .format import Scenario

LOGS = ("controller", "state-change")
#: validate-trace's bounds with every explanation kept (--all-explanations): a scenario's log is short, and the
#: shortest explanation of a line can be the wrong one (an "Updated leader epoch" line explained by a broker
#: failure's ISR removal rather than a resumed reassignment's step A1, seen on 3.9.2), which a later line refutes
#: and up to 4 failovers between two lines: a `reelect_controller` step and the re-elections that move the
#: controller off a broker about to fail (run.py) may fall between two lines of the topic
LIMITS = SearchLimits(shortest=False, max_failovers=4)
#: a log4j line's own timestamp (Kafka's distribution: `[%d] %p %m (%c)%n`); other lines continue the one above
TIMESTAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")
#: the topics a controller log names as created or deleted
TOPICS = re.compile(r"New topics: \[\w*\((?P<new>[^)]*)\)\], deleted topics: \[\w*\((?P<deleted>[^)]*)\)\]")


def merge(texts: list[str]) -> list[str]:
    """Several logs' entries (a line and its continuation lines) in timestamp order; entries of one timestamp
    keep the order of `texts`, then their own."""
    entries: list[tuple[str, int, int, str]] = []
    for k, text in enumerate(texts):
        current: list[Any] | None = None
        for n, line in enumerate(text.splitlines()):
            m = TIMESTAMP.match(line)
            if m:
                current = [m.group(1), k, n, line]
                entries.append(current)  # type: ignore[arg-type]
            elif current is not None:
                current[3] += "\n" + line
    entries.sort(key=lambda e: (e[0], e[1], e[2]))
    return [e[3] for e in entries]


def scenario_lines(entries: list[str], topic: str) -> list[str]:
    """The entries from `topic`'s creation on, without those naming another topic's partitions."""
    others: set[str] = set()
    for e in entries:
        for m in TOPICS.finditer(e):
            others.update(t.strip() for t in (m.group("new") + "," + m.group("deleted")).split(",") if t.strip())
    others.discard(topic)
    start = next((k for k, e in enumerate(entries) if TOPICS.search(e) and topic in
                  [t.strip() for t in TOPICS.search(e).group("new").split(",")]), None)  # type: ignore[union-attr]
    if start is None:
        return []
    mentions = re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(t) for t in sorted(others)) +
                          r")(?:-\d+(?![\w.-])|,\d+\]|(?![\w.-]))") \
        if others else None
    def about_others(e: str) -> bool:
        if mentions is not None and mentions.search(e):
            return True
        # a topic change that names topics, none of them this one (another topic deleted: "New topics: [Set()],
        # deleted topics: [Set(x)]", no partition named — e.g. run.py's probe topic of a pause)
        m = TOPICS.search(e)
        named = {t.strip() for t in (m.group("new") + "," + m.group("deleted")).split(",") if t.strip()} if m else set()
        return bool(named) and topic not in named

    return [e for e in entries[start:] if not about_others(e)]


def merged_logs(cluster: Cluster, scenario: Scenario) -> str:
    """The scenario's controller-side lines of every broker, merged (see the module's docstring)."""
    texts = [cluster.logs(b, name) for b in cluster.brokers for name in LOGS]
    lines = scenario_lines(merge(texts), scenario.topic)
    return "\n".join(lines) + ("\n" if lines else "")


def validate_lines(text: str, limits: SearchLimits = LIMITS) -> ValidationResult:
    """validate-trace on Kafka log lines under the zk profile (what `kreassign validate-trace` runs)."""
    result = validate_text(text, "kafka-log", "zk", limits)
    assert isinstance(result, ValidationResult)
    return result


def divergences_of(result: ValidationResult, text: str) -> list[dict[str, Any]]:
    """A verdict as scenario divergences: [] when VALID."""
    if result.valid:
        return []
    out: dict[str, Any] = {"step": None, "kind": "controller_log", "verdict": result.verdict}
    lines = text.splitlines()
    if result.failed is not None:
        out["line"] = result.failed.line
        out["text"] = lines[result.failed.line - 1] if 0 < result.failed.line <= len(lines) else result.failed.text
        differs = [str(m) for m in result.closest.mismatches] if result.closest is not None else []
        out["what"] = f"{result.verdict} at line {result.failed.line}: {result.reason or 'no run of zk explains it'}" \
            + (f" ({'; '.join(differs)})" if differs else "")
        out["differs"] = differs
    else:
        out["what"] = f"{result.verdict}: {result.reason}"
        out["not_understood"] = {k: v for k, v in result.not_understood.items()}
    return [out]


def limits_for(scenario: Scenario, limits: SearchLimits = LIMITS) -> SearchLimits:
    """The scenario's actions as hints: between two lines no more broker failures, controller failovers or requests
    than the scenario did (the runner may re-elect the controller before each kill, stop or pause, up to two
    times), within `limits`. Without them the search for a 4-step scenario's log passed 200,000 states (seed 7002)
    looking for failures nobody injected."""
    steps = [s.do for s in scenario.steps]
    failures = sum(d in ("kill", "stop") for d in steps)
    failovers = steps.count("reelect_controller") + 2 * sum(d in ("kill", "stop", "pause") for d in steps)
    requests = sum(d in ("reassign", "cancel") for d in steps)
    return replace(limits, max_failures=min(limits.max_failures, failures),
                   max_failovers=min(limits.max_failovers, failovers),
                   max_requests=min(limits.max_requests, requests))


def validate_zk_logs(cluster: Cluster, scenario: Scenario,
                     limits: SearchLimits = LIMITS) -> list[dict[str, Any]]:
    """After a ZooKeeper-mode scenario on `cluster`: its controller and state-change lines validated under the
    zk profile, within the scenario's own actions (limits_for); [] when VALID, else one divergence of kind
    "controller_log" (see the module's docstring)."""
    text = merged_logs(cluster, scenario)
    return divergences_of(validate_lines(text, limits_for(scenario, limits)), text)


__all__ = ["LOGS", "divergences_of", "limits_for", "merge", "merged_logs", "scenario_lines", "validate_lines", "validate_zk_logs"]
