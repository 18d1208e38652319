"""The curated counterexamples replay, the known violations are real, and the default suite is pinned.

Like tlaplus/Examples' manifests: each default configuration's distinct states,
transitions and depth are pinned, so any drift of the semantics shows up as a count
change; every known violation is still found (a stale declaration fails), and nothing
else is.
"""

from __future__ import annotations

import glob
import os

import pytest
from kreassign.checker.check.run import KNOWN, check_model
from kreassign.checker.models.suite import DEFAULT_SUITE, QUOTA_SUITE
from kreassign.checker.models.registry import build_model, model_kind
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.format import read_trace
from kreassign.spec.known_violations import KNOWN as DECLARED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "counterexamples", "*.json")))

#: (distinct states, transitions, depth) of every default-suite configuration
PINNED = {
    "kraft": (4541, 18595, 12),
    "kraft-3.7": (4937, 20374, 12),
    "zk": (9495, 16591, 33),
    "kip455": (2109, 8533, 14),
    "kip236": (7634, 34812, 14),
    "kip599": (3792, 23777, 13),
    "kip599-draft": (1639, 10412, 11),
}


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(f) for f in FILES])
def test_every_curated_counterexample_replays(path):
    trace = read_trace(path)
    result = replay(trace)
    assert result.reproduces, (result.mismatch, result.diffs[:5])


def test_every_declared_violation_has_its_file():
    declared = {os.path.join(ROOT, f) for props in DECLARED.values() for f in props.values()}
    assert declared <= set(FILES)
    for profile, props in DECLARED.items():
        for prop, f in props.items():
            trace = read_trace(os.path.join(ROOT, f))
            assert (trace.profile, trace.property) == (profile, prop)


@pytest.mark.parametrize("profile", list(PINNED))
def test_default_suite_counts_and_verdicts(profile):
    kind = model_kind(profile)
    bounds = DEFAULT_SUITE.get(profile) or QUOTA_SUITE[profile]()
    result = check_model(profile, bounds, factory=lambda p, b: build_model(kind, p, b), model_kind=kind)
    assert (result.states, result.transitions, result.depth) == PINNED[profile]
    assert result.unexpected == []
    found_known = {n for n, v in result.properties.items() if v.status == KNOWN}
    assert found_known == set(DECLARED.get(profile, {}))  # no stale declaration either
