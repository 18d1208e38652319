"""What a Spark search answers, in the embedded engine's shapes: shortest paths, the state graph, the result.

Paths are rebuilt on the driver from the discovery keys (the k-th successor of the parent,
recursively, from an initial state), so they are the embedded engine's shortest paths with the
model's own action labels; the graph, when kept, is in the embedded engine's order (levels, then
discovery keys).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from kreassign.checker.explore.bfs import ExploreResult, Path, StateGraph, Violation
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.context import RunContext
from kreassign.checker.spark.search import SearchSoFar


def path_to(ctx: RunContext, search: SearchSoFar, level: int, key: int) -> Path:
    """The shortest path the keys encode: the k-th successor of the parent, from an initial state."""
    ks = []
    while level > 0:
        ks.append(key & T.K_MASK)
        level -= 1
        key = int(search.level_keys[level][key >> T.K_BITS])
    state = ctx.inits[key]
    path: Path = [(state, None)]
    for k in reversed(ks):
        action, state = T.kth_successor(ctx.model, state, k, ctx.kernel)
        path.append((state, action))
    return path


def explore_result(ctx: RunContext, search: SearchSoFar, seconds: float, complete: bool, *,
                   stopped: str | None = None, classify_stuck: Callable[..., Any] | None = None,
                   release_liveness: Callable[[], None] | None = None) -> ExploreResult:
    """bfs.explore's result for the search so far (the graph only with keep_graph)."""
    found = search.found
    violations = {n: Violation(ctx.properties[n], path_to(ctx, search, *found.violations[n]))
                  for n in found.violations}
    for name, (level, key, k) in found.edge_violations.items():
        path = path_to(ctx, search, level, key)
        action, nxt = T.kth_successor(ctx.model, path[-1][0], k, ctx.kernel)
        violations[name] = Violation(ctx.properties[name], path + [(nxt, action)])
    deadlock = None
    if ctx.options.check_deadlock and found.deadlock is not None:
        deadlock = path_to(ctx, search, *found.deadlock)
    return ExploreResult(
        states=search.states,
        transitions=search.transitions,
        depth=search.depth,
        seconds=seconds,
        complete=complete,
        violations=violations,
        examples={n: path_to(ctx, search, *found.examples[n]) for n in found.examples},
        deadlock=deadlock,
        per_action_edges=dict(search.kinds),
        graph=state_graph(ctx, search) if ctx.options.keep_graph else None,
        stopped=stopped,
        classify_stuck=classify_stuck,
        release_liveness=release_liveness,
    )


def state_graph(ctx: RunContext, search: SearchSoFar) -> StateGraph:
    """The state graph in the embedded engine's order (levels, then discovery keys)."""
    int64 = ctx.int64
    states: list[Any] = []
    by_ident: dict[Any, int] = {}
    offsets = []
    for blobs in search.graph_states:
        offsets.append(len(states))
        if ctx.codec is None or not blobs:
            continue
        merged = T.concat_levels([T.level_from_blob(b, int64) for b in blobs], int64)
        order = np.argsort(merged.keys)
        if int64:
            idents = merged.payloads[order].tolist()
            for s in idents:
                by_ident[s] = len(states)
                states.append(s)
        else:
            hi, lo = merged.ident
            raw = T.join_digests(hi[order], lo[order])
            for j, i in enumerate(order.tolist()):
                by_ident[raw[16 * j : 16 * j + 16]] = len(states)
                states.append(ctx.codec.decode(merged.payloads[i]))
    successors: list[list[int]] = [[] for _ in states]
    actions: list[list[Any]] = [[] for _ in states]
    decode_action = action_decoder(ctx)
    for level, blobs in enumerate(search.graph_edges):
        rows = []
        for src_b, k_b, to_b, ids_b, table_b in blobs:
            src = np.frombuffer(src_b, dtype=np.int64)
            ranks = np.searchsorted(search.level_keys[level], src)
            sources = (offsets[level] + ranks).tolist()
            ks = np.frombuffer(k_b, dtype=np.uint16).tolist()
            if int64:
                targets = np.frombuffer(to_b, dtype=np.int64).tolist()
            else:
                targets = [to_b[16 * j : 16 * j + 16] for j in range(len(ks))]
            table = json.loads(table_b)
            ids = np.frombuffer(ids_b, dtype=np.int32).tolist()
            rows.extend(zip(sources, ks, targets, (table[i] for i in ids)))
        rows.sort(key=lambda r: (r[0], r[1]))
        for i, k, target, token in rows:
            j = by_ident.get(target)
            if j is not None:
                successors[i].append(j)
                actions[i].append(decode_action(token, states[i], k))
    return StateGraph(states, {s: i for i, s in enumerate(states)}, successors, actions)


def action_decoder(ctx: RunContext) -> Callable[[str, Any, int], Any]:
    """Edge labels from their JSON: `action_from_json` (cached), or the k-th successor again."""
    cache: dict[str, Any] = {}
    model = ctx.model

    def by_replay(token: str, state: Any, k: int) -> Any:
        return T.kth_successor(model, state, k, ctx.kernel)[0]

    def decode(token: str, state: Any, k: int) -> Any:
        action = cache.get(token)
        if action is None:
            try:
                action = cache[token] = model.action_from_json(json.loads(token))
            except Exception:  # noqa: BLE001 - the model cannot read its actions back: ask it again
                return by_replay(token, state, k)
        return action

    return decode


__all__ = ["action_decoder", "explore_result", "path_to", "state_graph"]
