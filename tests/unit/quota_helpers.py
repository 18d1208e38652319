"""A small breadth-first explorer for the quota model tests (independent of checker.bfs).

It sees only the Model protocol. BFS order makes every counterexample it reports a
shortest one: for `always` the shortest path to a violating state, for `transition` the
shortest path whose last edge violates it, for `sometimes` the shortest example, and for
`eventually` (AG EF goal) the shortest path to a state from which no goal state is
reachable. States outside `within_boundary` are counted and checked but not expanded,
and are left out of the `eventually` verdict (what lies beyond them is unknown).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.explore.protocol import Model
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION


@dataclass
class Exploration:
    states: int
    edges: int
    depth: int
    complete: bool  # False when max_depth cut the search
    # property name -> list of actions of the shortest counterexample (or example, for `sometimes`)
    violations: dict[str, list[Any]] = field(default_factory=dict)
    examples: dict[str, list[Any]] = field(default_factory=dict)
    parents: dict[Any, tuple[Any, Any]] = field(default_factory=dict, repr=False)

    def holds(self, name: str) -> bool:
        return name not in self.violations


def _path(parents: dict[Any, tuple[Any, Any]], state: Any) -> list[Any]:
    actions = []
    while parents[state][0] is not None:
        prev, action = parents[state]
        actions.append(action)
        state = prev
    return actions[::-1]


def explore(
    model: Model, *, max_depth: int | None = None, max_states: int = 2_000_000, stop_when: str | None = None
) -> Exploration:
    """Explore `model` breadth-first; `stop_when` ends the search once that property is violated."""
    props = list(model.properties())
    always = [p for p in props if p.kind == ALWAYS]
    trans = [p for p in props if p.kind == TRANSITION]
    sometimes = [p for p in props if p.kind == SOMETIMES]
    goals = [p for p in props if p.kind == EVENTUALLY]
    parents: dict[Any, tuple[Any, Any]] = {}
    depth_of: dict[Any, int] = {}
    succ: dict[Any, list[Any]] = {}
    res = Exploration(0, 0, 0, True, parents=parents)
    queue: deque[Any] = deque()

    def visit(state: Any, parent: Any, action: Any, depth: int) -> None:
        parents[state] = (parent, action)
        depth_of[state] = depth
        res.depth = max(res.depth, depth)
        for p in always:
            if p.name not in res.violations and not p.predicate(state):
                res.violations[p.name] = _path(parents, state)
        for p in sometimes:
            if p.name not in res.examples and p.predicate(state):
                res.examples[p.name] = _path(parents, state)
        queue.append(state)

    for s in model.init_states():
        if s not in parents:
            visit(s, None, None, 0)
    while queue:
        if stop_when is not None and stop_when in res.violations:
            res.complete = False
            break
        state = queue.popleft()
        if not model.within_boundary(state):
            continue
        d = depth_of[state]
        if max_depth is not None and d >= max_depth:
            res.complete = False
            continue
        nexts = succ.setdefault(state, [])
        for action in model.actions(state):
            nxt = model.next_state(state, action)
            if nxt is None:
                continue
            res.edges += 1
            nexts.append(nxt)
            for p in trans:
                if p.name not in res.violations and not p.predicate(state, action, nxt):
                    res.violations[p.name] = _path(parents, state) + [action]
            if nxt not in parents:
                if len(parents) >= max_states:
                    raise RuntimeError(f"more than {max_states} states")
                visit(nxt, state, action, d + 1)
    res.states = len(parents)
    for p in sometimes:
        if p.name not in res.examples:
            res.violations[p.name] = []  # no example: reported as a violation with an empty path
    if goals and res.complete:
        preds: dict[Any, list[Any]] = {}
        for s, ns in succ.items():
            for n in ns:
                preds.setdefault(n, []).append(s)
        for p in goals:
            good = {s for s in parents if p.predicate(s)}
            frontier = list(good)
            while frontier:
                s = frontier.pop()
                for q in preds.get(s, ()):
                    if q not in good:
                        good.add(q)
                        frontier.append(q)
            bad = [s for s in parents if s not in good and model.within_boundary(s)]
            if bad:
                worst = min(bad, key=lambda s: depth_of[s])
                res.violations[p.name] = _path(parents, worst)
    return res
