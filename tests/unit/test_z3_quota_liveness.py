"""large_topic_eventually_admitted in z3 (checker/z3/quota_liveness.py): proved for kip599 for all parameters,
not for the draft nor for a planted bug, and in each case the explorer's verdict on the quota model agrees."""

from __future__ import annotations

from dataclasses import replace

import pytest
import z3
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.liveness import violation
from kreassign.checker.models.quota import QuotaModel, quota_model
from kreassign.checker.z3.quota import QuotaEncoding, _prove_invariant, quota_differential, zmin
from kreassign.checker.z3.quota_liveness import RULE_NAMES, prove_large_topic
from kreassign.reference import quota as ref
from kreassign.spec.quota import LARGE_TOPIC_EVENTUALLY_ADMITTED as LARGE


def _refill_stops_when_overdrawn(bucket, cfg, now_ms):
    """A planted bug: an overdrawn bucket never refills (the refill's min(burst, tokens + rate × elapsed)
    skipped while tokens < 0)."""
    if bucket is not None and bucket.tokens < 0:
        return ref.TokenBucket(bucket.tokens, now_ms)
    return ref.refill(bucket, cfg, now_ms)


STUCK_RULE = replace(ref.KIP599, name="refill-stops-when-overdrawn", refill=_refill_stops_when_overdrawn)


class StuckEncoding(QuotaEncoding):
    """The planted bug's twin in the encoding (twin of _refill_stops_when_overdrawn)."""

    def measure(self, v, after_ms=0):
        return z3.If(v.full, v.B, z3.If(v.K < 0, v.K, zmin(v.B, v.K + v.r * z3.ToReal(v.s + after_ms) / 1000)))


def proof(rule: str, encoding=QuotaEncoding, skip=()):
    enc = encoding(rule, topics=2)
    _, _, names = _prove_invariant(enc, list(enc.state_properties()))
    by = {**enc.state_properties(), **enc.lemmas()}
    return prove_large_topic(rule, [by[n] for n in names], enc=enc, skip=skip)


def explorer_holds(model) -> bool:
    """`kreassign check`'s verdict: AG EF over the explored graph (checker/explore/liveness.py)."""
    graph = explore(model, keep_graph=True).graph
    return violation(graph, next(p for p in model.properties() if p.name == LARGE)) is None


@pytest.mark.parametrize("case", ["kip599", "kip599-draft", "planted"])
def test_z3_and_the_explorer_agree(case):
    """The tie: the model and the encoding agree on every state (the planted bug's twin with the planted
    bug), and the proof goes through exactly where the explorer finds the property holding."""
    rule, model_rule, encoding = {"kip599": ("kip599", None, QuotaEncoding),
                                  "kip599-draft": ("kip599-draft", None, QuotaEncoding),
                                  "planted": ("kip599", STUCK_RULE, StuckEncoding)}[case]
    model = QuotaModel(quota_model(rule, "small").config, rule=model_rule)
    assert quota_differential(model, encoding=encoding).ok
    holds = explorer_holds(model)
    assert holds is (case == "kip599")
    result = proof(rule, encoding)
    assert result.proved is holds, result.rule
    if case == "kip599-draft":  # the draft admits no topic above the burst: the third helpful step fails
        assert result.rule == RULE_NAMES[2]
    if case == "planted":  # overdrawn for ever: the tick does not reduce the deficit
        assert result.rule == RULE_NAMES[1]


def test_the_planted_encoding_differs_from_the_real_model():
    """Its twin is not the real rule: without the planted bug the model disagrees with it."""
    assert not quota_differential(quota_model("kip599", "small"), encoding=StuckEncoding, max_mismatches=1).ok


@pytest.mark.parametrize("skip", [0, 1, 2])
def test_a_ranking_missing_a_helpful_step_is_not_a_proof(skip):
    result = proof("kip599", skip=(skip,))
    assert not result.proved
