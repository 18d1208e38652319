"""The packed engine: breadth-first search over int64 states with every property decided in numpy.

It explores a *packed model* (the `PackedModel` protocol, checker/packed/protocol.py): a model
whose states are non-negative int64 values and that answers, for a whole chunk of states at once,

- `successor_arrays(states) -> (position, action id, next state, ok bits)`, where bit k of
  `ok` says whether the k-th transition property (`edge_props`) holds on that edge;
- `state_bits(states) -> (always, goals, sometimes)`: bit sets of the `always`,
  `eventually`-goal and `sometimes` properties that hold in each state;
- `environment_ids(action ids)`: the edges liveness may follow without an admin;
- `action_of(action id)` and `init_state`.

checker/packed/reassignment.py is one (the reassignment model, tabulated from the reference).
Counts follow bfs.py's (TLC's) conventions exactly, violations are found on a shortest
path (BFS order), and `eventually` properties are decided on the graph of environment
edges kept as three int32 columns (12 bytes an edge), never as Python objects: a reverse
breadth-first search from the goal states, then a lasso (shortest path to the first
stuck state, a bridge, a loop) like liveness.py's. The visited set is a sorted int64
array; a stored state costs ~29 bytes (value, sorted copy, parent, action, goal bits),
reported as `bytes_per_state`.
"""

from __future__ import annotations

import gc
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
from kreassign.checker.explore.bfs import (
    INTERRUPTED,
    Column,
    ExploreResult,
    Interrupted,
    Path,
    Violation,
    first_occurrences,
)
from kreassign.checker.packed.protocol import PackedModel


@dataclass
class PackedResult(ExploreResult):
    """An ExploreResult plus the liveness verdicts and memory figures of the packed engine."""

    stuck: dict[str, np.ndarray] = field(default_factory=dict)  # eventually property -> stuck states, BFS order
    lasso_of: Any = None  # state index -> (path, loop start) of a stuck state
    state_of: Any = None  # state index -> packed value
    bytes_per_state: float = 0.0  # visited set, parents, actions, goal bits (no table, no edges)
    edge_bytes: int = 0  # the liveness graph
    table_rows: int = 0  # local situations tabulated (reference calls happen once per row and action)
    reference_calls: int = 0
    all_states: Any = None  # () -> every stored packed value, in BFS order (checker/packed/compositional.py)
    env_edges: Any = None  # () -> (source, target, action id) of the kept environment edges (liveness only)
    packed: Any = None  # the PackedReassignment whose tables it ran on (memory figures; compositional mode)


class _Run:
    def __init__(self, model: PackedModel, liveness: bool, max_states: int | None, progress: Any,
                 stop_on_violation: bool, watch: Any, chunk: int, subsume: bool = False):
        self.m = model
        self.liveness = liveness and bool(model.goals)
        # subsumption keeps only safety verdicts: never with the graph liveness needs
        self.subsume = subsume and not self.liveness
        self.max_states, self.progress, self.stop = max_states, progress, stop_on_violation
        self.watch, self.chunk, self.stopped = watch, chunk, None
        self.states = Column(np.int64)
        self.parents = Column(np.int32)
        self.action_ids = Column(np.int32)
        self.goal_bits = Column(np.int8)
        self.seen = np.empty(0, dtype=np.int64)
        self.seen_index = np.empty(0, dtype=np.int32)
        self.edges: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.transitions = 0
        self.id_counts = np.zeros(0, dtype=np.int64)
        self.truncated = False
        self.pending_edge = list(range(len(model.edge_props)))
        self.pending_always = list(range(len(model.always)))
        self.pending_some = list(range(len(model.sometimes)))
        self.edge_found: dict[int, tuple[int, int, int]] = {}  # bit -> (source, action id, next value)
        self.always_found: dict[int, int] = {}
        self.some_found: dict[int, int] = {}

    @property
    def count(self) -> int:
        return self.states.size

    def _store(self, new: np.ndarray, edge: np.ndarray, order: np.ndarray, origin: np.ndarray,
               ids: np.ndarray, at: np.ndarray) -> None:
        """Store `new` (sorted by value; `at` its insertion points in `seen`) numbered in `order`
        (by generating edge `edge`, indices into origin / ids)."""
        first = self.count
        values = new[order]
        self.states.extend(values)
        self.parents.extend(origin[edge[order]].astype(np.int32))
        self.action_ids.extend(ids[edge[order]].astype(np.int32))
        self.seen = np.insert(self.seen, at, new)
        if self.liveness:
            number = np.empty(len(new), dtype=np.int32)
            number[order] = np.arange(first, self.count, dtype=np.int32)
            self.seen_index = np.insert(self.seen_index, at, number)
        always, goals, some = self.m.state_bits(values)
        self.goal_bits.extend(goals.astype(np.int8))
        for bit in list(self.pending_always):
            held = self.m.holds(self.m.always_forms, bit, always)
            bad = np.flatnonzero(((always >> bit) & 1) == 0 if held is None else ~held)
            if held is None:  # the base fails here; the exact property decides
                bad = [k for k in bad.tolist() if not self.m.state_holds(bit, int(values[k]))][:1]
            if len(bad):
                self.always_found[bit] = first + int(bad[0])
                self.pending_always.remove(bit)
        for bit in list(self.pending_some):
            hit = np.flatnonzero((some >> bit) & 1)
            if len(hit):
                self.some_found[bit] = first + int(hit[0])
                self.pending_some.remove(bit)

    def _expand(self, lo: int, hi: int) -> None:
        frontier = self.states.view(lo, hi)
        pos, ids, nxt, ok = self.m.successor_arrays(frontier)
        origin = (lo + pos).astype(np.int64)
        self.transitions += len(nxt)
        counts = np.bincount(ids)
        if len(counts) > len(self.id_counts):
            counts[: len(self.id_counts)] += self.id_counts
            self.id_counts = counts
        else:
            self.id_counts[: len(counts)] += counts
        for bit in list(self.pending_edge):
            held = self.m.holds(self.m.edge_forms, bit, ok)
            bad = np.flatnonzero(((ok >> bit) & 1) == 0 if held is None else ~held)
            bad = bad[np.argsort(origin[bad], kind="stable")]  # BFS order of the sources
            if held is None:
                bad = [k for k in bad.tolist()
                       if not self.m.edge_holds(bit, int(self.states.data[origin[k]]), int(ids[k]), int(nxt[k]))][:1]
            if len(bad):
                k = bad[0]
                self.edge_found[bit] = (int(origin[k]), int(ids[k]), int(nxt[k]))
                self.pending_edge.remove(bit)
        values, first = first_occurrences(nxt)
        at = np.searchsorted(self.seen, values)
        inside = at < len(self.seen)
        known = np.zeros(len(values), dtype=bool)
        known[inside] = self.seen[at[inside]] == values[inside]
        new, first, at = values[~known], first[~known], at[~known]
        if self.subsume and len(new):
            keep = ~self._dominated(new)
            new, first, at = new[keep], first[keep], at[keep]
        # number the new states by their first generating edge, as the object engine does
        order = np.argsort(first, kind="stable")
        if self.max_states is not None and self.count + len(new) > self.max_states:
            room = self.max_states - self.count
            keep = np.zeros(len(new), dtype=bool)
            keep[order[:room]] = True
            new, first, at, self.truncated = new[keep], first[keep], at[keep], True
            order = np.argsort(first, kind="stable")
        if len(new):
            self._store(new, first, order, origin, ids, at)
        if self.liveness:
            env = self.m.environment_ids(ids)
            targets = nxt[env]
            where = np.searchsorted(self.seen, targets)
            where = np.minimum(where, len(self.seen) - 1)
            stored = self.seen[where] == targets
            self.edges.append((origin[env][stored].astype(np.int32), self.seen_index[where[stored]],
                               ids[env][stored].astype(np.int32)))

    def _dominated(self, new: np.ndarray) -> np.ndarray:
        """Budget subsumption: is each new state matched, outside its budget, by a state already
        stored or new with every budget slot at least as large (and a different value)?

        The budget slots are the lowest bits of a packed value, so states equal outside their
        budget are contiguous in the sorted `seen` (and in the sorted `new`)."""
        shift = self.m.budget_total_bits
        slots = list(zip(self.m.budget_shift, self.m.budget_bits))
        out = np.zeros(len(new), dtype=bool)
        for pool in (self.seen, new):
            lo = np.searchsorted(pool, (new >> shift) << shift)
            hi = np.searchsorted(pool, ((new >> shift) + 1) << shift)
            cnt = hi - lo
            total = int(cnt.sum())
            if not total:
                continue
            who = np.repeat(np.arange(len(new)), cnt)
            other = pool[np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(total)]
            mine = new[who]
            ge = other != mine
            for sh, nb in slots:
                mask = (1 << nb) - 1
                ge &= ((other >> sh) & mask) >= ((mine >> sh) & mask)
            out[who[ge]] = True
        return out

    def _found_any(self) -> bool:
        return bool(self.edge_found or self.always_found)

    def run(self) -> tuple[int, bool]:
        init = np.array([self.m.init_state], dtype=np.int64)
        zero, none = np.zeros(1, dtype=np.intp), np.array([-1])
        self._store(init, zero, zero, none, none, zero)
        depth, lo, hi = 1, 0, self.count
        self.depth = depth
        started = last = time.perf_counter()
        while lo < hi:
            # inserting a chunk into the sorted visited set copies it: chunks grow with it (up to
            # ~1M states, ~0.5 GB of edge arrays) so that a level costs a bounded number of copies
            step = max(self.chunk, min(1 << 20, self.count // 16))
            for chunk_lo in range(lo, hi, step):
                if self.truncated or (self.stop and self._found_any()):
                    return depth + (self.count > hi), False
                self._expand(chunk_lo, min(hi, chunk_lo + step))
                if self.watch is not None:  # run limits (config/limits.py): --max-memory
                    self.stopped = self.watch(self.count)
                    if self.stopped is not None:
                        self.truncated = True
                        return depth + (self.count > hi), False
                now = time.perf_counter()
                if self.progress is not None and now - last >= 1.0:
                    last = now
                    if getattr(self.progress, "wants_detail", False):  # check/progress.py's reporter
                        self.progress(self.count, depth, self.count / (now - started), generated=self.transitions,
                                      queue=self.count - min(hi, chunk_lo + step))
                    else:
                        self.progress(self.count, depth, self.count / (now - started))
            lo, hi = hi, self.count
            depth += hi > lo
            self.depth = depth
        return depth, not self.truncated

    # -- paths and liveness ------------------------------------------------------------------------
    def path(self, i: int) -> Path:
        steps = []
        while i >= 0:
            aid = int(self.action_ids.data[i])
            steps.append((int(self.states.data[i]), None if aid < 0 else self.m.action_of(aid)))
            i = int(self.parents.data[i])
        return steps[::-1]

    def _graph(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.edges:
            z = np.empty(0, dtype=np.int32)
            return z, z, z
        src, dst, ids = (np.concatenate(c) for c in zip(*self.edges))
        self.edges = [(src, dst, ids)]
        return src, dst, ids

    def stuck(self, bit: int) -> np.ndarray:
        """Every state (BFS order) from which no goal state is reachable through environment edges."""
        n = self.count
        src, dst, _ = self._graph()
        return np.flatnonzero(~reverse_reach(n, src, dst, ((self.goal_bits.view(0, n) >> bit) & 1).astype(bool)))

    def lasso(self, stuck: int) -> tuple[Path, int | None]:
        """A shortest path to `stuck`, then a shortest bridge to a loop it is trapped in, and once around."""
        src, dst, ids = self._graph()
        order = np.argsort(src, kind="stable")
        fsrc, fdst, fids = src[order], dst[order], ids[order]
        indptr = np.searchsorted(fsrc, np.arange(self.count + 1))

        def succ(i: int):
            a, b = indptr[i], indptr[i + 1]
            return zip(fdst[a:b].tolist(), fids[a:b].tolist())

        path = self.path(stuck)
        parent: dict[int, tuple[int, int]] = {stuck: (-1, -1)}  # BFS tree: shortest bridges
        queue = deque([stuck])
        sub = nx.DiGraph()
        sub.add_node(stuck)
        while queue:
            i = queue.popleft()
            for j, a in succ(i):
                if not sub.has_edge(i, j):
                    sub.add_edge(i, j, action=a)  # the first environment edge i -> j, as liveness.py
                if j not in parent:
                    parent[j] = (i, a)
                    queue.append(j)
        try:
            cycle = nx.find_cycle(sub, source=stuck)
        except nx.NetworkXNoCycle:
            return path, None
        bridge = []
        k = cycle[0][0]
        while k != stuck:
            p, b = parent[k]
            bridge.append((k, b))
            k = p
        for k, b in reversed(bridge):
            path.append((int(self.states.data[k]), self.m.action_of(b)))
        loop_start = len(path) - 1
        for u, v in cycle:
            path.append((int(self.states.data[v]), self.m.action_of(sub.edges[u, v]["action"])))
        return path, loop_start


def reverse_reach(n: int, src: np.ndarray, dst: np.ndarray, start: np.ndarray) -> np.ndarray:
    """can[i]: state i (of n) reaches a `start` state through the edges src -> dst (reverse BFS)."""
    can = start.copy()
    order = np.argsort(dst, kind="stable")
    rsrc = src[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=indptr[1:])
    frontier = np.flatnonzero(can)
    while len(frontier):
        starts, ends = indptr[frontier], indptr[frontier + 1]
        cnt = ends - starts
        total = int(cnt.sum())
        if not total:
            break
        idx = np.repeat(starts - np.cumsum(cnt) + cnt, cnt) + np.arange(total)
        preds = np.unique(rsrc[idx])
        preds = preds[~can[preds]]
        can[preds] = True
        frontier = preds
    return can


def explore_packed(model: PackedModel, *, liveness: bool = True, max_states: int | None = None, progress: Any = None,
                   stop_on_violation: bool = False, watch: Any = None, chunk: int = 1 << 16,
                   subsume: bool = False) -> PackedResult:
    """Exhaustive BFS of a packed model; every property decided, liveness on the environment edges.

    `max_states` and `watch(states) -> reason or None` are bfs.explore's run limits. `subsume`
    (safety only; ignored when liveness is on) skips a state whose budgets another state, equal
    outside its budgets and found no later, dominates: the model's budgets only gate actions
    (more budget, more edges, the same effects), so it reaches every violation the skipped state
    reaches, in no more steps. Counts shrink; verdicts and shortest counterexample lengths do not."""
    run = _Run(model, liveness, max_states, progress, stop_on_violation, watch, chunk, subsume)
    started = time.perf_counter()
    was = gc.isenabled()
    gc.disable()
    try:
        try:
            depth, complete = run.run()
        except KeyboardInterrupt:  # as bfs.explore: what was explored so far, for the CLI's report
            partial = PackedResult(states=run.count, transitions=run.transitions, depth=getattr(run, "depth", 0),
                                   seconds=time.perf_counter() - started, complete=False, stopped=INTERRUPTED)
            raise Interrupted(partial) from None
        violations: dict[str, Violation] = {}
        for bit, i in run.always_found.items():
            prop = model.always[bit]
            violations[prop.name] = Violation(prop, run.path(i))
        for bit, (i, aid, value) in run.edge_found.items():
            prop = model.edge_props[bit]
            violations[prop.name] = Violation(prop, run.path(i) + [(value, model.action_of(aid))])
        stuck = {}
        if run.liveness and complete:
            for bit, prop in enumerate(model.goals):
                stuck[prop.name] = run.stuck(bit)
    finally:
        if was:
            # the objects made during the search (the packed model's interned values, alive for the run)
            # sit in the youngest generation; the next collections would walk every one of them, two or
            # three times, for nothing (0.6 s for 1.3M of them): set them aside for the cyclic collector
            gc.freeze()
            gc.enable()
    kinds: dict[str, int] = {}
    for aid in np.flatnonzero(run.id_counts).tolist():
        name = type(model.action_of(aid)).__name__
        kinds[name] = kinds.get(name, 0) + int(run.id_counts[aid])
    n = run.count
    per_state = (run.states.data.itemsize * 2 + run.parents.data.itemsize + run.action_ids.data.itemsize
                 + run.goal_bits.data.itemsize + (4 if run.liveness else 0))
    edge_bytes = sum(a.nbytes for e in run.edges for a in e)
    return PackedResult(
        states=n, transitions=run.transitions, depth=depth, seconds=time.perf_counter() - started,
        complete=complete, violations=violations, stopped=run.stopped or ("max-states" if run.truncated else None),
        examples={model.sometimes[bit].name: run.path(i) for bit, i in run.some_found.items()},
        per_action_edges=kinds, stuck=stuck, lasso_of=run.lasso, state_of=lambda i: int(run.states.data[i]), bytes_per_state=float(per_state), edge_bytes=edge_bytes,
        table_rows=model.table_rows, reference_calls=model.reference_calls,
        all_states=lambda: run.states.data[: run.count], env_edges=run._graph,
    )


__all__ = ["PackedResult", "explore_packed", "reverse_reach"]
