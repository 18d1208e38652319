"""One self-contained HTML file: inline CSS and SVG, no script, nothing fetched when it opens.

`plan_report` (kreassign plan --html), `traces_report` (kreassign report, check --html):
a verdict summary, then per counterexample the property, the original replica set it
compares against, a timeline picture and the step-by-step table with the changed cells
(class "changed") and the violating cells (class "violating") highlighted, down brokers,
the zk controller's pending step and znode, and the responses with their error codes.
"""

from __future__ import annotations

import os
from html import escape
from typing import Any

from kreassign.checker.plan.run import PlanResult
from kreassign.checker.report.svg import timeline_svg
from kreassign.checker.status.run import StatusResult
from kreassign.checker.traces.format import Trace, TraceError, read_trace, trace_from_json
from kreassign.checker.traces.render import COLUMNS, LEGEND, original_replicas, step_views

from kreassign._version import __version__

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1d2330;max-width:1400px}
h1{font-size:22px;margin:0 0 8px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d8dde6;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;font-size:13px;margin:6px 0 12px}
th,td{border:1px solid #d8dde6;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f1f3f7} td.mono{white-space:nowrap} td.zk{font-family:ui-monospace,monospace;font-size:12px;min-width:260px}
td.mono,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px;white-space:pre-wrap;word-break:break-all}
.verdict{display:inline-block;padding:6px 12px;border-radius:6px;font-weight:600;margin:6px 0}
.verdict.ok{background:#dff3e4;color:#1b5e2b} .verdict.risk{background:#fde2e1;color:#8a1c17}
.verdict.note{background:#fff4d6;color:#6b4e00}
td.changed{background:#fff3bf} td.violating{background:#ffc9c9;outline:2px solid #c92a2a;font-weight:700}
tr.violating-row td.step{background:#ffc9c9}
td.error{color:#c92a2a;font-weight:600} .down{stroke:#555;stroke-width:2.5}
.meta{color:#5a6270;font-size:13px} .legend{font-size:12px;color:#5a6270}
svg.timeline{background:#fbfcfd;border:1px solid #d8dde6;margin:6px 0}
svg .axis{font-size:11px;fill:#5a6270;font-family:ui-monospace,monospace}
svg .isr{fill:#40a060} svg .replica{fill:#cfe8d5} svg .stray{fill:#e03131} svg .adding{stroke:#1c64d6;stroke-width:2.5}
svg .removing{stroke:#e8590c;stroke-width:2.5;stroke-dasharray:4 2} svg .leader{fill:#1d2330}
svg .violating-step{fill:none;stroke:#c92a2a;stroke-width:2}
span.sev-risk{color:#8a1c17;font-weight:600} span.sev-note{color:#6b4e00;font-weight:600}
"""


def _ids(v: Any) -> str:
    if isinstance(v, list | tuple):
        return "[" + ",".join(map(str, v)) + "]"
    return "none" if v is None else str(v)


def page(title: str, body: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"kreassign {escape(__version__)}\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def trace_section(trace: Trace, anchor: str, title: str, brokers: dict[int, int] | None = None,
                  labels: dict[str, str] | None = None) -> str:
    """A counterexample: what it shows, the original replicas, the timeline, the step table."""
    views = step_views(trace, brokers, labels)
    out = [f'<section class="trace" id="{escape(anchor)}"><h3>{escape(title)}</h3>']
    if trace.description:
        out.append(f'<p><b>{escape(trace.property)}</b>: {escape(" ".join(trace.description.split()))}</p>')
    for label, (original, requested) in original_replicas(views).items():
        out.append(f'<p class="original">{escape(label)}: original replica set <b>{escape(_ids(original))}</b> '
                   f'(what the property compares against), requested {escape(_ids(requested))}</p>')
    partitions = [r.label for r in views[0].rows]
    for p in partitions:
        out.append(timeline_svg(views, p))
    zk = any(v.zk for v in views)
    cols = list(COLUMNS)
    head = "".join(f"<th>{c}</th>" for c in ["step", "action", "partition"] + cols + (["zk controller"] if zk else [])
                   + ["response"])
    out.append(f'<table class="steps"><thead><tr>{head}</tr></thead><tbody>')
    for v in views:
        for n, r in enumerate(v.rows):
            cls = " class=\"violating-row\"" if r.violating else ""
            cells = [f'<td class="step">{v.index}{" (loop)" if v.loop else ""}</td>' if n == 0 else '<td></td>',
                     f'<td class="mono">{escape(v.action)}</td>' if n == 0 else '<td></td>',
                     f'<td class="mono">{escape(r.label)}</td>']
            for c in cols:
                klass = " ".join(k for k, on in (("mono", True), ("changed", c in r.changed),
                                                 ("violating", c in r.violating)) if on)
                cells.append(f'<td class="{klass}" data-col="{c}">{escape(_ids(r.cells[c]))}</td>')
            if zk:
                cells.append(f'<td class="zk">{escape(v.zk) if n == 0 else ""}</td>')
            errors = "; ".join(v.errors) if n == 0 else ""
            cells.append(f'<td class="{"error" if errors else ""}">{escape(errors)}</td>')
            out.append(f'<tr{cls} data-step="{v.index}">' + "".join(cells) + "</tr>")
            for d in (v.mismatch if n == 0 else []):
                out.append(f'<tr class="mismatch"><td></td><td colspan="{len(cols) + 3 + zk}">mismatch: '
                           f'{escape(d)}</td></tr>')
    out.append("</tbody></table>")
    out.append(f'<p class="legend">{escape(LEGEND)}; yellow = changed, red = breaks the property</p></section>')
    return "\n".join(out)


# -- kreassign status --html -----------------------------------------------------------------


def status_report(result: StatusResult) -> str:
    """The cluster, its reassignments in flight with what each waits on, the shortest way to done step by
    step, what a cancel and an override would leave, and the throttles left behind or missing."""
    s, r = result.snapshot, result.rules
    bad = bool(result.problems)
    body = [f"<h1>kreassign status: {escape(s.bootstrap)}</h1>",
            (f'<div class="verdict {"risk" if bad else "ok"}" id="verdict">'
            f'{str(len(result.problems)) + " problem(s)" if bad else "Nothing stuck, nothing left behind"}</div>'),
            (f'<p class="meta">cluster {escape(s.cluster_id or "?")} · {"KRaft" if s.mode == "kraft" else "ZooKeeper mode"}'
            f" · {escape(r.said)} · brokers up {_ids(sorted(s.live))} · fenced {_ids(sorted(set(s.brokers) - s.live))}"
            f" · {len(s.partitions)} partitions · read in {s.read_in_s:.1f} s · kreassign {escape(__version__)}</p>")]
    if result.problems:
        body.append('<h2>Problems</h2><ul class="findings">'
                    + "".join(f'<li class="risk">{escape(x)}</li>' for x in result.problems) + "</ul>")
    body.append('<h2>Reassignments in flight</h2><table class="partitions"><thead><tr><th>partition</th>'
                "<th>original → target</th><th>adding</th><th>removing</th><th>isr</th><th>leader</th><th>down</th>"
                "<th>verdict</th><th>what to do</th></tr></thead><tbody>")
    for p in result.partitions:
        sev = "risk" if p["verdict"] in ("stuck", "never", "unexplained") else "ok"
        body.append(f'<tr><td class="mono"><a href="#{escape(p["partition"])}">{escape(p["partition"])}</a></td>'
                    f'<td class="mono">{_ids(p["original"])} → {_ids(p["target"])}</td>'
                    + "".join(f'<td class="mono">{_ids(p[k])}</td>' for k in ("adding", "removing", "isr", "leader", "down"))
                    + f'<td><span class="verdict {sev}">{escape(p["verdict"])}</span></td>'
                    f"<td>{escape(p['advice'])}</td></tr>")
    body.append("</tbody></table>")
    cols = ("replicas", "adding", "removing", "isr", "leader", "elr", "down")
    for p in result.partitions:
        body.append(f'<section id="{escape(p["partition"])}"><h3>{escape(p["partition"])}</h3>'
                    f"<p>{escape(p['summary'])}</p>")
        if p["waits_on"]:
            body.append("<ul>" + "".join(f"<li>{escape(w['text'])}</li>" for w in p["waits_on"]) + "</ul>")
        if p.get("completion"):
            body.append("<table class=\"steps\"><thead><tr><th>step</th><th>event</th>"
                        + "".join(f"<th>{c}</th>" for c in cols) + "</tr></thead><tbody>")
            now = {"replicas": p["replicas"], "adding": p["adding"], "removing": p["removing"], "isr": p["isr"],
                   "leader": p["leader"], "elr": p["elr"], "down": p["down"]}
            rows = [("now", "(as the cluster shows it)", now)] + [
                (str(k), st["event"], st["state"]) for k, st in enumerate(p["completion"], 1)]
            prev = None
            for k, event, state in rows:
                cells = "".join(
                    f'<td class="mono{" changed" if prev is not None and prev[c] != state[c] else ""}">'
                    f"{escape(_ids(state[c]))}</td>" for c in cols)
                body.append(f'<tr><td class="step">{k}</td><td class="mono">{escape(event)}</td>{cells}</tr>')
                prev = state
            body.append("</tbody></table>")
        for key, label in (("cancel", "A cancel would leave"), ("override", "An override to the original list would leave")):
            if p.get(key):
                body.append(f"<p><b>{label}</b>: {escape(p[key]['text'])}</p>")
        body.append(f"<p><b>What to do</b>: {escape(p['advice'])}</p></section>")
    t = result.throttles
    if t.left_behind or t.missing:
        body.append("<h2>Replication throttles</h2><ul>")
        for e in t.left_behind:
            what = (f"broker {e['broker']}: {', '.join(e['configs'])}" if "broker" in e else
                    f"topic {e['topic']} {e['config']}="
                    + (e["replicas"] if isinstance(e["replicas"], str) else ",".join(e["replicas"])))
            body.append(f'<li class="risk">left behind: {escape(what)}</li>')
        for m in t.missing:
            body.append(f'<li class="risk">missing on {escape(m["partition"])}: {escape(", ".join(m["lacks"]))}</li>')
        body.append("</ul>")
    return page(f"kreassign status: {s.bootstrap}", body)

# -- kreassign plan --html -------------------------------------------------------------------


def plan_report(result: PlanResult, plan_file: str) -> str:
    risky = bool(result.risks)
    o = result.options
    verdict = (f'<div class="verdict {"risk" if risky else "ok"}" id="verdict">'
               f'{"RISK: " + str(len(result.risks)) + " risk(s) found" if risky else "No risk found"} '
               f"for {len(result.partitions)} partition(s)</div>")
    meta = (f'<p class="meta">profile {escape(result.profile)} · failures {o.failures} · failovers {o.failovers} · '
            f"cancel {'on' if o.cancel else 'off'} · overrides {o.overrides} · {result.shapes} distinct shape(s) · "
            f"{result.states:,} states · {result.seconds:.1f} s · kreassign {escape(__version__)}</p>")
    body = [f"<h1>kreassign plan: {escape(plan_file)}</h1>", verdict, meta]
    if result.risks or result.notes:
        body.append('<h2>Risks and notes</h2><ul class="findings">')
        for severity in ("risk", "note"):
            for parts, summary, trace in result.grouped(severity):
                link = f' (<a href="#{escape(trace)}">steps</a>)' if trace else ""
                names = ", ".join(parts[:8]) + (f" and {len(parts) - 8} more" if len(parts) > 8 else "")
                body.append(f'<li class="{severity}"><span class="sev-{severity}">{severity}</span> '
                            f'{escape(names)}: {escape(summary)}{link}</li>')
        body.append("</ul>")
    body.append('<h2>Partitions</h2><table class="partitions"><thead><tr><th>partition</th><th>current</th>'
                "<th>target</th><th>RF (peak)</th><th>gains</th><th>leader now → after</th><th>min ISR</th>"
                "<th>verdict</th></tr></thead><tbody>")
    for p in result.partitions:
        body.append(f'<tr><td class="mono">{escape(p["partition"])}</td><td class="mono">{_ids(p["current"])}</td>'
                    f'<td class="mono">{_ids(p["target"])}</td><td>{p["rf_before"]}→{p["rf_after"]} ({p["peak_rf"]})</td>'
                    f'<td class="mono">{_ids(p["gaining"])}</td><td>{_ids(p["leader"])} → {_ids(p["leader_after"])}</td>'
                    f'<td>{p["min_isr"]}</td><td><span class="verdict {p["verdict"]}">{p["verdict"]}</span></td></tr>')
    body.append("</tbody></table>")
    if result.rollback:
        body.append("<h2>Rollback JSON</h2><p>What <code>kafka-reassign-partitions.sh --execute</code> prints as the "
                    "current assignment: save it; executing it rolls the move back with the original order.</p>"
                    f'<pre id="rollback">{escape(result.rollback)}</pre>')
    body.append("<h2>Phases</h2>")
    for p in result.partitions[:50]:
        body.append(f'<h3>{escape(p["partition"])}</h3><table class="phases"><thead><tr><th>step</th><th>action</th>'
                    "<th>replicas</th><th>adding</th><th>removing</th><th>isr</th><th>leader</th><th>RF</th>"
                    "</tr></thead><tbody>")
        for k, ph in enumerate(p["phases"]):
            body.append(f'<tr><td>{k}</td><td class="mono">{escape(ph["action"] or "(now)")}</td>'
                        + "".join(f'<td class="mono">{escape(_ids(ph[c]))}</td>'
                                  for c in ("replicas", "adding", "removing", "isr", "leader"))
                        + f'<td>{ph["rf"]}</td></tr>')
        body.append("</tbody></table>")
    if len(result.partitions) > 50:
        body.append(f"<p>… and {len(result.partitions) - 50} more partitions (see --json).</p>")
    if result.traces:
        body.append("<h2>Counterexamples, step by step</h2>")
        shown = {trace for sev in ("risk", "note") for _, _, trace in result.grouped(sev)}
        for name, t in [(n, t) for n, t in result.traces.items() if n in shown][:40]:
            trace = trace_from_json(t["trace"])
            body.append(trace_section(trace, name, name.replace("__", ": "), t["brokers"], t["labels"]))
    return page(f"kreassign plan {plan_file}", body)


# -- kreassign report / check --html -----------------------------------------------------------------


def traces_report(traces: list[tuple[str, Trace]], title: str = "kreassign report",
                  verdicts: list[tuple[str, str, str]] | None = None) -> str:
    """Traces (name, trace) with an optional verdict table [(profile, property, status)]."""
    bad = [v for v in (verdicts or []) if v[2] == "violated"]
    body = [f"<h1>{escape(title)}</h1>"]
    if verdicts is not None:
        body.append(f'<div class="verdict {"risk" if bad else "ok"}" id="verdict">'
                    f'{str(len(bad)) + " unexpected violation(s)" if bad else "No unexpected violation"}</div>')
        body.append("<table class=\"verdicts\"><thead><tr><th>profile</th><th>property</th><th>status</th></tr>"
                    "</thead><tbody>")
        for profile, prop, status in verdicts:
            sev = {"violated": "risk", "known-violation": "note"}.get(status, "ok")
            body.append(f"<tr><td>{escape(profile)}</td><td>{escape(prop)}</td>"
                        f'<td><span class="verdict {sev}">{escape(status)}</span></td></tr>')
        body.append("</tbody></table>")
    else:
        body.append(f'<div class="verdict {"risk" if traces else "ok"}" id="verdict">{len(traces)} trace(s)</div>')
    for name, trace in traces:
        body.append(trace_section(trace, name, f"{trace.profile}: {trace.property} ({len(trace.steps)} steps)")
                    if trace.model == "reassignment" else
                    f'<section class="trace" id="{escape(name)}"><h3>{escape(trace.profile)}: '
                    f"{escape(trace.property)}</h3><pre>{escape(trace.summary)}</pre></section>")
    return page(title, body)


def check_report(results: list[Any]) -> str:
    """`kreassign check --html`: the properties × profiles verdicts and every counterexample file found
    (unexpected violations from --out, known ones from counterexamples/ when it is at hand)."""
    verdicts, traces = [], []
    for r in results:
        for name, v in r.properties.items():
            run = getattr(r, "name", r.profile)  # a profile run twice (other bounds) has a name of its own
            verdicts.append((run, name, v.status))
            if v.counterexample and os.path.exists(v.counterexample):
                try:
                    traces.append((f"{run}__{name}", read_trace(v.counterexample)))
                except TraceError:
                    continue
    return traces_report(traces, "kreassign check", verdicts)
