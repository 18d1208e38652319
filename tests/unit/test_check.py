"""The check pipeline: every checker feature is shown catching a deliberately broken variant."""

from __future__ import annotations

import json

import pytest
from kreassign.checker.check.minimize import minimize
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, ConfigError, bounds_from_mapping
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace, trace_from_json
from kreassign.checker.traces.render import render_dot, render_table
from kreassign.checker.traces.replay import replay
from kreassign.reference.kraft import KraftProfile
from kreassign.spec import kafka_releases
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
    completion_rule = staticmethod(lambda r, i, adding, removing=(): False)


def factory_for(prof):
    return lambda _name, bounds: ReassignmentModel(prof, bounds)


def test_broken_cancel_is_caught_with_a_shortest_replayable_trace(tmp_path):
    # at 3.9 (before KAFKA-19975 in 4.3 completes a one-replica move as soon as the adding replica joins)
    result = check_model("broken-cancel", SMALL, factory=factory_for(CancelKeepsAddingInIsr(kafka_version="3.9.2")),
                         out_dir=str(tmp_path))
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
    assert trace.bounds["failures"] == 0
    # 3 steps need a 4th broker (Reassign [3,4], 3 joins, Cancel); with 3 brokers the shortest takes 4
    # (the retained replica must fail first), so minimization keeps the 4 brokers: never a longer trace
    assert trace.bounds["brokers"] == 4 and len(trace.steps) == 3


def test_a_violation_matching_a_signature_is_reported_as_its_finding():
    result = check_model("kraft", Bounds(brokers=3, rf=2, reassigns=2, cancels=0))
    v = result.properties["adding_removing_disjoint"]
    assert v.status == KNOWN and "adding_removing_disjoint" not in result.unexpected
    assert v.counterexample == "counterexamples/kraft__adding_removing_disjoint__stale_adding_replica.json"
    assert v.findings["stale_adding_replica"].length == v.length and v.findings["stale_adding_replica"].expected
    out = result.to_json()["properties"]["adding_removing_disjoint"]
    assert out["findings"]["stale_adding_replica"]["trace"] == v.counterexample and out["missing_findings"] == []


def test_minimization_never_lengthens_the_trace_and_reports_both_bounds(tmp_path):
    """The engine's path is a shortest one at the requested bounds; the written one is no longer."""
    big = Bounds(brokers=4, partitions=2, rf=2, reassigns=1, cancels=1, failures=1)
    model = factory_for(CancelKeepsAddingInIsr())
    plain = check_model("broken-cancel", big, factory=model, liveness_check=False, minimize_counterexamples=False)
    small = check_model("broken-cancel", big, factory=model, liveness_check=False, out_dir=str(tmp_path))
    violated = [n for n, v in small.properties.items() if v.status == VIOLATED]
    assert "isr_in_replicas" in violated
    assert small.properties["isr_in_replicas"].minimized_to["partitions"] == 1  # it did shrink something
    for name, v in small.properties.items():
        if v.status == VIOLATED:
            assert v.length == plain.properties[name].length, name
            trace = read_trace(v.counterexample)
            assert len(trace.steps) == v.length
            assert trace.found_at == json.loads(json.dumps(big.to_json())) == v.found_at
            # the trace's bounds also name the release and ELR its rules followed (ReassignmentModel.describe)
            assert {k: x for k, x in trace.bounds.items() if k not in ("kafka_version", "elr")} == v.minimized_to
            assert (trace.bounds["kafka_version"], trace.bounds["elr"]) == (kafka_releases.NEWEST, "on")
            j = small.to_json()["properties"][name]
            assert j["found_at"] == v.found_at and j["minimized_to"] == v.minimized_to


def test_minimize_keeps_a_smaller_configuration_only_if_the_path_is_no_longer():
    found = ([("s0", None)] + [("s", "a")] * 4, None)  # a 4-step path at the requested bounds
    lengths = {3: 4, 2: 7}  # brokers -> steps of the shortest violation there

    def search(b):
        steps = lengths.get(b.brokers)
        return None if steps is None else ([("s0", None)] + [("s", "a")] * steps, None)

    bounds, (path, _) = minimize(Bounds(brokers=4, rf=2, reassigns=1, cancels=0), found, search)
    assert bounds.brokers == 3 and len(path) - 1 == 4  # 2 brokers would need 7 steps: not taken
    # the replication factor is never lowered with the brokers
    bounds, _ = minimize(Bounds(brokers=3, rf=3, reassigns=1, cancels=0), found, lambda b: found)
    assert (bounds.brokers, bounds.rf) == (3, 3)


def test_show_and_dot_render_every_step(tmp_path):
    result = check_model("broken-cancel", SMALL, factory=factory_for(CancelKeepsAddingInIsr(kafka_version="3.9.2")),
                         out_dir=str(tmp_path))
    trace = read_trace(result.properties["isr_in_replicas"].counterexample)
    table = render_table(trace)
    assert "Reassign(" in table and "Cancel(t-0)" in table and "*" in table
    dot = render_dot(trace)
    assert dot.count(" -> s") == len(trace.steps)


def test_trace_reading_names_bad_fields(tmp_path):
    with pytest.raises(ValueError, match="format_version"):
        trace_from_json({"format": "kreassign-trace", "format_version": 9})
    with pytest.raises(ValueError, match=r"steps\[0\].state: missing"):
        trace_from_json({"format": "kreassign-trace", "format_version": 1, "initial_state": {},
                         "steps": [{"action": {}}]})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["show", str(bad)]) == 2  # bad input (kreassign/errors.py)
    assert main(["replay", str(bad)]) == 2


def test_check_cli_json_shape_and_exit_codes(tmp_path, capsys, monkeypatch):
    from kreassign.spec import findings

    args = ["check", "--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--cancels", "1", "--json",
            "--out", str(tmp_path)]
    monkeypatch.setattr(findings, "FINDINGS", ())  # nothing declared: every violation is unexpected
    code = main(args)
    out = json.loads(capsys.readouterr().out)
    r = out["results"][0]
    assert set(r) >= {"profile", "engine", "bounds", "states", "transitions", "depth", "seconds", "properties"}
    assert r["profile"] == "kraft" and r["engine"] == "embedded"
    statuses = {v["status"] for v in r["properties"].values()}
    assert "violated" in statuses and statuses <= {"holds", "violated"}
    assert code == 1
    assert out["unexpected_violations"] == sum(v["status"] == "violated" for v in r["properties"].values())
    violated = next(v for v in r["properties"].values() if v["status"] == "violated")
    assert violated["found_at"]["brokers"] == 3 and violated["minimized_to"]["brokers"] <= 3


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
    assert v.status == KNOWN  # Kafka's documented trade: spec/findings.py unclean_election_loses_committed
    assert v.length == 3  # the follower leaves the ISR, the leader commits a record alone, then fails
