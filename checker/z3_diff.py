"""Differential test of a z3 encoding against the reference, on every state of a small configuration.

The one rule of the design (../shared/ARCHITECTURE.md): the reference is the single source
of semantics, and a second encoding is worth something only if it is shown equal to it.
For every state the explorer reaches (`explore(..., keep_graph=True)`) and every action the
reference enables there (budgets ignored, so more edges than the explorer takes), this
checks, with the encoding's relation T in one incremental solver:

1. the reference's successor, projected onto the encoded fields (with the un-renamed
   epochs of `Transition.after`, the ghosts and the endings of the edge), satisfies
   T(s, a, s');
2. T(s, a, ·) has no model outside `enc.allowed(s, a, ref)`: the reference's successor
   itself, plus the documented list-order alternatives (ReassignEncoding.allowed);
3. every action of the encoding that the reference does not enable in s has no successor.

A mismatch names the state, the action and the two successors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from .bfs import explore
from .z3_encoding import bind, fast_and, fast_check


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


def differential(enc, model, rf: int | None = None, *, max_mismatches: int = 5, check_disabled: bool = True) -> DiffReport:
    """Compare encoding `enc` with `model` (a ReassignmentModel) on every reachable state of the model."""
    import time

    started = time.perf_counter()
    rf = rf if rf is not None else len(model.bounds.initial_assignment()[0])
    result = explore(model, keep_graph=True)
    graph = result.graph
    assert graph is not None
    s, a, t, lab = enc.state("s"), enc.action("a"), enc.state("t"), enc.label("l")
    rel = enc.trans(s, a, t, lab, "d")
    solver = z3.SimpleSolver()  # the whole relation, for the enabledness check
    solver.add(rel)
    by_kind = {}  # one smaller solver per action kind, for the edges
    for k in enc.KINDS:
        by_kind[k] = z3.SimpleSolver()
        by_kind[k].add(z3.simplify(z3.substitute(rel, (a.k, z3.BitVecVal(k, a.k.size())))), a.k == k)
    # requests are compared for the targets the model may request (the encoding takes any)
    from .z3_reassign import REASSIGN
    from .z3_encoding import mask

    space_targets = sorted({mask(r) for _, _, r in model.space.targets})
    in_space = z3.Or(a.k != REASSIGN, z3.Or([a.tgt == m for m in space_targets]) if space_targets else z3.BoolVal(False))
    report = DiffReport()
    seen_states: set = set()
    seen_edges: set = set()
    for ms in graph.states:
        report.states += 1
        pre = enc.project_state(ms, rf)
        key = tuple(pre.values())
        if key in seen_states:  # states that differ only in what the encoding does not hold (budgets)
            continue
        seen_states.add(key)
        fix_s = bind(enc.STATE, s, pre, enc.n)
        enabled: dict[int, list[dict]] = {}
        for action in model.profile.enabled_actions(ms.cluster, model.space):
            act = enc.project_action(action)
            if act is None:
                continue
            enabled.setdefault(act["k"], []).append(act)
            nxt, label = model.step(ms, action)
            ref = enc.project_state(nxt, rf, cluster=label.after)
            ref["label"] = enc.project_label(label)
            report.edges += 1
            edge = (key, tuple(act.values()), tuple(ref.values())[:-1], tuple(ref["label"].values()))
            if edge in seen_edges:
                continue
            seen_edges.add(edge)
            fix_a = bind(enc.ACTION, a, act, enc.n)
            fix_t = bind(enc.STATE, t, ref, enc.n) + bind(enc.LABEL, lab, ref["label"], enc.n)
            report.checks += 2
            ks = by_kind.get(act["k"], solver)
            if fast_check(ks, fix_s + fix_a + fix_t) != z3.sat:
                m = _model_of(ks, enc, fix_s + fix_a, t, lab)
                report.mismatches.append(Mismatch("rejects-reference", pre, str(action), ref, m))
            elif (fast_check(ks, fix_s + fix_a + [z3.Not(enc.allowed(pre, act, ref, t, lab))]) == z3.sat
                  and fast_check(ks, fix_s + fix_a + [z3.Not(_any_variant(enc, model, ms, action, rf, t, lab))])
                  == z3.sat):
                m = ks.model()
                other = enc.read(enc.STATE, m, t)
                other["label"] = enc.read(enc.LABEL, m, lab)
                report.mismatches.append(Mismatch("extra-successor", pre, str(action), ref, other))
            if len(report.mismatches) >= max_mismatches:
                report.seconds = time.perf_counter() - started
                return report
        if check_disabled:
            others = [z3.Not(fast_and(bind(enc.ACTION, a, act, enc.n))) for acts in enabled.values() for act in acts]
            others.append(in_space)
            report.checks += 1
            if fast_check(solver, fix_s + others) == z3.sat:
                m = solver.model()
                act = enc.read(enc.ACTION, m, a)
                report.mismatches.append(Mismatch("enabled-differs", pre, f"{enc.concrete_action(act)} "
                                                  "(enabled in the encoding, not by the reference)"))
                if len(report.mismatches) >= max_mismatches:
                    report.seconds = time.perf_counter() - started
                    return report
    report.seconds = time.perf_counter() - started
    return report


#: most list-order variants of one state tried (permutations of replicas, ISR, adding, removing, original)
MAX_VARIANTS = 2000


def order_variants(ms) -> list:
    """The model state with its partition's lists in every other order (the sets unchanged)."""
    from dataclasses import replace
    from itertools import permutations, product, islice

    cluster = ms.cluster
    topic = cluster.topics[0]
    p = topic.partitions[0]
    fields = ["replicas", "isr", "adding", "removing"] + (["original"] if p.original is not None else [])
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
    """t is the reference's successor of the state with its lists in some order (what sets cannot tell)."""
    alts = []
    seen = set()
    for variant in order_variants(ms):
        try:
            nxt, label = model.step(variant, action)
        except Exception:  # noqa: BLE001 - a variant the reference refuses is no successor
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
