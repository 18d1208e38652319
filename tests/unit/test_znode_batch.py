"""/admin/reassign_partitions batches and the forced cancel before KIP-455 (issue 26, item 3; bounds znode_batch):
the batch as the controller takes it (reference/zk_znode_batch.py), the properties of
spec/znode_batch_properties.py, each caught on a deliberately broken controller, and what the real `zk`
profile (and the pre-2.4 start-up) do under the forced cancel."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, ConfigError, bounds_from_mapping
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.server import Oracle
from kreassign.checker.traces.format import read_trace, trace_from_path, write_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.validation import validate_text
from kreassign.reference import profile
from kreassign.reference import zk_controller as C
from kreassign.reference.capabilities import KAFKA
from kreassign.reference.steps import Step
from kreassign.reference.zk import MSG_ZNODE_BUSY, ZkProfile
from kreassign.reference.zk_znode_batch import ZkPre24Profile, ZnodeBatch, flatten_unrecorded_reassignments
from kreassign.spec import actions as A
from kreassign.spec.codec import decode_action, to_json
from kreassign.spec.messages import NONE, REASSIGNMENT_IN_PROGRESS
from kreassign.spec.state import make_cluster
from kreassign.spec.znode_batch_properties import entries_not_acted_on, orphan_reassignments

from kreassign.cli import main

ZK = profile("zk")
BATCH = A.ZnodeReassignBatch((("t", 0, (2,)), ("t", 1, (3,))))


def _start(assignment=((1,), (1,))):
    return ZK.initial_state(make_cluster([1, 2, 3], {"t": [list(r) for r in assignment]}))


def _run(state, *actions, prof=ZK):
    for a in actions:
        state = KAFKA.apply(prof, state, a).state
    return state


def _complete(state, partition, broker, prof=ZK):
    """Run the partition's pending steps, let the adding replica join the ISR, and finish phase B."""
    while C.next_step(state.zk, "t", partition):
        state = _run(state, A.ControllerStep("t", partition), prof=prof)
    state = _run(state, A.LeaderExpandIsr("t", partition, broker), prof=prof)
    while C.next_step(state.zk, "t", partition):
        state = _run(state, A.ControllerStep("t", partition), prof=prof)
    return state


# -- the mechanism ----------------------------------------------------------------------------------


def test_a_batch_is_one_write_taken_partition_by_partition_and_deleted_when_done():
    s = _run(_start(), BATCH)
    assert s.zk.admin_znode == (("t", 0, (2,)), ("t", 1, (3,)))
    assert {(t, p) for t, p, _ in s.zk.being_reassigned} == {("t", 0), ("t", 1)}
    s = _complete(s, 0, 2)
    assert s.partition("t", 0).replicas == (2,)
    assert s.zk.admin_znode == (("t", 1, (3,)),)  # rewritten without the completed entry
    s = _complete(s, 1, 3)
    assert s.zk.admin_znode == () and s.zk.being_reassigned == ()  # deleted with the last entry


def test_the_tool_refuses_a_batch_while_the_znode_exists():
    s = _run(_start(), BATCH)
    step = KAFKA.apply(ZK, s, A.ZnodeReassignBatch((("t", 0, (3,)), ("t", 1, (2,)))))
    assert step.state == s
    assert (step.response.error_code, step.response.error_message) == (REASSIGNMENT_IN_PROGRESS, MSG_ZNODE_BUSY)


def test_deleting_the_znode_does_not_stop_the_controller_and_a_bounce_resumes_2_4():
    s = _run(_start(), BATCH, A.ControllerStep("t", 0))
    s = _run(s, A.ZnodeDelete())
    assert s.zk.admin_znode == () and len(s.zk.being_reassigned) == 2  # the controller is not told
    s = _run(s, A.ControllerFailover())  # Kafka >= 2.4: maybeResumeReassignments from the topic znode
    # t-0's step U had written the topic znode: resumed; t-1's had not: only the deleted znode named it
    assert s.zk.being_reassigned == (("t", 0, (2,)),) and not s.partition("t", 1).reassigning
    assert orphan_reassignments(C.drain(s)) == [] and entries_not_acted_on(s) == []


def test_the_pre_2_4_bounce_leaves_target_and_original_as_a_plain_assignment():
    pre = ZkPre24Profile()
    s = _run(_start(), BATCH, A.ControllerStep("t", 0), A.ControllerStep("t", 1), A.ZnodeDelete(),
             A.ControllerFailover(), prof=pre)
    for i in (0, 1):
        part = s.partition("t", i)
        assert set(part.replicas) == {1, 2 + i} and not part.reassigning  # target ∪ original, for good
    assert s.zk.being_reassigned == () and orphan_reassignments(s) == []
    # entries still in the znode are resumed by the pre-2.4 start-up too
    s = _run(_start(), BATCH, A.ControllerStep("t", 0), A.ControllerStep("t", 1), prof=pre)
    assert flatten_unrecorded_reassignments(s) == s
    s = _run(s, A.ControllerFailover(), prof=pre)
    assert s.zk.being_reassigned == (("t", 0, (2,)), ("t", 1, (3,))) and s.partition("t", 0).reassigning


def test_the_actions_round_trip_and_print_in_kafkas_words():
    for a in (BATCH, A.ZnodeDelete()):
        assert decode_action(to_json(a)) == a
    assert str(BATCH) == "ZnodeReassignBatch(t-0 -> [2], t-1 -> [3])"


def test_bad_bounds_name_the_key():
    with pytest.raises(ConfigError, match="znode_batch"):
        Bounds(partitions=2, znode_batch=True)
    with pytest.raises(ConfigError, match="znode_batch"):
        bounds_from_mapping({"znode": True, "znode_batch": True})
    for name in ("kraft", "kip236"):  # kip236 keeps no content of /admin/reassign_partitions (docs)
        with pytest.raises(ConfigError, match="znode_batch"):
            ReassignmentModel(name, Bounds(partitions=2, znode=True, znode_batch=True))


def test_off_by_default():
    names = {p.name for p in ReassignmentModel("zk", Bounds(partitions=2, znode=True)).properties()}
    assert "znode_entries_being_reassigned" not in names
    m = ReassignmentModel("zk", Bounds(partitions=2, znode=True))
    assert not any(isinstance(a, A.ZNODE_BATCH_ACTIONS) for a in m.actions(m.init_states()[0]))
    m = ReassignmentModel("zk", Bounds(partitions=2, rf=1, znode=True, znode_batch=True))
    assert sum(isinstance(a, A.ZnodeReassignBatch) for a in m.actions(m.init_states()[0])) == 9


# -- broken controllers ------------------------------------------------------------------------------


class DeletesZnodeOnFirstCompletion(ZkProfile):
    """Broken on purpose: when one partition of the batch completes (B7), the whole znode is deleted
    (the premature deletion of KAFKA-6193)."""

    def controller_step(self, state, topic, partition):
        last = state.zk.active and C.next_step(state.zk, topic, partition) == "B7"
        step = super().controller_step(state, topic, partition)
        if last:
            return Step(replace(step.state, zk=replace(step.state.zk, admin_znode=())), step.response)
        return step


class KeepsCompletedEntries(ZkProfile):
    """Broken on purpose: B7 leaves the completed partition's entry in the znode (a zombie entry, the shape of
    KAFKA-9478): the znode is never deleted and every later batch is refused."""

    def controller_step(self, state, topic, partition):
        last = state.zk.active and C.next_step(state.zk, topic, partition) == "B7"
        step = super().controller_step(state, topic, partition)
        if last:
            return Step(replace(step.state, zk=replace(step.state.zk, admin_znode=state.zk.admin_znode)),
                        step.response)
        return step


def first_entry_only(prof, state, entries):
    """Broken on purpose: the znode holds the batch, the controller triggers its first entry only."""
    step = prof.znode_reassign_all(state, entries[:1])
    if step.response.error_code != NONE:
        return step
    return Step(replace(step.state, zk=replace(step.state.zk, admin_znode=tuple(sorted(entries)))), step.response)


class ResumesOnlyTheZnode(ZkProfile):
    """Broken on purpose: a >= 2.4 controller whose start-up reads /admin/reassign_partitions only (no
    maybeResumeReassignments): after the forced cancel the half-moved partitions are nobody's."""

    def controller_failover(self, state):
        step = super().controller_failover(state)
        zk = step.state.zk
        named = {(t, p) for t, p, _ in zk.admin_znode}
        zk = replace(zk, being_reassigned=tuple(e for e in zk.being_reassigned if (e[0], e[1]) in named),
                     pending=tuple(e for e in zk.pending if (e[0], e[1]) in named))
        return Step(replace(step.state, zk=zk), step.response)


def _with_batch_rule(write):
    def factory(_p, b):
        m = ReassignmentModel("zk", b)
        m.capabilities = replace(m.capabilities, znode_batch=ZnodeBatch(write=write))
        return m
    return factory


SMALL = Bounds(brokers=2, partitions=2, rf=1, reassigns=1, cancels=0, failovers=0, znode=True, znode_batch=True)
FORCED = replace(SMALL, cancels=1, failovers=1)
LASSO = 9  # the lasso: the batch, t-0 moved (its zombie entry kept), then a fair loop that never deletes

BROKEN = [
    # property, variant, bounds, factory, counterexample length
    ("znode_entry_removed_only_when_done", "deletes the znode when the first partition completes (KAFKA-6193)",
     SMALL, lambda _p, b: ReassignmentModel(DeletesZnodeOnFirstCompletion(), b), 9),
    ("znode_entries_being_reassigned", "triggers only the first entry of the batch", SMALL,
     _with_batch_rule(first_entry_only), 1),
    ("half_moved_partition_resumed", "start-up reads only the znode (no maybeResumeReassignments)", FORCED,
     lambda _p, b: ReassignmentModel(ResumesOnlyTheZnode(), b), 3),
    ("znode_batch_drains", "B7 keeps the completed entry (a zombie, KAFKA-9478)", replace(SMALL, fair=True),
     lambda _p, b: ReassignmentModel(KeepsCompletedEntries(), b), LASSO),
]


@pytest.mark.parametrize("prop,variant,bounds,factory,length", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_controller_is_caught(prop, variant, bounds, factory, length, tmp_path):
    caught = check_model("zk", bounds, factory=factory, minimize_counterexamples=False, out_dir=str(tmp_path))
    v = caught.properties[prop]
    assert v.status == VIOLATED and prop in caught.unexpected and v.length == length


def test_the_real_zk_controller_keeps_them():
    """At the broken variants' bounds and with the forced cancel, the real controller keeps every property."""
    for bounds in (SMALL, FORCED, replace(SMALL, fair=True)):
        result = check_model("zk", bounds, minimize_counterexamples=False)
        assert result.unexpected == []
        for prop, *_ in BROKEN:
            if prop in result.properties:  # the liveness property comes with fair only
                assert result.properties[prop].status == HOLDS
    assert "znode_batch_drains" in result.properties


def test_the_pre_2_4_forced_cancel_leaves_partitions_over_replicated():
    """Kafka < 2.4: the bounce turns the half-moved partition into a plain target ∪ original; it keeps the
    batch properties, and the reassignment ends with more replicas than the admin asked for."""
    result = check_model("zk", FORCED, factory=lambda _p, b: ReassignmentModel(ZkPre24Profile(), b),
                         minimize_counterexamples=False)
    for prop, *_ in BROKEN[:3]:
        assert result.properties[prop].status == HOLDS
    v = result.properties["replication_factor_restored"]
    assert v.status == VIOLATED and v.length == 3  # shortest through the API route, which 2.3 did not have
    # ... and through the forced cancel itself: the bounce ends t-0's reassignment with [1, 2] for [2]
    model = ReassignmentModel(ZkPre24Profile(), FORCED)
    prop = next(p for p in model.properties() if p.name == "replication_factor_restored")
    s = model.init_states()[0]
    for a in (A.ZnodeReassignBatch((("t", 0, (2,)), ("t", 1, (1,)))), A.ControllerStep("t", 0), A.ZnodeDelete()):
        s = model.next_state(s, a)
    after, edge = model.step(s, A.ControllerFailover())
    assert not prop.predicate(s, edge, after) and after.cluster.partition("t", 0).replicas == (2, 1)
    real = ReassignmentModel("zk", FORCED)
    after, edge = real.step(s, A.ControllerFailover())
    assert prop.predicate(s, edge, after) and after.cluster.partition("t", 0).reassigning  # >= 2.4: resumed


# -- outside check: replay, validate-trace, the oracle, fuzz --------------------------------------------------

PLUMBING = (A.ZnodeReassignBatch((("t", 0, (2,)), ("t", 1, (1,)))), A.ControllerStep("t", 0), A.ZnodeDelete(),
            A.ControllerFailover())


def test_replay_validate_trace_and_the_oracle_take_the_new_actions(tmp_path):
    model = ReassignmentModel("zk", FORCED)
    state = model.init_states()[0]
    path = [(state, None)]
    for a in PLUMBING:
        assert a in model.actions(state), a  # the explorer could take this path
        state, label = model.step(state, a)
        path.append((state, label))
    file = tmp_path / "zk__znode_batch.json"
    write_trace(trace_from_path(model, "reassignment", "half_moved_partition_resumed", "always", path), str(file))
    trace = read_trace(str(file))
    result = replay(trace)
    assert result.steps_matched == len(PLUMBING)
    lines = [json.dumps({"initial_state": trace.initial["cluster"], "profile": "zk"})]
    lines += [json.dumps({"action": st["action"], "state": st["kafka_state"]}) for st in trace.steps]
    assert validate_text("\n".join(lines) + "\n", "jsonl").verdict == "VALID"
    # a run whose ZnodeDelete also drops the controller's work is invalid at that line
    bad = json.loads(lines[3])
    bad["state"]["zk"]["being_reassigned"] = []
    broken = lines[:3] + [json.dumps(bad)] + lines[4:]
    got = validate_text("\n".join(broken) + "\n", "jsonl")
    assert got.verdict == "INVALID" and got.failed.line == 4
    oracle = Oracle("zk")
    before = trace.initial["cluster"]
    for st in trace.steps:
        r = oracle.handle({"id": 1, "op": "step", "state": before, "action": st["action"]})
        assert r["ok"] and r["result"]["state"] == st["kafka_state"], r
        before = st["kafka_state"]
    # the oracle's check judges a controller that drops the second entry of the batch by the batch properties
    first = trace.steps[0]
    dropped = json.loads(json.dumps(first["kafka_state"]))
    dropped["zk"]["being_reassigned"] = dropped["zk"]["being_reassigned"][:1]
    dropped["zk"]["pending"] = dropped["zk"]["pending"][:1]
    got = oracle.handle({"id": 2, "op": "check", "state": trace.initial["cluster"], "action": first["action"],
                         "observed_state": dropped})["result"]
    assert got["verdict"] == "mismatch"
    assert [(v["name"], v["reference_also"]) for v in got["violated"]] == [("znode_entries_being_reassigned", False)]


def test_check_and_fuzz_take_the_flag(tmp_path, capsys):
    code = main(["fuzz", "--profile", "zk", "--brokers", "2", "--partitions", "2", "--rf", "1", "--reassigns", "1",
                 "--cancels", "1", "--failovers", "1", "--znode", "--znode-batch", "--examples", "15", "--steps", "6",
                 "--seed", "3", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["unexpected_violations"] == 0 and out["bounds"]["znode_batch"]
    assert out["properties"]["znode_entries_being_reassigned"]["status"] != "not-checked"
    assert main(["check", "--profile", "zk", "--partitions", "2", "--znode-batch"]) == 2  # needs --znode


#: bench/issue26_capabilities.py
BENCH_ROWS = [(prop, variant, "zk", bounds, factory) for prop, variant, bounds, factory, _ in BROKEN] + [
    ("replication_factor_restored", "pre-2.4 start-up: the forced cancel leaves target ∪ original", "zk", FORCED,
     lambda _p, b: ReassignmentModel(ZkPre24Profile(), b)),
    ("half_moved_partition_resumed", "real zk, forced cancel (holds)", "zk", FORCED,
     lambda _p, b: ReassignmentModel("zk", b)),
]
