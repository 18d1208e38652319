"""`kreassign check --json` gives valid JSON wherever it is launched (issue 28).

spark-submit starts the Python driver with its stderr merged into its stdout (Spark's PythonRunner:
`redirectErrorStream(true)`), as `2>&1` does: progress and the summary line on stderr would land in the
JSON. So `--json FILE` writes the JSON to a file (stdout keeps the text report), and `--json` to stdout
writes nothing to a stderr that is stdout (`shares_stdout`). A Spark executor lost during a search is
named in the summary line and in the text report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from kreassign.checker.check import progress as progress_module
from kreassign.checker.check.progress import shares_stdout, summary_line
from kreassign.checker.cli import check as check_cli

from kreassign.cli import main

SMALL = ["--profile", "kip455", "--brokers", "3", "--rf", "2", "--reassigns", "1", "--cancels", "1", "--failures", "1"]


def run_check(capsys, *flags):
    code = main(["check", *SMALL, "--no-minimize", *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_file_holds_the_json_and_stdout_the_text_report(capsys, tmp_path):
    path = tmp_path / "result.json"
    code, out, _ = run_check(capsys, "--max-states", "50", "--json", str(path), "--out", str(tmp_path / "cx"))
    document = json.loads(path.read_text())
    assert code == document["exit_code"] == 4
    assert document["results"][0]["stopped"] == "max-states"
    assert "incomplete, stopped by max-states" in out and out.rstrip().endswith(document["summary"])
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_json_to_a_stdout_that_stderr_shares_gets_no_progress_or_summary_on_stderr(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("kreassign.checker.explore.bfs.PROGRESS_INTERVAL", 0.0)  # a progress call per chunk
    flags = ("--json", "--no-fast", "--progress-interval", "1e-9", "--out", str(tmp_path))
    code, out, err = run_check(capsys, *flags)
    assert json.loads(out)["exit_code"] == code == 0
    assert "progress kip455:" in err and json.loads(out)["summary"] in err  # stderr apart: both there, as before

    monkeypatch.setattr(check_cli, "shares_stdout", lambda stream: True)  # (as under spark-submit, or 2>&1)
    code, out, err = run_check(capsys, *flags)
    assert json.loads(out)["exit_code"] == code == 0 and err == ""


def test_shares_stdout_tells_one_pipe_from_two(monkeypatch):
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    try:
        with os.fdopen(os.dup(w1), "w") as out, os.fdopen(os.dup(w1), "w") as same, os.fdopen(w2, "w") as other:
            monkeypatch.setattr(sys, "stdout", out)
            assert shares_stdout(same) and not shares_stdout(other)
            assert not shares_stdout(SimpleNamespace())  # no file at all (a test's capture): not shared
    finally:
        for fd in (r1, w1, r2):
            os.close(fd)


def test_merged_streams_end_to_end(tmp_path):
    """A real `2>&1`: stdout is the JSON alone."""
    done = subprocess.run([sys.executable, "-m", "kreassign", "check", *SMALL, "--max-states", "50", "--json",
                           "--no-minimize", "--out", str(tmp_path)],
                          check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    document = json.loads(done.stdout)
    assert done.returncode == document["exit_code"] == 4


def test_a_lost_executor_is_in_the_summary_and_the_report():
    assert summary_line([], 0, lost_executors=1) == ("0 properties hold, 0 known findings, 0 unexpected, 0 not checked, "
                                                     "Spark lost 1 executor (their work recomputed) — exit 0")
    assert "Spark lost 2 executors" in summary_line([], 0, lost_executors=2)
    assert "Spark lost" not in summary_line([], 0)
    lost = [{"id": "1", "host": "10.0.0.7:40123", "reason": "Command exited with code 137"}]
    results = [SimpleNamespace(name="kip455", spark={"executors_lost": lost}), SimpleNamespace(name="zk", spark=None)]
    (line,) = check_cli._lost_executors(results)
    assert line.startswith("kip455: Spark lost 1 executor during the search (1 on 10.0.0.7:40123: Command exited "
                           "with code 137)")
    assert progress_module.Discard().write("progress ...") == len("progress ...")
