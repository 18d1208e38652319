"""The packed model protocol: what the packed engine (checker/packed/bfs.py) reads of a model.

The object engines explore `checker/explore/protocol.Model`; the packed engine explores a
*packed model*, whose states are non-negative int64 values and which answers for a whole chunk
of states at once. `PackedReassignment` (checker/packed/reassignment.py) is the one in use;
tests/unit/test_layout.py checks that it provides every member declared here, and that the
engine reads no other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from kreassign.spec.properties import Property


@runtime_checkable
class PackedModel(Protocol):
    #: the packed initial state
    init_state: int
    #: the properties the engine decides, by kind; bit k of a word answers the k-th of its list
    always: Sequence[Property]
    edge_props: Sequence[Property]
    goals: Sequence[Property]
    sometimes: Sequence[Property]
    #: how each always / transition property is made of its base and finding signatures (`holds` reads them)
    always_forms: Sequence[tuple]
    edge_forms: Sequence[tuple]
    #: the budget slots' widths and positions (the lowest bits of a state): budget subsumption reads them
    budget_bits: Sequence[int]
    budget_shift: Sequence[int]
    budget_total_bits: int
    #: figures for the result (local situations tabulated, reference calls made)
    table_rows: int
    reference_calls: int

    def successor_arrays(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(position in `states`, action id, next state, bits of the transition properties that hold)."""
        ...

    def state_bits(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bit sets of the always properties, eventually goals and sometimes properties holding in each state."""
        ...

    def environment_ids(self, ids: np.ndarray) -> np.ndarray:
        """Which action ids liveness may follow without an admin."""
        ...

    def action_of(self, action_id: int) -> Any:
        """The action an id stands for (as the object model would list it)."""
        ...

    def holds(self, forms: Sequence[tuple], bit: int, words: np.ndarray) -> np.ndarray | None:
        """Whether property `bit` holds, from the combined words; None: decide it exactly."""
        ...

    def state_holds(self, bit: int, value: int) -> bool:
        """Always property `bit`, decided exactly on one state."""
        ...

    def edge_holds(self, bit: int, value: int, action_id: int, nxt: int) -> bool:
        """Transition property `bit`, decided exactly on one edge."""
        ...


#: the members above, by name (the layout test compares them with what the engine reads)
MEMBERS = ("init_state", "always", "edge_props", "goals", "sometimes", "always_forms", "edge_forms", "budget_bits",
           "budget_shift", "budget_total_bits", "table_rows", "reference_calls", "successor_arrays", "state_bits",
           "environment_ids", "action_of", "holds", "state_holds", "edge_holds")


__all__ = ["MEMBERS", "PackedModel"]
