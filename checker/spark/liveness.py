"""Liveness on Spark without the state graph on the driver: a distributed backward fixpoint.

An `eventually` property fails when some reachable state cannot reach a goal through the
environment's edges (checker/explore/liveness.py: AG EF goal). On Spark the edges never leave
the executors:

1. `edges_task` expands every level's states again (cached with their buckets) and sends each
   allowed edge, reversed (target -> source), to the bucket that owns its target: the reverse
   graph, cached and co-partitioned with the states (one shuffle, once per run);
2. per property, a BFS over the reverse graph from the goal states (`goal_task`), level by
   level exactly like the search: `reach_task` keeps the sources not yet known to reach a goal
   (a new cached run per bucket), `preds_task` sends their predecessors to their owners;
3. `stuck_task` gives each bucket's first state (smallest level, then discovery key) that is
   in no run: the first stuck state in the embedded engine's BFS order. The driver then builds
   the counterexample as the embedded engine does (`liveness.lasso`): the shortest path the
   keys encode, then the loop the stuck state is trapped in, found by exploring on the driver
   only what the stuck state reaches through allowed edges (all stuck states themselves).

Per property the driver holds 8 bytes per state of each level's keys (as the search does) and
the trap region; the executors hold the reverse edges (about 8 or 16 bytes each: the source, the target once) and the runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

import networkx as nx
import numpy as np
from kreassign.checker.explore import liveness
from kreassign.checker.explore.bfs import Path, StateGraph
from kreassign.checker.spark import tasks as T

REVERSE = "V"  # a bucket's reversed allowed edges: (targets, sources) blobs


# -- identities as numpy columns ---------------------------------------------------------------


def _idents(level: T.Level, int64: bool) -> np.ndarray:
    """A level's identities as one column: int64 states, or 16-byte digests as a structured (hi, lo)."""
    if int64:
        return level.payloads
    return _digest_column(*level.ident)


def _digest_column(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    out = np.empty(len(hi), dtype=[("hi", np.uint64), ("lo", np.uint64)])
    out["hi"], out["lo"] = hi, lo
    return out


def _owner(column: np.ndarray, buckets: int, int64: bool) -> np.ndarray:
    return T.int_buckets(column, buckets) if int64 else T.digest_buckets(column["lo"], buckets)


def _sort_order(column: np.ndarray) -> np.ndarray:
    """The order that sorts a column: int64 values, or digests by (hi, lo) as uint64 keys (numpy compares
    structured values field by field, 5-10 times slower)."""
    if column.dtype.names is None:
        return np.argsort(column, kind="stable")
    hi, lo = column["hi"], column["lo"]
    order = np.argsort(hi, kind="stable")  # by the high half alone: then ties, where the low halves differ
    h, low = hi[order], lo[order]
    if ((h[1:] == h[:-1]) & (low[1:] != low[:-1])).any():  # (a 64-bit half two identities share: rare)
        return np.lexsort((lo, hi))
    return order


def _unique(column: np.ndarray) -> np.ndarray:
    """The distinct values of a column, sorted (as `_sort_order`)."""
    if not len(column):
        return column
    ordered = column[_sort_order(column)]
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def _locate(run: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Where each value is in `run` (sorted, distinct: `_unique`), or -1. Digests are searched by their high
    half, a uint64, and checked on the low half; the rare high half several identities share is scanned."""
    out = np.full(len(values), -1, dtype=np.int64)
    n = len(run)
    if not n or not len(values):
        return out
    order = T.search_order(values if values.dtype.names is None else values["hi"])
    if order is not None:  # (sorted keys walk the run once: tasks.search_order)
        out[order] = _locate(run, values[order])
        return out
    if run.dtype.names is None:
        at = np.searchsorted(run, values)
        inside = np.flatnonzero(at < n)
        inside = inside[run[at[inside]] == values[inside]]
        out[inside] = at[inside]
        return out
    rhi, rlo = np.ascontiguousarray(run["hi"]), np.ascontiguousarray(run["lo"])
    vhi, vlo = np.ascontiguousarray(values["hi"]), np.ascontiguousarray(values["lo"])
    left = np.searchsorted(rhi, vhi)
    cand = np.flatnonzero(left < n)
    cand = cand[rhi[left[cand]] == vhi[cand]]
    exact = rlo[left[cand]] == vlo[cand]
    out[cand[exact]] = left[cand[exact]]
    rest = cand[~exact]
    rest = rest[left[rest] + 1 < n]
    for i in rest[rhi[left[rest] + 1] == vhi[rest]].tolist():  # a shared high half: its run of (hi, lo) by lo
        a, b = int(left[i]), int(np.searchsorted(rhi, vhi[i], side="right"))
        j = a + int(np.searchsorted(rlo[a:b], vlo[i]))
        if j < b and rlo[j] == vlo[i]:
            out[i] = j
    return out


def _member(run: np.ndarray, values: np.ndarray) -> np.ndarray:
    """values in `run` (sorted, distinct)."""
    return _locate(run, values) >= 0


def _parts(n: int, most: int) -> list[slice]:
    """Records of at most `most` (SparkOptions.record_states) rows, none for no rows."""
    return T.record_slices(n, most) if n else []


def _dtype(int64: bool) -> Any:
    return np.int64 if int64 else np.dtype([("hi", np.uint64), ("lo", np.uint64)])


def _load(blob: bytes, int64: bool) -> np.ndarray:
    return np.frombuffer(blob, dtype=_dtype(int64))


# -- the reverse graph ------------------------------------------------------------------------------


def edges_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any) -> Iterator[Any]:
    """Every allowed edge out of the bucket's states (all levels), reversed and sent to the bucket
    that owns its target: (owner, (REVERSE, (targets blob, sources blob)))."""
    rt = T.runtime(job, recipe)
    int64 = rt.codec.int64
    sources, targets = [], []
    for _, (tag, value) in records:
        if tag != T.LEVEL:
            continue
        level = T.level_from_blob(value[1], int64)
        if int64:
            src, dst = _int_edges(rt, level)
        elif rt.packed is not None:
            src, dst = _packed_edges(rt, level)
        else:
            src, dst = _object_edges(rt, level)
        sources.append(src)
        targets.append(dst)
    if not sources:
        return
    src, dst = np.concatenate(sources), np.concatenate(targets)
    owner = _owner(dst, job["buckets"], int64)
    for b in range(job["buckets"]):
        mine = np.flatnonzero(owner == b)
        for part in _parts(len(mine), job["record_states"]):
            yield b, (REVERSE, (dst[mine[part]].tobytes(), src[mine[part]].tobytes()))


def _int_edges(rt: T.Runtime, level: T.Level) -> tuple[np.ndarray, np.ndarray]:
    states = level.payloads
    if rt.within is not None and len(states):
        states = states[np.fromiter(map(rt.within, states.tolist()), dtype=bool, count=len(states))]
    if rt.kernel:
        positions, ids, nexts = rt.model.successor_arrays(states)
        ids = np.asarray(ids, dtype=np.int64)
        allowed_ids = {i: liveness.environment_edge(rt.model.action_of(i)) for i in np.unique(ids).tolist()}
        keep = np.fromiter((allowed_ids[i] for i in ids.tolist()), dtype=bool, count=len(ids))
        return states[np.asarray(positions, dtype=np.int64)][keep], np.asarray(nexts, dtype=np.int64)[keep]
    src, dst = [], []
    for s in states.tolist():
        for action, n in rt.model.successors(s):
            if liveness.environment_edge(action):
                src.append(s)
                dst.append(n)
    return np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)


def _packed_edges(rt: T.Runtime, level: T.Level) -> tuple[np.ndarray, np.ndarray]:
    """_object_edges on the packed path: the level's states read into the executor's replica, their edges from
    its tabulated successors (the reference's, in its order), the environment's kept by `environment_ids` (the
    embedded packed engine's filter, checker/packed/bfs.py), the targets' identities from their int64 rows."""
    packed, codec = rt.packed, rt.codec
    hi, lo = level.ident
    values = codec.values_of(level.payloads)
    rows = np.arange(len(values))
    if rt.within is not None and len(values):
        inside = np.fromiter((rt.within(packed.unpack(v)) for v in values.tolist()), dtype=bool, count=len(values))
        values, rows = values[inside], rows[inside]
    if not len(values):
        return _digest_column(hi[:0], lo[:0]), _digest_column(hi[:0], lo[:0])
    pos, ids, nexts, _ = packed.successor_arrays(values)
    env = packed.environment_ids(np.asarray(ids, dtype=np.int64))
    src = rows[np.asarray(pos, dtype=np.int64)[env]]
    uniq, inverse = np.unique(np.asarray(nexts, dtype=np.int64)[env], return_inverse=True)
    thi, tlo = codec.identities(codec.rows_of(uniq))
    inverse = inverse.reshape(-1)
    return _digest_column(hi[src], lo[src]), _digest_column(thi[inverse], tlo[inverse])


def _object_edges(rt: T.Runtime, level: T.Level) -> tuple[np.ndarray, np.ndarray]:
    hi, lo = level.ident
    src_rows, dst_idents = [], []
    for i, state in enumerate(rt.codec.states_of(level.payloads)):
        if rt.within is not None and not rt.within(state):
            continue
        for action, n in rt.model.successors(state):
            if liveness.environment_edge(action):
                src_rows.append(i)
                dst_idents.append(rt.codec.encode(n)[0])
    rows = np.array(src_rows, dtype=np.int64)
    dhi, dlo = T.split_digests(b"".join(dst_idents)) if dst_idents else (np.empty(0, np.uint64),) * 2
    return _digest_column(hi[rows], lo[rows]), _digest_column(dhi, dlo)


def reverse_task(bucket: int, records: Iterable[Any], int64: bool, most: int) -> Iterator[Any]:
    """A bucket's reversed edges (cached, co-partitioned) as records of about `most` edges: (targets, int32
    counts, sources), the targets sorted and each once, then its sources (its count of them): a target's
    identity is stored once, not once an edge."""
    dst, src = [], []
    for _, (tag, value) in records:
        if tag == REVERSE:
            dst.append(_load(value[0], int64))
            src.append(_load(value[1], int64))
    if not dst:
        return
    d, s = np.concatenate(dst), np.concatenate(src)
    order = _sort_order(d)
    d, s = d[order], s[order]
    starts = np.flatnonzero(np.concatenate([[True], d[1:] != d[:-1]]))  # each target's first edge
    counts = np.diff(np.append(starts, len(d))).astype(np.int32)
    cuts = np.unique(np.searchsorted(starts, np.arange(most, len(d), most)))  # at targets, about `most` apart
    for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), len(starts)]):
        if a < b:
            end = starts[b] if b < len(starts) else len(d)
            yield bucket, (REVERSE, (d[starts[a:b]].tobytes(), counts[a:b].tobytes(), s[starts[a]:end].tobytes()))


# -- the backward fixpoint -------------------------------------------------------------------------


def _goals(rt: T.Runtime, records: Iterable[Any], names: list[str]) -> dict[str, np.ndarray]:
    """The identities of the bucket's goal states of each property in `names` (all levels)."""
    int64 = rt.codec.int64
    found: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for _, (tag, value) in records:
        if tag != T.LEVEL:
            continue
        level = T.level_from_blob(value[1], int64)
        column = _idents(level, int64)
        bits = None
        if not int64 and rt.packed is not None:  # the goal bits of the replica's table, as the embedded packed
            bits = rt.packed.state_bits(rt.codec.values_of(level.payloads))[1]  # engine reads them
        states = None
        for name in names:
            if bits is not None:
                hits = ((bits >> T.bit_of(rt.packed.goals, name)) & 1).astype(bool)
            else:
                goal = rt.properties[name].predicate
                if states is None:
                    states = level.payloads.tolist() if int64 else rt.codec.states_of(level.payloads)
                hits = np.fromiter((bool(goal(s)) for s in states), dtype=bool, count=len(level))
            found[name].append(column[hits])
    return {name: np.concatenate(cols) if cols else np.empty(0, dtype=_dtype(int64)) for name, cols in found.items()}


def goal_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any) -> Iterator[Any]:
    """The bucket's goal states of property job["property"], as candidates of the fixpoint's first step."""
    goals = _goals(T.runtime(job, recipe), records, [job["property"]])[job["property"]]
    for part in _parts(len(goals), job["record_states"]):
        yield bucket, (T.CANDIDATES, goals[part].tobytes())


def same_goals_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any) -> Iterator[Any]:
    """Which of the properties job["properties"] have the same goal states in this bucket: one sorted tuple of
    groups of names. Properties with the same goal states everywhere reach them from the same states (the
    fixpoint follows the same environment edges for all), so one fixpoint serves them all."""
    groups: dict[bytes, list[str]] = {}
    for name, goals in _goals(T.runtime(job, recipe), records, job["properties"]).items():
        groups.setdefault(_unique(goals).tobytes(), []).append(name)
    yield tuple(sorted(tuple(names) for names in groups.values()))


def reach_task(bucket: int, records: Iterable[Any], int64: bool, results: Any, step: int,
               most: int) -> Iterator[Any]:
    """The candidates sent to the bucket that no run holds yet: one more sorted run (cached; records of `most`)."""
    runs, cands = [], []
    for _, (tag, value) in records:
        if tag == T.RUN:
            runs.append(_load(value, int64))
        elif tag == T.CANDIDATES:
            cands.append(_load(value, int64))
    new = _unique(np.concatenate(cands)) if cands else np.empty(0, dtype=_dtype(int64))
    for run in runs:
        new = new[~_member(run, new)]
    results.add({(step, bucket): len(new)})
    for part in _parts(len(new), most):
        yield bucket, (T.RUN, new[part].tobytes())


def preds_task(bucket: int, records: Iterable[Any], int64: bool, buckets: int, most: int) -> Iterator[Any]:
    """The sources of the reversed edges into the bucket's newest run, sent to their owners."""
    new, reverse = [], []
    for _, (tag, value) in records:
        if tag == T.RUN:
            new.append(_load(value, int64))
        elif tag == REVERSE:
            reverse.append((_load(value[0], int64), np.frombuffer(value[1], dtype=np.int32), _load(value[2], int64)))
    if not new or not reverse:
        return
    fresh = np.concatenate(new)
    preds = []
    for dst, counts, src in reverse:  # the edges of the fresh states among the targets, as index ranges
        at = _locate(dst, fresh)
        at = at[at >= 0]
        starts = np.cumsum(counts, dtype=np.int64) - counts
        cnt = counts[at].astype(np.int64)
        preds.append(src[np.repeat(starts[at] - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))])
    preds = _unique(np.concatenate(preds))
    owner = _owner(preds, buckets, int64)
    for b in range(buckets):
        mine = np.flatnonzero(owner == b)
        for part in _parts(len(mine), most):
            yield b, (T.CANDIDATES, preds[mine[part]].tobytes())


def classify_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any,
                  spec: Any) -> Iterator[tuple[str, int, int]]:
    """The bucket's first stuck state (smallest (level, key), in no run) of each class, as
    check/run.py classifies stuck states: "" for the first one in the premise that no declared
    finding matches (unexpected), a finding's name for the first one in the premise it matches."""
    import pickle

    from pyspark import cloudpickle  # noqa: F401  (the reducers the pickled callables need)

    rt = T.runtime(job, recipe)
    int64 = rt.codec.int64
    premise, signatures = pickle.loads(spec.value)
    runs, levels = [], []
    for _, (tag, value) in records:
        if tag == T.RUN:
            runs.append(_load(value, int64))
        elif tag == T.LEVEL:
            levels.append((value[0], T.level_from_blob(value[1], int64)))
    by_number: dict[int, list[T.Level]] = {}
    for number, level in levels:  # (a wide level comes in several records: SparkOptions.record_states)
        by_number.setdefault(number, []).append(level)
    best: dict[str, tuple[int, int]] = {}
    for number, level in ((n, T.concat_levels(parts, int64)) for n, parts in sorted(by_number.items())):
        column = _idents(level, int64)
        stuck = np.ones(len(column), dtype=bool)
        for run in runs:
            stuck &= ~_member(run, column)
        for i, state in _in_key_order(rt, level, stuck, int64):
            if len(best) == len(signatures) + 1:
                break
            if premise is not None and not premise(state):
                continue
            here = (number, int(level.keys[i]))
            matched = [name for name, signature in signatures if signature(state)]
            for name in matched or [""]:
                if name not in best:
                    best[name] = here
    for name, (number, key) in best.items():
        yield name, number, key


def _in_key_order(rt: T.Runtime, level: T.Level, mask: np.ndarray, int64: bool,
                  chunk: int = 4096) -> Iterator[tuple[int, Any]]:
    """(row, state) of the level's rows in `mask`, by discovery key; decoded a chunk at a time (on the packed
    path a batch of int64 rows read at once, not one payload per state)."""
    order = np.flatnonzero(mask)[np.argsort(level.keys[mask], kind="stable")]
    for lo in range(0, len(order), chunk):
        rows = order[lo:lo + chunk]
        if int64:
            states: Iterable[Any] = level.payloads[rows].tolist()
        elif rt.packed is not None:
            states = map(rt.packed.unpack, rt.codec.values_of(T.take_payloads(level.payloads, rows)).tolist())
        else:
            states = (rt.codec.decode(level.payloads[i]) for i in rows.tolist())
        yield from zip(rows.tolist(), states)


# -- the counterexample on the driver ----------------------------------------------------------------


def lasso_from(model: Any, prefix: Path) -> tuple[Path, int | None]:
    """`liveness.lasso` for the stuck state at the end of `prefix` (the shortest path to it): the
    trap region it reaches through allowed edges, explored here in the embedded graph's order,
    gives the same loop and bridge as the embedded engine's whole graph."""
    region = _region(model, prefix[-1][0])
    loop = _trap_cycle(region)
    tail, loop_start = liveness.lasso(region, liveness.Stuck(0, loop), inits=(0,))
    path = prefix + tail[1:]
    return path, None if loop_start is None else loop_start + len(prefix) - 1


def _region(model: Any, start: Any) -> StateGraph:
    """The states `start` reaches through allowed edges, BFS-numbered from 0, with their allowed edges."""
    within = getattr(model, "within_boundary", None)
    states, index = [start], {start: 0}
    successors: list[list[int]] = []
    actions: list[list[Any]] = []
    queue = deque([start])
    while queue:
        s = queue.popleft()
        succ, acts = [], []
        if within is None or within(s):
            for action, n in model.successors(s):
                if not liveness.environment_edge(action):
                    continue
                if n not in index:
                    index[n] = len(states)
                    states.append(n)
                    queue.append(n)
                succ.append(index[n])
                acts.append(action)
        successors.append(succ)
        actions.append(acts)
    return StateGraph(states, index, successors, actions)


def _trap_cycle(region: StateGraph) -> list[int]:
    """A cycle reachable from state 0 (first == last), or [] for a dead end: the cycle the
    embedded engine's liveness checker finds (networkx's find_cycle over the same subgraph,
    nodes in BFS order, edges in successor order)."""
    sub = nx.DiGraph()
    sub.add_nodes_from(range(len(region.states)))
    for i, succ in enumerate(region.successors):
        sub.add_edges_from((i, j) for j in succ)
    try:
        cycle = nx.find_cycle(sub, source=0)
    except nx.NetworkXNoCycle:
        return []
    return [u for u, _ in cycle] + [cycle[0][0]]


__all__ = ["classify_task", "edges_task", "goal_task", "lasso_from", "preds_task", "reach_task", "reverse_task",
           "same_goals_task"]
