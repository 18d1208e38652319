"""The z3 encoding of each reassignment profile (`encoding(profile, n)`), the one place
that knows them all (reassign.py holds the KRaft and classic encodings, zk.py the zk one)."""

from __future__ import annotations

from typing import Any

from kreassign.checker.z3.reassign import Kip236Encoding, Kip455Encoding, Kraft37Encoding, KraftEncoding, ReassignEncoding
from kreassign.checker.z3.zk import ZkEncoding

ENCODINGS: dict[str, type[ReassignEncoding]] = {
    "kraft": KraftEncoding,
    "kraft-3.7": Kraft37Encoding,
    "kip455": Kip455Encoding,
    "kip236": Kip236Encoding,
    "zk": ZkEncoding,
}


def encoding(profile: str, n: int, **kw: Any) -> ReassignEncoding:
    """The z3 encoding of a reassignment profile at N brokers."""
    if profile not in ENCODINGS:
        raise ValueError(f"profile: no z3 encoding for {profile!r}; known: {', '.join(ENCODINGS)}")
    return ENCODINGS[profile](n, **kw)
