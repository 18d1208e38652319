"""Liveness under realistic fairness (issue 14, item 2): when completion *must* happen.

`reassignment_can_finish` only asks that completion stay reachable, and a failed broker can
always recover, so "this reassignment waits forever on a broker that stays down" cannot be
said with it. A *fair* liveness property says what every fair infinite run does:

- runs may stutter (nothing happens) and brokers may stay down for good: recoveries are not
  fair, failures and controller failovers are bounded by the budget;
- the controller's own steps (`zk`'s ControllerStep), live followers catching up
  (LeaderExpandIsr, FollowerFetch), live brokers acting on the metadata they replayed
  (BrokerReplay), the periodic `--verify` (ToolVerify) and the controller's periodic leader
  balancing (AutoLeaderBalance) are *weakly fair*:
  an action instance enabled from some point on is eventually taken;
- leaders do not shrink the ISR infinitely often (a live follower keeps fetching), and admins
  act only finitely often, so loops never contain LeaderShrinkIsr or an admin request.

A counterexample is a lasso: a path to a loop of allowed edges in which the standing
condition holds and the goal never does, and which is fair: every fairness class enabled in
every state of the loop is taken on one of its edges (a loop may be a single state that
stutters, when it enables no fair action).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState
from kreassign.spec.state import NO_LEADER

#: action types that are weakly fair (by instance: each enabled action instance is eventually taken)
WEAKLY_FAIR = frozenset({"LeaderExpandIsr", "ControllerStep", "FollowerFetch", "ToolVerify", "BrokerReplay",
                         "AutoLeaderBalance", "ReplicaFetch", "AlterPartitionArrive"})  # the last two: broker_isr
#: action types a fair loop may not take: admin requests and elections (finitely many), ISR
#: shrinks (live followers keep fetching), failures and failovers (bounded anyway)
NOT_IN_LOOPS = frozenset({
    "Reassign", "Cancel", "CancelTopic", "CancelAll", "RemoveCancelMarker", "AlterReassignments",
    "ZnodeReassign", "ElectLeaders", "ListReassignments", "ToolExecute", "ToolCancel", "CreatePartitions",
    "LeaderShrinkIsr", "BrokerFail", "ControllerFailover",
    "LagExpire", "LeaderMaybeShrinkIsr",  # broker_isr: as LeaderShrinkIsr, a live follower keeps up in the end
})


def _name(action: Any) -> str:
    return type(getattr(action, "action", action)).__name__


def fair_class(action: Any) -> Hashable | None:
    """The weak-fairness class of an edge's action (the action itself), or None if it is not fair."""
    a = getattr(action, "action", action)
    return a if type(a).__name__ in WEAKLY_FAIR else None


def loop_edge(action: Any) -> bool:
    return _name(action) not in NOT_IN_LOOPS


@dataclass(frozen=True)
class Fairness:
    """What a fair liveness property assumes: goal must hold eventually in every fair run in which
    `condition` holds from some point on."""

    condition: Callable[[Any], bool]
    loop_edge: Callable[[Any], bool] = loop_edge
    fair_class: Callable[[Any], Hashable | None] = fair_class


def _target(g) -> tuple[int, ...]:
    return g.requested if g.requested is not None else g.original


def targets_live_and_led(ms: ModelState) -> bool:
    """Every in-flight reassignment's target replicas (the original ones for a cancel) are live and
    the partition has a leader to fetch from."""
    for (_, _, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        if g.original is None:
            continue
        if p.leader == NO_LEADER or not all(ms.cluster.is_active(b) for b in _target(g)):
            return False
    return True


def nothing_in_flight(ms: ModelState) -> bool:
    return all(g.original is None for g in ms.ghosts)


FAIR_PROPERTIES: tuple[Property, ...] = (
    Property.eventually(
        "reassignment_completes_when_targets_live", nothing_in_flight,
        description="In every fair run in which, from some point on, every in-flight reassignment's target "
        "replicas are live and its partition has a leader, the reassignment ends: it never waits on a replica "
        "outside the target (e.g. a removed replica whose broker stays down).",
        source="KIP-455 (completion when the target replicas are in sync); KAFKA-15665; KAFKA-19975 (4.3)",
        promised_by=tuple(p for p in ALL if p != "kraft") + ("kraft<4.3",),
        extra={"fairness": Fairness(targets_live_and_led)},
    ),
)

__all__ = [
    "FAIR_PROPERTIES",
    "NOT_IN_LOOPS",
    "WEAKLY_FAIR",
    "Fairness",
    "fair_class",
    "loop_edge",
    "nothing_in_flight",
    "targets_live_and_led",
]
