"""The z3 encodings of the reassignment profiles: tied to the reference, proofs, refutations.

The differential test is what makes a proof worth anything: on every state of a small
configuration, the encoding accepts exactly the reference's successor (up to the
documented list-order freedom) and nothing the reference rules out; a deliberately
mutated rule on either side makes it fail.
"""

from __future__ import annotations

import os

import pytest
import z3
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.z3.diff import differential
from kreassign.checker.z3.encoding import Bmc, houdini, mask, subset
from kreassign.checker.z3.profiles import encoding, kraft_encoding, reference_model
from kreassign.checker.z3.prove import INVARIANT, NOT_ENCODED, PROVED, REFUTED, prove_reassignment
from kreassign.checker.z3.reassign import Kraft37Encoding, KraftEncoding
from kreassign.reference.kraft import KraftProfile
from kreassign.reference.kraft_change import adding_replicas_in_isr, all_target_replicas_in_isr
from kreassign.spec import findings as F
from kreassign.spec.findings import broken, known_violation
from kreassign.spec.kafka_releases import NEWEST
from kreassign.spec.state import ordered_minus

#: small enough for the tests, large enough for every action: a request, an override, a cancel, a failure
SMALL = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1)
#: a release of the 3.8 - 4.2 completion rule (R' ⊆ I'), tied to its reference beside the encoded one (4.3+:
#: AR ⊆ I', and R' ⊆ I' only when the replication factor shrinks, KAFKA-19975): both are Kafka's
OLD = "3.9.2"


def test_the_encoding_follows_the_newest_release_with_elr_off():
    model = reference_model("kraft", SMALL)
    assert KraftEncoding.KAFKA_VERSION == NEWEST == "4.4.0"
    assert (model.profile.kafka_version, model.profile.elr) == (NEWEST, False)
    assert model.describe()["kafka_version"] == NEWEST and model.describe()["elr"] == "off"
    # whatever the bounds ask for: the reference of the encoding is what the encoding encodes
    asked = Bounds(brokers=3, rf=2, kafka_version=OLD, elr="on")
    assert reference_model("kraft", asked).profile.kafka_version == NEWEST
    old = reference_model("kraft", SMALL, OLD)
    assert (old.profile.kafka_version, old.profile.elr) == (OLD, False)
    assert kraft_encoding(OLD).KAFKA_VERSION == OLD


# -- the differential tie to the reference -----------------------------------------------------------


@pytest.mark.parametrize("profile,release", [("kraft", None), ("kraft", OLD), ("kraft-3.7", None)],
                         ids=["kraft", f"kraft@{OLD}", "kraft-3.7"])
def test_encoding_agrees_with_the_reference_on_every_state(profile, release):
    model = reference_model(profile, SMALL, release)
    assert not model.profile.elr
    report = differential(encoding(profile, SMALL.brokers, kafka_version=release), model)
    assert report.edges > 1000 and report.states > 500
    assert report.ok, "\n".join(map(str, report.mismatches))


@pytest.mark.parametrize("release", [None, OLD], ids=["newest", OLD])
def test_encoding_agrees_with_unclean_topics_elections_and_targets_of_any_size(release):
    """Targets of any size: at 4.3+ a move that shrinks the replication factor waits for every target."""
    bounds = Bounds(brokers=3, rf=2, targets=((1, 3), (1, 2, 3)), reassigns=2, cancels=1, failures=1,
                    unclean=True, elections=("PREFERRED", "UNCLEAN"))
    enc = encoding("kraft", 3, kafka_version=release, targets="any", elections=("PREFERRED", "UNCLEAN"))
    report = differential(enc, reference_model("kraft", bounds, release))
    assert report.edges > 500
    assert report.ok, "\n".join(map(str, report.mismatches))


def test_the_4_3_rule_is_3_7s_unless_the_replication_factor_shrinks():
    """KAFKA-19975's rule differs from 3.7's only when fewer replicas are added than removed: with targets
    keeping the replication factor (the explorer's default) the kraft-3.7 encoding cannot be told from
    the 4.4 reference; a shrinking target tells them apart (the tests above exercise the |AR| < |RR|
    branch)."""
    assert differential(Kraft37Encoding(3), reference_model("kraft", SMALL)).ok
    shrink = Bounds(brokers=3, rf=2, targets=((1, 3), (1, 2, 3)), reassigns=2, cancels=1, failures=1)
    report = differential(Kraft37Encoding(3, targets="any"), reference_model("kraft", shrink),
                          max_mismatches=1)
    assert not report.ok and "Reassign" in report.mismatches[0].action


class _AtRelease(KraftProfile):
    """A planted bug in kraft at a release, ELR off (what the encoding encodes), with that release's
    completion rule unless the mutant replaces it (KraftProfile picks 4.3's rule for "kraft" only)."""

    def __init__(self, kafka_version: str = NEWEST):
        super().__init__(kafka_version=kafka_version, elr=False)
        self.completion_rule = KraftProfile(kafka_version=kafka_version, elr=False).completion_rule


class CompletesOnAllTargets(_AtRelease):
    """Mutated on purpose: 4.4 with the 3.8 - 4.2 completion rule (every target replica in the ISR)."""

    name = "mutated-completion-all-targets"

    def __init__(self, kafka_version: str = NEWEST):
        super().__init__(kafka_version)
        self.completion_rule = all_target_replicas_in_isr


class CompletesOnAddingOnly(_AtRelease):
    """Mutated on purpose: 3.9 with the 3.7 completion rule (only the adding replicas in the ISR)."""

    name = "mutated-completion-adding-only"

    def __init__(self, kafka_version: str = OLD):
        super().__init__(kafka_version)
        self.completion_rule = adding_replicas_in_isr


class RevertKeepsAdding(_AtRelease):
    """Mutated on purpose: a cancel keeps the adding replicas in the ISR."""

    name = "mutated-revert"

    def revert(self, part):
        return ordered_minus(part.replicas, part.adding), part.isr, False


@pytest.mark.parametrize("mutant,release", [(CompletesOnAllTargets(), None), (RevertKeepsAdding(), None),
                                            (CompletesOnAddingOnly(OLD), OLD), (RevertKeepsAdding(OLD), OLD)],
                         ids=lambda x: getattr(x, "name", x or "newest"))
def test_a_mutated_reference_rule_fails_the_differential_test(mutant, release):
    assert (mutant.kafka_version, mutant.elr) == (release or NEWEST, False)
    report = differential(encoding("kraft", 3, kafka_version=release), ReassignmentModel(mutant, SMALL),
                          max_mismatches=1)
    assert not report.ok
    assert report.mismatches[0].check == "rejects-reference"


@pytest.mark.parametrize("enc_cls,release", [(kraft_encoding(OLD), None), (Kraft37Encoding, OLD)],
                         ids=[f"{OLD}-rule-vs-newest", f"3.7-rule-vs-{OLD}"])
def test_a_mutated_encoding_rule_fails_the_differential_test(enc_cls, release):
    # the other side: an encoding of another completion rule against the reference at `release`
    report = differential(enc_cls(3), reference_model("kraft", SMALL, release), max_mismatches=1)
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


#: kraft's verdicts at the newest release (4.4.0, ELR off), as the explorer finds them at those bounds
PROVED_NEWEST = {"target_in_replicas", "original_in_replicas", "isr_in_replicas", "leader_in_isr",
                 "isr_non_empty", "epochs_monotone", "admin_action_keeps_a_leader", "cancel_rejected_cleanly"}
REFUTED_NEWEST = {"adding_removing_disjoint", "replication_factor_bounded", "completion_reaches_target",
                  "cancel_restores_original_replicas", "replication_factor_restored", "cancel_restores_original_order",
                  "reassignment_can_finish", "reassignment_can_finish_in_sync"}  # liveness: stale_adding (4.3+)
LIVENESS = {"reassignment_can_finish", "reassignment_can_finish_in_sync"}


def _check_refutations(results, release):
    """Every refutation is a declared finding at `release` and its trace, re-executed by the explorer's
    model at that release with ELR off, records both and replays."""
    for name, r in results.items():
        assert r.kafka_version == release
        if r.verdict != REFUTED:
            continue
        assert r.brokers == (3, 3)
        assert known_violation("kraft", name, release) is not None and not r.unexpected
        declared = {f.name: f.trace_file("kraft") for f in F.FINDINGS
                    if f.property == name and f.occurs_in("kraft", release)}
        assert r.findings and r.known == declared[r.findings[0]]  # classified by the finding's signature
        trace = read_trace(r.counterexample)
        assert (trace.bounds["kafka_version"], trace.bounds["elr"]) == (release, "off")
        assert replay(trace).reproduces


@pytest.mark.parametrize("width", [3, 4, 32])
def test_kraft_proofs_and_refutations_match_the_explorer(width, tmp_path):
    results = {r.property: r for r in prove_reassignment("kraft", max_brokers=width, out_dir=str(tmp_path))}
    assert results[INVARIANT].verdict == PROVED
    assert results[INVARIANT].note.startswith(f"Kafka {NEWEST} rules, ELR not encoded")
    proved = {n for n, r in results.items() if r.verdict == PROVED} - {INVARIANT}
    refuted = {n for n, r in results.items() if r.verdict == REFUTED}
    assert proved == PROVED_NEWEST
    assert refuted == REFUTED_NEWEST
    # every set-level violation the explorer finds at the release, and nothing else
    assert refuted == set(broken("kraft", NEWEST)) & set(results) - set(NOT_ENCODED)
    assert results["cancel_restores_original_order"].findings == ("merged_order",)  # list order (order.py)
    _check_refutations(results, NEWEST)
    assert results["leader_in_isr"].brokers == (3, width)


def test_kraft_at_3_9_proves_completion(tmp_path):
    """The 3.8 - 4.2 rule (R' ⊆ I') completes onto a target in sync: completion_reaches_target is proved
    there, and refuted from 4.3 on (completion_ignores_non_adding_target); the rest is the same."""
    results = {r.property: r for r in prove_reassignment("kraft", kafka_version=OLD, max_brokers=4,
                                                          out_dir=str(tmp_path))}
    assert results[INVARIANT].note.startswith(f"Kafka {OLD} rules, ELR not encoded")
    proved = {n for n, r in results.items() if r.verdict == PROVED} - {INVARIANT}
    refuted = {n for n, r in results.items() if r.verdict == REFUTED}
    assert proved == PROVED_NEWEST | {"completion_reaches_target"} | LIVENESS  # ranking (liveness.py)
    assert refuted == REFUTED_NEWEST - {"completion_reaches_target"} - LIVENESS
    # growing_override_drops_requested needs targets of another size than the RF (--targets any)
    assert refuted == set(broken("kraft", OLD)) & set(results) - set(NOT_ENCODED) - {"completion_reaches_target"}
    _check_refutations(results, OLD)
    assert os.path.exists(tmp_path / f"kraft@{OLD}__adding_removing_disjoint.z3.json")


def test_kraft_3_7_refutes_completion_and_proves_the_rest(tmp_path):
    results = {r.property: r for r in prove_reassignment("kraft-3.7", max_brokers=8, out_dir=str(tmp_path))}
    refuted = {n for n, r in results.items() if r.verdict == REFUTED}
    assert refuted == set(broken("kraft-3.7")) & set(results) - {"committed_records_kept"}
    trace = read_trace(results["completion_reaches_target"].counterexample)
    assert (trace.profile, trace.model, trace.engine) == ("kraft-3.7", "reassignment", "z3")
    assert replay(trace).reproduces
    assert results["isr_in_replicas"].verdict == PROVED
    assert all(r.kafka_version is None for r in results.values())


@pytest.mark.parametrize("release", [OLD, None], ids=[OLD, "newest"])
def test_targets_of_any_size_break_kraft_completion(release, tmp_path):
    """Beyond the explorer's bounds (its targets keep the replication factor): a request growing the target in
    flight completes onto fewer replicas than requested: the declared finding growing_override_drops_requested,
    at 3.9 as at the newest release."""
    results = {r.property: r for r in prove_reassignment("kraft", max_brokers=8, targets="any",
                                                          properties=["completion_reaches_target"],
                                                          out_dir=str(tmp_path), kafka_version=release)}
    r = results["completion_reaches_target"]
    # at 3.9 only this finding; from 4.3 z3 may also pick a retained replica out of the ISR (declared too)
    expected = {"growing_override_drops_requested"} | ({"completion_ignores_non_adding_target"} if release is None else set())
    assert r.verdict == REFUTED and not r.unexpected and len(r.findings) == 1 and set(r.findings) <= expected
    trace = read_trace(r.counterexample)
    assert trace.bounds["kafka_version"] == (release or NEWEST)
    assert replay(trace).reproduces
    if release == OLD:
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
    mutant = RevertKeepsAdding()  # at the release BrokenRevertEncoding encodes, ELR off
    report = differential(BrokenRevertEncoding(3), ReassignmentModel(mutant, SMALL))
    assert report.ok, "\n".join(map(str, report.mismatches))
    results = {r.property: r for r in prove_reassignment(
        "kraft", max_brokers=4, properties=["isr_in_replicas", "leader_in_isr"], out_dir=str(tmp_path),
        variant=(BrokenRevertEncoding, mutant))}
    assert results["isr_in_replicas"].verdict == REFUTED
    assert results["leader_in_isr"].verdict == PROVED
    assert results["isr_in_replicas"].kafka_version == NEWEST


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


@pytest.mark.parametrize("release,shortest", [(None, 2), (OLD, 3)], ids=["newest", OLD])
def test_bmc_finds_the_shortest_adding_removing_overlap(release, shortest):
    """With 3 brokers, replicas [1,2]: request [2,3], then request [1,2] (4.3+: the override completes only
    when its adding replica 3 is in the ISR, so 3 stays adding and removing); before 4.3, where the override
    completes once [1,2] is in sync: request [1,3], 2 leaves the ISR, request [1,2] (docs/findings.md)."""
    enc = encoding("kraft", 3, kafka_version=release, exact_rf=True)
    bmc = Bmc(enc, init=enc.init_explorer)
    bmc.unroll(shortest)
    overlap = enc.state_properties()["adding_removing_disjoint"]
    bad = [None] + [z3.Not(overlap(bmc_s)) for bmc_s in bmc.states[1:]]
    assert all(bmc.find(d, bad[d]) is None for d in range(1, shortest))
    model = bmc.find(shortest, bad[shortest], [bmc.states[0].rf == 2])
    assert model is not None
    kinds = [enc.read(enc.ACTION, model, a)["k"] for a in bmc.actions[:shortest]]
    assert kinds.count(0) == 2 and kinds[-1] == 0  # a request overriding another
    assert enc.read(enc.STATE, model, bmc.states[0])["R"] == mask([1, 2])
