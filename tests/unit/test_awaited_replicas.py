"""Liveness in each release's own words (spec/awaited_replicas.py): the words tied to the reference's completion
rules, every real profile keeping its own words, and a release that waits on more than its words say caught."""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations, permutations

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.reference import kraft_change as RC
from kreassign.reference.kraft import Kraft37Profile, KraftProfile
from kreassign.spec import awaited_replicas as W
from kreassign.spec.state import ordered_minus

from test_fairness import WaitsForRemovedReplicas

P = W.PROPERTY
#: the smallest bounds at which a release waiting on more than its words is caught (3 steps)
SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, fair=True)
#: with an override and a cancel: the stale-adding lasso of 4.3+ (its words do not name the stuck replica)
OVERRIDES = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, fair=True)


class HeldToWords(ReassignmentModel):
    """A profile's deeds held to another release's words."""

    words = W.TARGET

    def completion_words(self) -> str:
        return self.words


def held_to(deeds, words):
    def factory(_p, bounds):
        model = HeldToWords(deeds(), bounds)
        model.words = words
        return model

    return factory


# -- the words are the reference's rules ---------------------------------------------------------------------

def lists(n=4):
    """Every (replicas, isr, adding, removing) over brokers 1..n that a controller can hold: adding and
    removing within the replicas, the ISR within the replicas."""
    brokers = range(1, n + 1)
    for k in range(1, n + 1):
        for replicas in permutations(brokers, k):
            for ik in range(0, k + 1):
                for isr in combinations(replicas, ik):
                    for ak in range(0, k):
                        for adding in combinations(sorted(replicas), ak):
                            rest = [b for b in sorted(replicas)]
                            for rk in range(0, k):
                                for removing in combinations(rest, rk):
                                    yield replicas, isr, adding, removing


@pytest.mark.parametrize("rule, words", [
    (RC.all_target_replicas_in_isr, W.TARGET),
    (RC.adding_replicas_in_isr, W.ADDING),
    (RC.adding_in_isr_all_targets_if_shrinking, W.ADDING_OR_ALL_IF_SHRINKING),
])
def test_the_reference_completes_exactly_when_the_words_say_the_awaited_replicas_are_in_sync(rule, words):
    checked = 0
    for replicas, isr, adding, removing in lists(3):
        if not adding and not removing:
            continue
        completes = RC.complete_if_needed(replicas, isr, adding, removing, rule) != (replicas, isr, adding, removing)
        assert completes == W.awaited_in_sync(words, replicas, isr, adding, removing), (replicas, isr, adding, removing)
        checked += 1
    assert checked > 1000


def test_each_release_states_its_own_words():
    assert W.words_of("kraft", "3.9.2") == W.words_of("kraft", "4.2.2") == W.TARGET  # KAFKA-15665
    assert W.words_of("kraft", "4.3.1") == W.words_of("kraft", "4.4.0") == W.ADDING_OR_ALL_IF_SHRINKING  # KAFKA-19975
    assert W.words_of("kraft-3.7") == W.words_of("kip455") == W.ADDING
    assert W.words_of("zk") == W.words_of("kip236") == W.TARGET
    assert ReassignmentModel("kraft", replace(SMALL, kafka_version="4.2.2")).completion_words() == W.TARGET
    assert ReassignmentModel("kraft", SMALL).completion_words() == W.ADDING_OR_ALL_IF_SHRINKING
    assert ReassignmentModel(WaitsForRemovedReplicas(), SMALL).completion_words() == W.ADDING_OR_ALL_IF_SHRINKING
    with pytest.raises(ValueError, match="no completion rule"):
        W.words_of("kip599")


def test_awaited_sets():
    # [1,2] -> [3,4] while both are removed: 4.3 waits on every target only when the RF shrinks
    assert W.awaited(W.ADDING_OR_ALL_IF_SHRINKING, (1, 2, 3), (3,), (1, 2)) == {3}
    assert W.awaited(W.ADDING_OR_ALL_IF_SHRINKING, (1, 2, 3, 4), (4,), (2,)) == {4}
    assert W.awaited(W.TARGET, (1, 2, 3), (3,), (2,)) == {1, 3}
    assert W.awaited(W.ADDING, (1, 2, 3), (3,), (2,)) == {3}
    assert not W.awaited_in_sync(W.ADDING, (1, 3), (1,), (3,), (3,))  # a stale adding replica is never in sync
    assert ordered_minus((1, 2, 3), (2,)) == (1, 3)


# -- the real profiles keep their own words ------------------------------------------------------------------

@pytest.mark.parametrize("profile, version", [("kraft", "3.9.2"), ("kraft", "4.2.2"), ("kraft", "4.4.0"),
                                              ("kraft-3.7", ""), ("zk", ""), ("kip455", ""), ("kip236", "")])
def test_every_real_profile_keeps_its_own_words(profile, version):
    result = check_model(profile, replace(OVERRIDES, kafka_version=version), minimize_counterexamples=False)
    assert result.properties[P].status == HOLDS


def test_kafka_44_breaks_the_words_of_42_by_the_declared_stale_adding_lasso():
    # 4.4's deeds under 4.2's words: the override back to the original never completes (KAFKA-19975's change)
    result = check_model("kraft", OVERRIDES, factory=held_to(lambda: KraftProfile(kafka_version="4.4.0"), W.TARGET),
                         minimize_counterexamples=False)
    assert result.properties[P].status == VIOLATED and result.properties[P].length == 3
    # in its own words it holds, and the same lasso is the declared finding of the one-promise property
    own = check_model("kraft", OVERRIDES, minimize_counterexamples=False)
    assert own.properties[P].status == HOLDS
    assert own.properties["reassignment_completes_when_targets_live"].status == KNOWN


# -- a release that waits on more than its words say -----------------------------------------------------------

@pytest.mark.parametrize("deeds, words, caught", [
    ("3.9", W.ADDING, True),  # 3.8 - 4.2 also wait on the retained replicas 3.7's words leave out
    ("3.9", W.ADDING_OR_ALL_IF_SHRINKING, True),
    ("3.9", W.TARGET, False),
    ("3.7", W.TARGET, False),  # waiting on less than the words is not waiting on the wrong replicas
    ("4.4", W.ADDING, False),
    ("waits-for-removed", W.TARGET, True),
    ("waits-for-removed", W.ADDING, True),
    ("waits-for-removed", W.ADDING_OR_ALL_IF_SHRINKING, True),
])
def test_a_release_that_waits_on_replicas_its_words_do_not_name_is_caught(deeds, words, caught, tmp_path):
    make = {"3.9": lambda: KraftProfile(kafka_version="3.9.2"), "3.7": Kraft37Profile,
            "4.4": lambda: KraftProfile(kafka_version="4.4.0"),
            "waits-for-removed": lambda: WaitsForRemovedReplicas(kafka_version="4.4.0")}[deeds]
    result = check_model("kraft", SMALL, factory=held_to(make, words), out_dir=str(tmp_path))
    v = result.properties[P]
    assert v.status == (VIOLATED if caught else HOLDS)
    if caught:
        assert v.length == 3
        trace = read_trace(v.counterexample)
        assert trace.loop_start is not None  # a lasso: the broker stays down for good


def test_the_broken_variant_waits_on_a_removed_replica_whose_broker_stays_down(tmp_path):
    result = check_model("kraft", SMALL, factory=lambda _p, b: ReassignmentModel(WaitsForRemovedReplicas(), b),
                         out_dir=str(tmp_path))
    v = result.properties[P]
    assert v.status == VIOLATED and v.length == 3
    trace = read_trace(v.counterexample)
    assert [s["action_text"] for s in trace.steps] == ["Reassign(t-0 -> [1,3])", "BrokerFail(2)",
                                                       "LeaderExpandIsr(t-0 +3)"]
    # two brokers are too few: the removed replica down leaves nothing to lead the adding one in
    small = check_model("kraft", replace(SMALL, brokers=2, rf=1), minimize_counterexamples=False,
                        factory=lambda _p, b: ReassignmentModel(WaitsForRemovedReplicas(), b))
    assert small.properties[P].status == HOLDS


def test_off_by_default_and_on_with_fair():
    assert P not in {p.name for p in ReassignmentModel("kraft", Bounds()).properties()}
    assert P in {p.name for p in ReassignmentModel("zk", replace(Bounds(), fair=True)).properties()}


#: bench/issue26_capabilities.py
BENCH_ROWS = [
    (P, "waits on the removed replica too", "kraft", SMALL,
     lambda _p, b: ReassignmentModel(WaitsForRemovedReplicas(), b)),
    (P, "3.9's deeds held to 3.7's words (waits on retained)", "kraft", SMALL,
     held_to(lambda: KraftProfile(kafka_version="3.9.2"), W.ADDING)),
    (P, "4.4's deeds held to 4.2's words (stale adding)", "kraft", OVERRIDES,
     held_to(lambda: KraftProfile(kafka_version="4.4.0"), W.TARGET)),
    (P, "real kraft 4.4.0, own words", "kraft", OVERRIDES, None),
    (P, "real zk, own words", "zk", OVERRIDES, None),
]
