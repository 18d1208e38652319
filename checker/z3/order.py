"""Replica lists with their order, for the z3 encodings: the order properties for every N up to 32.

The set encoding (reassign.py, zk.py) abstracts list order away. This layer adds it back for the
lists whose order a property compares — the replicas `R`, the explorer's original `O` (and the
label's `eO`), kip236's recorded original `OR`, zk's memory `MR` and recorded target `BR` — as an
*order relation*: for a list X over brokers 1…N, `X@i` is the set (a bit-vector) of the members
that come after broker i + 1 in X. Every list operation the profiles perform is then plain
bit-vector logic, one row per broker, with no counting:

| operation (reference/) | rows |
|---|---|
| `ordered_minus(X, D)` (spec/state.py): filters | `X@i & X′` for the members i of X′ = X − D |
| `distinct(A + B)` (kip236 plan, zk `reassign_to`, kip455 `removing + target`) | `A@i ∣ (B − A)` for i ∈ A, `B@i & (B − A)` for i ∈ B − A |
| KRaft `target + sorted(current − target)` (reference/kraft.py `kraft_plan`) | ascending ids: the bits above i |

Each state row is normalised (0 for a non-member, a subset of the list), every post row is
computed normalised, and lists are compared masked, so a proof needs no well-formedness
invariant: in a proof the initial order and a request's target order are any relation at all
(more than every order), which only weakens the hypothesis. Bounded model checking and the
differential test take the explorer's orders: replicas 1…rf, targets ascending (`Bounds.targets
= "all"`).

Every rule here restates one of the reference's: each names its original ("twin:"), and
diff.differential compares the layer's rows with the reference's lists on every explored edge
(tests/unit/test_z3_order.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import z3
from kreassign.checker.z3.encoding import SET, Candidate, Field, Vars, fast_and, houdini, mask
from kreassign.checker.z3.reassign import CANCEL, FAILOVER, REASSIGN, STEP, reassigning

#: the properties about list order this layer states (spec/reassign_properties.py)
ORDER_PROPERTIES = ("cancel_restores_original_order",)


# -- lists as order relations ----------------------------------------------------------------------


class Lst:
    """A list: its set `s` (a bit-vector) and its rows (`rows[i]`: the members after broker i + 1)."""

    def __init__(self, s: z3.BitVecRef, rows: list[z3.BitVecRef]):
        self.s, self.rows = s, rows


def bit(x: z3.BitVecRef, i: int) -> z3.BoolRef:
    return z3.Extract(i, i, x) == 1


def rows_of(v: Vars, name: str, n: int) -> list[z3.BitVecRef]:
    return [v[f"{name}@{i}"] for i in range(n)]


def lst(v: Vars, name: str, set_name: str | None = None) -> Lst:
    n = v[set_name or name].size()
    return Lst(v[set_name or name], rows_of(v, name, n))


def normal(x: z3.BitVecRef, rows: list[z3.BitVecRef]) -> list[z3.BitVecRef]:
    zero = z3.BitVecVal(0, x.size())
    return [z3.If(bit(x, i), r & x, zero) for i, r in enumerate(rows)]


def restrict(src: Lst, x: z3.BitVecRef) -> Lst:
    """`ordered_minus(src, src − x)` for x ⊆ src: the members of x in src's order.
    twin: spec/state.py ordered_minus"""
    return Lst(x, normal(x, src.rows))


def concat(a: Lst, b: Lst) -> Lst:
    """`distinct(a + b)`: a's members in a's order, then b's others in b's order.
    twin: spec/state.py distinct (reference/kip236.py plan, zk_controller.reassign_to, kip455.plan)"""
    rest = b.s & ~a.s
    rows = [z3.If(bit(a.s, i), ra | rest, rb & rest) for i, (ra, rb) in enumerate(zip(a.rows, b.rows))]
    return Lst(a.s | b.s, normal(a.s | b.s, rows))


def ascending(x: z3.BitVecRef) -> Lst:
    """x in ascending broker id order (KRaft sorts removing by id; the explorer's targets).
    twin: reference/kraft.py kraft_plan (removing = sorted(current − target))"""
    n = x.size()
    above = [z3.BitVecVal(((1 << n) - 1) & ~((2 << i) - 1), n) for i in range(n)]
    return Lst(x, normal(x, [x & m for m in above]))


def ite(c: z3.BoolRef, a: Lst, b: Lst) -> Lst:
    return Lst(z3.If(c, a.s, b.s), [z3.If(c, ra, rb) for ra, rb in zip(a.rows, b.rows)])


def same_list(a: Lst, b: Lst) -> z3.BoolRef:
    """a == b as lists: the same members, each followed by the same members."""
    return z3.And(a.s == b.s, *[z3.Implies(bit(a.s, i), ra & a.s == rb & b.s) for i, (ra, rb) in
                                enumerate(zip(a.rows, b.rows))])


def rows_value(order: tuple[int, ...] | None, n: int) -> list[int]:
    """A concrete list as row values (`rows[i]`: mask of the members after broker i + 1)."""
    out = [0] * n
    for k, b in enumerate(order or ()):
        out[b - 1] = mask(order[k + 1:])
    return out


# -- the layer --------------------------------------------------------------------------------------


class OrderMixin:
    """Adds the order of the lists in ORDERED to a set encoding: fields `X@i`, rows of the post-state
    from the profile's `order_sources`, the label's original `eO@i`, the action's target order `tgt@i`,
    and the order properties."""

    #: lists whose order is held (state fields), each with the set field it orders
    ORDERED: tuple[str, ...] = ("R", "O")
    #: the partition's lists whose order the differential test must not vary (diff.order_variants)
    ORDER_FIXED = ("replicas", "original")

    def __init__(self, n: int, *args: Any, target_order: str | None = None, **kw: Any):
        super().__init__(n, *args, **kw)
        #: "ascending" (the explorer's targets; bounded model checking) or "any" (proofs: any relation)
        self.target_order = target_order or ("ascending" if self.exact_rf else "any")
        rows = lambda name: tuple(Field(f"{name}@{i}", SET) for i in range(n))
        self.ORDER_STATE = tuple(f for name in self.ORDERED for f in rows(name))
        self.STATE = self.STATE + self.ORDER_STATE
        self.LABEL = self.LABEL + rows("eO")
        self.ACTION = self.ACTION + rows("tgt")

    # -- initial states ---------------------------------------------------------------------------
    def init_explorer(self, s: Vars) -> z3.BoolRef:
        """The explorer's initial replicas 1…rf, in that order; the others empty."""
        norm = [same_rows(lst(s, name, self.set_of(name)), restrict(lst(s, name, self.set_of(name)), s[self.set_of(name)]))
                for name in self.ORDERED]
        return z3.And(super().init_explorer(s), same_rows(lst(s, "R"), ascending(s.R)), *norm, self.order_init(s))

    @staticmethod
    def set_of(name: str) -> str:
        return name

    def init(self, s: Vars) -> z3.BoolRef:
        return z3.And(super().init(s), self.order_init(s))

    def order_init(self, s: Vars) -> z3.BoolRef:
        return z3.BoolVal(True)

    # -- the relation ------------------------------------------------------------------------------
    def order_sources(self, s: Vars, a: Vars, t: Vars, lab: Vars, tgt: Lst) -> dict[str, Lst]:
        """Per ordered field (besides O): a list whose filter to the post-state's set is the post list."""
        raise NotImplementedError

    def trans(self, s: Vars, a: Vars, t: Vars, lab: Vars, tag: str) -> z3.BoolRef:
        base = super().trans(s, a, t, lab, tag)
        n = self.n
        tgt = Lst(a.tgt, rows_of(a, "tgt", n))
        is_re = a.k == REASSIGN
        if self.target_order == "ascending":
            tgt_ok = same_rows(tgt, ascending(a.tgt))
        else:
            tgt_ok = z3.And([x == y for x, y in zip(tgt.rows, normal(a.tgt, tgt.rows))])
        params = z3.If(is_re, tgt_ok, z3.And([x == 0 for x in tgt.rows]))
        src = self.order_sources(s, a, t, lab, tgt)
        # the explorer's original: kept while it has one, else the replicas − adding of the state it starts
        # in (ReassignmentModel._intent: `before.origin`); `o1` is the post ghost or the ended one
        src["O"] = ite(s.hO, lst(s, "O"), lst(s, "R"))
        eqs = []
        for name in self.ORDERED:
            post = restrict(src[name], t[name])
            eqs += [x == y for x, y in zip(rows_of(t, name, n), post.rows)]
        ended = restrict(src["O"], lab.eO)
        eqs += [x == y for x, y in zip(rows_of(lab, "eO", n), ended.rows)]
        return z3.And(base, params, fast_and(eqs), *self.order_constraints(s, a, tag))

    def order_constraints(self, s: Vars, a: Vars, tag: str) -> list[z3.BoolRef]:
        """Constraints list order puts on the set encoding's choices (none by default)."""
        return []

    # -- properties -----------------------------------------------------------------------------------
    def edge_properties(self) -> dict[str, Callable]:
        out = dict(super().edge_properties())
        out["cancel_restores_original_order"] = lambda s, a, t, l: z3.Or(
            z3.Not(z3.And(l.e, l.ec)), same_list(lst(t, "R"), Lst(l.eO, rows_of(l, "eO", self.n))))
        return out

    def order_lemmas(self) -> dict[str, Callable[[Vars], z3.BoolRef]]:
        """Candidate order invariants (Houdini keeps the inductive ones)."""
        return {
            "original list = replicas − adding, in order": lambda s: z3.Implies(
                s.hO, same_list(lst(s, "O"), restrict(lst(s, "R"), s.R & ~s.AR))),
        }

    # -- concrete values --------------------------------------------------------------------------------
    def project_state(self, ms, rf: int, cluster=None) -> dict[str, Any]:
        v = super().project_state(ms, rf, cluster)
        cl = cluster if cluster is not None else ms.cluster
        lists = self.concrete_lists(cl, cl.topics[0].partitions[0], ms.ghosts[0])
        for name in self.ORDERED:
            for i, r in enumerate(rows_value(lists[name], self.n)):
                v[f"{name}@{i}"] = r
        return v

    def concrete_lists(self, cluster, part, ghost) -> dict[str, tuple[int, ...] | None]:
        return {"R": part.replicas, "O": ghost.original}

    def project_action(self, action) -> dict[str, Any] | None:
        v = super().project_action(action)
        if v is None:
            return None
        act = getattr(action, "action", action)
        order = tuple(act.replicas) if v["k"] == REASSIGN else ()
        for i, r in enumerate(rows_value(order, self.n)):
            v[f"tgt@{i}"] = r
        return v

    def project_label(self, label) -> dict[str, Any]:
        v = super().project_label(label)
        original = next((e.original for e in getattr(label, "endings", ()) if e.index == 0), ())
        for i, r in enumerate(rows_value(original, self.n)):
            v[f"eO@{i}"] = r
        return v

    def concrete_action(self, values: dict[str, Any]):
        """Targets in the order of their rows (ascending in bounded model checking)."""
        from kreassign.checker.z3.encoding import ids
        from kreassign.spec import actions as A

        act = super().concrete_action(values)
        if values["k"] == REASSIGN:
            members = ids(values["tgt"])
            after = {b: values.get(f"tgt@{b - 1}", 0) for b in members}
            order = sorted(members, key=lambda b: -len(ids(after[b] & values["tgt"])))
            act = A.Reassign(act.topic, act.partition, tuple(order))
        return act


def same_rows(a: Lst, b: Lst) -> z3.BoolRef:
    return z3.And([x == y for x, y in zip(a.rows, b.rows)])


# -- the profiles' list rules -------------------------------------------------------------------------


class KraftOrder(OrderMixin):
    def order_sources(self, s, a, t, lab, tgt):
        """Reassign: the plan's `target + sorted(current − target)`; every other change (completion: R − RR,
        revert: R − AR) filters the replicas.
        twin: reference/kraft.py kraft_plan, KraftProfile.revert; reference/kraft_change.py (completion)"""
        r = lst(s, "R")
        plan = concat(tgt, ascending(s.R & ~a.tgt))
        return {"R": ite(a.k == REASSIGN, plan, r)}


class Kip455Order(OrderMixin):
    def order_sources(self, s, a, t, lab, tgt):
        """Reassign: an ongoing one is cancelled (R − AR), then `removing + target`; cancel (R − AR) and
        completion (R − RR) filter.
        twin: reference/kip455.py plan, cancel, complete"""
        r = lst(s, "R")
        kept = s.R & ~z3.If(reassigning(s), s.AR, self.zero)
        plan = concat(restrict(r, kept & ~a.tgt), tgt)
        return {"R": ite(a.k == REASSIGN, plan, r)}


class Kip236Order(OrderMixin):
    ORDERED = ("R", "O", "OR")

    def order_sources(self, s, a, t, lab, tgt):
        """Reassign: the drop rule filters, then `distinct(target + current)` (a plain target: the target);
        the recorded original is the original, or the replicas when idle; the rollback writes it back;
        completion writes R − RR.
        twin: reference/kip236.py Kip236Profile.submit, begin, rollback, run_step"""
        r = lst(s, "R")
        moving = reassigning(s)
        orig = ite(z3.And(moving, s.hOR), lst(s, "OR"), r)
        plan = concat(tgt, r)
        return {"R": ite(z3.And(a.k == REASSIGN, lab.acc), plan, ite(a.k == CANCEL, orig, r)),
                "OR": ite(z3.And(a.k == REASSIGN, z3.Not(z3.And(moving, s.hOR))), r, lst(s, "OR"))}

    def order_constraints(self, s, a, tag):
        """The drop rule keeps `existing[:top]` of [leader] ++ ISR ++ OSR, OSR in replica order: no
        out-of-sync replica is kept after one that is dropped (the ISR's order is not held: its members
        stay any).
        twin: reference/kip236.py drop_replicas"""
        keep = z3.BitVec(f"{tag}.keep", self.n)  # the set encoding's choice (Kip236Encoding.branches)
        osr = s.R & ~s.I & ~s.LD
        r = lst(s, "R")
        return [z3.Implies(z3.And(a.k == REASSIGN, bit(osr, i), z3.Not(bit(keep, i))), row & osr & keep == 0)
                for i, row in enumerate(r.rows)]

    def concrete_lists(self, cluster, part, ghost):
        return {**super().concrete_lists(cluster, part, ghost), "OR": part.original}

    def order_lemmas(self):
        lem = super().order_lemmas()
        lem["recorded original list = the original list"] = lambda s: z3.Implies(
            z3.And(s.hOR, s.hO), same_list(lst(s, "OR"), lst(s, "O")))
        return lem


class ZkOrder(OrderMixin):
    ORDERED = ("R", "O", "MR", "BR")

    def order_init(self, s):
        """The controller's memory starts as ZooKeeper's list."""
        return same_rows(restrict(lst(s, "MR"), s.MR), restrict(lst(s, "R"), s.R))

    def order_sources(self, s, a, t, lab, tgt):
        """Step U: `reassign_to` = `distinct(target + origin)` (the memory as is when it already reassigns
        to the target), written to ZooKeeper and memory when it differs (as lists); B2: memory − removing;
        B6: ZooKeeper = memory; a failover reads memory from ZooKeeper; a scheduled target is the request's,
        the origin (cancel), the memory's target (ISR change, recovery) or ZooKeeper's (failover).
        twin: reference/zk_controller.py reassign_to, step_u, step_b2, step_b6, controller_startup;
        reference/zk.py (cancel = reassignTo(origin))"""
        from kreassign.checker.z3.zk import B6, U

        r, mr, br = lst(s, "R"), lst(s, "MR"), lst(s, "BR")
        at_u = z3.And(a.k == STEP, s.PS == self.ps(U))
        mem_moving = z3.Or(s.MAR != 0, s.MRR != 0)
        # reassignTo unless memory already reassigns to this very target list (target_of(mem) == target)
        same = z3.And(mem_moving, same_list(restrict(mr, s.MR & ~s.MRR), br))
        origin = restrict(mr, s.MR & ~s.MAR)
        new = ite(same, mr, concat(br, origin))
        new_differs = z3.Not(z3.And(same_list(new, mr), s.MAR == z3.If(same, s.MAR, s.BR & ~origin.s),
                                    s.MRR == z3.If(same, s.MRR, origin.s & ~s.BR)))
        written = z3.And(at_u, new_differs)
        scheduled = t.PS == self.ps(U)
        return {
            "R": ite(written, new, ite(z3.And(a.k == STEP, s.PS == self.ps(B6)), mr, r)),
            "MR": ite(a.k == FAILOVER, r, ite(written, new, mr)),
            "BR": ite(scheduled, ite(a.k == REASSIGN, tgt, ite(a.k == FAILOVER, r, mr)), br),
        }

    def concrete_lists(self, cluster, part, ghost):
        zk = cluster.zk
        mem = next((r for t, i, r, _, _ in zk.memory if (t, i) == ("t", 0)), ())
        target = next((r for t, i, r in zk.being_reassigned if (t, i) == ("t", 0)), None)
        return {**super().concrete_lists(cluster, part, ghost), "MR": mem, "BR": target}


ORDER_LAYERS = {"kraft": KraftOrder, "kraft-3.7": KraftOrder, "kip455": Kip455Order, "kip236": Kip236Order,
                "zk": ZkOrder}


def ordered(cls: type) -> type:
    """The encoding class `cls` (a profile's, or a variant of it) with list order (itself if it has it)."""
    if issubclass(cls, OrderMixin):
        return cls
    layer = ORDER_LAYERS[cls.profile]
    return type(f"Ordered{cls.__name__}", (layer, cls), {"__module__": __name__,
                                                        "__doc__": f"{cls.__name__} with list order (order.py)."})


# -- proofs -------------------------------------------------------------------------------------------------


def prove_order_property(make: type, name: str, *, max_brokers: int, min_brokers: int, targets: str,
                         invariant: list[str], timeout_ms: int | None = None, prune_width: int = 6):
    """Is the transition property `name` implied, for every N in min_brokers..max_brokers, by one step under
    the set invariant (`invariant`: the names of the profile's inductive conjuncts) and the order lemmas
    Houdini keeps? (proved, the order lemmas kept, seconds)"""
    started = time.perf_counter()
    cls = ordered(make)

    def cands(enc):
        by_name = {c.name: c for c in enc.candidates()}
        return ([by_name[n] for n in invariant if n in by_name]
                + [Candidate(n, p) for n, p in enc.order_lemmas().items()])

    def implied(h, enc) -> bool:
        system = h.system
        prop = enc.edge_properties()[name]
        return system.counterexample(z3.Not(prop(system.s, system.a, system.t, system.lab))) is None

    enc = cls(max_brokers, targets=targets, epochs=False, min_brokers=min_brokers)
    alive = cands(enc)
    if max_brokers > prune_width:
        # a step breaking the property over ≤ prune_width brokers is one at any width (the brokers are a
        # symbolic prefix): not implied there, not implied at max_brokers — stop before the wide query
        small = cls(prune_width, targets=targets, epochs=False, min_brokers=min(min_brokers, prune_width))
        pre = houdini(small, cands(small), small.KINDS, pure_bv=True, timeout_ms=timeout_ms)
        if not implied(pre, small):
            return False, [], time.perf_counter() - started
        alive = [c for c in alive if c.name in pre.inductive]
    h = houdini(enc, alive, enc.KINDS, pure_bv=True, timeout_ms=timeout_ms)
    kept = [n for n in h.inductive if n in enc.order_lemmas()]
    return implied(h, enc), kept, time.perf_counter() - started


__all__ = ["ORDER_PROPERTIES", "Lst", "OrderMixin", "concat", "ordered", "prove_order_property",
           "restrict", "rows_value"]
