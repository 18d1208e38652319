"""How states travel between the Spark driver and executors: compact, canonical bytes, never pickles.

A codec turns a state into (identity, payload) and a payload back into the state:

- the *identity* decides equality: two states are equal iff their identities are. The
  visited set, the deduplication and the hash partitioning use it;
- the *payload* rebuilds the state (it may carry fields that take no part in equality,
  like the quota model's `now_ms`, so the state an engine keeps is exactly the one it
  first discovered, as in the embedded engine).

Codecs, in the order the engine tries them (codec_choice.py `codec_for`):

- `Int64Codec`: states that are ints in 0..2**63-1 (the anchor's packed states). The
  identity and the payload are the int64 itself; the engine keeps them in numpy arrays.
- `ModelCodec`: the model's own `encode_state(s) -> bytes` / `decode_state(b)`; the bytes
  are the identity, so they must be canonical (equal states give equal bytes).
- `StructCodec`: the default for states built, like the spec's, from frozen dataclasses,
  NamedTuples, tuples, ints, strs, bools, None and Fractions. It is compiled once from the
  state type's annotations into positional JSON (a dataclass is the list of its field
  values, in declaration order, without keys): about 10 µs per state each way, 4–10×
  faster than the model's JSON form. Fields declared `compare=False` are left out of the
  identity, so identity equality is exactly the dataclasses' `==`.
- `PlainCodec`: states made of tuples, ints, strs, bools, None and frozensets (no annotations
  needed): JSON with tuples as lists and frozensets as sorted lists.
- `JsonCodec`: the model's `state_to_json` / `state_from_json`, as compact JSON with sorted
  keys; the JSON form must then be canonical (equal states give equal JSON).

Byte identities are replaced by their 128-bit BLAKE2b digest in the visited set: two distinct states are taken as equal only if their digests collide, with
probability below n²/2¹²⁹ for n states (about 10⁻²¹ for a billion states; TLC's 64-bit
fingerprints are much weaker). Each codec is checked on the initial states before a run
(codec_choice.py `check_codec`) and, by the tests, on every reachable state of the default models.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Union

import numpy as np

DIGEST_BYTES = 16
INT64_MAX = (1 << 63) - 1

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
_loads = json.loads


class CodecError(ValueError):
    """A state the codec cannot encode faithfully; the message says why."""


def digest(data: bytes) -> bytes:
    """The 128-bit fingerprint of an identity (BLAKE2b)."""
    return hashlib.blake2b(data, digest_size=DIGEST_BYTES).digest()


def frame(parts: list[bytes]) -> bytes:
    """Several byte strings as one (their count and sizes, then their bytes): checkpoint lines, packed batches."""
    header = np.array([len(parts)] + [len(p) for p in parts], dtype="<u8").tobytes()
    return header + b"".join(parts)


def unframe(blob: bytes) -> list[bytes]:
    view = memoryview(blob)
    n = int(np.frombuffer(view[:8], dtype="<u8")[0])
    sizes = np.frombuffer(view[8 : 8 + 8 * n], dtype="<u8").tolist()
    out, at = [], 8 + 8 * n
    for size in sizes:
        out.append(bytes(view[at : at + size]))
        at += size
    return out


class Codec:
    """encode(state) -> (identity, payload); decode(payload) -> state."""

    name = "codec"
    int64 = False  # identities and payloads are int64 (numpy arrays), not bytes

    def encode(self, state: Any) -> tuple[Any, Any]:
        raise NotImplementedError

    def decode(self, payload: Any) -> Any:
        raise NotImplementedError

    def gather(self, payloads: list[Any]) -> Any:
        """A batch of payloads as a level holds them: a list, but for the packed path's int64 rows."""
        return payloads

    def states_of(self, payloads: Any) -> list[Any]:
        """The states of a batch of payloads."""
        return [self.decode(p) for p in payloads]


class Int64Codec(Codec):
    name = "int64"
    int64 = True

    def encode(self, state: Any) -> tuple[int, int]:
        if type(state) is not int or not 0 <= state <= INT64_MAX:
            raise CodecError(f"int64 codec: state {state!r} is not an int in 0..2**63-1")
        return state, state

    def decode(self, payload: Any) -> int:
        return int(payload)


class ModelCodec(Codec):
    """The model's own `encode_state` / `decode_state` (canonical bytes)."""

    name = "model"

    def __init__(self, model: Any):
        self._encode, self._decode = model.encode_state, model.decode_state

    def encode(self, state: Any) -> tuple[bytes, bytes]:
        data = bytes(self._encode(state))
        return digest(data), data

    def decode(self, payload: bytes) -> Any:
        return self._decode(payload)


class JsonCodec(Codec):
    """The model's JSON form (`state_to_json` / `state_from_json`), compact with sorted keys."""

    name = "json"

    def __init__(self, model: Any):
        self._to, self._from = model.state_to_json, model.state_from_json
        self._dumps = json.JSONEncoder(separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode

    def encode(self, state: Any) -> tuple[bytes, bytes]:
        data = self._dumps(self._to(state)).encode()
        return digest(data), data

    def decode(self, payload: bytes) -> Any:
        return self._from(_loads(payload))


# -- the structural codec ------------------------------------------------------------------------

Enc = Callable[[Any], Any] | None  # None: the value is JSON as it is (ints, strs, tuples of them)
Dec = Callable[[Any], Any] | None  # None: the JSON value is the value


def _is_namedtuple(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields")


def _field_types(tp: type) -> list[tuple[str, Any, bool]]:
    """(name, type, compared) of each field of a dataclass or NamedTuple, in order."""
    try:
        hints = typing.get_type_hints(tp)
    except (NameError, AttributeError, TypeError) as e:  # a forward reference the module cannot resolve
        raise CodecError(f"{tp.__qualname__}: cannot resolve the field types ({e})") from None
    if dataclasses.is_dataclass(tp):
        params = getattr(tp, "__dataclass_params__", None)
        if params is not None and not params.eq:
            raise CodecError(f"{tp.__qualname__}: a dataclass without eq compares by identity")
        return [(f.name, hints[f.name], f.compare) for f in dataclasses.fields(tp)]
    return [(name, hints.get(name, Any), True) for name in tp._fields]


class _Compiler:
    """Compiles encoders and decoders from type annotations, once per type."""

    def __init__(self) -> None:
        self.enc: dict[tuple[Any, bool], Enc] = {}
        self.dec: dict[Any, Dec] = {}
        self.has_uncompared = False

    # -- encoders ----------------------------------------------------------------------------------
    def encoder(self, tp: Any, identity: bool) -> Enc:
        key = (tp, identity)
        if key not in self.enc:
            self.enc[key] = None  # recursive types: provisional
            self.enc[key] = self._encoder(tp, identity)
        return self.enc[key]

    def _encoder(self, tp: Any, identity: bool) -> Enc:
        origin = typing.get_origin(tp)
        if tp in (int, str, bool, type(None)):
            return None
        if tp is Fraction:
            return lambda v: (v.numerator, v.denominator)
        if origin in (Union, types.UnionType):
            return self._union_encoder(typing.get_args(tp), identity)
        if origin is typing.Literal:
            return None
        if origin is tuple:
            args = typing.get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                item = self.encoder(args[0], identity)
                return None if item is None else (lambda v: [item(x) for x in v])
            items = [self.encoder(a, identity) for a in args]
            if all(e is None for e in items):
                return None
            return lambda v: [x if e is None else e(x) for e, x in zip(items, v)]
        if origin is frozenset:
            (arg,) = typing.get_args(tp)
            item = self.encoder(arg, identity)
            # sorted by the JSON text of each member: canonical whatever the iteration order
            return lambda v: sorted((x if item is None else item(x) for x in v), key=_dumps)
        if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or _is_namedtuple(tp)):
            return self._record_encoder(tp, identity)
        raise CodecError(f"no structural encoding for type {tp!r}")

    def _union_encoder(self, args: tuple[Any, ...], identity: bool) -> Enc:
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            inner = self.encoder(members[0], identity)
            return None if inner is None else (lambda v: None if v is None else inner(v))
        # several types: tag the value with the index of its type
        checks = [(_runtime_type(a), self.encoder(a, identity)) for a in members]

        def enc(v: Any) -> Any:
            if v is None:
                return None
            for i, (t, e) in enumerate(checks):
                if type(v) is t or (t not in (int, bool) and isinstance(v, t)):
                    return [i, v if e is None else e(v)]
            raise CodecError(f"value {v!r} is none of {members}")

        return enc

    def _record_encoder(self, tp: type, identity: bool) -> Enc:
        fields = _field_types(tp)
        if identity:
            if not all(compared for _, _, compared in fields):
                self.has_uncompared = True
            fields = [f for f in fields if f[2]]
        names = [name for name, _, _ in fields]
        encs = [self.encoder(t, identity) for _, t, _ in fields]
        if not names:
            return lambda v: []
        get = _getter(names)
        if all(e is None for e in encs):
            return lambda v: get(v)
        pairs = list(zip(encs, range(len(encs))))

        def enc(v: Any) -> Any:
            values = get(v)
            return [values[i] if e is None else e(values[i]) for e, i in pairs]

        return enc

    # -- decoders ----------------------------------------------------------------------------------
    def decoder(self, tp: Any) -> Dec:
        if tp not in self.dec:
            self.dec[tp] = None
            self.dec[tp] = self._decoder(tp)
        return self.dec[tp]

    def _decoder(self, tp: Any) -> Dec:
        origin = typing.get_origin(tp)
        if tp in (int, str, bool, type(None)) or origin is typing.Literal:
            return None
        if tp is Fraction:
            return lambda v: Fraction(v[0], v[1])
        if origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) == 1:
                inner = self.decoder(members[0])
                return None if inner is None else (lambda v: None if v is None else inner(v))
            decs = [self.decoder(a) for a in members]
            return lambda v: None if v is None else (v[1] if decs[v[0]] is None else decs[v[0]](v[1]))
        if origin is tuple:
            args = typing.get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                item = self.decoder(args[0])
                return tuple if item is None else (lambda v: tuple(map(item, v)))
            items = [self.decoder(a) for a in args]
            if all(d is None for d in items):
                return tuple
            return lambda v: tuple(x if d is None else d(x) for d, x in zip(items, v))
        if origin is frozenset:
            (arg,) = typing.get_args(tp)
            item = self.decoder(arg)
            return frozenset if item is None else (lambda v: frozenset(map(item, v)))
        if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or _is_namedtuple(tp)):
            fields = _field_types(tp)
            decs = [self.decoder(t) for _, t, _ in fields]
            pairs = list(enumerate(decs))
            if all(d is None for d in decs):
                return lambda v: tp(*v)
            return lambda v: tp(*[v[i] if d is None else d(v[i]) for i, d in pairs])
        raise CodecError(f"no structural decoding for type {tp!r}")


def _runtime_type(tp: Any) -> type:
    origin = typing.get_origin(tp)
    if origin is not None:
        return origin
    if isinstance(tp, type):
        return tp
    raise CodecError(f"cannot tell a value of {tp!r} apart in a union")


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    from operator import attrgetter

    get = attrgetter(*names)
    return (lambda v: (get(v),)) if len(names) == 1 else get


class StructCodec(Codec):
    """Positional JSON compiled from the state type's annotations (see the module docstring)."""

    name = "struct"

    def __init__(self, state_type: type):
        if not (dataclasses.is_dataclass(state_type) or _is_namedtuple(state_type)):
            raise CodecError(f"{state_type!r} is not a dataclass or NamedTuple")
        self.state_type = state_type
        compiler = _Compiler()
        self._payload = compiler.encoder(state_type, identity=False) or (lambda v: v)
        self._identity = compiler.encoder(state_type, identity=True) or (lambda v: v)
        self._same = not compiler.has_uncompared  # identity and payload coincide
        self._decode = compiler.decoder(state_type) or (lambda v: v)

    def encode(self, state: Any) -> tuple[bytes, bytes]:
        if type(state) is not self.state_type:
            raise CodecError(f"struct codec: state of type {type(state).__name__}, "
                             f"expected {self.state_type.__name__}")
        payload = _dumps(self._payload(state)).encode()
        if self._same:
            return digest(payload), payload
        return digest(_dumps(self._identity(state)).encode()), payload

    def decode(self, payload: bytes) -> Any:
        return self._decode(_loads(payload))


class PlainCodec(Codec):
    """States built from tuples, ints, strs, bools, None and frozensets, without annotations:
    JSON with tuples as lists (read back as tuples) and frozensets as {"set": sorted members}."""

    name = "plain"

    def encode(self, state: Any) -> tuple[bytes, bytes]:
        data = _dumps(_plain(state)).encode()
        return digest(data), data

    def decode(self, payload: bytes) -> Any:
        return _unplain(_loads(payload))


def _plain(v: Any) -> Any:
    t = type(v)
    if t is tuple:
        return [_plain(x) for x in v]
    if t in (int, str, bool) or v is None:
        return v
    if t is frozenset:
        return {"set": sorted((_plain(x) for x in v), key=_dumps)}
    raise CodecError(f"plain codec: cannot encode a {t.__name__}")


def _unplain(v: Any) -> Any:
    if type(v) is list:
        return tuple(_unplain(x) for x in v)
    if type(v) is dict:
        return frozenset(_unplain(x) for x in v["set"])
    return v


__all__ = [
    "DIGEST_BYTES",
    "Codec",
    "CodecError",
    "Int64Codec",
    "JsonCodec",
    "ModelCodec",
    "PlainCodec",
    "StructCodec",
    "digest",
    "frame",
    "unframe",
]
