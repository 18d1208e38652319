"""The TLA+ anchor model: TLC's counts, its mutants, and the packed model against the plain one.

Expected figures are TLC 2.20's, copied from shared/anchor/README.md and
per_action_edges.tsv. The packed model's numpy kernel and vectorised invariants are
second encodings of AnchorModel, so they are compared with it on every reachable state
of N4_fail and N5_nofail, on the states of the mutants and on random states.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from kreassign.checker.explore.bfs import explore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from anchor_model import (
    CONFIGS,
    AnchorModel,
    AnchorParams,
    AnchorState,
    CompleteReassignment,
    Layout,
    PackedAnchorModel,
    anchor_model,
)

# config -> (distinct states, states generated = transitions + 1, depth)
TLC_COUNTS = {
    "N4_nofail": (336, 1_849, 11),
    "N5_nofail": (3_000, 18_961, 13),
    "N6_nofail": (15_120, 101_641, 14),
    "N4_fail": (1_992, 15_649, 11),
    "N5_fail": (32_910, 313_201, 13),
}

ACTIONS = ("StartReassignment", "FollowerJoinIsr", "FollowerLeaveIsr", "CompleteReassignment",
           "CancelReassignment", "BrokerFail", "BrokerRecover")
# config -> the `edges` column of per_action_edges.tsv, in the order of ACTIONS
TLC_EDGES = {
    "N4_nofail": (144, 480, 480, 168, 576, 0, 0),
    "N5_nofail": (1_080, 5_160, 5_160, 1_800, 5_760, 0, 0),
    "N6_nofail": (4_560, 28_800, 28_800, 9_720, 29_760, 0, 0),
    "N4_fail": (936, 1_440, 1_440, 288, 3_168, 5_628, 2_748),
    "N5_fail": (14_040, 29_880, 29_880, 5_580, 58_860, 117_360, 57_600),
}


def tlc_edges(config: str) -> dict[str, int]:
    return {action: n for action, n in zip(ACTIONS, TLC_EDGES[config]) if n}


class PackedWithoutKernel(PackedAnchorModel):
    """The packed model on the engine's object path: successors through the codec."""

    successor_arrays = None


def model_for(config: str, variant: str):
    params = CONFIGS[config]
    return {"kernel": PackedAnchorModel, "plain": AnchorModel, "codec": PackedWithoutKernel}[variant](params)


@pytest.mark.parametrize(
    "config, variant",
    [(c, "kernel") for c in TLC_COUNTS] + [(c, v) for c in ("N4_nofail", "N4_fail") for v in ("plain", "codec")],
)
def test_counts_match_tlc(config, variant):
    result = explore(model_for(config, variant), check_deadlock=True)
    distinct, generated, depth = TLC_COUNTS[config]
    assert (result.states, result.transitions + 1, result.depth) == (distinct, generated, depth)
    assert result.per_action_edges == tlc_edges(config)
    assert result.complete and result.violations == {} and result.deadlock is None


# -- mutants: the checker must catch them, with a shortest path --------------------------------


class CancelKeepsIsr(AnchorModel):
    """Cancellation that forgets to drop the adding replicas from the ISR."""

    def cancel_reassignment(self, s):
        for action, n in super().cancel_reassignment(s):
            yield action, replace(n, isr=s.isr)


class FailKeepsIsr(AnchorModel):
    """Fencing that leaves the failed broker in the ISR."""

    def broker_fail(self, s, b):
        for action, n in super().broker_fail(s, b):
            yield action, replace(n, isr=s.isr)


def replay(model, path) -> None:
    assert path[0] == (model.init_states()[0], None)
    for (state, _), (nxt, action) in pairwise(path):
        assert model.next_state(state, action) == nxt


@pytest.mark.parametrize(
    "mutant, config, invariant, length",
    [
        (CancelKeepsIsr, "N4_nofail", "IsrInRS", 4),  # Start, an adding replica joins, Cancel
        (FailKeepsIsr, "N4_fail", "IsrLive", 2),  # a follower fails
    ],
)
def test_mutant_is_caught_with_a_shortest_path(mutant, config, invariant, length):
    model = mutant(CONFIGS[config])
    result = explore(model)
    assert set(result.violations) == {invariant}
    path = result.violations[invariant].path
    assert len(path) == length
    assert not result.violations[invariant].property.predicate(path[-1][0])
    replay(model, path)


def test_next_state_of_a_disabled_action_is_none():
    model = AnchorModel(CONFIGS["N4_nofail"])
    assert model.next_state(model.init_states()[0], CompleteReassignment("ar")) is None


# -- the packed model against the plain one ----------------------------------------------------


def reachable(model: AnchorModel) -> list[AnchorState]:
    return explore(model, keep_graph=True).graph.states


def random_packed(layout: Layout, count: int, seed: int = 0) -> list[int]:
    """Random packed states, leader field 0..N+1 (N+1 breaks TypeOK)."""
    rng = np.random.default_rng(seed)
    states = rng.integers(0, layout.n + 2, count) << layout.shift["leader"]
    for name in Layout.SETS:
        states |= rng.integers(0, 1 << layout.n, count) << layout.shift[name]
    return states.tolist()


def kernel_successors(model: PackedAnchorModel, packed: list[int]) -> list[Counter]:
    """The numpy kernel's transitions out of each state, decoded."""
    positions, ids, nexts = model.successor_arrays(np.array(packed, dtype=np.int64))
    out: list[Counter] = [Counter() for _ in packed]
    for i, action_id, n in zip(positions.tolist(), ids.tolist(), nexts.tolist()):
        out[i][model.action_of(action_id), model.decode(n)] += 1
    return out


@pytest.mark.parametrize("config", ["N4_fail", "N5_nofail"])
def test_kernel_equals_plain_model_on_every_reachable_state(config):
    packed = PackedAnchorModel(CONFIGS[config])
    states = reachable(packed.plain)
    encoded = [packed.encode(s) for s in states]
    assert [packed.decode(p) for p in encoded] == states
    for state, fast in zip(states, kernel_successors(packed, encoded)):
        assert fast == Counter(packed.plain.successors(state)), state


@pytest.mark.parametrize("config", ["N4_fail", "N5_nofail"])
def test_kernel_equals_plain_model_on_random_states(config):
    packed = PackedAnchorModel(CONFIGS[config])
    encoded = random_packed(packed.layout, 3000)
    for p, fast in zip(encoded, kernel_successors(packed, encoded)):
        assert fast == Counter(packed.plain.successors(packed.decode(p))), packed.decode(p)


def test_vectorised_invariants_equal_the_plain_ones():
    outcomes: dict[str, set[bool]] = {}
    for config in ("N4_nofail", "N4_fail"):
        packed = PackedAnchorModel(CONFIGS[config])
        plain_states = [s for mutant in (AnchorModel, CancelKeepsIsr, FailKeepsIsr)
                        for s in reachable(mutant(packed.params))]
        states = [packed.encode(s) for s in plain_states] + random_packed(packed.layout, 3000)
        array = np.array(states, dtype=np.int64)
        for prop in packed.properties():
            scalar = [prop.predicate(p) for p in states]
            assert prop.extra["array_predicate"](array).tolist() == scalar, (config, prop.name)
            outcomes.setdefault(prop.name, set()).update(scalar)
    assert all(seen == {True, False} for seen in outcomes.values()), outcomes  # no vacuous check


def test_packed_protocol_goes_through_the_plain_model():
    packed = PackedAnchorModel(CONFIGS["N4_fail"])
    init = packed.init_states()[0]
    assert packed.decode(init) == packed.plain.init_states()[0]
    steps = list(packed.successors(init))
    assert [a for a, _ in steps] == packed.actions(init)
    assert all(packed.next_state(init, a) == n for a, n in steps)


def test_anchor_model_by_config_name():
    assert isinstance(anchor_model("N4_fail"), PackedAnchorModel)
    assert anchor_model("N4_fail", packed=False).params == CONFIGS["N4_fail"]


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="config"):
        anchor_model("N9_sometimes")
    with pytest.raises(ValueError, match="rf"):
        AnchorParams(brokers=2, rf=3)
    with pytest.raises(ValueError, match="brokers"):
        Layout(10)
