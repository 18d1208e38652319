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
from typing import Any

import z3
from kreassign.checker.z3.encoding import (
    BOOL,
    ENUM,
    INT,
    REAL,
    Encoding,
    Field,
    Vars,
    bind,
    fast_check,
    real_val,
)
from kreassign.spec import quota as Q

TICK, SEND, RETRY, QUOTA = range(4)
KIND_NAMES = {TICK: "QuotaTick", SEND: "ClientSendMutation", RETRY: "ClientRetryAfterThrottle",
              QUOTA: "AdminAlterClientQuota"}
RULES = ("kip599", "kip599-draft")

#: the quota properties `kreassign prove` reports (spec/quota.py), in the spec's order
QUOTA_PROPERTY_NAMES = (
    Q.TOKENS_WITHIN_BURST, Q.STRICT_OVERDRAFT_BOUNDED, Q.ADMITTED_WITHIN_INTERVAL, Q.PERMISSIVE_NEVER_REJECTS,
    Q.THROTTLE_NEVER_NEGATIVE, Q.RETRY_AFTER_THROTTLE_ADMITTED, Q.LARGE_TOPIC_EVENTUALLY_ADMITTED,
)


def zmin(a, b):
    return z3.If(a <= b, a, b)


def zmax(a, b):
    return z3.If(a >= b, a, b)


class QuotaEncoding(Encoding):
    """The quota transition relation of one profile's rule, with requests of up to `topics` topics.

    `c` (burst / rate) and `floor` (the environment's token floor of QuotaModelConfig) are
    symbolic when None: c any positive real, no floor.
    """

    def __init__(self, rule: str, topics: int = 2, c: Fraction | None = None, floor: Fraction | None = None,
                 kinds: Sequence[int] = (TICK, SEND, RETRY, QUOTA)):
        super().__init__(1)
        if rule not in RULES:
            raise ValueError(f"rule: expected one of {', '.join(RULES)}, got {rule!r}")
        self.rule, self.T, self.floor = rule, topics, floor
        self.KINDS = tuple(kinds)
        self.c = z3.Real("quota.c") if c is None else real_val(c)
        self.STATE = (
            Field("q", BOOL), Field("r", REAL), Field("B", REAL), Field("full", BOOL), Field("K", REAL),
            Field("s", INT), Field("mute", INT), Field("rej", INT), Field("rp", BOOL), Field("rin", INT),
            Field("rk", INT), *(Field(f"rs{i}", INT) for i in range(topics)),
        )
        self.ACTION = (
            Field("k", ENUM), Field("ms", INT), Field("st", BOOL), Field("nt", INT),
            *(Field(f"n{i}", INT) for i in range(topics)), Field("qon", BOOL), Field("qr", REAL),
        )
        self.LABEL = (
            Field("req", BOOL), Field("strict", BOOL), Field("retry", BOOL), Field("q0", BOOL), Field("M0", REAL),
            Field("M1", REAL), Field("big", INT), Field("adm", INT), Field("admbig", INT),
        )

    # -- pieces of the reference ----------------------------------------------------------------
    def measure(self, v: Vars, after_ms: Any = 0) -> z3.ArithRef:
        """TokenBucket.measure `after_ms` from now with the rate in force (burst if never used)."""
        return z3.If(v.full, v.B, zmin(v.B, v.K + v.r * z3.ToReal(v.s + after_ms) / 1000))

    def java_round_ms(self, tokens: z3.ArithRef, r: z3.ArithRef, tag: str, cons: list) -> z3.ArithRef:
        """Math.round(tokens / r × 1000) = floor(tokens × 1000 / r + 1/2), exactly (r > 0)."""
        y = z3.Real(f"{tag}.ms")
        cons.append(y * r == tokens * 1000)
        return z3.ToInt(y + z3.RealVal("1/2"))

    def request(self, v: Vars, strict: z3.BoolRef, nt: z3.ArithRef, ns: list, tag: str) -> tuple[dict, dict, list]:
        """handle_request for a request of `nt` topics of sizes `ns` at now: (state fields, labels, constraints)."""
        cons: list = []
        M = self.measure(v)
        cur = M
        thr, has_thr = z3.IntVal(0), z3.BoolVal(False)
        rejs, adm, admbig, big = [], z3.IntVal(0), z3.IntVal(0), z3.IntVal(0)
        for i in range(self.T):
            active = nt > i
            n = ns[i]
            if self.rule == "kip599":  # StrictControllerMutationQuota: check tokens ≥ 0, then record all
                s_adm = cur >= 0
                s_th = self.java_round_ms(-cur, v.r, f"{tag}.s{i}", cons)
            else:  # the draft: admitted iff K ≥ N; wait (N − K) / R
                s_adm = cur >= n
                s_th = self.java_round_ms(n - cur, v.r, f"{tag}.s{i}", cons)
            p_cur = zmin(v.B, cur - n)  # permissive: record first, never reject
            p_th = self.java_round_ms(-p_cur, v.r, f"{tag}.p{i}", cons)
            adm_i = z3.Or(z3.Not(strict), s_adm)
            has_i = z3.And(active, z3.If(strict, z3.Not(s_adm), p_cur < 0))
            th_i = z3.If(strict, s_th, p_th)
            cur = z3.If(active, z3.If(strict, z3.If(s_adm, zmin(v.B, cur - n), cur), p_cur), cur)
            if self.rule == "kip599":  # each violation overwrites lastThrottleTimeMs
                thr = z3.If(has_i, th_i, thr)
            else:  # the seed: min over the rejected topics
                thr = z3.If(has_i, z3.If(has_thr, zmin(thr, th_i), th_i), thr)
            has_thr = z3.Or(has_thr, has_i)
            rejs.append(z3.And(active, z3.Not(adm_i)))
            admitted = z3.And(active, adm_i)
            adm = adm + z3.If(admitted, n, 0)
            admbig = z3.If(z3.And(admitted, n > admbig), n, admbig)
            big = z3.If(z3.And(active, n > big), n, big)
        nrej = z3.Sum([z3.If(x, 1, 0) for x in rejs])
        q = v.q
        throttle = zmax(thr, 0)  # response_throttle_ms(decayed at now, request quota 0)
        rp = z3.And(q, strict, nrej > 0)
        post = {
            "K": z3.If(q, cur, v.K), "full": z3.And(z3.Not(q), v.full), "s": z3.If(q, 0, v.s),
            "mute": z3.If(q, throttle, 0), "rej": z3.If(q, nrej, 0), "rp": rp, "rin": z3.If(rp, throttle, 0),
            "rk": z3.If(rp, nrej, 0),
        }
        before = [z3.IntVal(0)]
        for x in rejs[:-1]:
            before.append(before[-1] + z3.If(x, 1, 0))
        for j in range(self.T):
            slot = z3.Sum([z3.If(z3.And(rejs[i], before[i] == j), ns[i], 0) for i in range(self.T)])
            post[f"rs{j}"] = z3.If(rp, slot, 0)
        labels = {"q0": q, "M0": M, "M1": cur, "big": big, "adm": z3.If(q, adm, 0), "admbig": z3.If(q, admbig, 0)}
        return post, labels, cons

    def tick(self, v: Vars, ms: z3.ArithRef) -> dict:
        """QuotaModel._tick: time passes; the throttle decays; a retry is kept while its wait is not over."""
        keep = z3.And(v.rp, v.rin - ms >= 0)
        post = {
            "q": v.q, "r": v.r, "B": v.B, "full": v.full, "K": v.K, "s": z3.If(v.full, 0, v.s + ms),
            "mute": zmax(0, v.mute - ms), "rej": z3.IntVal(0), "rp": keep, "rin": z3.If(keep, v.rin - ms, 0),
            "rk": z3.If(keep, v.rk, 0),
        }
        for j in range(self.T):
            post[f"rs{j}"] = z3.If(keep, v[f"rs{j}"], 0)
        return post

    # -- the system ------------------------------------------------------------------------------
    def init(self, s: Vars) -> z3.BoolRef:
        """A quota of any rate in force, the bucket never used, nothing throttled."""
        return z3.And(s.q, s.r > 0, s.B == self.c * s.r, self.c > 0, s.full, s.K == 0, s.s == 0, s.mute == 0,
                      s.rej == 0, z3.Not(s.rp), s.rin == 0, s.rk == 0, *[s[f"rs{i}"] == 0 for i in range(self.T)])

    def shape_ok(self, a: Vars, nt, ns) -> z3.BoolRef:
        return z3.And(nt >= 1, nt <= self.T, *[z3.If(nt > i, ns[i] >= 1, ns[i] == 0) for i in range(self.T)])

    def trans(self, s: Vars, a: Vars, t: Vars, lab: Vars, tag: str) -> z3.BoolRef:
        ns = [a[f"n{i}"] for i in range(self.T)]
        rs = [s[f"rs{i}"] for i in range(self.T)]
        branches = []
        # QuotaTick(ms)
        tk = self.tick(s, a.ms)
        branches.append((TICK, a.ms >= 1, tk, {"req": False, "strict": False, "retry": False, "q0": s.q,
                                                "M0": self.measure(s), "M1": self.measure(s), "big": 0, "adm": 0,
                                                "admbig": 0}, []))
        # ClientSendMutation(shape): sent while the measured tokens are at least the floor
        post, labels, cons = self.request(s, a.st, a.nt, ns, f"{tag}.send")
        guard = [self.shape_ok(a, a.nt, ns)]
        if self.floor is not None:
            guard.append(z3.Or(z3.Not(s.q), self.measure(s) >= real_val(self.floor)))
        post = {**{f.name: s[f.name] for f in self.STATE}, **post}
        branches.append((SEND, z3.And(guard), post, {"req": True, "strict": a.st, "retry": False, **labels}, cons))
        # ClientRetryAfterThrottle: wait exactly the throttle, send the rejected topics again
        waited = Vars({**{f.name: s[f.name] for f in self.STATE}, **self.tick(s, s.rin)})
        post, labels, cons = self.request(waited, z3.BoolVal(True), s.rk, rs, f"{tag}.retry")
        post = {**dict(waited), **post}
        branches.append((RETRY, s.rp, post, {"req": True, "strict": True, "retry": True, **labels}, cons))
        # AdminAlterClientQuota(rate or None)
        qpost = {f.name: s[f.name] for f in self.STATE}
        qpost.update(q=a.qon, r=z3.If(a.qon, a.qr, s.r), B=z3.If(a.qon, self.c * a.qr, s.B), rej=z3.IntVal(0),
                     rp=z3.BoolVal(False), rin=z3.IntVal(0), rk=z3.IntVal(0),
                     **{f"rs{i}": z3.IntVal(0) for i in range(self.T)})
        qguard = z3.If(a.qon, z3.And(a.qr > 0, z3.Or(z3.Not(s.q), a.qr != s.r)), s.q)
        branches.append((QUOTA, qguard, qpost, {"req": False, "strict": False, "retry": False, "q0": s.q,
                                                 "M0": self.measure(s), "M1": self.measure(s), "big": 0, "adm": 0,
                                                 "admbig": 0}, []))
        kv = lambda k: z3.BitVecVal(k, a.k.size())
        alts = []
        for k, guard, post, labels, cons in branches:
            if k not in self.KINDS:
                continue
            eqs = [t[f.name] == post[f.name] for f in self.STATE]
            eqs += [lab[name] == val for name, val in labels.items()]
            alts.append(z3.And(a.k == kv(k), guard, *cons, *eqs))
        # unused parameters are 0 (one encoding per action)
        uses_shape = a.k == kv(SEND)
        params = [
            z3.If(a.k == kv(TICK), z3.BoolVal(True), a.ms == 0),
            z3.If(uses_shape, z3.BoolVal(True), z3.And(a.nt == 0, z3.Not(a.st), *[n == 0 for n in ns])),
            z3.If(a.k == kv(QUOTA), z3.Implies(z3.Not(a.qon), a.qr == 0), z3.And(z3.Not(a.qon), a.qr == 0)),
        ]
        return z3.And(z3.Or(alts), *params)

    # -- properties --------------------------------------------------------------------------------
    def state_properties(self) -> dict[str, Callable[[Vars], z3.BoolRef]]:
        return {
            Q.TOKENS_WITHIN_BURST: lambda s: z3.Or(z3.Not(s.q), self.measure(s) <= s.B),
            Q.THROTTLE_NEVER_NEGATIVE: lambda s: z3.And(s.mute >= 0, s.rin >= 0),
        }

    def edge_properties(self) -> dict[str, Callable[[Vars, Vars, Vars, Vars], z3.BoolRef]]:
        return {
            Q.STRICT_OVERDRAFT_BOUNDED: lambda s, a, t, l: z3.Or(
                z3.Not(z3.And(l.req, l.strict, l.q0)), l.M1 >= zmin(l.M0, -l.big)),
            Q.PERMISSIVE_NEVER_REJECTS: lambda s, a, t, l: z3.Or(z3.Not(l.req), l.strict, t.rej == 0),
            Q.RETRY_AFTER_THROTTLE_ADMITTED: lambda s, a, t, l: z3.Or(z3.Not(l.retry), t.rej == 0),
        }

    def lemmas(self) -> dict[str, Callable[[Vars], z3.BoolRef]]:
        return {
            "rate positive": lambda s: z3.Implies(s.q, s.r > 0),
            "burst = c × rate": lambda s: z3.Implies(s.q, s.B == self.c * s.r),
            "c positive": lambda s: self.c > 0,
            "elapsed ≥ 0": lambda s: s.s >= 0,
            "rejected ≥ 0": lambda s: s.rej >= 0,
            "retry topics": lambda s: z3.If(s.rp, z3.And(s.rk >= 1, s.rk <= self.T), s.rk == 0),
            "retry sizes": lambda s: z3.And(*[z3.If(s.rk > i, s[f"rs{i}"] >= 1, s[f"rs{i}"] == 0)
                                              for i in range(self.T)]),
            "retry only under a quota": lambda s: z3.Implies(s.rp, s.q),
            "no wait without a retry": lambda s: z3.Implies(z3.Not(s.rp), s.rin == 0),
        }

    # -- concrete values (differential test, counterexamples) ---------------------------------------
    def project_state(self, st: Q.QuotaModelState, burst_of: Callable[[Fraction], Fraction]) -> dict[str, Any]:
        retry = st.retry.sizes if st.retry is not None else ()
        if len(retry) > self.T:
            raise ValueError(f"retry of {len(retry)} topics: the encoding has {self.T}")
        v = {
            # without a quota, rate and burst play no part: any fixed value
            "q": st.rate is not None, "r": st.rate if st.rate is not None else Fraction(1),
            "B": burst_of(st.rate if st.rate is not None else Fraction(1)), "full": st.tokens is None,
            "K": st.tokens if st.tokens is not None else 0, "s": st.since_update_ms, "mute": st.mute_ms,
            "rej": st.rejected, "rp": st.retry is not None, "rin": st.retry_in_ms, "rk": len(retry),
        }
        for i in range(self.T):
            v[f"rs{i}"] = retry[i] if i < len(retry) else 0
        return v

    def project_action(self, action) -> dict[str, Any] | None:
        v = {"k": 0, "ms": 0, "st": False, "nt": 0, "qon": False, "qr": 0, **{f"n{i}": 0 for i in range(self.T)}}
        if isinstance(action, Q.QuotaTick):
            v.update(k=TICK, ms=action.ms)
        elif isinstance(action, Q.ClientSendMutation):
            shape = action.shape
            if len(shape.sizes) > self.T or (shape.validate_only and shape.api != Q.CREATE_TOPICS):
                return None
            v.update(k=SEND, st=shape.strict, nt=len(shape.sizes), **{f"n{i}": n for i, n in enumerate(shape.sizes)})
        elif isinstance(action, Q.ClientRetryAfterThrottle):
            v.update(k=RETRY)
        elif isinstance(action, Q.AdminAlterClientQuota):
            v.update(k=QUOTA, qon=action.rate is not None, qr=action.rate or 0)
        else:
            return None
        return v

    def concrete_action(self, v: dict[str, Any]):
        if v["k"] == TICK:
            return Q.QuotaTick(v["ms"])
        if v["k"] == SEND:
            sizes = tuple(v[f"n{i}"] for i in range(v["nt"]))
            return Q.ClientSendMutation(Q.RequestShape(Q.CREATE_TOPICS, 7 if v["st"] else 5, sizes))
        if v["k"] == RETRY:
            return Q.ClientRetryAfterThrottle()
        return Q.AdminAlterClientQuota(v["qr"] if v["qon"] else None)


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


def quota_differential(model, *, max_mismatches: int = 5) -> QuotaDiffReport:
    """Compare the encoding of `model`'s rule with the quota model on every reachable state.

    For each state and enabled action: the model's successor satisfies the relation, and every
    successor of the relation is the model's up to the bucket's representation (the measured
    tokens under every rate the configuration allows are equal; the model stores a bucket
    refilled or full where the relation keeps it lazy).
    """
    from kreassign.checker.explore.bfs import explore

    started = time.perf_counter()
    cfg = model.config
    topics = max(len(s.sizes) for s in cfg.shapes)
    rule = model.rule.name if model.rule.name in RULES else cfg.profile
    enc = QuotaEncoding(rule, topics=topics, c=Fraction(cfg.samples * cfg.window_ms, 1000), floor=cfg.token_floor)
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
        for rho in rates:
            b = model.burst_of(rho)
            ref_m = b if ref["full"] else min(b, ref["K"] + rho * ref["s"] / 1000)
            mine = z3.If(t.full, real_val(b), zmin(real_val(b), t.K + real_val(rho) * z3.ToReal(t.s) / 1000))
            out.append(mine == real_val(ref_m))
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
                results.append(ProofResult(name, profile, None, UNKNOWN, time.perf_counter() - started,
                                           note="liveness (AG EF): checked by the explorer only"))
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


__all__ = ["KIND_NAMES", "QUOTA_PROPERTY_NAMES", "QuotaEncoding", "prove_quota", "prove_topic_induction",
           "quota_differential", "refute_quota"]
