"""`kreassign prove`: the table, --json, counterexample files, exit codes."""

from __future__ import annotations

import json
import os

from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.format import read_trace

from kreassign.cli import main


def test_json_results_for_a_quota_profile(tmp_path, capsys):
    code = main(["prove", "--profile", "kip599", "--json", "--out", str(tmp_path)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    rows = {r["property"]: r for r in data["results"]}
    assert set(rows["tokens_within_burst"]) >= {"property", "profile", "brokers", "verdict", "seconds",
                                                "counterexample"}
    assert rows["tokens_within_burst"]["verdict"] == "proved" and rows["tokens_within_burst"]["brokers"] is None
    refuted = rows["retry_after_throttle_admitted"]
    assert refuted["verdict"] == "refuted" and os.path.exists(refuted["counterexample"])
    assert replay(read_trace(refuted["counterexample"])).reproduces
    assert data["unexpected"] == []


def test_table_for_a_reassignment_profile(tmp_path, capsys):
    code = main(["prove", "--profile", "kip455", "--max-brokers", "5", "--property", "leader_in_isr",
                 "--property", "isr_in_replicas", "--out", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith(("leader_in_isr", "isr_in"))}
    assert "3..5" in lines["leader_in_isr"] and "proved" in lines["leader_in_isr"]
    assert "refuted (" in lines["isr_in_replicas"] and "UNEXPECTED" not in out
    assert os.path.exists(tmp_path / "kip455__isr_in_replicas.z3.json")


def test_an_unexpected_refutation_exits_1(tmp_path, capsys):
    """Targets of any size: kraft completes onto fewer replicas than requested (not a known violation)."""
    code = main(["prove", "--profile", "kraft", "--targets", "any", "--max-brokers", "4",
                 "--property", "completion_reaches_target", "--json", "--out", str(tmp_path)])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    assert data["unexpected"] == ["kraft:completion_reaches_target"]


def test_usage_errors_exit_2(capsys):
    assert main(["prove", "--profile", "nope"]) == 2
    assert "unknown profile 'nope'" in capsys.readouterr().err
    assert main(["prove", "--property", "nope"]) == 2
    assert main(["prove", "--max-brokers", "2"]) == 2
    assert "--max-brokers" in capsys.readouterr().err
