"""The `zk` profile: Kafka's ZooKeeper-based KafkaController (Kafka 2.4 – 3.9).

The admin API (AlterPartitionReassignments with KafkaController's validation and
messages, ListPartitionReassignments), the leaders' AlterPartition ISR changes,
ElectLeaders, broker failure and start-up, the legacy /admin/reassign_partitions znode
and controller failover, on top of the step-by-step onPartitionReassignment of
`zk_controller` (U, A1, A2, B1 … B7, one ControllerStep action each).

Kafka's controller is single-threaded: a controller event that arrives while
onPartitionReassignment runs waits for it. So every operation that is a controller
event first finishes the pending steps (`zk_controller.drain`), and
`enabled_actions` offers, while steps are pending, only those steps, the controller
failover (the crash that may fall between any two steps) and the data plane
(Produce / FollowerFetch). docs/zk-profile.md lists every choice made where
KAFKA-SEMANTICS.md is silent.
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
    NO_REASSIGNMENT_IN_PROGRESS,
    NONE,
    NOT_CONTROLLER,
    NOT_LEADER_OR_FOLLOWER,
    OPERATION_NOT_ATTEMPTED,
    PREFERRED_LEADER_NOT_AVAILABLE,
    REASSIGNMENT_IN_PROGRESS,
    UNKNOWN_TOPIC_OR_PARTITION,
    Ack,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kreassign.spec.state import NO_LEADER, ClusterState, ZkController

from . import replication
from . import zk_controller as C
from . import zk_requests as R
from .enabled_actions import default_enabled_actions, get_broker_id, get_partition, log_caught_up
from .profile_base import Profile
from .steps import ActionSpace, InvalidAction, Plan, Step
from .zk_elections import offline_election, preferred_election, write_leader_and_isr

# Errors' default messages (org.apache.kafka.common.protocol.Errors), used where Kafka builds ApiError(error).
MSG_NOT_CONTROLLER = "This is not the correct controller for this cluster."
MSG_NO_REASSIGNMENT = "No partition reassignment is in progress."
MSG_PARTITION_DOES_NOT_EXIST = "The partition does not exist."
MSG_ELECTION_NOT_NEEDED = "Leader election not needed for topic partition."
MSG_FENCED_LEADER_EPOCH = "The leader epoch in the request is older than the epoch on the broker."
MSG_INVALID_UPDATE_VERSION = "The given update version was invalid."
MSG_INELIGIBLE_REPLICA = "The new ISR contains at least one ineligible replica."
# kafka-reassign-partitions --zookeeper, when /admin/reassign_partitions already exists
MSG_ZNODE_BUSY = "There is an existing assignment running."

# While the controller runs onPartitionReassignment, only these actions may interleave.
_WHILE_BUSY = (A.ControllerStep, A.ControllerFailover, A.Produce, A.FollowerFetch)
# ... and, with the leadership cache (zk_versions), while only ISR change notifications wait, the leaders'
# own ISR writes to ZooKeeper
_WHILE_BUSY_DIRECT_ISR = _WHILE_BUSY + (A.LeaderExpandIsr, A.LeaderShrinkIsr)
_LEADER_ISR_ACTIONS = (A.LeaderExpandIsr, A.LeaderShrinkIsr)


def _leader_fields(part):
    return part.leader, part.isr, part.leader_epoch, part.partition_epoch


def scala_buffer(xs: Iterable[int]) -> str:
    """How Kafka prints a replica list taken from a request: a Scala ArrayBuffer (seed 003's logs)."""
    return "ArrayBuffer(" + ", ".join(str(x) for x in xs) + ")"


def scala_set(xs: Iterable[int]) -> str:
    """How Kafka prints controllerContext.liveBrokerIds: a HashSet; small ids come out ascending."""
    return "HashSet(" + ", ".join(str(x) for x in sorted(xs)) + ")"


def structural_error(replicas: tuple[int, ...]) -> tuple[int, str] | None:
    """The first three checks of KafkaController.validateReplicas: empty, duplicates, negative ids."""
    if not replicas:
        return INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment."
    if len(set(replicas)) != len(replicas):
        return (
            INVALID_REPLICA_ASSIGNMENT,
            f"Duplicate replica ids in partition reassignment replica list: {scala_buffer(replicas)}",
        )
    if any(r < 0 for r in replicas):
        return INVALID_REPLICA_ASSIGNMENT, f"Invalid broker id in replica list: {scala_buffer(replicas)}"
    return None


def validate_replicas(current: Plan, replicas: tuple[int, ...], live: Iterable[int]) -> tuple[int, str] | None:
    """KafkaController.validateReplicas, in Kafka's order: empty, duplicates, negative ids, then adding
    replicas (computed against the origin) that are not on a live broker. Existing replicas may be dead."""
    error = structural_error(replicas)
    if error is not None:
        return error
    live = sorted(live)
    adding = C.reassign_to(current, replicas).adding
    if not set(adding) <= set(live):
        message = (
            "Replica assignment has brokers that are not alive. "
            f"Replica list: {scala_buffer(adding)}, live broker list: {scala_set(live)}"
        )
        return INVALID_REPLICA_ASSIGNMENT, message
    return None


def _zk(state: ClusterState) -> ZkController:
    if state.zk is None:
        raise InvalidAction("the state has no zk controller: build it with profile('zk').initial_state(cluster)")
    return state.zk


def _live_ids(state: ClusterState) -> list[int]:
    return [b.id for b in state.brokers if b.registered and b.active]


class ZkProfile(Profile):
    """KafkaController with ZooKeeper: multi-step onPartitionReassignment, memory vs ZooKeeper, failover."""

    name = "zk"
    description = "ZooKeeper-based KafkaController (Kafka 2.4 - 3.9): phases U / A / B, multi-step, failover"
    # an accepted request takes effect at step U (Kafka answers after onPartitionReassignment ran)
    deferred_requests = True
    # AlterPartition's two model guards (members within the assignment, joiners caught up), standing in for the
    # leader's own checks while ISR changes are abstract; off with broker_isr (reference/broker_isr.py), where
    # the leaders make those checks themselves and the controller validates as Kafka's does
    alter_partition_model_guards = True

    # -- the controller's writes refresh its cache (zk_versions) -------------------------------
    def _dispatch(self, state: ClusterState, action: Any) -> Step:
        """With the brokers' requests (broker_replicas), their epochs are Kafka's for the length of the action."""
        if state.requests is None:
            return self._dispatch_cached(state, action)
        step = self._dispatch_cached(R.to_absolute(state), action)
        return Step(R.to_relative(step.state), step.response)

    def _dispatch_cached(self, state: ClusterState, action: Any) -> Step:
        """With the leadership cache: a leader's ISR change is its own ZooKeeper write (not a controller
        event); every other action's leader-and-ISR writes are the controller's, which puts what it
        wrote into its cache (putPartitionLeadershipInfo / updateLeaderAndIsrCache)."""
        zk = state.zk
        if zk is None or zk.leadership is None:
            return super()._dispatch(state, action)
        if isinstance(action, _LEADER_ISR_ACTIONS):
            return self._leader_isr_write(state, action)
        step = super()._dispatch(state, action)
        before = {(t, i): _leader_fields(p) for t, i, p in state.partitions()}
        written = [(t, i) for t, i, p in step.state.partitions() if before.get((t, i)) != _leader_fields(p)]
        return Step(C.refresh_cache(step.state, written), step.response) if written else step

    def _leader_isr_write(self, state: ClusterState, action: Any) -> Step:
        """Inter.broker.protocol.version < 2.7: the leader writes the ISR to ZooKeeper itself (no AlterPartition);
        the controller hears of it through the ISR change notification it processes later."""
        t, p, broker = action.topic, action.partition, action.broker
        part = get_partition(state, t, p)
        get_broker_id(state, broker)
        if part.leader == NO_LEADER or not state.is_active(part.leader):
            return Step(state, Ack(NOT_LEADER_OR_FOLLOWER, f"{t}-{p} has no leader"))
        if isinstance(action, A.LeaderExpandIsr):
            new_isr = part.isr if broker in part.isr else part.isr + (broker,)
            # the leader's replicas are those of the LeaderAndIsr it last got, the controller's assignment; with
            # zk_events it may write mid-run, after B2 dropped the removing replicas from that assignment
            known = part.replicas
            if state.zk is not None and state.zk.controller_id is not None:
                known = (C.memory_of(state.zk, t, p) or C.plain(part.replicas)).replicas
            if broker not in known or not state.is_active(broker) or not log_caught_up(part, broker):
                return Step(state, Ack(INVALID_REQUEST, f"replica {broker} cannot join the ISR of {t}-{p}"))
        else:
            new_isr = tuple(b for b in part.isr if b != broker)
            if broker == part.leader or not new_isr:
                return Step(state, Ack(INVALID_REQUEST, f"the leader {broker} cannot leave the ISR of {t}-{p}"))
        if new_isr == part.isr:
            return Step(state, Ack())
        return Step(C.leader_writes_isr(state, t, p, new_isr), Ack())

    # -- set-up ------------------------------------------------------------------------------
    def initial_state(self, cluster: ClusterState) -> ClusterState:
        """Start the first controller (epoch 1): memory = every partition's assignment; partitions already
        reassigning in ZooKeeper (hand-built clusters) are resumed as a controller start-up would."""
        if cluster.zk is not None:
            return cluster
        return C.controller_startup(cluster, 1)

    # -- planning ------------------------------------------------------------------------------
    def plan(self, current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
        """reassignTo(target) for a partition whose origin is `current` (Profile.plan carries no adding list;
        for an in-flight assignment use zk_controller.reassign_to(Plan(replicas, adding, removing), target))."""
        return C.reassign_to(C.plain(current), target)

    # -- admin API -----------------------------------------------------------------------------
    def alter_partition_reassignments(self, state: ClusterState, request: AlterPartitionReassignmentsRequest) -> Step:
        """processApiPartitionReassignment: validate each partition, rewrite /admin/reassign_partitions without
        the accepted ones, check the partition exists, then record and queue onPartitionReassignment (step U).

        The response is the one Kafka sends once every queued run has returned; a controller crash before
        that loses the request (the client would see a timeout), see docs/zk-profile.md.
        """
        zk = _zk(state)
        if not zk.active:
            return Step(state, AlterPartitionReassignmentsResponse(error_code=NOT_CONTROLLER, error_message=MSG_NOT_CONTROLLER))
        state = C.drain(state)
        zk = _zk(state)
        entries: dict[tuple[str, int], tuple[int, ...] | None] = {}
        for t in request.topics:
            for p in t.partitions:
                entries[(t.name, p.partition_index)] = None if p.replicas is None else tuple(p.replicas)
        live = _live_ids(state)
        results: dict[tuple[str, int], tuple[int, str | None]] = {}
        accepted: dict[tuple[str, int], tuple[int, ...]] = {}
        for (topic, index), replicas in entries.items():
            current = C.memory_of(zk, topic, index) or C.EMPTY
            if replicas is not None:
                error = validate_replicas(current, replicas, live)
                if error is not None:
                    results[(topic, index)] = error
                    continue
            # maybeBuildReassignment
            if C.is_reassigning(current):
                accepted[(topic, index)] = replicas if replicas is not None else C.origin_of(current)
            elif replicas is not None:
                accepted[(topic, index)] = replicas
            else:
                results[(topic, index)] = (NO_REASSIGNMENT_IN_PROGRESS, MSG_NO_REASSIGNMENT)
        # the latest reassignment wins: an API reassignment replaces the znode's entry for its partition
        zk = C.without_znode_entries(zk, lambda t, p, r: (t, p) not in accepted)
        for (topic, index), target in accepted.items():  # maybeTriggerPartitionReassignment
            current = C.memory_of(zk, topic, index) or C.EMPTY
            if not current.replicas:
                results[(topic, index)] = (UNKNOWN_TOPIC_OR_PARTITION, MSG_PARTITION_DOES_NOT_EXIST)
                continue
            results[(topic, index)] = (NONE, None)
            zk = C.schedule(zk, topic, index, target)
        by_topic: dict[str, list[ReassignablePartitionResponse]] = {}
        for (topic, index) in entries:
            code, message = results[(topic, index)]
            by_topic.setdefault(topic, []).append(ReassignablePartitionResponse(index, code, message))
        response = AlterPartitionReassignmentsResponse(
            responses=tuple(ReassignableTopicResponse(t, tuple(ps)) for t, ps in by_topic.items())
        )
        return Step(replace(state, zk=zk), response)

    def list_partition_reassignments(
        self, state: ClusterState, request: ListPartitionReassignmentsRequest = ListPartitionReassignmentsRequest()  # noqa: B008
    ) -> ListPartitionReassignmentsResponse:
        """processListPartitionReassignments: the requested partitions (or partitionsBeingReassigned) whose
        memory assignment is reassigning, with memory's replicas, adding and removing. Read-only."""
        zk = _zk(state)
        if not zk.active:
            return ListPartitionReassignmentsResponse(error_code=NOT_CONTROLLER, error_message=MSG_NOT_CONTROLLER)
        if request.topics is None:
            wanted = [(t, p) for t, p, _ in zk.being_reassigned]
        else:
            wanted = [(t.name, i) for t in request.topics for i in t.partition_indexes]
        found: dict[str, dict[int, OngoingPartitionReassignment]] = {}
        for topic, index in wanted:
            mem = C.memory_of(zk, topic, index)
            if mem is not None and C.is_reassigning(mem):
                found.setdefault(topic, {})[index] = OngoingPartitionReassignment(
                    index, mem.replicas, mem.adding, mem.removing
                )
        return ListPartitionReassignmentsResponse(
            topics=tuple(
                OngoingTopicReassignment(t, tuple(found[t][i] for i in sorted(found[t]))) for t in sorted(found)
            )
        )

    def znode_reassign(self, state: ClusterState, topic: str, partition: int, replicas: tuple[int, ...]) -> Step:
        """A tool writes one partition into /admin/reassign_partitions (see znode_reassign_all)."""
        return self.znode_reassign_all(state, ((topic, partition, tuple(replicas)),))

    def znode_reassign_all(self, state: ClusterState, entries: Iterable[tuple[str, int, tuple[int, ...]]]) -> Step:
        """A tool (kafka-reassign-partitions --zookeeper) writes /admin/reassign_partitions.

        The tool refuses a malformed list (empty, duplicates, negative ids) and refuses to write while the
        znode is non-empty ("Once the znode is non-empty, further writes to it will be ignored", KIP-455);
        otherwise the znode holds the entries and the controller's watch runs
        processZkPartitionReassignment: no validation of live brokers on this route; each entry's
        onPartitionReassignment is queued (step U first).
        """
        entries = tuple((t, p, tuple(r)) for t, p, r in entries)
        for t, p, replicas in entries:
            get_partition(state, t, p)
            error = structural_error(replicas)
            if error is not None:
                return Step(state, Ack(*error))
        if _zk(state).admin_znode:  # the tool looks at the znode as it is now
            return Step(state, Ack(REASSIGNMENT_IN_PROGRESS, MSG_ZNODE_BUSY))
        if _zk(state).active:
            state = C.drain(state)
        zk = _zk(state)
        rows: dict[tuple[str, int], tuple[int, ...]] = {}
        for t, p, replicas in entries:
            rows[(t, p)] = replicas
        zk = replace(zk, admin_znode=tuple(sorted((t, p, r) for (t, p), r in rows.items())))
        if zk.active:
            missing = {(t, p) for t, p, _ in zk.admin_znode if not (C.memory_of(zk, t, p) or C.EMPTY).replicas}
            zk = C.without_znode_entries(zk, lambda t, p, r: (t, p) not in missing)
            for t, p, target in zk.admin_znode:
                zk = C.schedule(zk, t, p, target)
        return Step(replace(state, zk=zk), Ack())

    # -- the controller's multi-step work ------------------------------------------------------
    def controller_step(self, state: ClusterState, topic: str, partition: int) -> Step:
        """Run the next pending step (U, A1, A2, B1 … B7) of onPartitionReassignment for one partition."""
        get_partition(state, topic, partition)
        zk = _zk(state)
        step = C.next_step(zk, topic, partition)
        if not zk.active or step is None:
            return Step(state, Ack(NONE, f"no pending controller work for {topic}-{partition}"))
        return Step(C.STEPS[step](state, topic, partition), Ack())

    def controller_failover(self, state: ClusterState) -> Step:
        """The controller crashes and a new one is elected at once (epoch + 1), rebuilding from ZooKeeper."""
        _zk(state)
        return Step(C.controller_failover(state), Ack())

    # -- ISR changes (AlterPartition, Kafka >= 2.7) -----------------------------------------------
    def alter_partition(self, state: ClusterState, action: A.AlterPartition) -> Step:
        """The leader's AlterPartition, checked in the order of KafkaController.tryProcessAlterPartition.

        1. no active controller → 41; 2. leader or partition epoch ahead of the controller's → 41
        NOT_CONTROLLER; 3. stale leader epoch → 74 FENCED_LEADER_EPOCH; 4. not from the current leader →
        6 NOT_LEADER_OR_FOLLOWER (model guard); 5. the ISR already as requested → success without a write;
        6. stale partition epoch → 95 INVALID_UPDATE_VERSION; 7. malformed ISR (empty, duplicates, without
        the leader, outside the assignment, a follower not caught up) → 42 INVALID_REQUEST (model guard);
        8. a member not live → 107 INELIGIBLE_REPLICA (version > 1) or 55 OPERATION_NOT_ATTEMPTED.
        A write keeps leader and leader epoch and bumps the zkVersion (partition_epoch). Every success is
        followed by the reassignment-completion check.
        """
        t, p = action.topic, action.partition
        get_partition(state, t, p)
        zk = _zk(state)
        if not zk.active:
            return Step(state, Ack(NOT_CONTROLLER, MSG_NOT_CONTROLLER))
        state = C.drain(state)
        zk = _zk(state)
        part = get_partition(state, t, p)
        new_isr = tuple(action.new_isr)
        # validated against the controller's cache (partitionLeadershipInfo), written to ZooKeeper
        # conditionally on the request's partition epoch; the cached leader epoch is ZooKeeper's
        leader, isr, version = C.cached_leadership(zk, t, p, part)
        if action.leader_epoch > part.leader_epoch or action.partition_epoch > version:
            return Step(state, Ack(NOT_CONTROLLER, MSG_NOT_CONTROLLER))
        if action.leader_epoch < part.leader_epoch:
            return Step(state, Ack(FENCED_LEADER_EPOCH, MSG_FENCED_LEADER_EPOCH))
        if action.leader != leader or leader == NO_LEADER:
            return Step(state, Ack(NOT_LEADER_OR_FOLLOWER, f"broker {action.leader} does not lead {t}-{p}"))
        if set(new_isr) == set(isr) and len(new_isr) == len(isr):
            return Step(C.maybe_complete_reassignment(state, t, p), Ack())
        if action.partition_epoch < version:
            return Step(state, Ack(INVALID_UPDATE_VERSION, MSG_INVALID_UPDATE_VERSION))
        mem = C.memory_of(zk, t, p) or C.EMPTY
        problem = None
        if not new_isr or len(set(new_isr)) != len(new_isr):
            problem = f"malformed ISR {list(new_isr)}"
        elif part.leader not in new_isr:
            problem = f"the new ISR {list(new_isr)} does not hold the leader {part.leader}"
        elif not self.alter_partition_model_guards:
            pass  # Kafka 3.9.2's tryProcessAlterPartition checks neither (bounds broker_isr: the leaders decide)
        elif not set(new_isr) <= set(mem.replicas):
            problem = f"the new ISR {list(new_isr)} is not within the replicas {list(mem.replicas)}"
        else:
            lagging = [b for b in new_isr if b not in isr and not log_caught_up(part, b)]
            if lagging:
                problem = f"replicas {lagging} have not caught up with the leader"
        if problem is not None:
            return Step(state, Ack(INVALID_REQUEST, problem))
        if any(not state.is_active(b) for b in new_isr):
            if action.version > 1:
                return Step(state, Ack(INELIGIBLE_REPLICA, MSG_INELIGIBLE_REPLICA))
            return Step(state, Ack(OPERATION_NOT_ATTEMPTED, None))
        written = C.conditional_update(part, action.partition_epoch, part.leader, new_isr, new_leader_epoch=False)
        if written is None:  # BADVERSION: ZooKeeper moved on behind the cache; Kafka answers, no retry
            return Step(state, Ack(INVALID_UPDATE_VERSION, MSG_INVALID_UPDATE_VERSION))
        state = state.with_partition(t, p, written)
        return Step(C.maybe_complete_reassignment(state, t, p), Ack())

    def _isr_change(self, state: ClusterState, topic: str, partition: int, broker: int, expand: bool) -> Step:
        part = get_partition(state, topic, partition)
        get_broker_id(state, broker)
        zk = _zk(state)
        if not zk.active:
            return Step(state, Ack(NOT_CONTROLLER, MSG_NOT_CONTROLLER))
        state = C.drain(state)
        part = get_partition(state, topic, partition)
        if part.leader == NO_LEADER:
            return Step(state, Ack(NOT_LEADER_OR_FOLLOWER, f"{topic}-{partition} has no leader"))
        if expand:
            new_isr = part.isr if broker in part.isr else part.isr + (broker,)
        else:
            new_isr = tuple(b for b in part.isr if b != broker)
        return self.alter_partition(
            state, A.AlterPartition(topic, partition, part.leader, new_isr, part.leader_epoch, part.partition_epoch)
        )

    def leader_expand_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        """The leader adds a caught-up, live replica to the ISR (AlterPartition with its current epochs)."""
        return self._isr_change(state, topic, partition, broker, expand=True)

    def leader_shrink_isr(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        """The leader drops a follower from the ISR (AlterPartition with its current epochs)."""
        return self._isr_change(state, topic, partition, broker, expand=False)

    # -- brokers and elections ---------------------------------------------------------------------
    def broker_fail(self, state: ClusterState, broker: int) -> Step:
        """onBrokerFailure (a live broker's session expires); an already dead broker changes nothing."""
        get_broker_id(state, broker)
        if _zk(state).active:
            state = C.drain(state)
        if not state.is_active(broker):
            return Step(state, Ack())
        return Step(C.broker_failure(state, broker), Ack())

    def broker_recover(self, state: ClusterState, broker: int) -> Step:
        """onBrokerStartup (a dead broker registers again); a live broker changes nothing."""
        get_broker_id(state, broker)
        if _zk(state).active:
            state = C.drain(state)
        if state.is_active(broker):
            return Step(state, Ack())
        return Step(C.broker_startup(state, broker), Ack())

    def elect_leaders(self, state: ClusterState, topic: str, partition: int, election: str) -> Step:
        """ElectLeaders (processReplicaLeaderElection, admin-triggered).

        PREFERRED: needed iff the leader is not the first assigned replica; elects it if it is live and in
        the ISR, else 80. UNCLEAN: needed iff there is no live leader; offline election with unclean allowed,
        else 83. Not needed → 84. The assignment is the controller's (memory) full replica list.
        """
        part = get_partition(state, topic, partition)
        if election not in (A.PREFERRED, A.UNCLEAN):
            raise InvalidAction(f"unknown election type {election!r} (ElectLeaders takes PREFERRED or UNCLEAN)")
        zk = _zk(state)
        if not zk.active:
            return Step(state, Ack(NOT_CONTROLLER, None))
        state = C.drain(state)
        zk = _zk(state)
        part = get_partition(state, topic, partition)
        assignment = (C.memory_of(zk, topic, partition) or C.EMPTY).replicas
        if not assignment:
            return Step(state, Ack(UNKNOWN_TOPIC_OR_PARTITION, MSG_PARTITION_DOES_NOT_EXIST))
        if election == A.PREFERRED:
            needed = part.leader != assignment[0]
        else:
            needed = not C.has_live_leader(state, part)
        if not needed:
            return Step(state, Ack(ELECTION_NOT_NEEDED, MSG_ELECTION_NOT_NEEDED))
        if election == A.PREFERRED:
            result = preferred_election(state, assignment, part)
            strategy, error = "PreferredReplicaPartitionLeaderElectionStrategy", PREFERRED_LEADER_NOT_AVAILABLE
        else:
            result = offline_election(state, assignment, part, True)
            strategy, error = "OfflinePartitionLeaderElectionStrategy(true)", ELIGIBLE_LEADERS_NOT_AVAILABLE
        if result is None:
            return Step(state, Ack(error, f"Failed to elect leader for partition {topic}-{partition} under strategy {strategy}"))
        state = state.with_partition(topic, partition, write_leader_and_isr(part, *result))
        return Step(R.send_leader_and_isr(state, topic, partition, assignment), Ack())  # to the live replicas

    # -- data plane ----------------------------------------------------------------------------------
    def produce(self, state: ClusterState, topic: str, partition: int) -> Step:
        return replication.produce(state, topic, partition)

    def follower_fetch(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        get_broker_id(state, broker)
        return replication.follower_fetch(state, topic, partition, broker)

    # -- dispatch and enumeration ------------------------------------------------------------------
    def enabled_actions(self, state: ClusterState, space: ActionSpace) -> list[Any]:
        """enabled_actions.default_enabled_actions plus ControllerStep for each partition with pending work (queue order).

        While steps are pending, only the steps, the failover and the data plane are enabled (the
        controller handles one event at a time); ZnodeReassign only while the znode is empty.
        """
        zk = _zk(state)
        steps = []
        if zk.active:
            seen: set[tuple[str, int]] = set()
            for t, p, _ in zk.pending:
                if (t, p) not in seen:
                    seen.add((t, p))
                    steps.append(A.ControllerStep(t, p))
        actions = default_enabled_actions(state, space, extra=steps)
        if zk.active and zk.pending:
            # a leader's own ISR write may wait beside unread notifications, not inside onPartitionReassignment
            # (the run is one controller event; its steps are split only for the crashes between them)
            notices_only = zk.leadership is not None and all(s == C.NOTIFICATION for _, _, s in zk.pending)
            # with the controller's event queue (zk_events, reference/zk_events.py) a leader's ISR write never
            # waits for the controller: the leader is another process, its notification queues behind the run
            notices_only = notices_only or (zk.leadership is not None and zk.controller_id is not None)
            busy = _WHILE_BUSY_DIRECT_ISR if notices_only else _WHILE_BUSY
            actions = [a for a in actions if isinstance(a, busy)]
        if zk.admin_znode:
            actions = [a for a in actions if not isinstance(a, A.ZnodeReassign)]
        return actions
