"""liveness.classify_stuck: the one classification of stuck states every engine uses."""

from __future__ import annotations

from types import SimpleNamespace

from kreassign.checker.explore.liveness import classify_stuck

# stuck states 0 -> 1 -> 2 (environment edges), BFS order 0, 1, 2; only state 2 shows finding F
STATES = {0: "doomed", 1: "doomed", 2: "shows-F", 3: "other"}
EDGES = [(0, 1), (1, 2), (2, 2)]
F = SimpleNamespace(name="F", signature=lambda s: s == "shows-F")


def _classify(stuck, findings=(F,), premise=None, edges=EDGES):
    return classify_stuck(stuck, STATES.__getitem__, lambda among: [(i, j) for i, j in edges if i in among and j in among],
                          lambda i: f"lasso-{i}", premise, findings)


def test_a_state_that_can_only_drift_into_a_finding_is_explained_by_it():
    unexpected, found = _classify([0, 1, 2])
    assert unexpected is None
    assert found == {"F": "lasso-0"}  # the first (shortest) state of the class


def test_without_the_drift_edge_the_first_state_is_unexpected():
    unexpected, found = _classify([0, 1, 2], edges=[(1, 2)])
    assert unexpected == "lasso-0" and found == {"F": "lasso-1"}


def test_states_outside_the_premise_do_not_count():
    unexpected, found = _classify([3, 2], premise=lambda s: s != "other")
    assert unexpected is None and found == {"F": "lasso-2"}


def test_no_findings_the_first_stuck_state_is_unexpected():
    assert _classify([1, 2], findings=()) == ("lasso-1", {})
