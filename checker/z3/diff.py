"""Differential test of a z3 encoding against the reference, on every state of a small configuration.

The one rule of the design (../shared/ARCHITECTURE.md): the reference is the single source
of semantics, and a second encoding is worth something only if it is shown equal to it.
For every state the explorer reaches (`explore(..., keep_graph=True)`) and every action the
reference enables there (budgets ignored, so more edges than the explorer takes), this
checks, with the encoding's relation T in one incremental solver:

1. the reference's successor, projected onto the encoded fields (with the un-renamed
   epochs of `Transition.after`, the ghosts and the endings of the edge), satisfies
   T(s, a, s');
2. T(s, a, ·) has no model outside what list order explains: `enc.allowed(s, a, ref)` (the
   reference's successor and the documented freedoms, ReassignEncoding.allowed), or else
   the reference's successor of the same state with its partition's lists (replicas, ISR,
   adding, removing, original) in some other order — the one thing sets cannot see;
3. every action of the encoding that the reference does not enable in s has no successor.

`check_trace` runs the same edge checks along a trace (e.g. a curated explorer
counterexample) and says whether the encoding's property fails at its end.

A mismatch names the state, the action and the two successors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3
from kreassign.checker.explore.bfs import explore
from kreassign.checker.z3.encoding import bind, fast_and, fast_check


@dataclass
class Mismatch:
    check: str  # "rejects-reference", "extra-successor", "enabled-differs"
    state: dict[str, Any]
    action: str
    reference: dict[str, Any] | None = None
    encoding: dict[str, Any] | None = None

    def __str__(self) -> str:
        diff = ""
        if self.reference is not None and self.encoding is not None:
            keys = [k for k in self.reference if k != "label" and self.encoding.get(k) != self.reference[k]]
            diff = ", ".join(f"{k}: reference {self.reference[k]} vs encoding {self.encoding.get(k)}" for k in keys)
            lr, le = self.reference.get("label", {}), self.encoding.get("label", {})
            diff += "".join(f", label.{k}: reference {lr[k]} vs encoding {le.get(k)}" for k in lr if le.get(k) != lr[k])
        return f"{self.check}: {self.action} from {self.state}" + (f" ({diff})" if diff else "")


@dataclass
class DiffReport:
    states: int = 0
    edges: int = 0
    checks: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.mismatches


class EdgeChecker:
    """The relation of `enc` in incremental solvers, checking edges of `model` against it."""

    def __init__(self, enc, model, rf: int):
        from kreassign.checker.z3.encoding import mask
        from kreassign.checker.z3.reassign import REASSIGN

        self.enc, self.model, self.rf = enc, model, rf
        s, a, t, lab = enc.state("s"), enc.action("a"), enc.state("t"), enc.label("l")
        self.s, self.a, self.t, self.lab = s, a, t, lab
        rel = enc.trans(s, a, t, lab, "d")
        self.solver = z3.SimpleSolver()  # the whole relation, for the enabledness check
        self.solver.add(rel)
        self.by_kind = {}  # one smaller solver per action kind, for the edges
        for k in enc.KINDS:
            self.by_kind[k] = z3.SimpleSolver()
            self.by_kind[k].add(z3.simplify(z3.substitute(rel, (a.k, z3.BitVecVal(k, a.k.size())))), a.k == k)
        # requests are compared for the targets the model may request (the encoding takes any)
        targets = sorted({mask(r) for _, _, r in model.space.targets})
        self.in_space = z3.Or(a.k != REASSIGN, z3.Or([a.tgt == m for m in targets]) if targets else z3.BoolVal(False))

    def edge(self, ms, action, pre: dict | None = None) -> Mismatch | None:
        """Check one edge: the reference's successor is accepted, and nothing beyond the allowed ones."""
        enc, s, a, t, lab = self.enc, self.s, self.a, self.t, self.lab
        pre = pre if pre is not None else enc.project_state(ms, self.rf)
        act = enc.project_action(action)
        nxt, label = self.model.step(ms, action)
        ref = enc.project_state(nxt, self.rf, cluster=label.after)
        ref["label"] = enc.project_label(label)
        fix_s = bind(enc.STATE, s, pre, enc.n)
        fix_a = bind(enc.ACTION, a, act, enc.n)
        fix_t = bind(enc.STATE, t, ref, enc.n) + bind(enc.LABEL, lab, ref["label"], enc.n)
        ks = self.by_kind.get(act["k"], self.solver)
        if fast_check(ks, fix_s + fix_a + fix_t) != z3.sat:
            return Mismatch("rejects-reference", pre, str(action), ref, _model_of(ks, enc, fix_s + fix_a, t, lab))
        if (fast_check(ks, fix_s + fix_a + [z3.Not(enc.allowed(pre, act, ref, t, lab))]) == z3.sat
                and fast_check(ks, fix_s + fix_a + [z3.Not(_any_variant(enc, self.model, ms, action, self.rf, t,
                                                                        lab))]) == z3.sat):
            m = ks.model()
            other = enc.read(enc.STATE, m, t)
            other["label"] = enc.read(enc.LABEL, m, lab)
            return Mismatch("extra-successor", pre, str(action), ref, other)
        return None

    def disabled(self, pre: dict, enabled: list[dict]) -> Mismatch | None:
        """No action the reference does not enable in this state has a successor in the encoding."""
        enc, a = self.enc, self.a
        others = [z3.Not(fast_and(bind(enc.ACTION, a, act, enc.n))) for act in enabled]
        others.append(self.in_space)
        if fast_check(self.solver, bind(enc.STATE, self.s, pre, enc.n) + others) == z3.sat:
            act = enc.read(enc.ACTION, self.solver.model(), a)
            return Mismatch("enabled-differs", pre, f"{enc.concrete_action(act)} "
                            "(enabled in the encoding, not by the reference)")
        return None


def differential(enc, model, rf: int | None = None, *, max_mismatches: int = 5, check_disabled: bool = True) -> DiffReport:
    """Compare encoding `enc` with `model` (a ReassignmentModel) on every reachable state of the model."""
    import time

    started = time.perf_counter()
    rf = rf if rf is not None else len(model.bounds.initial_assignment()[0])
    graph = explore(model, keep_graph=True).graph
    assert graph is not None
    checker = EdgeChecker(enc, model, rf)
    report = DiffReport()
    seen_states: set = set()
    seen_edges: set = set()

    def done() -> bool:
        report.seconds = time.perf_counter() - started
        return len(report.mismatches) >= max_mismatches

    for ms in graph.states:
        report.states += 1
        pre = enc.project_state(ms, rf)
        key = tuple(pre.values())
        if key in seen_states:  # states that differ only in what the encoding does not hold (budgets)
            continue
        seen_states.add(key)
        enabled = []
        for action in model.profile.enabled_actions(ms.cluster, model.space):
            act = enc.project_action(action)
            if act is None:
                continue
            enabled.append(act)
            report.edges += 1
            edge = (key, tuple(act.values()))
            if edge in seen_edges:
                continue
            seen_edges.add(edge)
            report.checks += 2
            mismatch = checker.edge(ms, action, pre)
            if mismatch is not None:
                report.mismatches.append(mismatch)
                if done():
                    return report
        if check_disabled:
            report.checks += 1
            mismatch = checker.disabled(pre, enabled)
            if mismatch is not None:
                report.mismatches.append(mismatch)
                if done():
                    return report
    done()
    return report


def check_trace(enc, trace) -> tuple[list[Mismatch], bool]:
    """Follow a reassignment trace (e.g. a curated explorer counterexample) with the encoding.

    Every edge of the trace is checked as in the differential test; returns the mismatches and
    whether the encoding's version of the trace's property fails at its end (the violation the
    explorer found is one the encoding reaches too)."""
    from kreassign.checker.models.registry import build_model

    model = build_model(trace.model, trace.profile, trace.bounds)
    rf = len(model.bounds.initial_assignment()[0])
    checker = EdgeChecker(enc, model, rf)
    state = model.state_from_json(trace.initial)
    mismatches = []
    last = None
    for step in trace.steps:
        action = model.action_from_json(step["action"])
        mismatch = checker.edge(state, action)
        if mismatch is not None:
            mismatches.append(mismatch)
        prev = state
        state, label = model.step(state, action)
        last = (prev, action, state, label)
    if last is None:
        return mismatches, False
    prev, action, state, label = last
    pre = enc.project_state(prev, rf)
    post = enc.project_state(state, rf, cluster=label.after)
    states = enc.state_properties()
    edges = enc.edge_properties()
    s, a, t, lab = checker.s, checker.a, checker.t, checker.lab
    fixes = (bind(enc.STATE, s, pre, enc.n) + bind(enc.ACTION, a, enc.project_action(action), enc.n)
             + bind(enc.STATE, t, post, enc.n) + bind(enc.LABEL, lab, enc.project_label(label), enc.n))
    if trace.property in states:
        holds = states[trace.property](t)
    elif trace.property in edges:
        holds = edges[trace.property](s, a, t, lab)
    else:
        return mismatches, False
    solver = z3.Solver()
    solver.add(*fixes)
    return mismatches, solver.check(holds) == z3.unsat


#: most list-order variants of one state tried (permutations of replicas, ISR, adding, removing, original)
MAX_VARIANTS = 2000


def order_variants(ms, fixed: tuple[str, ...] = ()) -> list:
    """The model state with its partition's lists in every other order (the sets unchanged); the lists in
    `fixed` keep theirs (an encoding with list order holds them: order.py)."""
    from dataclasses import replace
    from itertools import islice, permutations, product

    cluster = ms.cluster
    topic = cluster.topics[0]
    p = topic.partitions[0]
    fields = ["replicas", "isr", "adding", "removing"] + (["original"] if p.original is not None else [])
    fields = [f for f in fields if f not in fixed]
    choices = [list(permutations(getattr(p, f))) for f in fields]
    out = []
    for combo in islice(product(*choices), MAX_VARIANTS):
        q = replace(p, **dict(zip(fields, combo)))
        if q == p:
            continue
        c = replace(cluster, topics=(replace(topic, partitions=(q,) + topic.partitions[1:]),) + cluster.topics[1:])
        out.append(ms._replace(cluster=c))
    return out


def _any_variant(enc, model, ms, action, rf, t, lab) -> z3.BoolRef:
    """t is the reference's successor of the state with its lists in some order (what sets cannot tell),
    this order included."""
    alts = []
    seen = set()
    for variant in [ms, *order_variants(ms, getattr(enc, "ORDER_FIXED", ()))]:
        try:
            nxt, label = model.step(variant, action)
        except (ValueError, IndexError, KeyError):  # a variant the reference refuses is no successor
            continue
        ref = enc.project_state(nxt, rf, cluster=label.after)
        ref["label"] = enc.project_label(label)
        key = (tuple(ref.values())[:-1], tuple(ref["label"].values()))
        if key in seen:
            continue
        seen.add(key)
        alts.append(fast_and(bind(enc.STATE, t, ref, enc.n) + bind(enc.LABEL, lab, ref["label"], enc.n)))
    return z3.Or(alts) if alts else z3.BoolVal(False)


def _model_of(solver: z3.Solver, enc, fixes, t, lab) -> dict[str, Any] | None:
    """What the encoding does instead (any successor of the same state and action), for the report."""
    if solver.check(*fixes) != z3.sat:
        return None
    m = solver.model()
    out = enc.read(enc.STATE, m, t)
    out["label"] = enc.read(enc.LABEL, m, lab)
    return out
