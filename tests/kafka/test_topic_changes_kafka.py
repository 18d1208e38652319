"""Topics that change during a reassignment, on Kafka 3.9's own KRaft controller: CreatePartitions
(ReplicationControlManager.createPartitions) and DeleteTopics (deleteTopics + replay(RemoveTopicRecord)),
in lockstep with the reference (reference/topic_changes.py)."""

from __future__ import annotations

from kreassign.checker.check.run import HOLDS, KNOWN
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.implementations.kafka import differences as D
from kreassign.checker.oracle.differential import MATCH_PROPERTY, compare_step
from kreassign.checker.oracle.kafka_lockstep import reference_profile
from kreassign.reference.capabilities import Capabilities, apply_action
from kreassign.reference.topic_changes import partition_zero_replication_factor
from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import Broker, make_cluster
from lockstep_run import run_lockstep

K39 = "kafka[version=3.9.2]"  # the release these tests pin (its counts and findings)

KRAFT = reference_profile(kafka_version="3.9.2")  # the release these tests run


def outcome(kafka, state, action, capabilities=None):
    """(Kafka's state, Kafka's response, the diff lines no allowed difference explains)."""
    ref = (capabilities or Capabilities()).apply(KRAFT, state, action)
    kafka.reset("kraft", state)
    k_state, k_response = kafka.apply(action)
    lines = tuple(compare_step(ref.state, ref.response, k_state, k_response))
    return k_state, k_response, (lines if D.explain(state, action, lines) is None else ())


def reassigning():
    s = make_cluster([1, 2, 3], {"t": [[1, 2]]})
    return KRAFT.apply(s, A.Reassign("t", 0, (2, 3))).state  # replicas [2,3,1], adding [3], removing [1]


def test_kafka_gives_new_partitions_partition_zeros_full_replica_count_as_the_reference_does(kafka):
    s = reassigning()
    k_state, response, unexplained = outcome(kafka, s, A.CreatePartitions("t", 2))
    assert response == M.Ack() and unexplained == ()
    new = k_state.partition("t", 1)
    assert len(new.replicas) == 3 and new.isr == new.replicas and new.leader == new.replicas[0]  # |[1,2] ∪ [2,3]|
    # the broker's replication factor (replicas − adding) is not Kafka's rule: the lockstep says so,
    # the placement allowance notwithstanding
    _, _, unexplained = outcome(kafka, s, A.CreatePartitions("t", 2), Capabilities(rf_rule=partition_zero_replication_factor))
    assert any(line.startswith("state.topics[0].partitions[1].replicas:") for line in unexplained)


def test_a_fenced_broker_gets_a_replica_after_every_unfenced_one(kafka):
    """Found by the lockstep: StripedReplicaPlacer counts registered brokers and places fenced ones last
    (ISR = the unfenced replicas); the reference refused with INVALID_REPLICATION_FACTOR."""
    s = make_cluster([1, 2], {"t": [[1]]})
    s = KRAFT.apply(s, A.Reassign("t", 0, (2,))).state  # replicas [2,1]: two replicas while reassigning
    s = KRAFT.apply(s, A.BrokerFail(1)).state
    k_state, response, unexplained = outcome(kafka, s, A.CreatePartitions("t", 2))
    new = k_state.partition("t", 1)
    assert response == M.Ack() and unexplained == ()
    assert (new.replicas, new.isr, new.leader) == ((2, 1), (2,), 2)
    both_down = s.with_broker(Broker(2, active=False))
    _, response, unexplained = outcome(kafka, both_down, A.CreatePartitions("t", 2))
    assert response == M.Ack(38, "All brokers are currently fenced.") and unexplained == ()


def test_create_partitions_errors_match_kafkas_messages(kafka):
    s = reassigning()
    for count in (1, 0):
        _, response, unexplained = outcome(kafka, s, A.CreatePartitions("t", count))
        assert response.error_code == 37 and unexplained == (), response


def test_deleting_a_reassigning_topic_leaves_nothing_for_list_reassignments(kafka):
    s = reassigning()
    k_state, response, unexplained = outcome(kafka, s, A.DeleteTopic("t"))
    assert response == M.Ack() and k_state.topics == () and unexplained == ()
    # the same controller, without a reset: replay(RemoveTopicRecord) dropped t from reassigningTopics
    kafka.reset("kraft", s)
    kafka.apply(A.DeleteTopic("t"))
    _, listed = kafka.apply(A.ListReassignments())
    assert listed.topics == () == KRAFT.list_partition_reassignments(apply_action(KRAFT, s, A.DeleteTopic("t")).state).topics
    _, response, unexplained = outcome(kafka, s, A.DeleteTopic("u"))
    assert response == M.Ack(3, "This server does not host this topic-partition.") and unexplained == ()


def _lockstep(kafka, bounds):
    return run_lockstep(K39, bounds, impl=kafka)


def test_lockstep_with_create_partitions_during_reassignments(kafka):
    result, stats = _lockstep(kafka, Bounds(brokers=2, rf=1, reassigns=1, cancels=1, failures=1, create_partitions=2))
    assert result.properties[MATCH_PROPERTY].status == HOLDS and stats.mismatches == 0
    assert stats.steps == result.transitions > 1000 and stats.allowed["create_partitions_placement"] > 0
    # Kafka itself gives the new partitions |original ∪ target| replicas (the declared finding)
    assert result.properties["created_partitions_get_replication_factor"].status == KNOWN and not result.unexpected


def test_lockstep_with_topic_deletion_during_reassignments(kafka):
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, delete_topic=True)
    result, stats = _lockstep(kafka, bounds)
    assert result.properties[MATCH_PROPERTY].status == HOLDS and stats.mismatches == 0 and not stats.allowed
    for name in ("no_reassignment_outlives_its_topic", "accepted_deletion_takes_effect"):
        assert result.properties[name].status == HOLDS
    assert not result.unexpected and stats.steps == result.transitions > 500


def test_the_placement_allowance_never_excuses_a_replication_factor(kafka):
    s = reassigning()
    after = apply_action(KRAFT, s, A.CreatePartitions("t", 2)).state
    p = after.partition("t", 1)
    ref = ",".join(map(str, p.replicas))  # as the diff prints it
    line = f"state.topics[0].partitions[1].replicas: reference [{ref}], implementation [1,2]"
    assert D.explain(s, A.CreatePartitions("t", 2), (line,)) is None  # 3 replicas against 2
    moved = f"state.topics[0].partitions[1].replicas: reference [{ref}], implementation [3,1,2]"
    assert D.explain(s, A.CreatePartitions("t", 2), (moved,)) == "create_partitions_placement"
    assert D.explain(s, A.CreatePartitions("t", 2), (moved.replace("partitions[1]", "partitions[0]"),)) is None
    assert D.explain(s, A.DeleteTopic("t"), (moved,)) is None
