"""Re-execute a trace against the reference and say whether its violation reproduces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.models.registry import build_model
from kreassign.checker.traces.format import Trace, TraceError
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION


@dataclass
class ReplayResult:
    reproduces: bool  # every step matched and the property fails where the trace says
    steps_matched: int
    mismatch: str | None = None  # first difference between the trace and the reference
    diffs: list[str] = field(default_factory=list)


def json_diff(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Field-level differences between two JSON values, as 'path: expected X, got Y' lines."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for k in sorted(set(expected) | set(actual), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in actual:
                out.append(f"{sub}: missing")
            elif k not in expected:
                out.append(f"{sub}: unexpected")
            else:
                out += json_diff(expected[k], actual[k], sub)
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        out = []
        for i, (a, b) in enumerate(zip(expected, actual)):
            out += json_diff(a, b, f"{path}[{i}]")
        return out
    return [] if expected == actual else [f"{path or '<root>'}: trace has {expected!r}, reference gives {actual!r}"]


def replay(trace: Trace) -> ReplayResult:
    """Rebuild the model, run the trace's actions from its initial state, compare every state."""
    try:
        model = build_model(trace.model, trace.profile, trace.bounds)
    except ValueError as e:
        raise TraceError(f"bounds: {e}") from None
    state = model.state_from_json(trace.initial)
    states, labels = [state], [None]
    for k, step in enumerate(trace.steps):
        action = model.action_from_json(step["action"])
        label = None
        if hasattr(model, "step"):
            state, label = model.step(state, action)
        else:
            nxt = model.next_state(state, action)
            if nxt is None:
                return ReplayResult(False, k, f"step {k + 1}: {step.get('action_text', action)} is not enabled")
            state, label = nxt, action
        # compare as the model compares states (a model may leave fields out of its identity,
        # e.g. the quota model's absolute clock); the JSON diff only explains a difference
        if model.state_from_json(step["state"]) != state:
            diffs = json_diff(step["state"], model.state_to_json(state))
            return ReplayResult(False, k, f"step {k + 1}: state differs from the reference", diffs)
        states.append(state)
        labels.append(label)
    prop = next((p for p in model.properties() if p.name == trace.property), None)
    if prop is None:
        return ReplayResult(False, len(trace.steps), f"property {trace.property!r} is not a property of this model")
    if prop.kind == ALWAYS:
        ok = not prop.predicate(states[-1])
    elif prop.kind == TRANSITION:
        ok = len(states) > 1 and not prop.predicate(states[-2], labels[-1], states[-1])
    elif prop.kind == EVENTUALLY and prop.extra.get("fairness") is not None:
        ok = trace.loop_start is not None and _fair_lasso(model, prop, states, labels, trace.loop_start)
    elif prop.kind == EVENTUALLY:
        ok = no_goal_reachable(model, prop, states[trace.loop_start if trace.loop_start is not None else -1])
    elif prop.kind == SOMETIMES:
        ok = prop.predicate(states[-1])
    else:
        ok = False
    return ReplayResult(ok, len(trace.steps), None if ok else f"the last state does not violate {trace.property}")


def _fair_lasso(model, prop, states, labels, loop_start) -> bool:
    """Re-check a fair liveness counterexample (spec/fairness.py): its loop is a fair run without the goal."""
    from kreassign.checker.explore.liveness import fair_lasso_holds

    return fair_lasso_holds(model, prop, states, labels, loop_start)


def no_goal_reachable(model, prop, start) -> bool:
    """Re-check a liveness counterexample: from its stuck state no goal is reachable without an admin."""
    from kreassign.checker.explore.liveness import environment_edge

    seen = {start}
    frontier = [start]
    while frontier:
        s = frontier.pop()
        if prop.predicate(s):
            return False
        for a, n in model.successors(s):
            if environment_edge(a) and n not in seen:
                seen.add(n)
                frontier.append(n)
    return True
