"""The values the reference's operations take and return: `Step` (new state, response),
`Plan`, the `ActionSpace` an explorer offers, and the errors for actions that cannot be
applied. The lowest module of the reference: every algorithm module imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kreassign.spec.state import ClusterState


class ActionNotSupported(ValueError):
    """The profile does not model this action (e.g. ControllerStep under `kraft`)."""


class InvalidAction(ValueError):
    """The action names something that does not exist (unknown topic, partition or broker)."""


@dataclass(frozen=True, slots=True)
class Step:
    """The result of one operation: the new state and the response (a spec.messages value)."""

    state: ClusterState
    response: Any


@dataclass(frozen=True, slots=True)
class Plan:
    """A planned reassignment: the full replica list while reassigning, and adding / removing."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ActionSpace:
    """The candidate actions an explorer may try; the profile keeps those enabled in a state.

    `targets` lists the (topic, partition, replicas) reassignments that may be requested.
    Each flag switches an action family on. Budgets (how many requests, failures,
    failovers) are the explorer's business, not the profile's.
    """

    targets: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    reassign: bool = True
    cancel: bool = True
    isr_changes: bool = True
    failures: bool = False  # BrokerFail / BrokerRecover
    failover: bool = False  # ControllerFailover
    elections: tuple[str, ...] = ()  # ElectLeaders types to try, e.g. ("PREFERRED",)
    replication: bool = False  # Produce / FollowerFetch (needs the replication layer in the state)
    log_length: int = 2  # Produce is enabled while the leader's log is shorter than this
    znode: bool = False  # ZnodeReassign for the targets (zk / kip236 legacy route)
    cancel_all: bool = False  # kip236 CancelAll / RemoveCancelMarker
