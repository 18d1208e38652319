"""The z3 encoding of the controller mutation quota: tied to the quota model, proofs, exact refutations."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
import z3
from kreassign.checker.models.quota import QuotaModel, quota_model
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.format import read_trace
from kreassign.checker.z3.encoding import Bmc, Candidate, StepSystem, houdini
from kreassign.checker.z3.prove import PROVED, REFUTED
from kreassign.checker.z3.quota import (
    QuotaEncoding,
    prove_interval_strict,
    prove_quota,
    prove_topic_induction,
    quota_differential,
    zmin,
)
from kreassign.reference import quota as ref
from kreassign.spec import quota as Q
from kreassign.spec.findings import broken


@pytest.mark.parametrize("profile,size", [("kip599", "small"), ("kip599", "quota-change"), ("kip599", "rounding"),
                                          ("kip599-draft", "small")])
def test_encoding_agrees_with_the_quota_model_on_every_state(profile, size):
    report = quota_differential(quota_model(profile, size))
    assert report.edges > 40
    assert report.ok, "\n".join(report.mismatches)


#: strict [1] and [3], an old client's [1,1] (its two throttles differ: the last is not the smallest)
MIXED = (Q.RequestShape(Q.CREATE_TOPICS, 7, (1,)), Q.RequestShape(Q.CREATE_TOPICS, 7, (3,)),
         Q.RequestShape(Q.CREATE_TOPICS, 5, (1, 1)))


def mixed(profile: str, rule=None) -> QuotaModel:
    return QuotaModel(replace(quota_model(profile, "small").config, shapes=MIXED, ticks=(1000,), token_floor=None),
                      rule=rule)


@pytest.mark.parametrize("profile", ["kip599", "kip599-draft"])
def test_encoding_agrees_with_old_clients_of_several_topics(profile):
    assert quota_differential(mixed(profile)).ok


@pytest.mark.parametrize("mutant", [
    replace(ref.KIP599, name="min-throttle", combine_throttles=ref.min_throttle),
    replace(ref.KIP599, name="strict-is-permissive", strict_topic=ref.permissive_record),
    replace(ref.KIP599_DRAFT, name="draft-strict", strict_topic=ref.strict_check_then_record),
], ids=lambda r: r.name)
def test_a_mutated_quota_rule_fails_the_differential_test(mutant):
    profile = "kip599-draft" if mutant.name == "draft-strict" else "kip599"
    report = quota_differential(mixed(profile, mutant), max_mismatches=1)
    assert not report.ok


@pytest.mark.parametrize("profile", ["kip599", "kip599-draft"])
def test_quota_verdicts_match_the_explorer(profile, tmp_path):
    results = {r.property: r for r in prove_quota(profile, out_dir=str(tmp_path))}
    proved = {n for n, r in results.items() if r.verdict == PROVED} - {"inductive_invariant"}
    refuted = {n for n, r in results.items() if r.verdict == REFUTED}
    assert proved == {Q.TOKENS_WITHIN_BURST, Q.STRICT_OVERDRAFT_BOUNDED, Q.PERMISSIVE_NEVER_REJECTS,
                      Q.THROTTLE_NEVER_NEGATIVE} | ({Q.LARGE_TOPIC_EVENTUALLY_ADMITTED} if profile == "kip599" else set())
    assert not {n for n, r in results.items() if r.verdict not in (PROVED, REFUTED)}  # nothing unknown
    assert refuted == set(broken(profile))
    for name in refuted:
        trace = read_trace(results[name].counterexample)
        assert (trace.model, trace.profile, trace.engine) == ("quota", profile, "z3")
        assert replay(trace).reproduces
        assert not results[name].unexpected


def test_retry_counterexample_has_exact_numbers(tmp_path):
    results = {r.property: r for r in prove_quota("kip599", properties=[Q.RETRY_AFTER_THROTTLE_ADMITTED],
                                                   out_dir=str(tmp_path))}
    trace = read_trace(results[Q.RETRY_AFTER_THROTTLE_ADMITTED].counterexample)
    assert trace.steps[-1]["action"]["type"] == "ClientRetryAfterThrottle"
    assert trace.steps[-1]["state"]["rejected"] > 0
    assert Fraction(trace.bounds["rate"]) > 0


def test_interval_bound_for_strict_requests_alone():
    assert prove_interval_strict("kip599") and prove_interval_strict("kip599-draft")
    assert not prove_interval_strict("kip599", with_permissive=True)  # old clients break it


def test_topic_induction_for_any_number_of_topics():
    for rule in ("kip599", "kip599-draft"):
        out = prove_topic_induction(rule)
        assert out[Q.STRICT_OVERDRAFT_BOUNDED] and out[Q.PERMISSIVE_NEVER_REJECTS]
    assert prove_topic_induction("kip599-draft")["large_never_admitted"]


def test_invariants_are_not_vacuous():
    """A false candidate is dropped, a too tight overdraft bound is reached, negative tokens are reachable."""
    enc = QuotaEncoding("kip599")
    cands = [Candidate("mute ≤ 1000", lambda s: s.mute <= 1000),
             Candidate(Q.TOKENS_WITHIN_BURST, enc.state_properties()[Q.TOKENS_WITHIN_BURST])]
    cands += [Candidate(n, p) for n, p in enc.lemmas().items()]
    h = houdini(enc, cands, enc.KINDS)
    assert Q.TOKENS_WITHIN_BURST in h.inductive and h.dropped["mute ≤ 1000"] == "step"
    system = StepSystem.build(enc, enc.KINDS)
    system.assume(list(enc.lemmas().values()))
    lab = system.lab
    assert system.counterexample(z3.And(lab.req, lab.strict, lab.q0, lab.M1 < zmin(lab.M0, -lab.big + 0.5)))
    bmc = Bmc(enc, init=lambda s: z3.And(enc.init(s), s.r == 1))
    bmc.unroll(2)
    assert bmc.find(2, z3.And(z3.Not(bmc.states[2].full), bmc.states[2].K < -1)) is not None
