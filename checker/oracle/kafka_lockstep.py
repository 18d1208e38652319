"""Kafka's KRaft controller in lockstep with the reference (`kreassign check --impl kafka`).

`kafka_factory(spec)` is `differential_factory` for Kafka: every model shares one JVM, the
reference is the `kraft` profile at the same metadata.version as Kafka, and a step whose
diff is explained by an entry of implementations/kafka/differences.py (a declared modelling abstraction) is not
a mismatch. `LockstepStats` counts what was compared, for reports and the bench.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.checker.config.bounds import Bounds, bounds_from_mapping
from kreassign.checker.implementations.kafka import KafkaImplementation, parse_spec
from kreassign.checker.implementations.kafka.differences import explain
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.models.registry import REASSIGNMENT, model_kind
from kreassign.checker.oracle.differential import DifferentialModel
from kreassign.spec.kraft_properties import KRAFT_CONTROLLER_PROPERTIES


@dataclass
class LockstepStats:
    steps: int = 0  # actions compared (reference vs Kafka)
    mismatches: int = 0  # steps whose diff no allowed difference explains
    allowed: Counter = field(default_factory=Counter)  # allowed difference -> steps it explained

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "mismatches": self.mismatches, "allowed_differences": dict(self.allowed)}


def reference_profile(metadata_version: str | None = None, controller_actions: tuple[str, ...] = (),
                      zk_migration: bool = False, kafka_version: str | None = None, elr: bool | None = None):
    """The reference's kraft profile for a Kafka release at a metadata.version (default: the release's
    latest production level), enumerating the opt-in controller actions (`--kraft-actions`)."""
    from kreassign.reference.kraft import DEFAULT_KAFKA_VERSION, KraftProfile

    return KraftProfile(metadata_version=metadata_version, controller_actions=tuple(controller_actions),
                        zk_migration=zk_migration, kafka_version=kafka_version or DEFAULT_KAFKA_VERSION, elr=elr)


def _with_controller_properties(props: list) -> list:
    have = {p.name for p in props}
    return [*props, *(p for p in KRAFT_CONTROLLER_PROPERTIES if p.name not in have)]


class KraftActionsModel(ReassignmentModel):
    """The reference's kraft model with the opt-in controller actions and their properties (a profile
    carrying them; bounds.kraft_actions switches them on in the plain ReassignmentModel too)."""

    def properties(self):
        return _with_controller_properties(super().properties())


class KafkaLockstepModel(DifferentialModel):
    """The kraft model stepping Kafka's controller; declared abstractions are not mismatches."""

    def __init__(self, bounds: Bounds | None, impl: KafkaImplementation, spec: str, stats: LockstepStats,
                 controller_actions: tuple[str, ...] = ()):
        super().__init__(reference_profile(impl.metadata_version, controller_actions, impl.options.zk_migration,
                                           impl.setup.version, impl.elr), bounds, impl, spec)
        self.profile_name = "kraft"
        self.name = "kraft"
        self.stats = stats

    def successors(self, state):
        # one round trip per explored state: Kafka answers every enabled action at once (the `batch` op)
        actions = list(self.actions(state))
        # with broker_isr: the controller requests the layer sends (the AlterPartition an AlterPartitionArrive carries)
        self.impl.prefetch(*self.controller_requests(state.cluster, actions))
        for a in actions:
            nxt, label = self.step(state, a)
            yield label, nxt

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

    def properties(self):
        # the controller actions' properties are vacuous unless those actions are explored
        return _with_controller_properties(super().properties())

    def describe(self) -> dict[str, Any]:
        # the bounds only (a trace's bounds must load anywhere); the metadata.version is in the
        # implementation's name, e.g. kafka[metadata.version=3.5-IV2]
        out = super().describe()
        out["profile"] = "kraft"
        return out


class KafkaFactory:
    """`factory(profile, bounds) -> Model` for check_model; one JVM for every model of the run (`impl`: an
    already running one, which close() then leaves running); `stats` counts the lockstep's steps."""

    def __init__(self, spec: str = "kafka", controller_actions: tuple[str, ...] = (),
                 impl: KafkaImplementation | None = None):
        self.spec, self.controller_actions = spec, tuple(controller_actions)
        self.options = parse_spec(spec)
        self.shared, self.impl = impl, impl
        self.stats = LockstepStats()

    def __call__(self, profile: str, bounds: Any) -> KafkaLockstepModel:
        if model_kind(profile) != REASSIGNMENT or profile != "kraft":
            raise ValueError(f"--impl kafka checks the kraft profile (a Kafka release's KRaft controller), not {profile!r}")
        if self.impl is None:
            self.impl = KafkaImplementation(self.options)
        if bounds is not None and not isinstance(bounds, Bounds):
            bounds = bounds_from_mapping(dict(bounds))
        if self.controller_actions:  # in the bounds, so that traces and findings name them
            bounds = replace(bounds or Bounds(),
                             kraft_actions=self.controller_actions + (bounds or Bounds()).kraft_actions)
        return KafkaLockstepModel(bounds, self.impl, self.impl.spec, self.stats, self.controller_actions)

    def close(self) -> None:
        impl, self.impl = self.impl, self.shared
        if impl is not None and impl is not self.shared:
            impl.close()


def kafka_factory(spec: str = "kafka", controller_actions: tuple[str, ...] = (),
                  impl: KafkaImplementation | None = None) -> KafkaFactory:
    """The models of `kreassign check --impl kafka` (see KafkaFactory)."""
    return KafkaFactory(spec, controller_actions, impl)


def replay_against_kafka(trace: Any, spec: str = "kafka", impl: KafkaImplementation | None = None):
    """`replay_against_impl` for Kafka: the reference at Kafka's metadata.version, declared differences allowed."""
    from kreassign.checker.implementations.adapters import ImplementationError
    from kreassign.checker.oracle.differential import ReplayImplementationError, replay_differential
    from kreassign.checker.traces.format import TraceError

    if trace.model != REASSIGNMENT or trace.profile != "kraft":
        raise TraceError(f"profile: --impl kafka replays kraft traces only, this one is {trace.profile!r}")
    try:
        bounds = bounds_from_mapping({k: v for k, v in dict(trace.bounds).items() if k != "metadata_version"})
    except ValueError as e:
        raise TraceError(f"bounds: {e}") from None
    shared = impl
    options = parse_spec(spec)
    if options.kafka_version is None and options.classpath is None and bounds.kafka_version:
        # the trace names the release (and ELR) its rules followed: replay on that release's controller
        elr = {"on": True, "off": False}.get(bounds.elr, options.elr)
        options = replace(options, kafka_version=bounds.kafka_version, elr=elr)
    try:
        impl = shared if shared is not None else KafkaImplementation(options)
    except ImplementationError as e:
        raise ReplayImplementationError(str(e)) from e
    try:
        return replay_differential(KafkaLockstepModel(bounds, impl, impl.spec, LockstepStats()), trace)
    except ImplementationError as e:
        raise ReplayImplementationError(str(e)) from None
    finally:
        if impl is not shared:
            impl.close()


#: one loaded implementation per spec for the oracle's `check` op with "impl" (the JVM stays up)
_ORACLE_IMPLS: dict[str, KafkaImplementation] = {}


def observe(spec: str, state: Any, action: Any) -> tuple[KafkaImplementation, Any, Any]:
    """The implementation and Kafka's outcome of one step, for `kreassign oracle`'s check op
    ({"impl": "kafka", ...}); the caller judges it with the reference at the implementation's release."""
    impl = _ORACLE_IMPLS.get(spec)
    if impl is None:
        impl = _ORACLE_IMPLS[spec] = KafkaImplementation(parse_spec(spec))
    if state.broker_isr is not None:  # the brokers' layer over Kafka's controller, as in the lockstep
        model = KafkaLockstepModel(Bounds(broker_isr=True), impl, impl.spec, LockstepStats())
        return (impl, *model.impl_step(state, action))
    impl.reset("kraft", state)
    return (impl, *impl.apply(action))


__all__ = ["KafkaLockstepModel", "KraftActionsModel", "LockstepStats", "kafka_factory", "observe", "reference_profile",
           "replay_against_kafka"]
