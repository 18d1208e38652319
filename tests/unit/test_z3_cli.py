"""`kreassign prove`: the table, --json, counterexample files, exit codes."""

from __future__ import annotations

import json
import os

from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.z3.profiles import ENCODINGS, kraft_encoding
from kreassign.spec import findings as F
from kreassign.spec.kafka_releases import NEWEST

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


def test_the_kraft_rows_name_the_release_they_encode(tmp_path, capsys):
    """kraft is proved at one Kafka release (the newest), ELR off: the table and --json say which."""
    code = main(["prove", "--profile", "kraft", "--max-brokers", "4", "--property", "leader_in_isr",
                 "--out", str(tmp_path), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    invariant = next(line for line in out.splitlines() if line.startswith("inductive_invariant"))
    assert f"Kafka {NEWEST} rules, ELR not encoded" in invariant
    code = main(["prove", "--profile", "kraft", "--profile", "kip455", "--max-brokers", "4", "--property",
                 "leader_in_isr", "--json", "--out", str(tmp_path)])
    rows = json.loads(capsys.readouterr().out)["results"]
    assert {(r["profile"], r["kafka_version"], r["encodes"]) for r in rows} == {
        ("kraft", NEWEST, f"Kafka {NEWEST} rules, ELR not encoded"), ("kip455", None, "")}


def test_refutations_are_classified_by_the_release_encoded(tmp_path, capsys, monkeypatch):
    """Targets of any size: kraft completes onto fewer replicas than requested (an override that grows the
    target plans no additions and no removals, and KRaft keeps the old lists): the declared finding
    growing_override_drops_requested, at every release. Classified by signature, as `check` does, not by the
    property's name: without that finding, 4.3+'s completion_ignores_non_adding_target (a retained target
    replica out of the ISR) does not match this counterexample, and the refutation is unexpected (exit 1)."""
    args = ["prove", "--profile", "kraft", "--targets", "any", "--max-brokers", "4",
            "--property", "completion_reaches_target", "--json", "--out", str(tmp_path)]
    assert main(args) == 0  # 4.3+: this witness or a retained replica out of the ISR, both declared
    data = json.loads(capsys.readouterr().out)
    (row,) = [r for r in data["results"] if r["property"] == "completion_reaches_target"]
    assert row["verdict"] == "refuted" and row["findings"]
    assert set(row["findings"]) <= {"growing_override_drops_requested", "completion_ignores_non_adding_target"}
    assert read_trace(row["counterexample"]).bounds["kafka_version"] == NEWEST

    monkeypatch.setitem(ENCODINGS, "kraft", kraft_encoding("3.9.2"))
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = [r for r in data["results"] if r["property"] == "completion_reaches_target"]
    assert row["findings"] == ["growing_override_drops_requested"]
    trace = read_trace(row["counterexample"])
    assert row["kafka_version"] == trace.bounds["kafka_version"] == "3.9.2" and trace.bounds["elr"] == "off"

    # without the finding, 3.9 promises the property: the same refutation is unexpected (exit 1)
    monkeypatch.setattr(F, "FINDINGS", tuple(f for f in F.FINDINGS if f.name != "growing_override_drops_requested"))
    assert main(args) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["unexpected"] == ["kraft:completion_reaches_target"]
    (row,) = [r for r in data["results"] if r["property"] == "completion_reaches_target"]
    assert row["verdict"] == "refuted" and row["findings"] == []
    assert replay(trace).reproduces


def test_usage_errors_exit_2(capsys):
    assert main(["prove", "--profile", "nope"]) == 2
    assert "unknown profile 'nope'" in capsys.readouterr().err
    assert main(["prove", "--property", "nope"]) == 2
    assert main(["prove", "--max-brokers", "2"]) == 2
    assert "--max-brokers" in capsys.readouterr().err


def test_kafka_version_selects_the_release_kraft_is_proved_at(tmp_path, capsys):
    """`--kafka-version`: 3.9.2's completion rule (every target replica in the ISR, KAFKA-15665) makes
    completion_reaches_target hold; the newest release's (KAFKA-19975) refutes it."""
    args = ["prove", "--profile", "kraft", "--max-brokers", "4", "--property", "completion_reaches_target",
            "--json", "--out", str(tmp_path)]
    verdicts = {}
    for version in ("3.9.2", NEWEST):
        assert main([*args, "--kafka-version", version]) == 0
        (row,) = [r for r in json.loads(capsys.readouterr().out)["results"] if r["property"] != "inductive_invariant"]
        assert row["kafka_version"] == version
        verdicts[version] = row["verdict"]
    assert verdicts == {"3.9.2": "proved", NEWEST: "refuted"}


def test_kafka_version_bad_input_names_the_flag(tmp_path, capsys):
    for extra, words in ((["--kafka-version", "3.9"], "is not a Kafka release"),
                         (["--kafka-version", "2.8.0"], "is not supported"),
                         (["--profile", "zk", "--kafka-version", "3.9.2"], "applies to the kraft profile only")):
        assert main(["prove", *extra, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--kafka-version" in err and words in err, err
