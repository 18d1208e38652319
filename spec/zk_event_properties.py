"""The zk controller's identity and its event queue (issue 26, item 1), checked with `zk_events = true`.

What Kafka's ZooKeeper controller (KafkaController, 2.4 – 3.9) promises about who the controller is
and what it decides on:

1. `controller_epoch_increases`: every election raises the controller epoch, nothing else changes it
   (KafkaZkClient.registerControllerAndIncrementControllerEpoch; the epoch and its zkVersion fence the
   writes of a controller that lost its session, KAFKA-6082, apache/kafka PR 5101, 2018).
2. `elected_controller_starts_from_zookeeper`: a broker that wins the election, even one that was the
   controller before, builds its context from ZooKeeper alone (onControllerResignation ends with
   controllerContext.resetContext(); onControllerFailover: initializeControllerContext,
   initializePartitionReassignments).
3. `completion_decided_on_zookeeper_isr`: the controller decides that a reassignment is complete (step U
   goes to phase B) only if the target replicas are in the ISR ZooKeeper holds at that moment, even when
   an ISR change notification is still queued behind the run (KafkaController.isReassignmentComplete
   reads the partition state znode; KIP-455 "the reassignment completes when every target replica is in
   the ISR").

The elected state of property 2 needs the reference's own election on a state stripped of the
controller's context: the model passes it in (`zk_event_properties(elect_from_zookeeper)`), as spec/ may
not import reference/.
"""

from __future__ import annotations

from collections.abc import Callable

from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ModelState

ElectFromZookeeper = Callable[..., object]  # (cluster, broker) -> the cluster after electing it from ZooKeeper alone


def _action(label):
    return getattr(label, "action", label)


def _after(label, nxt: ModelState):
    return getattr(label, "after", None) or nxt.cluster


def _elects(label, before, after) -> bool:
    """Did this edge put a controller in place: an election (ControllerElect), or a failover (crash and elect)?"""
    kind = type(_action(label)).__name__
    return after.active and (kind == "ControllerFailover" or (kind == "ControllerElect" and not before.active))


def controller_epoch_increases(prev: ModelState, label, nxt: ModelState) -> bool:
    """Every election makes the controller epoch larger than any before it; no other step changes it."""
    before, after = prev.cluster.zk, _after(label, nxt).zk
    if before is None or after is None:
        return True
    if _elects(label, before, after):
        return after.epoch > before.epoch
    return after.epoch == before.epoch


def elected_controller_starts_from_zookeeper(elect_from_zookeeper: ElectFromZookeeper) -> Callable[..., bool]:
    def holds(prev: ModelState, label, nxt: ModelState) -> bool:
        """A broker elected controller, the one that resigned included, starts from what ZooKeeper holds: its
        election on the state stripped of every controller's context gives the same state."""
        act = _action(label)
        before = prev.cluster.zk
        if type(act).__name__ != "ControllerElect" or before is None or before.active:
            return True
        after = _after(label, nxt)
        if after.zk is None or not after.zk.active:
            return True
        return elect_from_zookeeper(prev.cluster, act.broker) == after

    holds.__name__ = "elected_controller_starts_from_zookeeper"
    return holds


def _next_step(zk, topic: str, partition: int) -> str | None:
    return next((s for t, p, s in zk.pending if (t, p) == (topic, partition)), None)


def completion_decisions_off_zookeeper(prev: ModelState, label, nxt: ModelState) -> list[str]:
    """Each reassignment this edge's step U declared complete while its target was not in ZooKeeper's ISR."""
    act = _action(label)
    zk = prev.cluster.zk
    if type(act).__name__ != "ControllerStep" or zk is None or _next_step(zk, act.topic, act.partition) != "U":
        return []
    after = _after(label, nxt).zk
    if after is None or _next_step(after, act.topic, act.partition) != "B1":
        return []
    row = next((r for r in after.memory if (r[0], r[1]) == (act.topic, act.partition)), None)
    if row is None or not (row[3] or row[4]):
        return []  # not being reassigned (a reassignment to the origin): complete without an ISR check
    target = tuple(b for b in row[2] if b not in row[4])
    isr = prev.cluster.partition(act.topic, act.partition).isr
    if set(target) <= set(isr):
        return []
    return [f"{act.topic}-{act.partition}: complete with target {list(target)} but ISR {list(isr)} in ZooKeeper"]


def completion_decided_on_zookeeper_isr(prev: ModelState, label, nxt: ModelState) -> bool:
    """The controller decides a reassignment is complete (step U goes to phase B) only when every target replica
    is in the ISR ZooKeeper holds then, whatever its cache says and whatever notification is still queued."""
    return not completion_decisions_off_zookeeper(prev, label, nxt)


SOURCE = "KafkaController.elect / onControllerResignation / onControllerFailover, ControllerEventManager (Kafka 3.9)"


def zk_event_properties(elect_from_zookeeper: ElectFromZookeeper) -> tuple[Property, ...]:
    """The properties of `zk_events = true`; `elect_from_zookeeper(cluster, broker)` is the model's election run
    on the cluster stripped of the controller's context."""
    from_zk = elected_controller_starts_from_zookeeper(elect_from_zookeeper)
    return (
        Property.transition("controller_epoch_increases", controller_epoch_increases,
                            description=controller_epoch_increases.__doc__,
                            source="KafkaZkClient.registerControllerAndIncrementControllerEpoch (Kafka 3.9); "
                            "KAFKA-6082 (fencing with the controller epoch's zkVersion, apache/kafka PR 5101)",
                            promised_by=("zk",)),
        Property.transition("elected_controller_starts_from_zookeeper", from_zk, description=from_zk.__doc__,
                            source=SOURCE + "; ControllerContext.resetContext", promised_by=("zk",)),
        Property.transition("completion_decided_on_zookeeper_isr", completion_decided_on_zookeeper_isr,
                            description=completion_decided_on_zookeeper_isr.__doc__,
                            source="KafkaController.isReassignmentComplete / processIsrChangeNotification "
                            "(Kafka 3.9); KIP-455", promised_by=("zk",)),
    )


ZK_EVENT_PROPERTY_NAMES = ("controller_epoch_increases", "elected_controller_starts_from_zookeeper",
                           "completion_decided_on_zookeeper_isr")

__all__ = [
    "ZK_EVENT_PROPERTY_NAMES",
    "completion_decided_on_zookeeper_isr",
    "completion_decisions_off_zookeeper",
    "controller_epoch_increases",
    "elected_controller_starts_from_zookeeper",
    "zk_event_properties",
]
