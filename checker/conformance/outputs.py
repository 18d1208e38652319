"""A campaign's result for readers and CI systems: JUnit XML (one test case per scenario) and one self-contained
HTML page (the summary, then per divergent scenario its steps with what the model expected and what the cluster
showed, and the minimized scenario)."""

from __future__ import annotations

import json
from html import escape
from typing import Any
from xml.etree import ElementTree as ET

from kreassign.checker.report.html import page

from .campaign import CampaignResult, ScenarioOutcome


def junit_xml(result: CampaignResult) -> str:
    o = result.options
    name = f"kreassign.conformance.{o.mode}.{o.kafka_version}"
    root = ET.Element("testsuites", name="kreassign conformance")
    suite = ET.SubElement(root, "testsuite", name=name, time=f"{result.seconds:.3f}")
    props = ET.SubElement(suite, "properties")
    for key, value in (("kafka_version", o.kafka_version), ("mode", o.mode), ("seed", o.seed),
                       ("faults", ",".join(o.faults)), ("stopped", result.stopped or "")):
        ET.SubElement(props, "property", name=key, value=str(value))
    counts = {"failures": 0, "errors": 0}
    for out in result.outcomes:
        case = ET.SubElement(suite, "testcase", classname=name, name=out.scenario.topic, time=f"{out.seconds:.3f}")
        if out.verdict == "diverges":
            counts["failures"] += 1
            d = out.divergences[0]
            failure = ET.SubElement(case, "failure", type=d["kind"],
                                    message=f"{len(out.divergences)} divergence(s); first: {d.get('what') or d}")
            failure.text = json.dumps(out.to_json(), indent=1)
        elif out.verdict == "known":
            issues = ", ".join(sorted({k["kafka_issue"] for k in out.known}))
            ET.SubElement(case, "skipped", message=f"a known Kafka bug ({issues}): {out.known[0].get('what', '')}")
        elif out.verdict == "error":
            counts["errors"] += 1
            ET.SubElement(case, "error", type="cluster", message=out.error or "")
    suite.set("tests", str(len(result.outcomes)))
    suite.set("failures", str(counts["failures"]))
    suite.set("errors", str(counts["errors"]))
    suite.set("skipped", "0")
    root.set("tests", str(len(result.outcomes)))
    root.set("failures", str(counts["failures"]))
    root.set("errors", str(counts["errors"]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _cell(v: Any) -> str:
    return escape(json.dumps(v) if not isinstance(v, str) else v)


def _steps_table(out: ScenarioOutcome) -> list[str]:
    wrong = {d.get("step") for d in out.divergences}
    rows = [("<table><tr><th>#</th><th>step</th><th>model</th><th>expected</th><th>observed</th>"
             "<th>waits</th></tr>")]
    for k, step in enumerate((out.result or {}).get("steps", [])):
        cls = ' class="violating-row"' if k in wrong else ""
        exp = (step.get("expected") or {}).get("partitions")
        obs = (step.get("observed") or {}).get("partitions")
        waits = "; ".join(f"{w['until']}{'' if w.get('met') else ' (not met)'}" for w in step.get("waits", []))
        rows.append(f"<tr{cls}><td class=\"step\">{k}</td><td class=\"mono\">{escape(step['step'])}</td>"
                    f"<td class=\"mono\">{escape(', '.join(step.get('model', [])))}</td>"
                    f"<td class=\"zk\">{_cell(exp)}</td><td class=\"zk\">{_cell(obs)}</td>"
                    f"<td>{escape(waits)}</td></tr>")
    rows.append("</table>")
    return rows


def html_report(result: CampaignResult) -> str:
    o, t = result.options, result.totals()
    verdict = "ok" if result.exit_code == 0 else "risk"
    title = f"kreassign conformance: Kafka {o.kafka_version} ({o.mode})"
    body = [f"<h1>{escape(title)}</h1>",
            (f"<div class=\"verdict {verdict}\">{t['agree']} of {t['scenarios']} scenarios agree with the reference; "
             f"{t['diverge']} diverge; {t['known']} show a known Kafka bug; {t['errors']} could not be run</div>"),
            (f"<p class=\"meta\">seed {o.seed}; faults {escape(', '.join(o.faults))}; {o.brokers} brokers; "
             f"{t['steps']} steps; faults injected {escape(json.dumps(t['faults']))}; {t['seconds']} s "
             f"({t['scenarios_per_minute']} scenarios/min; {t['cluster_starts']} cluster start(s), "
             f"{t['cluster_start_seconds']} s)" + (f"; stopped: {escape(result.stopped)}" if result.stopped else "")
             + "</p>"),
            ("<h2>Scenarios</h2><table><tr><th>#</th><th>topic</th><th>seed</th><th>steps</th><th>faults</th>"
             "<th>verdict</th><th>seconds</th></tr>")]
    for out in result.outcomes:
        cls = ' class="error"' if out.verdict in ("diverges", "error") else ""
        body.append(f"<tr><td>{out.index}</td><td class=\"mono\">{escape(out.scenario.topic)}</td>"
                    f"<td>{out.scenario.seed}</td><td>{len(out.scenario.steps)}</td>"
                    f"<td>{escape(json.dumps(dict(out.faults)))}</td><td{cls}>{out.verdict}</td>"
                    f"<td>{out.seconds:.1f}</td></tr>")
    body.append("</table>")
    for out in result.outcomes:
        if out.verdict == "agrees":
            continue
        body.append(f"<h2>{escape(out.scenario.topic)}: {out.verdict}</h2>")
        if out.error:
            body.append(f"<p class=\"error\">{escape(out.error)}</p>")
        for k in out.known:
            body.append(f"<p><b>known Kafka bug {escape(k['kafka_issue'])}</b> ({escape(k['known_bug'])}): "
                        f"{escape(str(k.get('what')))}</p>")
        for d in out.divergences:
            body.append(f"<p><b>{escape(d['kind'])}</b> at step {escape(str(d.get('step')))}: "
                        f"{_cell(d.get('what') or {k: v for k, v in d.items() if k != 'kind'})}</p>")
        body += _steps_table(out)
        if out.minimized is not None:
            body.append(f"<h3>Minimized: {len(out.minimized.scenario.steps)} steps (from "
                        f"{len(out.scenario.steps)}, {out.minimized.runs} runs)</h3>")
            body.append(f"<pre>{escape(json.dumps(out.minimized.scenario.to_json(), indent=1))}</pre>")
        body.append(f"<h3>Scenario (replay with <code>kreassign conformance --replay FILE</code>)</h3>"
                    f"<pre>{escape(json.dumps(out.scenario.to_json(), indent=1))}</pre>")
    return page(title, body)


__all__ = ["html_report", "junit_xml"]
