"""The `kraft` and `kraft-3.7` profiles: every rule of KAFKA-SEMANTICS.md (kraft) pinned by an example."""

from __future__ import annotations

import pytest
from kreassign.reference import profile
from kreassign.reference.kraft import KraftProfile, kraft_plan
from kreassign.spec import messages as M
from kreassign.spec.actions import (
    PREFERRED,
    UNCLEAN,
    AlterPartition,
    AlterReassignments,
    BrokerFail,
    BrokerRecover,
    Cancel,
    ControllerFailover,
    ElectLeaders,
    LeaderExpandIsr,
    LeaderShrinkIsr,
    ListReassignments,
    Reassign,
)
from kreassign.spec.messages import (
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsTopics,
    ReassignablePartition,
    ReassignableTopic,
)
from kreassign.spec.state import NO_LEADER, Broker, make_cluster

KRAFT = KraftProfile(kafka_version="3.9.2")  # the rules of 3.8 - 4.2 these tests pin (4.x: test_kraft_releases.py)
KRAFT37 = profile("kraft-3.7")


def cluster(replicas=(1, 2, 3), brokers=range(1, 8), unclean=False, **kw):
    return make_cluster(brokers, {"t": [list(replicas)]}, unclean=["t"] if unclean else [], **kw)


def run(prof, state, *actions):
    """Apply actions in order; return the final state and the last response."""
    resp = None
    for a in actions:
        step = prof.apply(state, a)
        state, resp = step.state, step.response
    return state, resp


def part(state):
    return state.partition("t", 0)


def err(resp, topic="t", index=0):
    return resp.partition_error(topic, index)


# -- planning -----------------------------------------------------------------------------------


def test_plan_sorts_adding_and_removing_by_id_and_puts_target_first():
    plan = kraft_plan((3, 1, 2), (6, 2, 4))
    assert plan.removing == (1, 3)
    assert plan.adding == (4, 6)
    assert plan.replicas == (6, 2, 4, 1, 3)


def test_plan_from_full_current_list_during_a_reassignment():
    # current = [4,5,6,1,2,3] while reassigning [1,2,3] -> [4,5,6]; new target [1,2,7]
    plan = kraft_plan((4, 5, 6, 1, 2, 3), (1, 2, 7))
    assert plan.removing == (3, 4, 5, 6)
    assert plan.adding == (7,)
    assert plan.replicas == (1, 2, 7, 3, 4, 5, 6)


def test_start_of_reassignment_writes_plan_and_does_not_bump_leader_epoch():
    s, resp = run(KRAFT, cluster(), Reassign("t", 0, (4, 5, 6)))
    p = part(s)
    assert err(resp) == (M.NONE, None)
    assert (p.replicas, p.adding, p.removing) == ((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert p.isr == (1, 2, 3) and p.leader == 1
    assert p.leader_epoch == 0 and p.partition_epoch == 1


# -- validation, in Kafka's order, with Kafka's messages -------------------------------------------


def test_unknown_topic_then_unknown_partition_messages():
    s = cluster()
    _, resp = run(KRAFT, s, Reassign("nope", 0, (1, 2, 3)))
    assert err(resp, "nope") == (3, "Unable to find a topic named nope.")
    _, resp = run(KRAFT, s, Reassign("t", 5, (1, 2, 3)))
    assert err(resp, "t", 5) == (3, "Unable to find partition t:5.")
    _, resp = run(KRAFT, s, Cancel("t", 5))
    assert err(resp, "t", 5) == (3, "Unable to find partition t:5.")


def test_empty_replica_list():
    _, resp = run(KRAFT, cluster(), Reassign("t", 0, ()))
    assert err(resp) == (39, "The manual partition assignment includes an empty replica list.")


def test_brokers_checked_in_ascending_order_unregistered_before_duplicate():
    s = cluster(brokers=range(1, 6))
    # ascending: 2, 2, 9 -> the duplicate 2 is found before the unregistered 9
    _, resp = run(KRAFT, s, Reassign("t", 0, (9, 2, 2)))
    assert err(resp) == (39, "The manual partition assignment includes the broker 2 more than once.")
    # ascending: 8, 9 -> 8 is reported although 9 comes first in the request
    _, resp = run(KRAFT, s, Reassign("t", 0, (9, 8)))
    assert err(resp) == (39, "The manual partition assignment includes broker 8, but no such broker is registered.")


def test_negative_id_fails_as_not_registered_and_fenced_broker_is_accepted():
    s = cluster()
    _, resp = run(KRAFT, s, Reassign("t", 0, (1, -1, 2)))
    assert err(resp) == (39, "The manual partition assignment includes broker -1, but no such broker is registered.")
    s = s.with_broker(Broker(5, registered=True, active=False))
    s2, resp = run(KRAFT, s, Reassign("t", 0, (1, 2, 5)))
    assert err(resp) == (0, None)
    assert part(s2).adding == (5,)


def test_replication_factor_may_change():
    s, resp = run(KRAFT, cluster(), Reassign("t", 0, (1, 2, 3, 4, 5)))
    assert err(resp) == (0, None)
    assert part(s).adding == (4, 5) and part(s).removing == ()


def test_each_partition_on_its_own_and_records_commit_together():
    s = make_cluster(range(1, 6), {"t": [[1, 2], [2, 3]]})
    req = AlterPartitionReassignmentsRequest(
        topics=(
            ReassignableTopic(
                "t",
                (
                    ReassignablePartition(0, (3, 4)),
                    ReassignablePartition(1, ()),  # fails
                    ReassignablePartition(7, (1,)),  # fails
                ),
            ),
        )
    )
    s2, resp = run(KRAFT, s, AlterReassignments(req))
    assert [p.error_code for p in resp.responses[0].partitions] == [0, 39, 3]
    assert s2.partition("t", 0).adding == (3, 4)
    assert s2.partition("t", 1) == s.partition("t", 1)


# -- override and the empty-plan-list rule --------------------------------------------------------


def test_override_keeps_old_adding_when_the_new_plan_adds_nothing():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (1, 2, 4)), LeaderShrinkIsr("t", 0, 2))
    # now target [1,2,3]: plan removing = [4], adding = [] -> adding stays [4]
    s2, resp = run(KRAFT, s, Reassign("t", 0, (1, 2, 3)))
    p = part(s2)
    assert err(resp) == (0, None)
    assert p.replicas == (1, 2, 3, 4)
    assert p.removing == (4,)
    assert p.adding == (4,)  # the old adding list survives: adding ∩ removing ≠ ∅


def test_cancel_after_override_does_not_restore_the_original_replica_set():
    # original [1,2,3] -> [1,2,4] (adding [4], removing [3]) -> override [1,2,5]
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (1, 2, 4)), Reassign("t", 0, (1, 2, 5)))
    assert (part(s).replicas, part(s).adding, part(s).removing) == ((1, 2, 5, 3, 4), (5,), (3, 4))
    s2, resp = run(KRAFT, s, Cancel("t", 0))
    assert err(resp) == (0, None)
    assert part(s2).replicas == (1, 2, 3, 4)  # 4 stays: not the original {1,2,3}
    assert not part(s2).reassigning


# -- completion -----------------------------------------------------------------------------------


def test_completion_moves_leadership_to_the_target_and_answers_new_leader_elected():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (4, 5, 6)), LeaderExpandIsr("t", 0, 4), LeaderExpandIsr("t", 0, 5))
    assert part(s).reassigning
    s2, resp = run(KRAFT, s, LeaderExpandIsr("t", 0, 6))
    p = part(s2)
    assert (p.replicas, p.isr, p.leader, p.adding, p.removing) == ((4, 5, 6), (4, 5, 6), 4, (), ())
    assert p.leader_epoch == 1
    assert resp.error_code == M.NEW_LEADER_ELECTED


def test_completion_answers_fenced_leader_epoch_to_old_alter_partition_versions():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (4, 2, 3)))
    p = part(s)
    _, resp = run(KRAFT, s, AlterPartition("t", 0, 1, (1, 2, 3, 4), p.leader_epoch, p.partition_epoch, version=1))
    assert resp.error_code == M.FENCED_LEADER_EPOCH


def test_completion_that_keeps_the_leader_bumps_its_epoch():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (1, 2, 4)))
    s2, resp = run(KRAFT, s, LeaderExpandIsr("t", 0, 4))
    p = part(s2)
    assert (p.replicas, p.isr, p.leader) == ((1, 2, 4), (1, 2, 4), 1)
    assert p.leader_epoch == 1  # replicas shrank: epoch bump without a leader change
    assert resp == M.Ack()


def test_kraft_does_not_complete_while_a_retained_target_replica_is_out_of_the_isr():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (1, 2, 4)), LeaderShrinkIsr("t", 0, 2), LeaderExpandIsr("t", 0, 4))
    assert part(s).reassigning
    assert part(s).isr == (1, 3, 4)


def test_kraft37_completes_with_a_target_replica_outside_the_isr():
    s, _ = run(KRAFT37, cluster(), Reassign("t", 0, (1, 2, 4)), LeaderShrinkIsr("t", 0, 2), LeaderExpandIsr("t", 0, 4))
    p = part(s)
    assert not p.reassigning
    assert p.replicas == (1, 2, 4) and p.isr == (1, 4)  # 2 is a replica outside the ISR


def test_request_completes_at_once_when_the_target_is_already_in_sync():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (2, 3)))
    p = part(s)
    assert (p.replicas, p.isr, p.leader, p.reassigning) == ((2, 3), (2, 3), 2, False)
    assert p.leader_epoch == 1 and p.partition_epoch == 1


# -- cancellation ---------------------------------------------------------------------------------


def test_cancel_of_idle_partition_is_85_with_null_message():
    _, resp = run(KRAFT, cluster(), Cancel("t", 0))
    assert err(resp) == (85, None)


def test_cancel_keeps_merged_order_and_drops_adding_even_from_the_isr():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (3, 2, 4, 5)), LeaderExpandIsr("t", 0, 4), LeaderShrinkIsr("t", 0, 2))
    p = part(s)
    assert (p.replicas, p.adding, p.removing, p.isr) == ((3, 2, 4, 5, 1), (4, 5), (1,), (1, 3, 4))
    s2, resp = run(KRAFT, s, Cancel("t", 0))
    q = part(s2)
    assert err(resp) == (0, None)
    assert q.replicas == (3, 2, 1)  # not the original order [1,2,3]
    assert q.isr == (1, 3)  # 4 dropped although in sync; 2 (removed from ISR) is not re-added
    assert q.leader == 1 and q.leader_epoch == p.leader_epoch + 1


def _unclean_revert_scenario(unclean):
    # [1,2] -> [3,4]; 3 joins; 1 and 2 fail; 1 recovers: ISR = [3] (an adding replica only)
    s = make_cluster(range(1, 6), {"t": [[1, 2]]}, unclean=["t"] if unclean else [])
    s, _ = run(KRAFT, s, Reassign("t", 0, (3, 4)), LeaderExpandIsr("t", 0, 3), BrokerFail(1), BrokerFail(2), BrokerRecover(1))
    assert part(s).isr == (3,) and part(s).leader == 3
    return s


def test_cancel_that_needs_an_unclean_election_is_refused_by_default():
    s = _unclean_revert_scenario(unclean=False)
    s2, resp = run(KRAFT, s, Cancel("t", 0))
    assert err(resp) == (
        39,
        "Unable to revert partition assignment for t:0 because it would require an unclean leader election.",
    )
    assert s2 == s


def test_cancel_with_unclean_election_enabled_reverts_to_the_first_replica():
    s = _unclean_revert_scenario(unclean=True)
    s2, resp = run(KRAFT, s, Cancel("t", 0))
    p = part(s2)
    assert err(resp) == (0, None)
    assert (p.replicas, p.isr, p.leader, p.reassigning) == ((1, 2), (1,), 1, False)


# -- ISR changes, fencing, elections ----------------------------------------------------------------


def test_isr_shrink_does_not_bump_leader_epoch_and_expansion_never_does():
    s, _ = run(KRAFT, cluster(), LeaderShrinkIsr("t", 0, 3))
    assert part(s).isr == (1, 2) and part(s).leader_epoch == 0 and part(s).partition_epoch == 1
    s, _ = run(KRAFT, s, LeaderExpandIsr("t", 0, 3))
    assert part(s).isr == (1, 2, 3) and part(s).leader_epoch == 0 and part(s).partition_epoch == 2


def test_alter_partition_rejects_stale_epochs_and_ineligible_replicas():
    s = cluster()
    # epochs ahead of the controller's: NOT_CONTROLLER (validateAlterPartitionData; checked against Kafka 3.9)
    _, resp = run(KRAFT, s, AlterPartition("t", 0, 1, (1, 2), leader_epoch=5, partition_epoch=0))
    assert resp.error_code == M.NOT_CONTROLLER
    _, resp = run(KRAFT, s, AlterPartition("t", 0, 1, (1, 2), leader_epoch=0, partition_epoch=3))
    assert resp.error_code == M.NOT_CONTROLLER
    # epochs behind: FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION
    s_ahead, _ = run(KRAFT, s, BrokerFail(1), BrokerRecover(1), LeaderExpandIsr("t", 0, 1))
    p = part(s_ahead)
    _, resp = run(KRAFT, s_ahead, AlterPartition("t", 0, p.leader, p.isr, p.leader_epoch - 1, p.partition_epoch))
    assert resp.error_code == M.FENCED_LEADER_EPOCH
    _, resp = run(KRAFT, s_ahead, AlterPartition("t", 0, p.leader, p.isr, p.leader_epoch, p.partition_epoch - 1))
    assert resp.error_code == M.INVALID_UPDATE_VERSION
    s2 = s.with_broker(Broker(3, active=False))
    s3, resp = run(KRAFT, s2, AlterPartition("t", 0, 1, (1, 2, 3), 0, 0))
    assert resp.error_code == M.INELIGIBLE_REPLICA and s3 == s2


def test_fencing_the_leader_elects_the_next_isr_member_in_replica_order():
    s, _ = run(KRAFT, cluster(replicas=(1, 2, 3)), LeaderShrinkIsr("t", 0, 2), BrokerFail(1))
    p = part(s)
    assert (p.leader, p.isr, p.leader_epoch) == (3, (3,), 1)


def test_empty_isr_is_never_written_and_recovery_of_the_last_member_restores_a_leader():
    s, _ = run(KRAFT, cluster(replicas=(1, 2)), LeaderShrinkIsr("t", 0, 2), BrokerFail(1))
    p = part(s)
    assert (p.leader, p.isr) == (NO_LEADER, (1,))  # the last member stays
    s2, _ = run(KRAFT, s, BrokerRecover(2))
    assert part(s2).leader == NO_LEADER  # 2 is not in the ISR: no clean election
    s3, _ = run(KRAFT, s2, BrokerRecover(1))
    assert part(s3).leader == 1 and part(s3).leader_epoch == p.leader_epoch + 1


def test_unclean_topic_elects_out_of_sync_replica_on_fence():
    s, _ = run(KRAFT, cluster(replicas=(1, 2), unclean=True), LeaderShrinkIsr("t", 0, 2), BrokerFail(1))
    p = part(s)
    assert (p.leader, p.isr) == (2, (2,))


def test_elect_leaders_preferred_and_unclean():
    s, _ = run(KRAFT, cluster(), BrokerFail(1), BrokerRecover(1))
    assert part(s).leader == 2 and part(s).isr == (2, 3)
    _, resp = run(KRAFT, s, ElectLeaders("t", 0, PREFERRED))
    assert resp.error_code == M.PREFERRED_LEADER_NOT_AVAILABLE  # 1 is not back in the ISR
    s, _ = run(KRAFT, s, LeaderExpandIsr("t", 0, 1))
    s2, resp = run(KRAFT, s, ElectLeaders("t", 0, PREFERRED))
    assert resp == M.Ack() and part(s2).leader == 1
    _, resp = run(KRAFT, s2, ElectLeaders("t", 0, PREFERRED))
    assert resp.error_code == M.ELECTION_NOT_NEEDED
    _, resp = run(KRAFT, s2, ElectLeaders("t", 0, UNCLEAN))
    assert resp.error_code == M.ELECTION_NOT_NEEDED
    # leaderless with only an out-of-sync live replica: UNCLEAN elects it
    s3, _ = run(KRAFT, cluster(replicas=(1, 2)), LeaderShrinkIsr("t", 0, 2), BrokerFail(1))
    s4, resp = run(KRAFT, s3, ElectLeaders("t", 0, UNCLEAN))
    assert resp == M.Ack() and (part(s4).leader, part(s4).isr) == (2, (2,))


def test_failover_changes_nothing():
    s, _ = run(KRAFT, cluster(), Reassign("t", 0, (4, 5, 6)))
    s2, resp = run(KRAFT, s, ControllerFailover())
    assert s2 == s and resp == M.Ack()


# -- ListPartitionReassignments -------------------------------------------------------------------


def test_list_only_reassigning_partitions_and_skip_unknown():
    s = make_cluster(range(1, 6), {"a": [[1, 2], [2, 3]], "b": [[1, 2]]})
    s, _ = run(KRAFT, s, Reassign("a", 1, (4, 5)))
    _, resp = run(KRAFT, s, ListReassignments())
    assert resp.topics == (
        M.OngoingTopicReassignment("a", (M.OngoingPartitionReassignment(1, (4, 5, 2, 3), (4, 5), (2, 3)),)),
    )
    req = ListPartitionReassignmentsRequest(
        topics=(ListPartitionReassignmentsTopics("a", (0, 1, 9)), ListPartitionReassignmentsTopics("zz", (0,)))
    )
    _, resp2 = run(KRAFT, s, ListReassignments(req))
    assert resp2.topics == resp.topics and resp2.error_code == 0


@pytest.mark.parametrize("name", ["kraft", "kraft-3.7"])
def test_profiles_are_registered(name):
    assert profile(name).name == name
