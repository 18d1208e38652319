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
the trap region; the executors hold the reverse edges (16 or 32 bytes each) and the runs.
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


def _member(sorted_run: np.ndarray, values: np.ndarray) -> np.ndarray:
    """values in sorted_run (both int64, or both (hi, lo) structured arrays: compared field-wise)."""
    if not len(sorted_run) or not len(values):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(sorted_run, values)
    inside = at < len(sorted_run)
    hit = np.zeros(len(values), dtype=bool)
    hit[inside] = sorted_run[at[inside]] == values[inside]
    return hit


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
        else:
            src, dst = _object_edges(rt, level)
        sources.append(src)
        targets.append(dst)
    if not sources:
        return
    src, dst = np.concatenate(sources), np.concatenate(targets)
    owner = _owner(dst, job["buckets"], int64)
    for b in range(job["buckets"]):
        mine = owner == b
        if mine.any():
            yield b, (REVERSE, (dst[mine].tobytes(), src[mine].tobytes()))


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


def reverse_task(bucket: int, records: Iterable[Any], int64: bool) -> Iterator[Any]:
    """A bucket's reversed edges as one record sorted by target (cached, co-partitioned)."""
    dst, src = [], []
    for _, (tag, value) in records:
        if tag == REVERSE:
            dst.append(_load(value[0], int64))
            src.append(_load(value[1], int64))
    if dst:
        d, s = np.concatenate(dst), np.concatenate(src)
        order = np.argsort(d, kind="stable")
        yield bucket, (REVERSE, (d[order].tobytes(), s[order].tobytes()))


# -- the backward fixpoint -------------------------------------------------------------------------


def goal_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any) -> Iterator[Any]:
    """The bucket's goal states of property job["property"], as candidates of the fixpoint's first step."""
    rt = T.runtime(job, recipe)
    int64 = rt.codec.int64
    goal = rt.properties[job["property"]].predicate
    found = []
    for _, (tag, value) in records:
        if tag != T.LEVEL:
            continue
        level = T.level_from_blob(value[1], int64)
        column = _idents(level, int64)
        if int64:
            hits = np.fromiter(map(goal, level.payloads.tolist()), dtype=bool, count=len(level))
        else:
            hits = np.fromiter((bool(goal(s)) for s in rt.codec.states_of(level.payloads)), dtype=bool, count=len(level))
        found.append(column[hits])
    if found:
        yield bucket, (T.CANDIDATES, np.concatenate(found).tobytes())


def reach_task(bucket: int, records: Iterable[Any], int64: bool, results: Any, step: int) -> Iterator[Any]:
    """The candidates sent to the bucket that no run holds yet: one more sorted run (cached)."""
    runs, cands = [], []
    for _, (tag, value) in records:
        if tag == T.RUN:
            runs.append(_load(value, int64))
        elif tag == T.CANDIDATES:
            cands.append(_load(value, int64))
    new = np.unique(np.concatenate(cands)) if cands else np.empty(0, dtype=_dtype(int64))
    for run in runs:
        new = new[~_member(run, new)]
    results.add({(step, bucket): len(new)})
    if len(new):
        yield bucket, (T.RUN, new.tobytes())


def preds_task(bucket: int, records: Iterable[Any], int64: bool, buckets: int) -> Iterator[Any]:
    """The sources of the reversed edges into the bucket's newest run, sent to their owners."""
    new, reverse = [], None
    for _, (tag, value) in records:
        if tag == T.RUN:
            new.append(_load(value, int64))
        elif tag == REVERSE:
            reverse = (_load(value[0], int64), _load(value[1], int64))
    if not new or reverse is None:
        return
    dst, src = reverse
    fresh = np.sort(np.concatenate(new))
    preds = np.unique(src[_member(fresh, dst)])
    owner = _owner(preds, buckets, int64)
    for b in range(buckets):
        mine = owner == b
        if mine.any():
            yield b, (T.CANDIDATES, preds[mine].tobytes())


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
        for i in np.flatnonzero(stuck)[np.argsort(level.keys[stuck], kind="stable")].tolist():
            if len(best) == len(signatures) + 1:
                break
            state = int(level.payloads[i]) if int64 else rt.codec.decode(level.payloads[i])
            if premise is not None and not premise(state):
                continue
            here = (number, int(level.keys[i]))
            matched = [name for name, signature in signatures if signature(state)]
            for name in matched or [""]:
                if name not in best:
                    best[name] = here
    for name, (number, key) in best.items():
        yield name, number, key


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


__all__ = ["classify_task", "edges_task", "goal_task", "lasso_from", "preds_task", "reach_task", "reverse_task"]
