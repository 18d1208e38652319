"""Liveness on the explored state graph: from every reachable state, a goal stays reachable.

`eventually` properties are checked as AG EF goal over the edges the environment and
the controller take on their own (ISR changes, failures and recoveries, controller
steps and failovers, the log) — never an admin's request or election, which could
always rescue a stuck partition by cancelling. Fairness (live target replicas
eventually catch up) is what makes "reachable" the right question: every such path is
one a fair scheduler may take.

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

from .bfs import Path, StateGraph

NETWORKX_EDGE_LIMIT = 5_000_000

ADMIN_ACTIONS = frozenset(
    {"Reassign", "Cancel", "CancelTopic", "CancelAll", "RemoveCancelMarker", "AlterReassignments", "ZnodeReassign",
     "ElectLeaders", "ListReassignments"}
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
    can = _reach_goal(graph, goal, allowed)
    for i, ok in enumerate(can):
        if not ok:
            return Stuck(i, _trap_loop(graph, i, allowed))
    return None


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
