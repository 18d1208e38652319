"""`kreassign prove` classifies every verdict against spec/findings.py as `check` classifies a violation.

A refutation is a declared finding only when that finding's signature matches its
counterexample; one that no declared finding matches is unexpected (exit 1, named), and so
is a proof of a property with a finding declared within the proved sizes (a finding
missing). The run ends with one summary line in `check`'s form. Small clusters (3..4
brokers) and two properties keep every run to seconds.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from kreassign.checker.z3.results import FINDING_MISSING, KNOWN, VIOLATED
from kreassign.spec import findings

from kreassign.cli import main

#: kip455: isr_in_replicas is refuted (its finding removed_replicas_in_isr), leader_in_isr proved
ARGS = ["prove", "--profile", "kip455", "--max-brokers", "4", "--property", "isr_in_replicas",
        "--property", "leader_in_isr", "--quiet"]
FINDING = "removed_replicas_in_isr"


def _declared(monkeypatch, change) -> None:
    """Replace spec/findings.py's declarations by `change(FINDINGS)` for this test."""
    monkeypatch.setattr(findings, "FINDINGS", tuple(change(findings.FINDINGS)))


def test_every_refutation_a_declared_finding_exits_0(tmp_path, capsys):
    assert main([*ARGS, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("isr_in_replicas"))
    assert f"known: {FINDING}" in row and "UNEXPECTED" not in out
    assert out.strip().splitlines()[-1] == (
        "1 properties proved, 1 refuted as declared findings, 0 unexpected, 0 unknown — exit 0")


def test_json_carries_each_classification_and_the_summary(tmp_path, capsys):
    assert main([*ARGS, "--json", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    rows = {r["property"]: r for r in data["results"]}
    assert rows["isr_in_replicas"]["status"] == KNOWN and rows["isr_in_replicas"]["findings"] == [FINDING]
    assert rows["isr_in_replicas"]["known_violation"] == f"counterexamples/kip455__isr_in_replicas__{FINDING}.json"
    assert rows["leader_in_isr"]["status"] == "holds" and rows["leader_in_isr"]["missing_findings"] == []
    assert data["exit_code"] == 0 and data["unexpected"] == []
    assert data["summary"] == captured.err.strip().splitlines()[-1] and data["summary"].endswith("— exit 0")


def test_a_refutation_of_a_promised_property_is_unexpected(tmp_path, capsys, monkeypatch):
    """The finding planted out of the declarations: kip455 now promises isr_in_replicas, and its refutation
    fails the run, named."""
    _declared(monkeypatch, lambda fs: (f for f in fs if not (f.name == FINDING and f.property == "isr_in_replicas")))
    assert main([*ARGS, "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("isr_in_replicas"))
    assert "UNEXPECTED" in row
    assert (f"UNEXPECTED kip455 isr_in_replicas: refuted ({tmp_path}/kip455__isr_in_replicas.z3.json); "
            "spec/findings.py declares no finding: the profile promises it") in out
    assert out.strip().splitlines()[-1] == (
        "1 properties proved, 0 refuted as declared findings, 1 unexpected, 0 unknown — exit 1")


def test_a_refutation_no_signature_matches_is_unexpected(tmp_path, capsys, monkeypatch):
    """The property keeps its finding, but the finding's signature no longer recognises the counterexample:
    a new way of breaking it, unexpected (as `check` says of a violation no signature matches)."""
    _declared(monkeypatch, lambda fs: (replace(f, signature=lambda *_: False) if f.name == FINDING else f for f in fs))
    assert main([*ARGS, "--json", "--out", str(tmp_path)]) == 1
    data = json.loads(capsys.readouterr().out)
    row = next(r for r in data["results"] if r["property"] == "isr_in_replicas")
    assert row["verdict"] == "refuted" and row["status"] == VIOLATED and row["findings"] == []
    assert data["unexpected"] == ["kip455:isr_in_replicas"] and data["exit_code"] == 1
    assert ", 1 unexpected," in data["summary"]


def test_a_proof_of_a_property_with_a_declared_finding_is_a_finding_missing(tmp_path, capsys, monkeypatch):
    planted = findings.Finding("planted", "leader_in_isr", ("kip455",), lambda *_: True, "planted by the test",
                               {"brokers": 3, "rf": 2, "reassigns": 1})
    _declared(monkeypatch, lambda fs: (*fs, planted))
    assert main([*ARGS, "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("leader_in_isr"))
    assert "FINDING MISSING (planted)" in row
    assert "FINDING MISSING kip455 leader_in_isr: proved for 3..4 brokers, but spec/findings.py declares planted" in out
    assert out.strip().splitlines()[-1].endswith("1 unexpected, 0 unknown — exit 1")


def test_a_finding_beyond_the_proved_sizes_is_not_missing(tmp_path, capsys, monkeypatch):
    """A finding declared at 5 brokers says nothing about a proof for 3..4 (as `check`'s expected_at)."""
    planted = findings.Finding("planted", "leader_in_isr", ("kip455",), lambda *_: True, "planted by the test",
                               {"brokers": 5, "rf": 2, "reassigns": 1})
    _declared(monkeypatch, lambda fs: (*fs, planted))
    assert main([*ARGS, "--json", "--out", str(tmp_path)]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["results"] if r["property"] == "leader_in_isr")
    assert row["status"] != FINDING_MISSING and row["missing_findings"] == []


@pytest.mark.parametrize("profile", ["kip599", "kip599-draft"])
def test_the_quota_refutations_are_their_declared_findings(profile, tmp_path, capsys):
    """Every quota refutation, the draft's starvation lasso included, is matched by its finding's signature."""
    assert main(["prove", "--profile", profile, "--json", "--out", str(tmp_path)]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    refuted = {r["property"]: r["findings"] for r in rows if r["verdict"] == "refuted"}
    declared = {f.property: f.name for f in findings.findings_for(profile)}
    assert refuted and all(names and set(names) <= {f.name for f in findings.findings_for(profile, p)}
                           for p, names in refuted.items())
    assert set(refuted) <= set(declared)
