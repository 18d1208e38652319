"""Differential checking: another implementation in lockstep with the reference (docs/adapters.md).

`differential_factory(spec)` gives `kreassign check --impl SPEC` its models: the
reassignment model of a profile whose every step is also sent to the implementation
(put in the state before the step, then asked to apply the action). The model then
continues from the *implementation's* state, so every spec property is checked on the
states the implementation reaches, and one more transition property,
`implementation_matches_reference`, fails on the first edge where the implementation's
state or response differs from the reference's. The engine and `check_model` turn a
failure into a minimized counterexample trace as for any property; each step of the
trace carries the implementation's real states (`kafka_state`), and the failing step a
`mismatch` object with the field-level diff.

With the leaders' ISR maintenance on (`broker_isr`, reference/broker_isr.py) the implementation is
the *controller* under the reference's broker layer: each step runs the layer's own code
(`LeaderIsrManager.apply`) with the implementation as its controller step, so the implementation
gets exactly the controller request the reference's controller gets (`AlterPartitionArrive`: the
AlterPartition with the epochs it was sent with), a broker-side action sends nothing (Kafka's
controller state stays as it was), and the layer (`ClusterState.broker_isr`, the logs) is carried
along by the reference's own bookkeeping. The one thing said here again is which part of a state the
brokers own (`unchanged_controller`, a twin of the Kafka adapter's replication step).

`replay_against_impl(trace, spec)` re-executes a trace's actions against the
implementation, comparing every step with the reference and with the trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from kreassign.checker.config.bounds import Bounds, bounds_from_mapping
from kreassign.checker.implementations import kafka as _kafka
from kreassign.checker.implementations.adapters import (
    DEFAULT_TIMEOUT,
    Implementation,
    ImplementationError,
    ImplementationRefused,
    load_implementation,
    response_to_json,
)
from kreassign.checker.models.reassign import ReassignmentModel, budget_slot, normalize_epochs
from kreassign.checker.models.registry import REASSIGNMENT, model_kind
from kreassign.checker.traces.diff import field_diff
from kreassign.checker.traces.diff import show_json as _show
from kreassign.checker.traces.format import Trace, TraceError
from kreassign.checker.traces.replay import ReplayResult
from kreassign.reference.steps import Step
from kreassign.spec.codec import to_json
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION, Property
from kreassign.spec.reassign_properties import Ghost, ModelState
from kreassign.spec.state import ClusterState

MATCH_PROPERTY = "implementation_matches_reference"


class ReplayImplementationError(TraceError, ImplementationError):
    """The implementation failed during a replay (both a TraceError for the CLI and an ImplementationError)."""


def load_any(spec: str, timeout: float = DEFAULT_TIMEOUT) -> Implementation:
    """Any implementation spec, "kafka" / "kafka[...]" (Kafka's own KRaft controller, docs/kafka.md) included;
    `timeout` bounds each reply of an implementation in another process (`--impl-timeout`)."""
    if _kafka.is_kafka_spec(spec):
        return _kafka.load(spec, timeout=timeout)
    return load_implementation(spec, timeout=timeout)


def compare_step(ref_state: ClusterState, ref_response: Any, impl_state: ClusterState, impl_response: Any) -> list[str]:
    """Diff lines between the reference's and the implementation's outcome of one step (empty = equal)."""
    lines = ["state." + d for d in field_diff(to_json(ref_state), to_json(impl_state))] if ref_state != impl_state else []
    if impl_response is None or ref_response is None:
        if impl_response is not ref_response:
            lines.append(f"response: reference {_show(response_to_json(ref_response)) if ref_response is not None else 'null'}, "
                         f"implementation {_show(response_to_json(impl_response)) if impl_response is not None else 'null'}")
    elif ref_response != impl_response or type(ref_response) is not type(impl_response):
        lines += ["response." + d for d in field_diff(response_to_json(ref_response), response_to_json(impl_response))]
    return lines


class DiffTransition(NamedTuple):
    """A `Transition` (same first four fields) plus what the reference did on the same edge."""

    action: object
    response: object = None  # the implementation's response
    endings: tuple = ()
    after: ClusterState | None = None  # the implementation's state, before the explorer renamed epochs
    reference: ClusterState | None = None  # the reference's state after the same action
    reference_response: object = None
    mismatch: tuple[str, ...] = ()  # diff lines; empty iff the implementation matched the reference

    def __str__(self) -> str:
        return str(self.action)


def _matches(prev: Any, label: Any, nxt: Any) -> bool:
    return not getattr(label, "mismatch", ())


def match_property(spec: str) -> Property:
    return Property.transition(
        MATCH_PROPERTY, _matches,
        description=f"The implementation {spec} answers every action with the reference's state and response "
        "(field-level diff in the failing step's \"mismatch\").",
        source="differential checking (docs/adapters.md)", promised_by=("*",),
    )


class DifferentialModel(ReassignmentModel):
    """The reassignment model of a profile, stepping an implementation in lockstep with the reference."""

    def __init__(self, profile_name: str, bounds: Bounds | None, impl: Implementation, spec: str = "implementation"):
        super().__init__(profile_name, bounds)
        self.impl = impl
        self.spec = spec
        self._match = match_property(spec)

    # -- the implementation's step -----------------------------------------------------------------------
    def impl_step(self, cluster: ClusterState, action: Any) -> tuple[ClusterState, Any]:
        """The implementation's outcome of `action` from `cluster` (ImplementationRefused if it refuses).

        With the brokers' layer in the state (broker_isr) the reference's layer runs with the implementation
        as its controller (`controller_step`); a broker-side action, which sends the controller nothing,
        leaves the implementation's controller state as it was, with the layer's broker state."""
        if cluster.broker_isr is None:
            self.impl.reset(self.profile_name, cluster)
            return self.impl.apply(action)
        sent: list[Any] = []

        def controller(profile: Any, state: ClusterState, request: Any) -> Step:
            sent.append(request)
            return self.controller_step(state, request)

        try:
            step = self.capabilities.isr.apply(self.profile, cluster, action, controller)
        except ValueError as e:  # the layer's own refusal (as the reference's, which runs the same code)
            raise ImplementationRefused(f"{type(e).__name__}: {e}") from None
        if sent:
            return step.state, step.response
        return unchanged_controller(cluster, step.state), step.response

    def controller_step(self, state: ClusterState, request: Any) -> Step:
        """A controller request to the implementation from `state`: it gets the state without the brokers'
        layer (a controller holds none of it), the layer is handed back as it was for the layer's bookkeeping."""
        self.impl.reset(self.profile_name, controller_view(state))
        after, response = self.impl.apply(request)
        return Step(replace(after, broker_isr=state.broker_isr), response)

    def controller_requests(self, cluster: ClusterState, actions: Sequence[Any]) -> tuple[ClusterState, list[Any]]:
        """(the controller's state, the requests `actions` send it from `cluster`), as the layer translates them
        (for a batch of one round trip: KafkaImplementation.prefetch); without the layer, the actions themselves."""
        if cluster.broker_isr is None:
            return cluster, list(actions)
        view, out = controller_view(cluster), []

        def record(profile: Any, state: ClusterState, request: Any) -> Step:
            if controller_view(state) == view:
                out.append(request)
            return Step(state, None)

        for a in actions:
            try:
                self.capabilities.isr.apply(self.profile, cluster, a, record)
            except ValueError:
                pass
        return view, list(dict.fromkeys(out))

    def step(self, state: ModelState, action: Any) -> tuple[ModelState, DiffTransition]:
        cluster = state.cluster
        try:
            ref = self.apply(cluster, action)  # the profile's step, or a capability's (reference/capabilities.py)
            ref_state, ref_response, ref_error = ref.state, ref.response, None
        except ValueError as e:  # the implementation led to a state where the reference refuses the action
            ref_state, ref_response, ref_error = cluster, None, f"{type(e).__name__}: {e}"
        try:
            impl_state, impl_response = self.impl_step(cluster, action)
            refused = None
        except ImplementationRefused as e:
            impl_state, impl_response, refused = cluster, None, str(e)
        if refused is not None or ref_error is not None:
            lines = []
            if ref_error is not None:
                lines.append(f"reference refused the action: {ref_error}")
            if refused is not None:
                lines.append(f"implementation refused the action: {refused}")
            if (ref_error is None) != (refused is None):
                lines += compare_step(ref_state, ref_response, impl_state, impl_response)
            mismatch = tuple(lines) if (ref_error is None) != (refused is None) else ()
        else:
            mismatch = tuple(compare_step(ref_state, ref_response, impl_state, impl_response))
        budget = state.budget
        slot = budget_slot(action)
        if slot is not None:
            budget = budget[:slot] + (budget[slot] - 1,) + budget[slot + 1:]
        ghosts, endings = self.ghosts_after(state, action, impl_state, impl_response)
        added = len(list(impl_state.partitions())) - len(ghosts)
        if added > 0:  # CreatePartitions: the new partitions start idle (as in ReassignmentModel.step)
            ghosts += (Ghost(),) * added
        nxt = ModelState(normalize_epochs(impl_state), ghosts, budget)
        return nxt, DiffTransition(action, impl_response, endings, impl_state, ref_state, ref_response, mismatch)

    def properties(self):
        return [*super().properties(), self._match]

    def annotate_path(self, path: Sequence[tuple[ModelState, Any]]) -> list[dict[str, Any]]:
        """Per step: the implementation's real states (run from the initial state) and any mismatch."""
        cluster = path[0][0].cluster
        out: list[dict[str, Any]] = [{"kafka_state": to_json(cluster)}]
        real: ClusterState | None = cluster
        for _, label in path[1:]:
            action = getattr(label, "action", label)
            note: dict[str, Any] = {}
            before = real
            if real is not None:
                try:
                    real, _ = self.impl_step(real, action)
                    note["kafka_state"] = to_json(real)
                except ImplementationRefused:
                    real = None
            lines = getattr(label, "mismatch", ())
            if lines:
                if before is not None and label.reference is not None:
                    try:  # the reference's outcome in real epochs, as kafka_state (the label's are renamed)
                        ref = self.apply(before, action)
                        label = label._replace(reference=ref.state, reference_response=ref.response)
                    except ValueError:
                        pass
                note["mismatch"] = mismatch_json(self.spec, label)
            out.append(note)
        return out


def controller_view(state: ClusterState) -> ClusterState:
    """What a controller is given of a state: everything but the brokers' ISR maintenance (broker_isr)."""
    return replace(state, broker_isr=None) if state.broker_isr is not None else state


def unchanged_controller(before: ClusterState, after: ClusterState) -> ClusterState:
    """A controller sent nothing: its state as `before`, with the brokers' part of `after` — their layer and
    their logs (the replication layer: reference/replication.py; Kafka's controller holds no log)."""
    # twin: implementations/kafka KafkaImplementation._replication_step and differences.UNOBSERVED "replication
    # layer" (the brokers own the logs, the controller the rest); differential tests: tests/kafka/
    # test_broker_isr_lockstep.py (every broker-side step of the lockstep equals the reference's; a leader that
    # writes the ISR itself is a mismatch)
    logs = {(t, i): p.log for t, i, p in after.partitions()}
    topics = tuple(replace(t, partitions=tuple(replace(p, log=logs.get((t.name, i), p.log))
                                               for i, p in enumerate(t.partitions))) for t in before.topics)
    return replace(before, topics=topics, broker_isr=after.broker_isr)


def mismatch_json(spec: str, label: DiffTransition) -> dict[str, Any]:
    """The "mismatch" object of a trace step: who, the diff lines, and the reference's outcome."""
    return {
        "implementation": spec,
        "diff": list(label.mismatch),
        "reference_state": to_json(label.reference) if label.reference is not None else None,
        "reference_response": response_to_json(label.reference_response) if label.reference_response is not None else None,
        "implementation_response": response_to_json(label.response) if label.response is not None else None,
    }


class ImplementationFactory:
    """`factory(profile, bounds) -> Model` for check_model: every model shares one loaded implementation.

    The implementation is loaded on the first call (so a bad spec fails with a clear
    ImplementationError) and reused, since every step resets it to the state it starts from;
    `close()` stops it.
    """

    def __init__(self, spec: str, timeout: float = DEFAULT_TIMEOUT):
        self.spec, self.timeout = spec, timeout
        self.impl: Implementation | None = None

    def __call__(self, profile: str, bounds: Any) -> DifferentialModel:
        if model_kind(profile) != REASSIGNMENT:
            raise ValueError(f"--impl checks reassignment profiles only; {profile!r} is a quota model "
                             "(pass --profile kraft, or another reassignment profile)")
        if self.impl is None:
            self.impl = load_any(self.spec, self.timeout)
        if bounds is not None and not isinstance(bounds, Bounds):
            bounds = bounds_from_mapping(dict(bounds))
        return DifferentialModel(profile, bounds, self.impl, self.spec)

    def close(self) -> None:
        impl, self.impl = self.impl, None
        if impl is not None:
            impl.close()


def differential_factory(spec: str, timeout: float = DEFAULT_TIMEOUT) -> ImplementationFactory:
    """The models of `kreassign check --impl SPEC` (see ImplementationFactory)."""
    return ImplementationFactory(spec, timeout)


# -- replay ----------------------------------------------------------------------------------------------


def replay_against_impl(trace: Trace, spec: str | Implementation, timeout: float = DEFAULT_TIMEOUT) -> ReplayResult:
    """Re-execute a trace against an implementation, comparing each step with the reference and the trace.

    A mismatch trace (property `implementation_matches_reference`, or kind "mismatch")
    reproduces when the implementation follows the trace's states and still disagrees
    with the reference on the last step. Any other trace reproduces when the
    implementation follows the trace's states and the property fails where the trace
    says (as `kreassign replay` against the reference). `diffs` lists the field-level
    differences of the first step where something differs.
    """
    if trace.model != REASSIGNMENT:
        raise TraceError(f"model: --impl replays reassignment traces only, this one is {trace.model!r}")
    try:
        bounds = bounds_from_mapping(dict(trace.bounds))
    except ValueError as e:
        raise TraceError(f"bounds: {e}") from None
    try:
        impl = load_any(spec, timeout) if isinstance(spec, str) else spec
    except ImplementationError as e:
        raise ReplayImplementationError(str(e)) from None
    name = spec if isinstance(spec, str) else type(spec).__name__
    try:
        model = DifferentialModel(trace.profile, bounds, impl, name)
    except ValueError as e:
        raise TraceError(f"profile: {e}") from None
    try:
        return replay_differential(model, trace)
    except ImplementationError as e:  # the implementation broke (died, hung, spoke garbage)
        raise ReplayImplementationError(str(e)) from None
    finally:
        if isinstance(spec, str):
            impl.close()


def replay_differential(model: DifferentialModel, trace: Trace) -> ReplayResult:
    from kreassign.checker.traces.replay import no_goal_reachable

    try:
        state = model.state_from_json(trace.initial)
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise TraceError(f"initial_state: {e}") from None
    states: list[ModelState] = [state]
    labels: list[Any] = [None]
    first_mismatch: tuple[int, tuple[str, ...]] | None = None
    for k, step in enumerate(trace.steps):
        try:
            action = model.action_from_json(step["action"])
        except ValueError as e:
            raise TraceError(f"steps[{k}].action: {e}") from None
        state, label = model.step(state, action)
        if label.mismatch and first_mismatch is None:
            first_mismatch = (k, label.mismatch)
        try:
            expected = model.state_from_json(step["state"])
        except (ValueError, KeyError, TypeError, IndexError) as e:
            raise TraceError(f"steps[{k}].state: {e}") from None
        if expected != state:
            diffs = field_diff(step["state"], model.state_to_json(state), left="trace", right="implementation")
            if label.mismatch:
                diffs += [f"(reference) {d}" for d in label.mismatch]
                note = "; the reference disagrees with both (see the (reference) lines)"
            else:
                note = "; the implementation agrees with the reference on this step"
            return ReplayResult(False, k, f"step {k + 1}: {label.action}: the implementation's state differs from "
                                f"the trace{note}", diffs)
        states.append(state)
        labels.append(label)
    n = len(trace.steps)
    if trace.property == MATCH_PROPERTY or trace.kind == "mismatch":
        last = labels[-1]
        if last is not None and last.mismatch:
            return ReplayResult(True, n, None, list(last.mismatch))
        if first_mismatch is not None:
            k, lines = first_mismatch
            return ReplayResult(False, n, f"step {k + 1}: the implementation differs from the reference before the "
                                "trace's last step", list(lines))
        return ReplayResult(False, n, f"the implementation matches the reference on all {n} step(s)")
    prop = next((p for p in model.properties() if p.name == trace.property), None)
    if prop is None:
        return ReplayResult(False, n, f"property {trace.property!r} is not a property of this model")
    if prop.kind == ALWAYS:
        ok = not prop.predicate(states[-1])
    elif prop.kind == TRANSITION:
        ok = n > 0 and not prop.predicate(states[-2], labels[-1], states[-1])
    elif prop.kind == EVENTUALLY:
        ok = no_goal_reachable(model, prop, states[trace.loop_start if trace.loop_start is not None else -1])
    elif prop.kind == SOMETIMES:
        ok = prop.predicate(states[-1])
    else:
        ok = False
    diffs = [f"step {first_mismatch[0] + 1}: {d}" for d in first_mismatch[1]] if first_mismatch else []
    return ReplayResult(ok, n, None if ok else f"the last state does not violate {trace.property}", diffs)


__all__ = [
    "MATCH_PROPERTY",
    "DiffTransition",
    "DifferentialModel",
    "ImplementationFactory",
    "ReplayImplementationError",
    "compare_step",
    "controller_view",
    "differential_factory",
    "field_diff",
    "replay_against_impl",
]
