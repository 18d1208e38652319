"""The resident layout's bucket (checker/spark/resident/bucket.py), driven in this process without Spark: buckets
that keep their visited sets, replicas and keys between levels give the embedded engine's counts, whatever the
number of buckets, on every codec flavour (the packed path's replica values, int64 kernels, byte states); and
the wire format the packed path sends (packed_codec `parts_of_values`, `values_of_parts`) is the levels
layout's. Broken variants are caught: a bucket that ranks against its own keys only, one that forgets its
visited set."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.protocol import checked_properties
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.codec_choice import codec_for
from kreassign.checker.spark.packed_codec import PackedRows
from kreassign.checker.spark.recipes import model_recipe, recipe_id
from kreassign.checker.spark.resident.bucket import ResidentBucket, merge_keys
from kreassign.spec.properties import ALWAYS, SOMETIMES, TRANSITION

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from anchor_model import anchor_model

pytestmark = pytest.mark.spark

KRAFT = Bounds(partitions=2, brokers=3, rf=2, failures=1)
ZK = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)


def simulate(model, buckets: int, codec_name: str | None = None, own_keys_only: bool = False,
             forget_visited: bool = False, most_levels: int = 60, chunk: int | None = None):
    """The coordinator's level loop over `buckets` ResidentBuckets, in process: (states, transitions, depth,
    {property: the length of its shortest counterexample})."""
    init = model.init_states()[0]
    codec = codec_for(model, init, codec_name) if codec_name else codec_for(model, init)
    recipe = model_recipe(model, None if codec_name == "packed" else codec)
    job = {"recipe_id": recipe_id(recipe), "codec": codec.name, "buckets": buckets, "record_states": 1 << 18}
    props = checked_properties(model)
    full = {**job, "mode": "expand", "always": [p.name for p in props if p.kind == ALWAYS],
            "sometimes": [p.name for p in props if p.kind == SOMETIMES],
            "transition": [p.name for p in props if p.kind == TRANSITION],
            "check_deadlock": False, "keep_graph": False}
    bs = [ResidentBucket(b, job, recipe) for b in range(buckets)]
    for b in bs:
        b.chunk = chunk or b.chunk
    if forget_visited:
        for b in bs:
            b._visit = lambda level: None  # the broken variant
    inits = list(dict.fromkeys(model.init_states()))
    encoded = [codec.encode(s) for s in inits]
    keys = np.arange(len(inits), dtype=np.int64)
    if codec.int64:
        values = np.array([p for _, p in encoded], dtype=np.int64)
        level, owner = T.Level(keys, values, values), T.int_buckets(values, buckets)
    else:
        hi, lo = T.split_digests(b"".join(i for i, _ in encoded))
        level, owner = T.Level(keys, (hi, lo), codec.gather([p for _, p in encoded])), T.digest_buckets(lo, buckets)
    news = [b.seed([T.states_blob(T.select(level, owner == b.bucket, codec.int64), codec.int64)]) for b in bs]
    states = transitions = depth = 0
    first: dict[str, int] = {}
    for number in range(most_levels):
        parts = [np.sort(n.keys) for n in news]
        if not sum(len(p) for p in parts):
            break
        states += sum(len(p) for p in parts)
        depth += 1
        inbox: dict[int, list] = {b: [] for b in range(buckets)}
        for b, mine in zip(bs, parts):
            b.place(merge_keys(parts))
            stats = b.check_and_expand(full, True, lambda target, record, inbox=inbox: inbox[target].append(record))
            transitions += stats["transitions"]
            for name in stats["violations"]:
                first.setdefault(name, number)
            for name in stats["edge_violations"]:  # (the path goes one edge further)
                first.setdefault(name, number + 1)
        prev = merge_keys(parts)
        news = [b.dedupe(inbox[b.bucket], parts[b.bucket] if own_keys_only else prev) for b in bs]
    return states, transitions, depth, first


def embedded(model):
    r = explore(model)
    return r.states, r.transitions, r.depth, {n: len(v.path) - 1 for n, v in r.violations.items()}


@pytest.mark.parametrize(("buckets", "chunk"), [(1, None), (3, None), (2, 7)])
def test_packed_buckets_give_the_embedded_counts(buckets, chunk):
    """`chunk`: a level checked and expanded 7 states at a time (a successor several chunks reach is sent once
    per chunk, and kept once)."""
    model = build_model("reassignment", "kraft", KRAFT)
    assert simulate(model, buckets, "packed", chunk=chunk) == embedded(model)


@pytest.mark.parametrize("buckets", [1, 2])
def test_byte_and_int64_buckets_give_the_embedded_counts(buckets):
    zk = build_model("reassignment", "zk", ZK)
    assert simulate(zk, buckets) == embedded(zk)
    anchor = anchor_model("N4_fail")
    assert simulate(anchor, buckets)[:3] == embedded(anchor)[:3]


def test_a_bucket_ranking_against_its_own_keys_only_is_caught():
    model = build_model("reassignment", "kraft", KRAFT)
    with pytest.raises(RuntimeError, match="not among the previous level's states"):
        simulate(model, 3, "packed", own_keys_only=True)


def test_a_bucket_forgetting_its_visited_set_is_caught():
    model = build_model("reassignment", "kraft", KRAFT)
    assert simulate(model, 2, "packed", forget_visited=True, most_levels=12) != embedded(model)


def test_lookup_answers_the_ranks_a_bucket_holds():
    b = ResidentBucket.__new__(ResidentBucket)
    b.keys, b.ranks = [np.array([5, 9], dtype=np.int64)], [np.array([1, 4], dtype=np.int64)]
    assert b.lookup([(0, 1), (0, 2), (0, 4), (1, 0)]) == {(0, 1): 5, (0, 4): 9}


def test_the_packed_wire_format_is_the_levels_layouts():
    model = build_model("reassignment", "kraft", KRAFT)
    sender, receiver = (codec_for(model, model.init_states()[0], "packed") for _ in range(2))
    states = list(explore(model, keep_graph=True).graph.states)
    values = np.array([sender.packed.pack(s) for s in states], dtype=np.int64)
    parts = sender.parts_of_values(values)
    assert parts == sender.rows_of(values).parts()  # byte for byte
    got = receiver.values_of_parts(parts)  # (a replica that numbers its fields in another order)
    assert np.array_equal(got, receiver.values_of(PackedRows.from_parts(parts)))
    assert [receiver.packed.unpack(int(v)) for v in got] == states
    assert len(sender.values_of_parts(sender.parts_of_values(values[:0]))) == 0
