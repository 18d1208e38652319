"""Which codec a run uses (`codec_for`: the first of codec.py's that fits the model's states, or the one the
driver named) and the check every run makes of it on the initial states (`check_codec`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kreassign.checker.spark.codec import (
    INT64_MAX,
    Codec,
    CodecError,
    Int64Codec,
    JsonCodec,
    ModelCodec,
    PlainCodec,
    StructCodec,
)
from kreassign.checker.spark.packed_codec import PackedCodec


def codec_for(model: Any, sample: Any, kind: str | None = None) -> Codec:
    """The codec for `model`, whose initial states include `sample` (the order: codec.py).

    `kind` names a codec to use (the driver's choice, repeated on the executors)."""
    candidates: list[tuple[str, Callable[[], Codec]]] = [
        ("int64", Int64Codec),
        ("model", lambda: ModelCodec(model)),
        ("struct", lambda: StructCodec(type(sample))),
        ("plain", PlainCodec),
        ("json", lambda: JsonCodec(model)),
        ("packed", lambda: PackedCodec(model)),
        (PackedCodec.name, lambda: PackedCodec(model)),  # (the name the driver's jobs carry)
    ]
    if kind is not None:
        return dict(candidates)[kind]()
    if type(sample) is int and 0 <= sample <= INT64_MAX:
        return Int64Codec()
    if callable(getattr(model, "encode_state", None)) and callable(getattr(model, "decode_state", None)):
        return ModelCodec(model)
    try:
        return StructCodec(type(sample))
    except CodecError:
        pass
    try:
        PlainCodec().encode(sample)
        return PlainCodec()
    except CodecError:
        return JsonCodec(model)


def check_codec(codec: Codec, states: list[Any]) -> None:
    """Raise CodecError unless every state survives encode/decode with its identity."""
    for s in states:
        try:
            identity, payload = codec.encode(s)
            back = codec.decode(payload)
        except CodecError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever the model's own codec raises, say which state
            raise CodecError(f"{codec.name} codec fails on the initial state {s!r}: {e!r}") from None
        if back != s or codec.encode(back)[0] != identity:
            raise CodecError(f"{codec.name} codec does not round-trip the initial state {s!r}")



__all__ = ["check_codec", "codec_for"]
