"""What `kip455` and `kip236` share: a ZooKeeper-era controller with one view of the state.

Both KIPs were written for the ZooKeeper controller. This module holds everything in
them that is not a reassignment rule: the admin request loop with its validation and
error responses, ListPartitionReassignments, the leader's ISR changes (written to the
partition-state znode, conditional on its version), ZK-style broker failure / recovery
and elections (`zk_elections`), the replication layer, and the enabled-action list.

What is modelled: the controller has no memory separate from ZooKeeper (unlike the
`zk` profile); a partition's fields are the one view, so a failover rebuilds exactly
what is persisted and pending controller work is *derived* from the partition fields
(`pending_step`), never stored. Every write that "sends LeaderAndIsr" bumps the leader
epoch (brokers ignore a LeaderAndIsr whose leader epoch is not newer), every write of
the partition-state znode bumps `partition_epoch` (its zkVersion).

Left out: LeaderAndIsr / StopReplica delivery (brokers see writes at once), replica
deletion on disk except that a deleted replica's log is dropped, controller epochs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.messages import (
    ELECTION_NOT_NEEDED,
    ELIGIBLE_LEADERS_NOT_AVAILABLE,
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REPLICA_ASSIGNMENT,
    INVALID_REQUEST,
    INVALID_UPDATE_VERSION,
    LEADER_NOT_AVAILABLE,
    NO_REASSIGNMENT_IN_PROGRESS,
    NONE,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
    POLICY_VIOLATION,
    PREFERRED_LEADER_NOT_AVAILABLE,
    REASSIGNMENT_IN_PROGRESS,
    UNKNOWN_TOPIC_OR_PARTITION,
    Ack,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kreassign.spec.state import NO_LEADER, Broker, ClusterState, Partition

from . import replication, zk_elections
from .enabled_actions import (
    default_enabled_actions,
    get_broker_id,
    get_partition,
    list_reassigning,
    log_caught_up,
)
from .profile_base import Profile
from .steps import ActionSpace, InvalidAction, Step

LIST_ALL = ListPartitionReassignmentsRequest()  # topics = None: list everything

# (state, error code, error message) of handling one partition of an admin request.
Outcome = tuple[ClusterState, int, "str | None"]


# -- error messages (our wording; docs/kip-profiles.md lists them) ------------------------------------


def msg_unknown_topic(topic: str) -> str:
    return f"Unable to find a topic named {topic}."


def msg_unknown_partition(topic: str, partition: int) -> str:
    return f"Unable to find partition {topic}-{partition}."


def msg_no_reassignment(topic: str, partition: int) -> str:
    return f"No reassignment is in progress for partition {topic}-{partition}."


def validate_target(state: ClusterState, topic: str, partition: int, replicas: tuple[int, ...]) -> tuple[int, str] | None:
    """KIP-455's INVALID_REPLICA_ASSIGNMENT cases, in list order: empty, negative, repeated, unknown broker.

    The seed lists "negative numbers, repeated numbers, or a broker ID that the controller
    was not aware of" as examples; an empty list is rejected too (it would remove every replica).
    Registered but failed brokers are accepted: the controller is "aware" of them.
    """
    where = f"{topic}-{partition}"
    if not replicas:
        return INVALID_REPLICA_ASSIGNMENT, f"The replica list for {where} is empty."
    seen: set[int] = set()
    for b in replicas:
        if b < 0:
            return INVALID_REPLICA_ASSIGNMENT, f"The replica list for {where} includes the negative broker id {b}."
        if b in seen:
            return INVALID_REPLICA_ASSIGNMENT, f"The replica list for {where} includes broker {b} more than once."
        seen.add(b)
    for b in replicas:
        if not state.is_registered(b):
            return (
                INVALID_REPLICA_ASSIGNMENT,
                f"The replica list for {where} includes broker {b}, which the controller is not aware of.",
            )
    return None


# -- partition writes ------------------------------------------------------------------------------


def bump_leader_epoch(part: Partition) -> Partition:
    """A LeaderAndIsr write with the same leader and ISR (leader epoch + 1, znode version + 1)."""
    return zk_elections.write_leader_and_isr(part, part.leader, part.isr)


def leader_isr_write(part: Partition, isr: tuple[int, ...]) -> Partition:
    """The leader's own ISR write to the partition-state znode: zkVersion + 1, leader epoch unchanged."""
    return replace(part, isr=isr, partition_epoch=part.partition_epoch + 1)


def remove_replicas(part: Partition, replicas: Iterable[int]) -> Partition:
    """OfflineReplica for each replica, in order: leaves the ISR the ZK way (zk_elections)."""
    for r in replicas:
        part = zk_elections.remove_replica_from_isr(part, r)
    return part


def drop_stale_logs(part: Partition) -> Partition:
    """A replica that is neither assigned, in the ISR nor the leader has been deleted: drop its log."""
    if part.log is None:
        return part
    keep = set(part.replicas) | set(part.isr) | {part.leader}
    logs = tuple((b, log) for b, log in part.log.logs if b in keep)
    if logs == part.log.logs:
        return part
    return replace(part, log=replace(part.log, logs=logs))


def response_of(entries: list[tuple[str, int, int, str | None]]) -> AlterPartitionReassignmentsResponse:
    """Group (topic, partition, code, message) in order into a response (consecutive same topics merge)."""
    topics: list[tuple[str, list[ReassignablePartitionResponse]]] = []
    for t, p, code, msg in entries:
        if not topics or topics[-1][0] != t:
            topics.append((t, []))
        topics[-1][1].append(ReassignablePartitionResponse(p, code, msg))
    return AlterPartitionReassignmentsResponse(
        responses=tuple(ReassignableTopicResponse(t, tuple(ps)) for t, ps in topics)
    )


class ZkEraControllerProfile(Profile):
    """The operations `kip455` and `kip236` share. Subclasses give the reassignment rules:

    `reassign_partition`, `cancel_partition`, `pending_step` / `run_step`, and `settle`
    (applied to every partition this module writes).
    """

    # -- hooks for the subclasses ---------------------------------------------------------------
    def reassign_partition(self, state: ClusterState, topic: str, index: int, target: tuple[int, ...]) -> Outcome:
        raise NotImplementedError

    def cancel_partition(self, state: ClusterState, topic: str, index: int) -> Outcome:
        raise NotImplementedError

    def pending_step(self, state: ClusterState, topic: str, index: int) -> str | None:
        """The name of the controller's next step on this partition, or None (derived from the fields)."""
        return None

    def run_step(self, state: ClusterState, topic: str, index: int, step: str) -> ClusterState:
        raise NotImplementedError

    def settle(self, part: Partition) -> Partition:
        """Normalise a partition after every write (kip455: pick up AR members that joined the ISR)."""
        return drop_stale_logs(part)

    def put(self, state: ClusterState, topic: str, index: int, part: Partition) -> ClusterState:
        part = self.settle(part)
        if part == state.partition(topic, index):
            return state
        return state.with_partition(topic, index, part)

    # -- admin API --------------------------------------------------------------------------------
    def alter_partition_reassignments(self, state: ClusterState, request: AlterPartitionReassignmentsRequest) -> Step:
        """Each partition on its own, in request order, each seeing the previous ones' effects.

        `topics is None` cancels every pending reassignment and `partitions is None` every
        pending one of the topic (KIP-455 schema; our message types declare both non-null,
        so these forms are reached through `cancel_all` / `cancel_topic` or an untyped request).
        """
        if request.topics is None:
            return self.cancel_every(state, [(t, i) for t, i, p in state.partitions() if p.reassigning])
        entries: list[tuple[str, int, int, str | None]] = []
        for rt in request.topics:
            if rt.partitions is None:
                step = self.cancel_topic(state, rt.name)
                state = step.state
                for tr in step.response.responses:
                    entries.extend((tr.name, p.partition_index, p.error_code, p.error_message) for p in tr.partitions)
                continue
            for rp in rt.partitions:
                state, code, msg = self.one_partition(state, rt.name, rp.partition_index, rp.replicas)
                entries.append((rt.name, rp.partition_index, code, msg))
        return Step(state, response_of(entries))

    def one_partition(self, state: ClusterState, topic: str, index: int, replicas: tuple[int, ...] | None) -> Outcome:
        if state.topic(topic) is None:
            return state, UNKNOWN_TOPIC_OR_PARTITION, msg_unknown_topic(topic)
        part = state.partition(topic, index)
        if part is None:
            return state, UNKNOWN_TOPIC_OR_PARTITION, msg_unknown_partition(topic, index)
        if replicas is None:
            if not part.reassigning:
                return state, NO_REASSIGNMENT_IN_PROGRESS, msg_no_reassignment(topic, index)
            return self.cancel_partition(state, topic, index)
        replicas = tuple(replicas)
        bad = validate_target(state, topic, index, replicas)
        if bad is not None:
            return state, bad[0], bad[1]
        return self.reassign_partition(state, topic, index, replicas)

    def cancel_every(self, state: ClusterState, partitions: list[tuple[str, int]]) -> Step:
        entries = []
        for t, i in partitions:
            state, code, msg = self.cancel_partition(state, t, i)
            entries.append((t, i, code, msg))
        return Step(state, response_of(entries))

    def cancel_topic(self, state: ClusterState, topic: str) -> Step:
        """Cancel every pending reassignment of one topic (KIP-455 `Partitions: null`).

        If none of its partitions is reassigning, every partition answers 85
        NO_REASSIGNMENT_IN_PROGRESS. An unknown topic raises InvalidAction (the response
        has no topic-level error field to carry UNKNOWN_TOPIC_OR_PARTITION).
        """
        t = state.topic(topic)
        if t is None:
            raise InvalidAction(f"unknown topic {topic!r}")
        pending = [(topic, i) for i, p in enumerate(t.partitions) if p.reassigning]
        if not pending:
            return Step(
                state,
                response_of(
                    [(topic, i, NO_REASSIGNMENT_IN_PROGRESS, msg_no_reassignment(topic, i)) for i in range(len(t.partitions))]
                ),
            )
        return self.cancel_every(state, pending)

    def list_partition_reassignments(
        self, state: ClusterState, request: ListPartitionReassignmentsRequest = LIST_ALL
    ) -> ListPartitionReassignmentsResponse:
        """Reassigning partitions with replicas / adding / removing; unknown names are skipped."""
        return list_reassigning(state, request)

    # -- the leader's ISR changes -----------------------------------------------------------------
    def leader_expand_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        part = get_partition(state, topic, partition)
        get_broker_id(state, broker)
        if part.leader == NO_LEADER:
            return Step(state, Ack(LEADER_NOT_AVAILABLE, f"{topic}-{partition} has no leader."))
        if broker in part.isr:
            return Step(state, Ack())
        if broker not in part.replicas or not state.is_active(broker) or not log_caught_up(part, broker):
            return Step(state, Ack(INELIGIBLE_REPLICA, f"Broker {broker} cannot join the ISR of {topic}-{partition}."))
        return Step(self.put(state, topic, partition, leader_isr_write(part, part.isr + (broker,))), Ack())

    def leader_shrink_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        part = get_partition(state, topic, partition)
        get_broker_id(state, broker)
        if part.leader == NO_LEADER:
            return Step(state, Ack(LEADER_NOT_AVAILABLE, f"{topic}-{partition} has no leader."))
        if broker not in part.isr:
            return Step(state, Ack())
        if broker == part.leader:
            return Step(state, Ack(INVALID_REQUEST, f"The leader {broker} cannot remove itself from the ISR."))
        isr = tuple(b for b in part.isr if b != broker)
        return Step(self.put(state, topic, partition, leader_isr_write(part, isr)), Ack())

    def alter_partition(self, state: ClusterState, action: A.AlterPartition) -> Step:
        """The leader's conditional ISR write (ZK-era AlterIsr): epochs must match the znode."""
        part = get_partition(state, action.topic, action.partition)
        for b in action.new_isr:
            get_broker_id(state, b)
        if part.leader == NO_LEADER or action.leader != part.leader:
            return Step(state, Ack(NOT_LEADER_OR_FOLLOWER, f"Broker {action.leader} is not the leader."))
        if action.leader_epoch != part.leader_epoch:
            return Step(state, Ack(FENCED_LEADER_EPOCH, f"Leader epoch {action.leader_epoch} != {part.leader_epoch}."))
        if action.partition_epoch != part.partition_epoch:
            return Step(
                state,
                Ack(INVALID_UPDATE_VERSION, f"Partition epoch {action.partition_epoch} != {part.partition_epoch}."),
            )
        new_isr = tuple(action.new_isr)
        if len(set(new_isr)) != len(new_isr) or part.leader not in new_isr:
            return Step(state, Ack(INVALID_REQUEST, "The new ISR must hold the leader and no broker twice."))
        for b in new_isr:
            if b not in part.isr and (b not in part.replicas or not state.is_active(b) or not log_caught_up(part, b)):
                return Step(state, Ack(INELIGIBLE_REPLICA, f"Broker {b} cannot join the ISR."))
        if new_isr == part.isr:
            return Step(state, Ack())
        return Step(self.put(state, action.topic, action.partition, leader_isr_write(part, new_isr)), Ack())

    # -- brokers and elections ----------------------------------------------------------------------
    def broker_fail(self, state: ClusterState, broker: int) -> Step:
        """onBrokerFailure: partitions it led get an OfflinePartition election, then its replicas go
        OfflineReplica (removed from every ISR the ZK way)."""
        get_broker_id(state, broker)
        b = state.broker(broker)
        if not b.active:
            return Step(state, Ack())
        state = state.with_broker(Broker(broker, registered=b.registered, active=False))
        for t, i, part in list(state.partitions()):
            topic = state.topic(t)
            if part.leader == broker:
                elected = zk_elections.offline_election(state, part.replicas, part, topic.unclean_leader_election)
                if elected is not None:
                    part = zk_elections.write_leader_and_isr(part, *elected)
                elif broker not in part.isr:  # a leader outside its ISR (never built here): still goes offline
                    part = zk_elections.write_leader_and_isr(part, NO_LEADER, part.isr)
            part = zk_elections.remove_replica_from_isr(part, broker)
            state = self.put(state, t, i, part)
        return Step(state, Ack())

    def broker_recover(self, state: ClusterState, broker: int) -> Step:
        """onBrokerStartup: every leaderless partition gets an OfflinePartition election."""
        get_broker_id(state, broker)
        b = state.broker(broker)
        if b.active:
            return Step(state, Ack())
        state = state.with_broker(Broker(broker, registered=True, active=True))
        for t, i, part in list(state.partitions()):
            if part.leader != NO_LEADER:
                continue
            elected = zk_elections.offline_election(state, part.replicas, part, state.topic(t).unclean_leader_election)
            if elected is not None:
                state = self.put(state, t, i, zk_elections.write_leader_and_isr(part, *elected))
        return Step(state, Ack())

    def elect_leaders(self, state: ClusterState, topic: str, partition: int, election: str) -> Step:
        """ElectLeaders: PREFERRED (replicas[0] if live and in the ISR), UNCLEAN (leaderless partitions only)."""
        part = get_partition(state, topic, partition)
        if election == A.PREFERRED:
            if part.replicas and part.leader == part.replicas[0]:
                return Step(state, Ack(ELECTION_NOT_NEEDED, "The preferred replica is already the leader."))
            elected = zk_elections.preferred_election(state, part.replicas, part)
            if elected is None:
                return Step(state, Ack(PREFERRED_LEADER_NOT_AVAILABLE, "The preferred replica is not live or not in the ISR."))
        elif election == A.UNCLEAN:
            if part.leader != NO_LEADER:
                return Step(state, Ack(ELECTION_NOT_NEEDED, "The partition has a leader."))
            elected = zk_elections.offline_election(state, part.replicas, part, unclean=True)
            if elected is None:
                return Step(state, Ack(ELIGIBLE_LEADERS_NOT_AVAILABLE, "No live replica can lead."))
        else:
            raise InvalidAction(f"unknown election type {election!r} (PREFERRED or UNCLEAN)")
        return Step(self.put(state, topic, partition, zk_elections.write_leader_and_isr(part, *elected)), Ack())

    # -- controller -------------------------------------------------------------------------------
    def controller_failover(self, state: ClusterState) -> Step:
        """No memory separate from the persisted fields: pending work is derived from them, so a new
        controller rebuilds exactly the same state and its pending steps stay enabled."""
        return Step(state, Ack())

    def controller_step(self, state: ClusterState, topic: str, partition: int) -> Step:
        get_partition(state, topic, partition)
        step = self.pending_step(state, topic, partition)
        if step is None:
            return Step(state, Ack(NONE, f"No pending controller step for {topic}-{partition}."))
        return Step(self.run_step(state, topic, partition, step), Ack(NONE, step))

    def pending_partitions(self, state: ClusterState) -> list[tuple[str, int]]:
        return [(t, i) for t, i, _ in state.partitions() if self.pending_step(state, t, i) is not None]

    # -- replication layer ------------------------------------------------------------------------
    def produce(self, state: ClusterState, topic: str, partition: int) -> Step:
        return replication.produce(state, topic, partition)

    def follower_fetch(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        get_broker_id(state, broker)
        return replication.follower_fetch(state, topic, partition, broker)

    # -- enumeration --------------------------------------------------------------------------------
    def extra_actions(self, state: ClusterState, space: ActionSpace) -> list[Any]:
        return [A.ControllerStep(t, i) for t, i in self.pending_partitions(state)]

    def supports_znode(self) -> bool:
        return False

    def enabled_actions(self, state: ClusterState, space: ActionSpace) -> list[Any]:
        out = default_enabled_actions(state, space, self.extra_actions(state, space))
        if not self.supports_znode():
            out = [a for a in out if not isinstance(a, A.ZnodeReassign)]
        return out


__all__ = [
    "INVALID_REQUEST",
    "LEADER_NOT_AVAILABLE",
    "NOT_ENOUGH_REPLICAS",
    "NOT_LEADER_OR_FOLLOWER",
    "POLICY_VIOLATION",
    "REASSIGNMENT_IN_PROGRESS",
    "ZkEraControllerProfile",
    "bump_leader_epoch",
    "drop_stale_logs",
    "leader_isr_write",
    "msg_no_reassignment",
    "msg_unknown_partition",
    "msg_unknown_topic",
    "remove_replicas",
    "response_of",
    "validate_target",
]
