"""The z3 encoding of each reassignment profile (`encoding(profile, n)`), the one place
that knows them all (reassign.py holds the KRaft and classic encodings, zk.py the zk one).

The kraft encoding follows one Kafka release (`KraftEncoding.KAFKA_VERSION`, the newest by
default; `kafka_version=` gives the encoding of another release) with eligible leader
replicas (KIP-966) off: `reference_model` is the explorer's model of exactly that, the one
every differential test, refutation and replay of the encoding is compared with.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.z3.reassign import (
    Kip236Encoding,
    Kip455Encoding,
    Kraft37Encoding,
    KraftEncoding,
    ReassignEncoding,
)
from kreassign.checker.z3.zk import ZkEncoding
from kreassign.spec import kafka_releases

ENCODINGS: dict[str, type[ReassignEncoding]] = {
    "kraft": KraftEncoding,
    "kraft-3.7": Kraft37Encoding,
    "kip455": Kip455Encoding,
    "kip236": Kip236Encoding,
    "zk": ZkEncoding,
}


@functools.cache
def kraft_encoding(kafka_version: str) -> type[KraftEncoding]:
    """The kraft encoding at the Kafka release `kafka_version` (X.Y.Z of a supported release; the rules
    are a minor's, reference/kraft.py): a KraftEncoding subclass with that KAFKA_VERSION."""
    kafka_releases.release(kafka_version)  # ValueError: not a supported release
    if kafka_version == KraftEncoding.KAFKA_VERSION:
        return KraftEncoding
    return type(f"KraftEncoding_{kafka_version.replace('.', '_')}", (KraftEncoding,),
                {"KAFKA_VERSION": kafka_version, "__module__": __name__,
                 "__doc__": f"KRaft at Kafka {kafka_version}, ELR off (profiles.kraft_encoding)."})


def encoding_class(profile: str, kafka_version: str | None = None) -> type[ReassignEncoding]:
    """The encoding class of `profile` (kraft: at `kafka_version`, None = the encoded release)."""
    if profile not in ENCODINGS:
        raise ValueError(f"profile: no z3 encoding for {profile!r}; known: {', '.join(ENCODINGS)}")
    cls = ENCODINGS[profile]
    if kafka_version is None or (cls.profile == "kraft" and kafka_version == cls.KAFKA_VERSION):
        return cls
    if profile != "kraft":
        raise ValueError(f"kafka_version: applies to the kraft profile only, not {profile!r}")
    return kraft_encoding(kafka_version)


def encoded_release(profile: str, kafka_version: str | None = None) -> dict[str, str]:
    """The bounds' keys that say what `encoding(profile, ..., kafka_version=...)` encodes beyond the
    profile's name: for kraft its release and ELR off ({} for the other profiles)."""
    cls = encoding_class(profile, kafka_version)
    if cls.profile != "kraft":
        return {}
    return {"kafka_version": cls.KAFKA_VERSION, "elr": "off"}


#: what the encodings encode beyond the profile's name, as bounds (kraft: the newest release, ELR off)
ENCODED_RELEASE: dict[str, dict[str, str]] = {p: encoded_release(p) for p in ENCODINGS if encoded_release(p)}


def reference_model(profile: str, bounds: Bounds, kafka_version: str | None = None) -> ReassignmentModel:
    """The explorer's model of what `encoding(profile, ..., kafka_version=...)` encodes: kraft at the
    encoded release with ELR off (what the bounds say about release and ELR is replaced)."""
    return ReassignmentModel(profile, replace(bounds, **encoded_release(profile, kafka_version)))


def encoding(profile: str, n: int, *, kafka_version: str | None = None, **kw: Any) -> ReassignEncoding:
    """The z3 encoding of a reassignment profile at N brokers (kraft: at `kafka_version`, None = the
    release KraftEncoding encodes)."""
    return encoding_class(profile, kafka_version)(n, **kw)
