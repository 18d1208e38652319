"""Shared z3 machinery: broker sets as bit-vectors, symbolic states, induction and BMC engines.

A reassignment state over brokers 1…N is encoded with bit-vectors of width N, bit i
standing for broker i + 1 (the explorer's broker ids are 1…N): a set of brokers is one
`BitVec(N)`, a leader is a *one-hot* `BitVec(N)` (0 = no leader), so membership,
inclusion and the choice of "some member" are pure bit-vector formulas and every proof
at width N is decided by bit-blasting, in milliseconds (../shared/NOTES-measured.md).
Epochs are unbounded integers.

The engines here know nothing of Kafka: an `Encoding` names its fields, its initial
states, its transition relation and its candidate invariants; `houdini` finds the
largest inductive subset of the candidates (the strengthening of every proof),
`check_step` proves a transition property under an invariant, and `Bmc` unrolls the
relation from the initial states to find short counterexamples.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3

#: width of the bit-vectors that count brokers (popcounts of up to 64 brokers, sums of two)
COUNT_WIDTH = 8
#: width of enumerations (action kinds, controller steps)
ENUM_WIDTH = 5

SET, LEADER, INT, BOOL, COUNT, ENUM, REAL = "set", "leader", "int", "bool", "count", "enum", "real"


# -- broker sets ---------------------------------------------------------------------------------


def mask(brokers: Iterable[int]) -> int:
    """Broker ids 1…N as a bit mask (bit b − 1 for broker b)."""
    m = 0
    for b in brokers:
        if b < 1:
            raise ValueError(f"broker id {b}: the z3 encoding numbers brokers 1…N")
        m |= 1 << (b - 1)
    return m


def ids(m: int) -> tuple[int, ...]:
    """The broker ids of a bit mask, ascending."""
    out, b = [], 1
    while m:
        if m & 1:
            out.append(b)
        m >>= 1
        b += 1
    return tuple(out)


def leader_mask(leader: int) -> int:
    return 0 if leader < 0 else 1 << (leader - 1)


def leader_id(m: int) -> int:
    return -1 if m == 0 else ids(m)[0]


def subset(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BoolRef:
    return a & ~b == 0


def onehot(x: z3.BitVecRef) -> z3.BoolRef:
    return z3.And(x != 0, x & (x - 1) == 0)


def lowest(x: z3.BitVecRef) -> z3.BitVecRef:
    """The lowest set bit of x (0 if x is 0): the smallest broker id of a set."""
    return x & -x


def popcount(x: z3.BitVecRef, width: int = COUNT_WIDTH) -> z3.BitVecRef:
    """|x| as a bit-vector of `width` bits."""
    n = x.size()
    bits = [z3.ZeroExt(width - 1, z3.Extract(i, i, x)) for i in range(n)]
    total = bits[0]
    for b in bits[1:]:
        total = total + b
    return total


def popcount_int(x: z3.BitVecRef) -> z3.ArithRef:
    """|x| as an integer term (for epochs bumped once per member)."""
    return z3.Sum([z3.If(z3.Extract(i, i, x) == 1, z3.IntVal(1), z3.IntVal(0)) for i in range(x.size())])


def choose(x: z3.BitVecRef, candidates: z3.BitVecRef) -> z3.BoolRef:
    """`x` is one member of `candidates` if there is one, else 0: the abstraction of "the first in list order"."""
    return z3.If(candidates != 0, z3.And(onehot(x), subset(x, candidates)), x == 0)


# -- symbolic states -------------------------------------------------------------------------------


class Vars(dict):
    """Field name -> z3 term, with attribute access (`s.R`)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # SET, LEADER, INT, BOOL, COUNT, ENUM


def make_var(f: Field, prefix: str, n: int) -> z3.ExprRef:
    name = f"{prefix}.{f.name}"
    if f.kind in (SET, LEADER):
        return z3.BitVec(name, n)
    if f.kind == COUNT:
        return z3.BitVec(name, COUNT_WIDTH)
    if f.kind == ENUM:
        return z3.BitVec(name, ENUM_WIDTH)
    if f.kind == INT:
        return z3.Int(name)
    if f.kind == REAL:
        return z3.Real(name)
    if f.kind == BOOL:
        return z3.Bool(name)
    raise ValueError(f"unknown field kind {f.kind!r}")


_VALS: dict[tuple[str, int, Any], z3.ExprRef] = {}


def make_val(f: Field, value: Any, n: int) -> z3.ExprRef:
    """The z3 constant of a concrete field value (memoized: the differential test builds millions)."""
    key = (f.kind, n, value)
    v = _VALS.get(key)
    if v is None:
        v = _VALS[key] = _make_val(f, value, n)
    return v


def _make_val(f: Field, value: Any, n: int) -> z3.ExprRef:
    if f.kind in (SET, LEADER):
        return z3.BitVecVal(int(value), n)
    if f.kind == COUNT:
        return z3.BitVecVal(int(value), COUNT_WIDTH)
    if f.kind == ENUM:
        return z3.BitVecVal(int(value), ENUM_WIDTH)
    if f.kind == INT:
        return z3.IntVal(int(value))
    if f.kind == REAL:
        return real_val(value)
    if f.kind == BOOL:
        return z3.BoolVal(bool(value))
    raise ValueError(f"unknown field kind {f.kind!r}")


def real_val(value: Any) -> z3.RatNumRef:
    """An exact rational (int or fractions.Fraction) as a z3 constant."""
    from fractions import Fraction

    x = Fraction(value)
    return z3.Q(x.numerator, x.denominator)


def read_val(f: Field, model: z3.ModelRef, term: z3.ExprRef) -> Any:
    v = model.eval(term, model_completion=True)
    if f.kind == BOOL:
        return z3.is_true(v)
    if f.kind == REAL:
        from fractions import Fraction

        if z3.is_algebraic_value(v):
            raise ValueError(f"{f.name}: irrational value {v}")
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    return v.as_long()


def equal(fields: Sequence[Field], a: Vars, b: Vars | dict) -> z3.BoolRef:
    return z3.And([a[f.name] == b[f.name] for f in fields])


_EQS: dict[tuple[int, Any], z3.BoolRef] = {}


def bind(fields: Sequence[Field], a: Vars, values: dict[str, Any], n: int) -> list[z3.BoolRef]:
    """Equalities fixing the symbolic fields `a` to concrete values (memoized per variable and value)."""
    out = []
    for f in fields:
        if f.name not in values:
            continue
        var, value = a[f.name], values[f.name]
        key = (var.get_id(), value)
        eq = _EQS.get(key)
        if eq is None:
            eq = _EQS[key] = var == make_val(f, value, n)
        out.append(eq)
    return out


def fast_and(xs: Sequence[z3.BoolRef]) -> z3.BoolRef:
    """z3.And without the Python-side coercions (the differential test builds many)."""
    if not xs:
        return z3.BoolVal(True)
    ctx = xs[0].ctx
    arr = (z3.Ast * len(xs))()
    for i, x in enumerate(xs):
        arr[i] = x.as_ast()
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(xs), arr), ctx)


def fast_check(solver: z3.Solver, assumptions: Sequence[z3.BoolRef]) -> z3.CheckSatResult:
    """solver.check(*assumptions) without the Python-side coercions."""
    arr = (z3.Ast * len(assumptions))()
    for i, x in enumerate(assumptions):
        arr[i] = x.as_ast()
    r = z3.Z3_solver_check_assumptions(solver.ctx.ref(), solver.solver, len(assumptions), arr)
    return z3.CheckSatResult(r)


# -- encodings -------------------------------------------------------------------------------------


StateProp = Callable[[Vars], z3.BoolRef]
EdgeProp = Callable[[Vars, Vars, Vars, Vars], z3.BoolRef]  # (s, action, t, label)


@dataclass
class Candidate:
    """A candidate invariant (a property of the spec or an auxiliary lemma) for `houdini`."""

    name: str
    holds: StateProp
    is_property: bool = False


class Encoding:
    """A transition system over symbolic states (subclasses fill in the Kafka rules).

    `STATE` lists the state fields, `ACTION` the action parameters (`k` selects the kind),
    `LABEL` what a transition reports beside the next state (for transition properties).
    `trans(s, a, t, lab, tag)` is the relation; `tag` names its existentially quantified
    choice variables so that two unrolled steps never share them.
    """

    STATE: tuple[Field, ...] = ()
    ACTION: tuple[Field, ...] = ()
    LABEL: tuple[Field, ...] = ()

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"brokers: must be at least 1, got {n}")
        self.n = n
        self.full = z3.BitVecVal((1 << n) - 1, n)
        self.zero = z3.BitVecVal(0, n)

    # -- variables -----------------------------------------------------------------------
    def state(self, prefix: str) -> Vars:
        return Vars({f.name: make_var(f, prefix, self.n) for f in self.STATE})

    def action(self, prefix: str) -> Vars:
        return Vars({f.name: make_var(f, prefix, self.n) for f in self.ACTION})

    def label(self, prefix: str) -> Vars:
        return Vars({f.name: make_var(f, prefix, self.n) for f in self.LABEL})

    def bv(self, value: int) -> z3.BitVecRef:
        return z3.BitVecVal(value, self.n)

    # -- the system ----------------------------------------------------------------------
    def init(self, s: Vars) -> z3.BoolRef:
        raise NotImplementedError

    def trans(self, s: Vars, a: Vars, t: Vars, lab: Vars, tag: str) -> z3.BoolRef:
        raise NotImplementedError

    def candidates(self) -> list[Candidate]:
        return []

    # -- models ---------------------------------------------------------------------------
    def read(self, fields: Sequence[Field], model: z3.ModelRef, v: Vars) -> dict[str, Any]:
        return {f.name: read_val(f, model, v[f.name]) for f in fields}


# -- engines ---------------------------------------------------------------------------------------


def new_solver(pure_bv: bool, timeout_ms: int | None = None) -> z3.Solver:
    solver = z3.SolverFor("QF_BV") if pure_bv else z3.Solver()
    if timeout_ms:
        solver.set("timeout", timeout_ms)
    return solver


@dataclass
class StepSystem:
    """One symbolic step s --a--> t of an encoding, split into one solver per action kind.

    Splitting by kind keeps each query small (a proof is the conjunction of the kinds'
    proofs); with `pure_bv` (no integer fields) every query is plain bit-vector logic.
    """

    enc: Encoding
    s: Vars
    a: Vars
    t: Vars
    lab: Vars
    solvers: dict[int, z3.Solver]
    hypotheses: list[z3.BoolRef] = field(default_factory=list)

    @staticmethod
    def build(enc: Encoding, kinds: Sequence[int], *, pure_bv: bool = False, timeout_ms: int | None = None) -> StepSystem:
        s, a, t, lab = enc.state("s"), enc.action("a"), enc.state("t"), enc.label("l")
        rel = enc.trans(s, a, t, lab, "step")
        solvers = {}
        for k in kinds:
            solver = new_solver(pure_bv, timeout_ms)
            kv = z3.BitVecVal(k, a.k.size()) if z3.is_bv(a.k) else z3.IntVal(k)
            solver.add(z3.simplify(z3.substitute(rel, (a.k, kv))), a.k == kv)
            solvers[k] = solver
        return StepSystem(enc, s, a, t, lab, solvers)

    def assume(self, invariants: Sequence[StateProp]) -> None:
        """Add invariants of the pre-state as hypotheses of every later query."""
        for inv in invariants:
            h = inv(self.s)
            self.hypotheses.append(h)
            for solver in self.solvers.values():
                solver.add(h)

    def counterexample(self, goal: z3.BoolRef) -> tuple[int, z3.ModelRef] | None:
        """A step (kind, model) of the relation where `goal` holds, or None if there is none.

        Raises TimeoutError when a solver gives up (unknown)."""
        for k, solver in self.solvers.items():
            solver.push()
            solver.add(goal)
            try:
                r = solver.check()
                if r == z3.sat:
                    return k, solver.model()
                if r == z3.unknown:
                    raise TimeoutError(f"kind {k}: {solver.reason_unknown()}")
            finally:
                solver.pop()
        return None


@dataclass
class HoudiniResult:
    inductive: list[str]  # names of the candidates in the largest inductive subset
    dropped: dict[str, str]  # name -> "init" or "step"
    seconds: float = 0.0
    system: StepSystem | None = None
    rounds: int = 0


def houdini(enc: Encoding, candidates: Sequence[Candidate], kinds: Sequence[int], *, pure_bv: bool = False,
            init: Callable[[Vars], z3.BoolRef] | None = None, timeout_ms: int | None = None) -> HoudiniResult:
    """The largest subset H of the candidates with Init ⇒ ∧H and ∧H ∧ T ⇒ ∧H' (Houdini's fixpoint).

    Every candidate in the result is proved invariant (base case and inductive step,
    each strengthened by the others); a dropped one failed the base case or could not be
    shown preserved by the rest. Each round asks for one step breaking any candidate and
    drops every candidate that step breaks. The returned system holds ∧H as hypotheses.
    """
    started = time.perf_counter()
    dropped: dict[str, str] = {}
    base = new_solver(pure_bv, timeout_ms)
    s0 = enc.state("i")
    base.add((init or enc.init)(s0))
    alive = list(candidates)
    while alive:  # base case: one query per round, dropping every candidate its model breaks
        base.push()
        base.add(z3.Not(z3.And([c.holds(s0) for c in alive])))
        r = base.check()
        model = base.model() if r == z3.sat else None
        base.pop()
        if r == z3.unsat:
            break
        if model is None:
            raise TimeoutError(f"base case: {base.reason_unknown()}")
        broken = [c for c in alive if not z3.is_true(model.eval(c.holds(s0), model_completion=True))]
        for c in broken:
            dropped[c.name] = "init"
        alive = [c for c in alive if c not in broken]
    rounds = 0
    while True:
        rounds += 1
        system = StepSystem.build(enc, kinds, pure_bv=pure_bv, timeout_ms=timeout_ms)
        system.assume([c.holds for c in alive])
        found = system.counterexample(z3.Not(z3.And([c.holds(system.t) for c in alive])))
        if found is None:
            return HoudiniResult([c.name for c in alive], dropped, time.perf_counter() - started, system, rounds)
        _, model = found
        broken = [c for c in alive if not z3.is_true(model.eval(c.holds(system.t), model_completion=True))]
        for c in broken:
            dropped[c.name] = "step"
        alive = [c for c in alive if c not in broken]


def prove_base(enc: Encoding, prop: StateProp, *, pure_bv: bool = False,
               init: Callable[[Vars], z3.BoolRef] | None = None) -> z3.CheckSatResult:
    """Init ⇒ prop (unsat = proved)."""
    solver = new_solver(pure_bv)
    s0 = enc.state("i")
    solver.add((init or enc.init)(s0), z3.Not(prop(s0)))
    return solver.check()


class Bmc:
    """Bounded model checking: Init(s0) ∧ T(s0, a1, s1) ∧ … unrolled on demand, one solver."""

    def __init__(self, enc: Encoding, init: Callable[[Vars], z3.BoolRef] | None = None, timeout_ms: int | None = None):
        self.enc = enc
        self.solver = z3.Solver()
        if timeout_ms:
            self.solver.set("timeout", timeout_ms)
        self.states = [enc.state("b0")]
        self.actions: list[Vars] = []
        self.labels: list[Vars] = []
        self.solver.add((init or enc.init)(self.states[0]))

    def unroll(self, depth: int) -> None:
        while len(self.actions) < depth:
            k = len(self.actions) + 1
            s, a, t, lab = self.states[-1], self.enc.action(f"a{k}"), self.enc.state(f"b{k}"), self.enc.label(f"l{k}")
            self.solver.add(self.enc.trans(s, a, t, lab, f"u{k}"))
            self.states.append(t)
            self.actions.append(a)
            self.labels.append(lab)

    def find(self, depth: int, bad: z3.BoolRef, extra: Sequence[z3.BoolRef] = ()) -> z3.ModelRef | None:
        """A model of a path of exactly `depth` steps with `bad` (over the unrolled variables)."""
        self.unroll(depth)
        self.solver.push()
        self.solver.add(bad, *extra)
        try:
            r = self.solver.check()
            return self.solver.model() if r == z3.sat else None
        finally:
            self.solver.pop()

    def block(self, model: z3.ModelRef, depth: int) -> z3.BoolRef:
        """A clause excluding this path's action sequence (for spurious abstract paths)."""
        eqs = []
        for a in self.actions[:depth]:
            for f in self.enc.ACTION:
                eqs.append(a[f.name] == model.eval(a[f.name], model_completion=True))
        return z3.Not(z3.And(eqs))
