"""Compositional mode: each partition checked against the shared broker environment (`check --compositional`).

On the packed path (packed/reassignment.py) a model is *partition-local*: an action that names a
partition changes only that partition (and its ghost), an action that names none (broker
failure or recovery, controller failover) changes the brokers and each partition as it
would alone, and every property is a conjunction over partitions, every finding signature
a disjunction. Partitions then interact only through the brokers and the shared budgets,
and the reachable (partition k, its ghost, brokers) triples of the whole cluster are exactly
the reachable states of the *projection* on k — the one-partition model at the same bounds:

- a cluster path, with the steps naming other partitions dropped, is a projection path (the
  projection has at least the budget left, and k's actions depend on k and the brokers);
- a projection path is a cluster path in which the other partitions take no step of their own.

So a safety property fails in the cluster iff it fails in some projection, at the same
shortest length (the projection's path is a cluster path; dropping steps never lengthens
one). Partitions with the same initial replicas have the same projection, so the default
`--partitions N` (every partition on brokers 1..rf) costs one one-partition search.

Findings and liveness need more, checked on every run (CompositionError otherwise):

- *idle partitions match no finding*: in the cluster, a partition that only saw broker
  events could make a violation elsewhere look explained; the projection with no admin
  budget (reassigns = cancels = 0) must match no signature on any state or edge;
- *a signature implies its violation*: a finding recognised on partition j while another
  partition breaks the property would be reported by the cluster and not by projection j;
  on every state and edge of every projection a matching signature must come with its
  property failing (read from the tables' bits);
- *finishing needs no fault*: for `eventually` properties, the cluster is stuck iff some
  partition is, when each projection's states that can reach the goal through environment
  edges can do so without failing a broker or the controller (C1), and a broker recovery
  keeps them so (C2); then the partitions finish one after another, since a goal (no
  reassignment in flight) is kept by every environment edge.

Liveness counterexamples are lifted like safety ones up to the stuck state, then the loop it
is trapped in is found in the cluster itself (other partitions move with broker events).
tests/unit/test_compositional.py compares verdicts and counterexample lengths with the
unreduced run on configurations small enough for both, with planted bugs.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

import networkx as nx
import numpy as np
from kreassign.checker.config.engine_options import DEFAULT_ENGINE, EngineOptions
from kreassign.checker.explore.bfs import ExploreResult, Path, Violation, explore
from kreassign.checker.explore.liveness import environment_edge
from kreassign.checker.explore.protocol import checked_properties
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.bfs import reverse_reach
from kreassign.checker.packed.reassignment import SEP, PackedReassignment, packable, packed_explorer
from kreassign.spec import actions as A
from kreassign.spec.findings import findings_for
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION

#: the environment edges a partition may need to finish without a fault (C1): its own steps, recoveries
CALM_GLOBAL = (A.BrokerRecover,)

LOOP_SEARCH_LIMIT = 200_000  # cluster states searched for the loop a lifted stuck state is trapped in


class CompositionError(ValueError):
    """The model (or these bounds) is not one compositional mode is exact for."""


@dataclass
class Projection:
    """The one-partition model standing for the partitions `members` (equal initial replicas)."""

    members: tuple[int, ...]
    model: ReassignmentModel
    result: Any = None

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {"partitions": list(self.members), "states": r.states, "transitions": r.transitions,
                "depth": r.depth, "seconds": round(r.seconds, 3)}


@dataclass
class CompositionalResult(ExploreResult):
    """An ExploreResult whose counts are the projections' (summed) and whose paths are the cluster's."""

    projections: list[Projection] = field(default_factory=list)
    classify_stuck: Any = None

    @property
    def reduction(self) -> dict[str, Any]:
        return {"mode": "compositional", "projections": [p.to_json() for p in self.projections]}


def projections_of(model: ReassignmentModel) -> list[Projection]:
    """One projection per distinct initial partition (partitions with equal replicas share one)."""
    init = model.init_states()[0]
    parts = init.cluster.topics[0].partitions
    groups: dict[Any, list[int]] = {}
    for k, (part, ghost) in enumerate(zip(parts, init.ghosts)):
        groups.setdefault((part, ghost), []).append(k)
    out = []
    for (part, ghost), members in groups.items():
        proj = ReassignmentModel(model.profile, replace(model.bounds, partitions=1, initial=(tuple(part.replicas),)))
        start = proj.init_states()[0]
        if (start.cluster.topics[0].partitions[0], start.ghosts[0], start.cluster.brokers) != (
                part, ghost, init.cluster.brokers):
            raise CompositionError(f"partition {members[0]} does not start as a one-partition cluster would")
        out.append(Projection(tuple(members), proj.checking(checked_properties(model))))  # the engine's (split) ones
    return out


# -- lifting paths back to the cluster ------------------------------------------------------------------


def _on(action: Any, k: int) -> Any:
    return action if getattr(action, "partition", None) is None else replace(action, partition=k)


def lift(model: ReassignmentModel, path: Path, k: int) -> Path:
    """A projection path as the cluster's: the same steps on partition k, the others taking none.
    Every step is checked: enabled in the cluster, and leaving partition k and the brokers as the
    projection has them."""
    state = model.init_states()[0]
    out: Path = [(state, None)]
    for proj_state, label in path[1:]:
        action = _on(getattr(label, "action", label), k)
        if action not in model.actions(state):
            raise AssertionError(f"compositional: {action} is not enabled in the cluster")
        state, lab = model.step(state, action)
        want = (proj_state.cluster.topics[0].partitions[0], proj_state.ghosts[0], proj_state.cluster.brokers)
        if (state.cluster.topics[0].partitions[k], state.ghosts[k], state.cluster.brokers) != want:
            raise AssertionError(f"compositional: the cluster and the projection disagree after {action}")
        out.append((state, lab))
    return out


def _trap(model: ReassignmentModel, path: Path) -> tuple[Path, int | None]:
    """`path` (ending in a stuck cluster state), then a shortest bridge to a loop of environment edges
    it is trapped in and once around it, as liveness.lasso; (path, None) at a dead end."""
    start = path[-1][0]
    index, states = {start: 0}, [start]
    parent: dict[int, tuple[int, Any]] = {0: (-1, None)}
    g = nx.DiGraph()
    g.add_node(0)
    queue = deque([0])
    while queue and len(states) < LOOP_SEARCH_LIMIT:
        i = queue.popleft()
        for label, nxt in model.successors(states[i]):
            if not environment_edge(label.action):
                continue
            j = index.get(nxt)
            if j is None:
                j = index[nxt] = len(states)
                states.append(nxt)
                parent[j] = (i, label)
                queue.append(j)
            if not g.has_edge(i, j):
                g.add_edge(i, j, label=label)
    try:
        cycle = nx.find_cycle(g, source=0)
    except nx.NetworkXNoCycle:
        return path, None
    bridge, k = [], cycle[0][0]
    while k != 0:
        p, label = parent[k]
        bridge.append((states[k], label))
        k = p
    out = list(path) + bridge[::-1]
    loop_start = len(out) - 1
    out += [(states[v], g.edges[u, v]["label"]) for u, v in cycle]
    return out, loop_start


def _stuck_prefix(lasso: tuple[Path, int | None]) -> Path:
    """The part of a projection lasso up to where its loop starts (every state on it after the first
    stuck one is stuck too: environment edges never leave the stuck states)."""
    path, loop = lasso
    return path if loop is None else path[: loop + 1]


# -- the conditions that make the composition exact ---------------------------------------------------


def _signatures(profile: str, props: list[Any], failing: set[str],
                release: str | None = None) -> tuple[list[Any], list[Any]]:
    """(state signatures, edge signatures) of the findings of the properties that fail somewhere."""
    states, edges = [], []
    for p in props:
        if SEP in p.name or p.name not in failing:
            continue
        for f in findings_for(profile, p.name, release):
            (edges if p.kind == TRANSITION else states).append(f)
    return states, edges


def _check_idle(proj: Projection, profile: str, base_props: list[Any], failing: set[str],
                release: str | None = None) -> None:
    """A partition that sees only broker events (no admin budget) matches no finding's signature (of a
    property that fails somewhere: where a property never fails, its findings classify nothing)."""
    state_sigs, edge_sigs = _signatures(profile, base_props, failing, release)
    if not state_sigs and not edge_sigs:
        return
    idle = ReassignmentModel(proj.model.profile, replace(proj.model.bounds, reassigns=0, cancels=0))
    graph = explore(idle, keep_graph=True).graph
    for i, s in enumerate(graph.states):
        for f in state_sigs:
            if f.signature(s):
                raise CompositionError(f"finding {f.name} matches a partition no admin touched")
        for j, label in zip(graph.successors[i], graph.actions[i]):
            for f in edge_sigs:
                if f.signature(s, label, graph.states[j]):
                    raise CompositionError(f"finding {f.name} matches a step of a partition no admin touched")


def _check_signatures_imply_violations(proj: Projection, failing: set[str]) -> None:
    """On every state and edge of the projection, a matching finding signature of a property that fails
    somewhere comes with that property failing (the tables' bits: base bits low, negated signatures high)."""
    packed: PackedReassignment = proj.result.packed
    states = np.asarray(proj.result.all_states(), dtype=np.int64)
    chunk = 1 << 16
    for lo in range(0, len(states), chunk):
        part = states[lo : lo + chunk]
        always, _, _ = packed.state_bits(part)
        _implies(packed.always, packed.always_forms, always, "state", failing)
        _, _, _, ok = packed.successor_arrays(part)
        _implies(packed.edge_props, packed.edge_forms, ok, "edge", failing)


def _implies(props: list[Any], forms: list[tuple], words: np.ndarray, where: str, failing: set[str]) -> None:
    for bit, (prop, form) in enumerate(zip(props, forms)):
        if prop.name.split(SEP)[0] not in failing:
            continue
        if form[0] == "exact":
            raise CompositionError("a property is decided outside the packed tables; no compositional mode")
        sig_bits = form[1] if form[0] == "unexplained" else [form[1]] if form[0] == "not_this" else []
        base = ((words >> bit) & 1).astype(bool)
        for j in sig_bits:
            matched = ((words >> (32 + j)) & 1) == 0
            if (matched & base).any():
                raise CompositionError(f"a finding's signature matches a {where} where its property holds")


def _check_finishing_needs_no_fault(proj: Projection, goal_props: list[Any]) -> None:
    """C1 and C2 of the module docstring, on the projection's graph of environment edges."""
    result, packed = proj.result, proj.result.packed
    n = result.states
    src, dst, ids = result.env_edges()
    codes = ids // packed.partitions
    calm_code = np.array([not packed.is_global[c] or isinstance(packed.codes[c], CALM_GLOBAL)
                          for c in range(len(packed.codes))], dtype=bool)
    recover_code = np.array([isinstance(c, CALM_GLOBAL) for c in packed.codes], dtype=bool)
    calm = calm_code[codes] if len(codes) else np.zeros(0, dtype=bool)
    _, goals, _ = packed.state_bits(np.asarray(result.all_states(), dtype=np.int64))
    for prop in goal_props:
        can_all = np.ones(n, dtype=bool)
        can_all[result.stuck.get(prop.name, np.empty(0, np.int64))] = False
        bit = [p.name for p in packed.goals].index(prop.name)
        goal = ((goals >> bit) & 1).astype(bool)
        can_calm = reverse_reach(n, src[calm], dst[calm], goal)
        if (can_all != can_calm).any():
            raise CompositionError(f"{prop.name}: a partition needs a broker or controller fault to finish")
        rec = recover_code[codes] if len(codes) else np.zeros(0, dtype=bool)
        if (can_calm[src[rec]] & ~can_calm[dst[rec]]).any():
            raise CompositionError(f"{prop.name}: a broker recovery can keep a partition from finishing")


# -- the explorer -------------------------------------------------------------------------------------------


def compositional_explorer(model: ReassignmentModel, *, keep_graph: bool = False, progress: Any = None,
                           stop_on_violation: bool = False, max_states: int | None = None,
                           watch: Any = None, engine_options: EngineOptions = DEFAULT_ENGINE) -> CompositionalResult:
    """An `explorer` for check/run.py (bfs.explore's signature): one packed search per projection,
    the exactness conditions checked, every path lifted back to the cluster. `engine_options` goes on to
    each projection's packed search (workers, kernel, subsumption)."""
    props = list(checked_properties(model))
    if not packable(model, props):
        raise CompositionError(f"profile {model.profile_name} with these bounds is not partition-local "
                               "(compositional mode needs the packed path's conditions)")
    if any(p.kind == SOMETIMES for p in props):
        raise CompositionError("a `sometimes` property needs every partition at once; no compositional mode")
    started = time.perf_counter()
    projections = projections_of(model)
    for proj in projections:
        proj.result = packed_explorer(proj.model, keep_graph=keep_graph, progress=progress,
                                      stop_on_violation=stop_on_violation, max_states=max_states, watch=watch,
                                      engine_options=engine_options)
    complete = all(p.result.complete for p in projections)
    base_props = [p for p in props if p.kind in (ALWAYS, TRANSITION, EVENTUALLY)]
    goal_props = [p for p in props if p.kind == EVENTUALLY]
    if complete:
        failing = {name.split(SEP)[0] for p in projections for name in p.result.violations}
        failing |= {name for p in projections for name, stuck in getattr(p.result, "stuck", {}).items() if len(stuck)}
        for proj in projections:
            _check_idle(proj, model.profile_name, base_props, failing, getattr(model.profile, "kafka_version", None))
            _check_signatures_imply_violations(proj, failing)
            if keep_graph and goal_props:
                _check_finishing_needs_no_fault(proj, goal_props)
    violations: dict[str, Violation] = {}
    chosen: dict[str, int] = {}  # property -> the partition its shortest violation is on
    for proj in projections:
        k = proj.members[0]
        for name, v in proj.result.violations.items():
            if name not in violations or len(v.path) < len(violations[name].path):
                violations[name] = v
                chosen[name] = k
    violations = {name: replace(v, path=lift(model, v.path, chosen[name])) for name, v in violations.items()}

    def classify_stuck(prop: Any, findings: tuple[Any, ...], want_findings: bool = True):
        """As packed_explorer's: per projection, the shortest of each class, lifted to the cluster."""
        best_unexpected, best_found = None, {}
        for proj in projections:
            unexpected, found = proj.result.classify_stuck(prop, findings, want_findings)
            k = proj.members[0]
            if unexpected is not None and (best_unexpected is None or
                                           len(_stuck_prefix(unexpected)) < len(best_unexpected[1])):
                best_unexpected = (k, _stuck_prefix(unexpected))
            for name, lasso in found.items():
                if name not in best_found or len(_stuck_prefix(lasso)) < len(best_found[name][1]):
                    best_found[name] = (k, _stuck_prefix(lasso))
        lifted = None if best_unexpected is None else _trap(model, lift(model, best_unexpected[1], best_unexpected[0]))
        return lifted, {name: _trap(model, lift(model, path, k)) for name, (k, path) in best_found.items()}

    results = [p.result for p in projections]
    out = CompositionalResult(
        states=sum(r.states for r in results), transitions=sum(r.transitions for r in results),
        depth=max(r.depth for r in results), seconds=time.perf_counter() - started, complete=complete,
        violations=violations, stopped=next((r.stopped for r in results if r.stopped), None),
        projections=projections,
    )
    for r in results:
        for kind, count in r.per_action_edges.items():
            out.per_action_edges[kind] = out.per_action_edges.get(kind, 0) + count
    if complete and keep_graph:
        out.classify_stuck = classify_stuck
    return out


__all__ = ["CompositionError", "CompositionalResult", "compositional_explorer", "lift", "projections_of"]
