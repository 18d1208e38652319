"""Kafka's KRaft controller in lockstep with the reference: zero unexplained divergences, a planted bug caught."""

from __future__ import annotations

import glob
import json

from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.implementations.kafka import KafkaImplementation, KafkaOptions, parse_spec
from kreassign.checker.oracle.differential import MATCH_PROPERTY, compare_step
from kreassign.checker.oracle.kafka_lockstep import kafka_factory, reference_profile, replay_against_kafka
from kreassign.checker.traces.format import read_trace
from kreassign.spec import actions as A
from kreassign.spec.kafka_releases import NEWEST
from kreassign.spec.state import make_cluster
from lockstep_run import run_lockstep

from kreassign import cli

K39 = "kafka[version=3.9.2]"  # the release these tests pin (its counts and findings)


def _lockstep(spec: str, bounds: Bounds, out_dir=None, minimize=False, impl=None):
    return run_lockstep(spec, bounds, impl=impl, out_dir=out_dir, minimize=minimize)


SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, failovers=1, elections=("PREFERRED", "UNCLEAN"))


def test_small_configuration_has_zero_unexplained_divergences(kafka):
    result, stats = _lockstep(K39, SMALL, impl=kafka)
    assert result.complete and result.properties[MATCH_PROPERTY].status == HOLDS
    assert stats.steps == result.transitions > 2000 and stats.mismatches == 0
    assert not stats.allowed  # no declared difference was needed
    # Kafka's own code shows the findings the reference declares (docs/findings.md)
    assert result.properties["cancel_restores_original_order"].status == KNOWN
    assert not result.unexpected


def test_unclean_topic_rf3_two_partitions_have_zero_divergences(kafka):
    for bounds in (Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=2, unclean=True, elections=("UNCLEAN",)),
                   Bounds(brokers=3, rf=3, reassigns=1, cancels=1, failures=1),
                   Bounds(brokers=3, partitions=2, reassigns=1, cancels=0, failures=1)):
        result, stats = _lockstep(K39, bounds, impl=kafka)
        assert result.properties[MATCH_PROPERTY].status == HOLDS, bounds
        assert stats.steps == result.transitions and stats.mismatches == 0


def test_metadata_version_3_5_bumps_the_leader_epoch_on_a_shrink_in_kafka_and_the_reference(kafka):
    s = make_cluster([1, 2, 3], {"t": [[1, 2, 3]]})
    old = KafkaImplementation(KafkaOptions(kafka_version="3.9.2", metadata_version="3.5-IV2"))
    try:
        old.reset("kraft", s)
        k35, _ = old.apply(A.LeaderShrinkIsr("t", 0, 3))
    finally:
        old.close()
    kafka.reset("kraft", s)
    k39, _ = kafka.apply(A.LeaderShrinkIsr("t", 0, 3))
    assert k35.topics[0].partitions[0].leader_epoch == 1 and k39.topics[0].partitions[0].leader_epoch == 0
    assert reference_profile("3.5-IV2", kafka_version="3.9.2").apply(s, A.LeaderShrinkIsr("t", 0, 3)).state == k35
    assert reference_profile("3.9-IV0", kafka_version="3.9.2").apply(s, A.LeaderShrinkIsr("t", 0, 3)).state == k39


def test_lockstep_at_metadata_version_3_5_and_a_wrong_version_is_caught():
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)
    result, stats = _lockstep("kafka[version=3.9.2,metadata.version=3.5-IV2]", bounds)
    assert result.properties[MATCH_PROPERTY].status == HOLDS and stats.mismatches == 0
    # the reference at 3.9's rule against Kafka at 3.5: the comparison sees the epoch rule
    factory = kafka_factory("kafka[version=3.9.2,metadata.version=3.5-IV2]")
    try:
        model = factory("kraft", bounds)
        model.profile = reference_profile("3.9-IV0", kafka_version="3.9.2")
        state = model.init_states()[0]
        _, label = model.step(state, A.LeaderShrinkIsr("t", 0, 2))
        assert any("leader_epoch" in line for line in label.mismatch)
    finally:
        factory.close()


def test_a_planted_bug_in_the_adapter_path_is_caught_and_its_trace_replays(tmp_path):
    bounds = Bounds(brokers=3, partitions=2, reassigns=1, cancels=0, failures=0)
    result, stats = _lockstep("kafka[version=3.9.2,bug=wrong-partition]", bounds, out_dir=str(tmp_path), minimize=True)
    verdict = result.properties[MATCH_PROPERTY]
    assert verdict.status == VIOLATED and stats.mismatches > 0
    trace = read_trace(verdict.counterexample)
    last = trace.steps[-1]
    assert any("partitions[1]" in d or "partitions[0]" in d for d in last["mismatch"]["diff"])
    assert replay_against_kafka(trace, "kafka[version=3.9.2,bug=wrong-partition]").reproduces
    healthy = replay_against_kafka(trace, K39)  # the real Kafka agrees with the reference on that trace
    assert not healthy.reproduces and "agrees with the reference" in healthy.mismatch


def test_every_kraft_finding_reproduces_on_kafka_itself(capsys):
    """The findings are Kafka's: each curated kraft counterexample replays step by step on the Kafka release
    (and ELR setting) it records (3.9.2 for the restart finding, the newest for the others)."""
    # the adapter drives neither CreatePartitions nor the reassignment tool's throttles nor the actors' reads and
    # config writes: those findings (docs/findings.md, issue-14 and issue-26 capabilities) are read against Kafka's
    # code only (the actors' controller requests are stepped on Kafka by tests/kafka/test_actors_lockstep.py)
    paths = sorted(p for p in glob.glob("counterexamples/kraft__*.json")
                   if not any(read_trace(p).bounds.get(k) for k in ("create_partitions", "throttles", "actors")))
    assert len(paths) >= 5
    releases = {read_trace(p).bounds.get("kafka_version") for p in paths}
    assert {"3.9.2", NEWEST} <= releases
    for path in paths:
        result = replay_against_kafka(read_trace(path), "kafka")  # the trace's own release
        assert result.reproduces and result.steps_matched == len(read_trace(path).steps), path
    assert cli.main(["replay", paths[0], "--impl", "kafka", "--json"]) == 0  # the same through the CLI
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["reproduces"] and verdict["steps_matched"] == len(read_trace(paths[0]).steps)


def test_check_cli_with_impl_kafka(capsys):
    code = cli.main(["check", "--impl", K39, "--profile", "kraft", "--brokers", "3", "--reassigns", "1",
                     "--json", "--no-minimize", "--out", "/tmp/kreassign-kafka-test-out"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["unexpected_violations"] == 0
    assert out["results"][0]["properties"][MATCH_PROPERTY]["status"] == HOLDS


def test_oracle_check_op_runs_the_step_on_kafka():
    from kreassign.checker.oracle.server import Oracle

    s = make_cluster([1, 2, 3], {"t": [[1, 2]]})
    from kreassign.spec.codec import to_json

    req = {"id": 1, "op": "check", "impl": K39, "state": to_json(s), "action": to_json(A.Reassign("t", 0, (2, 3)))}
    reply = Oracle("kraft").handle_line(json.dumps(req))
    assert reply["ok"], reply
    assert reply["result"]["verdict"] == "match" and reply["result"]["diff"] == []
    bad = Oracle("kraft").handle_line(json.dumps({**req, "impl": "exec:true"}))
    assert not bad["ok"] and "impl" in json.dumps(bad)


def test_records_are_kafka_dump_log_payloads(kafka):
    s = make_cluster([1, 2, 3], {"t": [[1, 2]]})
    kafka.reset("kraft", s)
    state, response, records = kafka.apply_with_records(A.Reassign("t", 0, (2, 3)), records=True)
    assert [r["type"] for r in records] == ["PARTITION_CHANGE_RECORD"]
    data = records[0]["data"]
    assert (data["replicas"], data["addingReplicas"], data["removingReplicas"]) == ([2, 3, 1], [3], [1])
    assert records[0]["version"] == 1  # partitionChangeRecordVersion at 3.9-IV0 (directories)
    ref = reference_profile("3.9-IV0", kafka_version="3.9.2").apply(s, A.Reassign("t", 0, (2, 3)))
    assert compare_step(ref.state, ref.response, state, response) == []


def test_replication_layer_actions_run_on_top_of_kafkas_controller_state(kafka):
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, replication=True)
    result, stats = _lockstep(K39, bounds, impl=kafka)
    assert result.transitions > 1000
    assert result.properties[MATCH_PROPERTY].status == HOLDS and stats.mismatches == 0
    assert result.properties["committed_records_kept"].status == HOLDS


def test_zookeeper_migration_mode_bumps_the_leader_epoch_on_a_shrink_at_3_9():
    s = make_cluster([1, 2, 3], {"t": [[1, 2, 3]]})
    impl = KafkaImplementation(parse_spec("kafka[version=3.9.2,zk-migration=true]"))
    try:
        impl.reset("kraft", s)
        k, _ = impl.apply(A.LeaderShrinkIsr("t", 0, 3))
    finally:
        impl.close()
    assert k.topics[0].partitions[0].leader_epoch == 1
    assert reference_profile("3.9-IV0", (), zk_migration=True, kafka_version="3.9.2").apply(s, A.LeaderShrinkIsr("t", 0, 3)).state == k
