"""zk's `reassignment_can_finish_in_sync` by ranking (checker/z3/liveness.py): proved, clean and unclean topics, and
the broken variants it catches (a premise that lags behind an accepted request, a measure or lemmas missing)."""

from __future__ import annotations

import dataclasses

import pytest

z3 = pytest.importorskip("z3")

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.liveness import stuck_states
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.z3 import liveness as LV
from kreassign.checker.z3.encoding import houdini, make_val, subset
from kreassign.checker.z3.zk import NONE, U, ZkEncoding
from kreassign.spec import reassign_properties as RP

IN_SYNC = LV.LIVENESS_PROPERTIES[1]
RANKING = LV.RANKINGS[("zk", IN_SYNC)]
WIDTH = 5
CLEAN = lambda s: z3.Not(s.unc)  # the topic's unclean.leader.election.enable is off


@pytest.fixture(scope="module")
def enc_inv():
    enc = ZkEncoding(WIDTH, epochs=False, min_brokers=3)
    names = houdini(enc, enc.candidates(), enc.KINDS, pure_bv=True).inductive
    inv, kept = LV.strengthen(enc, names, RANKING)
    return enc, names, inv, kept


def _prove(enc_inv, ranking, *, clean=True):
    enc, names, _, _ = enc_inv
    inv, _ = LV.strengthen(enc, names, ranking)
    return LV.prove_ranking(enc, ranking, inv + ([CLEAN] if clean else []), in_sync=True)


def test_every_lemma_is_inductive(enc_inv):
    enc, _, _, kept = enc_inv
    assert kept == list(RANKING.lemmas(enc))


def test_clean_topic_proved_by_the_controllers_steps_alone(enc_inv):
    """With unclean election off, every in-flight state with its target in sync has a controller step pending."""
    enc, _, inv, _ = enc_inv
    assert _prove(enc_inv, RANKING).proved
    s = enc.state("s")
    solver = z3.SolverFor("QF_BV")
    solver.add(*[p(s) for p in inv], s.hO, LV.premise(s), CLEAN(s))
    assert solver.check() == z3.sat
    solver.add(s.PS == enc.ps(NONE))
    assert solver.check() == z3.unsat


def test_unclean_topic_proved_too(enc_inv):
    assert _prove(enc_inv, RANKING, clean=False).proved


def _ghost_only(s):
    """The premise before the fix: the ghost's target, which lags behind a request whose step U is pending."""
    return z3.Or(z3.Not(s.hO), subset(z3.If(s.hQ, s.Q, s.O), s.I & s.L))


def test_a_premise_lagging_behind_the_accepted_request_fails_at_step_u(enc_inv, monkeypatch):
    """The broken variant, on both sides: judged on the ghost's target, a state whose target is in sync after an
    unclean election, with a request for another target accepted (step U pending), is stuck once U takes the only
    ISR member away. z3's ranking fails there, and the explorer finds the same violation
    (kreassign check --profile zk --brokers 3 --rf 1 --reassigns 2 --failures 1 --unclean)."""
    monkeypatch.setattr(LV, "premise", _ghost_only)
    enc = enc_inv[0]
    r = _prove(enc_inv, RANKING, clean=False)
    assert not r.proved and r.rule == RANKING.rules(enc)[0].name
    s = enc.state("s")
    assert z3.is_true(r.model.eval(s.unc)) and r.model.eval(s.PS).as_long() == U
    assert _explorer_holds() is True
    monkeypatch.setattr(RP, "_accepted_target", lambda ms, topic, index: None)
    assert _explorer_holds() is False


def _explorer_holds() -> bool:
    """`kreassign check`'s verdict: no stuck state where the property's premise (its "from") holds."""
    model = ReassignmentModel("zk", Bounds(brokers=3, rf=1, reassigns=2, failures=1, unclean=True))
    graph = explore(model, keep_graph=True).graph
    prop = next(p for p in model.properties() if p.name == IN_SYNC)
    return not any(prop.extra["from"](graph.states[i]) for i in stuck_states(graph, prop.predicate))


def test_measure_without_the_phase_b_countdown_fails(enc_inv):
    """Phase B's steps keep the flag "not in phase B" at 0: only the steps left count down."""
    measure = lambda e, s: [x for i, x in enumerate(RANKING.measure(e, s)) if i != 1]
    r = _prove(enc_inv, dataclasses.replace(RANKING, measure=measure))
    assert not r.proved and r.rule == RANKING.rules(enc_inv[0])[0].name


def test_without_the_lemmas_the_clean_proof_fails(enc_inv):
    r = _prove(enc_inv, dataclasses.replace(RANKING, lemmas=lambda e: {}))
    assert not r.proved


@pytest.mark.parametrize("bounds", [Bounds(brokers=3, rf=1, reassigns=2, failures=1, unclean=True),
                                    Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, failovers=1)])
def test_the_premise_twin_agrees_with_the_spec_on_every_explored_state(bounds):
    """liveness.premise is the twin of spec/reassign_properties.targets_live_and_in_sync: on every reachable zk
    state (projected onto the encoding) both say the same, and some states exercise the accepted request's target
    (step U pending with another target recorded) where the ghost's would say otherwise."""
    model = ReassignmentModel("zk", bounds)
    enc = ZkEncoding(3, epochs=False)
    s = enc.state("s")
    pred = LV.premise(s)
    ghost_only = _ghost_only(s)
    differs = 0
    for ms in explore(model, keep_graph=True).graph.states:
        values = enc.project_state(ms, bounds.rf)
        subs = [(s[f.name], make_val(f, values[f.name], 3)) for f in enc.STATE if f.name in values]
        mine = z3.is_true(z3.simplify(z3.substitute(pred, *subs)))
        assert mine == RP.targets_live_and_in_sync(ms), ms
        differs += mine != z3.is_true(z3.simplify(z3.substitute(ghost_only, *subs)))
    assert differs > 0
