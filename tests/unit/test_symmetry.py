"""Symmetry reduction is sound where declared: same verdicts, and reduced states = orbits of all states.

The same comparison shows why `kraft` is excluded: it sorts replicas by id, so the
reduced search does not visit exactly one representative per orbit.
"""

from __future__ import annotations

import pytest
from kreassign.checker.check.run import VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.models.symmetry import SYMMETRIC_PROFILES, SymmetryReduced, canonical
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay

BOUNDS = Bounds(brokers=4, rf=2, reassigns=1, cancels=1, failures=1, targets="permutations")


def compare(profile: str, bounds: Bounds = BOUNDS):
    full = explore(ReassignmentModel(profile, bounds), keep_graph=True)
    reduced_model = SymmetryReduced(ReassignmentModel(profile, bounds))
    reduced = explore(reduced_model)
    orbits = {canonical(s, reduced_model.group) for s in full.graph.states}
    return full, reduced, orbits, reduced_model


@pytest.mark.parametrize("profile", sorted(SYMMETRIC_PROFILES))
def test_reduction_is_sound_for_symmetric_profiles(profile):
    full, reduced, orbits, model = compare(profile)
    assert len(model.group) == 2  # brokers 3 and 4 are interchangeable
    assert reduced.states == len(orbits) < full.states
    assert sorted(reduced.violations) == sorted(full.violations)


def test_kraft_is_not_symmetric_and_the_comparison_shows_it():
    # an override needs two requests; sorting removing replicas by id then breaks the symmetry
    _, reduced, orbits, _ = compare("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=0, targets="permutations"))
    assert reduced.states != len(orbits)


def test_ascending_targets_leave_only_the_identity():
    model = SymmetryReduced(ReassignmentModel("zk", Bounds(brokers=4, rf=2)))
    assert len(model.group) == 1


def test_reduced_counterexamples_are_concrete_and_replay(tmp_path, monkeypatch):
    from kreassign.spec import findings

    monkeypatch.setattr(findings, "FINDINGS", ())  # report, and write, every violation
    result = check_model("kip455", BOUNDS, out_dir=str(tmp_path), symmetry=True, minimize_counterexamples=False)
    files = [v.counterexample for v in result.properties.values() if v.status == VIOLATED and v.counterexample]
    assert files
    for f in files:
        trace = read_trace(f)
        if trace.kind != "eventually":
            assert replay(trace).reproduces, f


def test_symmetry_refused_for_an_asymmetric_profile():
    with pytest.raises(ValueError, match="not symmetric"):
        check_model("kraft", BOUNDS, symmetry=True)
