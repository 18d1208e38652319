"""The Spark engine's executor side: one BFS level of one hash bucket, as a pure function.

A level of a bucket is `dedupe_task` (the candidates the previous level sent to the bucket,
minus its visited runs: the level's new states, cached with the bucket) then `expand_task`
(check and expand them: the next level's candidates, one blob per target bucket, and for
the driver their discovery keys and the level's findings); `run_task` turns the new states
into the bucket's next visited run. checker/spark/rounds.py drives the levels; the driver
runs the same code in process for the first, small levels (`run_step`). Everything a task needs
comes with it (the job dict and a broadcast of the previous level's keys): the task keeps
no state between calls but the model cache, so a retried attempt computes exactly the
same output (checker/spark/rounds.py relies on it for fault tolerance).

Discovery keys (how BFS order survives distribution). Every state gets a key that orders
it within its level exactly as the embedded engine numbers it: `rank(parent) << 16 | k`,
where `rank(parent)` is the parent's position among the sorted keys of the previous level
and `k` the position of the edge in the parent's ordered successors. The key a state
keeps is the smallest one among the edges that reach it (the embedded engine keeps the
first discovery, which is the same edge). Keys need no coordination inside a level; the
driver sorts each level's keys once (ranks) and broadcasts them to the next level.

Two flavours of the same step: int64 states (numpy arrays all the way, a model's
`successor_arrays` kernel when it has one) and byte states (a codec from
checker/spark/codec.py; the visited set holds 128-bit digests as two uint64 columns).
"""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from itertools import islice, pairwise
from typing import Any

import numpy as np
from kreassign.checker.explore.protocol import checked_properties
from kreassign.checker.spark.codec import Codec, frame, unframe
from kreassign.checker.spark.codec_choice import codec_for
from kreassign.checker.spark.packed_codec import PackedRows
from pyspark.accumulators import AccumulatorParam
from pyspark.serializers import CPickleSerializer, pack_long

from kreassign.errors import InfraError

K_BITS = 16  # the edge index k of a discovery key
K_MASK = (1 << K_BITS) - 1
MAX_EDGES_PER_STATE = 1 << K_BITS
EXPAND_CHUNK = 1 << 16  # states a task expands at a time on the packed path (_successors)

# record tags: shuffled records (V, C) carry the target bucket as their key; the others -1
RUN, CANDIDATES, STATS, STATES, EDGES, LEVEL = "R", "C", "S", "N", "E", "L"

EMPTY_I64 = np.empty(0, dtype=np.int64)


# -- the model on an executor ----------------------------------------------------------------

_MODELS: OrderedDict[tuple[str, str], Runtime] = OrderedDict()
_MODELS_KEPT = 4


class Runtime:
    """A model rebuilt on an executor, with its codec, properties and kernel."""

    def __init__(self, model: Any, codec_name: str, sample: Any, codec: Codec | None = None):
        self.model = model
        self.codec: Codec = codec if codec is not None else codec_for(model, sample, codec_name)
        self.properties = {p.name: p for p in checked_properties(model)}
        self.kernel = callable(getattr(model, "successor_arrays", None)) and callable(getattr(model, "action_of", None))
        # the packed path (packed_codec.PackedCodec): a replica of the packed model, tabulated here from the reference
        self.packed = getattr(self.codec, "packed", None)
        self.packed_kinds: dict[int, str] = {}  # packed action id -> the kind name of its label
        from kreassign.checker.explore.protocol import Model

        self.within = model.within_boundary if type(model).within_boundary is not Model.within_boundary else None
        action_kind = getattr(model, "action_kind", None)
        self.kind = action_kind if callable(action_kind) else type
        self._kind_names: dict[Any, str] = {}
        self._tokens: dict[int, str] = {}

    def kind_name(self, action: Any) -> str:
        k = self.kind(action)
        name = self._kind_names.get(k)
        if name is None:
            name = self._kind_names[k] = k if isinstance(k, str) else k.__name__
        return name

    def token(self, action: Any) -> str:
        """The action as compact JSON (the graph's edge labels)."""
        return json.dumps(self.model.action_to_json(action), separators=(",", ":"), sort_keys=True, default=str)

    def kernel_token(self, action_id: int) -> str:
        t = self._tokens.get(action_id)
        if t is None:
            t = self._tokens[action_id] = self.token(self.model.action_of(action_id))
        return t


def build_model(recipe: dict[str, Any]) -> Any:
    """Rebuild a model from its recipe (checker/spark/recipes.py `model_recipe`)."""
    return build_model_and_codec(recipe)[0]


def build_model_and_codec(recipe: dict[str, Any]) -> tuple[Any, Codec | None]:
    """The model and, for a pickled one, the driver's codec (None: the executor builds its own)."""
    kind = recipe["kind"]
    if kind == "pickle":
        from pyspark import cloudpickle  # noqa: F401  (registers the reducers cloudpickle needs)

        return pickle.loads(recipe["data"])
    if kind == "symmetry":
        from kreassign.checker.models.symmetry import SymmetryReduced

        return SymmetryReduced(build_model(recipe["inner"])), None
    from kreassign.checker.models.registry import build_model as build

    return build(kind, recipe["profile"], recipe["bounds"]), None


def runtime(job: dict[str, Any], recipe_value: Any) -> Runtime:
    """The executor's model for this run, built once per Python worker (worker reuse keeps it)."""
    # keyed by the codec too: one recipe may run with the packed codec and, in another search of the same
    # session (e.g. one keeping the whole graph), with the object codec
    rid = (job["recipe_id"], job["codec"])
    rt = _MODELS.get(rid)
    if rt is None:
        recipe = recipe_value.value if hasattr(recipe_value, "value") else recipe_value
        model, codec = build_model_and_codec(recipe)
        rt = Runtime(model, job["codec"], model.init_states()[0], codec)
        _MODELS[rid] = rt
        while len(_MODELS) > _MODELS_KEPT:
            _MODELS.popitem(last=False)
    else:
        _MODELS.move_to_end(rid)
    return rt


# -- hashing to buckets ----------------------------------------------------------------------


def bucket_of(key: int) -> int:
    """The partitioner of the shuffles: records are keyed by their bucket already."""
    return key


def int_buckets(states: np.ndarray, buckets: int) -> np.ndarray:
    """Fibonacci hashing: the high half of state × 2**64/φ, modulo the number of buckets."""
    with np.errstate(over="ignore"):
        h = (states.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)
    return (h % np.uint64(buckets)).astype(np.int64)


def digest_buckets(lo: np.ndarray, buckets: int) -> np.ndarray:
    """Buckets of byte states, from their identities' low halves (the packed path's situation fingerprint:
    packed_codec.identities)."""
    return (lo % np.uint64(buckets)).astype(np.int64)


def split_digests(raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated 16-byte digests -> (hi, lo) uint64 columns."""
    both = np.frombuffer(raw, dtype=">u8").astype(np.uint64)
    return both[0::2].copy(), both[1::2].copy()


def join_digests(hi: np.ndarray, lo: np.ndarray) -> bytes:
    both = np.empty(2 * len(hi), dtype=">u8")
    both[0::2], both[1::2] = hi, lo
    return both.tobytes()


# -- payloads: a list of byte strings, or a packed batch (packed_codec.PackedRows) -------------


def join_payloads(payloads: list[bytes]) -> tuple[bytes, bytes]:
    """(offsets as int64 bytes, concatenated payloads)."""
    offsets = np.zeros(len(payloads) + 1, dtype=np.int64)
    if payloads:
        np.cumsum([len(p) for p in payloads], out=offsets[1:])
    return offsets.tobytes(), b"".join(payloads)


def split_payloads(offsets: bytes, data: bytes) -> list[bytes]:
    bounds = np.frombuffer(offsets, dtype=np.int64).tolist()
    view = memoryview(data)
    return [bytes(view[a:b]) for a, b in pairwise(bounds)]


def payload_parts(payloads: Any) -> tuple[bytes, ...]:
    """A batch of payloads as bytes: two parts (offsets, data) for a list, three for PackedRows."""
    return join_payloads(payloads) if isinstance(payloads, list) else payloads.parts()


def payloads_from_parts(parts: tuple[bytes, ...]) -> Any:
    return split_payloads(*parts) if len(parts) == 2 else PackedRows.from_parts(parts)


def take_payloads(payloads: Any, idx: np.ndarray) -> Any:
    return [payloads[i] for i in idx.tolist()] if isinstance(payloads, list) else payloads.take(idx)


def concat_payloads(batches: list[Any]) -> Any:
    if all(isinstance(b, list) for b in batches):
        return [p for b in batches for p in b]
    return PackedRows.concat([b for b in batches if not isinstance(b, list) or b])


# -- level blobs ---------------------------------------------------------------------------------
#
# int64 flavour, all little-endian numpy buffers:
#   candidates (states, parent key << 16 | k) visited: sorted states
#   level states (keys, states)               edges: (source keys, k, targets, token ids) + token table
# byte flavour: states are (hi, lo) digests plus payloads (`payload_parts`: offsets and payloads for a list,
# rows, fingerprints and contents for the packed path's PackedRows):
#   candidates (digests, parent key << 16 | k, *payload parts)
#   visited: digests sorted by (hi, lo)
#   level states (keys, digests, *payload parts)


class Level:
    """The new states of one bucket at one level: keys, identities, payloads (sorted by key)."""

    def __init__(self, keys: np.ndarray, ident: Any, payloads: Any):
        self.keys, self.ident, self.payloads = keys, ident, payloads

    def __len__(self) -> int:
        return len(self.keys)


def states_blob(level: Level, int64: bool) -> tuple[bytes, ...]:
    if int64:
        return (level.keys.tobytes(), level.payloads.tobytes())
    hi, lo = level.ident
    return (level.keys.tobytes(), join_digests(hi, lo), *payload_parts(level.payloads))


def level_from_blob(blob: tuple[bytes, ...], int64: bool) -> Level:
    keys = np.frombuffer(blob[0], dtype=np.int64)
    if int64:
        states = np.frombuffer(blob[1], dtype=np.int64)
        return Level(keys, states, states)
    return Level(keys, split_digests(blob[1]), payloads_from_parts(blob[2:]))


def record_slices(n: int, most: int) -> list[slice]:
    """Index ranges of at most `most` (SparkOptions.record_states), covering 0..n: a wide level of a large run
    is many records, not one array of hundreds of MB that the JVM copies whole (executors of 5 GB ran out of
    heap on 12-million-state records: kraft, 3 partitions, 5 brokers, RF 3)."""
    return [slice(a, min(a + most, n)) for a in range(0, n, most)] or [slice(0, 0)]


def select(level: Level, mask_or_index: np.ndarray, int64: bool) -> Level:
    """A sub-level (by boolean mask or index array)."""
    idx = np.flatnonzero(mask_or_index) if mask_or_index.dtype == bool else mask_or_index
    if int64:
        s = level.payloads[idx]
        return Level(level.keys[idx], s, s)
    hi, lo = level.ident
    return Level(level.keys[idx], (hi[idx], lo[idx]), take_payloads(level.payloads, idx))


# -- the visited set of a bucket -------------------------------------------------------------------
#
# A bucket's visited set is a list of sorted *runs*, one per level (plus one for the levels run
# on the driver): each run is written once, by the level that found its states, and stays
# cached with its bucket (the engine's `runs` RDDs); membership is a binary search per run, or
# in one merge of the runs made in the task where the candidates are many (`_merge_first`).
# Nothing is ever re-sorted, rewritten or shuffled again: a level costs the frontier's work
# plus reading 8 (int) or 16 (digest) bytes per visited state from the local block store.


def _merge_first(runs: list[Any], lengths: list[int], candidates: int) -> bool:
    """Search one merged run rather than each run? A search per run costs about candidates × the sum of
    log2(run) comparisons; merging costs about visited × log2(runs) (the runs are sorted: a stable sort merges
    them) plus candidates × log2(visited). (kraft, 2 partitions, 2,982,186 states: searching 19 runs took 15 of
    the tasks' 27 s.)"""
    if len(runs) < 3 or not candidates:
        return False
    visited = sum(lengths)
    per_run = candidates * sum(np.log2(max(n, 2)) for n in lengths)
    merged = visited * np.log2(len(runs)) + candidates * np.log2(max(visited, 2))
    return merged < per_run


def search_order(keys: np.ndarray) -> np.ndarray | None:
    """The order that sorts `keys` for a search, or None when they are sorted already. numpy's searchsorted
    starts each search where the last one ended when the keys increase: sorted keys walk a run once, keys in
    random order miss the cache at every step (1M keys into 3M: 0.53 s in random order, 0.09 s sorted, the
    sort included)."""
    if len(keys) < 2 or bool((keys[1:] >= keys[:-1]).all()):
        return None
    return np.argsort(keys)  # (not stable: a search does not care; numpy's default sort is 3-5x faster)


class IntVisited:
    def __init__(self, runs: Iterable[bytes] = ()):
        self.runs = [r for r in (np.frombuffer(b, dtype=np.int64) for b in runs) if len(r)]

    def unknown(self, states: np.ndarray) -> np.ndarray:
        """Mask of the states not visited."""
        order = search_order(states)
        if order is not None:
            new = np.empty(len(states), dtype=bool)
            new[order] = self.unknown(states[order])
            return new
        if _merge_first(self.runs, [len(r) for r in self.runs], len(states)):
            self.runs = [np.sort(np.concatenate(self.runs), kind="stable")]
        new = np.ones(len(states), dtype=bool)
        for run in self.runs:
            at = np.searchsorted(run, states)
            inside = at < len(run)
            new[inside] &= run[at[inside]] != states[inside]
        return new

    def add(self, states: np.ndarray) -> None:
        """A new run (the states must be sorted and not visited)."""
        if len(states):
            self.runs.append(states)

    def merged(self) -> bytes:
        return np.sort(np.concatenate(self.runs)).tobytes() if self.runs else b""


class DigestVisited:
    """Runs of (hi, lo) uint64 columns sorted by hi (a hi several identities share is scanned whole, so its
    entries may come in any order); exact 128-bit membership."""

    def __init__(self, runs: Iterable[bytes] = ()):
        self.runs = [split_digests(b) for b in runs if b]

    def unknown(self, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        order = search_order(hi)
        if order is not None:
            new = np.empty(len(hi), dtype=bool)
            new[order] = self.unknown(hi[order], lo[order])
            return new
        if _merge_first(self.runs, [len(r[0]) for r in self.runs], len(hi)):
            rhi = np.concatenate([r[0] for r in self.runs])
            order = np.argsort(rhi)  # by hi only: a tie (a shared 64-bit half) is scanned below
            self.runs = [(rhi[order], np.concatenate([r[1] for r in self.runs])[order])]
        new = np.ones(len(hi), dtype=bool)
        for rhi, rlo in self.runs:
            n = len(rhi)
            left = np.searchsorted(rhi, hi, side="left")
            hit = left < n
            hit[hit] = rhi[left[hit]] == hi[hit]
            new[hit] &= rlo[left[hit]] != lo[hit]
            tie = hit & (left + 1 < n)  # a 64-bit half shared by several identities: scan them all
            tie[tie] = rhi[left[tie] + 1] == hi[tie]
            for i in np.flatnonzero(tie).tolist():
                right = int(np.searchsorted(rhi, hi[i], side="right"))
                new[i] &= not bool(np.any(rlo[left[i] : right] == lo[i]))
        return new

    def add(self, hi: np.ndarray, lo: np.ndarray) -> None:
        if len(hi):
            order = np.argsort(hi)
            self.runs.append((hi[order], lo[order]))

    def merged(self) -> bytes:
        if not self.runs:
            return b""
        hi = np.concatenate([r[0] for r in self.runs])
        lo = np.concatenate([r[1] for r in self.runs])
        order = np.argsort(hi)
        return join_digests(hi[order], lo[order])


def run_blob(level: Level, int64: bool) -> bytes:
    """A level's identities as a sorted run (what later levels test membership against)."""
    if int64:
        return np.sort(level.payloads).tobytes()
    hi, lo = level.ident
    order = np.argsort(hi)  # (DigestVisited needs runs sorted by hi only: it scans a shared hi)
    return join_digests(hi[order], lo[order])


# -- deduplication of a bucket's candidates -----------------------------------------------------


def _ranked(best: np.ndarray, prev_keys: np.ndarray) -> np.ndarray:
    """Discovery keys from the winning (parent key << 16 | k) of each new state: the parent key
    becomes its rank among the previous level's keys (order-preserving, so the minimum taken on
    parent keys is the minimum on ranks)."""
    pk = best >> K_BITS
    order = search_order(pk)
    if order is None:
        rank = np.searchsorted(prev_keys, pk)
    else:
        rank = np.empty(len(pk), dtype=np.intp)
        rank[order] = np.searchsorted(prev_keys, pk[order])
    if len(pk) and (rank.max(initial=0) >= len(prev_keys) or not np.array_equal(prev_keys[rank], pk)):
        raise RuntimeError("a candidate's parent is not among the previous level's states (engine bug)")
    return (rank.astype(np.int64) << K_BITS) | (best & K_MASK)


def dedupe_int(cands: list[tuple[bytes, bytes]], visited: IntVisited, prev_keys: np.ndarray) -> Level:
    """The bucket's new states (smallest key per state, minus the visited), sorted by state."""
    if not cands:
        return Level(EMPTY_I64, EMPTY_I64, EMPTY_I64)
    states = np.concatenate([np.frombuffer(c[0], dtype=np.int64) for c in cands])
    best = np.concatenate([np.frombuffer(c[1], dtype=np.int64) for c in cands])
    uniq, best = _min_per_group(states, best, runs=True)  # each source sent its candidates sorted
    new = visited.unknown(uniq)
    states = uniq[new]
    return Level(_ranked(best[new], prev_keys), states, states)


def _min_per_group(values: np.ndarray, keys: np.ndarray, runs: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values (sorted) and the smallest key of each; `runs`: values are a few sorted runs."""
    if not len(values):
        return values, keys
    order = np.argsort(values, kind="stable" if runs else None)
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return ordered[starts], np.minimum.reduceat(keys[order], starts)


def digest_order(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """The order that sorts digests by (hi, lo): by hi alone (one uint64 key, numpy's default sort: a 3-key
    lexsort took 14x as long on 2M digests), by both only where digests sharing a hi have different lo's."""
    order = np.argsort(hi)
    h, low = hi[order], lo[order]
    tie = (h[1:] == h[:-1]) & (low[1:] != low[:-1])
    if tie.any():  # (a 64-bit half two identities share: rare)
        return np.lexsort((lo, hi))
    return order


def dedupe_bytes(cands: list[tuple[bytes, ...]], visited: DigestVisited, prev_keys: np.ndarray,
                 identify: Callable[[Any], tuple[np.ndarray, np.ndarray]] | None = None) -> Level:
    """The bucket's new states: the smallest key per digest, minus the visited. A record without digests
    (packed rows: candidates_bytes) has them computed from its payloads by `identify` (the codec's)."""
    if not cands:
        return Level(EMPTY_I64, (np.empty(0, np.uint64), np.empty(0, np.uint64)), [])
    his, los, bests, batches = [], [], [], []
    for c in cands:
        batch = payloads_from_parts(c[2:])
        hi, lo = split_digests(c[0]) if c[0] or identify is None else identify(batch)
        if len(hi) != len(batch):
            raise RuntimeError(f"a candidate record has {len(hi)} digests for {len(batch)} states (engine bug)")
        his.append(hi)
        los.append(lo)
        bests.append(np.frombuffer(c[1], dtype=np.int64))
        batches.append(batch)
    payloads = concat_payloads(batches)
    hi, lo, best = (np.concatenate(x) for x in (his, los, bests))
    order = digest_order(hi, lo)
    hi, lo, best = hi[order], lo[order], best[order]
    starts = np.flatnonzero(np.concatenate(([True], (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1]))))
    sizes = np.diff(np.append(starts, len(best)))
    idx = np.flatnonzero(best == np.repeat(np.minimum.reduceat(best, starts), sizes))  # each digest's smallest key
    group = np.repeat(np.arange(len(starts)), sizes)[idx]
    idx = idx[np.concatenate(([True], group[1:] != group[:-1]))]  # once (a key sent twice is still one state)
    hi, lo, best, src = hi[idx], lo[idx], best[idx], order[idx]
    new = visited.unknown(hi, lo)
    hi, lo, best, src = hi[new], lo[new], best[new], src[new]
    return Level(_ranked(best, prev_keys), (hi, lo), take_payloads(payloads, src))


# -- expansion --------------------------------------------------------------------------------------


class Findings:
    """What one task found: the smallest key of each hit, per property (the driver takes the minimum)."""

    def __init__(self) -> None:
        self.violations: dict[str, int] = {}  # always property -> key of the first violating state
        self.examples: dict[str, int] = {}  # sometimes property -> key of the first example
        self.edge_violations: dict[str, tuple[int, int]] = {}  # transition property -> (source key, k)
        self.deadlock: int | None = None
        self.transitions = 0
        self.kinds: dict[str, int] = {}

    def note_state(self, table: dict[str, int], name: str, key: int) -> None:
        if name not in table or key < table[name]:
            table[name] = key

    def note_edge(self, name: str, key: int, k: int) -> None:
        if name not in self.edge_violations or (key, k) < self.edge_violations[name]:
            self.edge_violations[name] = (key, k)

    def to_json(self) -> dict[str, Any]:
        return {"violations": self.violations, "examples": self.examples,
                "edge_violations": {n: list(v) for n, v in self.edge_violations.items()},
                "deadlock": self.deadlock, "transitions": self.transitions, "kinds": self.kinds}


def check_states_int(rt: Runtime, level: Level, job: dict[str, Any], found: Findings) -> None:
    states = level.payloads
    if not len(states):
        return
    for name in job["always"]:
        hits = ~_holds(rt.properties[name], states)
        if hits.any():
            found.note_state(found.violations, name, int(level.keys[hits].min()))
    for name in job["sometimes"]:
        hits = _holds(rt.properties[name], states)
        if hits.any():
            found.note_state(found.examples, name, int(level.keys[hits].min()))


def _holds(prop: Any, states: np.ndarray) -> np.ndarray:
    vectorised = prop.extra.get("array_predicate")
    if vectorised is not None:
        return np.asarray(vectorised(states), dtype=bool)
    return np.fromiter(map(prop.predicate, states.tolist()), dtype=bool, count=len(states))


MAX_RUNS = 4096  # _edge_k: runs beyond which a stable sort is cheaper than one pass per run


def _edge_k(positions: np.ndarray, sources: int) -> np.ndarray:
    """For each edge, its index among the edges of the same source (in output order).

    A kernel emits its edges in blocks (one per action), each in increasing source order, so
    the output is a few strictly increasing runs: one counter per source, bumped run by run,
    gives k in linear time. Otherwise a stable sort does it."""
    n = len(positions)
    k = np.empty(n, dtype=np.int64)
    if not n:
        return k
    cuts = np.flatnonzero(positions[1:] <= positions[:-1]) + 1
    if len(cuts) < MAX_RUNS:
        counter = np.zeros(sources, dtype=np.int64)
        for lo, hi in zip(np.concatenate(([0], cuts)).tolist(), np.concatenate((cuts, [n])).tolist()):
            run = positions[lo:hi]
            k[lo:hi] = counter[run]
            counter[run] += 1  # positions in a strictly increasing run are distinct
        return k
    order = np.argsort(positions, kind="stable")
    counts = np.bincount(positions, minlength=sources)
    starts = np.cumsum(counts) - counts
    k[order] = np.arange(n) - np.repeat(starts, counts)
    return k


def expand_int(rt: Runtime, level: Level, job: dict[str, Any], found: Findings) -> tuple[np.ndarray, ...]:
    """Every edge out of the level's states: (source keys, k, targets, action ids or -1)."""
    states, keys = level.payloads, level.keys
    if rt.within is not None and len(states):
        inside = np.fromiter(map(rt.within, states.tolist()), dtype=bool, count=len(states))
        states, keys = states[inside], keys[inside]
    if rt.kernel:
        positions, ids, nexts = rt.model.successor_arrays(states)
        positions = np.asarray(positions, dtype=np.int64)
        ids = np.asarray(ids, dtype=np.int64)
        nexts = np.asarray(nexts, dtype=np.int64)
        k = _edge_k(positions, len(states))
        for action_id, n in enumerate(np.bincount(ids).tolist() if len(ids) else []):
            if n:
                name = rt.kind_name(rt.model.action_of(action_id))
                found.kinds[name] = found.kinds.get(name, 0) + n
        actions = None
    else:  # int states without a kernel: the protocol, one state at a time
        pos_l, k_l, next_l, actions = [], [], [], []
        for i, s in enumerate(states.tolist()):
            for j, (a, n) in enumerate(rt.model.successors(s)):
                pos_l.append(i)
                k_l.append(j)
                next_l.append(n)
                actions.append(a)
                name = rt.kind_name(a)
                found.kinds[name] = found.kinds.get(name, 0) + 1
        positions = np.array(pos_l, dtype=np.int64)
        k = np.array(k_l, dtype=np.int64)
        nexts = np.array(next_l, dtype=np.int64)
        ids = np.full(len(nexts), -1, dtype=np.int64)
    if len(k) and k.max() >= MAX_EDGES_PER_STATE:
        raise InfraError(f"a state has more than {MAX_EDGES_PER_STATE - 1} successors: beyond the Spark engine's "
                             "discovery keys (use the embedded engine)")
    found.transitions += len(nexts)
    degree = np.bincount(positions, minlength=len(states)) if len(states) else EMPTY_I64
    if job["check_deadlock"] and found.deadlock is None:
        stuck = degree == 0
        if stuck.any():
            found.deadlock = int(keys[stuck].min())
    src = keys[positions] if len(positions) else EMPTY_I64
    if job["transition"]:
        order = np.lexsort((k, src))  # edges in BFS order: the first violation is the shortest
        pending = list(job["transition"])
        for e in order.tolist():
            if not pending:
                break
            s, n = int(states[positions[e]]), int(nexts[e])
            a = rt.model.action_of(int(ids[e])) if actions is None else actions[e]
            for name in list(pending):
                if not rt.properties[name].predicate(s, a, n):
                    found.note_edge(name, int(src[e]), int(k[e]))
                    pending.remove(name)
    tokens = None
    if job["keep_graph"]:
        if actions is None:
            tokens = [rt.kernel_token(i) for i in ids.tolist()]
        else:
            tokens = [rt.token(a) for a in actions]
    return src, k, nexts, tokens


def _by_bucket(owner: np.ndarray, buckets: int) -> list[np.ndarray]:
    """Indices of each bucket's items, each in the original order (a linear radix sort)."""
    order = np.argsort(owner.astype(np.uint16 if buckets <= 1 << 16 else np.int64), kind="stable")
    return np.split(order, np.cumsum(np.bincount(owner, minlength=buckets))[:-1])


def candidates_int(src: np.ndarray, k: np.ndarray, nexts: np.ndarray, buckets: int, own: int,
                   visited: IntVisited, most: int) -> dict[int, list[tuple[bytes, bytes]]]:
    """Map-side combine: each distinct successor once (sorted), with its smallest parent key << 16 | k,
    split by bucket (records of at most `most` states); those of this task's own bucket that it has visited
    already are dropped here."""
    if not len(nexts):
        return {}
    uniq, best = _min_per_group(nexts, (src << K_BITS) | k)
    out = {}
    for b, idx in enumerate(_by_bucket(int_buckets(uniq, buckets), buckets)):
        if b == own and len(idx):
            idx = idx[visited.unknown(uniq[idx])]
        if len(idx):
            out[b] = [(uniq[i].tobytes(), best[i].tobytes()) for i in (idx[part] for part in record_slices(len(idx), most))]
    return out


def check_and_expand_bytes(rt: Runtime, level: Level, job: dict[str, Any], found: Findings, expand: bool):
    """Decode each new state (in key order), check it, expand it; successors deduplicated in the task."""
    codec, model = rt.codec, rt.model
    props = rt.properties
    always = [(n, props[n].predicate) for n in job["always"]]
    sometimes = [(n, props[n].predicate) for n in job["sometimes"]]
    pending_edges = [(n, props[n].predicate) for n in job["transition"]]
    keep_graph = job["keep_graph"]
    check_deadlock = job["check_deadlock"]
    within = rt.within
    seen: dict[Any, int] = {}  # successor object -> index in the candidate lists
    idents: list[bytes] = []
    cand_best: list[int] = []  # parent key << 16 | k of each distinct successor
    payloads: list[bytes] = []
    edges_src: list[int] = []
    edges_k: list[int] = []
    edges_to: list[int] = []
    tokens: list[str] = []
    order = np.argsort(level.keys, kind="stable").tolist()
    keys = level.keys.tolist()
    for i in order:
        key = keys[i]
        state = codec.decode(level.payloads[i])
        for name, pred in list(always):
            if not pred(state):
                found.note_state(found.violations, name, key)
                always.remove((name, pred))
        for name, pred in list(sometimes):
            if pred(state):
                found.note_state(found.examples, name, key)
                sometimes.remove((name, pred))
        if not expand or (within is not None and not within(state)):
            continue
        degree = 0
        for k, (action, nxt) in enumerate(model.successors(state)):
            degree += 1
            kind = rt.kind_name(action)
            found.kinds[kind] = found.kinds.get(kind, 0) + 1
            for name, pred in list(pending_edges):
                if not pred(state, action, nxt):
                    found.note_edge(name, key, k)
                    pending_edges.remove((name, pred))
            j = seen.get(nxt)
            if j is None:
                ident, payload = codec.encode(nxt)
                j = seen[nxt] = len(idents)
                idents.append(ident)
                payloads.append(payload)
                cand_best.append(key << K_BITS | k)
            if keep_graph:
                edges_src.append(key)
                edges_k.append(k)
                edges_to.append(j)
                tokens.append(rt.token(action))
        if degree >= MAX_EDGES_PER_STATE:
            raise InfraError(f"a state has more than {MAX_EDGES_PER_STATE - 1} successors: beyond the Spark engine's "
                             "discovery keys (use the embedded engine)")
        found.transitions += degree
        if degree == 0 and check_deadlock and (found.deadlock is None or key < found.deadlock):
            found.deadlock = key
    ident = split_digests(b"".join(idents)) if idents else (np.empty(0, np.uint64), np.empty(0, np.uint64))
    return ident, np.array(cand_best, dtype=np.int64), payloads, (edges_src, edges_k, edges_to, tokens)


def check_and_expand_packed(rt: Runtime, level: Level, job: dict[str, Any], found: Findings, expand: bool):
    """check_and_expand_bytes on the packed path: the level's states read into the executor's replica of the
    packed model (packed_codec.PackedCodec), every property decided from the table's bits (the `PackedModel` protocol,
    as checker/packed/bfs.py decides them, exactly where a bit cannot say), the edges from its tabulated
    successors, and the distinct successors written back as payloads. Same output as the object path: the
    successors come in the reference's order (checker/packed/reassignment.py), so keys and k are the same."""
    codec = rt.codec
    empty = ((np.empty(0, np.uint64), np.empty(0, np.uint64)), EMPTY_I64, [], ([], [], [], []))
    uniq, best = check_and_expand_values(rt, codec.values_of(level.payloads), level.keys, job, found, expand)
    if not len(uniq):
        return empty
    rows = codec.rows_of(uniq)
    return codec.identities(rows), best, rows, ([], [], [], [])


def check_and_expand_values(rt: Runtime, values: np.ndarray, keys: np.ndarray, job: dict[str, Any], found: Findings,
                            expand: bool) -> tuple[np.ndarray, np.ndarray]:
    """The packed path's step on the replica's own values (`check_and_expand_packed` without the rows; the
    resident layout keeps its states as values, checker/spark/resident/bucket.py): the findings, and each
    distinct successor value (sorted) with its smallest parent key << 16 | k."""
    packed = rt.packed
    empty = (EMPTY_I64, EMPTY_I64)
    if not len(values):
        return empty
    if job["always"] or job["sometimes"]:
        always, _, some = packed.state_bits(values)
        for name in job["always"]:
            bit = bit_of(packed.always, name)
            held = packed.holds(packed.always_forms, bit, always)
            if held is None:  # the base fails there: the exact property decides (checker/packed/bfs.py)
                bad = np.flatnonzero(((always >> bit) & 1) == 0)
                held = np.ones(len(values), dtype=bool)
                held[bad] = [packed.state_holds(bit, int(values[i])) for i in bad.tolist()]
            if not held.all():
                found.note_state(found.violations, name, int(keys[~held].min()))
        for name in job["sometimes"]:
            hits = ((some >> bit_of(packed.sometimes, name)) & 1).astype(bool)
            if hits.any():
                found.note_state(found.examples, name, int(keys[hits].min()))
    if not expand:
        return empty
    if rt.within is not None:
        inside = np.fromiter((rt.within(packed.unpack(v)) for v in values.tolist()), dtype=bool, count=len(values))
        values, keys = values[inside], keys[inside]
    pos, ids, nexts, ok = _successors(packed, values)
    k = _edge_k(pos, len(values))
    if len(k) and k.max() >= MAX_EDGES_PER_STATE:
        raise InfraError(f"a state has more than {MAX_EDGES_PER_STATE - 1} successors: beyond the Spark engine's "
                         "discovery keys (use the embedded engine)")
    found.transitions += len(nexts)
    for action_id, n in enumerate(np.bincount(ids).tolist() if len(ids) else []):
        if n:
            name = rt.packed_kinds.get(action_id)
            if name is None:  # the kind of the label the model's own step gives (a Transition), as the object path
                e = int(np.argmax(ids == action_id))
                label = rt.model.step(packed.unpack(int(values[pos[e]])), packed.action_of(action_id))[1]
                name = rt.packed_kinds[action_id] = rt.kind_name(label)
            found.kinds[name] = found.kinds.get(name, 0) + n
    if job["check_deadlock"] and found.deadlock is None:
        stuck = np.bincount(pos, minlength=len(values)) == 0
        if stuck.any():
            found.deadlock = int(keys[stuck].min())
    src = keys[pos] if len(pos) else EMPTY_I64
    for name in job["transition"]:
        bit = bit_of(packed.edge_props, name)
        held = packed.holds(packed.edge_forms, bit, ok)
        if held is None:
            bad = np.flatnonzero(((ok >> bit) & 1) == 0)
            held = np.ones(len(ok), dtype=bool)
            held[bad] = [packed.edge_holds(bit, int(values[pos[e]]), int(ids[e]), int(nexts[e])) for e in bad.tolist()]
        bad = np.flatnonzero(~held)
        if len(bad):
            first = bad[np.lexsort((k[bad], src[bad]))[0]]
            found.note_edge(name, int(src[first]), int(k[first]))
    if not len(nexts):
        return empty
    return _min_per_group(nexts, (src << K_BITS) | k)


def _successors(packed: Any, values: np.ndarray) -> tuple[np.ndarray, ...]:
    """packed.successor_arrays over the states a chunk at a time, as the embedded engine expands them
    (checker/packed/bfs.py): its temporaries (a dozen arrays per edge) stay bounded however wide the level."""
    parts = []
    for at in range(0, len(values), EXPAND_CHUNK):
        pos, ids, nexts, ok = packed.successor_arrays(values[at : at + EXPAND_CHUNK])
        parts.append((np.asarray(pos, dtype=np.int64) + at, ids, nexts, ok))
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate(column) for column in zip(*parts))


def bit_of(props: Any, name: str) -> int:
    for bit, p in enumerate(props):
        if p.name == name:
            return bit
    raise KeyError(name)


def candidates_bytes(ident: tuple[np.ndarray, np.ndarray], best: np.ndarray, payloads: Any,
                     buckets: int, own: int, visited: DigestVisited, most: int) -> dict[int, list[tuple[bytes, ...]]]:
    """Split by bucket (already one per distinct successor); the own bucket's visited ones dropped."""
    hi, lo = ident
    if not len(hi):
        return {}
    packed = isinstance(payloads, PackedRows)
    out = {}
    for b, idx in enumerate(_by_bucket(digest_buckets(lo, buckets), buckets)):
        if b == own and len(idx):
            idx = idx[visited.unknown(hi[idx], lo[idx])]
        # (packed rows carry their identities: the receiver mixes them again rather than read 16 more bytes a state)
        out[b] = [(b"" if packed else join_digests(hi[i], lo[i]), best[i].tobytes(),
                   *payload_parts(take_payloads(payloads, i)))
                  for i in (idx[part] for part in record_slices(len(idx), most)) if len(i)]
    return {b: blobs for b, blobs in out.items() if blobs}


def _token_table(tokens: list[str]) -> tuple[np.ndarray, list[str]]:
    table: dict[str, int] = {}
    ids = np.fromiter((table.setdefault(t, len(table)) for t in tokens), dtype=np.int32, count=len(tokens))
    return ids, list(table)


# -- the step -------------------------------------------------------------------------------------
#
# A level of a bucket is two tasks chained in one Spark task (rounds.py): `dedupe_task` turns the
# candidates sent to the bucket into its new states (against its visited runs) and
# `expand_task` checks and expands them into the next level's candidates. The driver runs
# both in turn, in process, for the first small levels (`run_step`).


def read_records(records: Iterable[tuple[int, tuple[str, Any]]], int64: bool,
                 seed_level: int | None = None) -> tuple[list[bytes], list[Any], list[Level]]:
    """(visited runs, candidate blobs, seed levels) of a bucket's input records."""
    runs: list[bytes] = []
    cands: list[Any] = []
    seeds: list[Level] = []
    for _, (tag, value) in records:
        if tag == RUN:
            runs.append(value)
        elif tag == CANDIDATES:
            cands.append(value)
        elif tag == LEVEL and value[0] == seed_level:
            seeds.append(level_from_blob(value[1], int64))
    return runs, cands, seeds


def dedupe(rt: Runtime, runs: list[bytes], cands: list[Any], seeds: list[Level], job: dict[str, Any],
           prev_keys: Any) -> tuple[Level, Any]:
    """The bucket's new states of this level and its visited set (the runs); "seed" mode: the
    states given with their final keys (initial states, or a checkpoint's last level)."""
    int64 = rt.codec.int64
    visited = IntVisited(runs) if int64 else DigestVisited(runs)
    if job["mode"] == "seed":
        return concat_levels(seeds, int64), visited
    pk = np.frombuffer(prev_keys.value, dtype=np.int64) if prev_keys is not None else EMPTY_I64
    new = dedupe_int(cands, visited, pk) if int64 else dedupe_bytes(cands, visited, pk, getattr(rt.codec, "identities", None))
    return new, visited


def expand(bucket: int, rt: Runtime, new: Level, job: dict[str, Any],
           own: Any) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Check and expand a bucket's new states: the candidates for each bucket (target >= 0), then
    the findings (STATS), the states (STATES) and edges (EDGES) for the driver (target -1).
    `own`: states of this bucket known visited, dropped from its own candidates."""
    int64 = rt.codec.int64
    found = Findings()
    sub = job if job.get("check", True) else {**job, "always": [], "sometimes": []}
    edges = None
    if int64:
        check_states_int(rt, new, sub, found)
        src, k, nexts, tokens = expand_int(rt, new, job, found)
        for b, blobs in candidates_int(src, k, nexts, job["buckets"], bucket, own, job["record_states"]).items():
            for blob in blobs:
                yield b, (CANDIDATES, blob)
        if job["keep_graph"]:
            ids, table = _token_table(tokens)
            edges = (src.tobytes(), k.astype(np.uint16).tobytes(), nexts.tobytes(), ids.tobytes(),
                     json.dumps(table).encode())
    else:
        step = check_and_expand_packed if rt.packed is not None else check_and_expand_bytes
        ident, best, payloads, (e_src, e_k, e_to, tokens) = step(rt, new, sub, found, True)
        for b, blobs in candidates_bytes(ident, best, payloads, job["buckets"], bucket, own,
                                          job["record_states"]).items():
            for blob in blobs:
                yield b, (CANDIDATES, blob)
        if job["keep_graph"]:
            ids, table = _token_table(tokens)
            to = np.array(e_to, dtype=np.int64)
            targets = join_digests(ident[0][to], ident[1][to])
            edges = (np.array(e_src, dtype=np.int64).tobytes(), np.array(e_k, dtype=np.uint16).tobytes(),
                     targets, ids.tobytes(), json.dumps(table).encode())
    yield -1, (STATS, {"bucket": bucket, **found.to_json()})
    if job["keep_graph"]:
        yield -1, (STATES, (bucket, states_blob(new, int64)))
    if edges is not None:
        yield -1, (EDGES, (bucket, edges))


def new_stats(bucket: int, new: Level) -> dict[str, Any]:
    return {"bucket": bucket, "new": len(new), "keys": new.keys.tobytes()}


def run_step(bucket: int, records: Iterable[tuple[int, tuple[str, Any]]], job: dict[str, Any],
             recipe: Any, prev_keys: Any) -> Iterator[tuple[int, tuple[str, Any]]]:
    """One level of one bucket on the driver (the first, small levels): `dedupe` then `expand`.
    Yields the bucket's visited runs (its old ones and the level's new one) and the candidates
    for the next level (target >= 0), and one STATS record (new states, keys and findings),
    STATES (with job["keep_states"]) and EDGES for the driver (target -1). `job["mode"]` is
    "seed" (states with their final keys), "expand", or "count" (only count the new states)."""
    rt = runtime(job, recipe)
    int64 = rt.codec.int64
    runs, cands, seeds = read_records(records, int64, job.get("seed_level"))
    new, _ = dedupe(rt, runs, cands, seeds, job, prev_keys)
    if job["mode"] == "count":
        yield -1, (STATS, new_stats(bucket, new))
        return
    for r in runs:
        yield bucket, (RUN, r)
    if len(new):
        yield bucket, (RUN, run_blob(new, int64))
    own = IntVisited([*runs, run_blob(new, int64)]) if int64 else DigestVisited([*runs, run_blob(new, int64)])
    for target, record in expand(bucket, rt, new, job, own):
        if target >= 0:
            yield target, record
        elif record[0] == STATS:
            yield -1, (STATS, {**new_stats(bucket, new), **record[1]})
        elif record[0] != STATES:
            yield target, record
    if job["keep_states"]:
        yield -1, (STATES, (bucket, states_blob(new, int64)))


def dedupe_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any, prev_keys: Any,
                results: Any) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Spark: a bucket's new states of the level, one LEVEL record (cached with the bucket: the
    level's `states` RDD); their count and keys go to the driver through `results`."""
    rt = runtime(job, recipe)
    _t = _Timer(bucket, job)
    runs, cands, seeds = read_records(records, rt.codec.int64, job.get("seed_level"))
    _t("read")  # (the visited runs and the candidates, streamed from the JVM)
    new, _ = dedupe(rt, runs, cands, seeds, job, prev_keys)
    _t("dedupe", len(new))
    if job["mode"] == "count":  # (otherwise expand_task reports them: a retried task may find these states cached)
        results.add({(job["level"], bucket, "new"): {STATS: [new_stats(bucket, new)]}})
    elif len(new):
        for part in record_slices(len(new), job["record_states"]):
            chunk = select(new, np.arange(part.start, part.stop), rt.codec.int64)
            yield bucket, (LEVEL, (job["level"], states_blob(chunk, rt.codec.int64)))


def executor_id() -> str:
    """Which executor runs this task: its host and its files directory (one per executor)."""
    import os
    import socket

    from pyspark import SparkFiles

    try:
        root = os.path.abspath(SparkFiles.getRootDirectory())
    except Exception:  # noqa: BLE001 - not in a Spark task
        root = "?"
    return f"{socket.gethostname()}:{root}"


def run_task(bucket: int, records: Iterable[Any], int64: bool, most: int) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Spark: a level's states of a bucket as a sorted run of identities (the level's `runs` RDD,
    cached with the bucket; later levels test membership against it)."""
    levels = [level_from_blob(value[1], int64) for _, (tag, value) in records if tag == LEVEL]
    if levels:
        run = run_blob(concat_levels(levels, int64), int64)
        width = 8 if int64 else 16
        for part in record_slices(len(run) // width, most):  # (each slice of a sorted run is a sorted run)
            yield bucket, (RUN, run[part.start * width : part.stop * width])


def expand_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any,
                results: Any) -> Iterator[bytes]:
    """Spark: check and expand a bucket's new states (its LEVEL record); the candidates come out in
    PySpark's shuffle-writer form (pack_long(bucket), pickled batch), so that the next level's
    shuffle runs in the JVM without a Python stage; the findings go to `results`."""
    rt = runtime(job, recipe)
    _t = _Timer(bucket, job)
    levels = [level_from_blob(value[1], rt.codec.int64) for _, (tag, value) in records if tag == LEVEL]
    new = concat_levels(levels, rt.codec.int64)
    own = IntVisited([run_blob(new, True)]) if rt.codec.int64 else DigestVisited([run_blob(new, False)])
    to: dict[int, list[Any]] = {}
    found: dict[str, list[Any]] = {}
    shuffled = 0
    for target, (tag, value) in expand(bucket, rt, new, job, own):
        if target >= 0:
            to.setdefault(target, []).append((target, (tag, value)))
            shuffled += sum(len(part) for part in value)
        else:
            found.setdefault(tag, []).append(value)
    found[STATS][0].update(new_stats(bucket, new), shuffled=shuffled)
    found[STATS][0]["executors"] = [executor_id()]
    _t("expand", len(new), rt)
    for target, items in to.items():
        for item in items:  # (one pickled batch per record: the JVM holds one record at a time, not a bucket's all)
            yield pack_long(target)
            yield _SERIALIZER.dumps([item])
    results.add({(job["level"], bucket, "expand"): found})


class _Timer:
    """job["task_timings"] (SparkOptions.task_timings): each task's phases on stderr (development aid)."""

    def __init__(self, bucket: int, job: dict[str, Any]):
        import time

        self.on = bool(job.get("task_timings"))
        self.clock = time.perf_counter
        self.last = self.clock()
        self.parts: list[str] = [f"L{job.get('level')} b{bucket}"]

    def __call__(self, phase: str, n: int | None = None, rt: Runtime | None = None) -> None:
        if not self.on:
            return
        now = self.clock()
        self.parts.append(f"{phase} {now - self.last:.3f}")
        self.last = now
        if n is not None:
            import os
            import sys

            # the Python worker, and the situations its replica has tabulated so far (each worker has its own)
            where = f"pid={os.getpid()}"
            if rt is not None and rt.packed is not None:
                where += f" tabulated={rt.packed.installed}"
            print(" ".join(self.parts), f"states={n}", where, file=sys.stderr, flush=True)


class Results(AccumulatorParam):
    """The channel of a level's findings to the driver: {(level, bucket): {tag: [values]}}.

    Merging is by key, so it is idempotent: Spark adds the updates of successful attempts
    only, and a task run twice (a lost executor, speculation) writes the same value again."""

    def zero(self, value: Any) -> dict:
        return {}

    def addInPlace(self, a: dict, b: dict) -> dict:
        a.update(b)
        return a


_SERIALIZER = CPickleSerializer()


def saved_states(records: Iterable[Any], level: int) -> Iterator[str]:
    """Checkpoints: a level's states (its `states` RDD's LEVEL records), one text line per bucket:
    "<tag>:<level>:<bucket> <base64 of the packed blob>" (text files: one write job, no pickles)."""
    for bucket, (tag, value) in records:
        if tag == LEVEL:
            yield saved_line(STATES, level, (bucket, value[1]))


def saved_line(tag: str, level: int, value: tuple[int, tuple[bytes, ...]]) -> str:
    bucket, blob = value
    return f"{tag}:{level}:{bucket} {base64.b64encode(frame(list(blob))).decode()}"


def read_saved(line: str) -> tuple[str, bytes]:
    name, data = line.split(" ", 1)
    return name, base64.b64decode(data)


def saved_blob(record: tuple[str, bytes], keys_only: bool) -> tuple[str, int, tuple[bytes, ...]]:
    """(tag, level, parts) of a saved blob; `keys_only`: of a level's states, the discovery keys alone."""
    name, data = record
    tag, level, _ = name.split(":")
    parts = unframe(bytes(data))
    return tag, int(level), tuple(parts[:1] if keys_only and tag == STATES else parts)


def concat_levels(levels: list[Level], int64: bool) -> Level:
    """Several levels' states (or one level's parts) as one Level, in the order given."""
    if not levels:
        if int64:
            return Level(EMPTY_I64, EMPTY_I64, EMPTY_I64)
        return Level(EMPTY_I64, (np.empty(0, np.uint64), np.empty(0, np.uint64)), [])
    keys = np.concatenate([lv.keys for lv in levels])
    if int64:
        s = np.concatenate([lv.payloads for lv in levels])
        return Level(keys, s, s)
    hi = np.concatenate([lv.ident[0] for lv in levels])
    lo = np.concatenate([lv.ident[1] for lv in levels])
    return Level(keys, (hi, lo), concat_payloads([lv.payloads for lv in levels]))


def rebucket(record: tuple[str, bytes], buckets: int, int64: bool) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Resume: a checkpointed level blob ("N:<level>:<bucket>") split into the current buckets."""
    name, blob = record
    _, level_no, _ = name.split(":")
    level = level_from_blob(tuple(unframe(blob)), int64)
    if int64:
        owner = int_buckets(level.payloads, buckets)
    else:
        owner = digest_buckets(level.ident[1], buckets)
    for b in range(buckets):
        part = select(level, owner == b, int64)
        if len(part):
            yield b, (LEVEL, (int(level_no), states_blob(part, int64)))


def kth_successor(rt_model: Any, state: Any, k: int, kernel: bool) -> tuple[Any, Any]:
    """The k-th (action, next state) of a state, in the order the engine numbered its edges."""
    if kernel:
        _, ids, nexts = rt_model.successor_arrays(np.array([state], dtype=np.int64))
        return rt_model.action_of(int(ids[k])), int(nexts[k])
    return next(islice(rt_model.successors(state), k, None))


def recipe_id(recipe_bytes: bytes) -> str:
    return hashlib.sha1(recipe_bytes).hexdigest()[:16]
