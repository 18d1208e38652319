"""The curated counterexamples replay, the findings are real, and the default suite is pinned.

Like tlaplus/Examples' manifests: each default configuration's distinct states,
transitions and depth are pinned, so any drift of the semantics shows up as a count
change; every finding declared at the suite's bounds still occurs (a stale declaration
fails), every promised property holds, and no violation goes unexplained.
"""

from __future__ import annotations

import glob
import os
from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, check_model, expected_at
from kreassign.checker.check.suite import DEFAULT_SUITE, QUOTA_SUITE
from kreassign.checker.models.registry import build_model, model_kind
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.spec.findings import FINDINGS, broken, findings_for, promises, trace_file

SCENARIOS = {"zk__cancel_leaves_partition_leaderless.json"}  # curate.py's named scenarios

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(os.path.join(ROOT, "counterexamples", "*.json")))

#: (distinct states, transitions, depth) of every default-suite configuration; kraft at the newest release
#: (4.4.0, ELR on: equal to Kafka 4.4.0's own controller in lockstep, tests/kafka/test_releases.py), and at 3.9.2
PINNED = {
    "kraft": (5193, 21354, 12),
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


def test_every_finding_has_its_file_and_every_file_a_finding():
    declared = {os.path.join(ROOT, trace_file(p, f)) for f in FINDINGS for p in f.profiles}
    assert declared | {os.path.join(ROOT, "counterexamples", n) for n in SCENARIOS} == set(FILES)
    for f in FINDINGS:
        for profile in f.profiles:
            trace = read_trace(os.path.join(ROOT, trace_file(profile, f)))
            assert (trace.profile, trace.property) == (profile, f.property)
            assert trace.description.startswith(f.name + ":")


def test_kraft_at_3_9_keeps_its_counts():
    result = check_model("kraft", replace(DEFAULT_SUITE["kraft"], kafka_version="3.9.2"), liveness_check=False)
    assert (result.states, result.transitions, result.depth) == (4541, 18595, 12)  # Kafka 3.9.2's own, in lockstep
    assert result.unexpected == []


@pytest.mark.parametrize("profile", list(PINNED))
def test_default_suite_counts_and_verdicts(profile):
    kind = model_kind(profile)
    bounds = DEFAULT_SUITE.get(profile) or QUOTA_SUITE[profile]()
    result = check_model(profile, bounds, factory=lambda p, b: build_model(kind, p, b), model_kind=kind)
    assert (result.states, result.transitions, result.depth) == PINNED[profile]
    assert result.unexpected == []  # no unexplained violation, no finding missing
    found_known = {n for n, v in result.properties.items() if v.status == KNOWN}
    expected = {f.property for f in findings_for(profile) if expected_at(f, bounds, profile)}
    assert expected <= found_known <= set(broken(profile))
    for name in promises(profile, tuple(p for p in build_model(kind, profile, bounds).properties()
                                        if p.kind != "sometimes")):
        assert result.properties[name].status == HOLDS, name
