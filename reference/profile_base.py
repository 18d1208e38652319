"""The public shape of a profile: one object with every operation of the reference.

`kreassign.reference.profile("kraft")` returns a `Profile`. Every operation is a pure
function of its inputs: `(state, input) -> Step(new state, response)`; no I/O, no
clock (time is an argument), no randomness, inputs never mutated.

`apply(state, action)` dispatches a spec action to the operation that implements it,
and `enabled_actions(state, space)` lists, in a deterministic order, the actions of an
`ActionSpace` that are enabled in a state, so that an explorer can enumerate
successors without knowing any rule.
"""

from __future__ import annotations

from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.messages import (
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kreassign.spec.state import ClusterState

from .replication import refresh_all
from .steps import ActionNotSupported, ActionSpace, Plan, Step


class Profile:
    """Base class: the operations every profile offers. Subclasses fill in the rules."""

    name: str = ""
    description: str = ""
    #: True when an accepted reassignment request takes effect only at the controller's step "U"
    #: (zk): the explorer then records the admin's intent when that step runs, not at the answer
    deferred_requests: bool = False

    # -- set-up ---------------------------------------------------------------------
    def initial_state(self, cluster: ClusterState) -> ClusterState:
        """Add the profile's own bookkeeping (e.g. the zk controller's memory) to a cluster."""
        return cluster

    # -- the algorithms -----------------------------------------------------------------
    def plan(self, current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
        raise NotImplementedError

    def alter_partition_reassignments(self, state: ClusterState, request: AlterPartitionReassignmentsRequest) -> Step:
        raise NotImplementedError

    def list_partition_reassignments(
        self, state: ClusterState, request: ListPartitionReassignmentsRequest = ListPartitionReassignmentsRequest()
    ) -> ListPartitionReassignmentsResponse:
        raise NotImplementedError

    def alter_partition(self, state: ClusterState, action: A.AlterPartition) -> Step:
        raise NotImplementedError

    def leader_expand_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        raise NotImplementedError

    def leader_shrink_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        raise NotImplementedError

    def broker_fail(self, state: ClusterState, broker: int) -> Step:
        raise NotImplementedError

    def broker_recover(self, state: ClusterState, broker: int) -> Step:
        raise NotImplementedError

    def elect_leaders(self, state: ClusterState, topic: str, partition: int, election: str) -> Step:
        raise NotImplementedError

    def controller_failover(self, state: ClusterState) -> Step:
        raise NotImplementedError

    def controller_step(self, state: ClusterState, topic: str, partition: int) -> Step:
        raise ActionNotSupported(f"profile {self.name} has no multi-step controller")

    def znode_reassign(self, state: ClusterState, topic: str, partition: int, replicas: tuple[int, ...]) -> Step:
        raise ActionNotSupported(f"profile {self.name} has no /admin/reassign_partitions znode")

    def cancel_topic(self, state: ClusterState, topic: str) -> Step:
        raise ActionNotSupported(f"profile {self.name} has no topic-level cancellation")

    def cancel_all(self, state: ClusterState) -> Step:
        raise ActionNotSupported(f"profile {self.name} has no /admin/reassign_cancel znode")

    def remove_cancel_marker(self, state: ClusterState) -> Step:
        raise ActionNotSupported(f"profile {self.name} has no /admin/reassign_cancel znode")

    def produce(self, state: ClusterState, topic: str, partition: int) -> Step:
        raise NotImplementedError

    def follower_fetch(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        raise NotImplementedError

    # -- dispatch -------------------------------------------------------------------------
    def apply(self, state: ClusterState, action: Any) -> Step:
        """Apply one spec action; the single entry point of explorers, oracles and replays.

        With the replication layer on, every partition's high watermark is refreshed
        after the action (ISR shrinks, leader changes and fetches all can move it).
        """
        step = self._dispatch(state, action)
        if step.state is not state and any(p.log is not None for t in step.state.topics for p in t.partitions):
            refreshed = refresh_all(step.state)
            if refreshed is not step.state:
                step = Step(refreshed, step.response)
        return step

    def _dispatch(self, state: ClusterState, action: Any) -> Step:
        if isinstance(action, A.Reassign):
            return self.alter_partition_reassignments(
                state, AlterPartitionReassignmentsRequest.single(action.topic, action.partition, action.replicas)
            )
        if isinstance(action, A.Cancel):
            return self.alter_partition_reassignments(
                state, AlterPartitionReassignmentsRequest.single(action.topic, action.partition, None)
            )
        if isinstance(action, A.AlterReassignments):
            return self.alter_partition_reassignments(state, action.request)
        if isinstance(action, A.ListReassignments):
            return Step(state, self.list_partition_reassignments(state, action.request))
        if isinstance(action, A.LeaderExpandIsr):
            return self.leader_expand_isr(state, action.topic, action.partition, action.broker)
        if isinstance(action, A.LeaderShrinkIsr):
            return self.leader_shrink_isr(state, action.topic, action.partition, action.broker)
        if isinstance(action, A.AlterPartition):
            return self.alter_partition(state, action)
        if isinstance(action, A.BrokerFail):
            return self.broker_fail(state, action.broker)
        if isinstance(action, A.BrokerRecover):
            return self.broker_recover(state, action.broker)
        if isinstance(action, A.ElectLeaders):
            return self.elect_leaders(state, action.topic, action.partition, action.election)
        if isinstance(action, A.ControllerFailover):
            return self.controller_failover(state)
        if isinstance(action, A.ControllerStep):
            return self.controller_step(state, action.topic, action.partition)
        if isinstance(action, A.ZnodeReassign):
            return self.znode_reassign(state, action.topic, action.partition, action.replicas)
        if isinstance(action, A.CancelTopic):
            return self.cancel_topic(state, action.topic)
        if isinstance(action, A.CancelAll):
            return self.cancel_all(state)
        if isinstance(action, A.RemoveCancelMarker):
            return self.remove_cancel_marker(state)
        if isinstance(action, A.Produce):
            return self.produce(state, action.topic, action.partition)
        if isinstance(action, A.FollowerFetch):
            return self.follower_fetch(state, action.topic, action.partition, action.broker)
        raise ActionNotSupported(f"unknown action {action!r}")

    def enabled_actions(self, state: ClusterState, space: ActionSpace) -> list[Any]:
        raise NotImplementedError
