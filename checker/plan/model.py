"""The reassignment model of one partition's move, started from the state --describe shows.

A ReassignmentModel (checker/models/reassign.py) whose initial state carries the real
ISR, leader and down brokers; nothing else differs, so every verdict is the reference's.
Two variants for the failure questions: `lag_free` drops LeaderShrinkIsr and
BrokerRecover (followers never fall behind, and a failed broker stays down, so the
brokers down in a state are exactly those that failed on the way there) and `probes`
checks the operator's questions instead of the spec's properties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import TOPIC, ReassignmentModel
from kreassign.checker.plan.shapes import Shape
from kreassign.spec import actions as A
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import NO_LEADER, Broker

LEADERLESS = "partition_has_leader"
UNDER_MIN_ISR = "isr_meets_min_insync_replicas"
UNCLEAN_NEEDED = "clean_leader_available"


def leaderless(ms: ModelState) -> bool:
    return next(iter(ms.cluster.partitions()))[2].leader == NO_LEADER


def under_min_isr(ms: ModelState, min_isr: int) -> bool:
    """acks=all producers get NOT_ENOUGH_REPLICAS: the ISR is smaller than min.insync.replicas."""
    p = next(iter(ms.cluster.partitions()))[2]
    return p.leader != NO_LEADER and len(p.isr) < min_isr


def unclean_needed(ms: ModelState) -> bool:
    """Leaderless, no live in-sync replica, but a live replica outside the ISR: only an unclean election helps."""
    c = ms.cluster
    p = next(iter(c.partitions()))[2]
    if p.leader != NO_LEADER:
        return False
    return not any(c.is_active(b) for b in p.isr) and any(c.is_active(b) for b in p.replicas if b not in p.isr)


def probe_properties(min_isr: int) -> list[Property]:
    return [
        Property.always(LEADERLESS, lambda ms: not leaderless(ms),
                        description="The partition has a leader (else producers and consumers stall)."),
        Property.always(UNDER_MIN_ISR, lambda ms: not under_min_isr(ms, min_isr),
                        description=f"The ISR holds at least min.insync.replicas={min_isr} replicas "
                        "(else acks=all producers get NOT_ENOUGH_REPLICAS)."),
        Property.always(UNCLEAN_NEEDED, lambda ms: not unclean_needed(ms),
                        description="When leaderless, a live in-sync replica can lead "
                        "(else only an unclean election, losing committed records, brings it back)."),
    ]


def shape_bounds(shape: Shape, *, failures: int, failovers: int, cancel: bool, overrides: int,
                 kafka_version: str = "") -> Bounds:
    targets = [shape.target]
    if overrides:
        spare = shape.brokers  # the last id is the spare
        alt = shape.target[:-1] + (spare,)
        targets += [t for t in (shape.current, alt) if t not in targets]
    return Bounds(brokers=shape.brokers, partitions=1, rf=len(shape.current), initial=(shape.current,),
                  targets=tuple(targets), reassigns=1 + overrides, cancels=1 if cancel else 0,
                  failures=failures, failovers=failovers, unclean=shape.unclean, kafka_version=kafka_version)


class PlanPartitionModel(ReassignmentModel):
    """ReassignmentModel from the partition's real starting state (ISR, leader, down brokers)."""

    def __init__(self, profile_name: Any, bounds: Bounds, shape: Shape, *, lag_free: bool = False,
                 probes: bool = False):
        super().__init__(profile_name, bounds)
        self.shape, self.lag_free, self.probes = shape, lag_free, probes

    def init_states(self) -> Sequence[ModelState]:
        out = []
        for ms in super().init_states():
            c = ms.cluster
            p = c.partition(TOPIC, 0)
            if self.shape.isr:
                c = c.with_partition(TOPIC, 0, replace(p, isr=self.shape.isr, leader=self.shape.leader))
            for b in self.shape.down:
                c = c.with_broker(Broker(b, registered=True, active=False))
            out.append(ms._replace(cluster=c))
        return out

    def actions(self, state: ModelState):
        acts = super().actions(state)
        if self.lag_free:
            acts = [a for a in acts if not isinstance(a, A.LeaderShrinkIsr | A.BrokerRecover)]
        return acts

    def properties(self):
        return probe_properties(self.shape.min_isr) if self.probes else super().properties()
