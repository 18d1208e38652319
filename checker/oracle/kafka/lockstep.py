"""Kafka's KRaft controller in lockstep with the reference (`kreassign check --impl kafka`).

`kafka_factory(spec)` is `differential_factory` for Kafka: every model shares one JVM, the
reference is the `kraft` profile at the same metadata.version as Kafka, and a step whose
diff is explained by an entry of differences.py (a declared modelling abstraction) is not
a mismatch. `LockstepStats` counts what was compared, for reports and the bench.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.models.bounds import Bounds, bounds_from_mapping
from kreassign.checker.models.registry import REASSIGNMENT, model_kind
from kreassign.checker.oracle.differential import DifferentialModel

from . import KafkaImplementation, parse_spec
from .differences import explain


@dataclass
class LockstepStats:
    steps: int = 0  # actions compared (reference vs Kafka)
    mismatches: int = 0  # steps whose diff no allowed difference explains
    allowed: Counter = field(default_factory=Counter)  # allowed difference -> steps it explained

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "mismatches": self.mismatches, "allowed_differences": dict(self.allowed)}


def reference_profile(metadata_version: str):
    """The reference's kraft profile at a metadata.version (the ISR-shrink epoch rule depends on it)."""
    from kreassign.reference.kraft import KraftProfile

    return KraftProfile(metadata_version=metadata_version)


class KafkaLockstepModel(DifferentialModel):
    """The kraft model stepping Kafka's controller; declared abstractions are not mismatches."""

    def __init__(self, bounds: Bounds | None, impl: KafkaImplementation, spec: str, stats: LockstepStats):
        super().__init__(reference_profile(impl.options.metadata_version), bounds, impl, spec)
        self.profile_name = "kraft"
        self.name = "kraft"
        self.stats = stats

    def step(self, state, action):
        nxt, label = super().step(state, action)
        self.stats.steps += 1
        if label.mismatch:
            allowed = explain(state.cluster, action, label.mismatch)
            if allowed is not None:
                self.stats.allowed[allowed] += 1
                label = label._replace(mismatch=())
            else:
                self.stats.mismatches += 1
        return nxt, label

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["profile"] = "kraft"
        out["metadata_version"] = self.impl.options.metadata_version
        return out


def kafka_factory(spec: str = "kafka"):
    """`factory(profile, bounds) -> Model` for check_model; one JVM for every model of the run."""
    options = parse_spec(spec)
    holder: dict[str, KafkaImplementation] = {}
    stats = LockstepStats()

    def factory(profile: str, bounds: Any) -> KafkaLockstepModel:
        if model_kind(profile) != REASSIGNMENT or profile != "kraft":
            raise ValueError(f"--impl kafka checks the kraft profile (Kafka 3.9's KRaft controller), not {profile!r}")
        if "impl" not in holder:
            holder["impl"] = KafkaImplementation(options)
        if bounds is not None and not isinstance(bounds, Bounds):
            bounds = bounds_from_mapping(dict(bounds))
        return KafkaLockstepModel(bounds, holder["impl"], holder["impl"].spec, stats)

    def close() -> None:
        impl = holder.pop("impl", None)
        if impl is not None:
            impl.close()

    factory.close = close  # type: ignore[attr-defined]
    factory.spec = spec  # type: ignore[attr-defined]
    factory.stats = stats  # type: ignore[attr-defined]
    return factory


__all__ = ["KafkaLockstepModel", "LockstepStats", "kafka_factory", "reference_profile"]
