"""The embedded engine: exhaustive breadth-first search of a `Model`, in process.

`explore(model)` visits every state reachable from `model.init_states()` level by level,
checks every `always` property on every new state, every `transition` property on every
generated edge and every `sometimes` property until an example is found, and records
for each finding a shortest path (parent pointers; the path is rebuilt only when the
result is assembled). Counts follow TLC's conventions so that they compare 1:1 with a
TLA+ run: `transitions` is every generated successor edge (TLC's "states generated"
minus the initial states) and `depth` is the number of BFS levels (TLC's "depth of the
complete state graph search": a lone initial state has depth 1).

Two state stores back the one search loop:

- the object store (any model): a dict state -> index, a list of states, parents in an
  `array('q')`, `model.successors(state)` called per state;
- the array store, for models whose states are non-negative ints below 2**63 and that
  define `successor_arrays(states) -> (positions, action_ids, next_states)` over an int64
  numpy array plus `action_of(action_id)`: a whole chunk of a level is expanded by one
  call, visited states are a sorted int64 array, and `always`/`sometimes` properties use
  `property.extra["array_predicate"]` (bool array over an int64 array) when present.
  The new states one chunk finds are numbered in increasing order of their value.

`eventually` properties are graph properties: `keep_graph=True` returns the state graph
for the liveness checker. The engine never prints; `progress(states, depth, states_per_sec)`
is called about once a second (with `generated=` and `queue=` keywords too when the
callback has `wants_detail = True`, as checker/check/progress.py's reporter does).

Run limits (checker/config/limits.py): `watch(states)` is called between chunks and may
return a reason to stop ("max-memory: ..."); `max_states` stops with reason "max-states".
The result's `stopped` names the reason. Ctrl-C raises `Interrupted`, a KeyboardInterrupt
that carries the partial result (counts and the violations found so far, no graph).
"""

from __future__ import annotations

import gc
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, count, islice
from operator import not_
from typing import Any

from kreassign.checker.explore.protocol import Model, checked_properties
from kreassign.spec.properties import ALWAYS, SOMETIMES, TRANSITION, Property

try:
    import numpy as np
except ImportError:  # only the array store needs numpy, and only models built on numpy use it
    np = None

#: a path from an initial state: (state, the action that led to it), the first action None
Path = list[tuple[Any, Any]]
Progress = Callable[[int, int, float], None]
Watch = Callable[[int], "str | None"]  # states so far -> a reason to stop, or None

MAX_STATES = "max-states"  # ExploreResult.stopped when max_states cut the search short
INTERRUPTED = "interrupted"

PROGRESS_INTERVAL = 1.0  # seconds between progress calls


@dataclass(frozen=True)
class Violation:
    """A property that does not hold, with a shortest path to the state (or edge) breaking it."""

    property: Property
    path: Path


@dataclass
class StateGraph:
    """The explored state graph, for graph (liveness) properties.

    Edges are listed in generation order, one per transition, so parallel edges (two
    actions leading to the same state) appear twice. Edges to states a bound kept out
    of the search are omitted.
    """

    states: list[Any]  # index -> state
    index: dict[Any, int]  # state -> index
    successors: list[list[int]]  # index -> indices of its successors, one per edge
    actions: list[list[Any]]  # index -> the action of each of those edges


@dataclass
class ExploreResult:
    """What a search found; `complete` is False when a bound or `stop_on_violation` cut it short."""

    states: int  # distinct states found
    transitions: int  # successor edges generated (TLC: states generated - initial states)
    depth: int  # BFS levels holding states (TLC's depth convention)
    seconds: float
    complete: bool
    violations: dict[str, Violation] = field(default_factory=dict)  # always / transition properties
    examples: dict[str, Path] = field(default_factory=dict)  # sometimes properties that were reached
    deadlock: Path | None = None  # the first state without successors, when check_deadlock
    per_action_edges: dict[str, int] = field(default_factory=dict)  # action kind -> edges
    graph: StateGraph | None = None
    stopped: str | None = None  # why a run limit ended the search early: "max-states", "max-memory: ..."
    # an engine that keeps no object graph classifies stuck states itself (the packed path, Spark):
    # classify_stuck(prop, findings, want_findings) -> (unexpected, findings), as liveness.classify_stuck
    classify_stuck: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    release_liveness: Callable[[], None] | None = field(default=None, repr=False, compare=False)  # frees its tables

    @property
    def reduction(self) -> dict[str, Any] | None:
        """How the state space was reduced (None: it was not; compositional mode says how)."""
        return None


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a search; `partial` holds what was explored so far (complete=False, no graph)."""

    def __init__(self, partial: ExploreResult | None):
        super().__init__()
        self.partial = partial


def explore(
    model: Model,
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    check_deadlock: bool = False,
    stop_on_violation: bool = False,
    progress: Progress | None = None,
    keep_graph: bool = False,
    watch: Watch | None = None,
) -> ExploreResult:
    """Breadth-first search of every state of `model` reachable from its initial states.

    `max_states` stops the search once that many distinct states are stored; `max_depth`
    keeps states deeper than that many levels out (the last level is still expanded, so
    its edges are counted). `check_deadlock` reports a state without successors, as TLC's
    CHECK_DEADLOCK; states outside `model.within_boundary` are not expanded and are no
    deadlock. `stop_on_violation` ends the search at the first violation (or deadlock).
    """
    properties = list(checked_properties(model))
    edge_properties = [p for p in properties if p.kind == TRANSITION]
    store_type = _ArrayStore if _has_array_kernel(model) else _ObjectStore
    store = store_type(model, keep_graph, edge_properties)
    search = _Search(model, store, properties, max_states, max_depth, check_deadlock, stop_on_violation, progress)
    search.watch = watch
    return search.run()


def _has_array_kernel(model: Model) -> bool:
    return callable(getattr(model, "successor_arrays", None)) and callable(getattr(model, "action_of", None))


def _overrides_boundary(model: Model) -> bool:
    return type(model).within_boundary is not Model.within_boundary


def _kind_name(kind: Any) -> str:
    return kind if isinstance(kind, str) else kind.__name__


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The search allocates millions of long-lived objects and no cycles: collecting is wasted time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Search:
    """The BFS loop shared by both stores: levels, chunks, properties, bounds, progress, paths."""

    def __init__(self, model: Model, store: _ObjectStore | _ArrayStore, properties: list[Property],
                 max_states: int | None, max_depth: int | None, check_deadlock: bool,
                 stop_on_violation: bool, progress: Progress | None):
        self.model, self.store = model, store
        self.max_states, self.max_depth = max_states, max_depth
        self.check_deadlock, self.stop_on_violation = check_deadlock, stop_on_violation
        self.progress = progress
        self.pending_always = [p for p in properties if p.kind == ALWAYS]
        self.pending_sometimes = [p for p in properties if p.kind == SOMETIMES]
        self.violating_states: dict[str, tuple[Property, int]] = {}
        self.example_states: dict[str, int] = {}
        self.watch: Watch | None = None
        self.stopped: str | None = None
        self.depth = 0
        self.expanded = 0  # states expanded so far (the queue is the rest)

    def run(self) -> ExploreResult:
        started = time.perf_counter()
        self.started = self.last_progress = started
        try:
            with _gc_paused():
                depth, complete = self._search()
                elapsed = time.perf_counter() - started
        except KeyboardInterrupt:
            raise Interrupted(self._partial(time.perf_counter() - started)) from None
        if self.store.truncated and self.stopped is None:
            self.stopped = MAX_STATES
        return self._result(depth, complete, elapsed)

    def _partial(self, seconds: float) -> ExploreResult | None:
        """What an interrupted search found so far; the store may be mid-update, so keep it simple."""
        try:
            self.store.keep_graph = False
            self.stopped = INTERRUPTED
            return self._result(self.depth, False, seconds)
        except Exception:  # noqa: BLE001 - a half-updated store: report nothing rather than crash
            return None

    def _search(self) -> tuple[int, bool]:
        """Expand level after level; return (depth, whether the search ran to the end)."""
        store = self.store
        store.add_initial(self.model.init_states(), self.max_states)
        self._check_states(0, store.count)
        depth = 1 if store.count else 0
        lo, hi = 0, store.count
        while lo < hi:
            self.depth = depth
            keep_new = self.max_depth is None or depth < self.max_depth
            for chunk_lo in range(lo, hi, store.chunk):
                if self._stopped():  # with work left: the states from chunk_lo on
                    return depth + (store.count > hi), False
                first_new = store.count
                store.expand(chunk_lo, min(hi, chunk_lo + store.chunk), keep_new, self.max_states)
                self.expanded = min(hi, chunk_lo + store.chunk)
                self._check_states(first_new, store.count)
                self._report_progress(depth)
            lo, hi = hi, store.count
            depth += hi > lo
        return depth, not (store.truncated or store.dropped)

    def _stopped(self) -> bool:
        if self.store.truncated:
            return True
        if self.watch is not None:
            self.stopped = self.watch(self.store.count)
            if self.stopped is not None:
                self.store.truncated = True
                return True
        if not self.stop_on_violation:
            return False
        deadlocked = self.check_deadlock and self.store.deadlock is not None
        return bool(self.violating_states or self.store.edge_violations or deadlocked)

    def _check_states(self, lo: int, hi: int) -> None:
        """Check the new states lo..hi-1 (in BFS order, so the first hit is a shortest one)."""
        for prop in list(self.pending_always):
            i = self.store.first_where(prop, lo, hi, holds=False)
            if i is not None:
                self.violating_states[prop.name] = (prop, i)
                self.pending_always.remove(prop)
        for prop in list(self.pending_sometimes):
            i = self.store.first_where(prop, lo, hi, holds=True)
            if i is not None:
                self.example_states[prop.name] = i
                self.pending_sometimes.remove(prop)

    def _report_progress(self, depth: int) -> None:
        now = time.perf_counter()
        if self.progress is not None and now - self.last_progress >= PROGRESS_INTERVAL:
            self.last_progress = now
            if getattr(self.progress, "wants_detail", False):
                self.progress(self.store.count, depth, self.store.count / (now - self.started),
                              generated=self.store.transitions, queue=self.store.count - self.expanded)
            else:
                self.progress(self.store.count, depth, self.store.count / (now - self.started))

    def _path(self, i: int) -> Path:
        steps = []
        while i >= 0:
            steps.append((self.store.state(i), self.store.action(i)))
            i = self.store.parent(i)
        return steps[::-1]

    def _result(self, depth: int, complete: bool, seconds: float) -> ExploreResult:
        store = self.store
        violations = {name: Violation(prop, self._path(i)) for name, (prop, i) in self.violating_states.items()}
        for name, (prop, i, action, nxt) in store.edge_violations.items():
            violations[name] = Violation(prop, self._path(i) + [(nxt, action)])
        deadlock = self._path(store.deadlock) if self.check_deadlock and store.deadlock is not None else None
        return ExploreResult(
            states=store.count,
            transitions=store.transitions,
            depth=depth,
            seconds=seconds,
            complete=complete,
            violations=violations,
            examples={name: self._path(i) for name, i in self.example_states.items()},
            deadlock=deadlock,
            per_action_edges=store.per_action_edges(),
            graph=store.graph(),
            stopped=self.stopped,
        )


class _StoreBase:
    """Counters and findings common to both stores."""

    chunk: int  # states expanded between two property checks / progress calls

    def __init__(self, model: Model, keep_graph: bool, edge_properties: list[Property]):
        self.model = model
        self.keep_graph = keep_graph
        self.within = model.within_boundary if _overrides_boundary(model) else None
        action_kind = getattr(model, "action_kind", None)
        self.kind: Callable[[Any], Any] = action_kind if callable(action_kind) else type  # edges counted per kind
        self.transitions = 0
        self.deadlock: int | None = None  # index of the first state without successors
        self.truncated = False  # max_states was reached
        self.dropped = False  # a state beyond max_depth was left out
        self.edge_properties = list(edge_properties)  # transition properties not violated yet
        self.edge_violations: dict[str, tuple[Property, int, Any, Any]] = {}  # (prop, source, action, next)

    def _check_edge(self, i: int, state: Any, action: Any, nxt: Any) -> None:
        for prop in list(self.edge_properties):
            if not prop.predicate(state, action, nxt):
                self.edge_violations[prop.name] = (prop, i, action, nxt)
                self.edge_properties.remove(prop)


class _ObjectStore(_StoreBase):
    """Any hashable states: dict state -> index, `model.successors` per state."""

    chunk = 4096

    def __init__(self, model: Model, keep_graph: bool, edge_properties: list[Property]):
        super().__init__(model, keep_graph, edge_properties)
        self.states: list[Any] = []
        self.index: dict[Any, int] = {}
        self.parents = array("q")
        self.via: list[Any] = []  # the action that led to each state
        self.edge_counts: dict[Any, int] = {}
        self.out: list[list[int]] = []  # graph: successor indices per state
        self.out_actions: list[list[Any]] = []

    @property
    def count(self) -> int:
        return len(self.states)

    def state(self, i: int) -> Any:
        return self.states[i]

    def parent(self, i: int) -> int:
        return self.parents[i]

    def action(self, i: int) -> Any:
        return self.via[i]

    def _add(self, state: Any, parent: int, action: Any) -> int:
        i = self.index[state] = len(self.states)
        self.states.append(state)
        self.parents.append(parent)
        self.via.append(action)
        if self.keep_graph:
            self.out.append([])
            self.out_actions.append([])
        return i

    def add_initial(self, states: Iterable[Any], limit: int | None) -> None:
        for s in states:
            if s not in self.index:
                if limit is not None and self.count >= limit:
                    self.truncated = True
                    return
                self._add(s, -1, None)

    def expand(self, lo: int, hi: int, keep_new: bool, limit: int | None) -> None:
        """Generate the edges of states lo..hi-1, storing the new successors (the hot loop)."""
        index, successors, kind, counts = self.index, self.model.successors, self.kind, self.edge_counts
        edge_properties, keep_graph = self.edge_properties, self.keep_graph
        for i in range(lo, hi):
            s = self.states[i]
            if self.within is not None and not self.within(s):
                continue
            edges = 0
            for a, n in successors(s):
                edges += 1
                k = kind(a)
                counts[k] = counts.get(k, 0) + 1
                j = index.get(n)
                if j is None and keep_new:
                    if limit is not None and self.count >= limit:
                        self.truncated = True
                        self.transitions += edges
                        return
                    j = self._add(n, i, a)
                elif j is None:
                    self.dropped = True
                if edge_properties:
                    self._check_edge(i, s, a, n)
                if keep_graph and j is not None:
                    self.out[i].append(j)
                    self.out_actions[i].append(a)
            self.transitions += edges
            if edges == 0 and self.deadlock is None:
                self.deadlock = i

    def first_where(self, prop: Property, lo: int, hi: int, holds: bool) -> int | None:
        """The first index in lo..hi-1 whose state satisfies (holds) or breaks the predicate."""
        values: Iterator[Any] = map(prop.predicate, islice(self.states, lo, hi))
        if not holds:
            values = map(not_, values)
        return next(compress(count(lo), values), None)

    def per_action_edges(self) -> dict[str, int]:
        return {_kind_name(k): n for k, n in self.edge_counts.items()}

    def graph(self) -> StateGraph | None:
        if not self.keep_graph:
            return None
        return StateGraph(self.states, self.index, self.out, self.out_actions)


class Column:
    """A growable 1-D numpy array (amortised O(1) append of a block)."""

    def __init__(self, dtype: Any):
        self.data = np.empty(1024, dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if end > len(self.data):
            grown = np.empty(max(end, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size : end] = values
        self.size = end

    def view(self, lo: int, hi: int) -> np.ndarray:
        return self.data[lo:hi]


def first_occurrences(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, sorted, and the index of the first occurrence of each.

    Like `np.unique(values, return_index=True)`, but built on the unstable (SIMD) argsort,
    which is several times faster than the stable sort `np.unique` needs.
    """
    if not len(values):
        return values, np.empty(0, dtype=np.intp)
    order = np.argsort(values)
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return ordered[starts], np.minimum.reduceat(order, starts)


class _ArrayStore(_StoreBase):
    """Int states in numpy arrays, chunks of a level expanded by `model.successor_arrays`."""

    chunk = 1 << 17

    def __init__(self, model: Any, keep_graph: bool, edge_properties: list[Property]):
        super().__init__(model, keep_graph, edge_properties)
        self.states = Column(np.int64)
        self.parents = Column(np.int64)
        self.action_ids = Column(np.int32)  # -1 for initial states
        self.seen = np.empty(0, dtype=np.int64)  # every stored state, sorted
        self.seen_index = np.empty(0, dtype=np.int64)  # graph: the index of each `seen` entry
        self.id_counts: dict[int, int] = {}
        self.edges: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # graph: (source, target, action id)

    @property
    def count(self) -> int:
        return self.states.size

    def state(self, i: int) -> int:
        return int(self.states.data[i])

    def parent(self, i: int) -> int:
        return int(self.parents.data[i])

    def action(self, i: int) -> Any:
        action_id = int(self.action_ids.data[i])
        return None if action_id < 0 else self.model.action_of(action_id)

    def add_initial(self, states: Iterable[int], limit: int | None) -> None:
        distinct = np.unique(np.array(list(states), dtype=np.int64))
        if limit is not None and len(distinct) > limit:
            distinct, self.truncated = distinct[:limit], True
        none = np.full(len(distinct), -1)
        self._store(distinct, none, none, np.zeros(len(distinct), dtype=np.intp))

    def _store(self, states: np.ndarray, parents: np.ndarray, action_ids: np.ndarray, at: np.ndarray) -> None:
        """Append new distinct states, in increasing order, whose insertion positions in `seen` are `at`."""
        first = self.count
        self.states.extend(states)
        self.parents.extend(parents)
        self.action_ids.extend(action_ids)
        self.seen = np.insert(self.seen, at, states)
        if self.keep_graph:
            self.seen_index = np.insert(self.seen_index, at, np.arange(first, self.count))

    def _known(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each value: (is it stored?, its insertion position in the sorted `seen`)."""
        at = np.searchsorted(self.seen, values)
        inside = at < len(self.seen)
        known = np.zeros(len(values), dtype=bool)
        known[inside] = self.seen[at[inside]] == values[inside]
        return known, at

    def expand(self, lo: int, hi: int, keep_new: bool, limit: int | None) -> None:
        """Expand states lo..hi-1 with one `successor_arrays` call and store the new successors."""
        frontier = self.states.view(lo, hi)
        sources = np.arange(lo, hi)
        if self.within is not None:
            inside = np.fromiter(map(self.within, frontier.tolist()), dtype=bool, count=len(frontier))
            frontier, sources = frontier[inside], sources[inside]
        positions, ids, nexts = self.model.successor_arrays(frontier)
        origin = sources[positions]
        self.transitions += len(nexts)
        for action_id, n in enumerate(np.bincount(ids).tolist()):
            if n:
                self.id_counts[action_id] = self.id_counts.get(action_id, 0) + n
        self._note_deadlock(sources, positions)
        if self.edge_properties:
            self._check_edges(origin, ids, nexts)
        self._store_successors(origin, ids, nexts, keep_new, limit)
        if self.keep_graph:
            self._record_edges(origin, ids, nexts)

    def _note_deadlock(self, sources: np.ndarray, positions: np.ndarray) -> None:
        if self.deadlock is None:
            stuck = np.flatnonzero(np.bincount(positions, minlength=len(sources)) == 0)
            if len(stuck):
                self.deadlock = int(sources[stuck[0]])

    def _check_edges(self, origin: np.ndarray, ids: np.ndarray, nexts: np.ndarray) -> None:
        """Transition properties have no array form: one predicate call per edge, in BFS order."""
        for k in np.argsort(origin, kind="stable").tolist():
            i = int(origin[k])
            self._check_edge(i, self.state(i), self.model.action_of(int(ids[k])), int(nexts[k]))
            if not self.edge_properties:
                return

    def _store_successors(self, origin: np.ndarray, ids: np.ndarray, nexts: np.ndarray,
                          keep_new: bool, limit: int | None) -> None:
        """Store the successors not seen yet, each with the first edge that generated it."""
        values, first = first_occurrences(nexts)
        known, at = self._known(values)
        new, first, at = values[~known], first[~known], at[~known]
        if not len(new):
            return
        if not keep_new:
            self.dropped = True
            return
        if limit is not None and self.count + len(new) > limit:
            room = limit - self.count
            new, first, at, self.truncated = new[:room], first[:room], at[:room], True
        self._store(new, origin[first], ids[first], at)

    def _record_edges(self, origin: np.ndarray, ids: np.ndarray, nexts: np.ndarray) -> None:
        """Graph: keep the edges whose target is stored, as (source, target, action id) indices."""
        known, at = self._known(nexts)
        self.edges.append((origin[known], self.seen_index[at[known]], ids[known]))

    def first_where(self, prop: Property, lo: int, hi: int, holds: bool) -> int | None:
        states = self.states.view(lo, hi)
        vectorised = prop.extra.get("array_predicate")
        if vectorised is not None:
            hits = np.asarray(vectorised(states), dtype=bool)
        else:
            hits = np.fromiter(map(prop.predicate, states.tolist()), dtype=bool, count=len(states))
        found = np.flatnonzero(hits if holds else ~hits)
        return lo + int(found[0]) if len(found) else None

    def per_action_edges(self) -> dict[str, int]:
        kinds: dict[str, int] = {}
        for action_id, n in sorted(self.id_counts.items()):
            name = _kind_name(self.kind(self.model.action_of(action_id)))
            kinds[name] = kinds.get(name, 0) + n
        return kinds

    def graph(self) -> StateGraph | None:
        if not self.keep_graph:
            return None
        states = self.states.view(0, self.count).tolist()
        out: list[list[int]] = [[] for _ in states]
        out_actions: list[list[Any]] = [[] for _ in states]
        if self.edges:
            sources, targets, ids = (np.concatenate(column) for column in zip(*self.edges))
            order = np.argsort(sources, kind="stable")
            for i, j, action_id in zip(sources[order].tolist(), targets[order].tolist(), ids[order].tolist()):
                out[i].append(j)
                out_actions[i].append(self.model.action_of(action_id))
        return StateGraph(states, {s: i for i, s in enumerate(states)}, out, out_actions)
