"""`large_topic_eventually_admitted` (KIP-599) for all rates, bursts, tick lengths and sizes: a ranking proof.

The explorer asks AG EF "a strict topic larger than the burst has been admitted" on the quota
model (checker/models/quota.py; every quota action is an environment edge there). Here, over
the quota encoding (checker/z3/quota_encoding.py, tied to the model by quota.py's `quota_differential`), from every
state of the proved invariant H an explicitly chosen *helpful* action is enabled and each of its
successors either admits a large topic or is smaller in a well-founded measure:

1. no quota in force: the admin sets one (any rate ρ > 0; the explorer's `quota_changes` name the
   rates an admin may set) — the measure's first component, "no quota", drops from 1 to 0;
2. measured tokens below zero: time passes by the run's tick length t (any t ≥ 1 ms, the same
   for the whole run) — the tokens rise by r·t/1000 with the rate r unchanged, or reach ≥ 0:
   the second component, the deficit max(0, −tokens), drops by at least the fixed r·t/1000 > 0,
   so at most ⌈deficit·1000/(r·t)⌉ ticks are needed (well-founded although the deficit is real);
3. measured tokens ≥ 0: a strict request of one topic of ⌊burst⌋ + 1 mutations is sent — enabled
   under any token floor ≤ 0 (the explorer's default floor is −(its largest request)), and it must
   be admitted: the goal.

The environment this assumes, as the explorer's configurations state it: a tick length, a strict
request with a topic larger than the burst, and (only where the quota can be removed) a rate the
admin may set again. Under the draft rule (`kip599-draft`, admitted iff tokens ≥ N) step 3 fails —
the draft never admits such a topic, which quota.py refutes with a lasso — so the draft is the
broken variant the explorer and this proof must both reject.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import z3
from kreassign.checker.z3.encoding import Vars
from kreassign.checker.z3.quota_encoding import QUOTA, SEND, TICK, QuotaEncoding

RULE_NAMES = (
    "no quota in force: the admin sets one (any rate > 0)",
    "tokens below zero: a tick of the run's length t ≥ 1 ms",
    "tokens ≥ 0: a strict request of one topic larger than the burst",
)


@dataclass
class QuotaRankingResult:
    proved: bool
    rule: str | None = None  # the helpful rule a counterexample was found for
    model: z3.ModelRef | None = None
    seconds: float = 0.0


def large_admitted(enc: QuotaEncoding, s: Vars, lab: Vars) -> z3.BoolRef:
    """QuotaModel._send's `large`: a strict request under a quota admitted a topic larger than the burst."""
    return z3.And(lab.req, lab.strict, lab.q0, z3.ToReal(lab.admbig) > s.B)


def _action(enc: QuotaEncoding, kind: int, **values) -> Vars:
    """One action's fields; the parameters it does not use are 0, as the relation requires."""
    a = {"ms": z3.IntVal(0), "st": z3.BoolVal(False), "nt": z3.IntVal(0), "qon": z3.BoolVal(False),
         "qr": z3.RealVal(0), **{f"n{i}": z3.IntVal(0) for i in range(enc.T)}, **values}
    a["k"] = z3.BitVecVal(kind, enc.action("probe").k.size())
    return Vars(a)


def prove_large_topic(rule: str, invariant: Sequence[Callable[[Vars], z3.BoolRef]], *,
                      enc: QuotaEncoding | None = None, skip: Sequence[int] = ()) -> QuotaRankingResult:
    """The ranking argument (module doc) for `rule` under `invariant` (state predicates of `enc`, which
    defaults to QuotaEncoding(rule)); `skip`: indices of helpful rules to leave out (a broken argument,
    for tests). Enabledness is each helpful action's guard in the relation (QuotaEncoding.trans: a tick
    of ≥ 1 ms; a valid shape at tokens ≥ the floor; a quota set where none is); under it the relation
    always has a successor (its one choice, Math.round's quotient, exists since the rate is > 0)."""
    started = time.perf_counter()
    enc = enc or QuotaEncoding(rule, topics=2)
    s, t, lab = enc.state("s"), enc.state("t"), enc.label("l")
    tick_ms, rho, floor = z3.Int("run.t"), z3.Real("run.rho"), z3.Real("run.floor")
    n = z3.ToInt(s.B) + 1  # the smallest topic larger than the burst
    solver = z3.Solver()
    solver.add(*[inv(s) for inv in invariant], tick_ms >= 1, rho > 0, floor <= 0)
    M, M1 = enc.measure(s), enc.measure(t)
    deficit_drops = z3.And(t.q, t.r == s.r, z3.Or(M1 >= 0, -M1 <= -M - s.r * z3.ToReal(tick_ms) / 1000))
    send = _action(enc, SEND, st=z3.BoolVal(True), nt=z3.IntVal(1), n0=n)
    cases = [  # (when, helpful action, its guard and choice, what a successor must be unless the goal)
        (z3.Not(s.q), _action(enc, QUOTA, qon=z3.BoolVal(True), qr=rho), z3.BoolVal(True), t.q),
        (M < 0, _action(enc, TICK, ms=tick_ms), tick_ms >= 1, deficit_drops),
        (M >= 0, send, z3.And(z3.ToReal(n) > s.B, enc.shape_ok(send, send.nt, [send[f"n{i}"] for i in range(enc.T)]),
                             M >= floor), z3.BoolVal(False)),
    ]
    earlier: list[z3.BoolRef] = []
    for i, (when, a, guard, smaller) in enumerate(cases):
        if i in skip:
            continue
        taken = z3.And(*[z3.Not(e) for e in earlier], when)
        earlier.append(when)
        solver.push()
        solver.add(taken)
        r = solver.check(z3.Not(guard))
        if r != z3.unsat:
            model = solver.model() if r == z3.sat else None
            solver.pop()
            return QuotaRankingResult(False, RULE_NAMES[i] + ": not enabled", model, time.perf_counter() - started)
        solver.add(guard, enc.trans(s, a, t, lab, f"live{i}"), z3.Not(large_admitted(enc, s, lab)), z3.Not(smaller))
        r = solver.check()
        model = solver.model() if r == z3.sat else None
        solver.pop()
        if r != z3.unsat:
            return QuotaRankingResult(False, RULE_NAMES[i], model, time.perf_counter() - started)
    solver.add(*[z3.Not(e) for e in earlier])
    r = solver.check()
    if r != z3.unsat:
        return QuotaRankingResult(False, "no rule applies", solver.model() if r == z3.sat else None,
                                  time.perf_counter() - started)
    return QuotaRankingResult(True, seconds=time.perf_counter() - started)
