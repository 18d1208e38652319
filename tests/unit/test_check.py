"""The check pipeline: every checker feature is shown catching a deliberately broken variant."""

from __future__ import annotations

import json

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.models.bounds import Bounds, ConfigError, bounds_from_mapping
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.render import render_dot, render_table
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.format import read_trace, trace_from_json
from kreassign.reference.kraft import KraftProfile
from kreassign.spec.state import ordered_minus

from kreassign.cli import main

SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=0)


class CancelKeepsAddingInIsr(KraftProfile):
    """Broken on purpose: the revert forgets to drop adding replicas from the ISR."""

    name = "broken-cancel"

    def revert(self, part):
        return ordered_minus(part.replicas, part.adding), part.isr, False


class NeverCompletes(KraftProfile):
    """Broken on purpose: a reassignment never completes."""

    name = "never-completes"
    completion_rule = staticmethod(lambda r, i, adding: False)


def factory_for(prof):
    return lambda _name, bounds: ReassignmentModel(prof, bounds)


def test_broken_cancel_is_caught_with_a_shortest_replayable_trace(tmp_path):
    result = check_model("broken-cancel", SMALL, factory=factory_for(CancelKeepsAddingInIsr()), out_dir=str(tmp_path))
    v = result.properties["isr_in_replicas"]
    assert v.status == VIOLATED
    # shortest with 3 brokers: the adding replica must join the ISR without completing the
    # reassignment, so the retained target replica leaves the ISR first
    assert v.length == 4
    trace = read_trace(v.counterexample)
    assert [s["action"]["type"] for s in trace.steps] == ["Reassign", "LeaderShrinkIsr", "LeaderExpandIsr", "Cancel"]
    # the real kraft profile does not reproduce the broken trace: replay names the differing field
    trace.profile = "kraft"
    verdict = replay(trace)
    assert not verdict.reproduces and verdict.steps_matched == 3
    assert any(".isr" in d for d in verdict.diffs)


def test_real_kraft_holds_where_the_broken_variant_fails():
    result = check_model("kraft", SMALL)
    assert result.properties["isr_in_replicas"].status == HOLDS
    assert result.properties["reassignment_can_finish"].status == HOLDS


def test_liveness_finds_a_stuck_reassignment_with_its_loop(tmp_path):
    result = check_model("never-completes", SMALL, factory=factory_for(NeverCompletes()), out_dir=str(tmp_path),
                         minimize_counterexamples=False)
    v = result.properties["reassignment_can_finish"]
    assert v.status == VIOLATED
    trace = read_trace(v.counterexample)
    assert trace.steps[0]["action"]["type"] == "Reassign"
    assert trace.loop_start is not None and trace.loop_start < len(trace.steps)
    # the loop returns to the state it starts from
    assert trace.steps[-1]["state"] == (trace.steps[trace.loop_start - 1]["state"] if trace.loop_start else trace.initial)


def test_minimization_drops_unneeded_partitions_and_brokers(tmp_path):
    big = Bounds(brokers=4, partitions=2, rf=2, reassigns=1, cancels=1, failures=1)
    result = check_model("broken-cancel", big, factory=factory_for(CancelKeepsAddingInIsr()), out_dir=str(tmp_path))
    trace = read_trace(result.properties["isr_in_replicas"].counterexample)
    assert trace.bounds["partitions"] == 1
    assert trace.bounds["brokers"] == 3
    assert trace.bounds["failures"] == 0


def test_known_violation_is_reported_as_known(monkeypatch):
    from kreassign.spec import known_violations

    monkeypatch.setitem(known_violations.KNOWN, "kraft", {"adding_removing_disjoint": "counterexamples/x.json"})
    result = check_model("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=0))
    assert result.properties["adding_removing_disjoint"].status == KNOWN
    assert result.properties["adding_removing_disjoint"].counterexample == "counterexamples/x.json"


def test_show_and_dot_render_every_step(tmp_path):
    result = check_model("broken-cancel", SMALL, factory=factory_for(CancelKeepsAddingInIsr()), out_dir=str(tmp_path))
    trace = read_trace(result.properties["isr_in_replicas"].counterexample)
    table = render_table(trace)
    assert "Reassign(" in table and "Cancel(t-0)" in table and "*" in table
    dot = render_dot(trace)
    assert dot.count(" -> s") == len(trace.steps)


def test_trace_reading_names_bad_fields(tmp_path):
    with pytest.raises(ValueError, match="format_version"):
        trace_from_json({"format": "kreassign-trace", "format_version": 9})
    with pytest.raises(ValueError, match=r"steps\[0\].state: missing"):
        trace_from_json({"format": "kreassign-trace", "format_version": 1, "steps": [{"action": {}}]})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["show", str(bad)]) == 1
    assert main(["replay", str(bad)]) == 1


def test_check_cli_json_shape_and_exit_codes(tmp_path, capsys, monkeypatch):
    from kreassign.spec import known_violations

    args = ["check", "--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--cancels", "1", "--json",
            "--out", str(tmp_path)]
    monkeypatch.setattr(known_violations, "KNOWN", {})
    code = main(args)
    out = json.loads(capsys.readouterr().out)
    r = out["results"][0]
    assert set(r) >= {"profile", "engine", "bounds", "states", "transitions", "depth", "seconds", "properties"}
    assert r["profile"] == "kraft" and r["engine"] == "embedded"
    statuses = {v["status"] for v in r["properties"].values()}
    assert statuses <= {"holds", "violated", "known-violation"}
    assert code == (1 if out["unexpected_violations"] else 0)
    assert out["unexpected_violations"] == sum(v["status"] == "violated" for v in r["properties"].values())


def test_bad_configuration_names_the_key(tmp_path, capsys):
    assert main(["check", "--profile", "kraft", "--rf", "5", "--brokers", "3"]) == 2
    assert "rf" in capsys.readouterr().err
    cfg = tmp_path / "c.toml"
    cfg.write_text("[bounds]\nbrokers = 3\nbrokerz = 4\n")
    assert main(["check", "--config", str(cfg)]) == 2
    assert "bounds.brokerz: unknown key" in capsys.readouterr().err
    assert main(["check", "--profile", "nope"]) == 2
    with pytest.raises(ConfigError, match="initial"):
        bounds_from_mapping({"initial": [[1, 1]]})


class CancelAnswersErrorAfterReverting(KraftProfile):
    """Broken on purpose: the cancel reverts the partition but answers 39."""

    name = "dirty-cancel"

    def alter_partition_reassignments(self, state, request):
        from kreassign.spec import messages as M

        step = super().alter_partition_reassignments(state, request)
        rp = request.topics[0].partitions[0]
        if rp.replicas is None and step.state != state:
            bad = M.AlterPartitionReassignmentsResponse(responses=(M.ReassignableTopicResponse(
                request.topics[0].name, (M.ReassignablePartitionResponse(rp.partition_index, 39, "boom"),)),))
            return type(step)(step.state, bad)
        return step


def test_a_rejected_cancel_that_changed_the_state_is_caught():
    result = check_model("dirty-cancel", SMALL, factory=factory_for(CancelAnswersErrorAfterReverting()))
    assert result.properties["cancel_rejected_cleanly"].status == VIOLATED
    assert result.properties["cancel_rejected_cleanly"].length == 2  # Reassign, Cancel
    assert check_model("kraft", SMALL).properties["cancel_rejected_cleanly"].status == HOLDS


def test_replication_layer_data_loss_is_caught_only_with_unclean_elections():
    clean = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, replication=True, log_length=1)
    assert check_model("kraft", clean, liveness_check=False).properties["committed_records_kept"].status == HOLDS
    unclean = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, replication=True, log_length=1,
                     unclean=True)
    v = check_model("kraft", unclean, liveness_check=False).properties["committed_records_kept"]
    assert v.status == VIOLATED
    assert v.length == 3  # the follower leaves the ISR, the leader commits a record alone, then fails
