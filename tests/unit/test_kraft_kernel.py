"""The kraft kernel (checker/packed/kraft_kernel.py) against the reference, situation by situation.

The kernel is a second encoding of the kraft profiles' local step, so the architecture asks for a
differential test: every local situation a packed search asks about, in every budget group, is
answered by the kernel and by the reference (`reference_compute`) and the answers must say the same
(`same_answers`: the same actions at the same ranks, successors, brokers, property and signature
bits). Whole runs must give the same counts and verdicts with the kernel on and off. The kernel must
stand aside wherever it was not compared, and a kernel broken on purpose must be caught both by the
differential comparison and by the spot checks a search runs (`CHECK_EVERY`).

The kraft profile follows a Kafka release (reference/kraft.py): the kernels serve its two rule sets
with ELR off, so every comparison runs at both — the 3.8-4.2 rule (`OLD`, 3.9.2: every target
replica in the ISR), where the expectations below were measured, and the 4.3+ rule (`NEW`, 4.4.0
with ELR off: the adding replicas in the ISR, every target only when the replication factor shrinks,
KAFKA-19975). With ELR on (4.4.0's default) the kernels decline and the reference answers.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.check.run import (
    _NotThisFinding,
    engine_properties,
    model_release,
    reassignment_factory,
)
from kreassign.checker.config.bounds import bounds_from_mapping
from kreassign.checker.packed import kernel_scope
from kreassign.checker.packed import kraft_kernel as K
from kreassign.checker.packed.bfs import explore_packed
from kreassign.checker.packed.kernel_scope import KERNEL_SCOPE, kernel_refusal
from kreassign.checker.packed.kraft_kernel import KernelMismatch, KraftKernel, same_answers
from kreassign.checker.packed.reassignment import PackedReassignment, packable
from kreassign.reference.kraft import Kraft37Profile, KraftProfile
from kreassign.spec import findings as F
from kreassign.spec.reassign_properties import Ending
from kreassign.spec.state import NO_LEADER, Partition
from test_property_mutants import MUTANTS, planted  # the real profile with every step through a corruption

PRE_36 = "3.5-IV2"  # a metadata.version before 3.6-IV0: the leader epoch is bumped on an ISR shrink
assert KraftProfile(metadata_version=PRE_36).bump_leader_epoch_on_isr_shrink  # (the configs below rely on it)

#: the kraft profile's two rule sets the kernels serve (ELR off): 3.8-4.2 and 4.3+ (KAFKA-19975)
OLD, NEW = "3.9.2", "4.4.0"
assert KraftProfile(kafka_version=OLD).completion_rule is not KraftProfile(kafka_version=NEW).completion_rule
assert not KraftProfile(kafka_version=OLD).elr and KraftProfile(kafka_version=NEW).elr  # NEW's default: ELR
AT_OLD = {"kafka_version": OLD}
AT_NEW = {"kafka_version": NEW, "elr": "off"}

#: (id, profile name or object, bounds); together: both profiles, RF 1-3, 3-4 brokers, one or two
#: reassigns, a cancel, one or two failures, a failover, unclean topics, no ISR changes, two
#: partitions, the pre-3.6 epoch bump, targets "all" and "permutations"; the kraft ones at the 3.8-4.2
#: rule (OLD) and again at the 4.3+ rule (NEW, ELR off)
CONFIGS = [
    ("kraft-rf1", "kraft", {"brokers": 3, "rf": 1, "reassigns": 2, "cancels": 1, "failures": 1, **AT_OLD}),
    ("kraft-rf1-unclean", "kraft",
     {"brokers": 3, "rf": 1, "reassigns": 2, "cancels": 1, "failures": 1, "unclean": True, **AT_OLD}),
    ("kraft37-rf2-perm", "kraft-3.7",
     {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, "targets": "permutations"}),
    ("kraft37-b4-rf2", "kraft-3.7", {"brokers": 4, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1}),
    ("kraft-b4-rf3-failover", "kraft",
     {"brokers": 4, "rf": 3, "reassigns": 1, "cancels": 1, "failures": 2, "failovers": 1, **AT_OLD}),
    ("kraft-unclean-perm", "kraft",
     {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 2, "unclean": True,
      "targets": "permutations", **AT_OLD}),
    ("kraft37-no-isr-changes", "kraft-3.7",
     {"brokers": 4, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, "isr_changes": False}),
    ("kraft-2-partitions", "kraft",
     {"brokers": 3, "rf": 2, "reassigns": 1, "cancels": 1, "failures": 1, "partitions": 2, **AT_OLD}),
    ("kraft-pre36-perm", KraftProfile(kafka_version=OLD, metadata_version=PRE_36),
     {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, "targets": "permutations"}),
    ("kraft37-pre36-rf3-unclean", Kraft37Profile(metadata_version=PRE_36),
     {"brokers": 4, "rf": 3, "reassigns": 2, "cancels": 1, "failures": 2, "unclean": True}),
    ("kraft-b4-rf2", "kraft", {"brokers": 4, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, **AT_OLD}),
    # ELR on (KIP-966, the newest release's default; 4.0 with its older last-known-leader rule), min ISR 1:
    # failures empty the ISR, the ELR and last known leader are written and elected from
    ("kraft44-elr-b3-f2", "kraft", {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 2}),
    ("kraft44-elr-rf1-unclean", "kraft",
     {"brokers": 3, "rf": 1, "reassigns": 2, "cancels": 1, "failures": 2, "unclean": True}),
    ("kraft40-elr-b3-f2", "kraft",
     {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 2, "kafka_version": "4.0.2", "elr": "on"}),
    # the 4.3+ completion rule (KAFKA-19975), ELR off
    ("kraft44-rf1", "kraft", {"brokers": 3, "rf": 1, "reassigns": 2, "cancels": 1, "failures": 1, **AT_NEW}),
    ("kraft44-rf1-unclean", "kraft",
     {"brokers": 3, "rf": 1, "reassigns": 2, "cancels": 1, "failures": 1, "unclean": True, **AT_NEW}),
    ("kraft44-b4-rf2", "kraft",
     {"brokers": 4, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, **AT_NEW}),
    ("kraft44-b4-rf3-failover", "kraft",
     {"brokers": 4, "rf": 3, "reassigns": 1, "cancels": 1, "failures": 2, "failovers": 1, **AT_NEW}),
    ("kraft44-unclean-perm", "kraft",
     {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 2, "unclean": True,
      "targets": "permutations", **AT_NEW}),
    ("kraft44-no-isr-changes", "kraft",
     {"brokers": 4, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, "isr_changes": False, **AT_NEW}),
    ("kraft44-2-partitions", "kraft",
     {"brokers": 3, "rf": 2, "reassigns": 1, "cancels": 1, "failures": 1, "partitions": 2, **AT_NEW}),
    ("kraft44-pre36-perm", KraftProfile(kafka_version=NEW, metadata_version=PRE_36, elr=False),
     {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, "targets": "permutations"}),
]
CONFIG = {c[0]: c[1:] for c in CONFIGS}


def _model(profile, mapping):
    """The model with the engine's properties as check/run.py hands them (split by findings), so the
    kernel is asked the findings' signatures too, not only the base properties."""
    model = reassignment_factory(profile, bounds_from_mapping(mapping))
    props = engine_properties(list(model.properties()), model.profile.name, model_release(model))
    model.properties = lambda: props
    return model


def _scalar(packed):
    """The packed model with the scalar kernel answering every situation (the vector kernel off:
    tests/unit/test_kraft_vector.py compares that one)."""
    packed.vector = None
    return packed


def _explore_recording(model):
    """Explore on the packed path; every (group, local, env) it computed, in order."""
    packed = _scalar(PackedReassignment(model, workers=1))
    asked = []
    compute = packed.compute

    def recording(group, local, env):
        asked.append((group, local, env))
        return compute(group, local, env)

    packed.compute = recording
    result = explore_packed(packed, liveness=False)
    return packed, asked, result


def _mismatches(packed, asked):
    """The situations where the kernel's answer and the reference's differ: (key, kernel's, reference's)."""
    out = []
    for key in asked:
        mine, theirs = packed.kernel.compute(*key), packed.reference_compute(*key, cache=False)
        if not same_answers(packed, mine, theirs):
            out.append((key, mine, theirs))
    return out


def _describe(packed, bad):
    (group, local, env), mine, theirs = bad[0]
    part, ghost = packed.locals[local]
    return (f"{len(bad)} mismatches; first: group {group}, {part}, {ghost}, brokers {packed.envs[env]}\n"
            f"kernel:    {mine}\nreference: {theirs}")


# -- 1. the differential comparison ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(CONFIG))
def test_kernel_answers_every_situation_like_the_reference(name):
    profile, mapping = CONFIG[name]
    packed, asked, result = _explore_recording(_model(profile, mapping))
    assert packed.kernel is not None, kernel_refusal(packed)
    assert result.complete
    # every situation was asked once, and answered by the kernel (not by the reference)
    assert len(asked) == len(set(asked)) == packed.table_rows
    assert packed.kernel.answered == len(asked)
    assert 50 < len(asked) <= 5 * result.states
    # every budget group the bounds allow was asked (0: free, 1 Reassign, 2 Cancel, 3 BrokerFail, 4 failover)
    want = {0, 1, 2, 3} | ({4} if mapping.get("failovers") else set())
    assert {g for g, _, _ in asked} == want
    bad = _mismatches(packed, asked)
    assert not bad, _describe(packed, bad)


def test_a_kernel_that_drops_the_elr_fields_fails_the_comparison(monkeypatch):
    """With ELR on the kernel must carry the partition's ELR and last known leader into the partition after:
    a kernel that builds it without them (the mistake a restatement makes first) is caught."""
    packed, asked, _ = _explore_recording(_model(*CONFIG["kraft44-elr-b3-f2"]))
    assert not _mismatches(packed, asked)
    assert any(part.elr for part, _ in packed.locals) and any(part.last_known_elr for part, _ in packed.locals)

    def without_elr(*args, **kw):
        return Partition(*args)

    monkeypatch.setattr(K, "Partition", without_elr)
    packed, asked, _ = _explore_recording(_model(*CONFIG["kraft44-elr-b3-f2"]))
    assert _mismatches(packed, asked)


@pytest.mark.parametrize("name", ["kraft37-b4-rf2", "kraft44-b4-rf2"])
def test_the_comparison_covers_actions_and_violations(name):
    """The answers compared are not trivial: rows of every action kind, and property bits that fail."""
    packed, asked, result = _explore_recording(_model(*CONFIG[name]))
    assert not _mismatches(packed, asked)
    kinds = {type(packed.codes[a] if type(a) is int else a).__name__
             for key in asked for _, a, _, _, _ in packed.kernel.compute(*key)[0]}
    assert kinds >= {"Reassign", "Cancel", "LeaderExpandIsr", "LeaderShrinkIsr", "BrokerFail", "BrokerRecover"}
    # findings occur here (kraft-3.7, and kraft from 4.3: a completion with a retained target out of the ISR):
    # some bits the kernel computes are off on some situations
    assert any("::" in n for n in result.violations)


@pytest.mark.parametrize("release", [OLD, NEW])
def test_edge_predicates_agree_where_a_broken_rule_makes_them_fail(release):
    """On the real profiles some edge properties never fail; a subclass whose Reassign drops the leader
    makes admin_action_keeps_a_leader fail, and the kernel (forced: it stands aside for subclasses) must
    still agree with the reference there (at both rule sets, ELR off)."""

    class DropsLeader(KraftProfile):
        def change_reassignment(self, state, part, target, *more):
            rec = super().change_reassignment(state, part, target, *more)
            return {**rec, "leader": NO_LEADER} if rec else rec

    packed, asked, result = _explore_recording(
        _model(DropsLeader(kafka_version=release, elr=False),
               {"brokers": 3, "rf": 2, "reassigns": 1, "cancels": 1, "failures": 1}))
    assert packed.kernel is None
    assert "admin_action_keeps_a_leader" in result.violations  # the rule's failure is reachable
    packed.kernel = KraftKernel(packed)
    bad = _mismatches(packed, asked)
    assert not bad, _describe(packed, bad)


# -- whole runs, kernel on and off ----------------------------------------------------------------


def _summary(result):
    return {"states": result.states, "transitions": result.transitions, "depth": result.depth,
            "complete": result.complete, "per_action_edges": result.per_action_edges,
            "table_rows": result.table_rows, "reference_calls": result.reference_calls,
            "violations": {n: len(v.path) for n, v in result.violations.items()},
            "stuck": {n: len(s) for n, s in result.stuck.items()}}


@pytest.mark.parametrize("name", ["kraft37-b4-rf2", "kraft-b4-rf3-failover", "kraft-pre36-perm",
                                  "kraft44-b4-rf2", "kraft44-b4-rf3-failover"])
def test_whole_runs_agree_with_the_kernel_on_and_off(name):
    profile, mapping = CONFIG[name]
    on = PackedReassignment(_model(profile, mapping), workers=1)
    assert on.kernel is not None
    with_kernel = _summary(explore_packed(on, liveness=True))
    off = PackedReassignment(_model(profile, mapping), workers=1, kernel=False)  # check --no-kernel
    assert off.kernel is None
    without = _summary(explore_packed(off, liveness=True))
    assert with_kernel == without
    assert with_kernel["violations"]  # findings occur in each: the verdicts compared are not all empty


# -- 2. where the kernel stands aside -------------------------------------------------------------


ELR_REASON = "eligible leader replicas (ELR) with min.insync.replicas above 1"


class KraftVariant(KraftProfile):
    """A subclass (as a test's variant would be): not the class the kernel was compared on."""


class Kraft37Variant(Kraft37Profile):
    pass


def _with_always_check_replaced(packed):
    packed.always_checks = [(lambda ms, _p=pred: _p(ms), m) for pred, m in packed.always_checks]


def _with_edge_check_replaced(packed):
    packed.edge_checks = [(lambda *x, _p=pred: _p(*x), m) for pred, m in packed.edge_checks]


def _with_own_signature():
    """A finding split off a property with a signature the kernel does not implement (a wrapper of a
    real one: the same meaning, but the kernel cannot know that)."""
    model = reassignment_factory("kraft", bounds_from_mapping(AT_OLD))
    props = list(model.properties())
    base = next(p for p in props if p.name == "adding_removing_disjoint")
    props.append(replace(base, name=base.name + "::mine",
                         predicate=_NotThisFinding(base.predicate, lambda ms: F.stale_adding_replica(ms))))
    model.properties = lambda: props
    return model


def _kraft(mapping):
    """The kraft model at the bounds `mapping`, at OLD (ELR off): each case below stands aside for its own
    reason, not for ELR (its own case)."""
    return reassignment_factory("kraft", bounds_from_mapping({**AT_OLD, **mapping}))


#: case -> (the model, a patch of the packed model or None, the reason `kernel_refusal` gives)
APART = {
    "subclass": (lambda: reassignment_factory(KraftVariant(kafka_version=OLD), bounds_from_mapping({})), None,
                 "profile class KraftVariant"),
    "subclass-3.7": (lambda: reassignment_factory(Kraft37Variant(), bounds_from_mapping({})), None,
                     "profile class Kraft37Variant"),
    "kip455": (lambda: reassignment_factory("kip455", bounds_from_mapping({})), None, "profile class"),
    "elections": (lambda: _kraft({"elections": ["PREFERRED"]}), None, "bound elections"),
    "replication": (lambda: _kraft({"replication": True}), None, "a partition with a log (the replication layer)"),
    "znode": (lambda: _kraft({"znode": True}), None, "admin requests other than Reassigns, then Cancels"),
    "controller-actions": (lambda: reassignment_factory(KraftProfile(kafka_version=OLD,
                                                                     controller_actions=("restart",)),
                                                        bounds_from_mapping({})),
                           None, "the controller's own actions"),
    "own-signature": (_with_own_signature, None, "state predicate"),
    "always-check-replaced": (lambda: _kraft({}), _with_always_check_replaced, "state predicate"),
    "edge-check-replaced": (lambda: _kraft({}), _with_edge_check_replaced, "edge predicate"),
    # test_property_mutants.planted: a copy of the real profile whose `apply` is patched on the instance;
    # its class is still KraftProfile, but its steps are not the class's rules
    "planted-step": (lambda: reassignment_factory(planted("kraft", MUTANTS["leader_in_isr"]),
                                                  bounds_from_mapping({})),
                     None, "profile methods replaced on the instance: apply"),
    # eligible leader replicas (KIP-966) with a min ISR above 1: it depends on partition 0, which a one-partition
    # situation does not see (with the default 1 the kernel answers: CONFIGS' ELR cases compare it)
    "elr-min-isr-2": (lambda: reassignment_factory("kraft", bounds_from_mapping({"min_insync": 2})), None, ELR_REASON),
    "elr-4.0-min-isr-2": (lambda: reassignment_factory("kraft", bounds_from_mapping(
        {"kafka_version": "4.0.2", "elr": "on", "min_insync": 2})), None, ELR_REASON),
}


@pytest.mark.parametrize("case", list(APART))
def test_kernel_stands_aside_where_it_was_not_compared(case):
    build, patch, why = APART[case]
    model = build()
    if not packable(model):
        pytest.skip("not packable: no packed path, so no kernel either")
    packed = PackedReassignment(model, workers=1)
    if patch is None:
        assert packed.kernel is None and packed.vector is None
    else:
        patch(packed)
    reason = kernel_refusal(packed)
    assert isinstance(reason, str) and reason, f"{case}: the kernel would answer instead of the reference"
    assert reason.startswith(why), reason  # for its own reason (not one another case shows)


def test_kernel_applies_to_the_plain_profiles_and_the_switch_turns_it_off():
    """The contrast to the cases above (so they can fail), at every release with ELR off, and the
    switch (`kernel=False`: check --no-kernel, EngineOptions(kernel=False))."""
    from kreassign.spec.kafka_releases import RELEASES

    plain = {"failovers": 1, "unclean": True}
    cases = [("kraft", {**plain, "kafka_version": r.version, "elr": "off"}) for r in RELEASES]
    cases += [("kraft-3.7", plain), (KraftProfile(kafka_version=OLD, metadata_version=PRE_36), plain),
              (KraftProfile(kafka_version=NEW, metadata_version=PRE_36, elr=False), plain)]
    for profile, mapping in cases:
        packed = PackedReassignment(_model(profile, mapping), workers=1)
        assert kernel_refusal(packed) is None, (profile, mapping)
        assert isinstance(packed.kernel, KraftKernel)
    assert PackedReassignment(_model("kraft", AT_OLD), workers=1, kernel=False).kernel is None


#: ELR on (4.4.0's default) where it changes the answers: min.insync.replicas 2 with RF 2, so an ISR
#: shrink leaves the leaver eligible (its ELR), and a failure can empty the ISR
ELR_ON = {"brokers": 3, "rf": 2, "reassigns": 1, "cancels": 1, "failures": 2, "min_insync": 2}


def test_the_kernels_decline_elr_above_min_isr_1_and_the_reference_answers_like_the_object_engine():
    """With eligible leader replicas on and min.insync.replicas 2 neither kernel answers (the min ISR depends on
    partition 0): every situation is tabulated from the reference, and the whole run (counts, depth, violations
    and their lengths) is the object engine's."""
    from kreassign.checker.explore.bfs import explore

    model = _model("kraft", ELR_ON)
    assert model.profile.kafka_version == NEW and model.profile.elr
    packed = PackedReassignment(model, workers=1)
    assert kernel_refusal(packed) == ELR_REASON
    assert packed.kernel is None and packed.vector is None
    result = explore_packed(packed, liveness=False)
    assert result.complete and result.table_rows > 0
    assert packed.answers["kernel"] == packed.answers["vector"] == 0 < packed.answers["reference"]
    assert packed.kernel_checks == 0
    whole = explore(model)
    assert whole.complete
    assert (result.states, result.transitions, result.depth) == (whole.states, whole.transitions, whole.depth)
    assert ({n: len(v.path) for n, v in result.violations.items()}
            == {n: len(v.path) for n, v in whole.violations.items()})
    # ELR did matter here: partitions with eligible leader replicas, and a last known leader, were reached
    assert any(part.elr for part, _ in packed.locals)
    assert any(part.last_known_elr for part, _ in packed.locals)


# -- the declared scope (checker/packed/kernel_scope.py): each entry matters ------------------------------


SMALL = {**AT_OLD, "brokers": 3, "rf": 2, "reassigns": 1, "cancels": 1, "failures": 1}


def _scoped(monkeypatch, **narrowed):
    """KERNEL_SCOPE with some entries replaced (the kernels read it when they are built)."""
    monkeypatch.setattr(kernel_scope, "KERNEL_SCOPE", replace(kernel_scope.KERNEL_SCOPE, **narrowed))


def _goes_to_the_reference(model):
    """`model` is tabulated by the reference alone (neither kernel is built, no answer comes from one)."""
    packed = PackedReassignment(model, workers=1)
    assert packed.kernel is None and packed.vector is None
    assert explore_packed(packed, liveness=False).complete
    assert packed.answers["kernel"] == packed.answers["vector"] == 0 < packed.answers["reference"]


@pytest.mark.parametrize("bound", KERNEL_SCOPE.bounds_off)
def test_each_bound_the_scope_excludes_matters(bound, monkeypatch):
    """A bound in KERNEL_SCOPE.bounds_off sends the model to the reference; without the entry the kernel would be
    built and answer otherwise than the reference (or could not be built at all)."""
    mapping = {**SMALL, bound: {"elections": ["PREFERRED"]}.get(bound, True)}
    assert kernel_refusal(PackedReassignment(_model("kraft", mapping), workers=1)) == f"bound {bound}"
    _goes_to_the_reference(_model("kraft", mapping))
    _scoped(monkeypatch, bounds_off=tuple(b for b in KERNEL_SCOPE.bounds_off if b != bound))
    try:
        packed = _scalar(PackedReassignment(_model("kraft", mapping), workers=1))
    except ValueError:
        return  # the kernel cannot even be built for it
    assert packed.kernel is not None
    packed.kernel.check_every = 1 << 62  # no spot checks: the comparison below must find it
    asked, compute = [], packed.compute
    packed.compute = lambda *key: (asked.append(key), compute(*key))[1]
    try:
        explore_packed(packed, liveness=False)
    except (KeyError, ValueError, AttributeError):
        return  # the kernel fails on what it was not written for
    assert _mismatches(packed, asked)


@pytest.mark.parametrize("entry", ["releases", "completion_rules", "profile_classes"])
def test_a_release_rule_or_class_outside_the_scope_goes_to_the_reference(entry, monkeypatch):
    """The releases, completion rules and profile classes the kernels were compared on are data: narrowed to leave
    out Kafka 3.9's (its completion rule, KraftProfile), the same model goes to the reference."""
    profile = KraftProfile(kafka_version=OLD)
    assert kernel_refusal(PackedReassignment(_model(profile, SMALL), workers=1)) is None  # the contrast
    left_out = {"releases": OLD, "completion_rules": profile.completion_rule, "profile_classes": KraftProfile}[entry]
    _scoped(monkeypatch, **{entry: tuple(x for x in getattr(KERNEL_SCOPE, entry) if x != left_out)})
    reason = kernel_refusal(PackedReassignment(_model(profile, SMALL), workers=1))
    assert reason == {"releases": f"Kafka release {OLD}", "completion_rules": "completion rule all_target_replicas_in_isr",
                      "profile_classes": "profile class KraftProfile"}[entry]
    _goes_to_the_reference(_model(profile, SMALL))


def test_a_clause_on_the_whole_edge_the_scope_does_not_list_goes_to_the_reference(monkeypatch):
    """cancel_rejected_cleanly has a clause on the whole edge (spec/per_partition.PartitionForm.clause) the kernels
    leave out, listed in KERNEL_SCOPE.clauses; without the entry, a model that checks it goes to the reference."""
    profile = KraftProfile(kafka_version=OLD)
    assert kernel_refusal(PackedReassignment(_model(profile, SMALL), workers=1)) is None  # the contrast
    _scoped(monkeypatch, clauses=())
    reason = kernel_refusal(PackedReassignment(_model(profile, SMALL), workers=1))
    assert reason == "edge predicate cancel_rejected_cleanly has a clause on the whole edge (rejected_cancel_left_the_rest)"
    _goes_to_the_reference(_model(profile, SMALL))


def test_the_scope_lists_every_release_and_completion_rule_the_profiles_follow():
    """A release added to spec/kafka_releases.py (or a completion rule to reference/kraft_change.py) is outside
    the scope until the kernels are compared on it: the list is the releases, and the rules the releases pick."""
    from kreassign.spec.kafka_releases import RELEASES

    assert KERNEL_SCOPE.releases == tuple(r.version for r in RELEASES)
    rules = {KraftProfile(kafka_version=r.version, elr=False).completion_rule for r in RELEASES}
    assert rules | {Kraft37Profile().completion_rule} == set(KERNEL_SCOPE.completion_rules)


# -- 3. a broken kernel is caught -----------------------------------------------------------------


def _shrink_as_expand(monkeypatch):
    # the shrink writes the expansion's record (re-adding a broker already in the ISR: rejected, no change)
    monkeypatch.setattr(KraftKernel, "_shrink", KraftKernel._expand)


def _endings_unasked(monkeypatch):
    # the checks in scope on an edge that ends a reassignment taken as those of one that ends nothing: blind to
    # the merged order a kraft cancel leaves
    asked = KraftKernel.asked
    monkeypatch.setattr(KraftKernel, "asked", lambda self, kind, ended: asked(self, kind, False))


def _every_ending_completed(monkeypatch):
    # the ghost update forgets that a cancel ended the reassignment: every ending a completion
    monkeypatch.setattr(K, "Ending", lambda index, kind, original, requested: Ending(index, "completed", original,
                                                                                    requested))


def _epochs_unmoved(monkeypatch):
    # the partition's part of an edge built without the record's epoch bumps
    def edge(cls, fields):
        return tuple.__new__(cls, (*fields[:4], 0, 0, *fields[6:]))

    monkeypatch.setattr(K, "_new_edge", edge)


def _state_bits_swapped(monkeypatch):
    # two state checks' bits swapped: adding_removing_disjoint (kraft breaks it) answered in the place of
    # target_in_replicas (kraft keeps it), and the other way round
    init = KraftKernel.__init__

    def swapped(self, packed):
        init(self, packed)
        at = [c[0].__name__ for c in self._state]
        i, j = at.index("target_in_replicas_at"), at.index("adding_removing_disjoint_at")
        (a, ma, sa), (b, mb, sb) = self._state[i], self._state[j]
        self._state[i], self._state[j] = (a, mb, sa), (b, ma, sb)

    monkeypatch.setattr(KraftKernel, "__init__", swapped)


BROKEN = {"rule-shrink": _shrink_as_expand, "edge-scope": _endings_unasked, "ghost-ending": _every_ending_completed,
          "edge-epochs": _epochs_unmoved, "state-bits": _state_bits_swapped}
BROKEN_ON = {"profile": "kraft",
             "mapping": {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1, **AT_OLD}}


@pytest.mark.parametrize("bug", list(BROKEN))
def test_a_broken_kernel_fails_the_differential_comparison(bug, monkeypatch):
    BROKEN[bug](monkeypatch)  # before construction: the kernel reads its rules and predicates then
    packed, asked, _ = _explore_recording(_model(BROKEN_ON["profile"], BROKEN_ON["mapping"]))
    assert packed.kernel is not None
    assert _mismatches(packed, asked)


@pytest.mark.parametrize("bug", list(BROKEN))
def test_a_broken_kernel_is_caught_by_the_spot_checks(bug, monkeypatch):
    BROKEN[bug](monkeypatch)
    monkeypatch.setattr(K, "CHECK_EVERY", 1)
    packed = _scalar(PackedReassignment(_model(BROKEN_ON["profile"], BROKEN_ON["mapping"]), workers=1))
    assert packed.kernel.check_every == 1
    with pytest.raises(KernelMismatch):
        explore_packed(packed, liveness=False)


def test_the_spot_checks_pass_a_correct_kernel(monkeypatch):
    """The contrast to the above: with every row checked, the real kernel runs to the end."""
    monkeypatch.setattr(K, "CHECK_EVERY", 1)
    packed = _scalar(PackedReassignment(_model(BROKEN_ON["profile"], BROKEN_ON["mapping"]), workers=1))
    result = explore_packed(packed, liveness=False)
    assert result.complete
    assert packed.kernel_checks == packed.table_rows > 0


def test_a_kernel_mismatch_is_exit_3_in_one_line(capsys, monkeypatch, tmp_path):
    """Through `kreassign check`: a kernel that disagrees with the reference stops the run with the
    documented infrastructure code (3) and one line naming the situation, no traceback; --no-kernel
    runs the same bounds on the reference alone and passes."""
    from test_exit_codes import run

    _shrink_as_expand(monkeypatch)
    monkeypatch.setattr(K, "CHECK_EVERY", 1)
    from kreassign.checker.packed.kraft_vector import VectorKernel

    monkeypatch.setattr(VectorKernel, "build", classmethod(lambda cls, kernel: None))  # the scalar kernel answers
    m = BROKEN_ON["mapping"]
    argv = ["check", "--profile", "kraft", "--brokers", str(m["brokers"]), "--rf", str(m["rf"]), "--reassigns",
            str(m["reassigns"]), "--cancels", str(m["cancels"]), "--failures", str(m["failures"]),
            "--kafka-version", m["kafka_version"], "--out", str(tmp_path)]
    code, _, err = run(argv, capsys)
    assert code == 3
    lines = [line for line in err.splitlines() if "kraft kernel" in line]
    assert len(lines) == 1 and "--no-kernel" in lines[0]
    # what could have drifted: the rules the scalar kernel restates, each with its original and its twin
    assert "AlterPartition's validation of an ISR change (reference/kraft.py KraftProfile.alter_partition, " \
           "restated in checker/packed/kraft_kernel.py KraftKernel._isr_change)" in lines[0]
    code, _, err = run([*argv, "--no-kernel"], capsys)
    assert code == 0, err
