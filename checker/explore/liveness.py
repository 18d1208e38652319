"""Liveness on the explored state graph: from every reachable state, a goal stays reachable.

`eventually` properties are checked as AG EF goal over the edges the environment and
the controller take on their own (ISR changes, failures and recoveries, controller
steps and failovers, the log) — never an admin's request or election, which could
always rescue a stuck partition by cancelling. Fairness (live target replicas
eventually catch up) is what makes "reachable" the right question: every such path is
one a fair scheduler may take.

A property with `extra["fairness"]` (spec/fairness.py) asks more: the goal must *happen* in
every fair run in which its standing condition eventually always holds. `find_fair_lasso`
restricts the graph to the states where the condition holds and the goal does not, splits
it into strongly connected components over the edges a fair loop may take, and returns the
first component (in BFS order) that is fair: every weak-fairness class enabled in all of its
states is taken on one of its inner edges (a component of one state with no inner edge
stutters, which is fair iff it enables no fair action). For weak fairness a maximal
component suffices: a cycle through all its states and edges is fair iff any cycle in it is.

A state that cannot reach a goal is *stuck*: the counterexample is a shortest path to
the first stuck state found plus a loop it is trapped in (a cycle among the states it
can still reach, none of which is a goal), or a dead end.

networkx holds the graph when it has at most NETWORKX_EDGE_LIMIT edges (about 0.5 KB
per edge in memory, so ~2.5 GB at the limit); above that the same reverse search runs
on plain index lists from the engine's StateGraph, which cost ~40 bytes per edge.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx
from kreassign.checker.explore.bfs import Path, StateGraph
from kreassign.spec.fairness import Fairness
from kreassign.spec.properties import Property

NETWORKX_EDGE_LIMIT = 5_000_000

ADMIN_ACTIONS = frozenset(
    {"Reassign", "Cancel", "CancelTopic", "CancelAll", "RemoveCancelMarker", "AlterReassignments", "ZnodeReassign",
     "ElectLeaders", "ListReassignments", "ToolExecute", "ToolCancel", "CreatePartitions"}
)


def environment_edge(action: Any) -> bool:
    """Edges a stuck partition may still take without an admin: not a request or an election."""
    return type(getattr(action, "action", action)).__name__ not in ADMIN_ACTIONS


@dataclass
class Stuck:
    """A state from which no goal is reachable: the path to it and the loop it is trapped in."""

    path_index: int  # state index in the graph
    loop: list[int]  # state indices of a cycle reachable from it (first == last), or [] for a dead end


def _reach_goal(graph: StateGraph, goal: Callable[[Any], bool], allowed: Callable[[Any], bool]) -> list[bool]:
    """can[i]: state i reaches a goal through allowed edges (reverse BFS from the goals)."""
    n = len(graph.states)
    edges = sum(len(s) for s in graph.successors)
    can = [False] * n
    frontier = deque(i for i, s in enumerate(graph.states) if goal(s))
    for i in frontier:
        can[i] = True
    if edges <= NETWORKX_EDGE_LIMIT:
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        for i, (succ, acts) in enumerate(zip(graph.successors, graph.actions)):
            g.add_edges_from((i, j) for j, a in zip(succ, acts) if allowed(a))
        preds = g.pred  # networkx's predecessor adjacency
    else:
        preds = [[] for _ in range(n)]
        for i, (succ, acts) in enumerate(zip(graph.successors, graph.actions)):
            for j, a in zip(succ, acts):
                if allowed(a):
                    preds[j].append(i)
    while frontier:  # one multi-source reverse BFS from every goal state
        j = frontier.popleft()
        for i in preds[j]:
            if not can[i]:
                can[i] = True
                frontier.append(i)
    return can


def _trap_loop(graph: StateGraph, start: int, allowed: Callable[[Any], bool]) -> list[int]:
    """A cycle among the states reachable from `start` through allowed edges ([] if none: a dead end)."""
    seen = {start}
    order = [start]
    queue = deque([start])
    while queue:
        i = queue.popleft()
        for j, a in zip(graph.successors[i], graph.actions[i]):
            if allowed(a) and j not in seen:
                seen.add(j)
                order.append(j)
                queue.append(j)
    sub = nx.DiGraph()
    sub.add_nodes_from(order)
    for i in order:
        sub.add_edges_from((i, j) for j, a in zip(graph.successors[i], graph.actions[i]) if allowed(a) and j in seen)
    try:
        cycle = nx.find_cycle(sub, source=start)
    except nx.NetworkXNoCycle:
        return []
    return [u for u, _ in cycle] + [cycle[0][0]]


def find_stuck(
    graph: StateGraph, goal: Callable[[Any], bool], allowed: Callable[[Any], bool] = environment_edge
) -> Stuck | None:
    """The first reachable state (in BFS order, so on a shortest path) from which no goal is reachable."""
    for i in stuck_states(graph, goal, allowed):
        return stuck_at(graph, i, allowed)
    return None


def stuck_states(
    graph: StateGraph, goal: Callable[[Any], bool], allowed: Callable[[Any], bool] = environment_edge
) -> list[int]:
    """Every reachable state from which no goal is reachable, in BFS order (for classifying them)."""
    return [i for i, ok in enumerate(_reach_goal(graph, goal, allowed)) if not ok]


def stuck_at(graph: StateGraph, i: int, allowed: Callable[[Any], bool] = environment_edge) -> Stuck:
    """The Stuck record of state i (known to be stuck): the loop it is trapped in."""
    return Stuck(i, _trap_loop(graph, i, allowed))


def classify_stuck(stuck: list[int], state: Callable[[int], Any], edges: Callable[[set[int]], Any],
                   lasso_of: Callable[[int], Any], premise: Callable[[Any], bool] | None, findings: tuple[Any, ...],
                   want_findings: bool = True) -> tuple[Any, dict[str, Any]]:
    """Classify the stuck states of an `eventually` property by the declared findings — the one
    definition every engine uses (object graph, packed arrays, compositional projections).

    `stuck`: the stuck states in BFS order (so the first of each class is on a shortest path);
    `state(i)`: state i; `edges(among)`: the environment edges (i, j) with both ends in `among`;
    `lasso_of(i)`: the counterexample of stuck state i. States outside the `premise` do not count.
    A finding (`.name`, `.signature(state)`) explains a stuck state its signature recognises, and
    every stuck state that can only drift into one on its own (through environment edges): a
    partition may be doomed a few steps before it shows (zk: step U of a request is still to run
    when the leader's fate is sealed). Returns (the first unexplained lasso or None, {finding: lasso})."""
    memo: dict[int, Any] = {}

    def at(i: int) -> Any:
        if i not in memo:
            memo[i] = state(i)
        return memo[i]

    stuck = [i for i in stuck if premise is None or premise(at(i))]
    explains: dict[str, set[int]] = {}
    if findings:
        among = set(stuck)
        preds: dict[int, list[int]] = {}
        for i, j in edges(among):
            preds.setdefault(j, []).append(i)
        for f in findings:
            seen = {i for i in stuck if f.signature(at(i))}
            queue = deque(seen)
            while queue:
                for i in preds.get(queue.popleft(), ()):
                    if i not in seen:
                        seen.add(i)
                        queue.append(i)
            explains[f.name] = seen
    unexpected, found = None, {}
    for i in stuck:
        matched = [f for f in findings if i in explains[f.name]]
        new = [f for f in matched if f.name not in found] if want_findings else []
        if (matched or unexpected is not None) and not new:
            continue
        one = lasso_of(i)
        if not matched:
            unexpected = one
        for f in new:
            found[f.name] = one
        if unexpected is not None and (not want_findings or len(found) == len(findings)):
            break
    return unexpected, found


def lasso(graph: StateGraph, stuck: Stuck, inits: tuple[int, ...] = (0,)) -> tuple[Path, int | None]:
    """The counterexample as an engine Path [(state, action), ...]: a shortest path from an initial
    state to the stuck state, then on to the loop and once around it; and where the loop starts."""
    src, prefix = _shortest(graph, inits, stuck.path_index, lambda a: True)
    path: Path = [(graph.states[src], None)] + [(graph.states[j], a) for a, j in prefix]
    if len(stuck.loop) < 2:
        return path, None
    _, bridge = _shortest(graph, (stuck.path_index,), stuck.loop[0], environment_edge)
    path += [(graph.states[j], a) for a, j in bridge]
    loop_start = len(path) - 1
    for u, v in zip(stuck.loop, stuck.loop[1:]):
        k = next(k for k, (j, a) in enumerate(zip(graph.successors[u], graph.actions[u]))
                 if j == v and environment_edge(a))
        path.append((graph.states[v], graph.actions[u][k]))
    return path, loop_start


def _shortest(graph: StateGraph, sources: tuple[int, ...], dst: int,
              allowed: Callable[[Any], bool]) -> tuple[int, list[tuple[Any, int]]]:
    """(source used, [(action, state index), ...]) of a shortest allowed path to dst."""
    parent: dict[int, tuple[int, Any]] = {s: (-1, None) for s in sources}
    queue = deque(sources)
    while queue:
        i = queue.popleft()
        if i == dst:
            out = []
            while parent[i][0] != -1:
                p, a = parent[i]
                out.append((a, i))
                i = p
            return i, list(reversed(out))
        for j, a in zip(graph.successors[i], graph.actions[i]):
            if j not in parent and allowed(a):
                parent[j] = (i, a)
                queue.append(j)
    raise ValueError(f"state {dst} is not reachable")  # the engine's graph guarantees it is


# -- fair liveness: lassos ---------------------------------------------------------------------------


def violation(graph: StateGraph, prop: Property, inits: tuple[int, ...] = (0,)) -> tuple[Path, int | None] | None:
    """The counterexample of an `eventually` property as (path, loop start), or None if it holds:
    under fairness when the property carries one, else AG EF goal."""
    fairness = prop.extra.get("fairness")
    if fairness is not None:
        return find_fair_lasso(graph, prop.predicate, fairness, inits)
    stuck = find_stuck(graph, prop.predicate)
    return None if stuck is None else lasso(graph, stuck, inits)


def _enabled_classes(graph: StateGraph, i: int, fairness: Fairness) -> set:
    return {c for c in map(fairness.fair_class, graph.actions[i]) if c is not None}


def fair_components(graph: StateGraph, goal: Callable[[Any], bool], fairness: Fairness) -> list[tuple[list[int], set]]:
    """The fair strongly connected components: (states sorted by index, the fair classes they must take)."""
    keep = [fairness.condition(s) and not goal(s) for s in graph.states]
    sub = nx.DiGraph()
    sub.add_nodes_from(i for i, k in enumerate(keep) if k)
    for i in sub.nodes:
        sub.add_edges_from((i, j) for j, a in zip(graph.successors[i], graph.actions[i])
                           if keep[j] and fairness.loop_edge(a))
    out = []
    for comp in nx.strongly_connected_components(sub):
        members = sorted(comp)
        inside = set(comp)
        always_enabled = set.intersection(*(_enabled_classes(graph, i, fairness) for i in members))
        taken = {fairness.fair_class(a) for i in members for j, a in zip(graph.successors[i], graph.actions[i])
                 if j in inside and fairness.loop_edge(a)}
        if always_enabled <= taken:
            out.append((members, always_enabled))
    out.sort(key=lambda c: c[0][0])
    return out


def find_fair_lasso(graph: StateGraph, goal: Callable[[Any], bool], fairness: Fairness,
                    inits: tuple[int, ...] = (0,)) -> tuple[Path, int | None] | None:
    """A fair run that never reaches the goal while the condition holds, as a lasso: the path to the
    loop's first state, then once around a loop that takes every fair class the loop must take.
    The loop start is the index of the loop's first state in the path; a loop of one state that
    stutters has no edge after it."""
    comps = fair_components(graph, goal, fairness)
    if not comps:
        return None
    members, must_take = comps[0]
    inside = set(members)
    entry = members[0]  # smallest BFS index: on a shortest path from an initial state
    src, prefix = _shortest(graph, inits, entry, lambda a: True)
    path: Path = [(graph.states[src], None)] + [(graph.states[j], a) for a, j in prefix]
    loop_start = len(path) - 1
    here = entry
    in_loop = lambda a: fairness.loop_edge(a)

    def walk(u: int, v: int) -> None:  # a shortest path inside the component, appended to `path`
        parent: dict[int, tuple[int, Any]] = {u: (-1, None)}
        queue = deque([u])
        while queue and v not in parent:
            i = queue.popleft()
            for j, a in zip(graph.successors[i], graph.actions[i]):
                if j in inside and j not in parent and in_loop(a):
                    parent[j] = (i, a)
                    queue.append(j)
        steps = []
        while v != u:
            p, a = parent[v]
            steps.append((graph.states[v], a))
            v = p
        path.extend(reversed(steps))

    for cls in sorted(must_take, key=str):
        i, j, a = next((i, j, a) for i in members for j, a in zip(graph.successors[i], graph.actions[i])
                       if j in inside and in_loop(a) and fairness.fair_class(a) == cls)
        walk(here, i)
        path.append((graph.states[j], a))
        here = j
    if len(members) > 1:  # go round: a loop of several states must move, and come back to its start
        if len(path) - 1 == loop_start:
            j, a = next((j, a) for j, a in zip(graph.successors[entry], graph.actions[entry])
                        if j in inside and in_loop(a))
            path.append((graph.states[j], a))
            here = j
        walk(here, entry)
    return path, loop_start


def fair_lasso_holds(model: Any, prop: Property, states: list[Any], labels: list[Any], loop_start: int) -> bool:
    """Re-check a fair lasso on a replayed trace: the loop closes, the condition holds and the goal
    does not on it, its edges may be in a loop, and it is fair (every fair class enabled in all
    its states is taken on it). A loop of one state without an edge stutters."""
    fairness: Fairness = prop.extra["fairness"]
    loop = states[loop_start:]
    if loop[0] != loop[-1] and len(loop) > 1:
        return False
    if any(prop.predicate(s) or not fairness.condition(s) for s in loop):
        return False
    edges = labels[loop_start + 1:]
    if not all(fairness.loop_edge(a) for a in edges):
        return False
    distinct = loop[:-1] if len(loop) > 1 else loop
    enabled = set.intersection(*({c for c in map(fairness.fair_class, model.actions(s)) if c is not None}
                                 for s in distinct))
    taken = {fairness.fair_class(a) for a in edges}
    return enabled <= taken
