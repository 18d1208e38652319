"""Every line shape kreassign reads, built from the format string in Kafka's source for the versions that print it.

Each case names the file and tag of the log statement (github.com/apache/kafka), and the line is the
statement's interpolation with values filled in by hand — `$partition` is a TopicPartition
(`t-0`), `mkString(",")` joins without spaces, Scala's `List(1, 2)` / Java's `[1, 2]` as printed.
"""

from __future__ import annotations

import pytest
from kreassign.checker.kafka_logs.zk_controller_log import parse_log
from kreassign.checker.kafka_logs.zk_log_shapes import SHAPES, match_line

P = "[2024-01-02 03:04:05,678] INFO "  # a log4j prefix (ConversionPattern "[%d] %p %m (%c)%n")
CASES = [
    # (shape, Kafka tag: file, line, expected partition, expected fields)
    ("ISR written for AlterPartition", "3.9.2: controller/KafkaController.scala processAlterPartition (DEBUG)",
     ("[2026-11-27 19:15:54,242] DEBUG [Controller id=1] ISR for partition t-0 updated to LeaderAndIsr(leader=1, "
      "leaderEpoch=2, isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=-1), BrokerState(brokerId=4, "
      "brokerEpoch=-1)), leaderRecoveryState=RECOVERED, partitionEpoch=3). (kafka.controller.KafkaController)"),
     ("t", 0), {"leader": 1, "isr": (1, 4), "leader_epoch": 2, "partition_epoch": 3}),
    ("replica already in the state", "3.9.2: controller/ReplicaStateMachine.scala logInvalidTransition",
     ("[Controller id=1 epoch=3] Controller 1 epoch 3 initiated state change of replica 4 for partition t-0 from "
      "NewReplica to NewReplica failed (state.change.logger)"), None, {}),
    ("assignment written", "2.4.1: controller/KafkaController.scala",
     ("[Controller id=1] Successfully updated assignment of partition t-0 to ReplicaAssignment(replicas=4,5,1,2, "
     "addingReplicas=4,5, removingReplicas=1,2) (kafka.controller.KafkaController)"),
     ("t", 0), {"replicas": (4, 5, 1, 2), "adding": (4, 5), "removing": (1, 2)}),
    ("leader epoch bumped", "2.4.1: controller/KafkaController.scala updateLeaderEpochAndSendRequest",
     "[Controller id=1] Updated leader epoch for partition t-0 to 3 (kafka.controller.KafkaController)",
     ("t", 0), {"leader_epoch": 3}),
    ("leader epoch bumped", "2.8.2: controller/KafkaController.scala (`, zkVersion=` from 2.8)",
     "[Controller id=1] Updated leader epoch for partition t-0 to 3, zkVersion=7 (kafka.controller.KafkaController)",
     ("t", 0), {"leader_epoch": 3, "partition_epoch": 7}),
    ("leader epoch bumped", "1.1.1: controller/KafkaController.scala, pre-1.0 [topic,partition] names",
     "Updated leader epoch for partition [t,0] to 3", ("t", 0), {"leader_epoch": 3}),
    ("LeaderAndIsr sent to a reassigned partition's leader", "3.8.0: controller/KafkaController.scala",
     ("Sent LeaderAndIsr request (Leader:1,ISR:1,2,LeaderRecoveryState:RECOVERED,LeaderEpoch:6,ZkVersion:8,"
     "ControllerEpoch:1) with new replica assignment ReplicaAssignment(replicas=3,1,2, addingReplicas=3, "
     "removingReplicas=2) to leader 1 for partition being reassigned t-0"),
     ("t", 0), {"leader": 1, "isr": (1, 2), "leader_epoch": 6, "partition_epoch": 8, "memory_replicas": (3, 1, 2),
                "memory_adding": (3,), "memory_removing": (2,)}),
    ("target caught up", "2.4.1: controller/KafkaController.scala maybeCompleteReassignment",
     "Target replicas ArrayBuffer(3, 1) have all caught up with the leader for reassigning partition t-0",
     ("t", 0), {"memory_target": (3, 1), "target_in_isr": True, "next_step": "U"}),
    ("leader not in target", "1.1.1 and 3.8.0: controller/KafkaController.scala moveReassignedPartitionLeaderIfRequired",
     "Leader 2 for partition t-0 being reassigned, is not in the new list of replicas 3,1. Re-electing leader",
     ("t", 0), {"leader": 2, "memory_replicas": (3, 1), "memory_adding": (), "memory_removing": (),
                "next_step": "B3"}),
    ("leader in target and alive", "3.8.0: controller/KafkaController.scala",
     "Leader 1 for partition t-0 being reassigned, is already in the new list of replicas 3,1 and is alive",
     ("t", 0), {"leader": 1, "leader_live": True}),
    ("leader in target but dead", "3.8.0: controller/KafkaController.scala",
     "Leader 1 for partition t-0 being reassigned, is already in the new list of replicas 3,1 but is dead",
     ("t", 0), {"leader": 1, "leader_live": False}),
    ("znode entries removed", "2.4.1: controller/KafkaController.scala maybeRemoveFromZkReassignment",
     "Removing partitions Map(t-0 -> Buffer(3, 1)) from the list of reassigned partitions in zookeeper",
     ("t", 0), {"znode_entry": (3, 1)}),
    ("znode deleted", "2.4.1: controller/KafkaController.scala",
     "No more partitions need to be reassigned. Deleting zk path /admin/reassign_partitions", None, {"znode_empty": True}),
    ("preferred election completed", "1.1.1: controller/KafkaController.scala onPreferredReplicaElection",
     "Partition t-0 completed preferred replica leader election. New leader is 2", ("t", 0), {"leader": 2}),
    # PartitionStateMachine: LeaderAndIsr.toString per version (core/src/main/scala/kafka/api/LeaderAndIsr.scala)
    ("partition state changed", "1.1.1 - 3.1: LeaderAndIsr(leader=, leaderEpoch=, isr=, zkVersion=)",
     ("[Controller id=1 epoch=4] Changed partition t-0 from NewPartition to OnlinePartition with state "
     "LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2, 3), zkVersion=0) (state.change.logger)"),
     ("t", 0), {"leader": 1, "isr": (1, 2, 3), "leader_epoch": 0, "partition_epoch": 0, "controller_epoch": 4}),
    ("partition state changed", "3.2.0: + leaderRecoveryState",
     ("Changed partition t-0 from OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=1, "
     "isr=List(2, 3), leaderRecoveryState=RECOVERED, zkVersion=1)"),
     ("t", 0), {"leader": 2, "isr": (2, 3), "leader_epoch": 1, "partition_epoch": 1}),
    ("partition state changed", "3.4.0: partitionEpoch",
     ("Changed partition t-0 from OnlinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=1, "
     "isr=List(2, 3), leaderRecoveryState=RECOVERED, partitionEpoch=1)"),
     ("t", 0), {"leader": 2, "isr": (2, 3), "leader_epoch": 1, "partition_epoch": 1}),
    ("partition state changed", "3.5.0 - 3.9: isrWithBrokerEpoch",
     ("Changed partition t-0 from OfflinePartition to OnlinePartition with state LeaderAndIsr(leader=2, leaderEpoch=1, "
     "isrWithBrokerEpoch=List(BrokerState(brokerId=2, brokerEpoch=-1), BrokerState(brokerId=3, brokerEpoch=-1)), "
     "leaderRecoveryState=RECOVERED, partitionEpoch=1)"),
     ("t", 0), {"leader": 2, "isr": (2, 3), "leader_epoch": 1, "partition_epoch": 1}),
    ("partition created", "1.1.1 - 3.8.0: controller/PartitionStateMachine.scala (NewPartition)",
     "Changed partition t-0 state from NonExistentPartition to NewPartition with assigned replicas 1,2,3", ("t", 0), {}),
    ("partition offline", "1.1.1 - 3.8.0: controller/PartitionStateMachine.scala (OfflinePartition)",
     "Changed partition t-0 state from OnlinePartition to OfflinePartition (state.change.logger)", ("t", 0), {}),
    ("partition deleted", "1.1.1 - 3.8.0: controller/PartitionStateMachine.scala (NonExistentPartition)",
     "Changed partition t-0 state from OfflinePartition to NonExistentPartition", ("t", 0), {}),
    ("failed partition state change", "1.1.1 - 3.8.0: controller/PartitionStateMachine.scala logFailedStateChange",
     "Controller 1 epoch 3 failed to change state for partition t-0 from OfflinePartition to OnlinePartition",
     ("t", 0), {}),
    ("replica removed from the ISR", ("2.6.0: controller/ReplicaStateMachine.scala doRemoveReplicasFromIsr, "
     "LeaderIsrAndControllerEpoch.toString of 2.6.0 controller/KafkaController.scala (ZkVersion: from 2.8)"),
     ("Partition t-0 state changed to (Leader:1,ISR:1,3,LeaderEpoch:4,ControllerEpoch:2) after removing replica 2 "
     "from the ISR as part of transition to OfflineReplica"),
     ("t", 0), {"leader": 1, "isr": (1, 3), "leader_epoch": 4}),
    ("replica state changed", "1.1.1 - 3.8.0: controller/ReplicaStateMachine.scala",
     "Changed state of replica 2 for partition t-0 from OnlineReplica to OfflineReplica", ("t", 0), {}),
    ("failed replica state change", "2.4.1: controller/ReplicaStateMachine.scala logFailedStateChange",
     ("Controller 1 epoch 3 initiated state change of replica 2 for partition t-0 from OnlineReplica to "
     "OfflineReplica failed"), ("t", 0), {}),
    # ControllerChannelManager: the state sent (PartitionState.toString 1.1; generated toString 2.4+)
    ("LeaderAndIsr sent", "1.1.1: controller/ControllerChannelManager.scala, LeaderAndIsrRequest.PartitionState",
     ("Sending become-leader LeaderAndIsr request PartitionState(controllerEpoch=1, leader=1, leaderEpoch=2, isr=1,2, "
     "zkVersion=3, replicas=1,2,3, isNew=false) to broker 1 for partition t-0"),
     ("t", 0), {"leader": 1, "isr": (1, 2), "leader_epoch": 2, "partition_epoch": 3, "memory_replicas": (1, 2, 3)}),
    ("LeaderAndIsr sent", "2.4.1 - 3.8.0: controller/ControllerChannelManager.scala, LeaderAndIsrPartitionState",
     ("Sending become-follower LeaderAndIsr request LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, "
     "controllerEpoch=1, leader=1, leaderEpoch=2, isr=[1, 2], zkVersion=3, replicas=[3, 1, 2], addingReplicas=[3], "
     "removingReplicas=[2], isNew=false) to broker 3 for partition t-0"),
     ("t", 0), {"leader": 1, "isr": (1, 2), "leader_epoch": 2, "partition_epoch": 3, "memory_replicas": (3, 1, 2),
                "memory_adding": (3,), "memory_removing": (2,)}),
    ("UpdateMetadata sent", "1.1.1: controller/ControllerChannelManager.scala, UpdateMetadataRequest.PartitionState",
     ("Sending UpdateMetadata request PartitionState(controllerEpoch=1, leader=2, leaderEpoch=5, isr=[2, 3], "
     "zkVersion=6, replicas=[1, 2, 3], offlineReplicas=[]) to brokers Set(1, 2, 3) for partition t-0"),
     ("t", 0), {"leader": 2, "isr": (2, 3), "leader_epoch": 5, "partition_epoch": 6}),
    ("StopReplica sent", "2.8.2: controller/ControllerChannelManager.scala",
     ("Sending StopReplica request StopReplicaPartitionState(partitionIndex=0, leaderEpoch=5, deletePartition=true) "
     "to broker 2 for partition t-0"), ("t", 0), {}),
    ("requests sent (summary)", "2.8.2: controller/ControllerChannelManager.scala",
     "Sending LeaderAndIsr request to broker 1 with 1 become-leader and 0 become-follower partitions", None, {}),
    ("requests sent (summary)", "2.8.2: controller/ControllerChannelManager.scala",
     "Sending UpdateMetadata request to brokers HashSet(1, 2) for 1 partitions", None, {}),
    ("requests sent (summary)", "2.8.2: controller/ControllerChannelManager.scala",
     "Sending StopReplica request (delete = true) for 1 replicas to broker 2", None, {}),
    # KafkaController: topic creation, startup, elections
    ("new topics", "2.4.1 - 3.8.0: controller/KafkaController.scala processTopicChange",
     ("New topics: [Set(t)], deleted topics: [HashSet()], new partition replica assignment [Map(t-0 -> "
     "ReplicaAssignment(replicas=1,2,3, addingReplicas=, removingReplicas=))]"), None, {}),
    ("new topics", "1.1.1: controller/KafkaController.scala (assignment as a Seq)",
     "New topics: [Set(t)], deleted topics: [Set()], new partition replica assignment [Map(t-0 -> Vector(1, 2, 3))]",
     None, {}),
    ("new partition creation callback", "1.1.1 - 3.8.0: controller/KafkaController.scala onNewPartitionCreation",
     "New partition creation callback for t-0,t-1", None, {}),
    ("reassignments at startup", "1.1.1: controller/KafkaController.scala initializePartitionReassignment",
     "Partitions being reassigned: Map(t-0 -> List(3, 1))", None, {}),
    ("preferred election started", "1.1.1: controller/KafkaController.scala onPreferredReplicaElection",
     "Starting preferred replica leader election for partitions t-0", None, {}),
    ("automatic preferred election", "2.4.1 - 3.8.0: controller/KafkaController.scala",
     "Processing automatic preferred replica leader election", None, {}),
    ("reassignment before KIP-455", "2.3.1: controller/KafkaController.scala (not the zk profile's algorithm)",
     "Updated assigned replicas for partition t-0 being reassigned to 3,1", None, {}),
    ("reassignment before KIP-455", "2.3.1: controller/KafkaController.scala",
     "New replicas 3,1 for partition t-0 being reassigned not yet caught up with the leader", None, {}),
    ("failed reassignment", "2.4.1 - 3.8.0: controller/KafkaController.scala",
     "Failed reassignment through zk with the following errors: Map(t-0 -> ...)", None, {}),
    # the broker: cluster/Partition.scala (logIdent "[Partition $topicPartition broker=$localBrokerId] "), ReplicaManager
    ("ISR updated", "2.4.1: cluster/Partition.scala",
     "[Partition t-0 broker=1] ISR updated to [1,2,3] and zkVersion updated to [9]",
     ("t", 0), {"leader": 1, "isr": (1, 2, 3), "partition_epoch": 9}),
    ("ISR updated", "2.8.2: cluster/Partition.scala",
     "[Partition t-0 broker=1] ISR updated to 1,2,3 and version updated to [9]",
     ("t", 0), {"leader": 1, "isr": (1, 2, 3), "partition_epoch": 9}),
    ("ISR updated", "3.8.0: cluster/Partition.scala",
     "[Partition t-0 broker=1] ISR updated to 1,2 (under-min-isr) and version updated to 9",
     ("t", 0), {"isr": (1, 2), "partition_epoch": 9}),
    ("expanding ISR", "1.1.1 - 2.6: cluster/Partition.scala maybeExpandIsr",
     "[Partition t-0 broker=1] Expanding ISR from 1,2 to 1,2,3", None, {}),
    ("shrinking ISR", "2.8.2 - 3.8.0: cluster/Partition.scala maybeShrinkIsr",
     ("[Partition t-0 broker=1] Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 10, endOffset: 12). "
     "Out of sync replicas: (brokerId: 3, endOffset: 5)."), None, {}),
    ("stale zkVersion", "1.1.1: cluster/Partition.scala",
     "[Partition t-0 broker=1] Cached zkVersion [7] not equal to that in zookeeper, skip updating ISR", None, {}),
    ("stale zkVersion", "2.4.1: cluster/Partition.scala",
     "[Partition t-0 broker=1] Cached zkVersion 7 not equal to that in zookeeper, skip updating ISR", None, {}),
    ("LeaderAndIsr ignored", "2.4.1: server/ReplicaManager.scala becomeLeaderOrFollower",
     ("[Broker id=2] Ignoring LeaderAndIsr request from controller 1 with correlation id 5 epoch 3 for partition t-0 "
     "since its associated leader epoch 4 is not higher than the current leader epoch 4"), None, {}),
    ("LeaderAndIsr received", "2.8.2: server/ReplicaManager.scala",
     "[Broker id=2] Handling LeaderAndIsr request correlationId 5 from controller 1 for 3 partitions", None, {}),
    ("become-leader/follower", "2.4.1: server/ReplicaManager.scala makeLeaders",
     ("[Broker id=1] Skipped the become-leader state change after marking its partition as leader with correlation "
     "id 5 from controller 1 epoch 3 for partition t-0 (last update controller epoch 3) since it is already the "
     "leader for the partition."), None, {}),
    ("leader info cached", "2.4.1: server/MetadataCache.scala",
     ("[Broker id=2] Cached leader info UpdateMetadataPartitionState(topicName='t', partitionIndex=0, controllerEpoch=3, "
     "leader=1, leaderEpoch=4, isr=[1, 2], zkVersion=5, replicas=[1, 2], offlineReplicas=[]) for partition t-0 in "
     "response to UpdateMetadata request sent by controller 1 epoch 3 with correlation id 6"), None, {}),
]


@pytest.mark.parametrize("shape, source, line, tp, fields", CASES, ids=[f"{c[0]} ({c[1][:6]})" for c in CASES])
def test_each_shape_is_read_from_kafkas_format_string(shape, source, line, tp, fields):
    found = match_line(P + line)
    assert found is not None and found[0].name == shape, (found and found[0].name)
    parsed = parse_log(P + line + "\n")
    assert parsed.recognised == 1 and parsed.shapes == {shape: 1}
    if found[0].kind == "state":
        obs = parsed.observations[0]
        if tp is not None:
            assert (obs.topic, obs.partition) == tp
        got = dict(obs.fields)
        assert {k: got.get(k) for k in fields} == fields
    else:
        assert parsed.observations == []
    if found[0].kind == "outside":
        assert parsed.outside == {shape: [1]}


def test_every_shape_has_a_case():
    assert {s.name for s in SHAPES} - {c[0] for c in CASES} == {"controlled shutdown"}


def test_creation_lines_give_the_replicas_of_new_partitions():
    parsed = parse_log(
        "New topics: [Set(t)], deleted topics: [Set()], new partition replica assignment "
        "[Map(t-0 -> Vector(1, 2, 3), t-1 -> Vector(2, 3, 1))]\n"
        "Changed partition u-0 state from NonExistentPartition to NewPartition with assigned replicas 3,1\n"
        "New topics: [Set(v)], deleted topics: [Set()], new partition replica assignment "
        "[HashMap(v-0 -> ReplicaAssignment(replicas=2,1, addingReplicas=, removingReplicas=))]\n")
    assert parsed.created == {("t", 0): ((1, 2, 3), 1), ("t", 1): ((2, 3, 1), 1), ("u", 0): ((3, 1), 2),
                              ("v", 0): ((2, 1), 3)}
    # a topic deletion in the same line is outside the model
    deleted = parse_log("New topics: [Set()], deleted topics: [Set(t)], new partition replica assignment [Map()]\n")
    assert deleted.outside == {"topic deletion": [1]}


@pytest.mark.parametrize("prefix", [
    "",
    "[2024-01-02 03:04:05,678] TRACE ",  # log4j default "[%d] %p %m (%c)%n"
    "2024-01-02 03:04:05,678 INFO ",  # no brackets
    "2024-01-02T03:04:05.678Z INFO [controller-event-thread] ",  # ISO time, thread name
    "kafka-1  | [2024-01-02 03:04:05,678] INFO ",  # docker compose
    "kafka-0 kafka [2024-01-02 03:04:05,678] INFO ",  # kubectl logs --prefix style
])
def test_log4j_and_container_prefixes(prefix):
    line = ("[Controller id=1 epoch=2] Changed partition t-0 from OfflinePartition to OnlinePartition with state "
            "LeaderAndIsr(leader=2, leaderEpoch=1, isr=List(2, 3), zkVersion=1) (state.change.logger)")
    parsed = parse_log(prefix + line + "\n")
    assert dict(parsed.observations[0].fields)["leader"] == 2 and dict(parsed.observations[0].fields)[
        "controller_epoch"] == 2


def test_docker_json_file_lines_are_unwrapped():
    import json

    wrapped = json.dumps({"log": "[2024-01-02 03:04:05,678] INFO Updated leader epoch for partition t-0 to 3, "
                                 "zkVersion=7 (kafka.controller.KafkaController)\n", "stream": "stdout",
                          "time": "2024-01-02T03:04:05.678Z"})
    parsed = parse_log(wrapped + "\n")
    assert dict(parsed.observations[0].fields) == {"leader_epoch": 3, "partition_epoch": 7}
    from kreassign.checker.traces.validation import guess_format

    assert guess_format(wrapped) == "kafka-log"
