"""The zk controller's identity and its event queue (issue 26, item 1; bounds: zk_events).

Kafka's ZooKeeper controller (KafkaController, 2.4 – 3.9) is one broker at a time: the one whose
ephemeral `/controller` znode holds its id, with the controller epoch `/controller_epoch`. Its work is
one event at a time on a single thread (ControllerEventManager; KAFKA-5028, part of the KAFKA-5027 redesign).
Without this capability the model's ControllerFailover is an atomic crash-and-elect; with it:

- `ControllerResign()`: the controller's ZooKeeper session expires. The ZooKeeper client's
  `beforeInitializingSession` calls `eventManager.clearAndPut(Expire)`: the events still queued are
  dropped (preempted), the event in progress cannot write any more (its session is gone: modelled as
  the rest of its steps lost, as at a crash), then `processExpire` sets activeControllerId = -1 and runs
  `onControllerResignation`, whose last act is `controllerContext.resetContext()` (epoch = 0,
  clearTopicsState: assignments, leadership cache, partitionsBeingReassigned) and
  `controllerChannelManager.shutdown()` (the requests queued to brokers go). The broker stays up.
- `ControllerElect(b)`: a live broker wins the election (`elect`: registerControllerAndIncrementControllerEpoch
  reads `/controller_epoch` and writes it + 1, conditionally on its zkVersion), then `onControllerFailover`
  rebuilds the context from ZooKeeper (`zk_controller.controller_startup`). The winner may be the broker
  that resigned: it starts from what ZooKeeper holds, never from what it held before.
- the event queue: a leader's own ISR write (zk_versions: inter.broker.protocol.version < 2.7,
  `ZkAlterPartitionManager`) is another process's write to ZooKeeper; it no longer waits until the
  controller's run of onPartitionReassignment ends, and the IsrChangeNotification it causes waits in the
  queue behind that run (`zk_controller.NOTIFICATION`), so a step of the run decides while a notification
  it has not read yet is queued.

What is left out: a resigned controller still finishing its event with a live session (a zombie; the
writes KAFKA-6082, apache/kafka PR 5101, fenced with the controller epoch's zkVersion), `ControllerChange`
/ `Reelect` as events of their own, and AlterPartition requests (IBP >= 2.7) queued with the epochs the
leader had when it sent them (the model builds them when the controller takes them). A broken variant's
kept context survives only until another broker wins an election (one context is kept, not one per broker).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.messages import NONE, NOT_CONTROLLER, Ack
from kreassign.spec.state import NO_LEADER, ClusterState, ZkController, replace

from . import zk_controller as C
from . import zk_requests as R
from .enabled_actions import get_broker_id
from .steps import InvalidAction, Step

NO_CONTROLLER = NO_LEADER
"""activeControllerId when no broker holds /controller (-1)."""


def with_controller_identity(cluster: ClusterState) -> ClusterState:
    """Switch the identity on (bounds: zk_events): the first controller is the lowest live broker id."""
    zk = cluster.zk
    if zk is None:
        raise ValueError("zk_events: the state has no zk controller")
    live = [b.id for b in cluster.brokers if b.registered and b.active]
    return replace(cluster, zk=replace(zk, controller_id=live[0] if live and zk.active else NO_CONTROLLER))


def reset_context(zk: ZkController) -> ZkController:
    """ControllerContext.resetContext: what the resigned broker still holds of its term. Nothing but what
    ZooKeeper persists (/controller_epoch, /admin/reassign_partitions, /admin/delete_topics) and who it was;
    the leadership cache stays switched on (empty) when the model has it."""
    return ZkController(active=False, epoch=zk.epoch, admin_znode=zk.admin_znode, deleting=zk.deleting,
                        leadership=None if zk.leadership is None else (), controller_id=zk.controller_id)


@dataclass(frozen=True)
class ControllerElection:
    """The rules of resignation and election; Kafka's by default, each replaceable by a test.

    `reset_context_on_resignation`: onControllerResignation ends with controllerContext.resetContext();
    False plants a controller that keeps its context and, elected again, starts from it.
    `epoch_from_zookeeper`: the new epoch is /controller_epoch + 1; False plants one that takes its own
    context's epoch + 1 (resetContext set it to 0).
    """

    reset_context_on_resignation: bool = True
    epoch_from_zookeeper: bool = True

    def apply(self, state: ClusterState, action: Any) -> Step:
        zk = state.zk
        if zk is None or zk.controller_id is None:
            raise InvalidAction(f"{action}: the controller's identity is not modelled (bounds: zk_events, zk only)")
        if isinstance(action, A.ControllerResign):
            return self.resign(state)
        if isinstance(action, A.ControllerElect):
            return self.elect(state, action.broker)
        raise InvalidAction(f"not a controller election action: {action!r}")

    def resign(self, state: ClusterState) -> Step:
        """processExpire: activeControllerId = -1, onControllerResignation. The queued events and the rest
        of the event in progress are gone (clearAndPut(Expire); an expired session writes nothing)."""
        zk = state.zk
        assert zk is not None
        if not zk.active:
            return Step(state, Ack(NOT_CONTROLLER, "no active controller to resign"))
        state = R.controller_gone(state)  # controllerChannelManager.shutdown()
        if self.reset_context_on_resignation:
            kept = reset_context(zk)
        else:
            kept = replace(zk, active=False, pending=())  # the broken variant: the context survives
        return Step(replace(state, zk=kept), Ack())

    def elect(self, state: ClusterState, broker: int) -> Step:
        """elect(): only while /controller is empty, by a live broker; the epoch goes up by one, then
        onControllerFailover from ZooKeeper."""
        zk = state.zk
        assert zk is not None
        get_broker_id(state, broker)
        if zk.active:
            return Step(state, Ack(NONE, f"broker {zk.controller_id} is the controller already"))
        if not state.is_active(broker):
            return Step(state, Ack(NOT_CONTROLLER, f"broker {broker} is not live"))
        context_epoch = 0 if self.reset_context_on_resignation else zk.epoch  # resetContext: epoch = 0
        epoch = (zk.epoch if self.epoch_from_zookeeper else context_epoch) + 1
        elected = C.controller_startup(state, epoch)
        new = elected.zk
        assert new is not None
        new = replace(new, controller_id=broker)
        if not self.reset_context_on_resignation and zk.controller_id == broker:
            # the broken variant: what the broker still held of its previous term wins over ZooKeeper
            new = replace(new, memory=_kept_wins(zk.memory, new.memory),
                          being_reassigned=_kept_wins(zk.being_reassigned, new.being_reassigned),
                          leadership=None if new.leadership is None else _kept_wins(zk.leadership or (), new.leadership))
        return Step(replace(elected, zk=new), Ack())


def _kept_wins(kept: tuple, fresh: tuple) -> tuple:
    """Rows keyed by (topic, partition): the kept row where there is one, else the fresh one."""
    rows = {(r[0], r[1]): r for r in fresh}
    rows.update({(r[0], r[1]): r for r in kept})
    return tuple(rows[k] for k in sorted(rows))


#: Kafka's rules
KAFKA_ELECTION = ControllerElection()


def controller_identity_actions(cluster: ClusterState) -> list[Any]:
    """What the environment may do to the controller's identity: the active controller's session may
    expire; with none active, each live broker may win the election."""
    zk = cluster.zk
    if zk is None or zk.controller_id is None:
        return []
    if zk.active:
        return [A.ControllerResign()]
    return [A.ControllerElect(b.id) for b in cluster.brokers if b.registered and b.active]


__all__ = ["KAFKA_ELECTION", "NO_CONTROLLER", "ControllerElection", "controller_identity_actions", "reset_context",
           "with_controller_identity"]
