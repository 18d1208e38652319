"""The zk controller's identity and its event queue (issue 26, item 1; bounds zk_events): resignation and
election (reference/zk_events.py), leaders' ISR writes whose notifications wait behind the controller's
run, the properties of spec/zk_event_properties.py each caught on a deliberately broken controller, and
what the real zk profile breaks under it (spec/findings.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.server import Oracle
from kreassign.checker.traces.format import read_trace, trace_from_path, write_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.validation import validate_text
from kreassign.reference import zk_controller as C
from kreassign.reference.capabilities import Capabilities
from kreassign.reference.steps import InvalidAction, Step
from kreassign.reference.zk import ZkProfile
from kreassign.reference.zk_events import ControllerElection, reset_context
from kreassign.spec import actions as A
from kreassign.spec.codec import decode_action, state_from_json, to_json
from kreassign.spec.zk_event_properties import ZK_EVENT_PROPERTY_NAMES

from kreassign.cli import main

EVENTS = {"zk_versions": True, "zk_events": True}


def model_with(election: ControllerElection | None = None, profile=None):
    """A factory(profile_name, bounds) for check_model: the zk model with a (broken) election or profile."""

    def make(name, bounds):
        m = ReassignmentModel(profile or name, bounds)
        if election is not None:
            m.capabilities = replace(m.capabilities, election=election)
        return m

    return make


def walk(model, actions):
    s = model.init_states()[0]
    for a in actions:
        assert a in model.actions(s), (a, model.actions(s))
        s = model.next_state(s, a)
    return s


class DecidesOnCachedIsr(ZkProfile):
    """Broken on purpose: isReassignmentComplete on controllerContext's cached ISR instead of ZooKeeper's."""

    def controller_step(self, state, topic, partition):
        zk = state.zk
        if not (zk.active and C.next_step(zk, topic, partition) == "U"):
            return super().controller_step(state, topic, partition)
        _, cached_isr, _ = C.cached_leadership(zk, topic, partition, state.partition(topic, partition))
        step = super().controller_step(state, topic, partition)
        after = step.state
        mem = C.memory_of(after.zk, topic, partition)
        part = replace(after.partition(topic, partition), isr=cached_isr)
        decided = "B1" if C.reassignment_complete(mem, part) else "A1"
        return Step(replace(after, zk=C._set_step(after.zk, topic, partition, decided)), step.response)


# property, variant, smallest bounds that catch it, factory, counterexample length
BROKEN = [
    ("controller_epoch_increases", ("election takes controllerContext.epoch + 1 (reset to 0) instead of "
     "/controller_epoch + 1"), Bounds(brokers=2, rf=1, reassigns=0, cancels=0, failovers=1, isr_changes=False,
                                     zk_events=True), model_with(ControllerElection(epoch_from_zookeeper=False)), 2),
    ("elected_controller_starts_from_zookeeper", ("onControllerResignation without resetContext: re-elected, the "
     "broker starts from its previous term's context"), Bounds(brokers=2, rf=2, reassigns=0, cancels=0, failovers=1,
                                                                **EVENTS),
     model_with(ControllerElection(reset_context_on_resignation=False)), 3),
    ("completion_decided_on_zookeeper_isr", ("isReassignmentComplete on the cached ISR while a shrink's "
     "notification waits in the queue"), Bounds(brokers=2, rf=2, targets=((2,),), reassigns=1, cancels=0, **EVENTS),
     model_with(profile=DecidesOnCachedIsr()), 3),
]

# the real profile's findings under zk_events (spec/findings.py), at the bounds they are declared at
REAL = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failovers=1, **EVENTS)
FINDINGS = [("completion_reaches_target", "isr_shrinks_after_completion_decided", 15),
            ("admin_action_keeps_a_leader", "isr_shrinks_after_completion_decided", 12)]

BENCH_ROWS = [(prop, variant, "zk", bounds, factory) for prop, variant, bounds, factory, _ in BROKEN] + [
    (prop, f"real zk: {name}", "zk", REAL, None) for prop, name, _ in FINDINGS]


@pytest.mark.parametrize("prop,variant,bounds,factory,length", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_controller_is_caught(prop, variant, bounds, factory, length):
    real = check_model("zk", bounds, minimize_counterexamples=False)
    assert real.properties[prop].status == HOLDS and not real.unexpected
    caught = check_model("zk", bounds, factory=factory, minimize_counterexamples=False)
    v = caught.properties[prop]
    assert v.status == VIOLATED and prop in caught.unexpected and v.length == length


@pytest.fixture(scope="module")
def real():
    return check_model("zk", REAL, minimize_counterexamples=False)


def test_the_real_controller_keeps_the_event_properties(real):
    assert real.unexpected == []
    for name in ZK_EVENT_PROPERTY_NAMES:
        assert real.properties[name].status == HOLDS, name


@pytest.mark.parametrize("prop,finding,length", FINDINGS, ids=[f[0] for f in FINDINGS])
def test_the_real_controller_breaks_what_the_findings_say(real, prop, finding, length):
    v = real.properties[prop]
    assert v.status == KNOWN and v.findings[finding].length == length


def test_resignation_resets_the_context_and_the_same_broker_starts_from_zookeeper():
    model = ReassignmentModel("zk", Bounds(brokers=3, rf=2, reassigns=1, failovers=1, **EVENTS))
    s = walk(model, [A.Reassign("t", 0, (2, 3)), A.ControllerStep("t", 0), A.LeaderExpandIsr("t", 0, 3),
                     A.ControllerResign()]).cluster
    assert s.partition("t", 0).adding == (3,)  # ZooKeeper keeps the reassignment, the controller forgets it
    zk = s.zk
    assert not zk.active and zk.controller_id == 1 and zk.epoch == 1
    assert zk.memory == zk.being_reassigned == zk.pending == zk.leadership == ()
    elected = model.apply(s, A.ControllerElect(1)).state
    assert elected.zk.active and elected.zk.controller_id == 1 and elected.zk.epoch == 2
    assert elected == model.apply(replace(s, zk=reset_context(s.zk)), A.ControllerElect(1)).state


def test_a_leaders_isr_write_queues_its_notification_behind_the_run():
    model = ReassignmentModel("zk", Bounds(brokers=2, rf=2, targets=((2,),), reassigns=1, **EVENTS))
    s = walk(model, [A.Reassign("t", 0, (2,)), A.LeaderShrinkIsr("t", 0, 2)]).cluster
    assert s.zk.pending == (("t", 0, "U"), ("t", 0, C.NOTIFICATION))  # the run first, then the notification
    assert s.partition("t", 0).isr == (1,)  # in ZooKeeper; the cache still has 2
    assert C.cached_leadership(s.zk, "t", 0, s.partition("t", 0))[1] == (1, 2)
    after = model.apply(s, A.ControllerStep("t", 0)).state
    assert C.next_step(after.zk, "t", 0) == "A1"  # decided on ZooKeeper's ISR: not complete
    # without the capability the leader's write waits until the run is over
    plain = ReassignmentModel("zk", Bounds(brokers=2, rf=2, targets=((2,),), reassigns=1, zk_versions=True))
    s = walk(plain, [A.Reassign("t", 0, (2,))])
    assert A.LeaderShrinkIsr("t", 0, 2) not in plain.actions(s)


def test_the_actions_and_the_identity_round_trip_through_the_codec():
    for a in (A.ControllerResign(), A.ControllerElect(3)):
        assert decode_action(to_json(a)) == a
    model = ReassignmentModel("zk", Bounds(brokers=2, rf=1, failovers=1, zk_events=True))
    s = walk(model, [A.ControllerResign()]).cluster
    assert state_from_json(to_json(s)) == s and to_json(s)["zk"]["controller_id"] == 1
    assert "controller_id" not in to_json(ReassignmentModel("zk", Bounds()).init_states()[0].cluster)["zk"]


def test_failover_is_replaced_by_resign_and_elect_from_the_failovers_budget():
    model = ReassignmentModel("zk", Bounds(brokers=2, rf=1, failovers=1, zk_events=True))
    s0 = model.init_states()[0]
    kinds = {type(a) for a in model.actions(s0)}
    assert A.ControllerResign in kinds and A.ControllerFailover not in kinds
    s1 = model.next_state(s0, A.ControllerResign())
    assert A.ControllerResign() not in model.actions(s1)
    assert {a for a in model.actions(s1) if isinstance(a, A.ControllerElect)} == {A.ControllerElect(1),
                                                                                   A.ControllerElect(2)}
    s2 = model.next_state(s1, A.ControllerElect(2))
    assert s2.cluster.zk.controller_id == 2 and A.ControllerResign() not in model.actions(s2)  # budget spent


def test_zk_events_is_for_the_zk_profile_only_and_off_by_default():
    with pytest.raises(ConfigError, match="zk_events"):
        ReassignmentModel("kraft", Bounds(zk_events=True))
    names = {p.name for p in ReassignmentModel("zk", Bounds()).properties()}
    assert not names & set(ZK_EVENT_PROPERTY_NAMES)
    assert ReassignmentModel("zk", Bounds()).init_states()[0].cluster.zk.controller_id is None
    with pytest.raises(InvalidAction):  # the identity is not modelled without the bound
        Capabilities().apply(ZkProfile(), ReassignmentModel("zk", Bounds()).init_states()[0].cluster,
                             A.ControllerResign())


PLUMBING = (A.Reassign("t", 0, (2, 3)), A.ControllerStep("t", 0), A.LeaderExpandIsr("t", 0, 3), A.ControllerResign(),
            A.ControllerElect(2), A.ControllerStep("t", 0))


def test_available_to_replay_validate_trace_and_the_oracle(tmp_path):
    model = ReassignmentModel("zk", Bounds(brokers=3, rf=2, reassigns=1, failovers=1, **EVENTS))
    state = model.init_states()[0]
    path = [(state, None)]
    for a in PLUMBING:
        assert a in model.actions(state), a
        state, label = model.step(state, a)
        path.append((state, label))
    file = tmp_path / "zk__events.json"
    write_trace(trace_from_path(model, "reassignment", "controller_epoch_increases", "transition", path), str(file))
    trace = read_trace(str(file))
    assert replay(trace).steps_matched == len(PLUMBING)
    lines = [json.dumps({"initial_state": trace.initial["cluster"], "profile": "zk"})]
    lines += [json.dumps({"action": s["action"], "state": s["kafka_state"]}) for s in trace.steps]
    assert validate_text("\n".join(lines), "jsonl").verdict == "VALID"
    wrong = json.loads(lines[5])  # ControllerElect(2) answered with the old epoch
    wrong["state"]["zk"]["epoch"] = 1
    result = validate_text("\n".join(lines[:5] + [json.dumps(wrong)]), "jsonl")
    assert result.verdict == "INVALID" and result.failed.line == 6
    oracle, current = Oracle("zk"), trace.initial["cluster"]
    for s in trace.steps:
        reply = oracle.handle({"id": 1, "op": "step", "state": current, "action": s["action"]})
        assert reply["ok"] and reply["result"]["state"] == s["kafka_state"], reply
        current = s["kafka_state"]


def test_fuzz_takes_the_flag(tmp_path, capsys):
    code = main(["fuzz", "--profile", "zk", "--brokers", "2", "--rf", "1", "--reassigns", "1", "--failovers", "1",
                 "--zk-versions", "--zk-events", "--examples", "15", "--steps", "6", "--seed", "3", "--json",
                 "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["bounds"]["zk_events"] and out["unexpected_violations"] == 0
    assert out["properties"]["controller_epoch_increases"]["status"] != "not-checked"
