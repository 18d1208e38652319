"""From Kafka's files to per-partition verdicts: build the moves, dedupe shapes, check, map back.

`load_moves` joins the plan with the current assignment (--current) and the cluster
state (--describe); `run_plan` checks each distinct shape once (checker/plan/check.py)
and returns a `PlanResult` in real topic names and broker ids.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.checker.models.symmetry import SYMMETRIC_PROFILES
from kreassign.checker.plan.check import NOTE, RISK, PlanOptions, ShapeResult, check_shapes
from kreassign.checker.plan.durability import DurabilityFinding, durability_findings
from kreassign.checker.plan.formats import Describe, PlanInputError
from kreassign.checker.plan.kafka_json import format_as_kafka, rollback_entries
from kreassign.checker.plan.shapes import PartitionMove, shape_of
from kreassign.reference.reassign_json import ReassignJsonError, ReassignmentEntry, ReassignmentPlanJson
from kreassign.spec.state import NO_LEADER

SPARE = "a broker outside the move"


def load_moves(plan: ReassignmentPlanJson, plan_file: str, current: ReassignmentPlanJson | None,
               current_file: str | None, describe: Describe | None, describe_file: str | None,
               live: set[int] | None = None, min_isr: int | None = None) -> list[PartitionMove]:
    """One PartitionMove per plan entry, in plan order; a partition neither file knows is an error."""
    if current is None and describe is None:
        raise PlanInputError(plan_file, "", "need the current assignment: --current CURRENT.json "
                             "(printed by kafka-reassign-partitions.sh --execute) or --describe DESCRIBE.txt")
    cur = {(e.topic, e.partition): e for e in current.entries} if current else {}
    moves = []
    for i, e in enumerate(plan.entries):
        key = (e.topic, e.partition)
        d = describe.partitions.get(key) if describe else None
        c = cur.get(key)
        if c is None and d is None:
            files = " or ".join(f for f in (current_file, describe_file) if f)
            raise PlanInputError(plan_file, f"partitions[{i}]", f"{e.topic}-{e.partition} is not in {files}")
        if c is not None and d is not None and set(c.replicas) != set(d.replicas) - set(d.adding):
            raise PlanInputError(describe_file or "", f"line {d.line}",
                                 f"{e.topic}-{e.partition} has replicas {list(d.replicas)} but {current_file} "
                                 f"says {list(c.replicas)}: the files are from different moments")
        replicas = c.replicas if c is not None else tuple(b for b in d.replicas if b not in d.adding)
        if d is not None:
            isr = tuple(b for b in d.isr if b in replicas) or tuple(replicas)
            leader = d.leader if d.leader is not None and d.leader in isr else NO_LEADER
        else:
            isr, leader = tuple(replicas), replicas[0]
        involved = set(replicas) | set(e.replicas)
        down = tuple(sorted(b for b in involved if live is not None and b not in live))
        if leader in down:
            leader = NO_LEADER
        topic_min_isr = min_isr if min_isr is not None else (describe.min_isr(e.topic) if describe else 1)
        moves.append(PartitionMove(
            e.topic, e.partition, tuple(replicas), e.replicas, isr, leader, down,
            describe.unclean(e.topic) if describe else False, topic_min_isr,
            c.log_dirs if c is not None else None,
            (d.adding, d.removing) if d is not None and (d.adding or d.removing) else None))
    return moves


@dataclass
class PlanResult:
    profile: str
    options: PlanOptions
    partitions: list[dict[str, Any]]
    shapes: int
    states: int
    seconds: float
    rollback: str | None
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> display trace JSON + mapping

    def grouped(self, severity: str) -> list[tuple[list[str], str, str | None]]:
        """(partitions, summary, first trace id) per distinct finding: 200 partitions of one shape make one line."""
        groups: dict[str, tuple[list[str], str, str | None]] = {}
        for p in self.partitions:
            for f in p["findings"]:
                if f["severity"] == severity:
                    groups.setdefault(f["summary"], ([], f["summary"], f["trace"]))[0].append(p["partition"])
        return list(groups.values())

    @staticmethod
    def _lines(groups) -> list[str]:
        out = []
        for parts, summary, _ in groups:
            names = ", ".join(parts[:6]) + (f" and {len(parts) - 6} more" if len(parts) > 6 else "")
            out.append(f"{names}: {summary}")
        return out

    @property
    def risks(self) -> list[str]:
        return self._lines(self.grouped(RISK))

    @property
    def notes(self) -> list[str]:
        return self._lines(self.grouped(NOTE))

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "options": {k: getattr(self.options, k) for k in ("failures", "failovers", "cancel", "overrides", "liveness")},
            "partitions": self.partitions,
            "shapes": self.shapes,
            "states": self.states,
            "seconds": round(self.seconds, 3),
            "risks": self.risks,
            "notes": self.notes,
            "rollback": self.rollback,
        }


def _ids(ids, back: dict[int, int]) -> list[Any]:
    return [SPARE if back.get(b, b) < 0 else back.get(b, b) for b in ids]


def _leader(b: int, back: dict[int, int]) -> int | None:
    return None if b == NO_LEADER else back.get(b, b)


_WHAT = {
    "partition_has_leader": "leaderless",
    "isr_meets_min_insync_replicas": "under min.insync.replicas",
    "clean_leader_available": "only an unclean election can restore a leader",
}


#: what a violated spec property means for the operator, in one line
_SHORT = {
    "cancel_restores_original_order": "after a cancel the replicas come back in another order (the preferred leader changes)",
    "cancel_restores_original_replicas": "after a cancel the replica set is not the original one",
    "admin_action_keeps_a_leader": "a cancel or re-submission can leave the partition leaderless while an in-sync replica is alive",
    "reassignment_can_finish": "the move can get stuck for good",
    "isr_in_replicas": "the ISR can hold a broker that is no longer a replica",
    "completion_reaches_target": "the move can complete without the target replicas all in sync",
}


def _summary(f, back: dict[int, int], move: PartitionMove) -> str:
    if f.property in _WHAT:
        def fmt(s):
            return "{" + ",".join(map(str, _ids(s, back))) + "}"

        new = [s for s in f.failure_sets if not any(set(e) <= set(s) for e in f.existing)]
        if () in f.failure_sets:
            return f"{_WHAT[f.property]} during the move with no failure at all"
        if new:
            return f"{_WHAT[f.property]} during the move if brokers {' or '.join(map(fmt, new))} fail (not so before the move)"
        return f"{_WHAT[f.property]} if brokers {' or '.join(map(fmt, f.failure_sets))} fail (before the move too)"
    if f.finding:  # a finding the profile declares: its own one-sentence summary
        return f"{' '.join(f.description.split())} [{f.property}: known finding {f.finding}]"
    text = _SHORT.get(f.property) or " ".join(f.description.split())
    return f"{text} [{f.property}]"


def _finding_json(f, back, move: PartitionMove, trace_id: str) -> dict[str, Any]:
    return {
        "severity": f.severity,
        "property": f.property,
        "summary": _summary(f, back, move),
        "known": f.known,
        "finding": f.finding,
        "failure_sets": [_ids(s, back) for s in f.failure_sets],
        "existing_failure_sets": [_ids(s, back) for s in f.existing],
        "trace": trace_id,
    }


def _phases_json(r: ShapeResult, back) -> list[dict[str, Any]]:
    out = []
    for ph in r.phases:
        out.append({
            "action": ph.action,
            "replicas": _ids(ph.replicas, back),
            "adding": _ids(ph.adding, back),
            "removing": _ids(ph.removing, back),
            "isr": _ids(ph.isr, back),
            "leader": _leader(ph.leader, back),
            "rf": len(ph.replicas),
        })
    return out


def partition_json(move: PartitionMove, r: ShapeResult, back: dict[int, int],
                   traces: dict[str, dict[str, Any]], durability: Sequence[DurabilityFinding] = ()) -> dict[str, Any]:
    """One partition of `plan --json`: the shape's findings in real ids, then the durability rules'
    (checker/plan/durability.py, computed on the move itself); the verdict counts both."""
    phases = _phases_json(r, back)
    findings = []
    for k, f in enumerate(r.findings):
        trace_id = f"{move.name}__{f.property}" + (f"__{f.finding}" if f.finding else "")
        if f.trace is not None:
            traces[trace_id] = {"trace": f.trace, "brokers": {s: b for s, b in back.items() if b >= 0},
                                "labels": {"t-0": move.name}}
        findings.append(_finding_json(f, back, move, trace_id if f.trace is not None else None))
    findings += [d.to_json() for d in durability]
    final_leader = phases[-1]["leader"] if phases else None
    verdict = RISK if any(f["severity"] == RISK for f in findings) else ("ok" if not findings else NOTE)
    return {
        "partition": move.name,
        "topic": move.topic,
        "index": move.partition,
        "current": list(move.current),
        "target": list(move.target),
        "isr": list(move.isr),
        "leader": None if move.leader == NO_LEADER else move.leader,
        "down": list(move.down),
        "min_isr": move.min_isr,
        "unclean": move.unclean,
        "in_flight": [list(x) for x in move.in_flight] if move.in_flight else None,
        "rf_before": len(move.current),
        "rf_after": len(move.target),
        "peak_rf": max(p["rf"] for p in phases) if phases else len(move.current),
        "gaining": [b for b in move.target if b not in move.current],
        "losing": [b for b in move.current if b not in move.target],
        "leader_after": final_leader,
        "preferred_after": move.target[0],
        "shape": r.shape.label(),
        "phases": phases,
        "findings": findings,
        "verdict": verdict,
    }


def run_plan(plan: ReassignmentPlanJson, moves: list[PartitionMove], options: PlanOptions,
             current: ReassignmentPlanJson | None, current_file: str | None, *, jobs: int | None = None,
             progress=None) -> PlanResult:
    started = time.perf_counter()
    name = options.profile if isinstance(options.profile, str) else options.profile.name
    any_order = name in SYMMETRIC_PROFILES
    shaped = [(m, *shape_of(m, spare=1 if options.overrides else 0, any_order=any_order)) for m in moves]
    # largest first (brokers involved, then replicas), so that parallel workers finish together
    distinct = sorted(dict.fromkeys(s for _, s, _ in shaped), key=lambda s: (-s.brokers, -len(s.current)))
    results = check_shapes(distinct, options, jobs=jobs, progress=progress)
    traces: dict[str, dict[str, Any]] = {}
    parts = [partition_json(m, results[s], back, traces, durability_findings(m, name)) for m, s, back in shaped]
    for p, (m, s, back) in zip(parts, shaped):
        for ph, raw in zip(p["phases"], results[s].phases):
            ph["action"] = None if raw.action is None else _action_text(raw.action, back, m)
    rollback = None
    if current is not None:
        try:
            rollback = format_as_kafka(rollback_entries(plan, current, current_file or "--current"))
        except ReassignJsonError as e:
            raise PlanInputError(current_file or "", e.path, e.problem) from None
    else:
        rollback = format_as_kafka(ReassignmentPlanJson(tuple(_entry(m) for m in moves)))
    return PlanResult(name, options, parts, len(distinct), sum(r.states for r in results.values()),
                      time.perf_counter() - started, rollback, traces)


def _entry(m: PartitionMove) -> ReassignmentEntry:
    return ReassignmentEntry(m.topic, m.partition, m.current, m.log_dirs)


def _action_text(action, back: dict[int, int], move: PartitionMove) -> str:
    changes: dict[str, Any] = {}
    if hasattr(action, "topic"):
        changes["topic"], changes["partition"] = move.topic, move.partition
    if isinstance(getattr(action, "broker", None), int):
        changes["broker"] = back.get(action.broker, action.broker)
    if isinstance(getattr(action, "replicas", None), tuple):
        changes["replicas"] = tuple(back.get(b, b) for b in action.replicas)
    return str(replace(action, **changes))
