"""The quota transition relation in z3 (`QuotaEncoding`): reference/quota.py as the quota model runs it.

One principal's lazy token bucket, the quota in force, the throttle of the last response, the
rejected topics and the client's retry; the module doc of checker/z3/quota.py says what is proved
with it, and `quota_differential` there ties it to the quota model state by state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import z3
from kreassign.checker.z3.encoding import BOOL, ENUM, INT, REAL, Encoding, Field, Vars, real_val
from kreassign.spec import quota as Q

TICK, SEND, RETRY, QUOTA = range(4)
KIND_NAMES = {TICK: "QuotaTick", SEND: "ClientSendMutation", RETRY: "ClientRetryAfterThrottle",
              QUOTA: "AdminAlterClientQuota"}
RULES = ("kip599", "kip599-draft")

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
