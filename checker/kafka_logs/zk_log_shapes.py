"""The line shapes of Kafka's ZooKeeper-era controller, state-change and broker logs.

Each `Shape` is one log statement of Kafka's source, for the versions that print it (the
format strings are quoted in tests/unit/test_kafka_log_shapes.py with their file and tag):

- kind "state": the line shows partition state; its fields are checked against the model;
- kind "context": Kafka's line, consistent with any state the model has (requests sent,
  replica state-machine steps, a broker's intentions) — explained, nothing to check;
- kind "creation": names new partitions and their replicas — a partition's initial state;
- kind "outside": Kafka's line about something the model leaves out (topic deletion, failed
  writes, controlled shutdown, ...) — not understood, the verdict can be at best INCONCLUSIVE.

Partition names: `T-P`, and the `[T,P]` of Kafka before 1.0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# a topic is [a-zA-Z0-9._-]+; Kafka < 1.0 printed TopicAndPartition as [t,p]
TP = r"(?:\[(?P<otopic>[\w.-]+),(?P<opartition>\d+)\]|(?P<topic>[\w.-]+)-(?P<partition>\d+))"
IDS = r"[-\d, ]*"
ASSIGNMENT = (r"ReplicaAssignment\(replicas=(?P<r>[\d,]*), addingReplicas=(?P<a>[\d,]*), "
              r"removingReplicas=(?P<rr>[\d,]*)\)")


@dataclass(frozen=True)
class Shape:
    name: str
    kind: str  # state | context | creation | outside
    versions: str  # the Kafka versions that print it
    source: str  # file (and method) of the log statement
    keyword: str  # a literal every such line contains (cheap pre-filter)
    pattern: re.Pattern[str]


def _s(name: str, kind: str, versions: str, source: str, keyword: str, pattern: str) -> Shape:
    return Shape(name, kind, versions, source, keyword, re.compile(pattern))


SHAPES: list[Shape] = [
    # -- KafkaController ------------------------------------------------------------------------------------
    _s("assignment written", "state", "2.4-3.9", "KafkaController.updateReplicaAssignmentForPartition",
       "Successfully updated assignment",
       rf"Successfully updated assignment of partition {TP} to {ASSIGNMENT}"),
    _s("leader epoch bumped", "state", "1.0-3.9 (`, zkVersion=V` from 2.8)", "KafkaController.updateLeaderEpochAndSendRequest",
       "Updated leader epoch", rf"Updated leader epoch for partition {TP} to (?P<le>\d+)(?:, zkVersion=(?P<zv>\d+))?"),
    _s("LeaderAndIsr sent to a reassigned partition's leader", "state", "2.4-3.9",
       "KafkaController.updateLeaderEpochAndSendRequest", "for partition being reassigned",
       rf"Sent LeaderAndIsr request \((?P<lai>[^)]*)\) with new replica assignment {ASSIGNMENT} "
       rf"to leader (?P<to>-?\d+) for partition being reassigned {TP}"),
    _s("target caught up", "state", "2.4-3.9", "KafkaController.maybeCompleteReassignment", "have all caught up",
       rf"Target replicas \w*\((?P<t>{IDS})\) have all caught up with the leader for reassigning partition {TP}"),
    _s("leader not in target", "state", "1.0-3.9", "KafkaController.moveReassignedPartitionLeaderIfRequired",
       "is not in the new list of replicas",
       rf"Leader (?P<l>-?\d+) for partition {TP} being reassigned, is not in the new list of replicas "
       rf"(?P<r>[\d,]*)\. Re-electing leader"),
    _s("leader in target and alive", "state", "1.0-3.9", "KafkaController.moveReassignedPartitionLeaderIfRequired",
       "and is alive",
       rf"Leader (?P<l>-?\d+) for partition {TP} being reassigned, is already in the new list of replicas "
       rf"(?P<r>[\d,]*) and is alive"),
    _s("leader in target but dead", "state", "1.0-3.9", "KafkaController.moveReassignedPartitionLeaderIfRequired",
       "but is dead",
       rf"Leader (?P<l>-?\d+) for partition {TP} being reassigned, is already in the new list of replicas "
       rf"(?P<r>[\d,]*) but is dead"),
    _s("znode entries removed", "state", "2.4-3.9", "KafkaController.maybeRemoveFromZkReassignment",
       "from the list of reassigned partitions in zookeeper",
       r"Removing partitions \w*\((?P<m>.*)\) from the list of reassigned partitions in zookeeper"),
    _s("znode deleted", "state", "1.0-3.9", "KafkaController (reassignment znode)", "No more partitions need",
       r"No more partitions need to be reassigned\. Deleting zk path"),
    _s("preferred election completed", "state", "1.0-3.9", "KafkaController.onPreferredReplicaElection",
       "completed preferred replica leader election",
       rf"Partition {TP} completed preferred replica leader election\. New leader is (?P<l>-?\d+)"),
    _s("new topics", "creation", "1.0-3.9", "KafkaController.processTopicChange", "New topics:",
       r"New topics: \[(?P<new>.*?)\], deleted topics: \[(?P<deleted>.*?)\], new partition replica assignment "
       r"\[(?P<assign>.*)\]"),
    _s("new partition creation callback", "creation", "1.0-3.9", "KafkaController.onNewPartitionCreation",
       "New partition creation callback", r"New partition creation callback for (?P<tps>.*)"),
    _s("reassignments at startup", "context", "1.0-2.3", "KafkaController.initializePartitionReassignment",
       "Partitions being reassigned:", r"Partitions being reassigned: (?P<m>.*)"),
    _s("preferred election started", "context", "1.0-2.3", "KafkaController.onPreferredReplicaElection",
       "Starting preferred replica leader election", r"Starting preferred replica leader election for partitions"),
    _s("automatic preferred election", "context", "2.0-3.9", "KafkaController.processAutoPreferredReplicaLeaderElection",
       "Processing automatic preferred replica leader election",
       r"Processing automatic preferred replica leader election"),
    # the controller's write of a leader's AlterPartition (KafkaController.processAlterPartition, DEBUG)
    _s("ISR written for AlterPartition", "state", "3.9 (DEBUG)", "KafkaController.processAlterPartition",
       "ISR for partition", rf"ISR for partition {TP} updated to (?P<lai>LeaderAndIsr\(.*\))"),
    _s("reassignment before KIP-455", "outside", "1.0-2.3", "KafkaController.onPartitionReassignment (1.x - 2.3)",
       "being reassigned",
       r"Updated assigned replicas for partition \S+ being reassigned to|New replicas [\d,]* for partition \S+ "
       r"being reassigned not yet caught up|replicas have caught up with the leader for partition \S+ being reassigned"
       r"|with new assigned replica list"),
    _s("failed reassignment", "outside", "2.4-3.9", "KafkaController.onPartitionReassignment (errors)",
       "Failed reassignment", r"Failed reassignment through zk with the following errors"),
    # -- PartitionStateMachine -----------------------------------------------------------------------------
    _s("partition state changed", "state", "1.0-3.9", "PartitionStateMachine.doHandleStateChanges / doElectLeaderForPartitions",
       "Changed partition",
       rf"Changed partition {TP} from (?P<from>\w+) to (?P<to>\w+) with state (?P<lai>(?:LeaderAndIsr)?\(.*\))"),
    _s("partition created", "creation", "1.0-3.9", "PartitionStateMachine.doHandleStateChanges (NewPartition)",
       "Changed partition",
       rf"Changed partition {TP} state from (?P<from>\w+) to NewPartition with assigned replicas (?P<r>[\d,]*)"),
    _s("partition deleted", "outside", "1.0-3.9", "PartitionStateMachine.doHandleStateChanges (NonExistentPartition)",
       "Changed partition", rf"Changed partition {TP} state from (?P<from>\w+) to NonExistentPartition"),
    _s("partition offline", "context", "1.0-3.9", "PartitionStateMachine.doHandleStateChanges (OfflinePartition)",
       "Changed partition", rf"Changed partition {TP} state from (?P<from>\w+) to (?P<to>\w+)(?:\s+\([\w.]+\))?\s*$"),
    _s("failed partition state change", "outside", "1.0-3.9", "PartitionStateMachine.logFailedStateChange",
       "failed to change state for partition",
       rf"Controller (?P<c>\d+) epoch (?P<ce>\d+) failed to change state for partition {TP}"),
    # -- ReplicaStateMachine ----------------------------------------------------------------------------------
    _s("replica removed from the ISR", "state", "2.6-3.9 (`ZkVersion:` from 2.8)", "ZkReplicaStateMachine.doRemoveReplicasFromIsr",
       "after removing replica",
       rf"Partition {TP} state changed to \((?P<lai>[^)]*)\) after removing replica (?P<rep>-?\d+) from the ISR "
       rf"as part of transition to (?P<st>\w+)"),
    _s("replica state changed", "context", "1.0-3.9", "ReplicaStateMachine.logSuccessfulTransition",
       "Changed state of replica",
       rf"Changed state of replica (?P<b>\d+) for partition {TP} from (?P<from>\w+) to (?P<to>\w+)"),
    # a transition to the state the replica is in, refused and skipped (logInvalidTransition: no request, no
    # write); seen in 3.9.2 when step A2 runs again for a resumed reassignment (NewReplica to NewReplica)
    _s("replica already in the state", "context", "1.0-3.9", "ZkReplicaStateMachine.logInvalidTransition",
       "initiated state change of replica",
       rf"initiated state change of replica (?P<b>\d+) for partition {TP} from (?P<from>\w+) to (?P=from) failed"),
    _s("failed replica state change", "outside", "1.0-3.9", "ReplicaStateMachine.logFailedStateChange", "epoch",
       rf"Controller (?P<c>\d+) epoch (?P<ce>\d+) (?:failed to change state for replica|initiated state change of "
       rf"replica) (?P<b>\d+) for partition {TP}"),
    # -- ControllerChannelManager (per partition, with the state sent) ------------------------------------------------
    _s("LeaderAndIsr sent", "state", "1.0-3.9", "ControllerChannelManager.sendLeaderAndIsrRequest",
       "LeaderAndIsr request",
       rf"Sending (?P<type>become-leader|become-follower) LeaderAndIsr request (?P<lai>\w*\(.*\)) to broker "
       rf"(?P<b>\d+) for partition {TP}"),
    _s("UpdateMetadata sent", "state", "1.0-2.5 (trace)", "ControllerChannelManager.sendUpdateMetadataRequests",
       "UpdateMetadata request",
       rf"Sending UpdateMetadata request (?P<lai>\w*\(.*\)) to brokers (?P<bs>\w*\([\d, ]*\)) for partition {TP}"),
    _s("StopReplica sent", "context", "2.6-3.9", "ControllerChannelManager.sendStopReplicaRequests", "StopReplica request",
       rf"Sending StopReplica request (?P<s>\w*\(.*\)) to broker (?P<b>\d+) for partition {TP}"),
    _s("requests sent (summary)", "context", "1.0-3.9", "ControllerChannelManager", "request",
       r"Sending (?:LeaderAndIsr|UpdateMetadata|StopReplica) request"),
    # -- the broker: Partition, ReplicaManager, MetadataCache --------------------------------------------------
    _s("ISR updated", "state", "2.0-3.9 (trace before 2.4)", "Partition.maybeUpdateIsrAndVersion / sendAlterIsrRequest",
       "ISR updated to",
       r"\[Partition (?P<topic>[\w.-]+)-(?P<partition>\d+) broker=(?P<b>\d+)\] ISR updated to \[?(?P<isr>[\d,]*)\]?\s*"
       r"(?:\(under-min-isr\))?\s*and (?:zk)?[vV]ersion updated to \[?(?P<zv>\d+)\]?"),
    _s("expanding ISR", "context", "1.0-2.6", "Partition.maybeExpandIsr", "Expanding ISR",
       r"Expanding ISR (?:for partition (?P<topic>[\w.-]+)-(?P<partition>\d+) )?from (?P<a>[\d,]*) to (?P<b>[\d,]*)"),
    _s("shrinking ISR", "context", "1.0-3.9", "Partition.maybeShrinkIsr", "Shrinking ISR",
       r"Shrinking ISR (?:for partition (?P<topic>[\w.-]+)-(?P<partition>\d+) )?from (?P<a>[\d,]*) to (?P<b>[\d,]*)"),
    _s("stale zkVersion", "context", "1.0-2.6", "Partition.updateIsr", "Cached zkVersion",
       r"Cached zkVersion \[?\d+\]? not equal to that in zookeeper, skip updating ISR"),
    _s("LeaderAndIsr ignored", "context", "1.0-3.9", "ReplicaManager.becomeLeaderOrFollower",
       "Ignoring LeaderAndIsr request", r"Ignoring LeaderAndIsr request from controller"),
    _s("LeaderAndIsr received", "context", "1.0-3.9", "ReplicaManager.becomeLeaderOrFollower",
       "LeaderAndIsr request", r"(?:Received|Handling|Completed) LeaderAndIsr request"),
    _s("become-leader/follower", "context", "1.0-3.9", "ReplicaManager.makeLeaders / makeFollowers, Partition",
       "state change", r"Skipped the become-(?:leader|follower) state change|[Ss]tarted the become-(?:leader|follower)"
       r"|[Cc]ompleted the become-(?:leader|follower)|Stopped fetchers as part of (?:become-follower|LeaderAndIsr)"),
    _s("leader info cached", "context", "1.0-3.9", "MetadataCache.updateMetadata", "Cached leader info",
       r"Cached leader info .* for partition"),
    # context: a controlled shutdown's writes are onBrokerFailure's (KafkaController.doControlledShutdown: the
    # leaders it leads elected by ControlledShutdownPartitionLeaderElectionStrategy — the first replica in the
    # ISR, live and not shutting down, as the offline election picks once the broker is gone — the others'
    # OfflineReplica ISR removals): they are checked as the model's BrokerFail
    _s("controlled shutdown", "context", "1.0-3.9", "KafkaController.doControlledShutdown",
       "hutting down", r"Shutting down broker (?P<b>\d+)|[Cc]ontrolled shutdown"),
]

#: the exception line under a "failed partition state change" line whose cause is an election that found no leader
#: (ZkPartitionStateMachine.doElectLeaderForPartitions, 3.9.2: `Failed to elect leader for partition $partition under
#: strategy $partitionLeaderElectionStrategy`; nothing is written for that partition, its state stays as it was),
#: and the view field (validation.view) that must be false in the model's state for each strategy read here
FAILED_ELECTION = re.compile(rf"^kafka\.common\.StateChangeFailedException: Failed to elect leader for partition {TP} "
                             r"under strategy (?P<strategy>\w+(?:\((?:true|false)\))?)\s*$")
ELECTION_FIELDS = {
    # PartitionStateMachine.collectUncleanLeaderElectionState + Election.leaderForOffline: the first live in-sync
    # replica of the assignment, else (the topic's unclean.leader.election.enable) the first live replica
    "OfflinePartitionLeaderElectionStrategy(false)": "offline_electable",
    # Election.leaderForReassign: the first live in-sync replica of the target (KafkaController
    # .moveReassignedPartitionLeaderIfRequired, step B3)
    "ReassignPartitionLeaderElectionStrategy": "reassign_electable",
    # Election.leaderForControlledShutdown: the first live in-sync replica that is not shutting down
    # (KafkaController.doControlledShutdown, for the partitions the shutting-down broker leads)
    "ControlledShutdownPartitionLeaderElectionStrategy": "shutdown_electable",
}

#: the exception line under a "failed replica state change" line of a transition to NewReplica refused as invalid
#: (ZkReplicaStateMachine.logInvalidTransition, 3.9.2: the replica is left out of the valid ones, no request, no
#: write). For a partition that exists, only step A2 moves replicas to NewReplica
#: (KafkaController.startNewReplicasForReassignedPartition, the adding replicas); seen when a new controller resumes a
#: reassignment whose adding replica it already holds as OnlineReplica (onControllerFailover)
INVALID_NEW_REPLICA = re.compile(r"^java\.lang\.IllegalStateException: Replica \[Topic=(?P<topic>[\w.-]+),Partition="
                                 r"(?P<partition>\d+),Replica=(?P<b>\d+)\] should be in the NonExistentReplica states "
                                 r"before moving to NewReplica state\. Instead it is in (?P<from>\w+) state\s*$")

BY_NAME = {s.name: s for s in SHAPES}
# the controller-side state-change logger's identity: [Controller id=1 epoch=2] (StateChangeLogger, 2.0+)
CONTROLLER_EPOCH = re.compile(r"\[Controller id=\d+ epoch=(?P<ce>\d+)\]")


def match_line(line: str) -> tuple[Shape, re.Match[str]] | None:
    for shape in SHAPES:
        if shape.keyword in line:
            m = shape.pattern.search(line)
            if m:
                return shape, m
    return None


def tp_of(m: re.Match[str]) -> tuple[str, int] | None:
    g = m.groupdict()
    if g.get("topic"):
        return g["topic"], int(g["partition"])
    if g.get("otopic"):
        return g["otopic"], int(g["opartition"])
    return None


def ids(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"-?\d+", text))


def kv_colon(text: str) -> dict[str, str]:
    """`Leader:1,ISR:1,2,3,LeaderEpoch:6,...` (commas inside ISR) as a dict."""
    return {m.group(1): m.group(2) for m in re.finditer(r"(\w+):([^:]*?)(?=,\w+:|$)", text)}


def kv_equals(text: str) -> dict[str, str]:
    """`leader=4, leaderEpoch=7, isr=List(5, 1), zkVersion=12` / `isr=[1, 2]` / `isr=1,2` as a dict."""
    out = {}
    for m in re.finditer(r"(\w+)=(\w*\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\]|'[^']*'|(?:[^,)=]|,(?=\s*\d))*)", text):
        out[m.group(1)] = m.group(2).strip()
    return out


def state_fields(text: str, *, memory: bool = False) -> list[tuple[str, Any]]:
    """Fields of a LeaderAndIsr / PartitionState / LeaderAndIsrPartitionState / UpdateMetadataPartitionState
    printed any of the ways Kafka 1.0 - 3.9 print them. The `controllerEpoch` inside a partition state is the
    epoch of the controller that wrote that state, not the current one: it is not returned."""
    inner = text[text.index("(") + 1:text.rindex(")")] if "(" in text else text
    d = kv_equals(inner) if "=" in inner else kv_colon(inner)
    lower = {k.lower(): v for k, v in d.items()}
    out: list[tuple[str, Any]] = []
    if "leader" in lower:
        out.append(("leader", int(lower["leader"])))
    if "isr" in lower:
        out.append(("isr", ids(lower["isr"])))
    elif "isrwithbrokerepoch" in lower:  # 3.5+: List(BrokerState(brokerId=1, brokerEpoch=-1), ...)
        out.append(("isr", tuple(int(x) for x in re.findall(r"brokerId=(-?\d+)", lower["isrwithbrokerepoch"]))))
    if "leaderepoch" in lower:
        out.append(("leader_epoch", int(lower["leaderepoch"])))
    for key in ("zkversion", "partitionepoch"):
        if key in lower:
            out.append(("partition_epoch", int(lower[key])))
            break
    if memory and "replicas" in lower:
        out.append(("memory_replicas", ids(lower["replicas"])))
        if "addingreplicas" in lower:
            out.append(("memory_adding", ids(lower["addingreplicas"])))
        if "removingreplicas" in lower:
            out.append(("memory_removing", ids(lower["removingreplicas"])))
    return out


__all__ = [
    "ASSIGNMENT",
    "BY_NAME",
    "CONTROLLER_EPOCH",
    "ELECTION_FIELDS",
    "FAILED_ELECTION",
    "IDS",
    "INVALID_NEW_REPLICA",
    "SHAPES",
    "TP",
    "Shape",
    "ids",
    "kv_colon",
    "kv_equals",
    "match_line",
    "state_fields",
    "tp_of",
]
