"""The embedded BFS engine on toy models whose answers are known by hand.

`Counter` runs on both state stores (per-state `successors`, and the numpy
`successor_arrays` path) and every test that uses it checks that they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pytest
from kreassign.checker.explore import bfs
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.protocol import Model
from kreassign.spec.properties import Property

# -- Die Hard: the 3- and 5-gallon jugs (tlaplus/Examples DieHard.tla) --------------------------

JUG_ACTIONS = ("FillSmall", "FillBig", "EmptySmall", "EmptyBig", "SmallToBig", "BigToSmall")


class DieHard(Model[tuple[int, int], str]):
    """(small, big) jug contents; every action is always enabled, some leave the state unchanged."""

    def init_states(self) -> list[tuple[int, int]]:
        return [(0, 0)]

    def actions(self, state: tuple[int, int]) -> tuple[str, ...]:
        return JUG_ACTIONS

    def next_state(self, state: tuple[int, int], action: str) -> tuple[int, int]:
        small, big = state
        poured_to_big = min(small, 5 - big)
        poured_to_small = min(big, 3 - small)
        return {
            "FillSmall": (3, big),
            "FillBig": (small, 5),
            "EmptySmall": (0, big),
            "EmptyBig": (small, 0),
            "SmallToBig": (small - poured_to_big, big + poured_to_big),
            "BigToSmall": (small + poured_to_small, big - poured_to_small),
        }[action]

    def action_kind(self, action: str) -> str:
        return action

    def properties(self) -> list[Property]:
        return [
            Property.always("not_solved", lambda s: s[1] != 4),
            Property.sometimes("both_full", lambda s: s == (3, 5)),
        ]


def replay(model: Model, path: bfs.Path) -> None:
    """Every step of `path` is what `next_state` gives for its action."""
    assert path[0][1] is None and path[0][0] in model.init_states()
    for (state, _), (nxt, action) in pairwise(path):
        assert model.next_state(state, action) == nxt


def test_die_hard_counts_match_tlc():
    result = explore(DieHard())
    assert (result.states, result.transitions, result.depth) == (16, 96, 8)  # TLC: 16 distinct, 97 generated
    assert result.complete
    assert result.per_action_edges == {name: 16 for name in JUG_ACTIONS}


def test_die_hard_violation_is_a_shortest_path():
    model = DieHard()
    path = explore(model).violations["not_solved"].path
    assert len(path) == 7  # the classic 6-step solution
    assert path[-1][0][1] == 4
    replay(model, path)


def test_die_hard_sometimes_property_has_an_example():
    model = DieHard()
    path = explore(model).examples["both_full"]
    assert [s for s, _ in path][-1] == (3, 5) and len(path) == 3
    replay(model, path)


# -- Counter: 0..10 by Inc, plus one Jump 2 -> 5; 10 is a deadlock ------------------------------


@dataclass(frozen=True)
class Inc:
    pass


@dataclass(frozen=True)
class Jump:
    pass


LIMIT = 10


class Counter(Model[int, object]):
    """Shortest paths must take the Jump: 7 is 6 states away (0,1,2,5,6,7), not 8."""

    def __init__(self, boundary: int | None = None, properties: tuple[Property, ...] = ()):
        self.boundary = boundary
        self.props = properties

    def init_states(self) -> list[int]:
        return [0]

    def actions(self, state: int) -> list[object]:
        return ([Inc()] if state < LIMIT else []) + ([Jump()] if state == 2 else [])

    def next_state(self, state: int, action: object) -> int:
        return state + (1 if isinstance(action, Inc) else 3)

    def properties(self) -> tuple[Property, ...]:
        return self.props

    def within_boundary(self, state: int) -> bool:
        return self.boundary is None or state <= self.boundary


class ArrayCounter(Counter):
    """The same model on the engine's numpy path."""

    TABLE = (Inc(), Jump())

    def successor_arrays(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        inc = np.flatnonzero(states < LIMIT)
        jump = np.flatnonzero(states == 2)
        ids = np.concatenate([np.zeros(len(inc), np.int32), np.ones(len(jump), np.int32)])
        return np.concatenate([inc, jump]), ids, np.concatenate([states[inc] + 1, states[jump] + 3])

    def action_of(self, action_id: int) -> object:
        return self.TABLE[action_id]


BELOW_7 = Property.always("below_7", lambda s: s < 7)
MOVES_BY_ONE = Property.transition("moves_by_one", lambda s, a, n: n == s + 1)
IS_FOUR = Property.sometimes("is_four", lambda s: s == 4)

both_paths = pytest.mark.parametrize("counter", [Counter, ArrayCounter], ids=["objects", "arrays"])


@both_paths
def test_counter_counts(counter):
    result = explore(counter())
    assert (result.states, result.transitions, result.depth, result.complete) == (11, 11, 9, True)
    assert result.per_action_edges == {"Inc": 10, "Jump": 1}
    assert result.violations == {} and result.examples == {} and result.deadlock is None


@both_paths
def test_always_violation_has_a_shortest_path(counter):
    path = explore(counter(properties=(BELOW_7,))).violations["below_7"].path
    assert [s for s, _ in path] == [0, 1, 2, 5, 6, 7]
    assert [a for _, a in path] == [None, Inc(), Inc(), Jump(), Inc(), Inc()]


@both_paths
def test_transition_violation_ends_with_the_bad_edge(counter):
    violation = explore(counter(properties=(MOVES_BY_ONE,))).violations["moves_by_one"]
    assert violation.property is MOVES_BY_ONE
    assert violation.path == [(0, None), (1, Inc()), (2, Inc()), (5, Jump())]


@both_paths
def test_sometimes_property_example(counter):
    assert [s for s, _ in explore(counter(properties=(IS_FOUR,))).examples["is_four"]] == [0, 1, 2, 3, 4]


@both_paths
def test_deadlock_reported_only_when_checked(counter):
    assert explore(counter()).deadlock is None
    path = explore(counter(), check_deadlock=True).deadlock
    assert [s for s, _ in path] == [0, 1, 2, 5, 6, 7, 8, 9, 10]


@both_paths
def test_states_outside_the_boundary_are_not_expanded(counter):
    result = explore(counter(boundary=5), check_deadlock=True)
    assert (result.states, result.transitions, result.complete) == (7, 7, True)  # 6 found, not expanded
    assert result.deadlock is None


@both_paths
def test_max_states_bound(counter):
    result = explore(counter(), max_states=4)
    assert (result.states, result.complete) == (4, False)


@both_paths
def test_max_depth_bound(counter):
    result = explore(counter(), max_depth=3)
    assert (result.states, result.depth, result.complete) == (3, 3, False)
    assert result.transitions == 4  # the third level is still expanded: 0->1, 1->2, 2->3, 2->5
    exact = explore(counter(), max_depth=9)
    assert (exact.states, exact.complete) == (11, True)


@both_paths
def test_stop_on_violation(counter):
    result = explore(counter(properties=(BELOW_7,)), stop_on_violation=True)
    assert "below_7" in result.violations and not result.complete and result.states < 11
    assert explore(counter(), stop_on_violation=True, check_deadlock=True).deadlock is not None


@both_paths
def test_graph(counter):
    graph = explore(counter(), keep_graph=True).graph
    edges = {
        (graph.states[i], action, graph.states[j])
        for i, (targets, actions) in enumerate(zip(graph.successors, graph.actions))
        for j, action in zip(targets, actions)
    }
    assert edges == {(s, Inc(), s + 1) for s in range(LIMIT)} | {(2, Jump(), 5)}
    assert graph.index == {s: i for i, s in enumerate(graph.states)}
    assert [graph.states[j] for j in graph.successors[graph.index[2]]] == [3, 5]
    assert explore(counter()).graph is None


@both_paths
def test_progress_is_reported(counter, monkeypatch):
    monkeypatch.setattr(bfs, "PROGRESS_INTERVAL", 0.0)
    calls: list[tuple[int, int, float]] = []
    explore(counter(), progress=lambda states, depth, rate: calls.append((states, depth, rate)))
    assert calls and calls[-1][:2] == (11, 9)
    assert all(rate > 0 for _, _, rate in calls)


def test_no_initial_state():
    class Empty(Counter):
        def init_states(self) -> list[int]:
            return []

    result = explore(Empty())
    assert (result.states, result.transitions, result.depth, result.complete) == (0, 0, 0, True)
