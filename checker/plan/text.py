"""`kreassign plan` for the terminal: a summary table, phases per partition, risks with advice, rollback."""

from __future__ import annotations

from typing import Any

from kreassign.checker.plan import durability
from kreassign.checker.plan.check import NOTE, RISK
from kreassign.checker.plan.run import PlanResult
from tabulate import tabulate

#: what the operator can do about each kind of finding
ADVICE = {
    "cancel_restores_original_order": "a cancel restores the replicas but not their order, so the preferred "
    "leader changes: roll back by executing the rollback JSON instead of --cancel, or run a PREFERRED "
    "leader election afterwards",
    "cancel_restores_original_replicas": "a cancel does not restore the original replicas: roll back by "
    "executing the rollback JSON",
    "partition_has_leader": "the partition goes offline with these failures: check those brokers' health "
    "first, move fewer partitions at a time, or raise the replication factor before moving",
    "isr_meets_min_insync_replicas": "acks=all producers get NOT_ENOUGH_REPLICAS with these failures: "
    "move when those brokers are healthy, or with a higher RF",
    "clean_leader_available": "only an unclean election (data loss) brings a leader back with these failures",
    "admin_action_keeps_a_leader": "a cancel or re-submission can leave the partition leaderless: "
    "do not cancel or re-submit while it moves; if it happens, elect a leader (kafka-leader-election.sh)",
    "reassignment_can_finish": "the move can get stuck: watch kafka-reassign-partitions.sh --verify and "
    "be ready to cancel",
    "adding_removing_disjoint": "do not re-submit (override) a running reassignment: let it finish or roll "
    "it back with the rollback JSON, then submit the new plan",
    "replication_factor_bounded": "an override keeps an earlier target's replica until the end: expect the "
    "extra replication load, or avoid overriding",
    "replication_factor_restored": "after a cancel the replica count differs from the original: execute the "
    "rollback JSON to restore it",
    "isr_in_replicas": "the ISR can name a broker that is no longer a replica: avoid cancelling while a "
    "replica is down",
    **durability.ADVICE,  # Kafka's durability rules (min.insync.replicas, replication factor, the ISR now)
}


def _ids(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, list):
        return "[" + ",".join(map(str, v)) + "]"
    return str(v)


def summary_table(result: PlanResult) -> str:
    rows = []
    for p in result.partitions:
        risks = [f["property"] for f in p["findings"] if f["severity"] == RISK]
        notes = [f["property"] for f in p["findings"] if f["severity"] == NOTE]
        rows.append([p["partition"], f"{_ids(p['current'])} -> {_ids(p['target'])}",
                     f"{p['rf_before']}->{p['rf_after']} (peak {p['peak_rf']})", _ids(p["gaining"]),
                     f"{_ids(p['leader'])}->{_ids(p['leader_after'])}", len(p["phases"]) - 1,
                     p["verdict"] + (f" ({len(risks)} risk{'s' if len(risks) != 1 else ''})" if risks else
                                     f" ({len(notes)} note{'s' if len(notes) != 1 else ''})" if notes else "")])
    return tabulate(rows, headers=["partition", "current -> target", "RF", "gains", "leader", "steps", "verdict"],
                    tablefmt="simple")


def phase_table(p: dict[str, Any]) -> str:
    rows = [[k, ph["action"] or "(now)", _ids(ph["replicas"]), _ids(ph["adding"]), _ids(ph["removing"]),
             _ids(ph["isr"]), _ids(ph["leader"]), ph["rf"]] for k, ph in enumerate(p["phases"])]
    return tabulate(rows, headers=["step", "action", "replicas", "adding", "removing", "isr", "leader", "RF"],
                    tablefmt="simple")


def render(result: PlanResult, plan_file: str, phases: bool) -> str:
    o = result.options
    head = (f"{plan_file}: {len(result.partitions)} partitions, {result.shapes} distinct shapes checked "
            f"({result.states:,} states, {result.seconds:.1f} s); profile {result.profile}, failures {o.failures}, "
            f"failovers {o.failovers}, cancel {'on' if o.cancel else 'off'}, overrides {o.overrides}")
    out = [head, "", summary_table(result)]
    if phases:
        for p in result.partitions:
            title = (f"{p['partition']}: {_ids(p['current'])} -> {_ids(p['target'])}, min.insync.replicas "
                     f"{p['min_isr']}, gains load: {_ids(p['gaining']) if p['gaining'] else 'none'}, "
                     f"preferred leader after: {p['preferred_after']}")
            out += ["", title, phase_table(p)]
    out.append("")
    if result.risks:
        out.append(f"Risks ({len(result.risks)}):")
        out += [f"  {r}" for r in result.risks]
    else:
        out.append("Risks: none found for these bounds.")
    if result.notes:
        out.append(f"Notes ({len(result.notes)}):")
        out += [f"  {n}" for n in result.notes]
    seen = {f["property"] for p in result.partitions for f in p["findings"]}
    advice = [f"  {name}: {ADVICE[name]}" for name in ADVICE if name in seen]
    if advice:
        out += ["What to do:"] + advice
    if result.rollback:
        out += ["", "Rollback JSON (what kafka-reassign-partitions.sh --execute prints; save it):", result.rollback]
    return "\n".join(out)
