"""JSON form of states, actions and messages (docs/state-format.md).

Encoding is generic over the spec's frozen dataclasses: a dataclass becomes an object
with one key per field, a tuple a list, None null. Actions carry a `"type"` key with
the class name. Decoding is driven by the type annotations, so every error names the
path of the offending field (e.g. ``topics[0].partitions[1].isr[2]: expected an
integer, got "x"``) and nothing is guessed.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, Union

from . import actions as _actions
from . import messages as _messages
from . import state as _state


class DecodeError(ValueError):
    """Bad JSON input; `path` names the offending field."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path or '<root>'}: {message}")
        self.path = path
        self.message = message


def to_json(value: Any) -> Any:
    """Encode a spec value (state, action, message) as JSON-compatible data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        if type(value).__name__ in _actions.ACTION_TYPES and isinstance(value, _actions.ACTION_TYPES[type(value).__name__]):
            out["type"] = type(value).__name__
        optional = getattr(type(value), "OPTIONAL_JSON_FIELDS", ())
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.name in optional and v == f.default:
                continue  # a later addition at its default: keep the older JSON form
            out[f.name] = to_json(v)
        return out
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    return value


def _namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {}
    for mod in (_state, _messages, _actions):
        ns.update(vars(mod))
    return ns


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, globalns=_namespace())


def _describe(v: Any) -> str:
    import json

    try:
        text = json.dumps(v)
    except (TypeError, ValueError):
        text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _decode(tp: Any, data: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None:
            if type(None) in args:
                return None
            raise DecodeError(path, "must not be null")
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _decode(non_none[0], data, path)
        # a union of action classes: dispatch on "type"
        return decode_action(data, path)
    if tp is type(None):
        if data is not None:
            raise DecodeError(path, f"expected null, got {_describe(data)}")
        return None
    if tp is bool:
        if not isinstance(data, bool):
            raise DecodeError(path, f"expected true or false, got {_describe(data)}")
        return data
    if tp is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise DecodeError(path, f"expected an integer, got {_describe(data)}")
        return data
    if tp is str:
        if not isinstance(data, str):
            raise DecodeError(path, f"expected a string, got {_describe(data)}")
        return data
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list):
            raise DecodeError(path, f"expected a list, got {_describe(data)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{path}[{i}]") for i, v in enumerate(data))
        if len(data) != len(args):
            raise DecodeError(path, f"expected a list of {len(args)} items, got {len(data)}")
        return tuple(_decode(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, data)))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data, path)
    raise DecodeError(path, f"cannot decode type {tp!r}")  # pragma: no cover - a spec bug


def _decode_dataclass(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(path, f"expected an object, got {_describe(data)}")
    hints = _hints(cls)
    kwargs = {}
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names and key != "type":
            raise DecodeError(f"{path}.{key}" if path else key, "unknown field")
    for f in dataclasses.fields(cls):
        sub = f"{path}.{f.name}" if path else f.name
        if f.name in data:
            kwargs[f.name] = _decode(hints[f.name], data[f.name], sub)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise DecodeError(sub, "missing required field")
    return cls(**kwargs)


def from_json(cls: type, data: Any, path: str = "") -> Any:
    """Decode JSON data as an instance of the spec dataclass `cls`; DecodeError names the bad field."""
    return _decode(cls, data, path)


def decode_action(data: Any, path: str = "") -> Any:
    """Decode an action object; its `"type"` key names the action class."""
    if not isinstance(data, dict):
        raise DecodeError(path, f"expected an action object, got {_describe(data)}")
    name = data.get("type")
    if not isinstance(name, str):
        raise DecodeError(f"{path}.type" if path else "type", "missing or not a string")
    cls = _actions.ACTION_TYPES.get(name)
    if cls is None:
        known = ", ".join(sorted(_actions.ACTION_TYPES))
        raise DecodeError(f"{path}.type" if path else "type", f"unknown action {name!r} (known: {known})")
    return _decode_dataclass(cls, data, path)


def state_to_json(state: _state.ClusterState) -> dict[str, Any]:
    return to_json(state)


def state_from_json(data: Any) -> _state.ClusterState:
    """Decode a ClusterState and check its structural rules (see `validate_state`)."""
    state = from_json(_state.ClusterState, data)
    validate_state(state)
    return state


def validate_state(state: _state.ClusterState) -> None:
    """Structural rules a state must satisfy to be meaningful input; raises DecodeError naming the field.

    These are well-formedness rules (ids non-negative, no duplicates, replicas on
    known brokers), not the model's safety properties, which are checked elsewhere.
    """
    seen: set[int] = set()
    for i, b in enumerate(state.brokers):
        if b.id < 0:
            raise DecodeError(f"brokers[{i}].id", f"negative broker id {b.id}")
        if b.id in seen:
            raise DecodeError(f"brokers[{i}].id", f"duplicate broker id {b.id}")
        seen.add(b.id)
    names: set[str] = set()
    for ti, t in enumerate(state.topics):
        if not t.name:
            raise DecodeError(f"topics[{ti}].name", "empty topic name")
        if t.name in names:
            raise DecodeError(f"topics[{ti}].name", f"duplicate topic {t.name!r}")
        names.add(t.name)
        for pi, p in enumerate(t.partitions):
            base = f"topics[{ti}].partitions[{pi}]"
            for fname in ("replicas", "isr", "adding", "removing"):
                lst = getattr(p, fname)
                if len(set(lst)) != len(lst):
                    raise DecodeError(f"{base}.{fname}", f"duplicate broker ids in {list(lst)}")
                for k, r in enumerate(lst):
                    if r < 0:
                        raise DecodeError(f"{base}.{fname}[{k}]", f"negative broker id {r}")
                    if r not in seen:
                        raise DecodeError(f"{base}.{fname}[{k}]", f"unknown broker {r}")
            if p.leader < -1:
                raise DecodeError(f"{base}.leader", f"invalid leader {p.leader} (a broker id or -1)")
            if p.leader != -1 and p.leader not in seen:
                raise DecodeError(f"{base}.leader", f"unknown broker {p.leader}")
            if p.leader_epoch < 0:
                raise DecodeError(f"{base}.leader_epoch", "negative epoch")
            if p.partition_epoch < 0:
                raise DecodeError(f"{base}.partition_epoch", "negative epoch")
    # names and numbers Kafka itself refuses (a topic name Kafka rejects, an id or epoch beyond int32)
    from .kafka_limits import state_problem

    problem = state_problem(state)
    if problem is not None:
        raise DecodeError(*problem)
