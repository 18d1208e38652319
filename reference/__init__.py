"""The reference: Kafka's reassignment, cancellation and quota algorithms as pure functions.

`profile(name)` returns the object holding every operation of one profile; everything
else in kreassign (explorer, oracle, z3, Spark) calls it rather than re-implementing a rule.
"""

from __future__ import annotations

from importlib import import_module

from .profile_base import Profile
from .steps import ActionNotSupported, ActionSpace, InvalidAction, Plan, Step

#: profile name -> "module:Class" (imported on first use)
PROFILES: dict[str, str] = {
    "kraft": "kreassign.reference.kraft:KraftProfile",
    "kraft-3.7": "kreassign.reference.kraft:Kraft37Profile",
    "zk": "kreassign.reference.zk:ZkProfile",
    "kip455": "kreassign.reference.kip455:Kip455Profile",
    "kip236": "kreassign.reference.kip236:Kip236Profile",
}

_cache: dict[str, Profile] = {}


def profile(name: str) -> Profile:
    """The reassignment profile called `name` (one of PROFILES)."""
    if name not in PROFILES:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}")
    if name not in _cache:
        module, cls = PROFILES[name].split(":")
        _cache[name] = getattr(import_module(module), cls)()
    return _cache[name]


__all__ = ["PROFILES", "ActionNotSupported", "ActionSpace", "InvalidAction", "Plan", "Profile", "Step", "profile"]
