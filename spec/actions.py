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
