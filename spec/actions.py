"""Actions of the reassignment model, named after who acts, in Kafka's vocabulary.

An action is an immutable value; the reference's `Profile.apply(state, action)` says
what it does. `str(action)` prints it the way Kafka's logs and tools would name it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import AlterPartitionReassignmentsRequest, ListPartitionReassignmentsRequest

# Election types (KRaft PartitionChangeBuilder.Election; ZK leader election strategies).
ONLINE = "ONLINE"
PREFERRED = "PREFERRED"
UNCLEAN = "UNCLEAN"


def _fmt(replicas: tuple[int, ...] | None) -> str:
    return "null" if replicas is None else "[" + ",".join(map(str, replicas)) + "]"


@dataclass(frozen=True, slots=True)
class AlterReassignments:
    """An admin client sends AlterPartitionReassignments (any shape, several partitions)."""

    request: AlterPartitionReassignmentsRequest

    def __str__(self) -> str:
        parts = [
            f"{t.name}-{p.partition_index}:{_fmt(p.replicas)}" if p is not None else f"{t.name}:null"
            for t in (self.request.topics or ())
            for p in (t.partitions if t.partitions is not None else (None,))
        ]
        if self.request.topics is None:
            parts = ["null"]
        return f"AlterPartitionReassignments({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class Reassign:
    """An admin reassigns one partition to `replicas` (one-partition AlterPartitionReassignments)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]

    def __str__(self) -> str:
        return f"Reassign({self.topic}-{self.partition} -> {_fmt(self.replicas)})"


@dataclass(frozen=True, slots=True)
class Cancel:
    """An admin cancels one partition's reassignment (Replicas = null)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"Cancel({self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class ListReassignments:
    """An admin lists ongoing reassignments (no state change)."""

    request: ListPartitionReassignmentsRequest = ListPartitionReassignmentsRequest()

    def __str__(self) -> str:
        return "ListPartitionReassignments()"


@dataclass(frozen=True, slots=True)
class LeaderExpandIsr:
    """The partition leader adds a caught-up follower to the ISR (AlterPartition)."""

    topic: str
    partition: int
    broker: int

    def __str__(self) -> str:
        return f"LeaderExpandIsr({self.topic}-{self.partition} +{self.broker})"


@dataclass(frozen=True, slots=True)
class LeaderShrinkIsr:
    """The partition leader removes a lagging follower from the ISR (AlterPartition)."""

    topic: str
    partition: int
    broker: int

    def __str__(self) -> str:
        return f"LeaderShrinkIsr({self.topic}-{self.partition} -{self.broker})"


@dataclass(frozen=True, slots=True)
class AlterPartition:
    """A leader's AlterPartition request with an explicit new ISR (the oracle's general form)."""

    topic: str
    partition: int
    leader: int
    new_isr: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int
    version: int = 3

    def __str__(self) -> str:
        return (
            f"AlterPartition({self.topic}-{self.partition} leader={self.leader} isr={_fmt(self.new_isr)} "
            f"leaderEpoch={self.leader_epoch} partitionEpoch={self.partition_epoch} v{self.version})"
        )


@dataclass(frozen=True, slots=True)
class BrokerFail:
    """A broker fails (KRaft: is fenced; ZK: its session expires)."""

    broker: int

    def __str__(self) -> str:
        return f"BrokerFail({self.broker})"


@dataclass(frozen=True, slots=True)
class BrokerRecover:
    """A failed broker comes back (KRaft: is unfenced; ZK: re-registers)."""

    broker: int

    def __str__(self) -> str:
        return f"BrokerRecover({self.broker})"


@dataclass(frozen=True, slots=True)
class ElectLeaders:
    """An admin asks for a PREFERRED or UNCLEAN election of one partition (ElectLeaders API)."""

    topic: str
    partition: int
    election: str = PREFERRED

    def __str__(self) -> str:
        return f"ElectLeaders({self.topic}-{self.partition}, {self.election})"


@dataclass(frozen=True, slots=True)
class ControllerFailover:
    """The active controller crashes and another takes over (for `zk`: loses its memory)."""

    def __str__(self) -> str:
        return "ControllerFailover()"


@dataclass(frozen=True, slots=True)
class ControllerStep:
    """The controller runs the next step of its pending work on one partition.

    For `zk`: the next step (U, A1, A2, B1 … B8) of onPartitionReassignment; for
    `kip455`/`kip236`: the controller's next reassignment step.
    """

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"ControllerStep({self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class ZnodeReassign:
    """A tool writes one partition into /admin/reassign_partitions (the legacy ZooKeeper route)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]

    def __str__(self) -> str:
        return f"ZnodeReassign({self.topic}-{self.partition} -> {_fmt(self.replicas)})"


@dataclass(frozen=True, slots=True)
class CancelTopic:
    """An admin cancels every pending reassignment of one topic (KIP-455: Partitions = null)."""

    topic: str

    def __str__(self) -> str:
        return f"CancelTopic({self.topic})"


@dataclass(frozen=True, slots=True)
class CancelAll:
    """An admin cancels every pending reassignment: kip236 creates /admin/reassign_cancel;
    kip455 sends AlterPartitionReassignments with Topics = null."""

    def __str__(self) -> str:
        return "CancelAll()"


@dataclass(frozen=True, slots=True)
class RemoveCancelMarker:
    """kip236: an admin deletes /admin/reassign_cancel (`--remove-cancel`)."""

    def __str__(self) -> str:
        return "RemoveCancelMarker()"


@dataclass(frozen=True, slots=True)
class Produce:
    """A producer appends one record at the partition leader (replication layer)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"Produce({self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class FollowerFetch:
    """A follower fetches from the leader: truncates to the common prefix, then copies one record."""

    topic: str
    partition: int
    broker: int

    def __str__(self) -> str:
        return f"FollowerFetch({self.topic}-{self.partition} <- {self.broker})"


@dataclass(frozen=True, slots=True)
class ToolExecute:
    """`kafka-reassign-partitions.sh --execute --additional --throttle R` for one partition:
    set the replication throttles of every move (ongoing and proposed), then alter."""

    topic: str
    partition: int
    replicas: tuple[int, ...]

    def __str__(self) -> str:
        return f"ToolExecute({self.topic}-{self.partition} -> {_fmt(self.replicas)})"


@dataclass(frozen=True, slots=True)
class ToolCancel:
    """`kafka-reassign-partitions.sh --cancel` for one partition: cancel, then clear all throttles."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"ToolCancel({self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class ToolVerify:
    """`kafka-reassign-partitions.sh --verify` for one partition (run periodically, as the tool asks):
    clears all throttles once no reassignment is in progress."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"ToolVerify({self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class BrokerReplay:
    """A live broker acts on the metadata it has replayed up to now: it creates the logs of the
    partitions it is a replica of and deletes those it no longer is (KRaft ReplicaManager.applyDelta;
    the ZooKeeper era's LeaderAndIsr / StopReplica(delete=true))."""

    broker: int

    def __str__(self) -> str:
        return f"BrokerReplay({self.broker})"


@dataclass(frozen=True, slots=True)
class AutoLeaderBalance:
    """The controller's periodic preferred-leader balancing (auto.leader.rebalance.enable)."""

    def __str__(self) -> str:
        return "AutoLeaderBalance()"


@dataclass(frozen=True, slots=True)
class CreatePartitions:
    """CreatePartitions: grow a topic to `count` partitions (replicas placed by the controller)."""

    topic: str
    count: int

    def __str__(self) -> str:
        return f"CreatePartitions({self.topic} -> {self.count})"


Action = (
    AlterReassignments
    | Reassign
    | Cancel
    | ListReassignments
    | LeaderExpandIsr
    | LeaderShrinkIsr
    | AlterPartition
    | BrokerFail
    | BrokerRecover
    | ElectLeaders
    | ControllerFailover
    | ControllerStep
    | ZnodeReassign
    | CancelTopic
    | CancelAll
    | RemoveCancelMarker
    | Produce
    | FollowerFetch
    | ToolExecute
    | ToolCancel
    | ToolVerify
    | CreatePartitions
    | BrokerReplay
    | AutoLeaderBalance
)

ACTION_TYPES = {
    cls.__name__: cls
    for cls in (
        AlterReassignments,
        Reassign,
        Cancel,
        ListReassignments,
        LeaderExpandIsr,
        LeaderShrinkIsr,
        AlterPartition,
        BrokerFail,
        BrokerRecover,
        ElectLeaders,
        ControllerFailover,
        ControllerStep,
        ZnodeReassign,
        CancelTopic,
        CancelAll,
        RemoveCancelMarker,
        Produce,
        FollowerFetch,
        ToolExecute,
        ToolCancel,
        ToolVerify,
        CreatePartitions,
        BrokerReplay,
        AutoLeaderBalance,
    )
}


# -- KRaft controller actions checked against Kafka's own controller (issue 12, docs/kafka.md) -----------
# Opt-in (`--kraft-actions`), so that the default configurations keep their counts.


@dataclass(frozen=True, slots=True)
class BrokerControlledShutdown:
    """KRaft: an active broker asks to shut down (heartbeat with wantShutDown): it leaves every ISR,
    its leaderships move, and it is no longer active."""

    broker: int

    def __str__(self) -> str:
        return f"BrokerControlledShutdown({self.broker})"


@dataclass(frozen=True, slots=True)
class BrokerRestart:
    """KRaft: a broker restarts after an unclean shutdown and registers again (a new incarnation):
    it is fenced until it heartbeats."""

    broker: int

    def __str__(self) -> str:
        return f"BrokerRestart({self.broker})"


@dataclass(frozen=True, slots=True)
class BalanceLeaders:
    """KRaft: the controller's periodic leader balancing (QuorumController's maybeBalancePartitionLeaders:
    a PREFERRED election of every partition not led by its preferred replica)."""

    def __str__(self) -> str:
        return "BalanceLeaders()"


@dataclass(frozen=True, slots=True)
class ElectUncleanLeaders:
    """KRaft: the controller's periodic unclean election of the leaderless partitions whose topic
    allows it (maybeElectUncleanLeaders)."""

    def __str__(self) -> str:
        return "ElectUncleanLeaders()"


KRAFT_CONTROLLER_ACTIONS = (BrokerControlledShutdown, BrokerRestart, BalanceLeaders, ElectUncleanLeaders)
ACTION_TYPES.update({cls.__name__: cls for cls in KRAFT_CONTROLLER_ACTIONS})


# -- topic deletion during a reassignment (issue 14, item 4; bounds: delete_topic) ------------------------
# Opt-in, so that the default configurations keep their counts.


@dataclass(frozen=True, slots=True)
class DeleteTopic:
    """DeleteTopics for one topic. KRaft: the topic, its partitions and their reassignments go at once;
    ZooKeeper: queued (/admin/delete_topics), ineligible while a partition of it is being reassigned."""

    topic: str

    def __str__(self) -> str:
        return f"DeleteTopic({self.topic})"


@dataclass(frozen=True, slots=True)
class ResumeTopicDeletion:
    """ZooKeeper controller: TopicDeletionManager deletes a queued topic once it is eligible again
    (no partition of it is being reassigned)."""

    topic: str

    def __str__(self) -> str:
        return f"ResumeTopicDeletion({self.topic})"


TOPIC_DELETION_ACTIONS = (DeleteTopic, ResumeTopicDeletion)
ACTION_TYPES.update({cls.__name__: cls for cls in TOPIC_DELETION_ACTIONS})


# -- /admin/reassign_partitions batches and the forced cancel before KIP-455 (issue 26, item 3) ---------
# Opt-in (bounds: znode_batch), so that the default configurations keep their counts.


@dataclass(frozen=True, slots=True)
class ZnodeReassignBatch:
    """kafka-reassign-partitions --zookeeper --execute: one write of /admin/reassign_partitions naming
    several partitions (entries: (topic, partition, replicas)); the controller takes them one by one."""

    entries: tuple[tuple[str, int, tuple[int, ...]], ...]

    def __str__(self) -> str:
        return "ZnodeReassignBatch(" + ", ".join(f"{t}-{p} -> {_fmt(r)}" for t, p, r in self.entries) + ")"


@dataclass(frozen=True, slots=True)
class ZnodeDelete:
    """An operator deletes /admin/reassign_partitions by hand (zookeeper-shell `delete`): the first half
    of the forced cancel operators used before KIP-455 (the second: bounce the controller)."""

    def __str__(self) -> str:
        return "ZnodeDelete(/admin/reassign_partitions)"


ZNODE_BATCH_ACTIONS = (ZnodeReassignBatch, ZnodeDelete)
ACTION_TYPES.update({cls.__name__: cls for cls in ZNODE_BATCH_ACTIONS})


# -- the zk controller's identity and its event queue (issue 26, item 1) ----------------------------------
# Opt-in (bounds: zk_events), so that the default configurations keep their counts.


@dataclass(frozen=True, slots=True)
class ControllerResign:
    """zk: the active controller's ZooKeeper session expires: its event thread handles Expire
    (KafkaController.processExpire: onControllerResignation), /controller is gone, no controller is active
    until an election; the broker itself stays up."""

    def __str__(self) -> str:
        return "ControllerResign()"


@dataclass(frozen=True, slots=True)
class ControllerElect:
    """zk: a live broker wins the controller election (KafkaController.elect:
    registerControllerAndIncrementControllerEpoch, then onControllerFailover); it may be the broker that
    resigned before."""

    broker: int

    def __str__(self) -> str:
        return f"ControllerElect({self.broker})"


ZK_EVENT_ACTIONS = (ControllerResign, ControllerElect)
ACTION_TYPES.update({cls.__name__: cls for cls in ZK_EVENT_ACTIONS})


# -- the brokers' own replica management: the leader's ISR maintenance (issue 26, item 2) ----------------
# Opt-in (bounds: broker_isr), so that the default configurations keep their counts.


@dataclass(frozen=True, slots=True)
class ReplicaFetch:
    """Follower `broker`'s replica fetcher fetches from the leader, which records its position and may add it
    to the ISR (Partition.fetchRecords → updateFollowerFetchState → maybeExpandIsr: an AlterPartition)."""

    topic: str
    partition: int
    broker: int

    def __str__(self) -> str:
        return f"ReplicaFetch({self.topic}-{self.partition} <- {self.broker})"


@dataclass(frozen=True, slots=True)
class LagExpire:
    """replica.lag.time.max.ms passes since follower `broker` was last caught up with the leader's log end
    (Replica.isCaughtUp turns false)."""

    topic: str
    partition: int
    broker: int

    def __str__(self) -> str:
        return f"LagExpire({self.topic}-{self.partition} {self.broker})"


@dataclass(frozen=True, slots=True)
class LeaderMaybeShrinkIsr:
    """The leader's isr-expiration task (Partition.maybeShrinkIsr): an AlterPartition without the
    out-of-sync ISR members."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"LeaderMaybeShrinkIsr({self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class AlterPartitionArrive:
    """The controller handles the leader's in-flight AlterPartition for the partition and the leader applies
    the answer (Partition.handleAlterPartitionUpdate / handleAlterPartitionError)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"AlterPartitionArrive({self.topic}-{self.partition})"


BROKER_ISR_ACTIONS = (ReplicaFetch, LagExpire, LeaderMaybeShrinkIsr, AlterPartitionArrive)
ACTION_TYPES.update({cls.__name__: cls for cls in BROKER_ISR_ACTIONS})


# -- tools and automation acting beside the controller (issue 26, item 4; bounds: actors) ------------------
# Opt-in, so that the default configurations keep their counts. The requests an actor sends subclass the
# admin's (RebalancerMove is a Reassign, OperatorExecute a ToolExecute ...): they spend the same budget and
# record the same intent, and the printed name says who sent them.


@dataclass(frozen=True, slots=True)
class RebalancerRead:
    """A rebalancer (Cruise Control, a script) reads the cluster: ListPartitionReassignments and
    DescribeTopics, remembered until it acts."""

    def __str__(self) -> str:
        return "RebalancerRead()"


@dataclass(frozen=True, slots=True)
class RebalancerMove(Reassign):
    """The rebalancer acts on what it read: AlterPartitionReassignments moving a partition its read
    showed not moving (it skips, sending nothing, a partition it saw moving)."""

    def __str__(self) -> str:
        return f"RebalancerMove({self.topic}-{self.partition} -> {_fmt(self.replicas)})"


@dataclass(frozen=True, slots=True)
class RebalancerCancel(Cancel):
    """The rebalancer cancels a reassignment its read showed in progress (Replicas = null); it sends
    nothing for a partition it saw idle."""

    def __str__(self) -> str:
        return f"RebalancerCancel({self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class AutoThrottlerRead:
    """An external auto-throttler (Cruise Control's ReplicationThrottleHelper, an operator's script)
    refreshes its cache: the throttles the reassignments it lists need."""

    def __str__(self) -> str:
        return "AutoThrottlerRead()"


@dataclass(frozen=True, slots=True)
class AutoThrottlerWrite:
    """The auto-throttler writes its cache back: the throttled-replica lists and broker rates become
    what its cache holds (overwriting what kafka-reassign-partitions.sh set since it read)."""

    def __str__(self) -> str:
        return "AutoThrottlerWrite()"


@dataclass(frozen=True, slots=True)
class OperatorExecute(ToolExecute):
    """`kafka-reassign-partitions.sh --execute --additional --throttle` run by operator `operator`."""

    operator: int

    def __str__(self) -> str:
        return f"OperatorExecute(#{self.operator} {self.topic}-{self.partition} -> {_fmt(self.replicas)})"


@dataclass(frozen=True, slots=True)
class OperatorVerify:
    """`--verify` run by operator `operator`, first half: ListPartitionReassignments (is anything in
    progress?); the tool's clearAllThrottles follows as `OperatorClear`, a separate request."""

    topic: str
    partition: int
    operator: int

    def __str__(self) -> str:
        return f"OperatorVerify(#{self.operator} {self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class OperatorClear:
    """`--verify` run by operator `operator`, second half: clearAllThrottles if its listing found no
    reassignment in progress (IncrementalAlterConfigs, DELETE)."""

    topic: str
    partition: int
    operator: int

    def __str__(self) -> str:
        return f"OperatorClear(#{self.operator} {self.topic}-{self.partition})"


@dataclass(frozen=True, slots=True)
class BadPlanExecute(ToolExecute):
    """`kafka-reassign-partitions.sh --execute` of a JSON plan naming a partition or a broker that does
    not exist (the tool validates it against the cluster before it sets any throttle)."""

    def __str__(self) -> str:
        return f"BadPlanExecute({self.topic}-{self.partition} -> {_fmt(self.replicas)})"


@dataclass(frozen=True, slots=True)
class BadPlanAlter(Reassign):
    """A client sends the same bad plan as AlterPartitionReassignments directly (no tool validation):
    the controller answers it."""

    def __str__(self) -> str:
        return f"BadPlanAlter({self.topic}-{self.partition} -> {_fmt(self.replicas)})"


ACTOR_ACTIONS = (RebalancerRead, RebalancerMove, RebalancerCancel, AutoThrottlerRead, AutoThrottlerWrite,
                 OperatorExecute, OperatorVerify, OperatorClear, BadPlanExecute, BadPlanAlter)
ACTION_TYPES.update({cls.__name__: cls for cls in ACTOR_ACTIONS})
