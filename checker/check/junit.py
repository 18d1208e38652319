"""`kreassign check --junit FILE`: the verdicts as JUnit XML, so that CI systems show them natively.

One <testsuite> per run, one <testcase> per run x property. A run is named as in the text and
--json (checker/check/suite.py `run_names`: the profile, or e.g. `kraft-2p-rf3` for the default
suite's second kraft run), so suite names and test case classnames are unique within a report:

- holds: a passing test case;
- a known finding: <skipped> with the finding's reason and its curated trace;
- an unexpected violation: <failure> whose message names the counterexample file and whose
  text is the rendered trace (the table `kreassign show` prints);
- not checked (graph properties with --no-liveness, an incomplete run): <skipped> saying why.

The file is written atomically (temp file + rename): an interrupted run never leaves half
a report, and an existing file is replaced only by a complete one.
"""

from __future__ import annotations

import os
from typing import Any
from xml.etree import ElementTree as ET

from kreassign.checker.check.run import HOLDS, KNOWN
from kreassign.checker.check.suite import result_names
from kreassign.checker.traces.format import TraceError, read_trace
from kreassign.checker.traces.render import render_table

from kreassign.errors import UsageError
from kreassign.outputs import check_output_file, write_text_atomically


def _rendered(path: str | None) -> str:
    """The trace as `kreassign show` renders it; a trace that cannot be read says so instead."""
    if not path:
        return "(no counterexample file: run without --out to keep one)"
    try:
        return render_table(read_trace(path))
    except (TraceError, OSError, ValueError, KeyError, TypeError) as e:
        return f"(could not render {path}: {e})"


def _case(suite: ET.Element, result: Any, run: str, name: str, verdict: Any, unexpected: set[str]) -> str:
    """Add the test case; return its outcome: passed / failed / skipped."""
    case = ET.SubElement(suite, "testcase", classname=f"kreassign.check.{run}", name=name, time="0")
    steps = f"{verdict.length} steps" if verdict.length is not None else "trace"
    if name in unexpected:
        where = verdict.counterexample or "no trace file"
        failure = ET.SubElement(case, "failure", type="unexpected-violation",
                                message=f"{run} violates {name} ({steps}): {where}")
        failure.text = f"counterexample: {where}\n\n{_rendered(verdict.counterexample)}\n"
        return "failed"
    if verdict.status == HOLDS:
        return "passed"
    if verdict.status == KNOWN:
        reason = f"known finding ({steps}): {verdict.counterexample}" if verdict.counterexample else "known finding"
    else:
        why = "not checked"
        if not result.complete:
            why += f" (the run is incomplete: {getattr(result, 'stopped', None) or 'stopped early'})"
        reason = why
    ET.SubElement(case, "skipped", message=reason)
    return "skipped"


def junit_xml(results: list[Any]) -> str:
    """The JUnit XML document for a list of CheckResults."""
    root = ET.Element("testsuites", name="kreassign check")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for r, run in zip(results, result_names(results)):
        suite = ET.SubElement(root, "testsuite", name=f"kreassign.check.{run}", time=f"{r.seconds:.3f}")
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="profile", value=str(r.profile))
        ET.SubElement(props, "property", name="engine", value=str(r.engine))
        ET.SubElement(props, "property", name="states", value=str(r.states))
        ET.SubElement(props, "property", name="depth", value=str(r.depth))
        ET.SubElement(props, "property", name="complete", value="true" if r.complete else "false")
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        unexpected = set(r.unexpected)
        for name, verdict in r.properties.items():
            counts[_case(suite, r, run, name, verdict, unexpected)] += 1
        suite.set("tests", str(len(r.properties)))
        suite.set("failures", str(counts["failed"]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        totals["tests"] += len(r.properties)
        totals["failures"] += counts["failed"]
        totals["skipped"] += counts["skipped"]
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_atomically(path: str, text: str) -> None:
    """All or nothing (kreassign/outputs.py); an unusable path is a UsageError (2)."""
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory, cannot write the JUnit report there")
    try:
        write_text_atomically(path, text)
    except OSError as e:
        raise UsageError(f"{path}: cannot write the JUnit report: {e.strerror or e}") from None


def check_writable(path: str) -> None:
    """Fail before a long run, not after it, when the report could not be written (UsageError, 2)."""
    check_output_file(path, "--junit")


def write_junit(path: str, results: list[Any]) -> None:
    write_atomically(path, junit_xml(results))


__all__ = ["check_writable", "junit_xml", "write_atomically", "write_junit"]
