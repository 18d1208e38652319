"""`kreassign status` for a terminal: the cluster in two lines, a table of the reassignments in flight, then
per partition what it waits on, what a cancel or an override would leave, and the shortest way to done."""

from __future__ import annotations

from tabulate import tabulate

from .run import StatusResult, outcome_text


def _ids(v) -> str:
    return ",".join(map(str, v)) if v else "-"


def render(result: StatusResult, details: bool = True) -> str:
    s, r = result.snapshot, result.rules
    fenced = sorted(set(s.brokers) - s.live)
    lines = [(f"cluster {s.cluster_id or '?'} at {s.bootstrap}: {'KRaft' if s.mode == 'kraft' else 'ZooKeeper mode'}, "
             f"{r.said}"),
             f"brokers up: {_ids(sorted(s.live))}" + (f"; fenced: {_ids(fenced)}" if fenced else "")
             + f"; {len({p.topic for p in s.partitions})} topics, {len(s.partitions)} partitions, "
             f"{len(result.partitions)} being reassigned (read in {s.read_in_s:.1f} s, "
             f"analyzed in {result.seconds:.1f} s)"]
    lines += [f"note: {n}" for n in result.notes]
    if result.partitions:
        rows = [[p["partition"], f"{_ids(p['original'])} → {_ids(p['target'])}", _ids(p["adding"]),
                 _ids(p["removing"]), _ids(p["isr"]), p["leader"] if p["leader"] is not None else "none",
                 _ids(p["down"]), p["verdict"]] for p in result.partitions]
        lines += ["", tabulate(rows, headers=["partition", "move", "adding", "removing", "isr", "leader", "down",
                                              "verdict"], tablefmt="simple")]
    else:
        lines += ["", "no reassignment in flight"]
    shown = result.partitions if details else [p for p in result.partitions if p["verdict"] != "waiting"]
    for p in shown[:50]:
        lines += ["", f"{p['partition']}: {p['summary']}"]
        for w in p["waits_on"]:
            lines.append(f"  waits on: {w['text']}")
        if p.get("completion"):
            lines.append("  completes after: " + " → ".join(st["event"] for st in p["completion"]))
        for key in ("cancel", "override"):
            if p.get(key):
                label = "a cancel" if key == "cancel" else f"an override to {_ids(p['original'])}"
                lines.append(f"  {label} would leave: {outcome_text(p[key])}")
        if p.get("history_dependent"):
            lines.append("  (the answer depends on how it got here: the worst of the possible histories is shown)")
        if p.get("ignored_elr"):
            lines.append("  (located without comparing the ELR, which the model tracks differently: docs/status.md)")
        lines.append(f"  what to do: {p['advice']}")
    if len(shown) > 50:
        lines.append(f"... and {len(shown) - 50} more (--json has them all)")
    t = result.throttles
    if t.left_behind or t.missing:
        lines += ["", "replication throttles:"]
        for e in t.left_behind:
            if "broker" in e:
                lines.append(f"  left behind: broker {e['broker']} still has {', '.join(e['configs'])}, "
                             "and no move in flight involves it")
            else:
                reps = e["replicas"] if isinstance(e["replicas"], str) else ",".join(e["replicas"])
                lines.append(f"  left behind: topic {e['topic']} {e['config']}={reps} (no longer moving)")
        for m in t.missing:
            lines.append(f"  missing on {m['partition']} (moving while other throttles are set): {', '.join(m['lacks'])}")
        if t.left_behind:
            lines.append("  kafka-reassign-partitions.sh --verify removes them once no reassignment is in flight "
                         "(or kafka-configs.sh --alter --delete-config)")
    for e in result.rf_raised:
        lines.append(f"note: {e['partition']} raises its replication factor {e['rf_before']} → {e['rf_after']}")
    lines += ["", f"{len(result.problems)} problem(s)" if result.problems else "nothing stuck, nothing left behind"]
    return "\n".join(lines)


__all__ = ["render"]
