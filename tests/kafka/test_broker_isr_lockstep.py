"""The leaders' ISR maintenance (broker_isr, reference/broker_isr.py) in lockstep with Kafka's KRaft controller.

The differential model runs the reference's own layer with Kafka as its controller: an AlterPartitionArrive
reaches Kafka as the AlterPartition it carries (the leader's ISR, the epochs it was sent with), the broker-side
actions send Kafka nothing, and the layer itself comes from the reference. A Kafka that took a stale partition
epoch for the current one, and a leader that wrote the ISR itself, are both caught.
"""

from __future__ import annotations

import json
from dataclasses import replace

from kreassign.checker.check.run import HOLDS, VIOLATED
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.oracle.differential import MATCH_PROPERTY
from kreassign.checker.oracle.kafka_lockstep import kafka_factory, replay_against_kafka
from kreassign.checker.traces.format import read_trace
from kreassign.reference.broker_isr import LeaderIsrManager
from kreassign.spec import actions as A
from kreassign.spec.state import Partition
from lockstep_run import run_lockstep

from kreassign import cli

K39 = "kafka[version=3.9.2]"
SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, log_length=1, broker_isr=True)


class AcceptsStalePartitionEpoch:
    """A planted bug: Kafka's controller behind a front that takes an AlterPartition's stale partition epoch for
    the current one (every request goes through `apply`: no batch)."""

    def __init__(self, kafka):
        self.kafka, self.state = kafka, None

    def __getattr__(self, name):
        return getattr(self.kafka, name)

    def reset(self, profile, state):
        self.state = state
        self.kafka.reset(profile, state)

    def prefetch(self, state, actions):
        pass

    def apply(self, action):
        if isinstance(action, A.AlterPartition):
            current = self.state.partition(action.topic, action.partition).partition_epoch
            action = replace(action, partition_epoch=max(action.partition_epoch, current))
        return self.kafka.apply(action)


def _stale_shrink(model):
    """Produce, the follower lags, the leader asks to shrink the ISR; then the follower's broker fails and the
    controller shrinks the ISR itself: the leader's request is now behind by a partition epoch."""
    state = model.init_states()[0]
    for action in (A.Produce("t", 0), A.LagExpire("t", 0, 2), A.LeaderMaybeShrinkIsr("t", 0), A.BrokerFail(2)):
        state, label = model.step(state, action)
        assert label.mismatch == (), (action, label.mismatch)
    assert state.cluster.broker_isr.inflight == (("t", 0, 1, (1,), -1, 0, 1),)
    return state


def test_broker_isr_lockstep_has_zero_unexplained_divergences(kafka):
    result, stats = run_lockstep(K39, SMALL, impl=kafka, liveness=False)
    assert result.complete and result.properties[MATCH_PROPERTY].status == HOLDS
    assert stats.steps == result.transitions > 10000 and stats.mismatches == 0 and not stats.allowed
    assert not result.unexpected


def test_a_stale_alter_partition_is_refused_by_kafka_as_by_the_reference(kafka):
    factory = kafka_factory(K39, impl=kafka)
    model = factory("kraft", replace(SMALL, brokers=2))
    state = _stale_shrink(model)
    before = state.cluster.partition("t", 0)
    nxt, label = model.step(state, A.AlterPartitionArrive("t", 0))
    assert label.mismatch == ()
    assert label.response.error_message == "INVALID_UPDATE_VERSION" == label.reference_response.error_message
    after = nxt.cluster.partition("t", 0)  # Kafka's partition, unchanged; the leader holds nothing in flight
    assert (after.isr, after.partition_epoch) == (before.isr, before.partition_epoch)
    assert nxt.cluster.broker_isr.inflight == ()
    # the same request with the current epochs is one Kafka accepts (the refusal was the epoch's)
    kafka.reset("kraft", replace(state.cluster, broker_isr=None))
    _, response = kafka.apply(A.AlterPartition("t", 0, 1, (1,), before.leader_epoch, before.partition_epoch))
    assert response.error_code == 0


def test_a_leader_writing_the_isr_itself_is_a_mismatch(kafka):
    """The broker-side actions send Kafka nothing: a leader whose shrink changes the partition directly (as
    leaders wrote ZooKeeper before IBP 2.7) shows as a diff against Kafka's unchanged partition."""

    class WritesIsr(LeaderIsrManager):
        def maybe_shrink_isr(self, state, topic, partition):
            step = super().maybe_shrink_isr(state, topic, partition)
            request = step.state.broker_isr.inflight[0] if step.state.broker_isr.inflight else None
            if request is None:
                return step
            part: Partition = state.partition(topic, partition)
            return replace(step, state=step.state.with_partition(topic, partition, replace(part, isr=request[3])))

    model = kafka_factory(K39, impl=kafka)("kraft", replace(SMALL, brokers=2))
    model.capabilities = replace(model.capabilities, isr=WritesIsr())
    state = model.init_states()[0]
    for action in (A.Produce("t", 0), A.LagExpire("t", 0, 2)):
        state, _ = model.step(state, action)
    _, label = model.step(state, A.LeaderMaybeShrinkIsr("t", 0))
    assert label.mismatch and all("partitions[0].isr" in line for line in label.mismatch)


def test_kafka_taking_a_stale_partition_epoch_is_caught_and_its_trace_replays(kafka, tmp_path, capsys):
    buggy = AcceptsStalePartitionEpoch(kafka)
    bounds = Bounds(brokers=2, rf=2, reassigns=0, cancels=0, failures=1, log_length=1, broker_isr=True,
                    kafka_version="3.9.2")
    result, stats = run_lockstep(K39, bounds, impl=buggy, out_dir=str(tmp_path), minimize=True, liveness=False)
    verdict = result.properties[MATCH_PROPERTY]
    assert verdict.status == VIOLATED and stats.mismatches > 0
    trace = read_trace(verdict.counterexample)
    last = trace.steps[-1]
    assert last["action"]["type"] == "AlterPartitionArrive"
    assert any("INVALID_UPDATE_VERSION" in line for line in last["mismatch"]["diff"])
    assert replay_against_kafka(trace, impl=buggy).reproduces
    # the real Kafka refuses, as the reference does (the ISR was already shrunk: only the answer differed)
    healthy = replay_against_kafka(trace, K39, impl=kafka)
    assert not healthy.reproduces and "matches the reference on all" in healthy.mismatch
    assert cli.main(["replay", verdict.counterexample, "--impl", "kafka", "--json"]) == 1  # the CLI, the trace's release
    out = json.loads(capsys.readouterr().out)
    assert not out["reproduces"] and out["steps_matched"] == len(trace.steps)


def test_oracle_check_op_steps_the_layer_over_kafka(kafka):
    from kreassign.checker.oracle.server import Oracle
    from kreassign.spec.codec import to_json

    state = _stale_shrink(kafka_factory(K39, impl=kafka)("kraft", replace(SMALL, brokers=2))).cluster
    req = {"id": 1, "op": "check", "impl": K39, "state": to_json(state), "action": to_json(A.AlterPartitionArrive("t", 0))}
    reply = Oracle("kraft").handle_line(json.dumps(req))
    assert reply["ok"], reply
    assert reply["result"]["verdict"] == "match" and reply["result"]["diff"] == []
    assert reply["result"]["expected"]["response"]["error_message"] == "INVALID_UPDATE_VERSION"
