"""`reassignment_can_finish` (AG EF nothing in flight) for every cluster size: a ranking proof or a stuck witness.

The explorer checks these properties on the state graph of a bounded configuration
(checker/explore/liveness.py): from every reachable state, a state with no reassignment in flight
stays reachable through *environment* edges (no admin request, no election). Here:

- **Proof by ranking.** For every state s of the proved inductive invariant H (checker/z3/prove.py's
  Houdini result, for every N from 3 to 32 at once) with a reassignment in flight (the explorer's
  ghost `hO`) — for `_in_sync` also every in-flight target replica live and in the ISR — an
  explicitly chosen *helpful* environment action (`HELPFUL`, a priority list per profile) is
  enabled, and every successor the relation allows (the reference's is one of them: the
  differential test) either has nothing in flight or stays in the region and has a strictly smaller
  measure (`MEASURE`: a tuple of popcounts and counters, compared lexicographically, bounded below
  by zero). Every step is an environment edge, so a finite path to completion exists from every
  such state: the property holds. Each is one unsat query per helpful rule.
- **Refutation by a stuck state.** Bounded model checking from the explorer's initial state (N = 3,
  then 4) to an in-flight state the declared finding's shape suggests (`STUCK_HINT`; for `_in_sync`
  with its premise); the path is re-executed through the explorer's model, and the state at its end
  must be stuck there: no goal reachable through environment edges (the same closure `replay`
  computes). The trace replays, and the stuck state is classified by the findings' signatures.

A branch's choice variables (which valid broker an election takes) are universally quantified in
the proof (every allowed successor must be good); its enabledness is the branch's guard plus the
constraints that name no choice variable (every `choose` has a solution).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import z3
from kreassign.checker.z3.encoding import COUNT_WIDTH, ENUM_WIDTH, Vars, lowest, popcount, subset
from kreassign.checker.z3.reassign import EXPAND, RECOVER, SHRINK, STEP, ReassignEncoding

LIVENESS_PROPERTIES = ("reassignment_can_finish", "reassignment_can_finish_in_sync")


def premise(s: Vars) -> z3.BoolRef:
    """spec/reassign_properties.targets_live_and_in_sync, over the encoding (twin): an in-flight reassignment's
    target (the original, once cancelled; zk: the recorded target `BR` of an accepted request whose step U is
    pending) is live and in the ISR."""
    target = z3.If(s.hQ, s.Q, s.O)
    if "PS" in s:  # the zk encoding
        from kreassign.checker.z3.zk import U

        target = z3.If(z3.And(s.PS == z3.BitVecVal(U, s.PS.size()), s.hBR), s.BR, target)
    return z3.Or(z3.Not(s.hO), subset(target, s.I & s.L))


@dataclass(frozen=True)
class Rule:
    """One helpful action: taken when `when(s)` holds (and no earlier rule's does); `then`: a second
    action (kind, broker of the first state) taken after it unless the first already ended the
    reassignment — the measure is compared after both."""

    name: str
    when: Callable[[Vars], z3.BoolRef]
    kind: int
    broker: Callable[[Vars], z3.BitVecRef] | None = None
    then: tuple[int, Callable[[Vars], z3.BitVecRef] | None] | None = None


def _down(s):  # a registered broker that is not active
    return s.U & ~s.L


def _recover_rules():
    return [
        Rule("a replica's broker recovers (the lowest id)", lambda s: s.R & ~s.L != 0, RECOVER,
             lambda s: lowest(s.R & ~s.L)),
    ]


def _kraft_rules(enc):
    return [
        Rule("leaderless: an ISR member's broker recovers", lambda s: z3.And(s.LD == 0, s.I & ~s.L != 0), RECOVER,
             lambda s: lowest(s.I & ~s.L)),
        *_recover_rules(),
        Rule("a live replica outside the ISR joins it (the lowest id)", lambda s: s.R & ~s.I & s.L != 0, EXPAND,
             lambda s: lowest(s.R & ~s.I & s.L)),
        Rule("every replica live and in sync (an unclean election skipped the completion check): the leader drops "
             "the lowest other ISR member and takes it back, which reruns the check", lambda s: z3.BoolVal(True),
             SHRINK, lambda s: lowest(s.I & ~s.LD), then=(EXPAND, lambda s: lowest(s.I & ~s.LD))),
    ]


def _step_rules(enc):
    return [Rule("the controller takes its step", lambda s: z3.BoolVal(True), STEP)]


def _zk_rules(enc):
    """zk, `_in_sync`. In a clean topic only the first rule is ever taken (the lemmas: a target in sync while in
    flight means a run of the controller is under way). In an unclean topic an election may put the target in sync
    without the completion check (Kafka 3.9.2 checks it after a successful AlterPartition only,
    KafkaController.processAlterPartition → maybeCompleteReassignment): the leader's own ISR changes rerun it.
    A request accepted meanwhile is judged by its own target (`premise`: the recorded `BR` while its step U is
    pending), as Kafka runs the request and step U in one controller event."""
    from kreassign.checker.z3.zk import NONE

    idle = lambda s: s.PS == enc.ps(NONE)
    return [
        Rule("the controller takes its pending step", lambda s: z3.Not(idle(s)), STEP),
        *_recover_rules(),
        Rule("a live replica outside the ISR joins it (the lowest id)", lambda s: s.R & ~s.I & s.L != 0, EXPAND,
             lambda s: lowest(s.R & ~s.I & s.L)),
        Rule("the ISR is all replicas: the leader drops the lowest non-leader removing replica, which reruns "
             "the completion check", lambda s: s.I & ~s.LD & s.RR != 0, SHRINK, lambda s: lowest(s.I & ~s.LD & s.RR)),
        Rule("the ISR is all replicas, no removing one but the leader (an unclean election skipped the completion "
             "check): the leader drops its lowest other ISR member and takes it back, which reruns the check",
             lambda s: z3.BoolVal(True), SHRINK, lambda s: lowest(s.I & ~s.LD),
             then=(EXPAND, lambda s: lowest(s.I & ~s.LD))),
    ]


def _zk_in_phase_b(s):
    from kreassign.checker.z3.zk import B1, B7

    return z3.And(z3.UGE(s.PS, z3.BitVecVal(B1, ENUM_WIDTH)), z3.ULE(s.PS, z3.BitVecVal(B7, ENUM_WIDTH)))


def _zk_region(s):
    """The premise, or phase B (a run that completes or cancels: its steps end the reassignment, whatever
    the ISR — after a cancel's step U the target is the origin, which need not be in sync)."""
    return z3.Or(premise(s), _zk_in_phase_b(s))


def _zk_lemmas(enc):
    """Why zk's target, once in sync, is either being completed or (unclean topics only) unchecked."""
    from kreassign.checker.z3.zk import A1, A2, NONE, U

    ps = lambda s, *ks: z3.Or([s.PS == enc.ps(k) for k in ks])
    moving = lambda s: z3.Or(s.MAR != 0, s.MRR != 0)
    in_sync = lambda s: subset(s.MR & ~s.MRR, s.I)  # the memory's target is in the ISR
    clean = lambda s: z3.Not(s.unc)
    return {
        "moving: a target recorded": lambda s: z3.Implies(z3.Or(moving(s), s.AR != 0, s.RR != 0), s.hBR),
        "phase A: the target not in the ISR": lambda s: z3.Implies(ps(s, A1, A2), z3.Not(in_sync(s))),
        "clean, idle, moving: the target not in the ISR": lambda s: z3.Implies(
            z3.And(clean(s), ps(s, NONE), moving(s)), z3.Not(in_sync(s))),
        "clean, another target's step U pending: the target not in the ISR": lambda s: z3.Implies(
            z3.And(clean(s), ps(s, U), moving(s), s.BR != s.MR & ~s.MRR), z3.Not(in_sync(s))),
        "idle and leaderless: the target not live and in sync": lambda s: z3.Implies(
            z3.And(ps(s, NONE), s.LD == 0, s.hO), z3.Not(subset(z3.If(s.hQ, s.Q, s.O), s.I & s.L))),
    }


def _kraft_lemmas(enc):
    def not_complete(s):
        i1 = z3.If(s.RR != 0, s.I & ~s.RR, s.I)
        r1 = z3.If(s.RR != 0, s.R & ~s.RR, s.R)
        done = z3.And(i1 != 0, r1 != 0, enc.completion_rule(r1, i1, s.AR, s.RR))
        return z3.Implies(z3.Or(s.AR != 0, s.RR != 0), z3.Not(done))

    return {"in flight: the completion rule does not hold yet": not_complete,
            "leaderless: no ISR member active": lambda s: z3.Implies(s.LD == 0, s.I & s.L == 0),
            "leaderless and unclean: no replica active": lambda s: z3.Implies(z3.And(s.LD == 0, s.unc),
                                                                               s.R & s.L == 0)}


def _kraft_measure(enc, s):
    return [popcount(s.R & ~s.L), popcount(s.R & ~s.I)]


def _zk_measure(enc, s):
    """(not in phase B, phase B steps left, replicas down, not at step U, replicas outside the ISR)."""
    from kreassign.checker.z3.zk import B7, U

    c = lambda v: z3.BitVecVal(v, COUNT_WIDTH)
    flag = lambda b: z3.If(b, c(1), c(0))
    ps = z3.ZeroExt(COUNT_WIDTH - ENUM_WIDTH, s.PS)
    in_b = _zk_in_phase_b(s)
    return [flag(z3.Not(in_b)), z3.If(in_b, c(B7 + 1) - ps, c(0)),
            popcount(s.R & ~s.L), flag(s.PS != enc.ps(U)), popcount(s.R & ~s.I)]


@dataclass(frozen=True)
class Ranking:
    """A profile's helpful-action choice and measure, for one property; `region(s)`: where the measure
    argument lives (the premise implies it)."""

    rules: Callable[[ReassignEncoding], list[Rule]]
    measure: Callable[[ReassignEncoding, Vars], list[z3.BitVecRef]]
    region: Callable[[Vars], z3.BoolRef] = lambda s: z3.BoolVal(True)
    #: extra invariant candidates (name -> predicate), kept if inductive together with the proved invariant
    lemmas: Callable[[ReassignEncoding], dict] = lambda enc: {}


RANKINGS: dict[tuple[str, str], Ranking] = {
    ("kraft", "reassignment_can_finish"): Ranking(_kraft_rules, _kraft_measure, lemmas=_kraft_lemmas),
    ("kraft", "reassignment_can_finish_in_sync"): Ranking(_kraft_rules, _kraft_measure, lemmas=_kraft_lemmas),
    ("kraft-3.7", "reassignment_can_finish_in_sync"): Ranking(_kraft_rules, _kraft_measure, lemmas=_kraft_lemmas),
    ("kip455", "reassignment_can_finish_in_sync"): Ranking(_step_rules, lambda enc, s: [], premise),
    ("kip236", "reassignment_can_finish_in_sync"): Ranking(_step_rules, lambda enc, s: [], premise),
    ("zk", "reassignment_can_finish_in_sync"): Ranking(_zk_rules, _zk_measure, _zk_region, lemmas=_zk_lemmas),
}


def strengthen(enc: ReassignEncoding, invariant: list[str], ranking: Ranking, *,
               timeout_ms: int | None = None) -> tuple[list, list[str]]:
    """The proved invariant (candidate names of `enc`) plus those of the ranking's lemmas that are inductive
    with it (Houdini over the union: the invariant's own conjuncts are never dropped, they are inductive
    together). Returns (predicates, names of the lemmas kept)."""
    from kreassign.checker.z3.encoding import Candidate, houdini

    by_name = {c.name: c for c in enc.candidates()}
    base = [by_name[n] for n in invariant]
    extra = [Candidate(n, p) for n, p in ranking.lemmas(enc).items()]
    if not extra:
        return [c.holds for c in base], []
    h = houdini(enc, base + extra, enc.KINDS, pure_bv=True, timeout_ms=timeout_ms)
    kept = [c.name for c in extra if c.name in h.inductive]
    return [by_name[n].holds if n in by_name else next(c.holds for c in extra if c.name == n)
            for n in h.inductive], kept


def lex_less(a: list, b: list) -> z3.BoolRef:
    """a < b lexicographically (unsigned)."""
    if not a:
        return z3.BoolVal(False)
    return z3.Or(z3.ULT(a[0], b[0]), z3.And(a[0] == b[0], lex_less(a[1:], b[1:])))


def _choice_free(con: z3.BoolRef, state_names: set[str]) -> bool:
    """Does a branch constraint name only state and action variables (a guard), no choice variable?"""
    from z3.z3util import get_vars

    return all(v.decl().name().split(".")[0] in state_names for v in get_vars(con))


def _action(enc: ReassignEncoding, s: Vars, t: Vars, lab: Vars, kind: int, b, tag: str):
    """(enabled, relation) of the action (kind, broker b or none) from s to t."""
    a = Vars({"k": z3.BitVecVal(kind, ENUM_WIDTH), "tgt": enc.zero, "b": enc.zero if b is None else b})
    branch = next(br for br in enc.branches(s, a, tag) if br.kind == kind)
    names = {s.R.decl().name().split(".")[0]}
    guard = z3.And(branch.guard, *[c for c in branch.cons if _choice_free(c, names)],
                   *([enc.broker_param(a), subset(a.b, s.U)] if b is not None else []))
    return guard, enc.trans(s, a, t, lab, tag)


@dataclass
class RankingResult:
    proved: bool
    rule: str | None = None  # the rule a counterexample to it was found for
    model: z3.ModelRef | None = None
    seconds: float = 0.0


def prove_ranking(enc: ReassignEncoding, ranking: Ranking, invariant: list, *, in_sync: bool,
                  timeout_ms: int | None = None) -> RankingResult:
    """The ranking argument (module doc) on `enc` under the invariant `invariant` (state predicates)."""
    started = time.perf_counter()
    s, t, lab = enc.state("s"), enc.state("t"), enc.label("l")
    hyp = [inv(s) for inv in invariant] + [s.hO, ranking.region(s)]
    rules = ranking.rules(enc)
    mu_s = ranking.measure(enc, s)
    region_ok = [inv(s) for inv in invariant] + [s.hO, z3.Not(ranking.region(s))]
    if in_sync:
        hyp.append(premise(s))
        region_ok.append(premise(s))
    solver = z3.SolverFor("QF_BV")
    if timeout_ms:
        solver.set("timeout", timeout_ms)
    # the premise implies the region
    solver.push()
    solver.add(*region_ok)
    r = solver.check()
    if r != z3.unsat:
        return RankingResult(False, "region", solver.model() if r == z3.sat else None, time.perf_counter() - started)
    solver.pop()
    solver.add(*hyp)
    earlier: list[z3.BoolRef] = []
    for i, rule in enumerate(rules):
        taken = z3.And(*[z3.Not(e) for e in earlier], rule.when(s))
        good = lambda u: z3.Or(z3.Not(u.hO), z3.And(ranking.region(u), lex_less(ranking.measure(enc, u), mu_s)))
        enabled1, step1 = _action(enc, s, t, lab, rule.kind, rule.broker(s) if rule.broker else None, f"live{i}")
        if rule.then is None:
            bad = z3.Or(z3.Not(enabled1), z3.And(step1, z3.Not(good(t))))
        else:
            t2, lab2 = enc.state(f"t2_{i}"), enc.label(f"l2_{i}")
            kind2, broker2 = rule.then
            enabled2, step2 = _action(enc, t, t2, lab2, kind2, broker2(s) if broker2 else None, f"live{i}b")
            bad = z3.Or(z3.Not(enabled1), z3.And(step1, t.hO, z3.Or(z3.Not(enabled2), z3.And(step2, z3.Not(good(t2))))))
        solver.push()
        solver.add(taken, bad)
        r = solver.check()
        model = solver.model() if r == z3.sat else None
        solver.pop()
        if r != z3.unsat:
            return RankingResult(False, rule.name, model, time.perf_counter() - started)
        earlier.append(rule.when(s))
    # some rule applies in every state of the region
    solver.add(*[z3.Not(e) for e in earlier])
    r = solver.check()
    if r != z3.unsat:
        return RankingResult(False, "no rule applies", solver.model() if r == z3.sat else None,
                             time.perf_counter() - started)
    return RankingResult(True, seconds=time.perf_counter() - started)


# -- refutation: bounded model checking to a stuck state ---------------------------------------------------

#: the shape of a declared finding's stuck state, over the encoding (twin: spec/findings.py's signatures
#: stuck_on_stale_adding and stuck_leaderless), to steer bounded model checking towards it. Only a search
#: hint: a witness counts once the explorer's model confirms no completion is reachable from it and the
#: finding's own signature classifies it (refute_liveness), so a wrong hint can cost a verdict ("unknown"),
#: never give a wrong one
STUCK_HINT: dict[str, Callable[[Vars], z3.BoolRef]] = {
    "stale_adding_never_completes": lambda s: s.AR & s.RR != 0,
    # leaderless with every broker up: no recovery left to trigger an election
    "leaderless_for_good": lambda s: z3.And(s.LD == 0, s.L == s.U),
}


def refute_liveness(profile: str, prop_name: str, *, concrete_path: Callable, write: Callable,
                    brokers: tuple[int, ...], max_depth: int, targets: str = "rf",
                    out_dir: str | None = "kreassign-out", kafka_version: str | None = None, variant=None,
                    budget_s: float | None = None, max_attempts: int = 20):
    """Bounded model checking from the explorer's initial state (N = 3, then 4) to an in-flight state of a
    declared finding's shape (for `_in_sync` with its premise), re-executed by the explorer's model, kept
    when no goal is reachable from it through environment edges there; (brokers, trace file, steps,
    (stuck state,)) or None. `concrete_path` and `write` are prove.py's (re-execution, trace file)."""
    from kreassign.checker.traces.replay import no_goal_reachable
    from kreassign.checker.z3.encoding import Bmc
    from kreassign.checker.z3.profiles import encoding
    from kreassign.checker.z3.results import findings_for
    from kreassign.spec.reassign_properties import PROPERTIES

    prop = next(p for p in PROPERTIES if p.name == prop_name)
    start_ok = prop.extra.get("from") or (lambda ms: True)
    name = profile if kafka_version is None else f"{profile}@{kafka_version}"
    deadline = float("inf") if budget_s is None else time.perf_counter() + budget_s
    for n in brokers:
        kw = {"targets": targets, "epochs": True, "exact_rf": targets == "rf"}
        enc = variant[0](n, **kw) if variant else encoding(profile, n, kafka_version=kafka_version, **kw)
        release = enc.KAFKA_VERSION if enc.profile == "kraft" else None
        hints = [STUCK_HINT[f.name] for f in findings_for(profile, prop_name, release) if f.name in STUCK_HINT]
        hints = hints or list(STUCK_HINT.values())  # no finding declared: any stuck shape known
        bmc = Bmc(enc, init=enc.init_explorer)
        s0 = bmc.states[0]
        preferences = [[z3.Not(s0.unc), s0.rf == min(2, n)], [z3.Not(s0.unc)], []]
        for depth in range(1, max_depth + 1):
            if time.perf_counter() > deadline:
                return None
            bmc.unroll(depth)
            end = bmc.states[depth]
            bad = z3.And(end.hO, z3.Or([h(end) for h in hints]) if hints else z3.BoolVal(True),
                         premise(end) if prop_name.endswith("_in_sync") else z3.BoolVal(True))
            blocked: list[z3.BoolRef] = []
            for _ in range(max_attempts):
                if time.perf_counter() > deadline:
                    return None
                model = None
                for prefer in preferences:
                    model = bmc.find(depth, bad, blocked + prefer)
                    if model is not None:
                        break
                if model is None:
                    break
                path = concrete_path(variant[1] if variant else profile, enc, bmc, model, depth, targets,
                                      kafka_version)
                if path is not None:
                    rm, steps = path
                    last = steps[-1][0]
                    if start_ok(last) and not prop.predicate(last) and no_goal_reachable(rm, prop, last):
                        return n, write(name, prop, rm, steps, out_dir, replayable=variant is None), depth, (last,)
                blocked.append(bmc.block(model, depth))
    return None


def prove_liveness(make, name: str, *, invariant: list[str], max_brokers: int, min_brokers: int, targets: str,
                   prune_width: int, timeout_ms: int | None = None) -> tuple[bool, list[str], str]:
    """The ranking argument for `name` on the encoding class `make`, under the proved invariant (names):
    first at `prune_width` (a counterexample over that many brokers is one at any larger width: the brokers
    are a symbolic prefix, and the invariant proved at the larger width holds there), then at
    `max_brokers`. Returns (proved, the extra lemmas kept, why not)."""
    ranking = RANKINGS.get((make.profile, name))
    if ranking is None:
        return False, [], "no ranking for this profile"
    in_sync = name.endswith("_in_sync")
    widths = [w for w in (prune_width, max_brokers) if w <= max_brokers]
    kept: list[str] = []
    for w in dict.fromkeys(widths):
        enc = make(w, targets=targets, epochs=False, min_brokers=min(min_brokers, w))
        inv, kept = strengthen(enc, invariant, ranking, timeout_ms=timeout_ms)
        r = prove_ranking(enc, ranking, inv, in_sync=in_sync, timeout_ms=timeout_ms)
        if not r.proved:
            return False, kept, f"the ranking fails at width {w} (rule: {r.rule})"
    return True, kept, ""
