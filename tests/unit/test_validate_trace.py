"""Trace validation: JSON-lines traces and Kafka's own ZooKeeper-controller log lines against a profile.

The fixture `seed003_zk_reassignment.log` is the log excerpt of seed 003 (a zk reassignment of
daehokimm-topic-0 from {1,2,3} to {4,5,6}, brokers 1..6), the blog's comment lines left out.
Its edited copies each break one thing, and must be rejected at the pinned line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kreassign.checker.kafka_logs.zk_controller_log import parse_log
from kreassign.checker.traces.validation import (
    SearchLimits,
    TraceFormatError,
    guess_format,
    validate_text,
)
from kreassign.reference import profile
from kreassign.reference.kraft import KraftProfile
from kreassign.spec import actions as A
from kreassign.spec.codec import to_json
from kreassign.spec.state import make_cluster

from kreassign.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEED = FIXTURES / "seed003_zk_reassignment.log"
TP = ("daehokimm-topic", 0)


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


# -- the parser ---------------------------------------------------------------------------------------------


def test_the_seed_log_is_read_line_by_line():
    parsed = parse_log(SEED.read_text())
    assert parsed.total == 48 and parsed.recognised == 48 and parsed.ignored == []
    assert parsed.broker_ids == {1, 2, 3, 4, 5, 6}
    assert [o.line for o in parsed.observations] == [1, 2, 10, 20, 22, 23, 28, 29, 30, 44, 45, 46]
    by_line = {o.line: o for o in parsed.observations}
    assert dict(by_line[1].fields) == {"replicas": (4, 5, 6, 1, 2, 3), "adding": (4, 5, 6), "removing": (1, 2, 3)}
    assert dict(by_line[2].fields) == {"leader_epoch": 6, "partition_epoch": 8}
    assert dict(by_line[10].fields)["isr"] == (1, 2, 3)
    # the ControllerEpoch inside a partition state is that of the controller that wrote the state, not the
    # current controller's (after a failover they differ): it is not read as the controller epoch
    assert "controller_epoch" not in dict(by_line[10].fields)
    assert dict(by_line[23].fields) == {"leader": 4, "isr": (5, 1, 6, 2, 3, 4), "leader_epoch": 7, "partition_epoch": 12}
    assert by_line[28].removed_replica == 1 and dict(by_line[28].fields)["isr"] == (5, 6, 2, 3, 4)
    assert dict(by_line[45].fields) == {"znode_entry": (4, 5, 6)}
    assert (by_line[46].topic, dict(by_line[46].fields)) == (None, {"znode_empty": True})
    assert all((o.topic, o.partition) == TP for o in parsed.observations if o.topic is not None)


def test_prefixes_and_unknown_lines():
    log = ("[2022-10-03 21:14:11,002] INFO [Controller id=1] Updated leader epoch for partition a-b.c-12 to 3, "
           "zkVersion=4 (kafka.controller.KafkaController)\nsomething else entirely\n\n")
    parsed = parse_log(log)
    (obs,) = parsed.observations
    assert (obs.topic, obs.partition, dict(obs.fields)) == ("a-b.c", 12, {"leader_epoch": 3, "partition_epoch": 4})
    assert parsed.ignored == [2] and parsed.recognised == 1
    assert guess_format(log) == "kafka-log" and guess_format('\n{"initial_state": {}}') == "jsonl"


# -- the seed validates under zk ----------------------------------------------------------------------------------


def test_the_seed_log_validates_under_zk_and_its_initial_state_is_inferred():
    result = validate_text(SEED.read_text(), "kafka-log", "zk")
    assert result.valid, result.reason
    p = result.initial.partition(*TP)
    # replicas = the origin of line 1, leader and ISR from line 10, epochs fixed by lines 2 and 10
    assert (p.replicas, p.leader, set(p.isr), p.adding, p.removing) == ((1, 2, 3), 1, {1, 2, 3}, (), ())
    assert (p.leader_epoch, p.partition_epoch, result.initial.zk.epoch) == (5, 7, 1)
    assert [b.id for b in result.initial.brokers] == [1, 2, 3, 4, 5, 6]
    steps = {obs.line: (tuple(type(a).__name__ for a in acts), st) for obs, acts, st, _ in result.explanation}
    # the log removes the partition from /admin/reassign_partitions: the reassignment came through the znode
    assert steps[1] == (("ZnodeReassign", "ControllerStep"), ("", "U"))
    assert steps[2][1] == ("A1",)
    assert steps[20] == (("ControllerStep", "LeaderExpandIsr", "LeaderExpandIsr", "LeaderExpandIsr"), ("A2", "", "", ""))
    assert steps[22][1] == ("U", "B1", "B2") and steps[23][1] == ("B3",)
    assert steps[28][1] == ("B4",) and steps[29] == ((), ()) and steps[30] == ((), ())  # B4's three writes
    assert steps[44][1] == ("B5", "B6") and steps[46][1] == ("B7",)
    last = result.explanation[-1][3].state
    q = last.partition(*TP)
    assert (q.replicas, q.leader, set(q.isr), q.leader_epoch, q.partition_epoch) == ((4, 5, 6), 4, {4, 5, 6}, 10, 15)
    assert last.zk.pending == () and last.zk.admin_znode == () and last.zk.being_reassigned == ()


def test_the_seed_log_is_not_what_the_other_profiles_do():
    kraft = validate_text(SEED.read_text(), "kafka-log", "kraft")
    # KRaft completes as soon as the target is in the ISR and moves the leader at once: line 22's
    # "Leader 1 ... Re-electing leader" cannot happen
    assert not kraft.valid and kraft.failed.line == 22
    assert [m.field for m in kraft.closest.mismatches] == ["leader"]
    kip455 = validate_text(SEED.read_text(), "kafka-log", "kip455")
    assert not kip455.valid and kip455.failed.line == 1  # KIP-455's text lists the removing replicas first
    assert "replicas" in [m.field for m in kip455.closest.mismatches]


# -- edited copies are rejected at the right line -------------------------------------------------------------------


def changed_lines(name: str) -> list[tuple[int, str]]:
    original = SEED.read_text().splitlines()
    edited = text(name).splitlines()
    return [(i + 1, b) for i, (a, b) in enumerate(zip(original, edited)) if a != b]


@pytest.mark.parametrize("name, line, previous, fields", [
    # line 28 claims replica 1 left the ISR, but shows 2 gone too
    ("seed003_wrong_isr.log", 28, 23, ["isr"]),
    # line 29 (replica 2's removal) deleted: the log jumps from epoch 8 to 10 inside one step
    ("seed003_skipped_step.log", 29, 28, ["isr", "leader_epoch", "partition_epoch"]),
    # line 23 elects broker 7, which is not a replica (nor a broker)
    ("seed003_leader_outside_replicas.log", 23, 22, ["leader"]),
])
def test_edited_copies_of_the_seed_log_are_rejected_at_the_right_line(name, line, previous, fields):
    result = validate_text(text(name), "kafka-log", "zk")
    assert not result.valid
    assert result.failed.line == line and result.previous.line == previous
    assert sorted(m.field for m in result.closest.mismatches) == sorted(fields)
    assert result.before  # the states around it are reported


def test_the_edited_copies_differ_from_the_seed_only_where_intended():
    assert [n for n, _ in changed_lines("seed003_wrong_isr.log")] == [28]
    assert [n for n, _ in changed_lines("seed003_leader_outside_replicas.log")] == [23]
    original = SEED.read_text().splitlines()
    assert text("seed003_skipped_step.log").splitlines() == original[:28] + original[29:]


def test_a_step_whose_writes_are_not_all_logged_is_rejected_at_the_next_line():
    lines = SEED.read_text().splitlines()
    del lines[29]  # replica 3's removal: B4 never finishes, yet line 44 (now 43) writes B6's assignment
    result = validate_text("\n".join(lines) + "\n", "kafka-log", "zk")
    assert not result.valid and result.failed.line == 43


def test_the_rejection_report_names_the_line_and_the_states_around_it(tmp_path, capsys):
    rc = main(["validate-trace", str(FIXTURES / "seed003_wrong_isr.log")])
    out = capsys.readouterr().out
    assert rc == 1
    assert "INVALID at line 28" in out and "last matched: line 23" in out
    assert "isr: the line says [5,6,3,4], the model has [2,3,4,5,6]" in out
    rc = main(["validate-trace", str(FIXTURES / "seed003_leader_outside_replicas.log"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 1 and data["valid"] is False
    assert data["failure"]["line"] == 23 and data["failure"]["observed"]["leader"] == 7
    assert data["failure"]["previous_line"] == 22


def test_cli_exit_codes(tmp_path, capsys):
    assert main(["validate-trace", str(SEED)]) == 0
    assert "VALID" in capsys.readouterr().out
    assert main(["validate-trace", str(SEED), "--format", "kafka-log", "--profile", "zk", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True
    assert main(["validate-trace", str(tmp_path / "missing.log")]) == 2
    assert main(["validate-trace", str(SEED), "--profile", "nope"]) == 2
    # lines of other loggers are skipped and counted, not refused: nothing checked is INCONCLUSIVE (exit 4)
    empty = tmp_path / "nothing.log"
    empty.write_text("hello\nworld\n")
    assert main(["validate-trace", str(empty)]) == 4
    out = capsys.readouterr().out
    assert "INCONCLUSIVE: no line of the log shows partition state" in out and "2 ignored (other loggers)" in out
    binary = tmp_path / "binary.log"
    binary.write_bytes(SEED.read_bytes()[:200] + b"\n\xff\xfe\n")
    assert main(["validate-trace", str(binary)]) == 2
    assert f"{binary}: line 3: not UTF-8" in capsys.readouterr().err
    # too few unlogged actions allowed: line 20 needs four (A2 and three ISR expansions)
    assert main(["validate-trace", str(SEED), "--max-unlogged", "3", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["failure"]["line"] == 20


# -- JSON lines -----------------------------------------------------------------------------------------------------


def kraft_trace() -> list[dict]:
    """A run of the kraft reference: reassign [1,2] -> [3,4], the ISR catches up, then shrinks."""
    k = profile("kraft")
    s = k.initial_state(make_cluster([1, 2, 3, 4], {"t": [[1, 2]]}))
    rows: list[dict] = [{"profile": "kraft", "initial_state": to_json(s)}]
    for a in (A.Reassign("t", 0, (3, 4)), A.LeaderExpandIsr("t", 0, 3), A.LeaderExpandIsr("t", 0, 4),
              A.LeaderShrinkIsr("t", 0, 4)):
        step = k.apply(s, a)
        s = step.state
        rows.append({"action": to_json(a), "state": to_json(s), "response": to_json(step.response)})
    return rows


def jsonl(rows: list[dict]) -> str:
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def test_a_jsonl_trace_of_the_reference_is_valid():
    result = validate_text(jsonl(kraft_trace()), "jsonl")
    assert result.valid and result.profile == "kraft" and result.observations == 4
    assert [len(acts) for _, acts, _, _ in result.explanation] == [1, 1, 1, 1]


def test_unlogged_actions_are_inferred_between_observed_states():
    rows = kraft_trace()
    rows = rows[:2] + [{"state": rows[3]["state"]}] + rows[4:]  # the two expansions were not logged
    result = validate_text(jsonl(rows), "jsonl")
    assert result.valid
    assert [str(a) for a in result.explanation[1][1]] == ["LeaderExpandIsr(t-0 +3)", "LeaderExpandIsr(t-0 +4)"]
    # but not more of them than allowed
    tight = validate_text(jsonl(rows), "jsonl", limits=SearchLimits(max_unlogged=1))
    assert not tight.valid and tight.failed.line == 3


def test_a_wrong_state_or_response_in_a_jsonl_trace_is_rejected_at_its_line():
    rows = kraft_trace()
    rows[2]["state"]["topics"][0]["partitions"][0]["isr"] = [1, 2, 4]  # line 3: the leader added 3, not 4
    result = validate_text(jsonl(rows), "jsonl")
    assert not result.valid and result.failed.line == 3 and result.previous.line == 2
    assert any("isr" in m.observed for m in result.closest.mismatches)
    rows = kraft_trace()
    rows[1]["response"]["responses"][0]["partitions"][0]["error_code"] = 39  # line 2
    result = validate_text(jsonl(rows), "jsonl")
    assert not result.valid and result.failed.line == 2
    assert [m.field for m in result.closest.mismatches] == ["response"]


def test_partial_observations_and_a_zk_trace_without_the_controller_fields():
    zk = profile("zk")
    s = zk.initial_state(make_cluster([1, 2, 3], {"t": [[1, 2]]}))
    rows: list[dict] = [{"profile": "zk", "initial_state": to_json(s)}]
    s = zk.apply(s, A.Reassign("t", 0, (2, 3))).state
    for _ in range(3):  # U, A1, A2
        s = zk.apply(s, A.ControllerStep("t", 0)).state
    observed = to_json(s)
    observed["zk"] = None  # an implementation that does not expose the controller's memory
    rows.append({"state": observed})
    rows.append({"observe": {"topic": "t", "partition": 0, "isr": [2, 3, 1], "leader_epoch": 1}})
    result = validate_text(jsonl(rows), "jsonl")
    assert result.valid, result.reason
    # the fewest unlogged actions: without the controller's fields, A2 (which changes only them) is not needed yet
    assert [(type(a).__name__, st) for a, st in zip(*result.explanation[0][1:3])] == [
        ("Reassign", ""), ("ControllerStep", "U"), ("ControllerStep", "A1")]
    assert [str(a) for a in result.explanation[1][1]] == ["ControllerStep(t-0)", "LeaderExpandIsr(t-0 +3)"]
    rows[-1]["observe"]["leader"] = 3  # no ISR change moves the leader
    assert not validate_text(jsonl(rows), "jsonl").valid


@pytest.mark.parametrize("content, message", [
    ("", "empty trace"),
    ("{not json\n", "line 1: invalid JSON"),
    ('{"state": {}}\n', "line 1: the first line must be"),
    ('{"initial_state": {"brokers": [], "topics": [], "extra": 1}}\n', "line 1: initial_state."),
    ('{"initial_state": {"brokers": [], "topics": []}}\n{"action": {"type": "Nope"}, "state": {}}\n', "line 2:"),
    ('{"initial_state": {"brokers": [], "topics": []}}\n{"observe": {"topic": "t", "partition": 0, "isr": "x"}}\n',
     "line 2: observe.isr"),
    ('{"initial_state": {"brokers": [], "topics": []}}\n{"action": null}\n', "line 2: needs exactly one"),
])
def test_malformed_jsonl_is_a_usage_error_naming_the_line(content, message, tmp_path, capsys):
    with pytest.raises(TraceFormatError, match=message.replace("(", r"\(")):
        validate_text(content, "jsonl")
    f = tmp_path / "t.jsonl"
    f.write_text(content)
    assert main(["validate-trace", str(f), "--format", "jsonl"]) == 2
    assert "kreassign validate-trace:" in capsys.readouterr().err


def test_cli_validates_a_jsonl_file(tmp_path, capsys):
    f = tmp_path / "run.jsonl"
    f.write_text(jsonl(kraft_trace()))
    assert main(["validate-trace", str(f)]) == 0
    assert "VALID" in capsys.readouterr().out
    # under zk a request only takes effect at the controller's step U: the logged states do not follow
    assert main(["validate-trace", str(f), "--profile", "zk"]) == 1


def test_a_complete_search_within_the_bounds_rejects_the_same_line():
    # --all-explanations keeps every matching state, not only the shortest explanations: the rejection
    # is then not an artefact of preferring the fewest unlogged actions
    limits = SearchLimits(max_unlogged=4, shortest=False)
    result = validate_text(text("seed003_leader_outside_replicas.log"), "kafka-log", "zk", limits)
    assert not result.valid and not result.inconclusive and result.failed.line == 23
    rows = kraft_trace()
    rows = rows[:2] + [{"state": rows[3]["state"]}] + rows[4:]
    assert validate_text(jsonl(rows), "jsonl", limits=SearchLimits(shortest=False)).valid


def test_hitting_the_state_limit_is_inconclusive(capsys):
    assert main(["validate-trace", str(SEED), "--all-explanations", "--max-states", "500"]) == 4
    out = capsys.readouterr().out
    assert "INCONCLUSIVE at line" in out and "--max-states" in out


def test_a_logged_action_the_reference_refuses_is_reported_as_such():
    rows = kraft_trace()[:1] + [{"action": {"type": "LeaderExpandIsr", "topic": "u", "partition": 0, "broker": 1},
                                 "observe": {"topic": "t", "partition": 0, "leader": 1}}]
    result = validate_text(jsonl(rows), "jsonl")
    assert not result.valid and not result.inconclusive and result.failed.line == 2
    assert result.reason == "the reference refuses LeaderExpandIsr(u-0 +1): unknown topic 'u'"


def test_a_json_lines_header_names_the_kafka_release_its_run_follows(tmp_path, capsys):
    # the last ISR member fails: 3.9 keeps it in the ISR, 4.4 (ELR on by default) writes an empty ISR
    s = make_cluster([1, 2], {"t": [[1, 2]]})
    s = profile("kraft").apply(s, A.LeaderShrinkIsr("t", 0, 2)).state
    old = KraftProfile(kafka_version="3.9.2").apply(s, A.BrokerFail(1)).state

    def run(header: dict) -> str:
        return "\n".join([json.dumps({"initial_state": to_json(s), "profile": "kraft", **header}),
                          json.dumps({"action": to_json(A.BrokerFail(1)), "state": to_json(old)})]) + "\n"

    assert validate_text(run({"kafka_version": "3.9.2"}), "jsonl").verdict == "VALID"
    assert validate_text(run({}), "jsonl").verdict == "INVALID"  # the newest release writes another state
    assert validate_text(run({"kafka_version": "4.4.0", "elr": "off"}), "jsonl").verdict == "VALID"
    assert validate_text(run({}), "jsonl", kafka_version="3.9.2").verdict == "VALID"  # --kafka-version
    path = tmp_path / "run.jsonl"
    for header, words in (({"kafka_version": "4.4"}, "line 1: '4.4' is not a Kafka release"),
                          ({"kafka_version": 4}, "line 1: kafka_version: expected a string"),
                          ({"elr": "maybe"}, "line 1: elr: expected \"on\" or \"off\""),
                          ({"kafka_version": "3.9.2", "elr": "on"}, "line 1: ELR")):
        path.write_text(run(header))
        assert main(["validate-trace", str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(path) in err[0] and words in err[0], err
