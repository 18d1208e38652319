"""Replica lists with their order in z3 (checker/z3/order.py): tied to the reference, and the order
property proved or refuted for every cluster size.

The layer's list rules (KRaft's `target + sorted(current − target)`, KIP-455's `removing + target`,
kip236's `distinct(target + current)`, its drop rule and rollback, zk's `reassign_to`, filters) are
compared with the reference's lists on every explored edge; a mutated rule on either side fails that
comparison, and a broken variant on both sides is refuted where the real profile is proved.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import z3
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.z3.diff import differential
from kreassign.checker.z3.order import Kip455Order, Lst, concat, ordered, restrict, rows_value
from kreassign.checker.z3.profiles import encoding_class, reference_model
from kreassign.checker.z3.prove import PROVED, REFUTED, prove_reassignment
from kreassign.checker.z3.reassign import CANCEL, Kip236Encoding, Kip455Encoding
from kreassign.reference import kip455
from kreassign.reference.kip236 import Kip236Profile
from kreassign.reference.kip455 import Kip455Profile
from kreassign.spec.findings import broken
from kreassign.spec.messages import NONE
from kreassign.spec.state import distinct, ordered_minus

PROP = "cancel_restores_original_order"
#: a request, an override and a cancel (zk: one request; its cancel is a reassignment to the origin)
OVERRIDES = Bounds(brokers=3, rf=2, reassigns=2, cancels=1)
#: one request and a cancel: enough for a mutated list rule to show
ONE = Bounds(brokers=3, rf=2, reassigns=1, cancels=1)
CONFIGS = {
    "kraft": Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1),
    "kip455": OVERRIDES,
    "kip236": OVERRIDES,
    "zk": Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failovers=1),
}


def _ordered(profile: str, n: int = 3):
    return ordered(encoding_class(profile))(n, exact_rf=True)


def test_the_row_operations_are_the_references_list_operations():
    """restrict / concat on concrete rows give ordered_minus / distinct(a + b) of the lists."""
    n = 4

    def lst(xs):
        m = sum(1 << (b - 1) for b in xs)
        return Lst(z3.BitVecVal(m, n), [z3.BitVecVal(r, n) for r in rows_value(xs, n)])

    def rows(v):
        return [z3.simplify(r).as_long() for r in v.rows]

    for a, b in [((3, 1), (2, 4, 1)), ((4,), (1, 2, 3)), ((2, 3, 1), (3, 2))]:
        assert rows(concat(lst(a), lst(b))) == rows_value(distinct(a + b), n)
        keep = tuple(x for x in b if x != b[0])
        assert rows(restrict(lst(b), lst(keep).s)) == rows_value(ordered_minus(b, (b[0],)), n)


@pytest.mark.parametrize("profile", list(CONFIGS))
def test_list_order_agrees_with_the_reference_on_every_state(profile):
    report = differential(_ordered(profile), reference_model(profile, CONFIGS[profile]))
    assert report.edges > 300
    assert report.ok, "\n".join(map(str, report.mismatches))


class Kip455TargetFirst(Kip455Profile):
    """Mutated on purpose: the plan puts the target before the removing replicas."""

    name = "kip455-target-first"

    def reassign_partition(self, state, topic, index, target):
        part = state.partition(topic, index)
        if part.reassigning:
            part = kip455.cancel(part)
        p = kip455.plan(part.replicas, target)
        if p.adding or p.removing or tuple(target) != part.replicas:
            part = kip455.bump_leader_epoch(replace(part, replicas=tuple(target) + p.removing, adding=p.adding,
                                                    removing=p.removing))
        return self.put(state, topic, index, part), NONE, None


class Kip455TargetFirstOrder(Kip455Order):
    def order_sources(self, s, a, t, lab, tgt):
        src = super().order_sources(s, a, t, lab, tgt)
        r = Lst(s.R, [s[f"R@{i}"] for i in range(self.n)])
        plan = concat(tgt, restrict(r, s.R & ~z3.If(s.AR | s.RR != 0, s.AR, self.zero) & ~a.tgt))
        return {**src, "R": Lst(z3.If(a.k == 0, plan.s, src["R"].s),
                                [z3.If(a.k == 0, x, y) for x, y in zip(plan.rows, src["R"].rows)])}


class OrderedKip455TargetFirst(Kip455TargetFirstOrder, Kip455Encoding):
    pass


def test_a_mutated_reference_list_rule_fails_the_differential_test():
    report = differential(_ordered("kip455"), ReassignmentModel(Kip455TargetFirst(), ONE), max_mismatches=1)
    assert not report.ok and "Reassign" in report.mismatches[0].action


def test_a_mutated_encoding_list_rule_fails_the_differential_test():
    report = differential(OrderedKip455TargetFirst(3, exact_rf=True), reference_model("kip455", ONE),
                          max_mismatches=1)
    assert not report.ok and "Reassign" in report.mismatches[0].action
    # the mutant is the mutated reference's twin: on both sides it agrees
    assert differential(OrderedKip455TargetFirst(3, exact_rf=True), ReassignmentModel(Kip455TargetFirst(), ONE)).ok


# -- verdicts -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["kraft", "kraft-3.7", "kip455", "kip236", "zk"])
def test_the_order_property_is_proved_or_refuted_as_the_explorer_finds(profile, tmp_path):
    (res,) = [r for r in prove_reassignment(profile, max_brokers=4, properties=[PROP], out_dir=str(tmp_path))
              if r.property == PROP]
    if PROP in broken(profile):
        assert res.verdict == REFUTED and res.brokers == (3, 3)
        assert res.findings and set(res.findings) <= {"merged_order", "cancel_keeps_non_adding_replicas"}
        trace = read_trace(res.counterexample)
        assert trace.property == PROP and replay(trace).reproduces
    else:
        assert res.verdict == PROVED and res.brokers == (3, 4)


class Kip236RollbackInMergedOrder(Kip236Profile):
    """Mutated on purpose: the rollback restores the original replicas in the current (merged) order."""

    name = "kip236-rollback-merged-order"

    def rollback(self, state, topic, index):
        part = state.partition(topic, index)
        original = part.original if part.original is not None else part.origin
        merged = distinct(ordered_minus(part.replicas, tuple(b for b in part.replicas if b not in original)) + original)
        state = self.put(state, topic, index, replace(part, original=merged))
        return super().rollback(state, topic, index)


class Kip236MergedOrder(ordered(Kip236Encoding)):
    """The mutant's encoding: the rollback keeps the current order (originals it lost go last)."""

    def order_sources(self, s, a, t, lab, tgt):
        src = super().order_sources(s, a, t, lab, tgt)
        merged = concat(Lst(s.R, [s[f"R@{i}"] for i in range(self.n)]), src["R"])
        return {**src, "R": Lst(z3.If(a.k == CANCEL, merged.s, src["R"].s),
                                [z3.If(a.k == CANCEL, x, y) for x, y in zip(merged.rows, src["R"].rows)])}


def test_a_broken_variant_on_both_sides_agrees_and_is_refuted(tmp_path):
    mutant = Kip236RollbackInMergedOrder()
    assert differential(Kip236MergedOrder(3, exact_rf=True), ReassignmentModel(mutant, OVERRIDES)).ok
    assert not differential(_ordered("kip236"), ReassignmentModel(mutant, OVERRIDES), max_mismatches=1).ok
    (res,) = [r for r in prove_reassignment("kip236", max_brokers=4, properties=[PROP], out_dir=str(tmp_path),
                                            variant=(Kip236MergedOrder, mutant)) if r.property == PROP]
    assert res.verdict == REFUTED and res.brokers == (3, 3)
