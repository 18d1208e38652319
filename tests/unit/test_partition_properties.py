"""Each reassignment property and KRaft finding signature is defined once, on one partition (spec/per_partition.py).

The cluster-wide predicate every engine asks is derived from that definition, the kraft kernels evaluate the
definition itself on the partition they tabulate, and the vector kernel an array form written next to it. So:

1. the derived predicate equals the definition, evaluated here partition by partition (each partition's part of
   the edge built here, within the predicate's scope), on every state and edge of small configurations of every
   profile, and of planted bugs that make each property fail (test_property_mutants.MUTANTS);
2. each array form equals its definition on every local situation the vector kernel sees in small
   configurations, and on random partitions and edges its view can hold;
3. the vector kernel's views hold every field spec/partition_masks.py declares; every restated rule names its twins
   and each twin its original (checker/packed/kernel_scope.py RESTATED);
4. a planted change to one definition in spec/ changes what every engine reports (the packed engine with the
   kernels, with --no-kernel, and the object engine): the issue's acceptance test.
"""

from __future__ import annotations

import random
import re
from collections import deque
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from kreassign.checker.check.run import VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, bounds_from_mapping
from kreassign.checker.config.engine_options import DEFAULT_ENGINE, EngineOptions
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.bfs import explore_packed
from kreassign.checker.packed.kernel_scope import RESTATED
from kreassign.checker.packed.kraft_vector import MAX_BROKERS, EdgeView, StateView
from kreassign.checker.packed.reassignment import LOCAL_BUDGET, PackedReassignment
from kreassign.spec import reassign_properties as P
from kreassign.spec.findings import FINDINGS
from kreassign.spec.messages import INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS, NONE
from kreassign.spec.partition_masks import EDGE_FIELDS, STATE_FIELDS
from kreassign.spec.per_partition import EVERY_EDGE, PartitionEdge, partition_edges, partition_form
from kreassign.spec.reassign_properties import PROPERTIES, Ending, Ghost, ModelState
from kreassign.spec.state import NO_LEADER, ClusterState, Partition
from test_property_mutants import MUTANTS, planted

ROOT = Path(__file__).resolve().parents[2]

#: every property with a per-partition definition (all of PROPERTIES) and every signature with one (KRaft's)
PROPERTY_FORMS = {p.predicate.__name__: p.predicate for p in PROPERTIES if p.per_partition is not None}
SIGNATURE_FORMS = {f.signature.__name__: f.signature for f in FINDINGS if partition_form(f.signature) is not None}
FORMS = {**PROPERTY_FORMS, **SIGNATURE_FORMS}


def test_every_property_and_the_kernels_signatures_have_a_per_partition_definition():
    assert set(PROPERTY_FORMS) == {p.predicate.__name__ for p in PROPERTIES}
    assert set(SIGNATURE_FORMS) == {"stale_adding_replica", "override_keeps_earlier_target", "stuck_on_stale_adding",
                                    "cancel_keeps_non_adding_replicas", "cancel_keeps_merged_order",
                                    "completes_with_non_adding_target_out_of_isr", "growing_override_drops_requested"}
    for name, pred in FORMS.items():  # derived under the same module-level name, which pickles by reference
        assert pred.__name__ == name and getattr(__import__(pred.__module__, fromlist=["x"]), name) is pred
        assert pred.per_partition.at.__name__ == f"{name}_at"


# -- 1. the derived predicates equal their definitions ------------------------------------------------------


def _edges_here(prev, label, nxt):
    """Every partition's part of the edge, built here (not with spec's partition_edges)."""
    action = label.action
    after = label.after or nxt.cluster
    ended = {e.index: e for e in label.endings}
    try:
        code = label.response.partition_error(action.topic, action.partition)[0]
    except (AttributeError, KeyError):
        code = NONE
    active = frozenset(b.id for b in nxt.cluster.brokers if b.registered and b.active)
    return [PartitionEdge(p, q.replicas, q.isr, q.leader, q.leader_epoch - p.leader_epoch,
                          q.partition_epoch - p.partition_epoch, type(action).__name__, code, q != p, ended.get(k),
                          active)
            for k, ((_, _, p), (_, _, q)) in enumerate(zip(prev.cluster.partitions(), after.partitions()))]


def _definition(pred, *x) -> bool:
    """`pred` from its per-partition definition: every partition (some, for a signature) in scope."""
    form, signature = pred.per_partition, pred.__name__ in SIGNATURE_FORMS
    if form.scope is None:
        values = [form.at(p, g) for (_, _, p), g in zip(x[0].cluster.partitions(), x[0].ghosts)]
    else:
        values = [form.at(e) for e in _edges_here(*x) if form.scope.covers(e.kind, e.ending is not None)]
    if signature:
        return any(values)
    return all(values) and (form.clause is None or form.clause(*x))


def _compare_on_every_state_and_edge(model, seen):
    """Explore `model` (breadth first); on every state and edge compare each derived predicate with its
    definition; count in `seen` the values each took."""
    init = model.init_states()
    todo, known = deque(init), set(init)
    wrong = []
    while todo:
        ms = todo.popleft()
        for name, pred in FORMS.items():
            if pred.per_partition.scope is None:
                value = pred(ms)
                seen.setdefault(name, set()).add(bool(value))
                if value != _definition(pred, ms):
                    wrong.append((name, ms))
        for label, nxt in model.successors(ms):
            for name, pred in FORMS.items():
                if pred.per_partition.scope is not None:
                    value = pred(ms, label, nxt)
                    seen.setdefault(name, set()).add(bool(value))
                    if value != _definition(pred, ms, label, nxt):
                        wrong.append((name, ms, label))
            if nxt not in known:
                known.add(nxt)
                todo.append(nxt)
    return len(known), wrong


SMALL = {"brokers": 3, "rf": 2, "reassigns": 2, "cancels": 1, "failures": 1}
#: (profile, bounds): every profile, kraft at 3.9 and 4.4 (ELR on), two partitions, unclean topics, the log layer
CONFIGS = {
    "kraft-3.9": ("kraft", {**SMALL, "kafka_version": "3.9.2"}),
    "kraft-4.4-elr": ("kraft", {**SMALL, "failures": 2}),
    "kraft-3.7-b4": ("kraft-3.7", {**SMALL, "brokers": 4}),
    "kraft-2-partitions": ("kraft", {**SMALL, "reassigns": 1, "partitions": 2, "kafka_version": "3.9.2"}),
    "kraft-unclean-log": ("kraft", {**SMALL, "reassigns": 1, "cancels": 0, "unclean": True, "replication": True,
                                    "kafka_version": "3.9.2"}),
    "kip455": ("kip455", SMALL),
    "zk": ("zk", {**SMALL, "reassigns": 1}),
    "kip236": ("kip236", {**SMALL, "reassigns": 1}),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_derived_predicates_equal_their_definitions(name):
    profile, mapping = CONFIGS[name]
    seen: dict[str, set] = {}
    states, wrong = _compare_on_every_state_and_edge(ReassignmentModel(profile, bounds_from_mapping(mapping)), seen)
    assert states > 100
    assert not wrong, f"{len(wrong)} differences; first: {wrong[0]}"


def test_derived_predicates_equal_their_definitions_where_they_fail():
    """The comparison is not vacuous: with the planted bugs that break each property (and the real profiles'
    findings), every predicate is seen both holding and failing (a signature: matching and not)."""
    seen: dict[str, set] = {}
    bounds = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1)  # (the planted profile: the newest)
    for corrupt in dict.fromkeys(MUTANTS.values()):
        _, wrong = _compare_on_every_state_and_edge(ReassignmentModel(planted("kraft", corrupt), bounds), seen)
        assert not wrong, f"{corrupt.__name__}: {len(wrong)} differences; first: {wrong[0]}"
    for profile, mapping in (CONFIGS["kraft-3.7-b4"], CONFIGS["kraft-unclean-log"], CONFIGS["kip455"]):
        _compare_on_every_state_and_edge(ReassignmentModel(profile, bounds_from_mapping(mapping)), seen)
    assert {n: v for n, v in seen.items() if v != {True, False}} == {}


# -- 2. the array forms equal their definitions --------------------------------------------------------------


def _slots(ids, width=MAX_BROKERS):
    return list(ids) + [0] * (width - len(ids))


def _mask(ids):
    return sum(1 << b for b in ids)


def _state_view(pairs):
    """A StateView of (partition, ghost) pairs (ids 1..6, adding / removing sorted, no ELR, no log)."""
    def col(f, dtype=np.int64):
        return np.array([f(p, g) for p, g in pairs], dtype=dtype)

    return StateView(col(lambda p, g: _slots(p.replicas)).reshape(-1, MAX_BROKERS),
                     col(lambda p, g: _slots(p.isr)).reshape(-1, MAX_BROKERS), col(lambda p, g: p.leader),
                     col(lambda p, g: _mask(p.adding)), col(lambda p, g: _mask(p.removing)),
                     col(lambda p, g: g.original is not None, bool), col(lambda p, g: _mask(g.original or ())),
                     col(lambda p, g: g.requested is not None, bool), col(lambda p, g: _mask(g.requested or ())))


def _edge_view(edges, kinds):
    """An EdgeView of PartitionEdges (what the vector kernel builds for its own answers)."""
    def col(f, dtype=np.int64):
        return np.array([f(e) for e in edges], dtype=dtype)

    def slots(f):
        return col(lambda e: _slots(f(e))).reshape(-1, MAX_BROKERS)

    end = [e.ending for e in edges]
    return EdgeView(
        kinds, col(lambda e: kinds.index(e.kind)), slots(lambda e: e.before.replicas), slots(lambda e: e.before.isr),
        col(lambda e: e.before.leader), col(lambda e: _mask(e.before.adding)), slots(lambda e: e.replicas),
        slots(lambda e: e.isr), col(lambda e: e.leader), col(lambda e: e.leader_epoch_step),
        col(lambda e: e.partition_epoch_step), col(lambda e: e.code), col(lambda e: e.changed, bool),
        col(lambda e: _mask(b for b in range(1, MAX_BROKERS + 1) if b in e.active)),
        np.array([x is not None for x in end], dtype=bool), np.array([x is not None and x.kind == "cancelled"
                                                                    for x in end], dtype=bool),
        np.array([_slots(x.original if x else ()) for x in end], dtype=np.int64).reshape(-1, MAX_BROKERS),
        np.array([x is not None and x.requested is not None for x in end], dtype=bool),
        np.array([_mask(x.requested or ()) if x else 0 for x in end], dtype=np.int64),
        np.array([len(x.requested or ()) if x else 0 for x in end], dtype=np.int64))


def _state_differences(pairs):
    view, out = _state_view(pairs), []
    for name, pred in FORMS.items():
        form = pred.per_partition
        if form.scope is None and form.masks is not None:
            got = form.masks(view)
            out += [(name, pairs[k]) for k, (p, g) in enumerate(pairs) if bool(got[k]) != bool(form.at(p, g))]
    return out


def _edge_differences(edges):
    kinds = tuple(sorted({e.kind for e in edges}))
    view, out = _edge_view(edges, kinds), []
    for name, pred in FORMS.items():
        form = pred.per_partition
        if form.scope is not None:
            got = form.masks(view)
            out += [(name, e) for k, e in enumerate(edges)
                    if form.scope.covers(e.kind, e.ending is not None) and bool(got[k]) != bool(form.at(e))]
    return out


#: configurations of the vector kernel (ELR off): both profiles, both completion rules, unclean, RF 3
VECTOR_CONFIGS = {
    "kraft-3.9-b4": ("kraft", {**SMALL, "brokers": 4, "kafka_version": "3.9.2"}),
    "kraft-3.7-perm": ("kraft-3.7", {**SMALL, "targets": "permutations"}),
    "kraft-4.4-unclean": ("kraft", {**SMALL, "failures": 2, "unclean": True, "kafka_version": "4.4.0", "elr": "off",
                                    "targets": "permutations"}),
    "kraft-3.9-b4-rf3": ("kraft", {"brokers": 4, "rf": 3, "reassigns": 1, "cancels": 1, "failures": 1,
                                   "kafka_version": "3.9.2"}),
}


@pytest.mark.parametrize("name", list(VECTOR_CONFIGS))
def test_array_forms_equal_their_definitions_on_what_the_vector_kernel_sees(name):
    """Every local situation a packed search with the vector kernel tabulated: its partition and ghost through
    the kernel's own encoding (StateView.of), and every action's edge from it through the reference."""
    profile, mapping = VECTOR_CONFIGS[name]
    packed = PackedReassignment(ReassignmentModel(profile, bounds_from_mapping(mapping)), workers=1)
    assert packed.vector is not None
    explore_packed(packed, liveness=False)
    vk = packed.vector
    encodable = np.flatnonzero(vk.encodable[: len(packed.locals)])
    view = StateView.of(vk, encodable)
    bad = []
    for name_, pred in FORMS.items():
        form = pred.per_partition
        if form.scope is None and form.masks is not None:
            got = form.masks(view)
            bad += [(name_, packed.locals[i]) for k, i in enumerate(encodable.tolist())
                    if bool(got[k]) != bool(form.at(*packed.locals[i]))]
    assert not bad, bad[:3]
    edges = []
    model = packed.local_model
    for group in packed.groups:
        for local, env in sorted(group.done):
            if not vk.encodable[local]:
                continue
            part, ghost = packed.locals[local]
            ms = ModelState(ClusterState(packed.envs[env], (replace(packed.topic_template, partitions=(part,)),)),
                            (ghost,), LOCAL_BUDGET)
            for a in model.actions(ms):
                nxt, label = model.step(ms, a)
                edges += partition_edges(ms, label, nxt, EVERY_EDGE)
    assert len(edges) > 1000 and any(e.ending is not None for e in edges)
    bad = _edge_differences(edges)
    assert not bad, bad[:3]


def _random_partition(rng, ids):
    def some(k):
        return tuple(rng.sample(ids, rng.randint(0, k)))

    replicas = some(4)
    return Partition(replicas, some(4), rng.choice([NO_LEADER, *ids]), tuple(sorted(some(2))),
                     tuple(sorted(some(2)))), some


def test_array_forms_equal_their_definitions_on_random_partitions_and_edges():
    """Partitions, ghosts and edges the view can hold, reachable or not (on the real profiles most properties never
    fail, so the searches alone would not tell a wrong form from a right one)."""
    rng = random.Random(7)
    ids = list(range(1, MAX_BROKERS + 1))
    pairs, edges = [], []
    for _ in range(3000):
        p, some = _random_partition(rng, ids)
        g = Ghost() if rng.random() < 0.3 else Ghost(some(4), rng.choice([None, some(4)]), rng.random() < 0.3)
        pairs.append((p, g))
        q, _ = _random_partition(rng, ids)
        ending = None if rng.random() < 0.3 else Ending(0, rng.choice(["completed", "cancelled"]), some(4),
                                                         rng.choice([None, some(4)]))
        edges.append(PartitionEdge(p, q.replicas, q.isr, q.leader, rng.choice([-1, 0, 0, 1]), rng.choice([-1, 0, 1, 1]),
                                   rng.choice(["Reassign", "Cancel", "LeaderShrinkIsr", "BrokerFail"]),
                                   rng.choice([NONE, NONE, INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS]),
                                   rng.random() < 0.5, ending, frozenset(some(6))))
    assert not _state_differences(pairs)[:3]
    assert not _edge_differences(edges)[:3]


def test_a_wrong_array_form_is_caught():
    """The comparison above can fail: an order compared as a set differs from its definition somewhere."""
    rng = random.Random(7)
    ids = list(range(1, MAX_BROKERS + 1))
    edges = []
    for _ in range(500):
        p, some = _random_partition(rng, ids)
        original = some(4)
        edges.append(PartitionEdge(p, original[::-1], (), NO_LEADER, 0, 0, "Cancel", NONE, True,
                                   Ending(0, "cancelled", original, None), frozenset()))
    order = P.cancel_restores_original_order
    as_set = P.cancel_restores_original_replicas.per_partition.masks
    kinds = ("Cancel",)
    assert (order.per_partition.masks(_edge_view(edges, kinds)) != as_set(_edge_view(edges, kinds))).any()


# -- 3. the views and the twins ---------------------------------------------------------------------------------


def test_the_vector_kernels_views_hold_every_declared_field():
    packed = PackedReassignment(ReassignmentModel("kraft", Bounds(brokers=3, kafka_version="3.9.2")), workers=1)
    explore_packed(packed, liveness=False)
    state = StateView.of(packed.vector, np.arange(len(packed.locals)))
    edges = [PartitionEdge(p, p.replicas, p.isr, p.leader, 0, 0, "Cancel", NONE, False, None, frozenset())
             for p, _ in packed.locals]
    edge = _edge_view(edges, ("Cancel",))
    assert [f for f in STATE_FIELDS if not hasattr(state, f)] == []
    assert [f for f in EDGE_FIELDS if not hasattr(edge, f)] == []
    for view in (state, edge):
        assert all(callable(getattr(view, h)) for h in ("count", "has", "minus"))
    assert edge.kind_in({"Cancel"}).all() and not edge.kind_in({"Reassign"}).any()


def _lines(path: str) -> list[str]:
    return (ROOT / path).read_text().splitlines()


@pytest.mark.parametrize("rule", RESTATED, ids=lambda r: r.rule)
def test_every_restated_rule_names_its_twins_and_each_twin_its_original(rule):
    """`# twin: <file> <name>` where the rule lives, for each twin; `# twin of <file> <name>` in each twin."""
    original_file, original_name = rule.original.split(" ", 1)
    for twin in rule.twins:
        twin_file, twin_name = twin.split(" ", 1)
        method = twin_name.rsplit(".", 1)[-1]
        assert any("# twin:" in line and twin_file in line and re.search(rf"\b{re.escape(method)}\b", line)
                   for line in _lines(original_file)), f"{original_file} does not name its twin {twin}"
        assert any("# twin of" in line and original_file in line and original_name.rsplit(".", 1)[-1] in line
                   for line in _lines(twin_file)), f"{twin_file} does not name its original {rule.original}"


# -- 4. the acceptance test: a planted change to one definition reaches every engine -----------------------------


def _leader_in_isr_of_two(p, g):
    # a planted change: a leader alone in its ISR breaks it (after a failure or a shrink, that state occurs)
    return p.leader == NO_LEADER or (p.leader in p.isr and len(p.isr) > 1)


def _cancel_rejected_or_unchanged(e):
    # a planted change: any cancel that changes the partition breaks it, accepted or not
    return not e.changed


PLANTS = {"leader_in_isr": (P.leader_in_isr_at, _leader_in_isr_of_two),
          "cancel_rejected_cleanly": (P.cancel_rejected_cleanly_at, _cancel_rejected_or_unchanged)}
ENGINES = {"packed+kernels": DEFAULT_ENGINE, "--no-kernel": EngineOptions(kernel=False),
           "--no-fast": EngineOptions(fast=False)}
ACCEPTANCE = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, kafka_version="3.9.2")


def _statuses(prop):
    out = {}
    for engine, options in ENGINES.items():
        result = check_model("kraft", ACCEPTANCE, liveness_check=False, minimize_counterexamples=False,
                             engine_options=options)
        out[engine] = (result.properties[prop].status, result.memory and result.memory.get("answers"))
    return out


@pytest.mark.parametrize("prop", list(PLANTS))
def test_a_planted_change_to_one_definition_changes_what_every_engine_reports(prop, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # counterexample files land here
    at, planted_body = PLANTS[prop]
    before = _statuses(prop)
    assert {s for s, _ in before.values()} == {"holds"}, before
    # without the plant the default run's answers came from the vector kernel
    assert before["packed+kernels"][1]["vector"] > 0 and before["--no-kernel"][1]["kernel"] == 0
    monkeypatch.setattr(at, "__code__", planted_body.__code__)  # the body edited, as in the source
    after = _statuses(prop)
    assert {s for s, _ in after.values()} == {VIOLATED}, after
    # the vector kernel's array form was written for the old body: it stood aside, the scalar kernel answered
    assert after["packed+kernels"][1]["vector"] == 0 < after["packed+kernels"][1]["kernel"]
