"""The packed path (checker/packed/reassignment.py) against the reference-backed model, state by state.

On every reachable state of small configurations — one and two partitions, three profiles,
the replication layer, elections — the packed model must list the same edges (action and
successor) as ReassignmentModel, decide every property the same way on every state and
edge, and `check_model` must give the same verdicts and counterexample lengths with the
packed path on and off. A deliberately broken profile must be caught on the packed path.

The kraft profile follows a Kafka release (reference/kraft.py): the configurations are pinned to
3.9.2 (`OLD`, where the counts below were measured; the kraft kernels answer there), and a few
run at 4.4.0 with ELR off (the 4.3+ completion rule, the kernels answer) and with its default ELR
on (the kernels decline, the reference answers).
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from kreassign.checker.check.run import SEP, check_model, engine_properties
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.config.engine_options import EngineOptions
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.bfs import explore_packed
from kreassign.checker.packed.reassignment import NotPackable, PackedReassignment, packable, packed_explorer
from kreassign.reference.kraft import KraftProfile

OLD = "3.9.2"  # the 3.8-4.2 rules, where the counts pinned here were measured
NEW_ELR_OFF = {"kafka_version": "4.4.0", "elr": "off"}  # the 4.3+ completion rule (KAFKA-19975), kernels on

SMALL = [
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, kafka_version=OLD)),
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, partitions=2, kafka_version=OLD)),
    ("kraft-3.7", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1)),
    ("kip455", Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, partitions=2)),
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=0, failovers=1, replication=True,
                     elections=("PREFERRED", "UNCLEAN"), unclean=True, kafka_version=OLD)),
    ("kraft", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, **NEW_ELR_OFF)),
    # 4.4.0's default, ELR on, where it acts: min.insync.replicas 2 (a shrink leaves an eligible replica)
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=2, partitions=2, min_insync=2)),
]


def _ids(cases):
    def release(b):
        return f"-{b.kafka_version or 'newest'}{'-elr-' + b.elr if b.elr else ''}"

    return [f"{p}-p{b.partitions}-b{b.brokers}{'-repl' if b.replication else ''}"
            f"{release(b) if p == 'kraft' else ''}" for p, b in cases]


@pytest.mark.parametrize("profile,bounds", SMALL, ids=_ids(SMALL))
def test_every_state_has_the_reference_edges_and_verdicts(profile, bounds):
    model = ReassignmentModel(profile, bounds)
    reference = explore(model, keep_graph=True)
    assert reference.complete
    packed = PackedReassignment(model)
    values = np.array([packed.pack(s) for s in reference.graph.states], dtype=np.int64)
    assert len(set(values.tolist())) == len(values)  # packing is injective on the reachable states
    pos, ids, nexts, ok = packed.successor_arrays(values)
    always, goals, _ = packed.state_bits(values)
    for i, s in enumerate(reference.graph.states):
        mine = pos == i
        got = Counter(zip((packed.action_of(a) for a in ids[mine].tolist()), nexts[mine].tolist()))
        want = Counter((label.action, packed.pack(n)) for label, n in model.successors(s))
        assert got == want, f"state {i}: {s}"
        for bit, prop in enumerate(packed.always):
            assert bool((always[i] >> bit) & 1) == prop.predicate(s), (prop.name, i)
        for bit, prop in enumerate(packed.goals):
            assert bool((goals[i] >> bit) & 1) == prop.predicate(s), (prop.name, i)
        for k in np.flatnonzero(mine).tolist():
            action = packed.action_of(int(ids[k]))
            nxt, label = model.step(s, action)
            for bit, prop in enumerate(packed.edge_props):
                assert bool((ok[k] >> bit) & 1) == prop.predicate(s, label, nxt), (prop.name, i, action)
    result = explore_packed(PackedReassignment(model))
    assert (result.states, result.transitions, result.depth) == (reference.states, reference.transitions,
                                                                 reference.depth)
    kinds = Counter(type(label.action).__name__ for acts in reference.graph.actions for label in acts)
    assert result.per_action_edges == dict(kinds)


SPLIT = [
    ("kraft-3.7", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, partitions=2, targets=((1, 2), (2, 3)))),
    ("kip455", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, partitions=2)),
]


@pytest.mark.parametrize("profile,bounds", SPLIT, ids=_ids(SPLIT))
def test_properties_split_by_findings_are_decided_like_the_full_state(profile, bounds):
    """check/run.py hands the engine `P` (unexpected part) and `P::F` (occurrences); the packed
    words must decide each exactly as its predicate on the full state / edge does."""
    model = ReassignmentModel(profile, bounds)
    states = explore(model, keep_graph=True).graph.states
    split = engine_properties(list(model.properties()), profile)
    assert any(SEP in p.name for p in split)
    model.properties = lambda: split
    packed = PackedReassignment(model)
    assert not any(packed.exact_always) and not any(packed.exact_edges)
    values = np.array([packed.pack(s) for s in states], dtype=np.int64)
    words = packed.state_bits(values)[0]
    for bit, prop in enumerate(packed.always):
        held = packed.holds(packed.always_forms, bit, words)
        assert held.tolist() == [prop.predicate(s) for s in states], prop.name
    pos, ids, _, ok = packed.successor_arrays(values)
    labels = [model.step(states[i], packed.action_of(a)) for i, a in zip(pos.tolist(), ids.tolist())]
    for bit, prop in enumerate(packed.edge_props):
        held = packed.holds(packed.edge_forms, bit, ok)
        want = [prop.predicate(states[i], label, nxt) for i, (nxt, label) in zip(pos.tolist(), labels)]
        assert held.tolist() == want, prop.name


def _verdicts(result):
    return {n: (v.status, v.length, {f: x.length for f, x in v.findings.items()}) for n, v in result.properties.items()}


@pytest.mark.parametrize("profile,bounds", [
    ("kraft-3.7", Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1)),  # a liveness finding
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, partitions=2, kafka_version=OLD)),
    ("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1, **NEW_ELR_OFF)),  # liveness finding
    ("kraft", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=2, min_insync=2)),  # 4.4.0, ELR on
    ("kip455", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1)),
    ("kip455", Bounds(brokers=4, rf=2, reassigns=2, cancels=0, failures=1)),  # leaderless_for_good (liveness)
])
def test_check_verdicts_equal_with_and_without_the_packed_path(profile, bounds, tmp_path):
    fast = check_model(profile, bounds, out_dir=str(tmp_path / "fast"))
    slow = check_model(profile, bounds, out_dir=str(tmp_path / "slow"), engine_options=EngineOptions(fast=False))
    assert (fast.states, fast.transitions, fast.depth) == (slow.states, slow.transitions, slow.depth)
    assert _verdicts(fast) == _verdicts(slow)


class CompletesEarly(KraftProfile):
    """Broken on purpose: completes a reassignment whatever the ISR holds. At 3.9.2: from 4.3 on the
    release's own rule (KAFKA-19975) is set on the instance, over this one."""

    completion_rule = staticmethod(lambda r, i, adding, removing=(): True)

    def __init__(self):
        super().__init__(kafka_version=OLD)


def test_a_broken_profile_is_caught_on_the_packed_path():
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)
    model = ReassignmentModel(CompletesEarly(), bounds)
    assert model.profile.completion_rule is CompletesEarly.completion_rule  # the planted rule is the one used
    real = packed_explorer(ReassignmentModel(KraftProfile(kafka_version=OLD), bounds))
    assert "completion_reaches_target" not in real.violations  # (the contrast)
    assert packable(model)
    fast = packed_explorer(model)
    slow = explore(ReassignmentModel(CompletesEarly(), bounds))
    assert "completion_reaches_target" in fast.violations
    assert len(fast.violations["completion_reaches_target"].path) == len(slow.violations["completion_reaches_target"].path)
    # the packed path's counterexample is the reference's own: replayable state by state
    path = fast.violations["completion_reaches_target"].path
    for (s, _), (n, label) in pairwise(path):
        assert model.step(s, label.action)[0] == n


def test_profiles_with_controller_wide_state_stay_on_the_object_engine():
    assert not packable(ReassignmentModel("zk", Bounds()))
    assert not packable(ReassignmentModel("kip236", Bounds()))
    assert not packable(ReassignmentModel("kraft", Bounds(broker_view=True)))
    with pytest.raises(NotPackable):
        PackedReassignment(ReassignmentModel("zk", Bounds()))


def test_elr_reading_partition_0_keeps_the_object_engine(monkeypatch):
    """With ELR on a partition's change reads the topic's effective min ISR, min(min.insync.replicas,
    partition 0's replica count): where min.insync.replicas can exceed partition 0's replicas the partitions
    are not local, and the packed path (whose one-partition model is its own partition 0) must not run."""
    from dataclasses import replace

    from kreassign.checker.packed import reassignment as packed_module

    across = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=2, partitions=2, min_insync=3)
    assert ReassignmentModel("kraft", across).profile.elr
    assert not packable(ReassignmentModel("kraft", across))
    assert packable(ReassignmentModel("kraft", replace(across, partitions=1)))  # its own partition 0
    assert packable(ReassignmentModel("kraft", replace(across, min_insync=2)))  # never above partition 0's
    assert packable(ReassignmentModel("kraft", replace(across, elr="off")))  # no min ISR read
    # the contrast: the packed path run anyway reaches other states than the cluster does
    monkeypatch.setattr(packed_module, "_min_isr_partition_local", lambda model: True)
    model = ReassignmentModel("kraft", across)
    fast, slow = packed_explorer(model), explore(model)
    assert (fast.states, fast.transitions) != (slow.states, slow.transitions)


def test_concretize_refuses_a_path_the_reference_does_not_take():
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=2, kafka_version=OLD))
    packed = PackedReassignment(model)
    result = explore_packed(packed, liveness=False)
    path = packed_explorer(model).violations["adding_removing_disjoint"].path
    values = [(packed.pack(s), getattr(label, "action", None)) for s, label in path]
    assert packed.concretize(values)[-1][0] == path[-1][0]
    tampered = values[:-1] + [(values[0][0], values[-1][1])]
    with pytest.raises(AssertionError):
        packed.concretize(tampered)
    assert result.bytes_per_state <= 100


def test_run_limits_stop_the_packed_search():
    model = ReassignmentModel("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1,
                                              kafka_version=OLD))
    capped = packed_explorer(model, max_states=100)
    assert not capped.complete and capped.states == 100 and capped.stopped == "max-states"
    watched = packed_explorer(model, watch=lambda n: "max-memory: test" if n > 50 else None)
    assert not watched.complete and watched.stopped == "max-memory: test"


@pytest.mark.parametrize("profile,bounds", [
    ("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1, failovers=1, kafka_version=OLD)),
    ("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1, **NEW_ELR_OFF)),
    ("kraft-3.7", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, partitions=2)),
    ("kip455", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1)),
])
def test_budget_subsumption_keeps_safety_verdicts_and_lengths(profile, bounds, tmp_path):
    plain = check_model(profile, bounds, liveness_check=False, out_dir=str(tmp_path / "plain"))
    reduced = check_model(profile, bounds, liveness_check=False, out_dir=str(tmp_path / "reduced"),
                          engine_options=EngineOptions(subsume=True))
    assert reduced.states < plain.states
    assert _verdicts(reduced) == _verdicts(plain)


def test_subsumption_is_off_when_liveness_needs_the_graph():
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=2, failovers=1, kafka_version=OLD))
    full = explore_packed(PackedReassignment(model), liveness=True)
    asked = explore_packed(PackedReassignment(model), liveness=True, subsume=True)
    assert (asked.states, asked.transitions) == (full.states, full.transitions)


#: the default bounds' counts at each rule set: 3.9.2's are the TLA+ twin's; 4.4.0's (the 4.3+ completion
#: rule; the same with ELR on and off here) were measured with the kernels, the reference alone (--no-kernel)
#: and the object engine (--no-fast), all three equal
CLI_COUNTS = [(["--kafka-version", OLD], (4541, 18595, 12)),
              (["--kafka-version", "4.4.0", "--elr", "off"], (5193, 21354, 12)),
              (["--kafka-version", "4.4.0"], (5193, 21354, 12))]


@pytest.mark.parametrize("release,counts", CLI_COUNTS, ids=["3.9", "4.4-elr-off", "4.4-elr-on"])
def test_check_cli_flags_of_the_packed_path(release, counts, tmp_path, capsys):
    import json

    from kreassign.cli import main

    common = ["check", "--profile", "kraft", *release, "--no-liveness", "--no-minimize", "--json",
              "--out", str(tmp_path)]
    assert main(common + ["--workers", "2"]) == 0
    full = json.loads(capsys.readouterr().out)["results"][0]
    assert (full["states"], full["transitions"], full["depth"]) == counts
    assert main(common + ["--subsume"]) == 0
    reduced = json.loads(capsys.readouterr().out)["results"][0]
    assert reduced["states"] < full["states"]
    assert {n: v["status"] for n, v in reduced["properties"].items()} == \
        {n: v["status"] for n, v in full["properties"].items()}
    assert main(common + ["--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_workers_tabulate_the_same_table(monkeypatch):
    from kreassign.checker.packed import reassignment as packed_module

    monkeypatch.setattr(packed_module, "PARALLEL_MIN", 1)  # fork for every batch, however small
    model = ReassignmentModel("kraft-3.7", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, partitions=2))
    one = explore_packed(PackedReassignment(model, workers=1))
    two = explore_packed(PackedReassignment(model, workers=2))
    assert (two.states, two.transitions, two.depth) == (one.states, one.transitions, one.depth)
    assert {n: v.path for n, v in two.violations.items()} == {n: v.path for n, v in one.violations.items()}
    assert {n: s.tolist() for n, s in two.stuck.items()} == {n: s.tolist() for n, s in one.stuck.items()}
