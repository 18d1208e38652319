"""The z3 encodings of the reassignment profiles: tied to the reference, proofs, refutations.

The differential test is what makes a proof worth anything: on every state of a small
configuration, the encoding accepts exactly the reference's successor (up to the
documented list-order freedom) and nothing the reference rules out; a deliberately
mutated rule on either side makes it fail.
"""

from __future__ import annotations

import pytest
import z3
from kreassign.checker.models.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.z3.diff import differential
from kreassign.checker.z3.encoding import Bmc, houdini, mask, subset
from kreassign.checker.z3.profiles import encoding
from kreassign.checker.z3.prove import INVARIANT, PROVED, REFUTED, UNKNOWN, prove_reassignment
from kreassign.checker.z3.reassign import Kraft37Encoding, KraftEncoding
from kreassign.reference.kraft import KraftProfile
from kreassign.spec.findings import broken
from kreassign.spec.state import ordered_minus

#: small enough for the tests, large enough for every action: a request, an override, a cancel, a failure
SMALL = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1)


# -- the differential tie to the reference -----------------------------------------------------------


@pytest.mark.parametrize("profile", ["kraft", "kraft-3.7"])
def test_encoding_agrees_with_the_reference_on_every_state(profile):
    report = differential(encoding(profile, SMALL.brokers), ReassignmentModel(profile, SMALL))
    assert report.edges > 1000 and report.states > 500
    assert report.ok, "\n".join(map(str, report.mismatches))


def test_encoding_agrees_with_unclean_topics_elections_and_targets_of_any_size():
    bounds = Bounds(brokers=3, rf=2, targets=((1, 3), (1, 2, 3)), reassigns=2, cancels=1, failures=1,
                    unclean=True, elections=("PREFERRED", "UNCLEAN"))
    enc = encoding("kraft", 3, targets="any", elections=("PREFERRED", "UNCLEAN"))
    report = differential(enc, ReassignmentModel("kraft", bounds))
    assert report.edges > 500
    assert report.ok, "\n".join(map(str, report.mismatches))


class CompletesOnAddingOnly(KraftProfile):
    """Mutated on purpose: kraft with the 3.7 completion rule (only the adding replicas in the ISR)."""

    name = "mutated-completion"
    completion_rule = staticmethod(lambda r, i, adding: set(adding) <= set(i))


class RevertKeepsAdding(KraftProfile):
    """Mutated on purpose: a cancel keeps the adding replicas in the ISR."""

    name = "mutated-revert"

    def revert(self, part):
        return ordered_minus(part.replicas, part.adding), part.isr, False


@pytest.mark.parametrize("mutant", [CompletesOnAddingOnly(), RevertKeepsAdding()], ids=lambda m: m.name)
def test_a_mutated_reference_rule_fails_the_differential_test(mutant):
    report = differential(encoding("kraft", 3), ReassignmentModel(mutant, SMALL), max_mismatches=1)
    assert not report.ok
    assert report.mismatches[0].check == "rejects-reference"


def test_a_mutated_encoding_rule_fails_the_differential_test():
    # the other side: the kraft-3.7 encoding against the kraft reference
    report = differential(Kraft37Encoding(3), ReassignmentModel("kraft", SMALL), max_mismatches=1)
    assert not report.ok
    mismatch = report.mismatches[0]
    assert "Reassign" in mismatch.action or "Isr" in mismatch.action


def test_list_order_freedom_is_only_where_the_reference_follows_order():
    """From [1,2] leading 1, failing broker 1 elects 2: the only valid candidate, so no freedom; with
    replicas [1,2,3] in sync, failing 1 may elect 2 or 3 (the reference takes 2, the first)."""
    enc = KraftEncoding(3)
    s, a, t, lab = enc.state("s"), enc.action("a"), enc.state("t"), enc.label("l")
    solver = z3.Solver()
    solver.add(enc.trans(s, a, t, lab, "x"))
    base = {"AR": 0, "RR": 0, "L": 7, "LD": 1, "le": 0, "pe": 0, "unc": False, "rf": 2, "U": 7,
            "O": 0, "hO": False, "Q": 0, "hQ": False, "c": False}
    fail1 = [a.k == 4, a.b == 1, a.tgt == 0]
    leaders = set()
    for replicas in (0b011, 0b111):
        solver.push()
        solver.add(*[s[k] == v for k, v in {**base, "R": replicas, "I": replicas}.items()], *fail1)
        found = set()
        while solver.check() == z3.sat:
            ld = solver.model().eval(t.LD).as_long()
            found.add(ld)
            solver.add(t.LD != ld)
        solver.pop()
        leaders.add(frozenset(found))
    assert leaders == {frozenset({0b010}), frozenset({0b010, 0b100})}


# -- proofs --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [3, 4, 32])
def test_kraft_proofs_and_refutations_match_the_explorer(width, tmp_path):
    results = {r.property: r for r in prove_reassignment("kraft", max_brokers=width, out_dir=str(tmp_path))}
    assert results[INVARIANT].verdict == PROVED
    proved = {n for n, r in results.items() if r.verdict == PROVED} - {INVARIANT}
    refuted = {n for n, r in results.items() if r.verdict == REFUTED}
    assert proved == {"target_in_replicas", "original_in_replicas", "isr_in_replicas", "leader_in_isr",
                      "isr_non_empty", "epochs_monotone", "completion_reaches_target",
                      "admin_action_keeps_a_leader", "cancel_rejected_cleanly"}
    # every set-level violation the explorer finds, and nothing else
    assert refuted == set(broken("kraft")) & set(results) - {"cancel_restores_original_order", "committed_records_kept"}
    assert results["cancel_restores_original_order"].verdict == UNKNOWN
    for name in refuted:
        assert results[name].brokers == (3, 3)
        assert replay(read_trace(results[name].counterexample)).reproduces
    assert results["leader_in_isr"].brokers == (3, width)


def test_kraft_3_7_refutes_completion_and_proves_the_rest(tmp_path):
    results = {r.property: r for r in prove_reassignment("kraft-3.7", max_brokers=8, out_dir=str(tmp_path))}
    refuted = {n for n, r in results.items() if r.verdict == REFUTED}
    assert refuted == set(broken("kraft-3.7")) & set(results) - {"cancel_restores_original_order", "reassignment_can_finish",
                                                  "reassignment_can_finish_in_sync", "committed_records_kept"}
    trace = read_trace(results["completion_reaches_target"].counterexample)
    assert (trace.profile, trace.model, trace.engine) == ("kraft-3.7", "reassignment", "z3")
    assert replay(trace).reproduces
    assert results["isr_in_replicas"].verdict == PROVED


def test_targets_of_any_size_break_kraft_completion(tmp_path):
    """Beyond the explorer's bounds (its targets keep the replication factor): a request growing the
    target in flight completes onto fewer replicas than requested."""
    results = {r.property: r for r in prove_reassignment("kraft", max_brokers=8, targets="any",
                                                          properties=["completion_reaches_target"],
                                                          out_dir=str(tmp_path))}
    r = results["completion_reaches_target"]
    assert r.verdict == REFUTED and r.unexpected
    trace = read_trace(r.counterexample)
    assert replay(trace).reproduces
    sizes = {len(t) for t in trace.bounds["targets"]}
    assert len(sizes) > 1  # targets of different sizes


# -- a deliberately broken variant, on both sides, is refuted --------------------------------------------


class BrokenRevertEncoding(KraftEncoding):
    """The encoding of RevertKeepsAdding: the cancel keeps the ISR as it is."""

    profile = "kraft"

    def branches(self, s, a, tag):
        out = super().branches(s, a, tag)
        cancel = next(b for b in out if b.kind == 1)
        rep = s.R & ~s.AR
        ok = s.AR != 0
        ok = z3.Or(ok, s.RR != 0)
        post, cons = self.build(s, f"{tag}.bx", r=rep, i=s.I, ar=self.zero, rr=self.zero)
        cancel.post, cancel.acc, cancel.cons, cancel.guard = self._when(ok, post, s), ok, cons, z3.BoolVal(True)
        return out


def test_the_broken_variant_agrees_with_its_reference_and_is_refuted(tmp_path):
    mutant = RevertKeepsAdding()
    report = differential(BrokenRevertEncoding(3), ReassignmentModel(mutant, SMALL))
    assert report.ok, "\n".join(map(str, report.mismatches))
    results = {r.property: r for r in prove_reassignment(
        "kraft", max_brokers=4, properties=["isr_in_replicas", "leader_in_isr"], out_dir=str(tmp_path),
        variant=(BrokenRevertEncoding, mutant))}
    assert results["isr_in_replicas"].verdict == REFUTED
    assert results["leader_in_isr"].verdict == PROVED


# -- engine pieces -----------------------------------------------------------------------------------------


def test_houdini_drops_what_is_not_inductive():
    enc = KraftEncoding(4, epochs=False)
    from kreassign.checker.z3.encoding import Candidate

    cands = [Candidate("isr ⊆ replicas", lambda s: subset(s.I, s.R)),
             Candidate("adding ∩ removing = ∅", lambda s: s.AR & s.RR == 0),
             Candidate("never reassigning", lambda s: s.AR == 0)]
    h = houdini(enc, cands + enc.candidates(), enc.KINDS, pure_bv=True)
    assert "isr ⊆ replicas" in h.inductive
    assert h.dropped["never reassigning"] == "step" and h.dropped["adding ∩ removing = ∅"] == "step"


def test_bmc_finds_the_shortest_adding_removing_overlap():
    """With 3 brokers, replicas [1,2]: request [1,3], 2 leaves the ISR, request [1,2] (docs/findings.md)."""
    enc = KraftEncoding(3, exact_rf=True)
    bmc = Bmc(enc, init=enc.init_explorer)
    bad = [None] + [z3.Not(enc.state_properties()["adding_removing_disjoint"](bmc_s)) for bmc_s in
                    (bmc.unroll(3) or bmc.states[1:])]
    assert bmc.find(1, bad[1]) is None and bmc.find(2, bad[2]) is None
    model = bmc.find(3, bad[3], [bmc.states[0].rf == 2])
    assert model is not None
    kinds = [enc.read(enc.ACTION, model, a)["k"] for a in bmc.actions[:3]]
    assert kinds.count(0) == 2 and kinds[2] == 0  # a request overriding another
    assert enc.read(enc.STATE, model, bmc.states[0])["R"] == mask([1, 2])
