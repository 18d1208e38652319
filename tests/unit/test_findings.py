"""Promises and findings: declarations are consistent, signatures classify, the guard catches new bugs.

- every property a profile checks is either promised or has findings, never both;
- each finding's curated trace replays and its signature matches the trace's violation;
- a planted bug that breaks a property *with* a finding in another way is unexpected (per profile);
- a declared finding that no longer occurs fails the check (`finding-missing`);
- `expected_at`: a finding is expected exactly at bounds dominating its own.
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from kreassign.checker.check.run import (
    FAILING,
    FINDING_MISSING,
    HOLDS,
    VIOLATED,
    check_model,
    engine_properties,
    expected_at,
)
from kreassign.checker.check.suite import DEFAULT_SUITE, QUOTA_SUITE
from kreassign.checker.config.bounds import Bounds, bounds_from_mapping
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.models.registry import build_model
from kreassign.checker.traces.format import read_trace
from kreassign.reference.kip236 import Kip236Profile
from kreassign.reference.kip455 import Kip455Profile
from kreassign.reference.kraft import Kraft37Profile, KraftProfile
from kreassign.reference.steps import Step
from kreassign.reference.zk import ZkProfile
from kreassign.spec import findings as F
from kreassign.spec import kafka_releases
from kreassign.spec.properties import ALWAYS, EVENTUALLY, TRANSITION
from kreassign.spec.reassign_properties import ALL, PROPERTIES
from kreassign.spec.state import NO_LEADER, ordered_minus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFILES = list(DEFAULT_SUITE) + list(QUOTA_SUITE)


def _properties(profile):
    bounds = DEFAULT_SUITE.get(profile) or QUOTA_SUITE[profile]()
    kind = "reassignment" if profile in DEFAULT_SUITE else "quota"
    return build_model(kind, profile, bounds).properties()


# -- declarations ----------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_every_property_is_promised_or_has_findings_never_both(profile):
    # kraft: at every Kafka release (a release may break what an earlier one kept, or fix it)
    releases = [r.version for r in kafka_releases.RELEASES] if profile == "kraft" else [None]
    for release in releases:
        for prop in _properties(profile):
            if prop.kind not in (ALWAYS, TRANSITION, EVENTUALLY):
                continue
            promised = prop.promised(profile, release)
            found = bool(F.findings_for(profile, prop.name, release))
            assert promised != found, f"{profile} {release} {prop.name}: promised={promised}, findings={found}"


def test_findings_name_known_properties_and_unique_names():
    names = {p.name for p in PROPERTIES} | {p.name for prof in QUOTA_SUITE for p in _properties(prof)}
    names |= {p.name for p in ReassignmentModel("kraft", Bounds(throttles=True, create_partitions=1, fair=True,
                                                                broker_replicas=True,
                                                                kraft_actions=("restart",))).properties()}
    names |= {p.name for p in ReassignmentModel("zk", Bounds(zk_versions=True, broker_replicas=True)).properties()}
    from kreassign.checker.models import quota_handlers as qh  # the client capabilities (issue 26)
    names |= {p.name for p in qh.QuotaHandlersModel(qh.HandlersConfig(retry=True, validate_only_sizes=(1,)))
              .properties()}
    names |= {p.name for p in ReassignmentModel("kraft", Bounds(throttles=True, actors=(  # the actors (issue 26)
        "auto-throttler", "second-operator", "bad-plans"))).properties()}
    names |= {p.name for p in ReassignmentModel("kraft", Bounds(actors=("rebalancer",))).properties()}
    seen = set()
    for f in F.FINDINGS:
        assert f.property in names, f.property
        assert f.summary and f.signature.__doc__, f.name
        for profile in f.profiles:
            assert (profile, f.property, f.name) not in seen
            seen.add((profile, f.property, f.name))


def test_promises_lists_the_rest():
    assert "isr_in_replicas" in F.promises("kraft") and "isr_in_replicas" not in F.promises("zk")
    assert F.known_violation("kraft", "adding_removing_disjoint") == \
        "counterexamples/kraft__adding_removing_disjoint__stale_adding_replica.json"
    assert F.known_violation("kraft", "isr_in_replicas") is None


def _occurrence(profile, finding):
    """(model, trace) of a finding's curated file."""
    trace = read_trace(os.path.join(ROOT, F.trace_file(profile, finding)))
    return build_model(trace.model, trace.profile, trace.bounds), trace


@pytest.mark.parametrize("profile,finding", [(p, f) for f in F.FINDINGS for p in f.profiles],
                         ids=lambda x: x if isinstance(x, str) else x.property + "::" + x.name)
def test_curated_trace_is_an_occurrence_of_its_finding(profile, finding):
    model, trace = _occurrence(profile, finding)
    assert (trace.profile, trace.property) == (profile, finding.property)
    prop = next(p for p in model.properties() if p.name == finding.property)
    states = [model.state_from_json(trace.initial)] + [model.state_from_json(s["state"]) for s in trace.steps]
    if prop.kind == ALWAYS:
        assert not prop.predicate(states[-1]) and finding.signature(states[-1])
    elif prop.kind == TRANSITION:
        action = model.action_from_json(trace.steps[-1]["action"])
        label = dict(model.successors(states[-2]))
        edge = next(lab for lab in label if getattr(lab, "action", lab) == action)
        assert not prop.predicate(states[-2], edge, states[-1]) and finding.signature(states[-2], edge, states[-1])
    else:  # a lasso: some state of it is stuck in the way the signature describes
        assert trace.loop_start is not None or trace.steps
        assert any(finding.signature(s) for s in states)


def test_at_bounds_of_each_finding_are_valid_and_its_trace_was_found_there():
    for f in F.FINDINGS:
        if "config" in f.at:
            continue
        bounds = Bounds(**f.at)
        for profile in f.profiles:
            assert expected_at(f, bounds, profile)
            trace = read_trace(os.path.join(ROOT, F.trace_file(profile, f)))
            found = bounds_from_mapping(dict(trace.bounds))
            # curated at a release that has the finding (the bounds record it: ReassignmentModel.describe)
            assert replace(found, kafka_version="", elr="") == bounds
            assert f.occurs_in(profile, found.kafka_version or None)


def test_expected_at_dominating_bounds_only():
    f = next(f for f in F.findings_for("kraft", "cancel_restores_original_replicas"))
    assert expected_at(f, Bounds(brokers=4, reassigns=2, cancels=1), "kraft")
    assert expected_at(f, Bounds(brokers=5, reassigns=3, cancels=2, failures=1, failovers=1, partitions=2), "kraft")
    assert not expected_at(f, Bounds(brokers=3, reassigns=2, cancels=1), "kraft")  # fewer brokers
    assert not expected_at(f, Bounds(brokers=4, reassigns=1, cancels=1), "kraft")  # no override
    assert not expected_at(f, Bounds(brokers=4, rf=3, reassigns=2, cancels=1), "kraft")  # another RF
    assert not expected_at(f, Bounds(brokers=4, reassigns=2, cancels=1, isr_changes=False), "kraft")
    quota = next(f for f in F.findings_for("kip599"))
    assert expected_at(quota, QUOTA_SUITE["kip599"](), "kip599")


def test_engine_properties_split_a_property_with_findings():
    props = [p for p in PROPERTIES if p.name in ("adding_removing_disjoint", "isr_in_replicas")]
    names = [p.name for p in engine_properties(props, "kraft")]
    assert names == ["adding_removing_disjoint", "adding_removing_disjoint::stale_adding_replica", "isr_in_replicas"]


# -- the guard: a planted bug on a property with findings is unexpected -------------------------------


class KraftRevertDropsAnOriginal(KraftProfile):
    """Broken on purpose: the revert also drops the last original replica (not the known override leak)."""

    def revert(self, part):
        replicas, isr, unclean = super().revert(part)
        if len(replicas) > 1:
            replicas = replicas[:-1]
            isr = ordered_minus(isr, part.replicas[-1:]) or replicas[:1]
        return replicas, isr, unclean


class Kraft37CompletesOnAnyAdding(Kraft37Profile):
    """Broken on purpose: 3.7 completes once *one* adding replica is in sync (not the known retained lag)."""

    completion_rule = staticmethod(lambda r, i, adding, removing=(): not adding or bool(set(adding) & set(i)))


class ZkRequestDropsTheLeader(ZkProfile):
    """Broken on purpose: an accepted reassignment request itself leaves the partition leaderless
    (not the known step-U offline leader)."""

    def apply(self, state, action):
        step = super().apply(state, action)
        if type(action).__name__ == "Reassign" and step.state != state:
            t, i, p = next(iter(step.state.partitions()))
            return Step(step.state.with_partition(t, i, replace(p, leader=NO_LEADER)), step.response)
        return step


class Kip455CancelKeepsAdding(Kip455Profile):
    """Broken on purpose: a cancel forgets AR and keeps every replica (not the known joined replicas)."""

    def cancel_partition(self, state, topic, index):
        part = state.partition(topic, index)
        return self.put(state, topic, index, replace(part, adding=(), removing=())), 0, None


class Kip236DropsAnInSyncOriginal(Kip236Profile):
    """Broken on purpose: a request drops an original replica that is in sync (the known drop rule only
    drops out-of-sync ones)."""

    def apply(self, state, action):
        step = super().apply(state, action)
        t, i, p = next(iter(step.state.partitions()))
        if type(action).__name__ == "Reassign" and p.removing and p.removing[0] in p.isr and p.removing[0] != p.leader:
            gone = p.removing[0]
            p = replace(p, replicas=ordered_minus(p.replicas, (gone,)))
            return Step(step.state.with_partition(t, i, p), step.response)
        return step


GUARD = {
    "kraft": (KraftRevertDropsAnOriginal, "cancel_restores_original_replicas"),
    "kraft-3.7": (Kraft37CompletesOnAnyAdding, "completion_reaches_target"),
    "zk": (ZkRequestDropsTheLeader, "admin_action_keeps_a_leader"),
    "kip455": (Kip455CancelKeepsAdding, "cancel_restores_original_replicas"),
    "kip236": (Kip236DropsAnInSyncOriginal, "original_in_replicas"),
}


@pytest.mark.parametrize("profile", ALL)
def test_a_new_way_to_break_a_property_with_findings_fails_the_check(profile, tmp_path):
    mutant, prop = GUARD[profile]
    assert F.findings_for(profile, prop), "the guard must target a property that has findings"
    # the real profile's violations of `prop` are all known (tests/unit/test_counterexamples.py)
    planted = check_model(profile, DEFAULT_SUITE[profile], factory=lambda _p, b: ReassignmentModel(mutant(), b),
                          liveness_check=False, minimize_counterexamples=False, out_dir=str(tmp_path))
    assert planted.properties[prop].status == VIOLATED
    assert prop in planted.unexpected  # `kreassign check` exits 1 on it
    assert os.path.exists(planted.properties[prop].counterexample)


def test_a_finding_that_no_longer_occurs_fails_the_check(monkeypatch):
    """A fixed algorithm (here: kraft with a finding declared on a property it keeps) is news too."""
    ghost = F.Finding("never_happens", "isr_in_replicas", ("kraft",), lambda s: True, "planted declaration",
                      {"brokers": 3, "rf": 2, "reassigns": 1, "cancels": 0, "failures": 0})
    monkeypatch.setattr(F, "FINDINGS", F.FINDINGS + (ghost,))
    result = check_model("kraft", Bounds(brokers=3, reassigns=1, cancels=1), liveness_check=False)
    v = result.properties["isr_in_replicas"]
    assert v.status == FINDING_MISSING and v.missing == ["never_happens"]
    assert "isr_in_replicas" in result.unexpected and FINDING_MISSING in FAILING
    # below the declared bounds the finding is not expected: no failure
    smaller = check_model("kraft", Bounds(brokers=2, reassigns=1, cancels=1), liveness_check=False)
    assert smaller.properties["isr_in_replicas"].status == HOLDS


def test_a_signature_too_narrow_leaves_the_violation_unexpected(monkeypatch):
    """A violation of a property with a finding whose signature does not match is unexpected."""
    narrow = tuple(replace(f, signature=lambda *x: False) if f.name == "stale_adding_replica" else f
                   for f in F.FINDINGS)
    monkeypatch.setattr(F, "FINDINGS", narrow)
    result = check_model("kraft", Bounds(brokers=3, reassigns=2, cancels=0), liveness_check=False,
                         minimize_counterexamples=False)
    v = result.properties["adding_removing_disjoint"]
    assert v.status == VIOLATED and v.missing == ["stale_adding_replica"]
