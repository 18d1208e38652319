"""Render a trace for people: a step table (tabulate) marking what changed, or a Graphviz dot graph."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from .trace import Trace

MARK = "*"  # suffix of a cell whose value changed on this step


def _fmt(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ",".join(map(str, v)) + "]"
    return str(v)


def _partition_rows(state: dict) -> dict[str, dict[str, Any]]:
    cluster = state.get("kafka_state") or state.get("cluster", state)
    rows = {}
    for t in cluster.get("topics", []):
        for i, p in enumerate(t["partitions"]):
            rows[f"{t['name']}-{i}"] = {
                "replicas": p["replicas"],
                "adding": p["adding"],
                "removing": p["removing"],
                "isr": p["isr"],
                "leader": p["leader"],
                "epochs": f"{p['leader_epoch']}/{p['partition_epoch']}",
                "log": _log_cell(p.get("log")),
            }
    down = [b["id"] for b in cluster.get("brokers", []) if not b.get("active", True)]
    for row in rows.values():
        row["down"] = down
    return rows


def _log_cell(log: dict | None) -> str:
    """The replication layer in one cell: high watermark, then each replica's log (epochs)."""
    if not log:
        return ""
    logs = " ".join(f"{b}:{_fmt(entries)}" for b, entries in log["logs"])
    return f"hw={log['hw']} {logs}"


def _flatten(v: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            out.update(_flatten(x, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix or "value": v}


def render_table(trace: Trace) -> str:
    """The trace as a table: one row per step (and partition), changed cells marked with '*'."""
    lines = [trace.summary or f"{trace.profile}: {trace.property}"]
    if trace.model == "reassignment":
        cols = ["replicas", "adding", "removing", "isr", "leader", "epochs", "down"]
        if any(r["log"] for r in _partition_rows(trace.initial).values()):
            cols.append("log")
        rows = []
        prev = _partition_rows(trace.initial)
        for tp, r in prev.items():
            rows.append(["0", "(initial)", tp] + [_fmt(r[c]) for c in cols])
        for k, step in enumerate(trace.steps, 1):
            cur = _partition_rows({"kafka_state": step.get("kafka_state"), **step["state"]})
            for n, (tp, r) in enumerate(cur.items()):
                cells = [_fmt(r[c]) + (MARK if prev.get(tp, {}).get(c) != r[c] else "") for c in cols]
                label = step.get("action_text", "") if n == 0 else ""
                if n == 0 and step.get("response"):
                    code = _response_code(step["response"])
                    if code:
                        label += f"  -> error {code}"
                marker = " (loop)" if trace.loop_start is not None and k == trace.loop_start + 1 else ""
                rows.append([str(k) + marker if n == 0 else "", label, tp] + cells)
            prev = cur
        lines.append(tabulate(rows, headers=["step", "action", "partition"] + cols, tablefmt="simple"))
    else:
        prev = _flatten(trace.initial)
        keys = list(prev)
        rows = [["0", "(initial)"] + [_fmt(prev[k]) for k in keys]]
        for k, step in enumerate(trace.steps, 1):
            cur = _flatten(step["state"])
            rows.append([str(k), step.get("action_text", "")] +
                        [_fmt(cur.get(c)) + (MARK if cur.get(c) != prev.get(c) else "") for c in keys])
            prev = cur
        lines.append(tabulate(rows, headers=["step", "action"] + keys, tablefmt="simple"))
    if trace.description:
        lines.append(f"property {trace.property}: {trace.description.strip()}")
    return "\n".join(lines)


def _response_code(response: Any) -> int:
    if not isinstance(response, dict):
        return 0
    if response.get("error_code"):
        return response["error_code"]
    for t in response.get("responses", []) or []:
        for p in t.get("partitions", []):
            if p.get("error_code"):
                return p["error_code"]
    return 0


def render_dot(trace: Trace) -> str:
    """The trace as a Graphviz digraph: one node per state, edges labelled with actions."""

    def label(state: dict) -> str:
        if trace.model == "reassignment":
            parts = []
            for tp, r in _partition_rows(state).items():
                parts.append(f"{tp} R={_fmt(r['replicas'])} AR={_fmt(r['adding'])} RR={_fmt(r['removing'])}\\n"
                             f"ISR={_fmt(r['isr'])} leader={r['leader']} epochs={r['epochs']}")
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
