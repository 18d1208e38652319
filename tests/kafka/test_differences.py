"""The allowed-differences list: exact, per step, and each entry's trace replays against Kafka."""

from __future__ import annotations

import os

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.implementations.kafka import differences as D
from kreassign.checker.oracle.differential import MATCH_PROPERTY
from kreassign.checker.oracle.kafka_lockstep import KafkaLockstepModel, LockstepStats, replay_against_kafka
from kreassign.checker.traces.format import read_trace
from kreassign.spec import actions as A

K39 = "kafka[version=3.9.2]"  # the release these tests pin (its counts and findings)


def _epoch_only(before, action, line):
    return isinstance(action, A.LeaderShrinkIsr) and line.startswith("state.topics[0].partitions[0].leader_epoch:")


EPOCH = D.AllowedDifference("shrink epoch", "test entry", "n/a", _epoch_only)


def test_an_entry_excuses_a_step_only_when_it_explains_every_diff_line():
    shrink = A.LeaderShrinkIsr("t", 0, 2)
    epoch = "state.topics[0].partitions[0].leader_epoch: reference 0, implementation 1"
    isr = "state.topics[0].partitions[0].isr: reference [1], implementation [1,2]"
    assert D.explain(None, shrink, (epoch,), (EPOCH,)) == "shrink epoch"
    assert D.explain(None, shrink, (epoch, isr), (EPOCH,)) is None  # one unexplained line: a mismatch
    assert D.explain(None, A.LeaderExpandIsr("t", 0, 2), (epoch,), (EPOCH,)) is None  # another situation
    assert D.explain(None, shrink, (), (EPOCH,)) is None
    assert D.explain(None, shrink, (epoch,)) is None  # the real list is empty


def test_the_lockstep_counts_excused_steps_and_still_reports_the_rest(kafka, monkeypatch):
    """Kafka at 3.5-IV2 against the reference at 3.9's rule differs exactly in the shrink's epoch bump."""
    from kreassign.checker.implementations.kafka import KafkaImplementation, KafkaOptions
    from kreassign.checker.oracle.kafka_lockstep import reference_profile

    old = KafkaImplementation(KafkaOptions(kafka_version="3.9.2", metadata_version="3.5-IV2"))
    try:
        stats = LockstepStats()
        model = KafkaLockstepModel(Bounds(brokers=3, rf=2, reassigns=0, cancels=0), old, old.spec, stats)
        model.profile = reference_profile("3.9-IV0", kafka_version="3.9.2")
        s0 = model.init_states()[0]
        _, label = model.step(s0, A.LeaderShrinkIsr("t", 0, 2))
        assert label.mismatch and stats.mismatches == 1
        monkeypatch.setattr(D, "ALLOWED", (EPOCH,))
        _, label = model.step(s0, A.LeaderShrinkIsr("t", 0, 2))
        assert not label.mismatch and stats.allowed["shrink epoch"] == 1 and stats.mismatches == 1
    finally:
        old.close()


def test_the_abstractions_no_comparison_sees_are_documented():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "kafka.md"), encoding="utf-8") as f:
        doc = f.read()
    for name, _ in D.UNOBSERVED:
        assert name.split(",")[0].split()[0].lower() in doc.lower()


def test_each_allowed_difference_has_a_trace_that_replays_on_kafka():
    """Every entry's minimal trace reproduces its difference on Kafka, explained by that entry alone."""
    from kreassign.spec.codec import decode_action, state_from_json

    for entry in D.ALLOWED:
        assert entry.trace.startswith("counterexamples/kafka/") and os.path.isfile(entry.trace), entry.name
        trace = read_trace(entry.trace)
        assert trace.property == MATCH_PROPERTY
        assert replay_against_kafka(trace, K39).steps_matched == len(trace.steps)
        last = trace.steps[-1]
        before = state_from_json((trace.steps[-2]["state"] if len(trace.steps) > 1 else trace.initial)["cluster"])
        lines = tuple(last["mismatch"]["diff"])
        assert D.explain(before, decode_action(last["action"]), lines, (entry,)) == entry.name
        assert D.explain(before, A.ControllerFailover(), lines, (entry,)) is None  # that step only
    assert os.path.isfile("counterexamples/kafka/README.md")
