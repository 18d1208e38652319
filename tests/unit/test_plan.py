"""`kreassign plan`: shapes, per-shape verdicts (with deliberately broken controllers caught),
phases, the CLI's exit codes and outputs, and a 200-partition plan of a realistic cluster."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from kreassign.checker.config.engine_options import DEFAULT_ENGINE, EngineOptions
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.plan.check import NOTE, RISK, PlanOptions, check_shape, spec_model
from kreassign.checker.plan.model import PlanPartitionModel, shape_bounds
from kreassign.checker.plan.shapes import PartitionMove, shape_of
from kreassign.reference.kraft import KraftProfile
from kreassign.spec import actions as A
from kreassign.spec.state import NO_LEADER

from kreassign.cli import main

sys.path.insert(0, str(Path(__file__).parent))
import plan_cluster

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def move(current, target, isr=None, leader=None, **kw):
    return PartitionMove("orders", 7, tuple(current), tuple(target), tuple(isr or current),
                         current[0] if leader is None else leader, **kw)


# -- shapes ------------------------------------------------------------------------------------


def test_shapes_rename_in_id_order_and_dedupe():
    a, back = shape_of(move([101, 102, 103], [102, 103, 104]))
    b, _ = shape_of(move([5, 7, 9], [7, 9, 12]))
    assert a == b and (a.current, a.target) == ((1, 2, 3), (2, 3, 4))
    assert back == {1: 101, 2: 102, 3: 103, 4: 104}
    # KRaft sorts adding/removing by id: a move into a *lower* id is another shape
    c, _ = shape_of(move([5, 7, 9], [7, 9, 1]))
    assert c != a
    spare, back = shape_of(move([1, 2], [2, 3]), spare=1)
    assert spare.brokers == 4 and back[4] == -1


# -- verdicts ---------------------------------------------------------------------------------------


def findings(shape_move, **options):
    shape, _ = shape_of(shape_move)
    return {f.property: f for f in check_shape(shape, PlanOptions(**options)).findings}


def test_kraft_simple_move_has_no_risk_and_the_cancel_order_note():
    f = findings(move([1, 2, 3], [2, 3, 4], min_isr=2), kafka_version="4.2.2")
    assert all(x.severity == NOTE for x in f.values())
    assert f["cancel_restores_original_order"].finding == "merged_order"
    assert "isr_meets_min_insync_replicas" not in f  # one failure leaves 2 in sync


def test_zk_cancel_leaderless_is_a_risk():
    f = findings(move([1, 2], [2, 3]), profile="zk")
    assert f["admin_action_keeps_a_leader"].severity == RISK
    assert f["admin_action_keeps_a_leader"].trace["steps"]


def test_min_isr_failure_sets_and_existing_ones():
    f = findings(move([1, 2], [2, 3], min_isr=2))["isr_meets_min_insync_replicas"]
    assert f.severity == NOTE  # RF 2 with min.insync.replicas 2: one failure is already too many today
    assert set(f.failure_sets) == {(1,), (2,)} and set(f.existing) == {(1,), (2,)}
    assert "isr_meets_min_insync_replicas" not in findings(move([1, 2], [2, 3], min_isr=2), failures=0)


def test_an_initially_lagging_follower_comes_from_describe():
    # ISR [1] only: losing broker 1 leaves no clean leader, before and during the move
    f = findings(move([1, 2, 3], [2, 3, 4], isr=[1]))
    assert f["partition_has_leader"].failure_sets == [(1,)]
    assert f["clean_leader_available"].severity == NOTE


class DropsLeaderOnReassign(KraftProfile):
    """Broken on purpose: starting a reassignment forgets the leader."""

    name = "drops-leader"

    def apply(self, state, action):
        step = super().apply(state, action)
        if isinstance(action, A.Reassign):
            p = step.state.partition(action.topic, action.partition)
            if p.reassigning:
                step = replace(step, state=step.state.with_partition(action.topic, action.partition,
                                                                     replace(p, leader=NO_LEADER)))
        return step


class NeverCompletes(KraftProfile):
    """Broken on purpose: a reassignment never completes."""

    name = "never-completes"
    completion_rule = staticmethod(lambda r, i, adding, removing=(): False)


def test_a_controller_that_drops_the_leader_is_a_risk_with_no_failure_at_all():
    shape, _ = shape_of(move([1, 2, 3], [2, 3, 4]))
    f = {x.property: x for x in check_shape(shape, PlanOptions(DropsLeaderOnReassign())).findings}
    assert f["partition_has_leader"].severity == RISK and () in f["partition_has_leader"].failure_sets
    assert f["admin_action_keeps_a_leader"].severity == RISK


def test_a_controller_that_never_completes_is_a_risk():
    shape, _ = shape_of(move([1, 2], [2, 3]))
    f = {x.property: x for x in check_shape(shape, PlanOptions(NeverCompletes())).findings}
    assert f["reassignment_can_finish"].severity == RISK


def test_phases_follow_the_reference():
    shape, _ = shape_of(move([1, 2, 3], [2, 3, 4]))
    phases = check_shape(shape, PlanOptions()).phases
    assert [(p.replicas, p.adding, p.removing) for p in phases] == [
        ((1, 2, 3), (), ()), ((2, 3, 4, 1), (4,), (1,)), ((2, 3, 4), (), ())]
    assert max(len(p.replicas) for p in phases) == 4


def test_a_partition_starting_like_the_plain_model_gets_it_and_the_same_answers():
    # the spec's properties run on ReassignmentModel itself (the packed path) only when it starts
    # where the partition does; a lagging follower, a missing leader or a down broker keep theirs
    cases = [(move([1, 2, 3], [2, 3, 4], min_isr=2), True), (move([1, 2], [2, 3]), True),
             (move([1, 2, 3], [2, 3, 4], isr=[1]), False), (move([1, 2], [2, 3], leader=NO_LEADER), False),
             (move([1, 2], [2, 3], down=(2,)), False)]
    for m, plain in cases:
        shape, _ = shape_of(m)
        bounds = shape_bounds(shape, failures=1, failovers=0, cancel=True, overrides=0)
        model = spec_model("kraft", bounds, shape)
        assert (type(model) is ReassignmentModel) == plain
        assert model.init_states() == PlanPartitionModel("kraft", bounds, shape).init_states()
    shape, _ = shape_of(cases[0][0])

    def answers(engine_options=DEFAULT_ENGINE):
        r = check_shape(shape, PlanOptions(), engine_options)
        return [(f.severity, f.property, f.finding, f.trace, f.failure_sets) for f in r.findings], r.states, r.complete

    fast = answers()
    assert answers(EngineOptions(fast=False)) == fast and fast[2]  # the object engine on the same model


# -- the command line ----------------------------------------------------------------------------------


def run(capsys, *argv):
    code = main(["plan", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_examples_kraft_and_zk(capsys, tmp_path):
    files = [EXAMPLES / "plan.json", "--current", EXAMPLES / "current.json", "--describe", EXAMPLES / "describe.txt",
             "--jobs", "1"]
    # Kafka 4.2: no risk; from 4.3 (KAFKA-19975) completion may leave a retained replica out of sync: a risk
    code, out, _ = run(capsys, *files, "--json")
    newest = json.loads(out)
    assert code == 1 and len(newest["risks"]) == 1
    assert "[completion_reaches_target: known finding completion_ignores_non_adding_target]" in newest["risks"][0]
    code, out, _ = run(capsys, *files, "--kafka-version", "4.2.2", "--json", "--rollback-out", tmp_path / "rollback.json")
    data = json.loads(out)
    assert code == 0 and data["risks"] == [] and len(data["partitions"]) == 5
    assert (tmp_path / "rollback.json").read_text().strip() == data["rollback"]
    assert data["rollback"] == (EXAMPLES / "current.json").read_text().strip()  # sorted already, log_dirs kept
    p0 = data["partitions"][0]
    assert (p0["partition"], p0["gaining"], p0["peak_rf"], p0["leader_after"]) == ("orders-0", [4], 4, 2)
    code, out, _ = run(capsys, *files, "--profile", "zk", "--out", tmp_path / "traces")
    assert code == 1 and "Risks (" in out and "admin_action_keeps_a_leader" in out
    assert any(p.name.startswith("orders-0__admin_action_keeps_a_leader") for p in (tmp_path / "traces").iterdir())


def test_cli_bad_input_exits_2_naming_file_and_field(capsys, tmp_path):
    bad = tmp_path / "plan.json"
    bad.write_text('{"version":1,"partitions":[{"topic":"orders","partition":9,"replicas":[1,2]}]}')
    code, _, err = run(capsys, bad, "--current", EXAMPLES / "current.json")
    assert code == 2 and err.startswith("kreassign") and len(err.strip().splitlines()) == 1
    assert err.strip().endswith(f"{bad}: partitions[0]: orders-9 is not in {EXAMPLES / 'current.json'}")
    code, _, err = run(capsys, EXAMPLES / "describe.txt", "--current", EXAMPLES / "current.json")
    assert code == 2 and "this looks like the text output of kafka-topics.sh --describe" in err
    code, _, err = run(capsys, EXAMPLES / "plan.json")
    assert code == 2 and "need the current assignment" in err
    old = tmp_path / "describe.txt"
    old.write_text((EXAMPLES / "describe.txt").read_text().replace("Replicas: 1,2,3\tIsr: 1,2,3", "Replicas: 1,2,6\tIsr: 1,2,6"))
    code, _, err = run(capsys, EXAMPLES / "plan.json", "--current", EXAMPLES / "current.json", "--describe", old)
    assert code == 2 and "line 2" in err and "different moments" in err
    out_file = tmp_path / "keep.json"
    out_file.write_text("precious")
    code, _, _ = run(capsys, bad, "--current", EXAMPLES / "current.json", "--rollback-out", out_file)
    assert code == 2 and out_file.read_text() == "precious"


@pytest.mark.slow
def test_a_200_partition_plan_of_a_realistic_cluster(capsys, tmp_path):
    paths, current, plan = plan_cluster.write_files(tmp_path)
    code, out, _ = run(capsys, paths["plan.json"], "--current", paths["current.json"], "--describe",
                       paths["describe.txt"], "--jobs", "2", "--json")
    data = json.loads(out)
    assert len(data["partitions"]) == len(plan) == 200
    assert all(p["verdict"] in ("ok", "note", "risk") and p["phases"] for p in data["partitions"])
    assert data["shapes"] < 200  # partitions of one shape share one check
    assert code == (1 if data["risks"] else 0)
    expected = sorted(current.items())
    assert json.loads(data["rollback"])["partitions"] == [
        {"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)} for (t, p), r in expected]


def test_load_moves_joins_the_files_with_live_brokers_and_in_flight_moves():
    from kreassign.checker.plan.formats import parse_describe, parse_plan
    from kreassign.checker.plan.run import load_moves

    plan = parse_plan('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}', "p.json")
    describe = parse_describe("Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: min.insync.replicas=2\n"
                              "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 4,1,2\tIsr: 1\t"
                              "Adding Replicas: 4\tRemoving Replicas: \n", "d.txt")
    (m,) = load_moves(plan, "p.json", None, None, describe, "d.txt", live={1, 3})
    assert (m.current, m.isr, m.leader, m.min_isr) == ((1, 2), (1,), 1, 2)
    assert m.down == (2,) and m.in_flight == ((4,), ())
    (m,) = load_moves(plan, "p.json", None, None, describe, "d.txt", live={2, 3})
    assert m.leader == NO_LEADER  # the described leader is not live


def test_zk_dedupes_under_any_renaming_and_the_verdicts_agree():
    # zk's rules never compare broker ids, so these two moves are one shape; checked apart (in id
    # order, which is sound for every profile) they must get the same answers
    a, b = move([1, 2], [2, 3]), move([3, 2], [2, 1])
    assert shape_of(a, any_order=True)[0] == shape_of(b, any_order=True)[0]
    assert shape_of(a)[0] != shape_of(b)[0]
    answers = []
    for m in (a, b):
        shape, _ = shape_of(m)
        answers.append(sorted((f.severity, f.property, f.finding) for f in check_shape(shape, PlanOptions("zk")).findings))
    assert answers[0] == answers[1]
