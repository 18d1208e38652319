"""From a snapshot to `kreassign status`'s answer: each in-flight reassignment analyzed (once per shape), the
cluster's throttles checked, everything in real topic names and broker ids."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .analyze import Finish, Ids, Outcome, PartitionAnalysis, analyze
from .locate import LOCATE_STATES, Shape, shape_of
from .release import Rules
from .snapshot import LivePartition, Snapshot
from .throttles import ThrottleReport, check_throttles

PROBLEMS = ("stuck", "never", "unexplained")


@dataclass
class StatusResult:
    snapshot: Snapshot
    rules: Rules
    partitions: list[dict[str, Any]]
    throttles: ThrottleReport
    rf_raised: list[dict[str, Any]]
    shapes: int
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        out = [f"{p['partition']}: {p['summary']}" for p in self.partitions if p["verdict"] in PROBLEMS]
        out += [f"throttle left behind: {_throttle_text(t)}" for t in self.throttles.left_behind]
        out += [f"throttle missing on {m['partition']}: {', '.join(m['lacks'])}" for m in self.throttles.missing]
        return out

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0

    def to_json(self) -> dict[str, Any]:
        s = self.snapshot
        return {"bootstrap": s.bootstrap, "cluster_id": s.cluster_id, "mode": s.mode,
                "rules": {"profile": self.rules.profile, "kafka_version": self.rules.kafka_version,
                          "elr": self.rules.elr, "release": self.rules.release, "said": self.rules.said},
                "brokers": {"live": sorted(s.live), "fenced": sorted(set(s.brokers) - s.live),
                            "fenced_known": s.fenced_known,
                            "racks": {str(b): v.get("rack") for b, v in sorted(s.brokers.items())}},
                "topics": len({p.topic for p in s.partitions}), "partition_count": len(s.partitions),
                "reassigning": len(self.partitions), "partitions": self.partitions,
                "throttles": self.throttles.to_json(), "rf_raised": self.rf_raised, "problems": self.problems,
                "notes": self.notes, "shapes": self.shapes, "read_seconds": round(s.read_in_s, 3),
                "analysis_seconds": round(self.seconds, 3), "exit_code": self.exit_code,
                "snapshot": s.to_json()}


def _throttle_text(t: dict[str, Any]) -> str:
    if "broker" in t:
        return f"broker {t['broker']} ({', '.join(t['configs'])})"
    reps = t["replicas"] if isinstance(t["replicas"], str) else ",".join(t["replicas"])
    return f"topic {t['topic']} {t['config']}={reps}"


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def run_status(snapshot: Snapshot, rules: Rules, *, search_states: int = LOCATE_STATES,
               progress: Callable[[int, int], None] | None = None) -> StatusResult:
    began = time.monotonic()
    live = snapshot.live
    cache: dict[Shape, PartitionAnalysis] = {}
    out = []
    moving = snapshot.in_flight()
    for k, p in enumerate(moving):
        min_isr = _int(snapshot.topic_config(p.topic, "min.insync.replicas"), 1)
        unclean = (snapshot.topic_config(p.topic, "unclean.leader.election.enable") or "false").lower() == "true"
        shape, back = shape_of(p, live, min_isr, unclean)
        if shape not in cache:
            cache[shape] = analyze(shape, rules, search_states)
        out.append(partition_json(p, cache[shape], Ids(back), snapshot, rules))
        if progress:
            progress(k + 1, len(moving))
    rf_raised = [{"partition": p.name, "rf_before": len(p.original), "rf_after": len(p.target)}
                 for p in moving if len(p.target) > len(p.original)]
    notes = []
    if not snapshot.fenced_known and snapshot.mode == "kraft":
        notes.append("this release does not list fenced brokers (DescribeCluster's includeFencedBrokers is Kafka "
                     "4.0+): a broker that is not listed is taken as down, whether fenced or never registered")
    down = sorted(set(snapshot.brokers) - live)
    if down:
        notes.append(f"the configs of broker{'s' if len(down) > 1 else ''} {', '.join(map(str, down))} could not be "
                     "read (a broker answers for its own configs): a throttle rate left on "
                     f"{'them' if len(down) > 1 else 'it'} is not reported")
    return StatusResult(snapshot, rules, out, check_throttles(snapshot), rf_raised, len(cache),
                        time.monotonic() - began, notes)


# -- one partition in real ids ---------------------------------------------------------------------------------


def _role(b: int, p: LivePartition) -> str:
    if b in p.adding:
        return "adding"
    if b in p.removing:
        return "removing"
    if b in p.replicas:
        return "retained"
    return "not a replica"


def waits(finish: Finish, ids: Ids, p: LivePartition, snapshot: Snapshot, rules: Rules) -> list[dict[str, Any]]:
    out = []
    for kind, shape_broker in finish.required:
        b = ids.one(shape_broker)
        role = _role(b, p)
        if kind == "back":
            where = "fenced" if b in snapshot.brokers else "not registered"
            text = f"broker {b} must come back (it is {where}; replica {b} is {role})"
        elif role == "retained":
            text = (f"replica {b} must rejoin the ISR: it stays in the target without being added, and under "
                    f"{_rules_name(rules)} the move completes only with it in sync")
        else:
            text = f"replica {b} ({role}) must join the ISR"
        out.append({"event": "broker_back" if kind == "back" else "in_sync", "broker": b, "role": role, "text": text})
    return out


def _rules_name(rules: Rules) -> str:
    return f"Kafka {rules.kafka_version}'s rules" if rules.profile == "kraft" else "the ZooKeeper controller's rules"


def _steps(path, ids: Ids) -> list[dict[str, Any]]:
    """The path's events, consecutive controller steps folded into one line."""
    out: list[dict[str, Any]] = []
    for a, ms in path:
        text = ids.action(a)
        if out and out[-1]["event"].startswith("the controller takes") and text.startswith("the controller takes"):
            n = out[-1].get("count", 1) + 1
            out[-1] = {"event": f"the controller takes its next steps ({n})", "count": n, "state": ids.partition(ms)}
            continue
        out.append({"event": text, "state": ids.partition(ms)})
    return out


def _summary(verdict: str, finish: Finish | None, ws: list[dict[str, Any]], rules: Rules) -> str:
    if verdict == "unexplained":
        return (f"unexplained: the model of {_rules_name(rules)} cannot reach what the cluster shows (a difference "
                "between the model and this cluster; docs/status.md)")
    if verdict == "never":
        why = "; ".join(f"{r['summary']} (finding {r['finding']})" for r in finish.reasons) \
            if finish and finish.reasons else \
            "no sequence of brokers coming back and replicas catching up completes it"
        return f"can never finish under {_rules_name(rules)}: {why}"
    if verdict == "stuck":
        back = [str(w["broker"]) for w in ws if w["event"] == "broker_back"]
        return f"stuck: waits for broker{'s' if len(back) > 1 else ''} {', '.join(back)} to come back"
    if verdict == "waiting":
        syncs = [str(w["broker"]) for w in ws if w["event"] == "in_sync"]
        return f"in progress: waits for replica{'s' if len(syncs) > 1 else ''} {', '.join(syncs)} to join the ISR"
    return "finishing: the controller's next steps complete it"


def outcome_json(o: Outcome | None, ids: Ids, p: LivePartition, min_isr: int, snapshot: Snapshot,
                 rules: Rules) -> dict[str, Any] | None:
    if o is None:
        return None
    if o.error:
        return {"request": o.request, "refused": o.error}
    view = ids.partition(o.settled)
    rf = len(view["replicas"]) if not view["adding"] else len(view["replicas"]) - len(view["adding"])
    leaderless = "now" if o.leaderless_now else "possible" if o.leaderless_possible else "no"
    out = {"request": o.request, "refused": None, **{k: view[k] for k in ("replicas", "adding", "removing", "isr",
                                                                         "leader")},
           "rf": rf, "rf_before": len(p.original), "leaderless": leaderless, "unclean_needed": o.unclean_needed,
           "under_min_isr": view["leader"] is not None and len(view["isr"]) < min_isr}
    if o.then is not None:
        ws = waits(o.then, ids, p, snapshot, rules)
        out["then"] = {"verdict": o.then.verdict, "summary": _summary(o.then.verdict, o.then, ws, rules),
                       "waits_on": ws}
    out["text"] = outcome_text(out)
    return out


def outcome_text(o: dict[str, Any]) -> str:
    if o.get("refused"):
        return f"refused ({o['refused']})"
    parts = [f"replicas {o['replicas']}", f"leader {o['leader'] if o['leader'] is not None else 'none'}",
             f"ISR {o['isr']}", f"RF {o['rf_before']}→{o['rf']}" if o["rf"] != o["rf_before"] else f"RF {o['rf']}"]
    if o["adding"] or o["removing"]:
        parts.append(f"still moving (adding {o['adding']}, removing {o['removing']})")
    if o["leaderless"] == "now":
        parts.append("LEADERLESS" + (" (only an unclean election brings it back)" if o["unclean_needed"] else ""))
    elif o["leaderless"] == "possible":
        parts.append("may pass through a leaderless state")
    if o["under_min_isr"]:
        parts.append("ISR below min.insync.replicas (acks=all producers fail)")
    if o.get("then"):
        parts.append("then " + o["then"]["summary"])
    return "; ".join(parts)


def partition_json(p: LivePartition, a: PartitionAnalysis, ids: Ids, snapshot: Snapshot, rules: Rules) -> dict[str, Any]:
    live = snapshot.live
    min_isr = _int(snapshot.topic_config(p.topic, "min.insync.replicas"), 1)
    out: dict[str, Any] = {
        "partition": p.name, "topic": p.topic, "index": p.partition, "replicas": list(p.replicas),
        "adding": list(p.adding), "removing": list(p.removing), "isr": list(p.isr), "leader": p.leader,
        "elr": list(p.elr), "original": list(p.original), "target": list(p.target),
        "rf_before": len(p.original), "rf_after": len(p.target), "min_isr": min_isr,
        "down": sorted(b for b in set(p.replicas) | set(p.isr) | set(p.elr) if b not in live),
        "verdict": a.verdict,
    }
    finish = a.finish
    ws = waits(finish, ids, p, snapshot, rules) if finish else []
    out["summary"] = _summary(a.verdict, finish, ws, rules)
    out["waits_on"] = ws
    out["reasons"] = finish.reasons if finish else []
    out["completion"] = _steps(finish.path, ids) if finish and finish.path is not None else None
    out["cancel"] = outcome_json(a.cancel, ids, p, min_isr, snapshot, rules)
    out["override"] = outcome_json(a.override, ids, p, min_isr, snapshot, rules)
    if a.located is not None:
        out["explanation"] = [ids.action(x) for x in a.located.history]
        out["ignored_elr"] = a.located.ignored_elr
        verdicts = sorted({f.verdict for f in a.finishes})
        out["history_dependent"] = len(verdicts) > 1
    out["advice"] = advice(out)
    return out


def advice(p: dict[str, Any]) -> str:
    v = p["verdict"]
    cancel = p.get("cancel") or {}
    if v == "unexplained":
        return "report it (kreassign status --json keeps the snapshot that shows it)"
    if v == "waiting" or v == "finishing":
        return "nothing to do: it completes as the replicas catch up"
    if v == "stuck":
        back = [str(w["broker"]) for w in p["waits_on"] if w["event"] == "broker_back"]
        return f"start broker{'s' if len(back) > 1 else ''} {', '.join(back)} again, or cancel ({outcome_text(cancel) if cancel else 'n/a'})"
    return f"cancel it ({outcome_text(cancel) if cancel else 'n/a'}) and submit the move again"


__all__ = ["PROBLEMS", "StatusResult", "advice", "outcome_text", "partition_json", "run_status"]
