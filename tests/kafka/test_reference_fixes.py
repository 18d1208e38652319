"""The reference fixes Kafka proved right (docs/kafka.md, "Divergences found"), each checked both ways:
the reference gives the expected answer, and Kafka 3.9's controller gives the same state and response."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.oracle.differential import compare_step
from kreassign.checker.oracle.kafka_lockstep import reference_profile
from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import Broker, make_cluster

S = make_cluster([1, 2, 3, 4], {"t": [[1, 2, 3]]})
FENCED_3 = S.with_broker(Broker(3, active=False))
# leaderless with an active ISR member (an injected state: the oracle may be asked about any state)
LEADERLESS = S.with_broker(Broker(1, active=False)).with_partition(
    "t", 0, replace(S.partition("t", 0), leader=-1, isr=(1, 2)))
NO_LIVE = S.with_broker(Broker(1, active=False)).with_broker(Broker(2, active=False)).with_broker(
    Broker(3, active=False)).with_partition("t", 0, replace(S.partition("t", 0), leader=-1, isr=(1,)))

CASES = [
    # ElectLeaders answers the errors' default messages (ApiError(Errors.X)), not their names
    ("preferred-not-needed", S, A.ElectLeaders("t", 0, A.PREFERRED),
     (M.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")),
    ("unclean-not-needed", S, A.ElectLeaders("t", 0, A.UNCLEAN),
     (M.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")),
    ("unclean-nobody-live", NO_LIVE, A.ElectLeaders("t", 0, A.UNCLEAN),
     (M.ELIGIBLE_LEADERS_NOT_AVAILABLE, "Eligible topic partition leaders are not available.")),
    ("unknown-topic", S, A.ElectLeaders("x", 0, A.PREFERRED), (M.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as x")),
    # a PREFERRED election that writes a record succeeds even if the preferred replica does not lead
    ("preferred-elects-another", LEADERLESS, A.ElectLeaders("t", 0, A.PREFERRED), (M.NONE, None)),
    # AlterPartition: validateAlterPartitionData's order and codes
    ("epochs-ahead", S, A.AlterPartition("t", 0, 1, (1, 2), 5, 0), (M.NOT_CONTROLLER, "NOT_CONTROLLER")),
    ("partition-epoch-ahead", S, A.AlterPartition("t", 0, 1, (1, 2), 0, 3), (M.NOT_CONTROLLER, "NOT_CONTROLLER")),
    ("not-the-leader", S, A.AlterPartition("t", 0, 2, (1, 2), 0, 0), (M.INVALID_REQUEST, "INVALID_REQUEST")),
    ("isr-outside-replicas", S, A.AlterPartition("t", 0, 1, (1, 4), 0, 0), (M.INVALID_REQUEST, "INVALID_REQUEST")),
    ("fenced-member-v2", FENCED_3, A.AlterPartition("t", 0, 1, (1, 2, 3), 0, 0, version=2),
     (M.INELIGIBLE_REPLICA, "INELIGIBLE_REPLICA")),
    ("fenced-member-v1", FENCED_3, A.AlterPartition("t", 0, 1, (1, 2, 3), 0, 0, version=1),
     (M.OPERATION_NOT_ATTEMPTED, "OPERATION_NOT_ATTEMPTED")),
    ("unregistered-requester", S, A.AlterPartition("t", 0, 9, (1, 2), 0, 0), (77, "STALE_BROKER_EPOCH")),
    ("unknown-topic-id", S, A.AlterPartition("x", 0, 1, (1,), 0, 0), (100, "UNKNOWN_TOPIC_ID")),
]


@pytest.mark.parametrize("name,state,action,expected", CASES, ids=[c[0] for c in CASES])
def test_reference_fix_agrees_with_kafka(kafka, name, state, action, expected):
    ref = reference_profile("3.9-IV0", kafka_version="3.9.2").apply(state, action)
    assert (ref.response.error_code, ref.response.error_message) == expected
    if expected[0] != M.NONE:
        assert ref.state == state  # a failed election or a rejected AlterPartition writes nothing
    kafka.reset("kraft", state)
    k_state, k_response = kafka.apply(action)
    assert compare_step(ref.state, ref.response, k_state, k_response) == []


def test_preferred_election_of_another_replica_moves_the_leader():
    step = reference_profile("3.9-IV0", kafka_version="3.9.2").apply(LEADERLESS, A.ElectLeaders("t", 0, A.PREFERRED))
    p = step.state.partition("t", 0)
    assert (p.leader, p.leader_epoch) == (2, 1)


def test_isr_shrink_bumps_the_leader_epoch_before_metadata_version_3_6():
    for mv, bump in (("3.3-IV0", 1), ("3.5-IV2", 1), ("3.6-IV0", 0), ("3.9-IV0", 0)):
        p = reference_profile(mv, kafka_version="3.9.2").apply(S, A.LeaderShrinkIsr("t", 0, 3)).state.partition("t", 0)
        assert (p.isr, p.leader_epoch, p.partition_epoch) == ((1, 2), bump, 1), mv
        p = reference_profile(mv, kafka_version="3.9.2").apply(S.with_partition("t", 0, replace(S.partition("t", 0), isr=(1, 2))),
                                        A.LeaderExpandIsr("t", 0, 3)).state.partition("t", 0)
        assert p.leader_epoch == 0, mv  # expansions never bump
