"""The `kraft` and `kraft-3.7` profiles: Kafka's KRaft controller (ReplicationControlManager).

Planning (PartitionReassignmentReplicas), AlterPartitionReassignments with Kafka's check
order, errors and messages, cancellation (PartitionReassignmentRevert), ListPartition-
Reassignments, AlterPartition from the leader, broker fence/unfence, elections — every
partition change through `kraft_change.build_change`. The state lives in the metadata
log, so a controller failover changes nothing (KAFKA-SEMANTICS.md, kraft, "Failover").

`kraft-3.7` differs only in the completion rule (before KAFKA-15665).
"""

from __future__ import annotations

from kreassign.spec import actions as A
from kreassign.spec import kafka_releases
from kreassign.spec import messages as M
from kreassign.spec.state import NO_LEADER, ClusterState, Partition, ordered_minus, replace

from . import replication
from .enabled_actions import default_enabled_actions, get_broker_id, get_partition, list_reassigning
from .kraft_change import (
    CompletionRule,
    ElrRules,
    Record,
    adding_in_isr_all_targets_if_shrinking,
    adding_replicas_in_isr,
    all_target_replicas_in_isr,
    apply_record,
    build_change,
)
from .profile_base import Profile
from .steps import ActionSpace, InvalidAction, Plan, Step


class ReassignmentError(Exception):
    """A per-partition failure of AlterPartitionReassignments (ApiError: code + message)."""

    def __init__(self, code: int, message: str | None):
        super().__init__(message)
        self.code = code
        self.message = message


#: org.apache.kafka.common.protocol.Errors: STALE_BROKER_EPOCH (ClusterControlManager.checkBrokerEpoch)
STALE_BROKER_EPOCH = 77
UNKNOWN_TOPIC_ID = 100
#: AlterPartition's response has no message field: kreassign's Ack carries the error's name
ERROR_NAMES = {**M.ERROR_NAMES, STALE_BROKER_EPOCH: "STALE_BROKER_EPOCH", UNKNOWN_TOPIC_ID: "UNKNOWN_TOPIC_ID"}

#: the default messages of Errors, which ElectLeaders answers (new ApiError(Errors.X))
ELECTION_MESSAGES = {
    M.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    M.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    M.ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
}

#: the release the kraft profile follows by default, and its default metadata.version (LATEST_PRODUCTION)
DEFAULT_KAFKA_VERSION = kafka_releases.NEWEST
DEFAULT_METADATA_VERSION = kafka_releases.release(DEFAULT_KAFKA_VERSION).latest_production

#: what Kafka's client answers for AllowReplicationFactorChange=false against a release before 4.1
NO_ALLOW_RF_CHANGE_OPTION = ("The broker does not support the AllowReplicationFactorChange option for the "
                             "AlterPartitionReassignments API. Consider re-sending the request without the option "
                             "or updating the server version")

#: the controller's own actions a kraft model may switch on (`--kraft-actions`), by flag name
CONTROLLER_ACTIONS = ("controlled-shutdown", "restart", "balance-leaders", "elect-unclean")


def metadata_version_before(version: str, other: str) -> bool:
    """Compare two metadata.versions like "3.5-IV2" (MetadataVersion's order: release, then IV number)."""

    def key(v: str) -> tuple[int, int, int]:
        release, _, iv = v.partition("-IV")
        major, minor = release.split(".")
        return int(major), int(minor), int(iv or 0)

    try:
        return key(version) < key(other)
    except ValueError:
        raise ValueError(f"metadata.version: expected a version like 3.9-IV0, got {version!r}") from None


def kraft_plan(current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
    """PartitionReassignmentReplicas: removing and adding sorted by id, replicas = target ++ removing."""
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    return Plan(replicas=tuple(target) + removing, adding=adding, removing=removing)


class KraftProfile(Profile):
    name = "kraft"
    description = "KRaft controller of a Kafka release, 3.9 .. 4.4 (--kafka-version; default the newest)"
    #: when a reassignment completes (the strategy kraft-3.7 replaces; 4.3 changed it: KAFKA-19975)
    completion_rule: CompletionRule = staticmethod(all_target_replicas_in_isr)

    def __init__(self, metadata_version: str | None = None, controller_actions: tuple[str, ...] = (),
                 zk_migration: bool = False, kafka_version: str = DEFAULT_KAFKA_VERSION, elr: bool | None = None):
        #: the Kafka release whose controller this profile follows (spec/kafka_releases.py); the rules
        #: that differ between releases are checked in lockstep against each release (docs/kafka.md)
        self.release = kafka_releases.release(kafka_version)  # ValueError: not a supported release
        self.kafka_version = kafka_version
        #: the cluster's metadata.version (Kafka's MetadataVersion), by default the release's latest production
        #: level: the rules that depend on it are checked in lockstep against Kafka at each version
        metadata_version = metadata_version or self.release.latest_production
        if metadata_version not in self.release.metadata_versions:
            raise ValueError(f"metadata.version {metadata_version} is not accepted by Kafka {kafka_version} "
                             f"({self.release.metadata_versions[0]} .. {self.release.metadata_versions[-1]})")
        if zk_migration and not kafka_releases.before(self.release.latest_production, "4.0-IV0"):
            # 4.0 removed ZooKeeper, and with it the migration mode (KAFKA-17613)
            raise ValueError(f"ZooKeeper-migration mode: Kafka {kafka_version} has no ZooKeeper migration (removed in 4.0)")
        self.metadata_version = metadata_version
        since = self.release.since
        if since("4.3") and type(self).completion_rule is all_target_replicas_in_isr:  # (kraft-3.7 keeps its own)
            # KAFKA-19975 (4.3.0): adding replicas in the ISR; all targets only when the RF shrinks
            self.completion_rule = adding_in_isr_all_targets_if_shrinking
        #: a re-registration (restart) is handled as a fencing of the broker (4.0.0, KAFKA-18106:
        #: ReplicationControlManager.handleBrokerShutdown with ELR off); before, nothing changed (3.9)
        self.restart_fences_replicas = since("4.0")
        #: StripedReplicaPlacer's messages name cordoned log directories (4.3.0, KIP-1066 / KAFKA-19774)
        self.placer_names_cordoned_dirs = since("4.3")
        #: AlterPartition's request versions (4.0 removed v0 and v1, KAFKA-18601 / apache/kafka#18845)
        self.alter_partition_versions = (2, 3) if since("4.0") else (0, 3)
        #: AlterPartitionReassignments v1's AllowReplicationFactorChange (4.1.0, KIP-860 / KAFKA-14121)
        self.reassign_can_keep_replication_factor = since("4.1")
        #: eligible leader replicas (KIP-966): the feature eligible.leader.replicas.version, by default what the
        #: release formats a new cluster with at this metadata.version (level 1 from 4.1-IV0 on); level 1 needs
        #: 4.0-IV1, which 3.9 ships as an unstable level only (spec/kafka_releases.py)
        if elr is None:
            elr = kafka_releases.elr_default(kafka_version, metadata_version)
        if elr and not kafka_releases.elr_possible(kafka_version, metadata_version):
            raise ValueError(f"ELR: eligible.leader.replicas.version 1 needs Kafka 4.0 or newer at metadata.version "
                             f"4.0-IV1 or newer (here Kafka {kafka_version} at {metadata_version})")
        self.elr = elr
        #: the ELR rules of this release's PartitionChangeBuilder (kraft_change.ElrRules, without the min ISR)
        self.elr_last_known_leader_rule = "4.1.1" if since("4.1") else "4.0"  # MINOR apache/kafka#20629
        self.elr_last_known_leader_must_be_acceptable = since("4.1")  # KAFKA-19522
        #: ZooKeeper-migration mode (zookeeper.metadata.migration.enable; from 3.4-IV0 on)
        self.zk_migration = zk_migration and not metadata_version_before(metadata_version, "3.4-IV0")
        # PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded: before 3.6-IV0 (KAFKA-15021),
        # or during a ZooKeeper migration (for the brokers still in ZooKeeper mode)
        self.bump_leader_epoch_on_isr_shrink = metadata_version_before(metadata_version, "3.6-IV0") or self.zk_migration
        unknown = set(controller_actions) - set(CONTROLLER_ACTIONS)
        if unknown:
            raise ValueError(f"--kraft-actions: unknown action(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(CONTROLLER_ACTIONS)})")
        #: the opt-in controller actions the explorer enumerates (all of them are always applicable)
        self.controller_actions = tuple(a for a in CONTROLLER_ACTIONS if a in controller_actions)

    # -- helpers ---------------------------------------------------------------------------
    def partition_change(self, state: ClusterState, part: Partition, topic: str | None = None,
                         **targets) -> Record | None:
        """PartitionChangeBuilder for `part` of `topic` (the topic is needed with ELR on: its min ISR): the
        PartitionChangeRecord for the given targets, or None. The kraft kernel asks it
        (checker/packed/kraft_kernel.py)."""
        return build_change(state, part, self.completion_rule,
                            bump_leader_epoch_on_isr_shrink=self.bump_leader_epoch_on_isr_shrink,
                            elr=self.elr_rules(state, topic) if self.elr else None, **targets)

    # what this profile's steps call: the same builder, a hook a variant may override (test_fairness.py)
    _build = partition_change

    def elr_rules(self, state: ClusterState, topic: str | None) -> ElrRules:
        """getTopicEffectiveMinIsr: min(the topic's min.insync.replicas, partition 0's full replica count)."""
        t = state.topic(topic) if topic is not None else None
        if t is None:
            raise ValueError("ELR: a partition change needs its topic (the min ISR is the topic's)")
        min_isr = min(t.min_insync_replicas, len(t.partitions[0].replicas)) if t.partitions else t.min_insync_replicas
        return ElrRules(min_isr, self.elr_last_known_leader_rule, self.elr_last_known_leader_must_be_acceptable)

    def topic_election(self, state: ClusterState, topic: str) -> str:
        """The election a partition change of `topic` runs: UNCLEAN if the topic allows it, else ONLINE."""
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

    def change_reassignment(self, state: ClusterState, part: Partition, target: tuple[int, ...],
                            topic: str | None = None, allow_rf_change: bool = True) -> Record | None:
        """changePartitionReassignment: override only the non-empty plan lists, then build."""
        # twin: checker/packed/kraft_vector.py VectorKernel._tabulate_reassign
        self.validate_target(state, target)
        if not allow_rf_change:  # validatePartitionReplicationFactorUnchanged (4.1, KIP-860)
            current = len((set(part.replicas) | set(part.adding)) - set(part.removing)) if part.reassigning \
                else len(part.replicas)
            if current != len(target):
                raise ReassignmentError(M.INVALID_REPLICATION_FACTOR,
                                        f"The replication factor is changed from {current} to {len(target)}")
        plan = self.plan(part.replicas, target)
        targets: dict = {}
        if plan.replicas != part.replicas:
            targets["replicas"] = plan.replicas
        if plan.removing:
            targets["removing"] = plan.removing
        if plan.adding:
            targets["adding"] = plan.adding
        return self._build(state, part, topic, **targets)

    def revert(self, part: Partition) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
        """PartitionReassignmentRevert: (replicas − adding, isr − adding, unclean?)."""
        replicas = ordered_minus(part.replicas, part.adding)
        isr = ordered_minus(part.isr, part.adding)
        if not isr:
            return replicas, (replicas[0],), True
        return replicas, isr, False

    def cancel_reassignment(self, state: ClusterState, topic: str, index: int, part: Partition) -> Record | None:
        """cancelPartitionReassignment: 85 if idle; refuse an unclean revert unless the topic allows it."""
        # twin: checker/packed/kraft_vector.py VectorKernel._tabulate_cancel
        if not part.reassigning:
            raise ReassignmentError(M.NO_REASSIGNMENT_IN_PROGRESS, None)
        replicas, isr, unclean = self.revert(part)
        if unclean and self.topic_election(state, topic) != A.UNCLEAN:
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
            topic,
            replicas=replicas,
            isr=isr,
            adding=(),
            removing=(),
            election=self.topic_election(state, topic),
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
        allow = request.allow_replication_factor_change
        if not allow and not self.reassign_can_keep_replication_factor:
            # before 4.1 the request has no such field: Kafka's client refuses to build it
            # (AlterPartitionReassignmentsRequest.Builder.build, version 0)
            return Step(state, M.AlterPartitionReassignmentsResponse(
                error_code=M.UNSUPPORTED_VERSION, error_message=NO_ALLOW_RF_CHANGE_OPTION))
        records: list[tuple[str, int, Record]] = []
        topic_responses = []
        for topic in request.topics:
            responses = []
            for rp in topic.partitions:
                code, message = M.NONE, None
                try:
                    record = self._alter_one(state, topic.name, rp, allow)
                    if record:
                        records.append((topic.name, rp.partition_index, record))
                except ReassignmentError as e:
                    code, message = e.code, e.message
                responses.append(M.ReassignablePartitionResponse(rp.partition_index, code, message))
            topic_responses.append(M.ReassignableTopicResponse(topic.name, tuple(responses)))
        new_state = state
        for name, index, record in records:
            new_state = new_state.with_partition(name, index, apply_record(new_state.partition(name, index), record))
        return Step(new_state, M.AlterPartitionReassignmentsResponse(responses=tuple(topic_responses),
                                                                     allow_replication_factor_change=allow))

    def _alter_one(self, state: ClusterState, topic: str, rp: M.ReassignablePartition,
                   allow_rf_change: bool = True) -> Record | None:
        if state.topic(topic) is None:
            raise ReassignmentError(M.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}.")
        part = state.partition(topic, rp.partition_index)
        if part is None:
            raise ReassignmentError(
                M.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic}:{rp.partition_index}."
            )
        if rp.replicas is None:
            return self.cancel_reassignment(state, topic, rp.partition_index, part)
        return self.change_reassignment(state, part, tuple(rp.replicas), topic, allow_rf_change)

    def list_partition_reassignments(
        self, state: ClusterState, request: M.ListPartitionReassignmentsRequest = M.ListPartitionReassignmentsRequest()
    ) -> M.ListPartitionReassignmentsResponse:
        """Only reassigning partitions; unknown topics or partitions are skipped silently."""
        return list_reassigning(state, request)

    # -- AlterPartition (ISR changes from the leader) -----------------------------------------
    def alter_partition(self, state: ClusterState, action: A.AlterPartition) -> Step:
        """ReplicationControlManager.alterPartition + validateAlterPartitionData, in Kafka's order.

        AlterPartition's response has no message field: an error's message is its name.
        The requester's broker epoch is its current registration's (the model's brokers
        have one epoch), so STALE_BROKER_EPOCH means the requester is not registered.
        """
        # twin: checker/packed/kraft_kernel.py KraftKernel._isr_change
        # twin: checker/packed/kraft_vector.py VectorKernel.tabulate
        def error(code: int) -> Step:
            return Step(state, M.Ack(code, ERROR_NAMES[code]))

        if action.version < self.alter_partition_versions[0] or action.version > self.alter_partition_versions[1]:
            # a broker never sends a version its controller does not support (4.0 removed v0 and v1: KAFKA-18601)
            raise InvalidAction(f"Kafka {self.kafka_version}'s controller has no AlterPartition v{action.version} "
                                f"(versions {self.alter_partition_versions[0]} to {self.alter_partition_versions[1]})")
        if not state.is_registered(action.leader):  # ClusterControlManager.checkBrokerEpoch
            return error(STALE_BROKER_EPOCH)
        if state.topic(action.topic) is None:
            return error(UNKNOWN_TOPIC_ID if action.version > 1 else M.UNKNOWN_TOPIC_OR_PARTITION)
        part = state.partition(action.topic, action.partition)
        if part is None:
            return error(M.UNKNOWN_TOPIC_OR_PARTITION)
        # a requester ahead of this controller: probably a newer controller exists
        if action.leader_epoch > part.leader_epoch or action.partition_epoch > part.partition_epoch:
            return error(M.NOT_CONTROLLER)
        if action.leader_epoch < part.leader_epoch:
            return error(M.FENCED_LEADER_EPOCH)
        if action.leader != part.leader:
            return error(M.INVALID_REQUEST)
        if action.partition_epoch < part.partition_epoch:
            return error(M.INVALID_UPDATE_VERSION)
        new_isr = tuple(action.new_isr)
        # Replicas.validateIsr: no duplicates, no negative ids, every member a replica; then the leader is in it
        if len(set(new_isr)) != len(new_isr) or any(b < 0 or b not in part.replicas for b in new_isr):
            return error(M.INVALID_REQUEST)
        if action.leader not in new_isr:
            return error(M.INVALID_REQUEST)
        if any(not state.is_active(b) for b in new_isr):  # not registered, fenced or shutting down
            return error(M.INELIGIBLE_REPLICA if action.version > 1 else M.OPERATION_NOT_ATTEMPTED)
        record = self._build(state, part, action.topic, isr=new_isr, election=self.topic_election(state, action.topic))
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
        # twin: checker/packed/kraft_kernel.py KraftKernel._fail
        # twin: checker/packed/kraft_vector.py VectorKernel.tabulate
        b = state.broker(get_broker_id(state, broker))
        if not b.active:
            return Step(state, M.Ack())
        state = state.with_broker(replace(b, active=False))
        for name, i, part in list(state.partitions()):
            if broker in part.isr:
                record = self._build(
                    state,
                    part,
                    name,
                    isr=tuple(r for r in part.isr if r != broker),
                    election=self.topic_election(state, name),
                )
                state = state.with_partition(name, i, apply_record(part, record))
        return Step(state, M.Ack())

    def broker_recover(self, state: ClusterState, broker: int) -> Step:
        """handleBrokerUnfenced: unfence, then elect leaders for every leaderless partition."""
        # twin: checker/packed/kraft_kernel.py KraftKernel._recover
        # twin: checker/packed/kraft_vector.py VectorKernel.tabulate
        b = state.broker(get_broker_id(state, broker))
        if b.active or not b.registered:
            return Step(state, M.Ack())
        state = state.with_broker(replace(b, active=True))
        for name, i, part in list(state.partitions()):
            if part.leader == NO_LEADER:
                record = self._build(state, part, name, election=self.topic_election(state, name))
                state = state.with_partition(name, i, apply_record(part, record))
        return Step(state, M.Ack())

    # -- elections ------------------------------------------------------------------------------
    def elect_leaders(self, state: ClusterState, topic: str, partition: int, election: str) -> Step:
        """ReplicationControlManager.electLeader: 84 if not needed; build; no record -> 80 / 83.

        As Kafka: a PREFERRED election that writes a record succeeds even when the new leader
        is not the preferred replica, and a failed one changes nothing. The messages are the
        errors' default messages (ApiError(Errors)).
        """
        if election not in (A.PREFERRED, A.UNCLEAN):
            raise ValueError(f"unknown election type {election!r} (PREFERRED or UNCLEAN)")
        if state.topic(topic) is None:
            return Step(state, M.Ack(M.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"))
        part = state.partition(topic, partition)
        if part is None:
            return Step(state, M.Ack(M.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"))
        preferred = part.replicas[0] if part.replicas else NO_LEADER
        if (election == A.PREFERRED and part.leader == preferred) or (election == A.UNCLEAN and part.leader != NO_LEADER):
            return Step(state, M.Ack(M.ELECTION_NOT_NEEDED, ELECTION_MESSAGES[M.ELECTION_NOT_NEEDED]))
        record = self._build(state, part, topic, election=election)
        if not record:
            code = M.PREFERRED_LEADER_NOT_AVAILABLE if election == A.PREFERRED else M.ELIGIBLE_LEADERS_NOT_AVAILABLE
            return Step(state, M.Ack(code, ELECTION_MESSAGES[code]))
        return Step(state.with_partition(topic, partition, apply_record(part, record)), M.Ack())

    def controller_failover(self, state: ClusterState) -> Step:
        """The metadata log holds the whole state: a new controller replays it; nothing changes."""
        return Step(state, M.Ack())

    # -- replication layer ------------------------------------------------------------------------
    def produce(self, state: ClusterState, topic: str, partition: int) -> Step:
        return replication.produce(state, topic, partition)

    def follower_fetch(self, state: ClusterState, topic: str, partition: int, broker: int) -> Step:
        return replication.follower_fetch(state, topic, partition, broker)

    # -- the controller's own actions (opt-in: `--kraft-actions`; docs/kafka.md) ------------------------
    def _dispatch(self, state: ClusterState, action):
        if isinstance(action, A.BrokerControlledShutdown):
            return self.broker_controlled_shutdown(state, action.broker)
        if isinstance(action, A.BrokerRestart):
            return self.broker_restart(state, action.broker)
        if isinstance(action, A.BalanceLeaders):
            return self.balance_leaders(state)
        if isinstance(action, A.ElectUncleanLeaders):
            return self.elect_unclean_leaders(state)
        return super()._dispatch(state, action)

    def broker_controlled_shutdown(self, state: ClusterState, broker: int) -> Step:
        """processBrokerHeartbeat(wantShutDown): CONTROLLED_SHUTDOWN if the broker leads a partition,
        else SHUTDOWN_NOW (fenced). Either way it leaves every ISR with the same elections as a fence
        (generateLeaderAndIsrUpdates with brokerToRemove) and is no longer active."""
        return self.broker_fail(state, broker)

    def broker_restart(self, state: ClusterState, broker: int) -> Step:
        """ClusterControlManager.registerBroker with a new incarnation, after the broker's session
        expired but before the controller fenced it: the new registration is fenced. From 4.0 on
        (KAFKA-18106) the shutdown handler first removes the broker from every ISR and moves its
        leaderships, exactly as a fencing does (handleBrokerShutdown, ELR off). In 3.9, with ELR off the
        unclean-shutdown handler writes nothing, so no ISR or leader changes: the broker stays in
        its ISRs and keeps leading while fenced, until it heartbeats."""
        b = state.broker(get_broker_id(state, broker))
        if not b.registered:
            return Step(state, M.Ack())
        if self.elr and self.restart_fences_replicas:
            # ELR on and an unclean shutdown (no previous broker epoch): the broker leaves the ISR and the
            # ELR of every partition it is in, never an acceptable leader (brokerWithUncleanShutdown)
            state = state.with_broker(replace(b, active=False))
            for name, i, part in list(state.partitions()):
                if broker in part.isr or broker in part.elr:
                    record = build_change(state, part, self.completion_rule, isr=ordered_minus(part.isr, (broker,)),
                                          election=self.topic_election(state, name),
                                          elr=self.elr_rules(state, name), unclean_shutdown=(broker,))
                    state = state.with_partition(name, i, apply_record(part, record))
            return Step(state, M.Ack())
        if self.restart_fences_replicas:
            return self.broker_fail(state, broker)
        return Step(state.with_broker(replace(b, active=False)), M.Ack())

    def balance_leaders(self, state: ClusterState) -> Step:
        """maybeBalancePartitionLeaders: a PREFERRED election of every partition not led by its first replica."""
        for name, i, part in list(state.partitions()):
            if part.replicas and part.leader != part.replicas[0]:
                record = self._build(state, part, name, election=A.PREFERRED)
                state = state.with_partition(name, i, apply_record(part, record))
        return Step(state, M.Ack())

    def elect_unclean_leaders(self, state: ClusterState) -> Step:
        """maybeElectUncleanLeaders: an UNCLEAN election of every leaderless partition whose topic allows it."""
        for name, i, part in list(state.partitions()):
            if part.leader == NO_LEADER and self.topic_election(state, name) == A.UNCLEAN:
                record = self._build(state, part, name, election=A.UNCLEAN)
                state = state.with_partition(name, i, apply_record(part, record))
        return Step(state, M.Ack())

    def enabled_actions(self, state: ClusterState, space: ActionSpace) -> list:
        out = default_enabled_actions(state, space)
        if not self.controller_actions:
            return out
        extra: list = []
        active = [b.id for b in state.brokers if b.registered and b.active]
        if "controlled-shutdown" in self.controller_actions:
            extra += [A.BrokerControlledShutdown(b) for b in active]
        if "restart" in self.controller_actions:
            extra += [A.BrokerRestart(b) for b in active]
        parts = [(name, p) for name, _, p in state.partitions()]
        if "balance-leaders" in self.controller_actions and any(p.replicas and p.leader != p.replicas[0]
                                                                for _, p in parts):
            extra.append(A.BalanceLeaders())
        if "elect-unclean" in self.controller_actions and any(
                p.leader == NO_LEADER and self.topic_election(state, name) == A.UNCLEAN for name, p in parts):
            extra.append(A.ElectUncleanLeaders())
        # before a trailing ControllerFailover, so the enumeration order stays the common one
        if out and isinstance(out[-1], A.ControllerFailover):
            return out[:-1] + extra + out[-1:]
        return out + extra


class Kraft37Profile(KraftProfile):
    name = "kraft-3.7"
    description = "KRaft controller before KAFKA-15665 (Kafka 3.7): completes when the adding replicas are in the ISR"
    completion_rule: CompletionRule = staticmethod(adding_replicas_in_isr)

    def __init__(self, metadata_version: str | None = None, controller_actions: tuple[str, ...] = (),
                 zk_migration: bool = False, kafka_version: str = "3.9.2"):
        # 3.7 is older than every release of the matrix: the nearest one (3.9) with 3.7's completion rule
        super().__init__(metadata_version, controller_actions, zk_migration, kafka_version)
