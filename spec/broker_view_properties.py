"""What must hold of the broker's own view of a partition (issue 14, item 7).

The spec cannot import the reference (it is the layer below), so the view is passed in:
`broker_view_properties(reporters)` takes the function that lists the brokers whose
UnderReplicated gauge is 1 for a partition (the reference's `broker_view.
under_replicated_reporters`, or a deliberately broken variant in a test).

Sources: Kafka 3.8 core/src/main/scala/kafka/cluster/Partition.scala (`AssignmentState.
replicationFactor`: "keep the size of the original replicas"; `isUnderReplicated`: isLeader &&
RF − |isr| > 0), and KIP-455 (adding replicas are told apart from existing ones "for quota
purposes, and provide better metrics").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState
from kreassign.spec.state import NO_LEADER, Partition, ordered_minus

Reporters = Callable[[Partition, Iterable[int]], tuple[int, ...]]


def broker_view_properties(reporters: Reporters) -> tuple[Property, ...]:
    def _each(ms: ModelState):
        ids = [b.id for b in ms.cluster.brokers]
        for _, _, p in ms.cluster.partitions():
            yield p, reporters(p, ids)

    def only_leader_reports_under_replicated(ms: ModelState) -> bool:
        """No broker but the partition's leader reports it under-replicated."""
        return all(set(r) <= {p.leader} for p, r in _each(ms))

    def reassignment_alone_not_under_replicated(ms: ModelState) -> bool:
        """A partition whose original replicas (replicas − adding) are all in sync is not reported
        under-replicated: replicas being added do not count."""
        return all(not r for p, r in _each(ms) if set(ordered_minus(p.replicas, p.adding)) <= set(p.isr))

    def under_replicated_reported(ms: ModelState) -> bool:
        """A led partition that is not reassigning and has a replica out of sync is reported by its leader."""
        return all(
            r == (p.leader,)
            for p, r in _each(ms)
            if p.leader != NO_LEADER and not p.reassigning and not set(p.replicas) <= set(p.isr)
        )

    src = "Kafka 3.8 Partition.scala: AssignmentState.replicationFactor, isUnderReplicated"
    return (
        Property.always("only_leader_reports_under_replicated", only_leader_reports_under_replicated,
                        description=only_leader_reports_under_replicated.__doc__, source=src, promised_by=ALL),
        Property.always("reassignment_alone_not_under_replicated", reassignment_alone_not_under_replicated,
                        description=reassignment_alone_not_under_replicated.__doc__, source=src + "; KIP-455",
                        promised_by=ALL),
        Property.always("under_replicated_reported", under_replicated_reported,
                        description=under_replicated_reported.__doc__, source=src, promised_by=ALL),
    )


__all__ = ["Reporters", "broker_view_properties"]
