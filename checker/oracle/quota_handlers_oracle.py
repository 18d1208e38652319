"""The oracle's ops for the quota-handlers models (`kip599-handlers`, `kip599-handlers-rate` with the
`[quota_handlers]` keys, including issue 26's `retry`, `permissive_sizes`, `validate_only_sizes`, `controller`):
another implementation of the controller mutation quota asks what the reference does on one step, or has
its own step judged (docs/oracle.md, "The quota as clients meet it").

Each op takes the request's parameters as a dict and answers JSON; a bad parameter is a StepInputError
(`invalid_field`), an action the model does not take there is NotEnabled (`invalid_action`). server.py
registers the ops; every step is the model's own (checker/traces/quota_handlers_step.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kreassign.checker.traces import quota_handlers_step as QS
from kreassign.checker.traces.diff import show_json

NotEnabled, StepInputError = QS.NotEnabled, QS.StepInputError

#: each op's parameters (besides `id`, `op`, `profile`), in the order docs/oracle.md lists them
FIELDS = {
    "quota_handlers_init": ("quota_handlers",),
    "quota_handlers_step": ("quota_handlers", "state", "action"),
    "quota_handlers_check": ("quota_handlers", "state", "action", "observed_state", "observed_response"),
}


def _properties(s: QS.Step) -> list[dict[str, Any]]:
    return [{k: p[k] for k in ("name", "kind", "holds", "promised")} for p in s.properties]


def _violated(s: QS.Step) -> list[dict[str, Any]]:
    return [{k: p[k] for k in ("name", "kind", "promised", "description")} for p in s.violated]


def init(profile: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The configuration as the model reads it, its initial state and the actions enabled there."""
    model = QS.handlers_model(profile, params.get("quota_handlers"))
    start = model.init_states()[0]
    return {"config": model.describe(), "state": model.state_to_json(start),
            "enabled": [model.action_to_json(a) for a in model.actions(start)]}


def step(profile: Any, params: dict[str, Any]) -> dict[str, Any]:
    """What the reference does: the next state, the client's answer, every property's verdict on the step,
    and the actions enabled next."""
    model = QS.handlers_model(profile, params.get("quota_handlers"))
    state = QS.decode_state(model, params.get("state"))
    action = QS.decode_action(model, params.get("action"))
    s = QS.step(model, state, action)
    return {"state": model.state_to_json(s.state), "response": s.response, "properties": _properties(s),
            "violated": _violated(s), "enabled": [model.action_to_json(a) for a in model.actions(s.state)]}


def check(profile: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Judge an observed step: the keys of `observed_state` and `observed_response` given are compared with the
    reference's; the properties are judged on the observed step (keys left out taken from the reference's state,
    so a property that reads the model's ghost judges the reference's ghost there)."""
    if "observed_state" not in params and "observed_response" not in params:
        raise StepInputError("observed_state: missing required field (or observed_response)")
    model = QS.handlers_model(profile, params.get("quota_handlers"))
    state = QS.decode_state(model, params.get("state"))
    action = QS.decode_action(model, params.get("action"))
    expected = QS.step(model, state, action)
    obs_state = obs_response = None
    observed = expected.state
    if "observed_state" in params:
        if not isinstance(params["observed_state"], dict):
            raise StepInputError(f"observed_state: expected an object, got {params['observed_state']!r}")
        obs_state = QS.observed_json(model, params["observed_state"], expected.state, "observed_state")
        observed = QS.decode_state(model, params["observed_state"], "observed_state", fill=expected.state)
    if "observed_response" in params:
        obs_response = QS.decode_response(params["observed_response"], "observed_response")
    diff = [f"{f}: reference {show_json(r)}, implementation {show_json(o)}"
            for f, r, o in QS.differences(model, expected, obs_state, obs_response)]
    theirs = QS.judge(model, state, action, observed)
    ours = {p["name"] for p in expected.violated}
    violated = [{**{k: p[k] for k in ("name", "kind", "promised", "description")}, "reference_also": p["name"] in ours}
                for p in theirs if not p["holds"]]
    return {"verdict": "mismatch" if diff else "match", "diff": diff, "violated": violated,
            "expected": {"state": model.state_to_json(expected.state), "response": expected.response}}


OPS: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any]]] = {
    "quota_handlers_init": init, "quota_handlers_step": step, "quota_handlers_check": check}

__all__ = ["FIELDS", "OPS", "NotEnabled", "StepInputError", "check", "init", "step"]
