"""Render a trace for people: a step table (tabulate) or a Graphviz dot graph.

`step_views` reads a trace into one view per step (partition rows, the cells that
changed and the cells that violate the property, down brokers, the zk controller's
pending step and znode, the response's error codes, the mismatch diff); the terminal
table here and the HTML report (checker/report/) both draw from it. Broker ids and
partition names can be mapped for display (`brokers`, `labels`), e.g. back to the real
ids of a `kreassign plan` partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.checker.traces.format import Trace
from kreassign.spec.codec import decode_action
from kreassign.spec.messages import ERROR_NAMES
from tabulate import tabulate

MARK = "*"  # suffix of a cell whose value changed on this step
VIOLATION_MARK = "!"  # suffix of the cell that breaks the property
LEGEND = (f"legend: {MARK} changed on this step · {VIOLATION_MARK} breaks the property · "
          "down = brokers not active · zk = controller's pending step / znode · (loop) = the lasso's loop starts")

#: the columns a property speaks about: where its violation shows (the last step, or the loop)
VIOLATING_COLUMNS: dict[str, tuple[str, ...]] = {
    "target_in_replicas": ("replicas",),
    "original_in_replicas": ("replicas",),
    "adding_removing_disjoint": ("adding", "removing"),
    "isr_in_replicas": ("isr", "replicas"),
    "leader_in_isr": ("leader", "isr"),
    "isr_non_empty": ("isr",),
    "replication_factor_bounded": ("replicas",),
    "committed_records_kept": ("log",),
    "epochs_monotone": ("epochs",),
    "completion_reaches_target": ("replicas", "isr"),
    "cancel_restores_original_replicas": ("replicas",),
    "cancel_restores_original_order": ("replicas",),
    "replication_factor_restored": ("replicas",),
    "admin_action_keeps_a_leader": ("leader",),
    "cancel_rejected_cleanly": ("replicas", "adding", "removing"),
    "reassignment_can_finish": ("adding", "removing"),
    "partition_has_leader": ("leader",),
    "isr_meets_min_insync_replicas": ("isr",),
    "clean_leader_available": ("leader", "isr"),
    # the optional capabilities (docs/checking.md): their columns appear when the trace has their fields
    "moving_replicas_throttled": ("throttled", "rates"),
    "throttles_eventually_cleared": ("throttled", "rates"),
    "isr_joiner_was_told": ("isr", "hosted"),
    "no_in_sync_log_deleted": ("isr", "hosted"),
    "no_stray_replicas": ("replicas", "hosted"),
    "created_partitions_get_replication_factor": ("replicas",),
    "preferred_leader_eventually_leads": ("leader", "replicas"),
}

COLUMNS = ["replicas", "adding", "removing", "isr", "leader", "epochs", "down"]
#: columns shown only when some state of the trace has the field: the reassignment tool's throttles
#: (this partition's leader / follower throttled replicas, and the brokers with throttle rates set)
#: and the brokers hosting a log of the partition (bounds throttles / broker_replicas)
OPTIONAL_COLUMNS = ["throttled", "rates", "hosted"]


def _fmt(v: Any) -> str:
    if isinstance(v, list | tuple):
        return "[" + ",".join(map(str, v)) + "]"
    if v is None:
        return "-"
    return str(v)


@dataclass
class Row:
    label: str  # partition, e.g. "orders-3"
    cells: dict[str, Any]
    changed: set[str] = field(default_factory=set)
    violating: set[str] = field(default_factory=set)
    original: list[int] | None = None  # the ghost: replicas when the reassignment began
    requested: list[int] | None = None  # the ghost: the accepted target


@dataclass
class StepView:
    index: int  # 0 = initial state
    action: str
    rows: list[Row]
    down: list[int]
    errors: list[str] = field(default_factory=list)  # "t-0: REASSIGNMENT_IN_PROGRESS (60)"
    zk: str = ""  # controller: pending step, znode, active/epoch
    mismatch: list[str] = field(default_factory=list)
    loop: bool = False


def _map(ids: Any, brokers: dict[int, int] | None) -> Any:
    if brokers is None:
        return ids
    if isinstance(ids, list | tuple):
        return [brokers.get(b, b) for b in ids]
    if isinstance(ids, int) and ids >= 0:
        return brokers.get(ids, ids)
    return ids


def _cluster(state: dict) -> dict:
    return state.get("kafka_state") or state.get("cluster", state)


def _log_cell(log: dict | None, brokers) -> str:
    """The replication layer in one cell: high watermark, then each replica's log (epochs)."""
    if not log:
        return ""
    logs = " ".join(f"{_map(b, brokers)}:{_fmt(entries)}" for b, entries in log["logs"])
    return f"hw={log['hw']} {logs}"


def _zk_cell(cluster: dict, brokers, labels) -> str:
    zk = cluster.get("zk")
    if not zk:
        return ""
    bits = []
    if not zk.get("active", True):
        bits.append("no controller")
    bits.append(f"epoch {zk.get('epoch')}")
    for t, i, step in zk.get("pending", []):
        bits.append(f"pending {step} {labels.get(f'{t}-{i}', f'{t}-{i}')}")
    for t, i, r in zk.get("admin_znode", []):
        bits.append(f"znode {labels.get(f'{t}-{i}', f'{t}-{i}')}:{_fmt(_map(r, brokers))}")
    for t, i, r in zk.get("being_reassigned", []):
        bits.append(f"reassigning {labels.get(f'{t}-{i}', f'{t}-{i}')}->{_fmt(_map(r, brokers))}")
    return "; ".join(bits)


def _throttled_cell(throttles: dict | None, topic: str, index: int, brokers) -> str | None:
    """This partition's throttled replicas: "L[leader-throttled] F[follower-throttled]" (None: no throttles field)."""
    if throttles is None:
        return None
    lists = [[_map(b, brokers) for t, i, b in throttles.get(kind, []) if (t, i) == (topic, index)]
             for kind in ("leader", "follower")]
    return f"L{_fmt(lists[0])} F{_fmt(lists[1])}"


def _rows(state: dict, brokers, labels) -> tuple[list[Row], list[int]]:
    cluster = _cluster(state)
    down = [_map(b["id"], brokers) for b in cluster.get("brokers", []) if not b.get("active", True)]
    throttles, hosted = cluster.get("throttles"), cluster.get("hosted")
    rates = _map(throttles.get("brokers", []), brokers) if throttles is not None else None
    ghosts = state.get("ghosts") or []
    rows = []
    k = 0
    for t in cluster.get("topics", []):
        for i, p in enumerate(t["partitions"]):
            name = f"{t['name']}-{i}"
            cells = {
                "replicas": _map(p["replicas"], brokers),
                "adding": _map(p["adding"], brokers),
                "removing": _map(p["removing"], brokers),
                "isr": _map(p["isr"], brokers),
                "leader": _map(p["leader"], brokers) if p["leader"] >= 0 else "none",
                "epochs": f"{p['leader_epoch']}/{p['partition_epoch']}",
                "down": down,
                "log": _log_cell(p.get("log"), brokers),
                "throttled": _throttled_cell(throttles, t["name"], i, brokers),
                "rates": rates,
                "hosted": _map([b for b, tt, ii in hosted if (tt, ii) == (t["name"], i)], brokers)
                if hosted is not None else None,
            }
            g = ghosts[k] if k < len(ghosts) else None
            original = _map(g[0], brokers) if g and g[0] is not None else None
            requested = _map(g[1], brokers) if g and g[1] is not None else None
            rows.append(Row(labels.get(name, name), cells, original=original, requested=requested))
            k += 1
    return rows, down


def _errors(response: Any, labels) -> list[str]:
    if not isinstance(response, dict):
        return []
    out = []
    if response.get("error_code"):
        c = response["error_code"]
        out.append(f"{ERROR_NAMES.get(c, 'ERROR')} ({c})")
    for t in response.get("responses", []) or []:
        for p in t.get("partitions", []):
            if p.get("error_code"):
                c = p["error_code"]
                name = f"{t['name']}-{p['partition_index']}"
                out.append(f"{labels.get(name, name)}: {ERROR_NAMES.get(c, 'ERROR')} ({c})")
    return out


def _action_text(step: dict, brokers, labels) -> str:
    text = step.get("action_text", "")
    if brokers is None and not labels:
        return text
    try:
        action = decode_action(step["action"])
    except (KeyError, TypeError, ValueError):  # an action this version cannot decode keeps its recorded text
        return text
    changes: dict[str, Any] = {}
    for name in ("broker", "leader"):
        if isinstance(getattr(action, name, None), int):
            changes[name] = _map(getattr(action, name), brokers)
    for name in ("replicas", "new_isr"):
        if isinstance(getattr(action, name, None), tuple):
            changes[name] = tuple(_map(getattr(action, name), brokers))
    if hasattr(action, "topic") and hasattr(action, "partition"):
        label = labels.get(f"{action.topic}-{action.partition}")
        if label is not None:
            topic, _, part = label.rpartition("-")
            changes["topic"], changes["partition"] = topic, int(part)
    try:
        return str(replace(action, **changes))
    except (TypeError, ValueError):
        return text


def step_views(trace: Trace, brokers: dict[int, int] | None = None,
               labels: dict[str, str] | None = None) -> list[StepView]:
    """One view per state of a reassignment trace, the initial state first."""
    labels = labels or {}
    rows, down = _rows(trace.initial, brokers, labels)
    views = [StepView(0, "(initial)", rows, down, zk=_zk_cell(_cluster(trace.initial), brokers, labels))]
    for k, step in enumerate(trace.steps, 1):
        state = {"kafka_state": step.get("kafka_state"), **step["state"]}
        rows, down = _rows(state, brokers, labels)
        prev = {r.label: r for r in views[-1].rows}
        for r in rows:
            before = prev.get(r.label)
            r.changed = {c for c in r.cells if before is None or before.cells.get(c) != r.cells[c]}
        mismatch = (step.get("mismatch") or {}).get("diff", [])
        views.append(StepView(k, _action_text(step, brokers, labels), rows, down,
                              _errors(step.get("response"), labels), _zk_cell(_cluster(state), brokers, labels),
                              list(mismatch), trace.loop_start is not None and k == trace.loop_start + 1))
    _mark_violation(trace, views)
    return views


def _mark_violation(trace: Trace, views: list[StepView]) -> None:
    """The property's cells on the last step (the state or edge that breaks it), and on every
    step of a lasso's loop for a liveness property."""
    cols = VIOLATING_COLUMNS.get(trace.property, ())
    if not cols or trace.kind in ("sometimes", "mismatch"):
        return
    marked = views[trace.loop_start + 1:] if trace.loop_start is not None and trace.kind == "eventually" else views[-1:]
    for v in marked or views[-1:]:
        for r in v.rows:
            r.violating |= set(cols) & set(r.cells)


def original_replicas(views: list[StepView]) -> dict[str, tuple[list[int] | None, list[int] | None]]:
    """Per partition the (original, requested) replica lists of the last reassignment the trace shows."""
    out: dict[str, tuple[list[int] | None, list[int] | None]] = {}
    for v in views:
        for r in v.rows:
            if r.original is not None:
                out[r.label] = (r.original, r.requested)
    return out


def _columns(views: list[StepView]) -> list[str]:
    cols = list(COLUMNS)
    if any(r.cells.get("log") for v in views for r in v.rows):
        cols.append("log")
    cols += [c for c in OPTIONAL_COLUMNS if any(r.cells.get(c) is not None for v in views for r in v.rows)]
    return cols


def render_table(trace: Trace, brokers: dict[int, int] | None = None, labels: dict[str, str] | None = None) -> str:
    """The trace as a table: one row per step (and partition), changed cells marked '*', the
    violating cell '!', then the legend, the original replicas, responses and mismatches."""
    lines = [trace.summary or f"{trace.profile}: {trace.property}"]
    if trace.model == "reassignment":
        views = step_views(trace, brokers, labels)
        cols = _columns(views)
        zk = any(v.zk for v in views)
        rows = []
        for v in views:
            for n, r in enumerate(v.rows):
                cells = [_fmt(r.cells[c]) + (MARK if c in r.changed else "") + (VIOLATION_MARK if c in r.violating else "")
                         for c in cols]
                label = v.action if n == 0 else ""
                if n == 0 and v.errors:
                    label += "  -> " + ", ".join(v.errors)
                step = (str(v.index) + (" (loop)" if v.loop else "")) if n == 0 else ""
                rows.append([step, label, r.label] + cells + ([v.zk] if zk and n == 0 else [""] if zk else []))
        lines.append(tabulate(rows, headers=["step", "action", "partition"] + cols + (["zk"] if zk else []),
                              tablefmt="simple"))
        lines.append(LEGEND)
        notes = {"throttled": "throttled = the partition's leader (L) / follower (F) throttled replicas",
                 "rates": "rates = brokers with throttle rates set", "hosted": "hosted = brokers hosting a log of it"}
        if any(c in cols for c in notes):
            lines.append("        " + " · ".join(text for c, text in notes.items() if c in cols))
        for label, (original, requested) in original_replicas(views).items():
            lines.append(f"{label}: original replicas {_fmt(original)} (what the cancel/RF properties compare "
                         f"against), requested {_fmt(requested)}")
        for v in views:
            for d in v.mismatch:
                lines.append(f"step {v.index} mismatch: {d}")
    else:
        prev = _flatten(trace.initial)
        keys = list(prev)
        rows = [["0", "(initial)"] + [_fmt(prev[k]) for k in keys]]
        for k, step in enumerate(trace.steps, 1):
            cur = _flatten(step["state"])
            rows.append([str(k), step.get("action_text", "")] +
                        [_fmt(cur.get(c)) + (MARK if cur.get(c) != prev.get(c) else "") for c in keys])
            prev = cur
            for d in (step.get("mismatch") or {}).get("diff", []):
                rows.append(["", f"mismatch: {d}"] + [""] * len(keys))
        lines.append(tabulate(rows, headers=["step", "action"] + keys, tablefmt="simple"))
        lines.append(f"legend: {MARK} changed on this step")
    if trace.description:
        lines.append(f"property {trace.property}: {trace.description.strip()}")
    return "\n".join(lines)


def _flatten(v: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            out.update(_flatten(x, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix or "value": v}


def render_dot(trace: Trace) -> str:
    """The trace as a Graphviz digraph: one node per state, edges labelled with actions."""

    def label(state: dict) -> str:
        if trace.model == "reassignment":
            parts = []
            rows, _ = _rows(state, None, {})
            for r in rows:
                c = r.cells
                extra = "".join(f" {k}={_fmt(c[k])}" for k in OPTIONAL_COLUMNS if c.get(k) is not None)
                parts.append(f"{r.label} R={_fmt(c['replicas'])} AR={_fmt(c['adding'])} RR={_fmt(c['removing'])}\\n"
                             f"ISR={_fmt(c['isr'])} leader={c['leader']} epochs={c['epochs']}{extra}")
            return "\\n".join(parts)
        return "\\n".join(f"{k}={_fmt(v)}" for k, v in _flatten(state).items())

    out = ["digraph trace {", '  rankdir=TB; node [shape=box, fontname="monospace"];']
    states = [trace.initial] + [{"kafka_state": s.get("kafka_state"), **s["state"]} for s in trace.steps]
    for i, s in enumerate(states):
        out.append(f'  s{i} [label="{i}: {label(s)}"];')
    for i, step in enumerate(trace.steps):
        text = step.get("action_text", "").replace('"', "'")
        out.append(f'  s{i} -> s{i + 1} [label="{text}"];')
    if trace.loop_start is not None and trace.steps:
        out.append(f'  s{len(trace.steps)} -> s{trace.loop_start} [style=dashed, label="loop"];')
    out.append("}")
    return "\n".join(out)
