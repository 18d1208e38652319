"""Progress lines for CI logs, the summary line, --junit XML, run limits and the state-space estimate."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from kreassign.checker.check.junit import junit_xml, write_atomically
from kreassign.checker.check.progress import ProgressReporter, summary_line
from kreassign.checker.config import limits
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore import bfs
from kreassign.checker.models.reassign import ReassignmentModel

from kreassign.cli import main
from kreassign.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
BUGGY = f"{ROOT / 'docs' / 'examples' / 'buggy_kraft.py'}:BuggyKraft"
# at Kafka 3.9, the release docs/examples/buggy_kraft.py follows
SMALL = ["--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--cancels", "1", "--failures", "0",
         "--kafka-version", "3.9.2"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# -- progress -------------------------------------------------------------------------------------------


def test_ci_progress_prints_a_full_line_every_interval() -> None:
    clock, out = Clock(), io.StringIO()
    p = ProgressReporter("kraft", out, tty=False, interval=10, clock=clock)
    for t in range(1, 35):  # called every second, as the engine does
        clock.now = float(t)
        p(1000 * t, t // 5, 1000.0, generated=3000 * t, queue=50 * t)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # at 10, 20 and 30 s
    assert lines[0] == ("progress kraft: 30,000 generated, 10,000 distinct, depth 2, 1,000 states/s, "
                        "queue 500, elapsed 0:00:10")
    assert "\r" not in out.getvalue()


def test_terminal_progress_is_one_live_line_cleared_at_the_end() -> None:
    clock, out = Clock(), io.StringIO()
    p = ProgressReporter("zk", out, tty=True, interval=10, clock=clock)
    clock.now = 1.0
    p(10, 1, 10.0)
    assert out.getvalue() == ""  # short runs stay quiet
    clock.now = 3.0
    p(30, 2, 10.0)
    assert out.getvalue().startswith("\rprogress zk: 30 distinct, depth 2") and "\n" not in out.getvalue()
    p.finish()
    assert out.getvalue().endswith("\r")


def test_check_prints_progress_lines_when_stderr_is_not_a_terminal(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(bfs, "PROGRESS_INTERVAL", 0.0)  # the engine calls back after every chunk
    monkeypatch.setattr(bfs._ObjectStore, "chunk", 256)
    # --no-fast: the embedded object store (the packed engine reports once a second)
    code = main(["check", "--profile", "kraft", "--progress-interval", "0.000001", "--no-liveness", "--no-fast",
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 0
    lines = [ln for ln in err.splitlines() if ln.startswith("progress kraft: ")]
    assert len(lines) > 1
    assert all(w in lines[0] for w in ("generated", "distinct", "depth", "states/s", "queue", "elapsed"))


def test_the_embedded_engine_reports_generated_and_queue(monkeypatch) -> None:
    monkeypatch.setattr(bfs, "PROGRESS_INTERVAL", 0.0)
    monkeypatch.setattr(bfs._ObjectStore, "chunk", 64)
    out = io.StringIO()
    reporter = ProgressReporter("kraft", out, tty=False, interval=0.0)
    result = bfs.explore(ReassignmentModel("kraft", Bounds(brokers=3, rf=2)), progress=reporter)
    lines = out.getvalue().splitlines()
    assert lines and all("generated" in ln and "queue" in ln for ln in lines)
    assert reporter.last[0] <= result.states and reporter.last[2] <= result.transitions


# -- summary line -------------------------------------------------------------------------------------------


def test_every_run_ends_with_the_summary_line(tmp_path, capsys) -> None:
    code = main(["check", *SMALL, "--impl", BUGGY, "--out", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    data = json.loads(out)
    props = [v["status"] for r in data["results"] for v in r["properties"].values()]
    hold, known = props.count("holds"), props.count("known-violation")
    unexpected = data["unexpected_violations"]
    assert code == 1 and unexpected >= 1
    assert err.strip().splitlines()[-1] == (f"{hold} properties hold, {known} known findings, {unexpected} unexpected, "
                                            f"{len(props) - hold - known - unexpected} not checked, kraft at Kafka "
                                            "3.9.2, metadata.version 3.9-IV0, ELR off — exit 1")
    assert data["summary"] == err.strip().splitlines()[-1]


def test_summary_line_counts_from_the_results() -> None:
    class V:
        def __init__(self, status: str) -> None:
            self.status = status

    class R:
        properties = {"a": V("holds"), "b": V("holds"), "c": V("known-violation"), "d": V("violated"),
                      "e": V("not-checked")}
        unexpected = ["d"]

    assert summary_line([R()], 1) == "2 properties hold, 1 known findings, 1 unexpected, 1 not checked — exit 1"
    assert summary_line([R()], 0, release="Kafka 4.1.2, metadata.version 4.1-IV1, ELR on") == (
        "2 properties hold, 1 known findings, 1 unexpected, 1 not checked, kraft at Kafka 4.1.2, "
        "metadata.version 4.1-IV1, ELR on — exit 0")


# -- JUnit ------------------------------------------------------------------------------------------------------


def test_junit_has_a_case_per_profile_and_property(tmp_path, capsys) -> None:
    report = tmp_path / "junit.xml"
    code = main(["check", *SMALL, "--impl", BUGGY, "--out", str(tmp_path / "out"), "--junit", str(report),
                 "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    root = ET.parse(report).getroot()
    cases = root.findall("./testsuite/testcase")
    result = data["results"][0]
    assert len(cases) == len(result["properties"]) == int(root.get("tests"))
    by_name = {c.get("name"): c for c in cases}
    for name, verdict in result["properties"].items():
        case = by_name[name]
        if verdict["status"] == "holds":
            assert list(case) == []
        elif verdict["status"] == "known-violation":
            assert case.find("skipped").get("message").startswith("known finding")
        elif verdict["status"] == "violated":
            failure = case.find("failure")
            assert verdict["counterexample"] in failure.get("message")
            assert verdict["counterexample"] in failure.text and "step" in failure.text  # the rendered trace
    assert int(root.get("failures")) == data["unexpected_violations"]


def test_junit_marks_an_incomplete_run(tmp_path) -> None:
    report = tmp_path / "j.xml"
    assert main(["check", *SMALL, "--max-states", "5", "--out", str(tmp_path), "--junit", str(report)]) == 4
    root = ET.parse(report).getroot()
    skipped = [c.find("skipped") for c in root.iter("testcase") if c.find("skipped") is not None]
    assert any("incomplete: max-states" in s.get("message") for s in skipped)
    assert root.find("./testsuite/properties/property[@name='complete']").get("value") == "false"


def test_junit_write_is_atomic(tmp_path, monkeypatch) -> None:
    target = tmp_path / "j.xml"
    target.write_text("old report\n")
    monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(UsageError, match="No space left"):
        write_atomically(str(target), junit_xml([]))
    assert target.read_text() == "old report\n" and [p.name for p in tmp_path.iterdir()] == ["j.xml"]


# -- limits and the engine hooks ------------------------------------------------------------------------------


def test_watch_stops_the_search_with_its_reason() -> None:
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2))
    full = bfs.explore(model)
    calls = []

    def watch(states: int):
        calls.append(states)
        return "max-memory: test" if states > 0 else None

    stopped = bfs.explore(model, watch=watch)
    assert full.complete and full.stopped is None
    assert not stopped.complete and stopped.stopped == "max-memory: test" and stopped.states < full.states
    capped = bfs.explore(model, max_states=10)
    assert capped.stopped == "max-states" and capped.states == 10 and not capped.complete


def test_interrupt_carries_the_partial_result(monkeypatch) -> None:
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2))
    seen = []

    def watch(states: int):
        seen.append(states)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return None

    monkeypatch.setattr(bfs._ObjectStore, "chunk", 16)
    with pytest.raises(bfs.Interrupted) as e:
        bfs.explore(model, watch=watch)
    partial = e.value.partial
    assert isinstance(e.value, KeyboardInterrupt)
    assert partial is not None and not partial.complete and partial.stopped == "interrupted"
    assert partial.states == seen[-1] and partial.depth >= 1


@pytest.mark.parametrize("profile,bounds", [
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)),
    ("kip455", Bounds(brokers=3, rf=2, reassigns=2, cancels=1)),
    ("zk", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failovers=1)),
    ("kip236", Bounds(brokers=3, rf=1, reassigns=2, cancels=1, failures=1)),
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=0, replication=True, log_length=1)),
    ("kraft", Bounds(brokers=3, rf=1, partitions=2, reassigns=1, cancels=1)),
], ids=["kraft", "kip455", "zk", "kip236", "kraft-replication", "kraft-2-partitions"])
def test_the_estimate_is_an_upper_bound(profile, bounds) -> None:
    states = bfs.explore(ReassignmentModel(profile, bounds)).states
    assert states <= limits.estimate(bounds)


def test_absurd_bounds_are_refused_with_the_bound_to_lower() -> None:
    with pytest.raises(UsageError, match=r"--brokers .*--force"):
        limits.refuse_absurd("kraft", Bounds(brokers=10000), force=False)
    with pytest.raises(UsageError, match="lower --partitions"):
        limits.refuse_absurd("kraft", Bounds(brokers=6, rf=3, partitions=3), force=False)
    assert limits.refuse_absurd("kraft", Bounds(brokers=10000), force=True) > limits.REFUSE_ABOVE
    # the default suite and the speed target (b6 r3, 2 partitions, 1 failure) are not refused
    from kreassign.checker.check.suite import DEFAULT_SUITE

    for name, b in DEFAULT_SUITE.items():
        limits.refuse_absurd(name, b, force=False)
    limits.refuse_absurd("kraft", Bounds(brokers=6, rf=3, partitions=2, failures=1), force=False)
    # judging the largest bounds allowed costs nothing (no million-digit integers)
    huge = Bounds(brokers=1_000_000, rf=500_000, partitions=1_000_000, failures=1_000_000)
    assert limits.log10_estimate(huge) > 1e9


@pytest.mark.parametrize("text,size", [("512M", 512 << 20), ("4G", 4 << 30), ("1.5GB", int(1.5 * (1 << 30))),
                                       ("1000", 1000), ("2 gib", 2 << 30)])
def test_parse_size(text, size) -> None:
    assert limits.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "12Q", "-1G", "0", "G", "1e9"])
def test_parse_size_refuses_garbage(text) -> None:
    with pytest.raises(UsageError, match="--max-memory"):
        limits.parse_size(text)
