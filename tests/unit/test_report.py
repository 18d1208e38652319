"""The HTML report: self-contained, the expected steps and highlights, in a real headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.plan.check import PlanOptions, check_shape
from kreassign.checker.plan.shapes import PartitionMove, shape_of
from kreassign.checker.report.html import traces_report
from kreassign.checker.traces.format import read_trace, trace_from_json, trace_from_path, write_trace
from kreassign.checker.traces.render import VIOLATING_COLUMNS, render_table, step_views
from kreassign.spec import actions as A

from kreassign.cli import main

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def zk_file(tmp_path_factory):
    """zk: a cancel (reassignTo(origin)) leaves the partition leaderless; from the plan checker, as a file."""
    shape, _ = shape_of(PartitionMove("t", 0, (1, 2), (2, 3), (1, 2), 1))
    found = {f.property: f for f in check_shape(shape, PlanOptions("zk")).findings}
    path = tmp_path_factory.mktemp("zk") / "zk__admin_action_keeps_a_leader.json"
    write_trace(trace_from_json(found["admin_action_keeps_a_leader"].trace), str(path))
    return path


class Cells(HTMLParser):
    """Every <td> of the steps tables: (step, column, classes, text), and every external reference."""

    def __init__(self):
        super().__init__()
        self.cells, self.external, self.svgs = [], [], 0
        self._step, self._td = None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key) and re.match(r"^(https?:)?//", a[key]):
                self.external.append(a[key])
        if tag == "svg":
            self.svgs += 1
        if tag == "tr" and "data-step" in a:
            self._step = int(a["data-step"])
        if tag == "td" and self._step is not None and "data-col" in a:
            self._td = [self._step, a["data-col"], set(a.get("class", "").split()), ""]

    def handle_data(self, data):
        if self._td is not None:
            self._td[3] += data

    def handle_endtag(self, tag):
        if tag == "td" and self._td is not None:
            self.cells.append(tuple(self._td))
            self._td = None


def parse(html: str) -> Cells:
    c = Cells()
    c.feed(html)
    return c


def error_trace():
    """Reassign, then a second Reassign that the kraft reference answers... and a Cancel with nothing in flight."""
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1))
    (s0,) = model.init_states()
    s1, l1 = model.step(s0, A.Cancel("t", 0))
    return trace_from_json(trace_from_path(model, "reassignment", "cancel_rejected_cleanly", "transition",
                                           [(s0, None), (s1, l1)]).to_json())


def test_zk_report_has_every_step_the_violating_cell_and_the_controller(zk_file):
    trace = read_trace(zk_file)
    html = traces_report([("zk", trace)])
    c = parse(html)
    assert c.external == [] and "<script" not in html  # opens with no network, nothing to run
    assert {s for s, *_ in c.cells} == set(range(len(trace.steps) + 1))
    last = [cell for cell in c.cells if cell[0] == len(trace.steps)]
    assert [(col, text) for _, col, cls, text in last if "violating" in cls] == [("leader", "none")]
    assert any("changed" in cls for *_, cls, _ in c.cells)
    assert "pending U" in html and "original replica set <b>[1,2]</b>" in html and c.svgs == 1


def test_responses_show_error_names():
    html = traces_report([("e", error_trace())])
    assert "NO_REASSIGNMENT_IN_PROGRESS (85)" in html
    assert "NO_REASSIGNMENT_IN_PROGRESS (85)" in render_table(error_trace())


@pytest.mark.parametrize("prop", sorted(VIOLATING_COLUMNS))
def test_every_property_marks_a_cell(zk_file, prop):
    trace = read_trace(zk_file)
    trace.property = prop
    views = step_views(trace)
    assert views[-1].rows[0].violating  # a property missing from VIOLATING_COLUMNS would mark nothing


def test_a_page_with_an_external_reference_is_caught():
    assert parse('<img src="https://example.com/x.png"><link href="//cdn/x.css">').external == [
        "https://example.com/x.png", "//cdn/x.css"]


def test_show_marks_the_violating_cell_and_has_a_legend(zk_file, capsys):
    assert main(["show", str(zk_file)]) == 0
    out = capsys.readouterr().out
    assert "none*!" in out and "legend:" in out and "pending U" in out


def test_show_renders_a_mismatch_diff(tmp_path):
    trace = error_trace().to_json()
    trace["kind"] = "mismatch"
    trace["steps"][0]["mismatch"] = {"implementation": "x", "diff": ["isr: reference [1,2], implementation [1]"]}
    assert "step 1 mismatch: isr: reference [1,2], implementation [1]" in render_table(trace_from_json(trace))


def test_report_cli_and_bad_input(zk_file, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(zk_file), "-o", str(out)]) == 0
    assert "admin_action_keeps_a_leader" in out.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    out.write_text("precious")
    assert main(["report", str(bad), "-o", str(out)]) == 2
    assert out.read_text() == "precious"


def test_check_html(tmp_path):
    html = tmp_path / "c.html"
    assert main(["check", "--profile", "kraft", "--brokers", "3", "--rf", "2", "--reassigns", "1", "--cancels", "1",
                 "--out", str(tmp_path / "ce"), "--html", str(html)]) in (0, 1)
    assert 'id="verdict"' in html.read_text() and "cancel_restores_original_order" in html.read_text()


# -- in a real browser ---------------------------------------------------------------------------------


def chromium(*args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
            check=False, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (apt-get install chromium)")
def test_report_loads_in_headless_chromium(zk_file, tmp_path):
    trace = read_trace(zk_file)
    page = tmp_path / "report.html"
    page.write_text(traces_report([("zk", trace)]))
    done = chromium("--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = parse(done.stdout)  # the DOM after the browser parsed and laid it out
    assert {s for s, *_ in dom.cells} == set(range(len(trace.steps) + 1))
    assert [(s, col) for s, col, cls, _ in dom.cells if "violating" in cls] == [(len(trace.steps), "leader")]
    assert dom.svgs == 1 and "ERR_" not in done.stderr
    shot = tmp_path / "report.png"
    done = chromium("--window-size=1300,900", f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium (apt-get install chromium)")
def test_plan_report_loads_in_headless_chromium(tmp_path, capsys):
    page = tmp_path / "plan.html"
    ex = ROOT / "examples"
    assert main(["plan", str(ex / "plan.json"), "--current", str(ex / "current.json"), "--describe",
                 str(ex / "describe.txt"), "--profile", "zk", "--jobs", "1", "--html", str(page)]) == 1
    capsys.readouterr()
    done = chromium("--dump-dom", page.as_uri())
    assert done.returncode == 0
    assert 'id="verdict"' in done.stdout and "RISK" in done.stdout and 'id="rollback"' in done.stdout
    assert any("violating" in cls for _, _, cls, _ in parse(done.stdout).cells)
    assert shutil.which(CHROMIUM)
