"""What must hold when a topic changes under a reassignment (issue 14, item 4).

Checked when the bounds allow CreatePartitions (`create_partitions = N`). Source: the
replication factor of a topic is the one its brokers report (Partition.scala's
`AssignmentState.replicationFactor`: replicas − adding, "keep the size of the original
replicas"); KAFKA-5856's review: "during reassignment there is no meaningful notion of
replication factor" in the raw replica list, which is why AdminUtils once refused to add
partitions while a reassignment ran.
"""

from __future__ import annotations

from kreassign.spec.fairness import Fairness
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState
from kreassign.spec.state import ordered_minus


def created_partitions_get_replication_factor(prev: ModelState, action, nxt: ModelState) -> bool:
    """Partitions added by CreatePartitions get the topic's replication factor (partition 0's replicas
    minus its adding replicas), never |original ∪ target| of a reassignment in flight."""
    act = getattr(action, "action", action)
    if type(act).__name__ != "CreatePartitions":
        return True
    after = getattr(action, "after", None) or nxt.cluster
    before = prev.cluster.topic(act.topic)
    grown = after.topic(act.topic)
    if before is None or grown is None:
        return True
    p0 = before.partitions[0]
    rf = len(ordered_minus(p0.replicas, p0.adding))
    return all(len(p.replicas) == rf for p in grown.partitions[len(before.partitions):])


def preferred_leaders_lead(ms: ModelState) -> bool:
    """Goal: every partition whose preferred replica is live and in sync is led by it."""
    c = ms.cluster
    return all(p.leader == p.replicas[0] for _, _, p in c.partitions()
               if p.replicas and c.is_active(p.replicas[0]) and p.replicas[0] in p.isr)


LEADER_BALANCE_PROPERTIES: tuple[Property, ...] = (
    Property.eventually(
        "preferred_leader_eventually_leads", preferred_leaders_lead,
        description="In every fair run (the controller's periodic balancing is weakly fair), every partition "
        "whose preferred replica is live and in sync is eventually led by it, whatever other partition is being "
        "reassigned; a completed reassignment's leadership moves to its target's first replica.",
        source="KafkaController.checkAndTriggerAutoLeaderRebalance; KAFKA-10149 (fixed in 3.4.0)",
        promised_by=ALL,
        extra={"fairness": Fairness(lambda ms: True)},
    ),
)


TOPIC_CHANGE_PROPERTIES: tuple[Property, ...] = (
    Property.transition("created_partitions_get_replication_factor", created_partitions_get_replication_factor,
                        description=created_partitions_get_replication_factor.__doc__,
                        source="Partition.scala AssignmentState.replicationFactor; KAFKA-5856 review",
                        promised_by=ALL),
)

__all__ = ["LEADER_BALANCE_PROPERTIES", "TOPIC_CHANGE_PROPERTIES", "created_partitions_get_replication_factor",
           "preferred_leaders_lead"]
