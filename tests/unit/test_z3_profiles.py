"""The z3 encodings of kip455, kip236 and zk: tied to the reference, proofs matching the explorer; and
every curated explorer counterexample (kraft's too, each at the Kafka release it records) followed by the
encoding to its violation."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.models.registry import build_model
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.z3.diff import check_trace, differential
from kreassign.checker.z3.order import ORDER_PROPERTIES, ordered
from kreassign.checker.z3.profiles import encoding, encoding_class, reference_model
from kreassign.checker.z3.prove import INVARIANT, NOT_ENCODED, PROVED, REFUTED, UNKNOWN, prove_reassignment
from kreassign.reference import zk_controller as C
from kreassign.reference.kip236 import Kip236Profile
from kreassign.reference.kip455 import Kip455Profile
from kreassign.reference.profile_base import Step
from kreassign.reference.zk import ZkProfile
from kreassign.spec import kafka_releases
from kreassign.spec.findings import broken
from kreassign.spec.messages import Ack
from kreassign.spec.reassign_properties import ALL, PROPERTIES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: two small configurations each: overriding requests, and failures with a controller failover
CONFIGS = {
    "overrides": Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=0),
    "failures": Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, failovers=1),
}


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("profile", ["kip455", "kip236", "zk"])
def test_encoding_agrees_with_the_reference_on_every_state(profile, config):
    report = differential(encoding(profile, 3, exact_rf=True), reference_model(profile, CONFIGS[config]))
    assert report.edges > 300
    assert report.ok, "\n".join(map(str, report.mismatches))


class Kip455NoPickUp(Kip455Profile):
    """Mutated on purpose: the controller never takes joined replicas out of AR."""

    name = "kip455-no-pick-up"

    def settle(self, part):
        return part


class Kip236RollbackKeepsIsr(Kip236Profile):
    """Mutated on purpose: the rollback forgets OfflineReplica for the replicas it removes."""

    name = "kip236-rollback-keeps-isr"

    def rollback(self, state, topic, index):
        part = state.partition(topic, index)
        original = part.original if part.original is not None else part.origin
        part = replace(part, replicas=original, adding=(), removing=(), original=None)
        return self.with_route(self.put(state, topic, index, part), topic, index, None)


class ZkSkipsB4(ZkProfile):
    """Mutated on purpose: step B4 does not take the removing replicas out of the ISR."""

    name = "zk-skips-b4"

    def controller_step(self, state, topic, partition):
        zk = state.zk
        if zk is not None and zk.active and C.next_step(zk, topic, partition) == "B4":
            return Step(replace(state, zk=C._set_step(zk, topic, partition, "B5")), Ack())
        return super().controller_step(state, topic, partition)


@pytest.mark.parametrize("profile,mutant", [("kip455", Kip455NoPickUp()), ("kip236", Kip236RollbackKeepsIsr()),
                                            ("zk", ZkSkipsB4())], ids=lambda x: getattr(x, "name", x))
def test_a_mutated_reference_rule_fails_the_differential_test(profile, mutant):
    bounds = CONFIGS["overrides"]
    report = differential(encoding(profile, 3, exact_rf=True), ReassignmentModel(mutant, bounds), max_mismatches=1)
    assert not report.ok


@pytest.mark.parametrize("profile", ["kip455", "kip236"])
def test_proofs_and_refutations_match_the_explorer(profile, tmp_path):
    results = {r.property: r for r in prove_reassignment(profile, max_brokers=4, out_dir=str(tmp_path))}
    assert results[INVARIANT].verdict == PROVED
    refuted = {n for n, r in results.items() if r.verdict == REFUTED}
    unknown = {n for n, r in results.items() if r.verdict == UNKNOWN}
    assert refuted == set(broken(profile)) & set(results) - unknown
    assert unknown == set()  # liveness too: a ranking proof or a stuck state (liveness.py)
    for name in refuted:
        assert replay(read_trace(results[name].counterexample)).reproduces


def test_zk_proofs_of_what_the_explorer_finds_holding():
    holds = ["target_in_replicas", "original_in_replicas", "adding_removing_disjoint", "leader_in_isr",
             "isr_non_empty", "replication_factor_bounded", "epochs_monotone", "completion_reaches_target",
             "cancel_restores_original_replicas", "replication_factor_restored", "cancel_rejected_cleanly"]
    results = {r.property: r for r in prove_reassignment("zk", max_brokers=4, properties=holds, out_dir=None)}
    assert {n for n, r in results.items() if r.verdict == PROVED} == set(holds) | {INVARIANT}
    # the strengthening names the controller's phases
    assert "zookeeper origin = original" in results[INVARIANT].lemmas


DEFAULT_PROPS = {p.name for p in PROPERTIES}


def _release(trace) -> str | None:
    """The Kafka release a kraft trace records (reference/kraft.py), None for the other profiles."""
    return trace.bounds.get("kafka_version") if trace.profile == "kraft" else None


#: the liveness properties whose curated stuck paths the encoding follows too
LIVENESS_PROPERTIES = ("reassignment_can_finish", "reassignment_can_finish_in_sync")


def _covered(trace) -> bool:
    """The encoding has every step of the trace and states its property: not the order, liveness and log
    properties (checker/z3/prove.py NOT_ENCODED), nor the off-by-default capabilities (throttles,
    CreatePartitions, broker logs, fairness, the KRaft controller's own actions such as a restart)."""
    if trace.property in NOT_ENCODED or trace.property not in DEFAULT_PROPS:
        return False
    enc = encoding(trace.profile, trace.bounds["brokers"], kafka_version=_release(trace))
    model = build_model(trace.model, trace.profile, trace.bounds)
    return all(enc.project_action(model.action_from_json(step["action"])) is not None for step in trace.steps)


def _curated():
    """Every curated trace of every finding, kraft's at every release it is declared for (each trace
    records the release it was curated at), with whether the encoding covers it."""
    out = {}
    for profile in sorted(ALL):
        releases = [r.version for r in kafka_releases.RELEASES] if profile == "kraft" else [None]
        for release in releases:
            for prop, file in sorted(broken(profile, release).items()):
                out.setdefault(file, (profile, prop, file))
    return sorted(out.values())


CURATED = [(profile, prop, file) for profile, prop, file in _curated()
           if _covered(read_trace(os.path.join(ROOT, file)))]


def test_the_covered_kraft_traces_are_checked_at_their_release():
    """Not silently none: the kraft traces the next test follows, each recorded at the release it was
    curated at (the newest, ELR on; the restart one at 3.9, whose BrokerRestart is not encoded)."""
    kraft = {prop: read_trace(os.path.join(ROOT, file))
             for profile, prop, file in CURATED if profile == "kraft"}
    assert set(kraft) == {"adding_removing_disjoint", "cancel_restores_original_replicas",
                          "completion_reaches_target", "replication_factor_bounded", "replication_factor_restored",
                          "cancel_restores_original_order",  # with list order (checker/z3/order.py)
                          *LIVENESS_PROPERTIES}  # their stuck paths (checker/z3/liveness.py)
    assert {(_release(t), t.bounds.get("elr")) for t in kraft.values()} == {(kafka_releases.NEWEST, "on")}
    assert sum(profile == "kraft-3.7" for profile, _, _ in CURATED) == 8  # 5 safety, the order one, 2 stuck paths
    restart = read_trace(os.path.join(ROOT, broken("kraft", "3.9.2")["restart_moves_leadership"]))
    assert _release(restart) == "3.9.2" and not _covered(restart)


@pytest.mark.parametrize("profile,prop,file", CURATED, ids=lambda x: x if isinstance(x, str) else None)
def test_every_explorer_counterexample_is_a_path_of_the_encoding(profile, prop, file):
    """The explorer's violations are found here too: its trace is a path of the relation of the release
    it records, and the encoded property fails at its end. The trace is followed by the explorer's model
    it records (kraft: ELR on): the encoding, ELR off, accepting each step says that ELR changed nothing
    along it (no ISR emptied)."""
    trace = read_trace(os.path.join(ROOT, file))
    targets = trace.bounds.get("targets")
    any_size = isinstance(targets, list) and any(len(t) != trace.bounds["rf"] for t in targets)
    kw = {"exact_rf": not any_size, "targets": "any" if any_size else "rf"}  # a finding of targets that change the RF
    if prop in ORDER_PROPERTIES:  # list order: the order layer, the trace's own target orders
        enc = ordered(encoding_class(profile, _release(trace)))(trace.bounds["brokers"], target_order="any", **kw)
    else:
        enc = encoding(profile, trace.bounds["brokers"], kafka_version=_release(trace), **kw)
    if profile == "kraft":
        assert enc.KAFKA_VERSION == _release(trace)
    mismatches, violated = check_trace(enc, trace)
    assert mismatches == []
    # a liveness trace ends in a stuck state, which no state predicate states (checker/z3/liveness.py judges
    # it); a safety trace's property fails at its end
    assert violated or prop in LIVENESS_PROPERTIES
