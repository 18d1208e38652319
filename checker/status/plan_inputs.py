"""`kreassign plan --bootstrap-server`: the cluster's snapshot as the inputs `plan` otherwise reads from files.

The current assignment is what `--execute` would print as the rollback (`--current`), the partition states
and configs are what `kafka-topics.sh --describe` shows (`--describe`), the live brokers are `--live`, and
the release decides the profile and `--kafka-version` (release.py). A partition already moving keeps its
adding and removing replicas, exactly as `--describe` shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kreassign.checker.plan.formats import Describe, DescribedPartition
from kreassign.reference.reassign_json import ReassignmentEntry, ReassignmentPlanJson

from .snapshot import BROKER_KEYS, Snapshot


@dataclass
class PlanInputs:
    current: ReassignmentPlanJson
    describe: Describe
    live: set[int]
    racks: dict[int, str | None]


def plan_inputs(snapshot: Snapshot) -> PlanInputs:
    entries, parts = [], {}
    for p in snapshot.partitions:
        entries.append(ReassignmentEntry(p.topic, p.partition, p.original))
        parts[(p.topic, p.partition)] = DescribedPartition(p.topic, p.partition, p.leader, p.replicas, p.isr,
                                                           p.adding, p.removing, 0)
    configs = {t: {k: v for k, v in c.items() if k not in BROKER_KEYS} for t, c in snapshot.topic_configs.items()}
    return PlanInputs(ReassignmentPlanJson(tuple(entries)), Describe(configs, parts), snapshot.live,
                      {b: v.get("rack") for b, v in snapshot.brokers.items()})


def rack_notes(plan: ReassignmentPlanJson, racks: dict[int, str | None]) -> list[str]:
    """A target that puts two replicas on one rack while enough racks exist to spread them (Kafka's rack-aware
    assignment spreads replicas over racks: `AdminUtils.assignReplicasToBrokersRackAware`)."""
    known = {r for r in racks.values() if r}
    if not known:
        return []
    out = []
    for e in plan.entries:
        on: dict[str, list[int]] = {}
        for b in e.replicas:
            if racks.get(b):
                on.setdefault(racks[b], []).append(b)
        crowded = {r: bs for r, bs in on.items() if len(bs) > 1}
        if crowded and len(known) >= min(len(e.replicas), len(known)) and len(on) < min(len(e.replicas), len(known)):
            where = "; ".join(f"{','.join(map(str, bs))} on rack {r}" for r, bs in sorted(crowded.items()))
            out.append(f"{e.topic}-{e.partition}: the target puts {where} while {len(known)} racks exist")
    return out


__all__ = ["PlanInputs", "plan_inputs", "rack_notes"]
