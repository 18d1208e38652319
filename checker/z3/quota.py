"""The controller mutation quota (KIP-599) in z3: bucket bounds and admission proved for all parameters.

The encoding mirrors `reference/quota.py` as the quota model (`checker/models/quota.py`) runs
it: one principal's lazy token bucket — `K` tokens at the last update, `s` ms ago, or `full`
(never used) — under the quota in force (`q`, rate `r` > 0, burst `B`), the throttle of the
last response (`mute`), the topics it rejected (`rej`) and the retry the client may make
(`rp`, wait `rin`, the rejected sizes `rs`). Tokens, rates and bursts are reals (exact
rationals in every model), times and sizes integers; a throttle is Java's Math.round of
−tokens/rate·1000 (or (N − tokens)/rate·1000 for the draft rule), encoded exactly as
floor(x + 1/2). The rate is symbolic, so the proofs are nonlinear (z3's nlsat).

Actions: a tick of any ms ≥ 1; a request (strict or permissive) of 1…T topics of any sizes
≥ 1, admitted topic by topic as the profile's rule says; the client's retry after exactly
its throttle; a quota change to any rate (or its removal), the burst staying c·rate for the
configuration's c = samples × window / 1000 (any c > 0 in the proofs).

What is proved, for all rates, bursts, request sizes and timings:
- tokens_within_burst, throttle_never_negative: inductive invariants of the relation;
- strict_overdraft_bounded, permissive_never_rejects: by induction over the topics of a
  request, so for requests of any number of topics (checked on the whole relation as well);
- for `kip599-draft`, that a strict topic larger than the burst is never admitted — which
  refutes large_topic_eventually_admitted for every configuration with such a topic.
What is refuted, with exact numbers, by bounded model checking over a grid of rates and
windows, each path re-executed by the quota model and written as a replayable trace:
retry_after_throttle_admitted and admitted_within_interval (with old clients).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import z3
from kreassign.checker.z3.encoding import Vars, bind, fast_check, real_val
from kreassign.checker.z3.quota_encoding import (
    RETRY,
    RULES,
    SEND,
    TICK,
    QuotaEncoding,
    zmax,
    zmin,
)
from kreassign.checker.z3.quota_liveness import prove_large_topic
from kreassign.spec import quota as Q

#: the quota properties `kreassign prove` reports (spec/quota.py), in the spec's order
QUOTA_PROPERTY_NAMES = (
    Q.TOKENS_WITHIN_BURST, Q.STRICT_OVERDRAFT_BOUNDED, Q.ADMITTED_WITHIN_INTERVAL, Q.PERMISSIVE_NEVER_REJECTS,
    Q.THROTTLE_NEVER_NEGATIVE, Q.RETRY_AFTER_THROTTLE_ADMITTED, Q.LARGE_TOPIC_EVENTUALLY_ADMITTED,
)


# -- differential test against the quota model -------------------------------------------------------


@dataclass
class QuotaDiffReport:
    states: int = 0
    edges: int = 0
    mismatches: list[str] | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.mismatches


def quota_differential(model, *, max_mismatches: int = 5, encoding: type[QuotaEncoding] | None = None
                       ) -> QuotaDiffReport:
    """Compare the encoding of `model`'s rule with the quota model on every reachable state.

    For each state and enabled action: the model's successor satisfies the relation, and every
    successor of the relation is the model's up to the bucket's representation (the measured
    tokens under every rate the configuration allows are equal; the model stores a bucket
    refilled or full where the relation keeps it lazy). `encoding`: another QuotaEncoding class (a
    planted bug's twin, for tests).
    """
    from kreassign.checker.explore.bfs import explore

    started = time.perf_counter()
    cfg = model.config
    topics = max(len(s.sizes) for s in cfg.shapes)
    rule = model.rule.name if model.rule.name in RULES else cfg.profile
    enc = (encoding or QuotaEncoding)(rule, topics=topics, c=Fraction(cfg.samples * cfg.window_ms, 1000),
                                      floor=cfg.token_floor)
    rates = sorted({cfg.rate} | {r for r in cfg.quota_changes if r is not None})
    s, a, t, lab = enc.state("s"), enc.action("a"), enc.state("t"), enc.label("l")
    rel = enc.trans(s, a, t, lab, "d")
    solvers: dict[tuple, z3.Solver] = {}

    def solver_for(rate: Fraction, kind: int | None) -> z3.Solver:
        """The relation with the rate in force fixed (so linear), and the action kind (None: any)."""
        key = (rate, kind)
        if key not in solvers:
            subs = [(s.r, real_val(rate)), (s.B, real_val(model.burst_of(rate)))]
            if kind is not None:
                subs.append((a.k, z3.BitVecVal(kind, a.k.size())))
            sol = z3.Solver()
            sol.add(z3.simplify(z3.substitute(rel, *subs)), s.r == real_val(rate),
                    s.B == real_val(model.burst_of(rate)))
            if kind is not None:
                sol.add(a.k == kind)
            solvers[key] = sol
        return solvers[key]

    report = QuotaDiffReport(mismatches=[])
    seen: set = set()
    graph = explore(model, keep_graph=True).graph
    exact = [f for f in enc.STATE if f.name not in ("full", "K", "s", "r", "B")]

    def same_bucket(ref: dict) -> list:
        """The relation's successor measures like the reference's under every possible rate."""
        out = [t.q == ref["q"]]
        if ref["q"]:
            out += [t.r == real_val(ref["r"]), t.B == real_val(ref["B"])]
        for rho in rates:  # both measured by the encoding's own TokenBucket.measure, the rate fixed
            fixed = {"r": real_val(rho), "B": real_val(model.burst_of(rho))}
            theirs = Vars({"full": z3.BoolVal(ref["full"]), "K": real_val(ref["K"]), "s": z3.IntVal(ref["s"]),
                           **fixed})
            out.append(enc.measure(Vars({**t, **fixed})) == z3.simplify(enc.measure(theirs)))
        return out

    for st in graph.states:
        report.states += 1
        pre = enc.project_state(st, model.burst_of)
        key = tuple(pre.values())
        if key in seen:  # states that differ only in the ghosts the encoding does not hold (window, clock)
            continue
        seen.add(key)
        fix_s = bind(enc.STATE, s, pre, 1)
        for action in model.actions(st):
            act = enc.project_action(action)
            if act is None:
                continue
            nxt = model.next_state(st, action)
            if nxt is None:
                continue
            report.edges += 1
            solver = solver_for(pre["r"], act["k"])
            ref = enc.project_state(nxt, model.burst_of)
            fix_a = bind(enc.ACTION, a, act, 1)
            want = bind(exact, t, ref, 1) + same_bucket(ref)
            problem = None
            if fast_check(solver, fix_s + fix_a + want) != z3.sat:
                problem = "rejects the reference's successor"
            elif fast_check(solver, fix_s + fix_a + [z3.Not(z3.And(want))]) == z3.sat:
                other = enc.read(enc.STATE, solver.model(), t)
                problem = f"has another successor {other}"
            if problem:
                report.mismatches.append(f"{action} from {pre}: the encoding {problem} (reference: {ref})")
                if len(report.mismatches) >= max_mismatches:
                    report.seconds = time.perf_counter() - started
                    return report
        # nothing the model does not enable: requests of the configured shapes, ticks, retry, changes
        allowed = []
        for action in model.actions(st):
            act = enc.project_action(action)
            if act is not None:
                allowed.append(z3.And(bind(enc.ACTION, a, act, 1)))
        solver = solver_for(pre["r"], None)
        if fast_check(solver, fix_s + [z3.Not(z3.Or(allowed)) if allowed else z3.BoolVal(True),
                                      _in_config(enc, a, cfg)]) == z3.sat:
            other = enc.concrete_action(enc.read(enc.ACTION, solver.model(), a))
            report.mismatches.append(f"{other} from {pre}: enabled in the encoding, not by the model")
    report.seconds = time.perf_counter() - started
    return report


def _in_config(enc: QuotaEncoding, a: Vars, cfg) -> z3.BoolRef:
    """The actions a configuration can name: its ticks, shapes and quota changes (and the retry)."""
    opts = [z3.And(a.k == TICK, z3.Or([a.ms == ms for ms in cfg.ticks]))]
    for shape in cfg.shapes:
        act = enc.project_action(Q.ClientSendMutation(shape))
        if act is not None:
            opts.append(z3.And(bind(enc.ACTION, a, act, 1)))
    opts.append(a.k == RETRY)
    for r in cfg.quota_changes:
        opts.append(z3.And(bind(enc.ACTION, a, enc.project_action(Q.AdminAlterClientQuota(r)), 1)))
    return z3.Or(opts)


# -- proofs ---------------------------------------------------------------------------------------------


def _prove_invariant(enc: QuotaEncoding, names: Sequence[str]) -> tuple[dict[str, bool], float, list[str]]:
    """Base case and inductive step of the state properties, strengthened by the lemmas (Houdini)."""
    from kreassign.checker.z3.encoding import Candidate, houdini

    props = enc.state_properties()
    cands = [Candidate(n, props[n], True) for n in names] + [Candidate(n, p) for n, p in enc.lemmas().items()]
    h = houdini(enc, cands, enc.KINDS)
    return {n: n in h.inductive for n in names}, h.seconds, h.inductive


def _prove_edge(enc: QuotaEncoding, invariant: Sequence[str], name: str) -> bool:
    from kreassign.checker.z3.encoding import StepSystem

    by = {**enc.state_properties(), **enc.lemmas()}
    system = StepSystem.build(enc, enc.KINDS)
    system.assume([by[n] for n in invariant])
    prop = enc.edge_properties()[name]
    return system.counterexample(z3.Not(prop(system.s, system.a, system.t, system.lab))) is None


def prove_topic_induction(rule: str) -> dict[str, bool]:
    """Admission topic by topic, for requests of any number of topics (induction over the topics).

    State within a request: the tokens `cur` (≤ B), the measure M0 before it and the largest
    topic m so far. Strict: cur ≥ min(M0, −m) holds before the first topic (m = 0) and after
    each one; permissive: every topic is admitted. For the draft: an admitted strict topic is
    never larger than the burst.
    """
    cur, m0, B, r = z3.Reals("cur M0 B r")
    m, n = z3.Ints("m n")
    out = {}
    inv = lambda c, mm: z3.And(c >= zmin(m0, -z3.ToReal(mm)), c <= B)
    s = z3.Solver()
    base = z3.And(m0 <= B, B > 0, r > 0)
    s.add(base)
    ok_base = s.check(z3.Not(inv(m0, z3.IntVal(0)))) == z3.unsat
    adm = cur >= 0 if rule == "kip599" else cur >= n
    cur2 = z3.If(adm, zmin(B, cur - n), cur)
    step = s.check(inv(cur, m), m >= 0, n >= 1, z3.Not(inv(cur2, zmax(m, n)))) == z3.unsat
    out[Q.STRICT_OVERDRAFT_BOUNDED] = ok_base and step
    # permissive: PermissiveControllerMutationQuota.record never rejects, and keeps cur ≤ B
    p_cur = zmin(B, cur - n)
    out[Q.PERMISSIVE_NEVER_REJECTS] = s.check(cur <= B, n >= 1, z3.Not(p_cur <= B)) == z3.unsat
    if rule == "kip599-draft":
        out["large_never_admitted"] = s.check(cur <= B, n >= 1, n > B, adm) == z3.unsat
    return out


def prove_interval_strict(rule: str, *, with_permissive: bool = False) -> bool:
    """admitted_within_interval for strict requests alone, for all rates, bursts, sizes and timings.

    Time is counted in refill units (D = rate × elapsed ms / 1000), which makes the problem linear:
    a tick or the retry's wait of any length is a refill by any δ ≥ 0 (M' = min(B, M + δ), exactly
    what the lazy bucket measures after it), a strict topic of n ≥ 1 mutations is admitted as the
    rule says (taking exactly n), topics one at a time (so requests of any number of topics). A
    ghost interval starts at any point (A = 0 admitted, D = 0, Lg = 0 largest topic, M0 = M).
    Inductive: M ≤ B, and once started M + A ≤ M0 + D, M0 ≤ B, and M ≥ −Lg once something was
    admitted (kip599 admits only at M ≥ 0; the draft only at M ≥ n). Hence A ≤ B + D + Lg: the
    property with D = rate·Δ/1000. Quota changes are left out (the model's window restarts then).
    """
    M, B, A, D, Lg, M0 = z3.Reals("M B A D Lg M0")
    on = z3.Bool("on")
    M2, A2, D2, Lg2, M02 = z3.Reals("M2 A2 D2 Lg2 M02")
    on2, start, refill = z3.Bools("on2 start refill")
    delta, n = z3.Real("delta"), z3.Int("n")

    def inv(m, a, d, lg, m0, o):
        return z3.And(m <= B, z3.Implies(o, z3.And(m + a <= m0 + d, m0 <= B, a >= 0, d >= 0, lg >= 0,
                                                    z3.Or(a == 0, m >= -lg))))

    a1, d1, lg1, m01 = z3.If(start, 0, A), z3.If(start, 0, D), z3.If(start, 0, Lg), z3.If(start, M, M0)
    adm = M >= 0 if rule == "kip599" else M >= z3.ToReal(n)
    if with_permissive:  # old clients too (PermissiveControllerMutationQuota: record, never reject)
        adm = z3.Or(adm, z3.Bool("permissive"))
    step = z3.And(
        on2 == z3.Or(on, start), M02 == m01, B > 0, delta >= 0, n >= 1,
        z3.If(refill,
              z3.And(M2 == zmin(B, M + delta), A2 == a1, D2 == d1 + delta, Lg2 == lg1),
              z3.And(M2 == z3.If(adm, zmin(B, M - z3.ToReal(n)), M), D2 == d1,
                     A2 == a1 + z3.If(adm, z3.ToReal(n), 0), Lg2 == z3.If(adm, zmax(lg1, z3.ToReal(n)), lg1))),
    )
    solver = z3.Solver()
    if solver.check(B > 0, z3.Not(inv(B, A, D, Lg, M0, z3.BoolVal(False)))) != z3.unsat:  # a fresh bucket
        return False
    if solver.check(step, inv(M, A, D, Lg, M0, on), z3.Not(inv(M2, A2, D2, Lg2, M02, on2))) != z3.unsat:
        return False
    bound = z3.Implies(on, A <= B + D + Lg)
    return solver.check(B > 0, inv(M, A, D, Lg, M0, on), z3.Not(bound)) == z3.unsat


@dataclass
class _Result:
    property: str
    verdict: str
    seconds: float
    counterexample: str | None = None
    note: str = ""


def prove_quota(profile: str, *, properties: Sequence[str] | None = None, out_dir: str | None = "kreassign-out",
                progress: Callable[[str], None] | None = None) -> list:
    """Prove or refute the quota properties of `kip599` / `kip599-draft` for all parameters."""
    from kreassign.checker.z3.results import INVARIANT, PROVED, REFUTED, UNKNOWN, ProofResult, matching

    say = progress or (lambda _m: None)
    wanted = [p for p in QUOTA_PROPERTY_NAMES if properties is None or p in properties]
    if not wanted:
        return []
    enc = QuotaEncoding(profile, topics=2)
    results: list[ProofResult] = []
    say(f"{profile}: invariants for all rates, bursts, sizes and timings")
    state_names = [n for n in enc.state_properties()]
    t0 = time.perf_counter()
    proved_state, _, invariant = _prove_invariant(enc, state_names)
    results.append(ProofResult(INVARIANT, profile, None, PROVED, time.perf_counter() - t0, lemmas=invariant,
                               note=f"{len(invariant)} conjuncts, requests of up to {enc.T} topics, "
                                    "any rate/burst/ticks/sizes, quota changes"))
    topic = prove_topic_induction(profile)
    for name in wanted:
        started = time.perf_counter()
        if name in state_names:
            ok = proved_state[name]
            results.append(ProofResult(name, profile, None, PROVED if ok else UNKNOWN, time.perf_counter() - started,
                                       note="base case + inductive step" if ok else "not inductive"))
            continue
        if name in (Q.STRICT_OVERDRAFT_BOUNDED, Q.PERMISSIVE_NEVER_REJECTS):
            say(f"{profile}: {name}: induction over the topics of a request, and one step of the relation")
            ok = topic[name] and _prove_edge(enc, invariant, name)
            results.append(ProofResult(name, profile, None, PROVED if ok else UNKNOWN, time.perf_counter() - started,
                                       note="for requests of any number of topics (induction over topics)"))
            continue
        if name == Q.RETRY_AFTER_THROTTLE_ADMITTED:
            say(f"{profile}: {name}: one step under the invariant, else a counterexample")
            if _prove_edge(enc, invariant, name):
                results.append(ProofResult(name, profile, None, PROVED, time.perf_counter() - started))
                continue
        if name == Q.LARGE_TOPIC_EVENTUALLY_ADMITTED:
            if profile == "kip599-draft" and topic.get("large_never_admitted"):
                file, loop = _write_starvation(profile, out_dir)
                results.append(ProofResult(name, profile, None, REFUTED, time.perf_counter() - started, file,
                                           note="proved for all parameters: the draft never admits a strict topic "
                                                "larger than the burst (tokens ≤ burst); lasso replayed",
                                           findings=matching(profile, name, None, (), loop=loop)))
            else:
                say(f"{profile}: {name}: ranking over helpful steps, under the invariant")
                by = {**enc.state_properties(), **enc.lemmas()}
                ranked = prove_large_topic(profile, [by[n] for n in invariant], enc=enc)
                results.append(ProofResult(
                    name, profile, None, PROVED if ranked.proved else UNKNOWN, time.perf_counter() - started,
                    note="ranking over helpful steps (set a quota; tick; send a topic of ⌊burst⌋ + 1) for all "
                         "rates, bursts and tick lengths" if ranked.proved
                    else f"the ranking fails (rule: {ranked.rule})"))
            continue
        say(f"{profile}: {name}: bounded model checking with exact numbers")
        found = refute_quota(profile, name, out_dir=out_dir)
        extra = ""
        if name == Q.ADMITTED_WITHIN_INTERVAL:
            say(f"{profile}: {name}: the bound for strict requests alone")
            extra = ("; for strict requests alone proved for all parameters" if prove_interval_strict(profile)
                     else "; not proved for strict requests alone")
        seconds = time.perf_counter() - started
        if found is not None:
            file, steps, cfg, violation = found
            results.append(ProofResult(name, profile, None, REFUTED, seconds, file,
                                       note=f"{steps} step(s) at rate {Q.format_number(cfg.rate)}/s, burst "
                                            f"{Q.format_number(cfg.burst)}; replayed against the reference"
                                            + extra, findings=matching(profile, name, None, violation)))
        else:
            results.append(ProofResult(name, profile, None, UNKNOWN, seconds, note="no counterexample found"))
    return results


# -- refutations -----------------------------------------------------------------------------------------

#: (rate, samples, window_ms) tried by the bounded search, smallest numbers first
GRID = [(Fraction(1), 2, 1000), (Fraction(1), 1, 1000), (Fraction(2), 1, 1000), (Fraction(3), 1, 1000),
        (Fraction(1, 2), 2, 1000)]
MAX_SIZE = 4


def refute_quota(profile: str, prop_name: str, *, out_dir: str | None = "kreassign-out", max_depth: int = 4,
                 max_attempts: int = 10):
    """A shortest counterexample over the grid: (trace file, steps, config, violation) or None; violation is
    the violating state or edge (prev, action, next), what a finding's signature is asked about."""
    from kreassign.checker.z3.encoding import Bmc

    for rate, samples, window in GRID:
        c = Fraction(samples * window, 1000)
        kinds = (TICK, SEND, RETRY)
        enc = QuotaEncoding(profile, topics=2, c=c, kinds=kinds)

        def init(s, rate=rate, enc=enc):
            return z3.And(enc.init(s), s.r == real_val(rate))

        bmc = Bmc(enc, init=init)
        for depth in range(1, max_depth + 1):
            bmc.unroll(depth)
            extra = []
            for a in bmc.actions[:depth]:
                extra += [a.ms <= 4000] + [a[f"n{i}"] <= MAX_SIZE for i in range(enc.T)]
            if prop_name == Q.ADMITTED_WITHIN_INTERVAL:
                bad = _interval_bad(enc, bmc, depth)
            else:
                prop = enc.edge_properties()[prop_name]
                bad = z3.Not(prop(bmc.states[depth - 1], bmc.actions[depth - 1], bmc.states[depth],
                                  bmc.labels[depth - 1]))
            blocked: list = []
            for _ in range(max_attempts):
                model = bmc.find(depth, bad, extra + blocked)
                if model is None:
                    break
                actions = [enc.concrete_action(enc.read(enc.ACTION, model, a)) for a in bmc.actions[:depth]]
                found = _replay_quota(profile, prop_name, actions, rate, samples, window, out_dir)
                if found is not None:
                    return found[0], depth, found[1], found[2]
                blocked.append(bmc.block(model, depth))
    return None


def _interval_bad(enc: QuotaEncoding, bmc, depth: int) -> z3.BoolRef:
    """Some interval [t_j, now] (a request at t_j) admitted more than burst + rate·D + its largest topic."""
    times = [z3.IntVal(0)]
    for i in range(depth):
        a, s = bmc.actions[i], bmc.states[i]
        wait = z3.If(a.k == TICK, a.ms, z3.If(a.k == RETRY, s.rin, 0))
        times.append(times[-1] + wait)  # the time of step i + 1 (a request happens after its wait)
    now = times[-1]
    s_end = bmc.states[depth]
    bad = []
    for j in range(depth):
        total = z3.Sum([z3.If(times[i + 1] >= times[j + 1], bmc.labels[i].adm, 0) for i in range(depth)])
        largest = z3.IntVal(0)
        for i in range(depth):
            x = z3.If(times[i + 1] >= times[j + 1], bmc.labels[i].admbig, 0)
            largest = zmax(largest, x)
        age = now - times[j + 1]
        bad.append(z3.And(bmc.labels[j].req, bmc.labels[j].adm > 0, age <= 1000,
                          z3.ToReal(total) > s_end.B + s_end.r * z3.ToReal(age) / 1000 + z3.ToReal(largest)))
    return z3.Or(bad)


def _replay_quota(profile: str, prop_name: str, actions: list, rate: Fraction, samples: int, window: int,
                  out_dir: str | None):
    """Run the actions through the quota model of a configuration naming exactly them; keep the path only
    if the property fails there, write it and check that `replay` reproduces it: (file, config, violation)."""
    from kreassign.checker.models.quota import QuotaModel, QuotaModelConfig
    from kreassign.checker.traces.format import trace_from_path

    ticks = tuple(sorted({a.ms for a in actions if isinstance(a, Q.QuotaTick)})) or (1000,)
    shapes = []
    for a in actions:
        if isinstance(a, Q.ClientSendMutation) and a.shape not in shapes:
            shapes.append(a.shape)
    if not shapes:
        return None
    cfg = QuotaModelConfig(profile=profile, rate=rate, samples=samples, window_ms=window, ticks=ticks,
                           shapes=tuple(shapes), max_interval_ms=1000)
    model = QuotaModel(cfg)
    state = model.init_states()[0]
    path: list = [(state, None)]
    for a in actions:
        if a not in model.actions(state):
            return None
        state = model.next_state(state, a)
        if state is None:
            return None
        path.append((state, a))
    prop = next((p for p in model.properties() if p.name == prop_name), None)
    if prop is None:
        return None
    violation = (path[-1][0],) if prop.kind == "always" else (path[-2][0], path[-1][1], path[-1][0])
    if prop.predicate(*violation):
        return None
    trace = trace_from_path(model, "quota", prop_name, prop.kind, path, engine="z3", description=prop.description)
    file = _save(trace, profile, prop_name, out_dir)
    return file, cfg, violation


def _save(trace, profile: str, prop_name: str, out_dir: str | None) -> str | None:
    import tempfile

    from kreassign.checker.traces.format import read_trace, write_trace
    from kreassign.checker.traces.replay import replay

    with tempfile.TemporaryDirectory() as tmp:
        directory = out_dir or tmp
        path = os.path.join(directory, f"{profile}__{prop_name}.z3.json")
        write_trace(trace, path)
        result = replay(read_trace(path))
        if not result.reproduces:
            raise AssertionError(f"{profile}: the {prop_name} counterexample {path} does not replay: {result.mismatch}")
        return path if out_dir else None


def _write_starvation(profile: str, out_dir: str | None) -> tuple[str | None, list]:
    """The draft's starvation as a lasso: from the initial state of the `small` configuration (burst 2,
    a strict topic of 3), time passes and nothing else can happen to the large topic. (file, the states
    of the lasso's loop)."""
    from kreassign.checker.models.quota import quota_model
    from kreassign.checker.traces.format import trace_from_path

    model = quota_model(profile, "small")
    init = model.init_states()[0]
    tick = Q.QuotaTick(model.config.ticks[0])
    nxt = model.next_state(init, tick)
    prop = next(p for p in model.properties() if p.name == Q.LARGE_TOPIC_EVENTUALLY_ADMITTED)
    trace = trace_from_path(model, "quota", prop.name, prop.kind, [(init, None), (nxt, tick)], engine="z3",
                            description=prop.description, loop_start=0)
    return _save(trace, profile, prop.name, out_dir), [init, nxt]


__all__ = ["QUOTA_PROPERTY_NAMES", "QuotaEncoding", "prove_quota", "prove_topic_induction",
           "quota_differential", "refute_quota"]
