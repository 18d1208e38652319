"""Hypothesis properties of the reference: the planning algebra and random walks over enabled actions."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st
from kreassign.reference import ActionSpace, profile
from kreassign.reference.kraft import kraft_plan
from kreassign.spec.state import make_cluster

BROKERS = list(range(1, 6))
replica_lists = st.lists(st.sampled_from(BROKERS), min_size=1, max_size=4, unique=True).map(tuple)


@given(current=replica_lists, target=replica_lists)
def test_kraft_plan_is_target_then_removing_and_covers_current_and_target(current, target):
    plan = kraft_plan(current, target)
    assert plan.replicas == target + plan.removing
    assert set(plan.replicas) == set(current) | set(target)
    assert not set(plan.adding) & set(plan.removing)
    assert list(plan.adding) == sorted(plan.adding) and list(plan.removing) == sorted(plan.removing)


def space_for(state, rf=2, failures=True):
    targets = tuple(("t", 0, c) for c in combinations(BROKERS, rf))
    return ActionSpace(targets=targets, failures=failures, elections=("PREFERRED",))


def walk(prof_name, choices):
    prof = profile(prof_name)
    s = prof.initial_state(make_cluster(BROKERS, {"t": [[1, 2]]}))
    space = space_for(s)
    trace = [(None, s)]
    for c in choices:
        acts = prof.enabled_actions(s, space)
        a = acts[c % len(acts)]
        s = prof.apply(s, a).state
        trace.append((a, s))
    return trace


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=25))
def test_kraft_epochs_never_go_back_and_lists_stay_consistent(choices):
    for name in ("kraft", "kraft-3.7"):
        trace = walk(name, choices)
        for (_, before), (action, after) in zip(trace, trace[1:]):
            p, q = before.partition("t", 0), after.partition("t", 0)
            assert q.leader_epoch >= p.leader_epoch, action
            assert q.partition_epoch >= p.partition_epoch, action
            if q != p:
                assert q.partition_epoch > p.partition_epoch, action
        for _, s in trace:
            p = s.partition("t", 0)
            assert set(p.isr) <= set(p.replicas)
            # the ISR is never empty, except under ELR (KIP-966, the newest release's default) for a leaderless
            # partition whose ELR or last known leader names who may lead again (spec isr_non_empty)
            assert p.isr or (p.leader == -1 and (p.elr or any(b != -1 for b in p.last_known_elr))), "empty ISR"
            assert set(p.adding) <= set(p.replicas) and set(p.removing) <= set(p.replicas)


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=25))
def test_kraft_completed_or_reverted_partition_is_not_reassigning(choices):
    trace = walk("kraft", choices)
    for (_, before), (action, after) in zip(trace, trace[1:]):
        p, q = before.partition("t", 0), after.partition("t", 0)
        if p.reassigning and type(action).__name__ == "Cancel":
            assert not q.reassigning or q == p  # reverted, or refused and unchanged
