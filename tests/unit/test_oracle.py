"""The oracle: every op answers as the reference does, bad lines get errors naming the field, docs are true."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from fractions import Fraction

import pytest
from kreassign.checker.oracle.server import OPS, Oracle
from kreassign.reference import profile
from kreassign.reference import quota as Q
from kreassign.spec import actions as A
from kreassign.spec.codec import to_json
from kreassign.spec.quota import Principal, QuotaEntity
from kreassign.spec.state import make_cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CLUSTER = make_cluster([1, 2, 3, 4], {"t": [[1, 2]]})
#: [1,2] -> [3,4] in flight, 3 already in the ISR
REASSIGNING = profile("kraft").apply(
    profile("kraft").apply(CLUSTER, A.Reassign("t", 0, (3, 4))).state, A.LeaderExpandIsr("t", 0, 3)).state


def ask(oracle: Oracle, **request):
    reply = oracle.handle({"id": "x", **request})
    assert reply["id"] == "x"
    return reply


def ok(oracle: Oracle, **request):
    reply = ask(oracle, **request)
    assert reply["ok"], reply
    return reply["result"]


def err(oracle: Oracle, **request):
    reply = ask(oracle, **request)
    assert not reply["ok"], reply
    return reply["error"]["code"], reply["error"]["message"]


# -- the docs are true ----------------------------------------------------------------------------------


def doc_examples():
    with open(os.path.join(ROOT, "docs", "oracle.md")) as f:
        text = f.read()
    blocks = re.findall(r"```jsonl\n(.*?)\n```", text, re.DOTALL)
    return [tuple(b.split("\n")) for b in blocks]


def test_every_example_of_docs_oracle_md_is_the_oracles_reply():
    examples = doc_examples()
    assert len(examples) >= 35
    oracle = Oracle("kraft")
    ops_shown = set()
    for request, reply in examples:
        assert oracle.handle_line(request) == json.loads(reply), request[:120]
        try:
            ops_shown.add(json.loads(request).get("op"))
        except json.JSONDecodeError:
            pass
    # every op has an example except the self-describing `ops`
    assert set(OPS) - ops_shown == {"ops"}


# -- reassignment ops against the reference ------------------------------------------------------------


@pytest.mark.parametrize("name", ["kraft", "kraft-3.7", "zk", "kip455", "kip236"])
def test_plan_is_the_profiles_plan(name):
    got = ok(Oracle(name), op="plan", current=[1, 2, 3], target=[3, 4, 1])
    plan = profile(name).plan((1, 2, 3), (3, 4, 1))
    assert got == {"replicas": list(plan.replicas), "adding": list(plan.adding), "removing": list(plan.removing)}


ACTIONS = [
    ("alter_partition_reassignments", {"request": {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "replicas": [2, 3]}]}]}}, A.AlterReassignments(
        A.AlterPartitionReassignmentsRequest.single("t", 0, (2, 3)))),
    ("cancel", {"topic": "t", "partition": 0}, A.Cancel("t", 0)),
    ("elect_leaders", {"topic": "t", "partition": 0}, A.ElectLeaders("t", 0)),
    ("alter_partition", {"topic": "t", "partition": 0, "leader": 1, "new_isr": [1, 2, 3, 4], "leader_epoch": 0,
                         "partition_epoch": 2}, A.AlterPartition("t", 0, 1, (1, 2, 3, 4), 0, 2)),
    ("broker_fail", {"broker": 1}, A.BrokerFail(1)),
    ("broker_recover", {"broker": 1}, A.BrokerRecover(1)),
    ("controller_failover", {}, A.ControllerFailover()),
]


@pytest.mark.parametrize("op, params, action", ACTIONS, ids=[a[0] for a in ACTIONS])
def test_action_ops_are_the_reference_step(op, params, action):
    oracle = Oracle()
    for state in (CLUSTER, REASSIGNING):
        got = ok(oracle, op=op, state=to_json(state), **params)
        step = profile("kraft").apply(state, action)
        assert got["state"] == to_json(step.state)
        assert got["response"] == {"type": type(step.response).__name__, **to_json(step.response)}
        assert ok(oracle, op="step", state=to_json(state), action=to_json(action)) == got


def test_zk_controller_ops_follow_the_pending_steps():
    oracle = Oracle("zk")
    zk = profile("zk")
    state = zk.apply(zk.initial_state(CLUSTER), A.Reassign("t", 0, (3, 4))).state
    seen = []
    for _ in range(12):
        step = ok(oracle, op="pending_step", state=to_json(state), topic="t", partition=0)["step"]
        if step is None:
            break
        seen.append(step)
        got = ok(oracle, op="controller_step", state=to_json(state), topic="t", partition=0)
        state = zk.apply(state, A.ControllerStep("t", 0)).state
        assert got["state"] == to_json(state)
        if step == "A2":  # the new replicas catch up
            for b in (3, 4):
                state = zk.apply(state, A.LeaderExpandIsr("t", 0, b)).state
    assert seen[:3] == ["U", "A1", "A2"] and seen[-1] == "B7"
    assert state.partition("t", 0).replicas == (3, 4)
    assert ok(Oracle(), op="pending_step", state=to_json(REASSIGNING), topic="t", partition=0) == {"step": None}


def test_list_revert_complete_elect():
    oracle = Oracle()
    listed = ok(oracle, op="list_partition_reassignments", state=to_json(REASSIGNING))["response"]
    assert listed["topics"][0]["partitions"][0]["adding_replicas"] == [3, 4]
    assert ok(oracle, op="list_partition_reassignments", state=to_json(CLUSTER))["response"]["topics"] == []
    part = to_json(REASSIGNING.partition("t", 0))
    assert ok(oracle, op="revert", partition=part) == {"reassigning": True, "replicas": [1, 2], "isr": [1, 2],
                                                       "unclean": False}
    assert err(oracle, op="revert", profile="zk", partition=part)[0] == "invalid_action"
    done = ok(oracle, op="complete", replicas=[3, 4, 1, 2], isr=[1, 3], adding=[3, 4], removing=[1, 2])
    assert done["complete"] is False and done["replicas"] == [3, 4, 1, 2]
    assert ok(oracle, op="elect", state=to_json(CLUSTER), leader=1, replicas=[2, 1], isr=[1, 2],
              election="PREFERRED") == {"leader": 2, "unclean": False}
    failed = profile("kraft").apply(CLUSTER, A.BrokerFail(2)).state
    assert ok(oracle, op="elect", state=to_json(failed), leader=-1, replicas=[2, 3], isr=[2],
              election="UNCLEAN") == {"leader": 3, "unclean": True}


def test_enabled_actions_are_the_profiles():
    space = {"targets": [["t", 0, [2, 3]]], "failures": True, "elections": ["PREFERRED"]}
    got = ok(Oracle(), op="enabled_actions", state=to_json(CLUSTER), space=space)["actions"]
    from kreassign.reference import ActionSpace

    want = profile("kraft").enabled_actions(CLUSTER, ActionSpace(targets=(("t", 0, (2, 3)),), failures=True,
                                                                 elections=("PREFERRED",)))
    assert got == [to_json(a) for a in want]


# -- check -----------------------------------------------------------------------------------------------


def test_check_catches_the_buggy_cancel_and_passes_the_right_one():
    oracle = Oracle()
    cancel = to_json(A.Cancel("t", 0))
    right = profile("kraft").apply(REASSIGNING, A.Cancel("t", 0))
    good = ok(oracle, op="check", state=to_json(REASSIGNING), action=cancel, observed_state=to_json(right.state),
              observed_response=to_json(right.response))
    assert good["verdict"] == "match" and good["diff"] == [] and good["violated"] == []
    buggy = to_json(right.state)
    buggy["topics"][0]["partitions"][0]["isr"] = [1, 2, 3]
    bad = ok(oracle, op="check", state=to_json(REASSIGNING), action=cancel, observed_state=buggy)
    assert bad["verdict"] == "mismatch"
    assert bad["diff"] == ["state.topics[0].partitions[0].isr: reference [1,2], implementation [1,2,3]"]
    assert [v["name"] for v in bad["violated"]] == ["isr_in_replicas"]
    assert bad["violated"][0]["reference_also"] is False
    assert bad["expected"]["state"] == to_json(right.state)
    # a wrong response alone is a mismatch too
    wrong = ok(oracle, op="check", state=to_json(REASSIGNING), action=cancel, observed_state=to_json(right.state),
               observed_response={"type": "AlterPartitionReassignmentsResponse", "responses": [
                   {"name": "t", "partitions": [{"partition_index": 0, "error_code": 85}]}]})
    assert wrong["diff"] == ["response.responses[0].partitions[0].error_code: reference 0, implementation 85"]


def test_check_marks_violations_the_profile_is_known_for():
    # kraft keeps the merged order on cancel: cancel_restores_original_order fails for the reference too
    state = profile("kraft").apply(make_cluster([1, 2, 3], {"t": [[2, 1]]}), A.Reassign("t", 0, (3, 1))).state
    after = profile("kraft").apply(state, A.Cancel("t", 0)).state
    got = ok(Oracle(), op="check", state=to_json(state), action=to_json(A.Cancel("t", 0)),
             observed_state=to_json(after), ghosts=[[[2, 1], [3, 1], False]])
    assert got["verdict"] == "match"
    assert [(v["name"], v["reference_also"]) for v in got["violated"]] == [("cancel_restores_original_order", True)]
    assert err(Oracle(), op="check", state=to_json(state), action=to_json(A.Cancel("t", 0)),
               observed_state=to_json(after), ghosts=[[1]])[1].startswith("ghosts[0]: expected")


# -- quota ops against the reference -----------------------------------------------------------------------


def test_bucket_ops_are_exact():
    oracle = Oracle()
    config = Q.QuotaConfig(Fraction(5, 2))
    bucket = Q.TokenBucket(Fraction(-8), 1000)
    got = ok(oracle, op="bucket_refill", config={"rate": "5/2"}, bucket={"tokens": -8, "last_update_ms": 1000},
             now_ms=1301)
    want = Q.refill(bucket, config, 1301)
    assert Fraction(got["bucket"]["tokens"]) == want.tokens == Fraction(-8) + Fraction(5, 2) * 301 / 1000
    rec = ok(oracle, op="bucket_record", config={"rate": 2}, value=23, now_ms=0)["bucket"]
    assert rec == {"tokens": -1, "last_update_ms": 0}
    assert ok(oracle, op="bucket_record", config=None, value=5, now_ms=0) == {"bucket": None}
    m = ok(oracle, op="bucket_measure", config={"rate": 2}, bucket={"tokens": 0, "last_update_ms": 0}, now_ms=0)
    assert m["tokens"] == 0 and m["violated"] is False  # exactly 0 is allowed
    t = ok(oracle, op="throttle_time", tokens="-1/4", rate=1)  # 250 ms
    assert t["throttle_ms"] == 250 and t["channel_muted"] is True
    assert ok(oracle, op="throttle_time", tokens="-1/4000", rate=1)["throttle_ms"] == 0  # 0.25 ms rounds to 0
    assert ok(oracle, op="throttle_time", tokens="-1/2000", rate=1)["throttle_ms"] == 1  # 0.5 rounds half up


def test_quota_admit_is_handle_request():
    oracle = Oracle()
    state = Q.set_quota(Q.QuotaManagerState(), QuotaEntity("alice", None), 2)
    request = {"api": "CreatePartitions", "version": 3, "topics": [{"name": "a", "count": 40}, {"name": "b", "count": 5}]}
    got = ok(oracle, op="quota_admit", quota_state={"quotas": [{"entity": {"user": "alice"}, "rate": 2}]},
             principal={"user": "alice"}, request=request, metadata={"a": 10, "b": 4}, now_ms=500)
    from kreassign.spec.quota import CreatePartitionsRequest, CreatePartitionsTopic

    want = Q.handle_request(state, Principal("alice"), CreatePartitionsRequest(
        (CreatePartitionsTopic("a", 40), CreatePartitionsTopic("b", 5))), 500, metadata={"a": 10, "b": 4})
    assert got["response"] == to_json(want.response)
    assert got["counted"] == [30, 1] and got["throttle_time_ms"] == want.throttle_time_ms > 0
    assert got["quota_state"]["buckets"] == [{"key": ["alice", ""], "tokens": -8, "last_update_ms": 500}]
    # the state round-trips: a second request against the returned state is throttled at once
    again = ok(oracle, op="quota_admit", quota_state=got["quota_state"], principal={"user": "alice"},
               request={"api": "CreateTopics", "topics": [{"name": "c", "num_partitions": 1}]}, now_ms=600)
    assert again["response"]["results"][0]["error_code"] == 89
    draft = ok(oracle, op="quota_admit", profile="kip599-draft", principal={"user": "alice"},
               quota_state={"quotas": [{"entity": {"user": "alice"}, "rate": 2}]},
               request={"api": "CreateTopics", "topics": [{"name": "c", "num_partitions": 30}]}, now_ms=0)
    assert draft["response"]["results"][0]["error_code"] == 89  # the draft needs K >= N: 22 < 30
    assert ok(oracle, op="quota_admit", principal={}, request={"api": "AlterPartitionReassignments"},
              now_ms=0)["response"] is None


# -- bad input -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("request_, code, message", [
    ({"op": "plan", "current": [1]}, "invalid_field", "target: missing required field"),
    ({"op": "plan", "current": [1, True], "target": [2]}, "invalid_field", "current[1]: expected an integer, got true"),
    ({"op": "plan", "current": [1], "target": [2], "profile": "nope"}, "invalid_field", "profile: unknown reassignment"),
    ({"op": "step", "state": {"brokers": [{"id": 1}], "topics": [{"name": "t", "partitions": [
        {"replicas": [1, 7], "isr": [1], "leader": 1}]}]}, "action": {"type": "BrokerFail", "broker": 1}},
     "invalid_field", "state.topics[0].partitions[0].replicas[1]: unknown broker 7"),
    ({"op": "step", "state": to_json(CLUSTER), "action": {"type": "Reassign", "topic": "t", "partition": 0}},
     "invalid_field", "action.replicas: missing required field"),
    ({"op": "step", "state": to_json(CLUSTER), "action": {"type": "BrokerFail", "broker": 9}},
     "invalid_action", "unknown broker 9"),
    ({"op": "cancel", "state": to_json(CLUSTER), "topic": "t", "partition": "0"}, "invalid_field",
     "partition: expected an integer"),
    ({"op": "check", "state": to_json(CLUSTER), "action": to_json(A.ControllerFailover()), "observed_state": {}},
     "invalid_field", "observed_state.brokers: missing required field"),
    ({"op": "bucket_refill", "config": {"rate": 1, "smaples": 3}, "now_ms": 0}, "invalid_field", "config.smaples: unknown"),
    ({"op": "bucket_measure", "config": {"rate": 1}, "bucket": {"tokens": "x", "last_update_ms": 0}, "now_ms": 0},
     "invalid_field", "bucket.tokens: not an exact rational"),
    ({"op": "quota_admit", "principal": {}, "request": {"api": "CreateTopics", "topics": [{"num_partitions": 1}]},
      "now_ms": 0}, "invalid_field", "request.topics[0].name: missing required field"),
    ({"op": "quota_admit", "principal": {}, "request": {"api": "Produce"}, "now_ms": 0}, "invalid_field",
     "request.api: expected one of"),
    ({"op": "admit", "profile": "kraft", "counts": [], "now_ms": 0, "strict": True}, "invalid_field",
     "profile: expected a quota profile"),
    ({"op": "nope"}, "unknown_op", "op: unknown op 'nope'"),
    ({"no": "op"}, "invalid_request", "op: missing required field"),
])
def test_bad_requests_name_the_problem(request_, code, message):
    got = err(Oracle(), **request_)
    assert got[0] == code and message in got[1], got


def test_the_server_answers_every_line_and_exits_0_at_eof():
    lines = [
        json.dumps({"id": 1, "op": "plan", "current": [1, 2], "target": [2, 3]}),
        "{not json",
        "",
        json.dumps([1, 2]),
        json.dumps({"id": 2, "op": "nope"}),
        json.dumps({"id": 3, "op": "step", "state": to_json(CLUSTER), "action": to_json(A.Cancel("t", 0))}),
        json.dumps({"id": 4, "op": "controller_step", "state": to_json(CLUSTER), "topic": "t", "partition": 0}),
    ]
    proc = subprocess.run([sys.executable, "-m", "kreassign", "oracle", "--profile", "zk"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [(r["id"], r["ok"]) for r in replies] == [(1, True), (None, False), (None, False), (2, False), (3, True),
                                                     (4, True)]
    assert replies[0]["result"] == {"replicas": [2, 3, 1], "adding": [3], "removing": [1]}  # zk's reassignTo
    assert replies[1]["error"]["code"] == "invalid_json"
    answer = replies[4]["result"]["response"]["responses"][0]["partitions"][0]
    assert (answer["error_code"], answer["error_message"]) == (85, "No partition reassignment is in progress.")
    assert replies[5]["result"]["response"]["error_message"] == "no pending controller work for t-0"


def test_kafka_version_and_elr_pick_the_release_that_answers():
    oracle = Oracle()
    one = profile("kraft").apply(make_cluster([1, 2, 3], {"t": [[1, 2]]}), A.LeaderShrinkIsr("t", 0, 2)).state
    fail = {"op": "step", "profile": "kraft", "state": to_json(one), "action": to_json(A.BrokerFail(1))}
    old = ok(oracle, **fail, kafka_version="3.9.2")["state"]["topics"][0]["partitions"][0]
    assert (old["isr"], old["leader"]) == ([1], -1)  # 3.9: the last ISR member stays
    new = ok(oracle, **fail)["state"]["topics"][0]["partitions"][0]  # the newest release: ELR on
    assert (new["isr"], new["elr"], new["last_known_elr"]) == ([], [1], [1])
    off = ok(oracle, **fail, kafka_version="4.4.0", elr=False)["state"]["topics"][0]["partitions"][0]
    assert off["isr"] == [1] and "elr" not in off
    assert err(oracle, **fail, kafka_version="2.1")[1].startswith("kafka_version: '2.1' is not a Kafka release")
    assert err(oracle, **fail, kafka_version="3.9.2", elr=True)[1].startswith("elr: ")
    assert err(oracle, **{**fail, "profile": "zk"}, kafka_version="4.4.0")[1] == (
        "kafka_version: applies to the kraft profile only, not 'zk'")
