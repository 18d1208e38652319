"""One step of the quota-handlers models (`kip599-handlers`, `kip599-handlers-rate`, with the issue-26 client
keys of `[quota_handlers]`) in JSON, for the oracle (checker/oracle/quota_handlers_oracle.py) and
`validate-trace` (checker/traces/quota_handlers_trace.py).

It decodes a configuration, a state and an action, naming the bad field; applies the model's own step
(`QuotaHandlersModel.next_state`, the one source of semantics); reads the answer the client got off the
model's record of that edge (its `client` ghost: the request to retry with its throttle time, a validateOnly
request's answer); and judges the model's properties on the step. It encodes no quota rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kreassign.checker.models import quota_handlers as qh
from kreassign.spec.properties import ALWAYS, TRANSITION
from kreassign.spec.quota import number_from_json, number_to_json

PROFILES = tuple(qh.HANDLERS_PROFILES)
DEFAULT_PROFILE = PROFILES[0]
#: the error code of a rejected strict request (THROTTLING_QUOTA_EXCEEDED, KIP-599)
THROTTLING_QUOTA_EXCEEDED = 89
#: the keys of an answer (`response_of`); validate-trace and the oracle's check compare those given
RESPONSE_KEYS = ("error_code", "throttle_time_ms")


class StepInputError(ValueError):
    """Bad input: the message starts with the offending field's path."""


class NotEnabled(ValueError):
    """The action is not a step of the model in this state under this configuration."""


def handlers_model(profile: Any, table: Any, where: str = "quota_handlers") -> qh.QuotaHandlersModel:
    """The model of `profile` (default kip599-handlers) at a `[quota_handlers]` table over the profile's
    `kreassign check` default, as `check --config` reads it (the user's keys only, no broken variant)."""
    profile = DEFAULT_PROFILE if profile is None else profile
    if not isinstance(profile, str) or profile not in PROFILES:
        raise StepInputError(f"profile: expected one of {', '.join(PROFILES)}, got {profile!r}")
    try:
        config = qh.config_from_mapping({} if table is None else table, profile, where=where, variants=False,
                                        base=qh.default_config(profile))
    except ValueError as e:
        raise StepInputError(str(e)) from None
    return qh.QuotaHandlersModel(config)


# -- decoding ----------------------------------------------------------------------------------------------------


def _int(v: Any, name: str, *, nullable: bool = False, minimum: int = 0) -> None:
    if v is None and nullable:
        return
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise StepInputError(f"{name}: expected an integer >= {minimum}{' or null' if nullable else ''}, got {v!r}")


def state_keys(model: qh.QuotaHandlersModel) -> tuple[str, ...]:
    """The keys of the model's state JSON (the sensor's own columns, the handlers, the ghosts)."""
    return tuple(model.state_to_json(model.init_states()[0]))


def decode_state(model: qh.QuotaHandlersModel, data: Any, where: str = "state", fill: qh.HState | None = None
                 ) -> qh.HState:
    """A state from its JSON (model.state_from_json); keys left out are `fill`'s (default: the model's initial
    state: no sensor yet, no ghost), null is the initial state. StepInputError names the field as `where.key`."""
    start = model.init_states()[0]
    if data is None:
        return start
    if not isinstance(data, dict):
        raise StepInputError(f"{where}: expected an object, got {data!r}")
    known = state_keys(model)
    for k in data:
        if k not in known:
            raise StepInputError(f"{where}.{k}: unknown field for profile {model.config.profile} (known: "
                                 f"{', '.join(known)})")
    d = {**model.state_to_json(fill or start), **data}
    try:
        _int(d["now_ms"], "now_ms")
        if model.config.sensor == qh.RATE:
            if d["samples"] is not None:
                if not isinstance(d["samples"], list) or len(d["samples"]) > model.config.samples + 1:
                    raise StepInputError(f"samples: expected null or a list of at most {model.config.samples + 1} "
                                         f"[start_ms, last_event_ms, value, event_count], got {d['samples']!r}")
                for i, x in enumerate(d["samples"]):
                    if not isinstance(x, list) or len(x) != 4:
                        raise StepInputError(f"samples[{i}]: expected [start_ms, last_event_ms, value, event_count], "
                                             f"got {x!r}")
                    for j, name in ((0, "start_ms"), (1, "last_event_ms"), (3, "event_count")):
                        _int(x[j], f"samples[{i}].{name}")
                _int(d["current_sample"], "current_sample")
                if d["current_sample"] >= len(d["samples"]):
                    raise StepInputError(f"current_sample: expected an index into samples, got {d['current_sample']}")
        elif d["tokens"] is not None:
            number_from_json(d["tokens"], "tokens", nullable=False)
            _int(d["bucket_updated_ms"], "bucket_updated_ms")
        if not isinstance(d["pending"], list):
            raise StepInputError(f"pending: expected a list of one entry per handler, got {d['pending']!r}")
        for i, x in enumerate(d["pending"]):
            if model.config.atomic and x is not None:
                raise StepInputError(f"pending[{i}]: Kafka checks and records at once, nothing is pending: expected "
                                     f"null, got {x!r}")
            _int(x, f"pending[{i}]", nullable=True, minimum=1)
        if not isinstance(d["throttled_unquoted"], bool):
            raise StepInputError(f"throttled_unquoted: expected true or false, got {d['throttled_unquoted']!r}")
        if "client" in d and not model.config.clients and d["client"] is not None:
            raise StepInputError("client: the client ghost exists only with a client key on (retry, "
                                 "permissive_sizes, validate_only_sizes)")
        state = model.state_from_json(d)
    except (ValueError, TypeError) as e:
        raise StepInputError(f"{where}.{e}") from None
    if model.config.clients and state.client is None:
        raise StepInputError(f"{where}.client: expected the client ghost object (with a client key on), got null")
    for name in ("rate", "sensor_rate"):
        v = getattr(state, name)
        if v is not None and v <= 0:
            raise StepInputError(f"{where}.{name}: must be > 0 or null, got {number_to_json(v)}")
    return state


#: the fields of each action type (integers unless named in NULLABLE_RATE)
ACTION_FIELDS = {"Tick": ("ms",), "Send": ("handler", "n"), "Record": ("handler",), "AlterQuota": ("rate",),
                 "RetryAfterThrottle": (), "SendOld": ("n",), "SendValidateOnly": ("n",)}


def decode_action(model: qh.QuotaHandlersModel, data: Any, where: str = "action") -> Any:
    """An action from its JSON (model.action_from_json); StepInputError names the field as `where.key`."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise StepInputError(f"{where}: expected an object with a string \"type\" ({', '.join(ACTION_FIELDS)}), "
                             f"got {data!r}")
    kind = data["type"]
    if kind not in ACTION_FIELDS:
        raise StepInputError(f"{where}.type: not a quota-handlers action: {kind!r} (known: {', '.join(ACTION_FIELDS)})")
    for k in data:
        if k != "type" and k not in ACTION_FIELDS[kind]:
            raise StepInputError(f"{where}.{k}: unknown field for {kind} (known: {', '.join(ACTION_FIELDS[kind])})")
    for k in ACTION_FIELDS[kind]:
        if k not in data:
            raise StepInputError(f"{where}.{k}: missing required field")
        if k == "rate":
            try:
                rate = number_from_json(data[k], f"{where}.rate")
            except ValueError as e:
                raise StepInputError(str(e)) from None
            if rate is not None and rate <= 0:
                raise StepInputError(f"{where}.rate: must be > 0 or null (remove the quota), got {data[k]!r}")
        else:
            _int(data[k], f"{where}.{k}", minimum=0 if k == "handler" else 1)
    try:
        return model.action_from_json(data)
    except ValueError as e:
        raise StepInputError(str(e) if str(e).startswith(where) else f"{where}.{e}") from None


# -- the step ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """The model's step: the state after it, the client's answer, and the properties judged on it."""

    state: qh.HState
    response: dict[str, Any] | None
    properties: list[dict[str, Any]]

    @property
    def violated(self) -> list[dict[str, Any]]:
        return [p for p in self.properties if not p["holds"]]


def step(model: qh.QuotaHandlersModel, state: qh.HState, action: Any) -> Step:
    """Apply `action` by the model's own step; NotEnabled if it is not one of the model's actions here."""
    nxt = model.next_state(state, action)
    if nxt is None:
        enabled = ", ".join(str(a) for a in model.actions(state)) or "none"
        raise NotEnabled(f"{action} is not a step of {model.config.profile} in this state under this configuration "
                         f"(enabled: {enabled}; ticks and sizes come from [quota_handlers], time stops at horizon_ms "
                         f"{model.config.horizon_ms})")
    return Step(nxt, response_of(action, nxt), judge(model, state, action, nxt))


def response_of(action: Any, nxt: qh.HState) -> dict[str, Any] | None:
    """The answer the client got, read off the model's record of the edge (`client`, spec/quota_client_properties.py):
    a request the answer throttled is recorded as (mutations, strict?, throttle_ms) for the client to retry —
    a strict one was rejected with 89, a permissive one admitted with that throttle; one not throttled was admitted
    with 0 ms; a validateOnly request's record says whether it got 89 (its throttle time is not recorded: null).
    None where the model records no answer: Tick, AlterQuota, Record, and every action with no client key on."""
    g = nxt.client
    if g is None:
        return None
    if isinstance(action, qh.SendValidateOnly):
        assert g.validate_only is not None
        return {"error_code": THROTTLING_QUOTA_EXCEEDED if g.validate_only[0] else 0, "throttle_time_ms": None}
    if isinstance(action, qh.Send | qh.SendOld | qh.RetryAfterThrottle):
        if g.retry is None:
            return {"error_code": 0, "throttle_time_ms": 0}
        _, strict, throttle_ms = g.retry
        return {"error_code": THROTTLING_QUOTA_EXCEEDED if strict else 0, "throttle_time_ms": throttle_ms}
    return None


def judge(model: qh.QuotaHandlersModel, prev: qh.HState, action: Any, nxt: qh.HState) -> list[dict[str, Any]]:
    """Every state invariant (on `nxt`) and transition property (on the edge) of the model: holds, and whether
    the profile promises it (a property it does not promise and breaks is a finding, spec/findings.py)."""
    out = []
    for prop in model.properties():
        if prop.kind == ALWAYS:
            holds = bool(prop.predicate(nxt))
        elif prop.kind == TRANSITION:
            holds = bool(prop.predicate(prev, action, nxt))
        else:
            continue
        out.append({"name": prop.name, "kind": prop.kind, "holds": holds,
                    "promised": prop.promised(model.config.profile), "description": prop.description})
    return out


# -- comparing an observed outcome ----------------------------------------------------------------------------


def observed_json(model: qh.QuotaHandlersModel, data: Any, expected: qh.HState, where: str) -> dict[str, Any]:
    """The keys an observed state gives, in the model's canonical JSON ("2/1" is 2); the state is decoded with the
    other keys taken from `expected` (an implementation need not keep the model's ghosts)."""
    state = decode_state(model, data, where, fill=expected)
    canon = model.state_to_json(state)
    return {k: canon[k] for k in data}


def decode_response(data: Any, where: str = "response") -> dict[str, Any]:
    """An observed answer: any of error_code, throttle_time_ms (integers; throttle_time_ms may be null)."""
    if not isinstance(data, dict):
        raise StepInputError(f"{where}: expected an object with error_code and/or throttle_time_ms, got {data!r}")
    for k, v in data.items():
        if k not in RESPONSE_KEYS:
            raise StepInputError(f"{where}.{k}: unknown field (known: {', '.join(RESPONSE_KEYS)})")
        _int(v, f"{where}.{k}", nullable=k == "throttle_time_ms")
    return dict(data)


def differences(model: qh.QuotaHandlersModel, expected: Step, observed_state: dict[str, Any] | None,
                observed_response: dict[str, Any] | None) -> list[tuple[str, Any, Any]]:
    """(field, the reference's value, the observed value) for every key the observation gives that differs."""
    out: list[tuple[str, Any, Any]] = []
    if observed_state is not None:
        ref = model.state_to_json(expected.state)
        out += [(f"state.{k}", ref[k], v) for k, v in observed_state.items() if ref[k] != v]
    if observed_response is not None:
        ref_r = expected.response
        if ref_r is None:
            out.append(("response", None, observed_response))
        else:
            # a value the model does not record (a validateOnly request's throttle time: null) is not compared
            out += [(f"response.{k}", ref_r[k], v) for k, v in observed_response.items()
                    if ref_r[k] is not None and ref_r[k] != v]
    return out


__all__ = ["DEFAULT_PROFILE", "PROFILES", "NotEnabled", "Step", "StepInputError", "decode_action",
           "decode_response", "decode_state", "differences", "handlers_model", "judge", "observed_json",
           "response_of", "step"]
