"""Reading a trace file for `show` and `replay`: every defect is a one-line UsageError (exit 2)
naming the file and the field path, e.g. `t.json: steps[3].state.ghosts: missing`.

`read_trace` (checker/traces/format.py) checks the envelope; `check_decodes` rebuilds the
trace's model and decodes its initial state and every step with it, so that a state
missing a field (a ghost variable, the budget) is reported where it is, not as a crash
deep inside replay or rendering. A state holding a name or number Kafka itself would refuse (a topic
name Topic.validate refuses, a negative or beyond-int32 id or epoch: spec/kafka_limits.py), or an action
with a number beyond Kafka's int32, is reported the same way.
"""

from __future__ import annotations

import math
from typing import Any

from kreassign.checker.config.bounds import bounds_from_mapping
from kreassign.checker.config.limits import REFUSE_ABOVE, approx, log10_estimate
from kreassign.checker.models.registry import REASSIGNMENT, build_model
from kreassign.checker.traces.format import Trace, TraceError, read_trace
from kreassign.spec.kafka_limits import action_problem, state_problem
from kreassign.spec.state import ClusterState

from kreassign.errors import UsageError

DECODE_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def _why(e: BaseException) -> str:
    if isinstance(e, KeyError):
        return f"missing field {e.args[0]!r}" if e.args else "missing field"
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:200]}" if not isinstance(e, (TraceError, ValueError)) else text[:200]


def model_of(path: str, trace: Trace) -> Any:
    """The trace's model, rebuilt from its kind, profile and bounds (absurd bounds are refused)."""
    try:
        model = None
        if trace.model == REASSIGNMENT:
            bounds = bounds_from_mapping(dict(trace.bounds), where="bounds")
            if log10_estimate(bounds) > math.log10(REFUSE_ABOVE):
                raise UsageError(f"bounds: up to {approx(log10_estimate(bounds))} states; "
                                 "not a model kreassign can rebuild")
            model = build_model(trace.model, trace.profile, bounds)
        else:
            model = build_model(trace.model, trace.profile, trace.bounds)
        return model
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from None
    except DECODE_ERRORS as e:
        raise UsageError(f"{path}: model/profile/bounds: {_why(e)}") from None


def _limits(path: str, where: str, found: tuple[str, str] | None) -> None:
    if found is not None:
        raise UsageError(f"{path}: {where}.{found[0]}: {found[1]}")


def _check_state(path: str, where: str, state: Any) -> None:
    """Kafka's limits on a decoded state: a ClusterState, or a model state holding one as `cluster`."""
    if isinstance(state, ClusterState):
        _limits(path, where, state_problem(state))
    elif isinstance(getattr(state, "cluster", None), ClusterState):
        _limits(path, f"{where}.cluster", state_problem(state.cluster))


def check_decodes(path: str, trace: Trace, model: Any) -> None:
    """Decode the initial state and every step's action and state with `model`, naming the first bad field."""
    where = "initial_state"
    try:
        _check_state(path, where, model.state_from_json(trace.initial))
        for k, step in enumerate(trace.steps):
            where = f"steps[{k}].action"
            action = model.action_from_json(step["action"])
            _limits(path, where, action_problem(getattr(action, "action", action)))
            where = f"steps[{k}].state"
            _check_state(path, where, model.state_from_json(step["state"]))
    except DECODE_ERRORS as e:
        path_in = getattr(e, "path", None)
        field = f"{where}.{path_in}" if path_in else where
        message = getattr(e, "message", None) or _why(e)
        raise UsageError(f"{path}: {field}: {message}") from None


def load(path: str) -> tuple[Trace, Any]:
    """The checked trace and its model."""
    trace = read_trace(path)
    model = model_of(path, trace)
    check_decodes(path, trace, model)
    return trace, model


__all__ = ["DECODE_ERRORS", "check_decodes", "load", "model_of"]
