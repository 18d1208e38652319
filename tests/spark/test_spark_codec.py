"""The Spark engine's state codecs and model shipping, without Spark (these run with -m "not spark" too).

The codec decides state equality on the executors, so it is checked like a second encoding:
on every reachable state of the default models, decode(encode(s)) == s and two states have
the same identity iff they are equal (checker/spark/codec.py).
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest
from kreassign.checker.check.suite import DEFAULT_SUITE, QUOTA_SUITE
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark.codec import (
    CodecError,
    Int64Codec,
    JsonCodec,
    PlainCodec,
    StructCodec,
)
from kreassign.checker.spark.codec_choice import check_codec, codec_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from anchor_model import CONFIGS, AnchorModel, anchor_model

pyspark = pytest.importorskip("pyspark")
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.recipes import model_recipe


def reachable(model):
    return explore(model, keep_graph=True).graph.states


def assert_faithful(codec, states):
    identities = {}
    for s in states:
        identity, payload = codec.encode(s)
        assert codec.decode(payload) == s
        assert identities.setdefault(identity, s) == s  # equal identities only for equal states
    assert len(identities) == len(states)  # the states are distinct, so are their identities


@pytest.mark.parametrize("profile", ["kraft", "zk", "kip236"])
def test_struct_codec_on_every_reachable_reassignment_state(profile):
    model = build_model("reassignment", profile, DEFAULT_SUITE[profile])
    states = reachable(model)
    codec = codec_for(model, states[0])
    assert isinstance(codec, StructCodec)
    assert_faithful(codec, states)


def test_struct_codec_leaves_uncompared_fields_out_of_the_identity():
    model = build_model("quota", "kip599", QUOTA_SUITE["kip599"]())
    states = reachable(model)
    codec = codec_for(model, states[0])
    assert isinstance(codec, StructCodec)
    assert_faithful(codec, states)
    # now_ms takes no part in equality: same identity, and the payload keeps it
    moved = next(s for s in states if s.now_ms)
    from dataclasses import replace

    other = replace(moved, now_ms=moved.now_ms + 12345)
    assert codec.encode(other)[0] == codec.encode(moved)[0]
    assert codec.decode(codec.encode(other)[1]).now_ms == other.now_ms
    # the model's own JSON form includes now_ms: as an identity it would split equal states
    assert JsonCodec(model).encode(other)[0] != JsonCodec(model).encode(moved)[0]


def test_frozenset_states_use_the_struct_codec_with_sorted_members():
    model = AnchorModel(CONFIGS["N4_fail"])
    states = reachable(model)
    codec = codec_for(model, states[0])
    assert isinstance(codec, StructCodec)
    assert_faithful(codec, states)


def test_plain_and_int_codecs():
    assert isinstance(codec_for(None, 5), Int64Codec)
    assert isinstance(codec_for(None, (1, ("a", None, True))), PlainCodec)
    assert_faithful(PlainCodec(), [(1, 2), (1, (2,)), ((1, 2),), ("1", 2), (True, 1), (frozenset({3, 1}), None)])
    with pytest.raises(CodecError, match="float"):
        PlainCodec().encode((1.5,))
    with pytest.raises(CodecError, match="int64"):
        Int64Codec().encode(-1)
    with pytest.raises(CodecError, match="round-trip"):
        check_codec(JsonCodec(type("M", (), {"state_to_json": staticmethod(lambda s: s),
                                              "state_from_json": staticmethod(lambda d: d)})()), [(1, 2)])


def test_reassignment_and_quota_models_ship_as_profile_and_bounds():
    for model in (build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"]),
                  build_model("quota", "kip599", QUOTA_SUITE["kip599"]())):
        recipe = model_recipe(model)
        assert recipe["kind"] != "pickle"
        json.dumps(recipe)  # plain data: nothing of the driver's objects travels
        rebuilt = T.build_model(json.loads(json.dumps(recipe)))
        assert rebuilt.describe() == model.describe()
        assert rebuilt.init_states() == model.init_states()


def test_modified_or_unknown_models_ship_pickled_and_self_contained():
    model = build_model("reassignment", "kip455", DEFAULT_SUITE["kip455"])
    only = [p for p in model.properties() if p.name == "isr_in_replicas"]
    model.properties = lambda: only  # what minimization does: the rebuilt model would differ
    recipe = model_recipe(model)
    assert recipe["kind"] == "pickle"
    assert [p.name for p in T.build_model(recipe).properties()] == ["isr_in_replicas"]
    anchor = anchor_model("N4_fail")  # bench/ is not installed: its code travels by value
    recipe = model_recipe(anchor)
    assert b"anchor_model" in recipe["data"]
    saved = sys.modules.pop("anchor_model")
    try:  # as on an executor that cannot import bench/anchor_model.py
        rebuilt, _ = pickle.loads(recipe["data"])
        assert "anchor_model" not in sys.modules
        assert rebuilt.init_states() == anchor.init_states()
    finally:
        sys.modules["anchor_model"] = saved


def test_packed_codec_reads_states_whatever_order_a_replica_interned_in():
    """The packed path's codec (packed_codec.PackedCodec): on every reachable state of a two-partition kraft model,
    a second replica that meets the states in the reverse order (so interns every field under another id)
    decodes each payload to the same state, and identities are equal iff states are."""
    from dataclasses import replace

    from kreassign.checker.spark.packed_codec import PackedCodec

    model = build_model("reassignment", "kraft", replace(DEFAULT_SUITE["kraft"], partitions=2, brokers=3, rf=2))
    states = list(explore(model, keep_graph=True).graph.states)
    writer, reader = PackedCodec(model), PackedCodec(model)
    reader.decode(writer.encode(states[-1])[1])  # the reader interns another state first
    encoded = [writer.encode(s) for s in states]
    assert len({ident for ident, _ in encoded}) == len(states)
    assert [reader.decode(payload) for _, payload in reversed(encoded)] == states[::-1]
    assert [reader.encode(s)[0] for s in states] == [ident for ident, _ in encoded]
    assert writer.packed.local_ids != reader.packed.local_ids  # (else the test would show nothing)


def test_packed_identity_buckets_a_situation_on_one_executor():
    """packed_codec.identities: states that differ only in their budget bits (one situation, which a replica
    tabulates once) share the identity's low half, hence a bucket (tasks.digest_buckets); states of different
    situations do not share it (but for a 64-bit collision), and every identity stays distinct. The broken
    variant, the budget in the bucketing half too (before), spreads one situation over the buckets."""
    from collections import defaultdict

    import numpy as np
    from kreassign.checker.spark.packed_codec import PackedCodec, identities

    model = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"])
    states = list(explore(model, keep_graph=True).graph.states)
    codec = PackedCodec(model)
    rows = codec.rows_of(np.array([codec.packed.pack(s) for s in states], dtype=np.int64)).rows
    hi, lo = identities(rows)
    _, broken_lo = identities(rows, situation_buckets=False)
    by_situation: dict[bytes, set[int]] = defaultdict(set)
    broken: dict[bytes, set[int]] = defaultdict(set)
    for j in range(len(states)):
        situation = rows[j, 1:].tobytes()  # (rows[:, 0]: the budget bits)
        by_situation[situation].add(int(lo[j]))
        broken[situation].add(int(broken_lo[j]))
    assert len(set(zip(hi.tolist(), lo.tolist()))) == len(states)
    assert [codec.encode(s)[0] for s in states[:50]] == [
        np.array([h, low], dtype=">u8").tobytes() for h, low in zip(hi[:50], lo[:50])]  # one identity, both ways
    assert all(len(lows) == 1 for lows in by_situation.values())
    assert len({next(iter(low)) for low in by_situation.values()}) == len(by_situation)
    assert any(len(lows) > 1 for lows in broken.values())  # several budgets per situation: the test can fail


def test_packed_rows_travel_as_int64_columns_with_one_content_per_field():
    """A batch of packed states (packed_codec.PackedRows) written by one replica and read by another that
    interned in another order: the same states, identities computed alike on both sides, and the bytes carry
    one content per distinct field (not per state) and a 4-byte index per field of a state. Broken variant: a dictionary missing a field is refused
    with a message, not read as another field."""
    from dataclasses import replace

    import numpy as np
    import pytest
    from kreassign.checker.spark.packed_codec import PackedCodec, PackedRows

    model = build_model("reassignment", "kraft", replace(DEFAULT_SUITE["kraft"], partitions=2, brokers=3, rf=2))
    states = list(explore(model, keep_graph=True).graph.states)
    writer, reader = PackedCodec(model), PackedCodec(model)
    reader.states_of(writer.gather([writer.encode(s)[1] for s in states[::-1][:40]]))  # another interning order
    batch = writer.rows_of(np.array([writer.packed.pack(s) for s in states], dtype=np.int64))
    parts = batch.parts()
    back = PackedRows.from_parts(parts)
    assert reader.states_of(back) == states
    assert [a.tolist() for a in reader.identities(back)] == [a.tolist() for a in writer.identities(batch)]
    fields = len(writer.packed.locals) + len(writer.packed.envs)
    assert len(back.contents) <= fields < len(states)  # one content per field of the batch
    assert len(parts[0]) == 16 + (4 + 4 * (1 + 2)) * len(states)  # the budget and each field's index: 4 bytes each
    half = batch.take(np.arange(len(states) // 2))
    assert reader.states_of(PackedRows.from_parts(half.parts())) == states[: len(states) // 2]
    crippled = PackedRows(back.rows, back.fps[1:], back.contents[1:])
    with pytest.raises(ValueError, match="has no content in the batch"):
        PackedCodec(model).values_of(crippled)


def test_packed_rows_parts_round_trip_wide_budgets_and_empty_batches():
    """The head's budget column is 4 bytes a state when every budget fits, else 8: both read back exactly, and
    so does an empty batch."""
    import numpy as np
    from kreassign.checker.spark.packed_codec import PackedRows

    fps = np.array([3, 7, 11, 2**63 + 5], dtype=np.uint64)
    contents = [b"a", b"b", b"c", b"d"]
    for budget in (np.array([0, 1, 2**32 - 1]), np.array([0, 2**32, 2**40 + 3])):
        rows = np.array([[b, f1, f2] for b, f1, f2 in zip(budget.tolist(), [3, 7, 2**63 + 5], [11, 3, 7])],
                        dtype=np.uint64)
        batch = PackedRows(rows, fps, contents)
        parts = batch.parts()
        back = PackedRows.from_parts(parts)
        assert back.rows.tolist() == rows.tolist()
        assert back.fps.tolist() == fps.tolist() and back.contents == contents
        assert len(parts[0]) == 16 + (4 if budget.max() < 2**32 else 8) * 3 + 4 * 2 * 3
    empty = PackedRows.from_parts(PackedRows(np.empty((0, 0), dtype=np.uint64), fps, contents).parts())
    assert len(empty) == 0 and PackedRows.concat([empty]).rows.shape == (0, 0)


def test_packed_candidates_travel_without_digests_and_dedupe_the_same():
    """Packed candidates carry no digests (candidates_bytes): the receiving task mixes them from the rows
    (dedupe_bytes' `identify`), and finds the same new states as from records with digests. Broken variant:
    a receiver that reads the empty digest part instead is refused (no digests for its states)."""
    from dataclasses import replace

    import numpy as np
    import pytest
    from kreassign.checker.spark import tasks as T
    from kreassign.checker.spark.packed_codec import PackedCodec

    model = build_model("reassignment", "kraft", replace(DEFAULT_SUITE["kraft"], brokers=3, rf=2))
    states = list(explore(model, keep_graph=True).graph.states)
    codec = PackedCodec(model)
    batch = codec.rows_of(np.array([codec.packed.pack(s) for s in states], dtype=np.int64))
    ident = codec.identities(batch)
    best = np.arange(len(states), dtype=np.int64) << T.K_BITS
    records = T.candidates_bytes(ident, best, batch, 1, -1, T.DigestVisited(), 1 << 20)[0]
    assert all(r[0] == b"" for r in records)
    with_digests = [(T.join_digests(*codec.identities(T.payloads_from_parts(r[2:]))), *r[1:]) for r in records]
    prev = np.arange(len(states), dtype=np.int64)
    got = T.dedupe_bytes(records, T.DigestVisited(), prev, codec.identities)
    want = T.dedupe_bytes(with_digests, T.DigestVisited(), prev)
    assert len(got) == len(states)
    assert got.keys.tolist() == want.keys.tolist()
    assert [a.tolist() for a in got.ident] == [a.tolist() for a in want.ident]
    assert codec.states_of(got.payloads) == codec.states_of(want.payloads)
    with pytest.raises(RuntimeError, match="0 digests for"):
        T.dedupe_bytes(records, T.DigestVisited(), prev)
