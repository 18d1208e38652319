"""Liveness on Spark's packed path (checker/spark/liveness.py `_packed_edges`, `goal_task`, `_in_key_order`)
against the object path of the same tasks, which asks the reference for every successor and goal.

On every reachable state of a kraft model with failures, reassignments and cancellations (admin edges
liveness must not follow), the packed replica gives the same environment edges (as identity pairs, a
multiset), the same goal states per `eventually` property, and the same states in discovery-key order.
Broken variants (every edge kept; the goals read from another bit set) are caught. Runs in this process: the
tasks are plain functions, no Spark session needed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.liveness import environment_edge
from kreassign.checker.models.registry import build_model
from kreassign.spec.properties import EVENTUALLY

pytest.importorskip("pyspark")
from kreassign.checker.spark import liveness as SL
from kreassign.checker.spark import tasks as T


@pytest.fixture(scope="module")
def setup():
    bounds = replace(DEFAULT_SUITE["kraft"], brokers=4, rf=2, failures=1, reassigns=1, cancels=1)
    model = build_model("reassignment", "kraft", bounds)
    graph = explore(model, keep_graph=True).graph
    packed_rt = T.Runtime(model, "packed", model.init_states()[0])
    object_rt = T.Runtime(model, "packed", model.init_states()[0])
    object_rt.packed = None  # the same codec, the reference's successors and goals (`_object_edges`)
    assert packed_rt.packed is not None
    codec = packed_rt.codec
    rows = codec.rows_of(np.array([codec.packed.pack(s) for s in graph.states], dtype=np.int64))
    keys = np.random.default_rng(3).permutation(len(graph.states)).astype(np.int64)  # keys not in row order
    level = T.Level(keys, codec.identities(rows), rows)
    return model, graph, packed_rt, object_rt, level


def _pairs(edges: tuple[np.ndarray, np.ndarray]) -> Counter:
    src, dst = edges
    return Counter(zip(src.tolist(), dst.tolist()))


def test_packed_edges_are_the_references_environment_edges(setup):
    model, graph, packed_rt, object_rt, level = setup
    packed = _pairs(SL._packed_edges(packed_rt, level))
    assert packed == _pairs(SL._object_edges(object_rt, level))
    kept = sum(1 for acts in graph.actions for a in acts if environment_edge(a))
    everything = sum(len(acts) for acts in graph.actions)
    assert sum(packed.values()) == kept < everything  # admin edges exist, and are left out

    broken = T.Runtime(model, "packed", model.init_states()[0])
    broken.packed.environment_ids = lambda ids: np.ones(len(ids), dtype=bool)  # admin edges followed too
    assert _pairs(SL._packed_edges(broken, level)) != packed


def _goals(rt, level, name) -> set:
    job = {"property": name, "recipe_id": "test", "codec": "packed", "record_states": 1000}
    T._MODELS[(job["recipe_id"], job["codec"])] = rt
    try:
        blobs = [value for _, (_, value) in SL.goal_task(0, [(0, (T.LEVEL, (0, T.states_blob(level, False))))],
                                                            job, recipe=None)]
    finally:
        del T._MODELS[(job["recipe_id"], job["codec"])]
    return {x for blob in blobs for x in np.frombuffer(blob, dtype=SL._dtype(False)).tolist()}


def test_packed_goals_are_the_references(setup):
    model, _, packed_rt, object_rt, level = setup
    names = [p.name for p in packed_rt.properties.values() if p.kind == EVENTUALLY]
    assert len(names) >= 2
    per_name = {n: _goals(packed_rt, level, n) for n in names}
    for n in names:
        assert per_name[n] == _goals(object_rt, level, n), n
    assert all(0 < len(g) < len(level) for g in per_name.values())  # goals, and states that are not

    broken = T.Runtime(model, "packed", model.init_states()[0])
    state_bits = broken.packed.state_bits

    def wrong_word(values):  # the goals read from the always bits
        always, _, some = state_bits(values)
        return always, always, some

    broken.packed.state_bits = wrong_word
    assert any(_goals(broken, level, n) != per_name[n] for n in names)


def test_stuck_states_are_read_in_key_order(setup):
    _, graph, packed_rt, object_rt, level = setup
    mask = np.zeros(len(level), dtype=bool)
    mask[::3] = True
    packed = list(SL._in_key_order(packed_rt, level, mask, False, chunk=7))
    assert packed == list(SL._in_key_order(object_rt, level, mask, False))
    assert [level.keys[i] for i, _ in packed] == sorted(level.keys[mask].tolist())
    assert all(graph.states[i] == s for i, s in packed)
