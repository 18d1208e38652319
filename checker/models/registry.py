"""Which model a profile name means, and how to rebuild a model from a trace file.

Reassignment profiles (kraft, kraft-3.7, zk, kip455, kip236) build a ReassignmentModel
from Bounds; quota profiles (kip599, kip599-draft) build the quota model from its own
configuration; the request-handler profiles (kip599-handlers, kip599-handlers-rate: one
sensor shared by concurrent handlers while the quota changes) are of the same kind and build
the QuotaHandlersModel from theirs (checker/models/quota.py dispatches on the profile). Traces
name the model kind, profile and bounds, so `replay` and `show` rebuild exactly the model that
produced them.
"""

from __future__ import annotations

from typing import Any

from kreassign.checker.config.bounds import Bounds, bounds_from_mapping
from kreassign.checker.explore.protocol import Model
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.reference import PROFILES

REASSIGNMENT = "reassignment"
QUOTA = "quota"

QUOTA_PROFILES = ("kip599", "kip599-draft", "kip599-handlers", "kip599-handlers-rate")


def model_kind(profile: str) -> str:
    if profile in PROFILES:
        return REASSIGNMENT
    if profile in QUOTA_PROFILES:
        return QUOTA
    known = ", ".join(list(PROFILES) + list(QUOTA_PROFILES))
    raise ValueError(f"unknown profile {profile!r}; known: {known}")


def build_model(kind: str, profile: str, bounds: dict[str, Any] | Bounds | Any) -> Model:
    """Rebuild the model of a trace (or a check run) from its kind, profile and bounds."""
    if kind == REASSIGNMENT:
        if not isinstance(bounds, Bounds):
            bounds = bounds_from_mapping(dict(bounds))
        return ReassignmentModel(profile, bounds)
    if kind == QUOTA:
        from kreassign.checker.models.quota import quota_model_from_bounds

        return quota_model_from_bounds(profile, bounds)
    raise ValueError(f"unknown model kind {kind!r} (reassignment or quota)")
