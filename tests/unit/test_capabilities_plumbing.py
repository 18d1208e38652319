"""The issue-14 capabilities outside `check`: one dispatch (reference/capabilities.py) for the model,
replay, validate-trace, the oracle, the differential checker and fuzz; the minimizer shrinks
`create_partitions`; `show` draws the throttles and the hosted logs."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace

import pytest
from kreassign.checker.check.run import VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.fuzz.stateful import VIOLATED as FUZZ_VIOLATED
from kreassign.checker.fuzz.stateful import fuzz_settings, run_fuzz
from kreassign.checker.implementations.adapters import ReferenceImplementation
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.differential import MATCH_PROPERTY, DifferentialModel, replay_against_impl
from kreassign.checker.oracle.server import Oracle
from kreassign.checker.traces.format import read_trace, trace_from_path, write_trace
from kreassign.checker.traces.render import render_dot, render_table
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.validation import validate_text
from kreassign.reference import profile
from kreassign.reference.broker_replicas import BrokerReplicaManager
from kreassign.reference.capabilities import CAPABILITY_ACTIONS, KAFKA, Capabilities, apply_action
from kreassign.reference.throttles import ReassignTool
from kreassign.reference.topic_changes import partition_zero_replication_factor
from kreassign.spec import actions as A
from kreassign.spec import findings as F
from kreassign.spec.codec import to_json
from kreassign.spec.state import make_cluster

from kreassign.cli import main

ALL_ON = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, throttles=True, create_partitions=1, broker_replicas=True,
                leader_balance=True)
#: every new action once; the last one (CreatePartitions while t-0 moves) breaks Kafka's known
#: created_partitions_get_replication_factor, so that replay has a violation to reproduce
ACTIONS = (A.ToolExecute("t", 0, (2, 3)), A.ToolVerify("t", 0), A.ToolCancel("t", 0), A.AutoLeaderBalance(),
           A.ToolExecute("t", 0, (2, 3)), A.BrokerReplay(3), A.CreatePartitions("t", 2))
PROP = "created_partitions_get_replication_factor"


def walk(model, actions):
    state = model.init_states()[0]
    path = [(state, None)]
    for a in actions:
        assert a in model.actions(state), a  # the explorer could take this path
        state, label = model.step(state, a)
        path.append((state, label))
    return path


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    model = ReassignmentModel("kraft", ALL_ON)
    path = tmp_path_factory.mktemp("caps") / "kraft__capabilities.json"
    write_trace(trace_from_path(model, "reassignment", PROP, "transition", walk(model, ACTIONS)), str(path))
    return str(path)


def jsonl(trace, drop_actions_of=()) -> str:
    """The trace as an observed JSON-lines run (real epochs); actions of the named types left unlogged."""
    lines = [json.dumps({"initial_state": trace.initial["cluster"], "profile": trace.profile})]
    for s in trace.steps:
        if s["action"]["type"] in drop_actions_of:
            lines.append(json.dumps({"state": s["kafka_state"]}))
        else:
            lines.append(json.dumps({"action": s["action"], "state": s["kafka_state"]}))
    return "\n".join(lines) + "\n"


# -- one dispatch -----------------------------------------------------------------------------------------


def test_every_user_applies_the_new_actions_through_the_same_dispatch(trace_file):
    trace = read_trace(trace_file)
    model = ReassignmentModel("kraft", ALL_ON)
    assert isinstance(model.capabilities, Capabilities)  # the model's dispatch is the shared one
    state = model.state_from_json(trace.initial).cluster
    for step in trace.steps:
        action = model.action_from_json(step["action"])
        ours = model.apply(state, action)
        assert apply_action(profile("kraft"), state, action) == ours
        assert to_json(ours.state) == step["kafka_state"]
        state = ours.state
    assert {type(a) for a in ACTIONS} <= set(CAPABILITY_ACTIONS)


# -- replay and validate-trace -------------------------------------------------------------------------------


def test_a_trace_using_every_new_action_replays(trace_file):
    trace = read_trace(trace_file)
    assert [s["action"]["type"] for s in trace.steps] == [type(a).__name__ for a in ACTIONS]
    result = replay(trace)
    assert result.reproduces and result.steps_matched == len(ACTIONS)
    assert main(["replay", trace_file]) == 0


def test_a_json_lines_run_using_every_new_action_is_valid(trace_file, tmp_path, capsys):
    trace = read_trace(trace_file)
    result = validate_text(jsonl(trace), "jsonl")
    assert result.verdict == "VALID"
    assert [[type(a).__name__ for a in acts] for _, acts, _, _ in result.explanation] == [
        [type(a).__name__] for a in ACTIONS]
    run = tmp_path / "run.jsonl"
    run.write_text(jsonl(trace))
    assert main(["validate-trace", str(run)]) == 0
    assert "VALID" in capsys.readouterr().out


@pytest.mark.parametrize("k, field, value", [
    (1, "throttles", None),  # --verify cleared the throttles of a move still running
    (5, "hosted", [[1, "t", 0], [2, "t", 0]]),  # BrokerReplay(3) did not create broker 3's log
    (6, "topics", None),  # CreatePartitions with partition 0's broker replication factor (2, not 3)
])
def test_a_run_whose_new_action_does_something_else_is_invalid_at_that_line(trace_file, k, field, value):
    trace = read_trace(trace_file)
    state = trace.steps[k]["kafka_state"]
    if field == "topics":
        p1 = state["topics"][0]["partitions"][1]
        p1["replicas"] = p1["isr"] = p1["replicas"][:2]
    elif value is None:
        del state[field]
    else:
        state[field] = value
    result = validate_text(jsonl(trace), "jsonl")
    assert result.verdict == "INVALID" and result.failed.line == k + 2  # line 1 is the initial state


def test_unlogged_broker_replays_are_searched_and_a_fetch_needs_the_log():
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=0, broker_replicas=True))
    real = [model.init_states()[0].cluster]  # real epochs, as an observed run has them
    for a in (A.Reassign("t", 0, (2, 3)), A.BrokerReplay(3), A.LeaderExpandIsr("t", 0, 3)):
        real.append(model.apply(real[-1], a).state)
    lines = [json.dumps({"initial_state": to_json(real[0])}),
             json.dumps({"action": to_json(A.Reassign("t", 0, (2, 3))), "state": to_json(real[1])})]
    expand = json.dumps({"action": to_json(A.LeaderExpandIsr("t", 0, 3)), "state": to_json(real[3])})
    # a state line with no action: explained by the broker's unlogged replay
    valid = validate_text("\n".join(lines + [json.dumps({"state": to_json(real[2])}), expand]), "jsonl")
    assert valid.verdict == "VALID"
    assert [str(a) for a in valid.explanation[1][1]] == ["BrokerReplay(3)"]
    # without the replay broker 3 hosts no log of t-0, so it cannot fetch and join the ISR
    early = json.dumps({"action": to_json(A.LeaderExpandIsr("t", 0, 3)), "state": to_json(real[3])})
    invalid = validate_text("\n".join(lines + [early]), "jsonl")
    assert invalid.verdict == "INVALID" and "does not host the log" in invalid.reason


def test_an_unlogged_verify_explains_throttles_that_disappear_once_the_move_is_done():
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=0, throttles=True))
    real = [model.init_states()[0].cluster]
    for a in (A.ToolExecute("t", 0, (2, 3)), A.LeaderExpandIsr("t", 0, 3), A.ToolVerify("t", 0)):
        real.append(model.apply(real[-1], a).state)
    assert real[2].throttles is not None and real[3].throttles is None  # done, then --verify clears
    lines = [json.dumps({"initial_state": to_json(real[0])}),
             json.dumps({"action": to_json(A.ToolExecute("t", 0, (2, 3))), "state": to_json(real[1])}),
             json.dumps({"state": to_json(real[3])})]
    result = validate_text("\n".join(lines), "jsonl")
    assert result.verdict == "VALID"
    assert [str(a) for a in result.explanation[1][1]] == ["LeaderExpandIsr(t-0 +3)", "ToolVerify(t-0)"]
    # while the move runs, nothing the reference does removes the throttles
    early = lines[:2] + [json.dumps({"state": to_json(replace(real[1], throttles=None))})]
    assert validate_text("\n".join(early), "jsonl").verdict == "INVALID"


# -- the oracle -----------------------------------------------------------------------------------------------


OPS = {"ToolExecute": "tool_execute", "ToolVerify": "tool_verify", "ToolCancel": "tool_cancel",
       "AutoLeaderBalance": "auto_leader_balance", "BrokerReplay": "broker_replay",
       "CreatePartitions": "create_partitions"}


def test_the_oracle_answers_every_new_action_as_the_model_steps(trace_file):
    trace = read_trace(trace_file)
    oracle = Oracle("kraft")
    state = trace.initial["cluster"]
    for step in trace.steps:
        action = step["action"]
        by_step = oracle.handle({"id": 1, "op": "step", "state": state, "action": action})
        params = {k: v for k, v in action.items() if k != "type"}
        by_op = oracle.handle({"id": 2, "op": OPS[action["type"]], "state": state, **params})
        assert by_step["ok"] and by_op["ok"], (by_step, by_op)
        assert by_step["result"] == by_op["result"]
        assert by_step["result"]["state"] == step["kafka_state"]
        assert {k: v for k, v in by_step["result"]["response"].items() if k != "type"} == step["response"]
        state = step["kafka_state"]


def test_the_oracle_check_judges_a_wrong_new_action_by_its_properties(trace_file):
    trace = read_trace(trace_file)
    before, verify = trace.steps[0]["kafka_state"], trace.steps[1]
    cleared = {k: v for k, v in verify["kafka_state"].items() if k != "throttles"}
    got = Oracle().handle({"id": 1, "op": "check", "state": before, "action": verify["action"],
                           "observed_state": cleared})["result"]
    assert got["verdict"] == "mismatch" and got["diff"][0].startswith("state.throttles: reference")
    assert [(v["name"], v["reference_also"]) for v in got["violated"]] == [("moving_replicas_throttled", False)]
    right = Oracle().handle({"id": 1, "op": "check", "state": before, "action": verify["action"],
                             "observed_state": verify["kafka_state"]})["result"]
    assert right["verdict"] == "match" and right["violated"] == []
    # CreatePartitions during a move: Kafka's own rule breaks the property, and the oracle says so
    create = trace.steps[-1]
    got = Oracle().handle({"id": 1, "op": "check", "state": trace.steps[-2]["kafka_state"], "action": create["action"],
                           "observed_state": create["kafka_state"]})["result"]
    assert got["verdict"] == "match" and [(v["name"], v["reference_also"]) for v in got["violated"]] == [(PROP, True)]
    zk = Oracle().handle({"id": 1, "op": "create_partitions", "profile": "zk", "state": before, "topic": "t", "count": 2})
    assert zk["error"]["code"] == "invalid_action"


@pytest.mark.parametrize("request_, code, message", [
    ({"op": "tool_verify", "topic": "t", "partition": 7}, "invalid_action", "InvalidAction: unknown partition t-7"),
    ({"op": "tool_execute", "topic": "t", "partition": 0, "replicas": "x"}, "invalid_field", "replicas: expected a list"),
    ({"op": "broker_replay", "broker": 9}, "invalid_action", "InvalidAction: unknown broker 9"),
    ({"op": "create_partitions", "topic": "u", "count": 2}, "invalid_action", "InvalidAction: unknown topic 'u'"),
    ({"op": "auto_leader_balance", "extra": 1}, "invalid_field", "extra: unknown field"),
])
def test_bad_requests_for_the_new_ops_name_the_problem(request_, code, message):
    reply = Oracle().handle({"id": 1, "state": to_json(make_cluster([1, 2], {"t": [[1]]})), **request_})
    assert not reply["ok"] and reply["error"]["code"] == code and reply["error"]["message"].startswith(message)


# -- an implementation in lockstep -------------------------------------------------------------------------------


class VerifyAlwaysClears(ReassignTool):
    """Broken on purpose: --verify clears the throttles whatever is still moving."""

    def verify_may_clear(self, profile, state, topic, partition):
        return True


class NeverDeletes(BrokerReplicaManager):
    """Broken on purpose: a replay creates logs but never deletes one."""

    def deletes(self, cluster, broker, mine):
        return set()


WRONG = {
    "ToolVerify": (Capabilities(tool=VerifyAlwaysClears()), Bounds(brokers=2, rf=1, reassigns=1, cancels=0, throttles=True)),
    "CreatePartitions": (Capabilities(rf_rule=partition_zero_replication_factor),
                         Bounds(brokers=2, rf=1, reassigns=1, cancels=0, create_partitions=1)),
    "BrokerReplay": (Capabilities(replicas=NeverDeletes()),
                     Bounds(brokers=2, rf=1, reassigns=1, cancels=0, broker_replicas=True)),
    "AutoLeaderBalance": (Capabilities(balance_skips_reassigning=True),
                          Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, leader_balance=True)),
}


@pytest.mark.parametrize("kind", list(WRONG))
def test_a_wrong_implementation_of_a_new_action_is_caught_in_lockstep(tmp_path, kind):
    caps, bounds = WRONG[kind]
    impl = ReferenceImplementation(capabilities=caps)
    result = check_model("kraft", bounds, factory=lambda p, b: DifferentialModel(p, b, impl, "wrong"),
                         out_dir=str(tmp_path), liveness_check=False)
    v = result.properties[MATCH_PROPERTY]
    assert v.status == VIOLATED and v.length <= 5
    trace = read_trace(v.counterexample)
    assert trace.steps[-1]["action"]["type"] == kind and trace.steps[-1]["mismatch"]["diff"]
    assert replay_against_impl(trace, impl).reproduces
    assert not replay_against_impl(trace, ReferenceImplementation()).reproduces


def test_a_correct_implementation_over_json_lines_follows_every_new_action(trace_file):
    spec = f"exec:{shlex.quote(sys.executable)} -m kreassign.checker.implementations.adapters"
    result = replay_against_impl(read_trace(trace_file), spec)
    assert result.reproduces and result.steps_matched == len(ACTIONS) and result.diffs == []


# -- fuzz --------------------------------------------------------------------------------------------------------


def test_fuzz_exercises_the_capabilities_and_catches_a_broken_tool(tmp_path):
    bounds = Bounds(brokers=2, rf=1, reassigns=2, cancels=0, throttles=True)
    run = run_fuzz(ReassignmentModel("kraft", bounds, tool=VerifyAlwaysClears()), seed=1, out_dir=str(tmp_path),
                   hypothesis_settings=fuzz_settings(30, 8, derandomize=True))
    o = run.properties["moving_replicas_throttled"]
    assert o.status == FUZZ_VIOLATED and o.length <= 3
    assert read_trace(o.counterexample).steps[-1]["action"]["type"] == "ToolVerify"
    # in lockstep, the broken CreatePartitions of an implementation is found by fuzz too
    caps, small = WRONG["CreatePartitions"]
    model = DifferentialModel("kraft", small, ReferenceImplementation(capabilities=caps), "wrong")
    run = run_fuzz(model, seed=1, known=("created_partitions_get_replication_factor",),
                   hypothesis_settings=fuzz_settings(30, 6, derandomize=True))
    assert run.properties[MATCH_PROPERTY].status == FUZZ_VIOLATED


def test_fuzz_cli_takes_the_capability_flags(tmp_path, capsys):
    code = main(["fuzz", "--profile", "kraft", "--brokers", "2", "--rf", "1", "--reassigns", "1", "--cancels", "1",
                 "--throttles", "--create-partitions", "1", "--broker-replicas", "--leader-balance",
                 "--examples", "20", "--steps", "6", "--seed", "3", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["unexpected_violations"] == 0
    assert out["bounds"]["throttles"] and out["bounds"]["create_partitions"] == 1
    for name in ("moving_replicas_throttled", "isr_joiner_was_told", PROP):
        assert out["properties"][name]["status"] != "not-checked"


# -- the minimizer -------------------------------------------------------------------------------------------------


def test_minimization_lowers_create_partitions(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "FINDINGS", tuple(f for f in F.FINDINGS if f.property != PROP))
    one_too_many = lambda topic: len(topic.partitions[0].replicas) + 1  # planted bug
    bounds = Bounds(brokers=3, rf=1, reassigns=1, cancels=1, create_partitions=3)
    result = check_model("kraft", bounds, out_dir=str(tmp_path), liveness_check=False,
                         factory=lambda p, b: ReassignmentModel(p, b, rf_rule=one_too_many))
    v = result.properties[PROP]
    assert v.status == VIOLATED and v.length == 1
    assert v.found_at["create_partitions"] == 3
    assert v.minimized_to["create_partitions"] == 1 and v.minimized_to["reassigns"] == 0
    trace = read_trace(v.counterexample)
    assert trace.bounds["create_partitions"] == 1 and [s["action_text"] for s in trace.steps] == ["CreatePartitions(t -> 2)"]


# -- show ----------------------------------------------------------------------------------------------------------


def test_show_draws_throttles_and_hosted_logs_when_the_trace_has_them(trace_file, capsys):
    text = render_table(read_trace(trace_file))
    header = next(line for line in text.splitlines() if line.lstrip().startswith("step"))
    assert header.split()[-3:] == ["throttled", "rates", "hosted"]
    row = next(line for line in text.splitlines() if line.lstrip().startswith("1  ToolExecute"))
    assert "L[1,2] F[3]*" in row and "[1,2,3]*" in row  # leader/follower throttles of t-0, and the rates
    replayed = next(line for line in text.splitlines() if line.lstrip().startswith("6  BrokerReplay(3)"))
    assert replayed.rstrip().endswith("[1,2,3]*")  # broker 3 now hosts t-0's log
    assert "throttled = the partition's leader (L)" in text
    assert "hosted=[1,2]" in render_dot(read_trace(trace_file))
    assert main(["show", trace_file]) == 0
    assert "hosted" in capsys.readouterr().out


def test_show_has_no_new_columns_for_a_plain_trace(tmp_path):
    model = ReassignmentModel("kraft", Bounds())
    path = walk(model, (A.Reassign("t", 0, (2, 3)),))
    trace = trace_from_path(model, "reassignment", "isr_non_empty", "always", path)
    write_trace(trace, str(tmp_path / "t.json"))
    text = render_table(read_trace(str(tmp_path / "t.json")))
    assert not any(c in text for c in ("throttled", "rates", "hosted"))


def test_a_cluster_without_hosted_logs_is_left_alone_by_a_replay():
    s = make_cluster([1, 2], {"t": [[1]]})
    assert KAFKA.apply(profile("kraft"), s, A.BrokerReplay(1)).state is s
    assert KAFKA.allows(s, A.LeaderExpandIsr("t", 0, 2))
    hosted = replace(s, hosted=((1, "t", 0),))
    assert not KAFKA.allows(hosted, A.LeaderExpandIsr("t", 0, 2))
