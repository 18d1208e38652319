"""The `kraft` and `kraft-3.7` profiles: Kafka's KRaft controller (ReplicationControlManager).

Planning (PartitionReassignmentReplicas), AlterPartitionReassignments with Kafka's check
order, errors and messages, cancellation (PartitionReassignmentRevert), ListPartition-
Reassignments, AlterPartition from the leader, broker fence/unfence, elections — every
partition change through `kraft_change.build_change`. The state lives in the metadata
log, so a controller failover changes nothing (KAFKA-SEMANTICS.md, kraft, "Failover").

`kraft-3.7` differs only in the completion rule (before KAFKA-15665).
"""

from __future__ import annotations

from dataclasses import replace

from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import NO_LEADER, ClusterState, Partition, ordered_minus

from . import replication
from .api import ActionSpace, Plan, Profile, Step
from .common import default_enabled_actions, get_broker_id, get_partition, list_reassigning
from .kraft_change import (
    CompletionRule,
    Record,
    adding_replicas_in_isr,
    all_target_replicas_in_isr,
    apply_record,
    build_change,
)


class ReassignmentError(Exception):
    """A per-partition failure of AlterPartitionReassignments (ApiError: code + message)."""

    def __init__(self, code: int, message: str | None):
        super().__init__(message)
        self.code = code
        self.message = message


def kraft_plan(current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
    """PartitionReassignmentReplicas: removing and adding sorted by id, replicas = target ++ removing."""
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    return Plan(replicas=tuple(target) + removing, adding=adding, removing=removing)


class KraftProfile(Profile):
    name = "kraft"
    description = "KRaft controller, Kafka >= 3.8"
    #: when a reassignment completes (the strategy kraft-3.7 replaces)
    completion_rule: CompletionRule = staticmethod(all_target_replicas_in_isr)

    # -- helpers ---------------------------------------------------------------------------
    def _build(self, state: ClusterState, part: Partition, **targets) -> Record | None:
        return build_change(state, part, self.completion_rule, **targets)

    def _topic_election(self, state: ClusterState, topic: str) -> str:
        t = state.topic(topic)
        return A.UNCLEAN if t is not None and t.unclean_leader_election else A.ONLINE

    def plan(self, current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
        return kraft_plan(current, target)

    # -- AlterPartitionReassignments ----------------------------------------------------------
    def validate_target(self, state: ClusterState, replicas: tuple[int, ...]) -> None:
        """validateManualPartitionAssignment: empty, then each id ascending: registered, not repeated."""
        if not replicas:
            raise ReassignmentError(
                M.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."
            )
        prev = None
        for b in sorted(replicas):
            if not state.is_registered(b):
                raise ReassignmentError(
                    M.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes broker {b}, but no such broker is registered.",
                )
            if b == prev:
                raise ReassignmentError(
                    M.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes the broker {b} more than once.",
                )
            prev = b

    def change_reassignment(self, state: ClusterState, part: Partition, target: tuple[int, ...]) -> Record | None:
        """changePartitionReassignment: override only the non-empty plan lists, then build."""
        self.validate_target(state, target)
        plan = self.plan(part.replicas, target)
        targets: dict = {}
        if plan.replicas != part.replicas:
            targets["replicas"] = plan.replicas
        if plan.removing:
            targets["removing"] = plan.removing
        if plan.adding:
            targets["adding"] = plan.adding
        return self._build(state, part, **targets)

    def revert(self, part: Partition) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
        """PartitionReassignmentRevert: (replicas − adding, isr − adding, unclean?)."""
        replicas = ordered_minus(part.replicas, part.adding)
        isr = ordered_minus(part.isr, part.adding)
        if not isr:
            return replicas, (replicas[0],), True
        return replicas, isr, False

    def cancel_reassignment(self, state: ClusterState, topic: str, index: int, part: Partition) -> Record | None:
        """cancelPartitionReassignment: 85 if idle; refuse an unclean revert unless the topic allows it."""
        if not part.reassigning:
            raise ReassignmentError(M.NO_REASSIGNMENT_IN_PROGRESS, None)
        replicas, isr, unclean = self.revert(part)
        if unclean and self._topic_election(state, topic) != A.UNCLEAN:
            raise ReassignmentError(
                M.INVALID_REPLICA_ASSIGNMENT,
                f"Unable to revert partition assignment for {topic}:{index} because it would require an "
                "unclean leader election.",
            )
        # KAFKA-SEMANTICS.md: UNCLEAN election if the topic allows it, else ONLINE (an unclean
        # revert on a topic that does not allow it was refused above)
        return self._build(
            state,
            part,
            replicas=replicas,
            isr=isr,
            adding=(),
            removing=(),
            election=self._topic_election(state, topic),
        )

    def alter_partition_reassignments(self, state: ClusterState, request: M.AlterPartitionReassignmentsRequest) -> Step:
        """Each partition on its own, against the state before the request; records commit together.

        The null forms of KIP-455's draft schema (Topics = null, Partitions = null) are not
        part of the shipped schema: such a request cannot be parsed, modelled as a top-level
        42 INVALID_REQUEST.
        """
        if request.topics is None or any(t.partitions is None for t in request.topics):
            return Step(state, M.AlterPartitionReassignmentsResponse(
                error_code=M.INVALID_REQUEST, error_message="null topics or partitions are not supported"))
        records: list[tuple[str, int, Record]] = []
        topic_responses = []
        for topic in request.topics:
            responses = []
            for rp in topic.partitions:
                code, message = M.NONE, None
                try:
                    record = self._alter_one(state, topic.name, rp)
                    if record:
                        records.append((topic.name, rp.partition_index, record))
                except ReassignmentError as e:
                    code, message = e.code, e.message
                responses.append(M.ReassignablePartitionResponse(rp.partition_index, code, message))
            topic_responses.append(M.ReassignableTopicResponse(topic.name, tuple(responses)))
        new_state = state
        for name, index, record in records:
            new_state = new_state.with_partition(name, index, apply_record(new_state.partition(name, index), record))
        return Step(new_state, M.AlterPartitionReassignmentsResponse(responses=tuple(topic_responses)))

    def _alter_one(self, state: ClusterState, topic: str, rp: M.ReassignablePartition) -> Record | None:
        if state.topic(topic) is None:
            raise ReassignmentError(M.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}.")
        part = state.partition(topic, rp.partition_index)
        if part is None:
            raise ReassignmentError(
                M.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{rp.partition_index}."
            )
        if rp.replicas is None:
            return self.cancel_reassignment(state, topic, rp.partition_index, part)
        return self.change_reassignment(state, part, tuple(rp.replicas))

    def list_partition_reassignments(
        self, state: ClusterState, request: M.ListPartitionReassignmentsRequest = M.ListPartitionReassignmentsRequest()
    ) -> M.ListPartitionReassignmentsResponse:
        """Only reassigning partitions; unknown topics or partitions are skipped silently."""
        return list_reassigning(state, request)

    # -- AlterPartition (ISR changes from the leader) -----------------------------------------
    def alter_partition(self, state: ClusterState, action: A.AlterPartition) -> Step:
        """ReplicationControlManager.alterPartition: epoch checks, eligibility, then build."""
        part = get_partition(state, action.topic, action.partition)
        if action.leader != part.leader:
            return Step(state, M.Ack(M.NOT_LEADER_OR_FOLLOWER, "NOT_LEADER_OR_FOLLOWER"))
        if action.leader_epoch != part.leader_epoch:
            return Step(state, M.Ack(M.FENCED_LEADER_EPOCH, "FENCED_LEADER_EPOCH"))
        if action.partition_epoch != part.partition_epoch:
            return Step(state, M.Ack(M.INVALID_UPDATE_VERSION, "INVALID_UPDATE_VERSION"))
        new_isr = tuple(action.new_isr)
        if action.leader not in new_isr or len(set(new_isr)) != len(new_isr):
            return Step(state, M.Ack(M.INVALID_REQUEST, "INVALID_REQUEST"))
        for b in new_isr:
            if b not in part.replicas or not state.is_active(b):
                code = M.INELIGIBLE_REPLICA if action.version >= 3 else M.OPERATION_NOT_ATTEMPTED
                return Step(state, M.Ack(code, f"Replica {b} is ineligible"))
        record = self._build(state, part, isr=new_isr, election=self._topic_election(state, action.topic))
        new_state = state.with_partition(action.topic, action.partition, apply_record(part, record))
        if record and "leader" in record and record["leader"] != action.leader:
            # the change (e.g. a completing one) moved leadership away from the requester
            code = M.NEW_LEADER_ELECTED if action.version > 1 else M.FENCED_LEADER_EPOCH
            return Step(new_state, M.Ack(code, M.ERROR_NAMES[code]))
        return Step(new_state, M.Ack())

    def _isr_change(self, state: ClusterState, topic: str, index: int, new_isr: tuple[int, ...]) -> Step:
        part = get_partition(state, topic, index)
        return self.alter_partition(
            state, A.AlterPartition(topic, index, part.leader, new_isr, part.leader_epoch, part.partition_epoch)
        )

    def leader_expand_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        part = get_partition(state, topic, partition)
        return self._isr_change(state, topic, partition, part.isr + (get_broker_id(state, broker),))

    def leader_shrink_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        part = get_partition(state, topic, partition)
        return self._isr_change(state, topic, partition, tuple(b for b in part.isr if b != broker))

    # -- brokers ------------------------------------------------------------------------------
    def broker_fail(self, state: ClusterState, broker: int) -> Step:
        """handleBrokerFenced: fence, then a change for every partition with the broker in its ISR."""
        b = state.broker(get_broker_id(state, broker))
        if not b.active:
            return Step(state, M.Ack())
        state = state.with_broker(replace(b, active=False))
        for name, i, part in list(state.partitions()):
            if broker in part.isr:
                record = self._build(
                    state,
                    part,
                    isr=tuple(r for r in part.isr if r != broker),
                    election=self._topic_election(state, name),
                )
                state = state.with_partition(name, i, apply_record(part, record))
        return Step(state, M.Ack())

    def broker_recover(self, state: ClusterState, broker: int) -> Step:
        """handleBrokerUnfenced: unfence, then elect leaders for every leaderless partition."""
        b = state.broker(get_broker_id(state, broker))
        if b.active or not b.registered:
            return Step(state, M.Ack())
        state = state.with_broker(replace(b, active=True))
        for name, i, part in list(state.partitions()):
            if part.leader == NO_LEADER:
                record = self._build(state, part, election=self._topic_election(state, name))
                state = state.with_partition(name, i, apply_record(part, record))
        return Step(state, M.Ack())

    # -- elections ------------------------------------------------------------------------------
    def elect_leaders(self, state: ClusterState, topic: str, partition: int, election: str) -> Step:
        """ElectLeaders: PREFERRED (84 if already preferred, 80 if not possible) or UNCLEAN (84 if led)."""
        part = get_partition(state, topic, partition)
        if election == A.PREFERRED:
            if part.replicas and part.leader == part.replicas[0]:
                return Step(state, M.Ack(M.ELECTION_NOT_NEEDED, "ELECTION_NOT_NEEDED"))
        elif election == A.UNCLEAN:
            if part.leader != NO_LEADER:
                return Step(state, M.Ack(M.ELECTION_NOT_NEEDED, "ELECTION_NOT_NEEDED"))
        else:
            raise ValueError(f"unknown election type {election!r} (PREFERRED or UNCLEAN)")
        record = self._build(state, part, election=election)
        new_part = apply_record(part, record)
        new_state = state.with_partition(topic, partition, new_part)
        if election == A.PREFERRED and (not new_part.replicas or new_part.leader != new_part.replicas[0]):
            return Step(new_state, M.Ack(M.PREFERRED_LEADER_NOT_AVAILABLE, "PREFERRED_LEADER_NOT_AVAILABLE"))
        if election == A.UNCLEAN and new_part.leader == NO_LEADER:
            return Step(new_state, M.Ack(M.ELIGIBLE_LEADERS_NOT_AVAILABLE, "ELIGIBLE_LEADERS_NOT_AVAILABLE"))
        return Step(new_state, M.Ack())

    def controller_failover(self, state: ClusterState) -> Step:
        """The metadata log holds the whole state: a new controller replays it; nothing changes."""
        return Step(state, M.Ack())

    # -- replication layer ------------------------------------------------------------------------
    def produce(self, state: ClusterState, topic: str, partition: int) -> Step:
        return replication.produce(state, topic, partition)

    def follower_fetch(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        return replication.follower_fetch(state, topic, partition, broker)

    def enabled_actions(self, state: ClusterState, space: ActionSpace) -> list:
        return default_enabled_actions(state, space)


class Kraft37Profile(KraftProfile):
    name = "kraft-3.7"
    description = "KRaft controller before KAFKA-15665 (Kafka 3.7): completes when the adding replicas are in the ISR"
    completion_rule: CompletionRule = staticmethod(adding_replicas_in_isr)
