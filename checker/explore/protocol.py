"""The model protocol every engine explores (the shape of Stateright's `Model`).

A model names its initial states, lists the actions enabled in a state in a
deterministic order, computes the next state of one action, and lists its
properties. Engines (embedded BFS, Spark, hypothesis) see only this protocol, never
a Kafka rule, so the same engines check the reassignment models, the quota models,
the performance anchor and another implementation behind an adapter.

States must be hashable and compare by value. A model that wants speed may override
`successors` (e.g. a packed-int kernel), provided a test shows it equal to
`actions` + `next_state` on every state of small configurations.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from kreassign.spec.properties import Property

S = TypeVar("S", bound=Hashable)
A = TypeVar("A")


class Model(Generic[S, A]):
    """Base class of explorable models. Subclasses implement the four required methods."""

    #: a short name for reports and traces, e.g. "kraft" or "anchor"
    name: str = "model"

    # -- required ----------------------------------------------------------------
    def init_states(self) -> Sequence[S]:
        raise NotImplementedError

    def actions(self, state: S) -> Sequence[A]:
        """The actions enabled in `state`, in a deterministic order."""
        raise NotImplementedError

    def next_state(self, state: S, action: A) -> S | None:
        """The state after `action`, or None if the action does nothing here."""
        raise NotImplementedError

    def properties(self) -> Sequence[Property]:
        return ()

    #: the properties an engine checks where they differ from `properties()`: `kreassign check` hands the
    #: engines each property split by its findings (checker/check/run.py); set on a copy, by `checking`
    engine_properties: tuple[Property, ...] | None = None

    def checking(self, properties: Iterable[Property]) -> Model[S, A]:
        """This model (a shallow copy; the original is untouched) with `properties` for the engines to check."""
        twin = copy.copy(self)
        twin.engine_properties = tuple(properties)
        return twin

    # -- optional ----------------------------------------------------------------
    def within_boundary(self, state: S) -> bool:
        """States outside the boundary are counted but not expanded."""
        return True

    def successors(self, state: S) -> Iterable[tuple[A, S]]:
        """(action, next state) for every enabled action that changes something; the engines' hot path."""
        for a in self.actions(state):
            n = self.next_state(state, a)
            if n is not None:
                yield a, n

    def format_action(self, action: A) -> str:
        return str(action)

    # -- serialization for traces (JSON) -------------------------------------------
    def state_to_json(self, state: S) -> Any:
        return state

    def state_from_json(self, data: Any) -> S:
        return data

    def action_to_json(self, action: A) -> Any:
        return str(action)

    def action_from_json(self, data: Any) -> A:
        raise NotImplementedError(f"{type(self).__name__} cannot read actions back from JSON")

    def annotate_path(self, path: Sequence[tuple[S, A]]) -> list[dict[str, Any]]:
        """Extra per-step data for a trace (e.g. the real Kafka state behind an abstracted one)."""
        return [{} for _ in path]

    def describe(self) -> dict[str, Any]:
        """The bounds / parameters of this model, for reports and trace files."""
        return {}


def checked_properties(model: Any) -> Sequence[Property]:
    """What an engine checks of `model`: its `engine_properties` when set (`Model.checking`), else its own."""
    chosen = getattr(model, "engine_properties", None)
    return chosen if chosen is not None else model.properties()
