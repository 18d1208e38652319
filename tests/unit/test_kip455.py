"""The `kip455` profile: every rule of KAFKA-SEMANTICS.md § kip455, the seed's two traces, its findings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kreassign.reference import ActionNotSupported, ActionSpace, InvalidAction, profile
from kreassign.reference import kip455 as K
from kreassign.reference.zk_era_controller import (
    INVALID_REQUEST,
    LEADER_NOT_AVAILABLE,
    NOT_LEADER_OR_FOLLOWER,
)
from kreassign.spec import actions as A
from kreassign.spec.messages import (
    ELECTION_NOT_NEEDED,
    ELIGIBLE_LEADERS_NOT_AVAILABLE,
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REPLICA_ASSIGNMENT,
    INVALID_UPDATE_VERSION,
    NO_REASSIGNMENT_IN_PROGRESS,
    NONE,
    PREFERRED_LEADER_NOT_AVAILABLE,
    UNKNOWN_TOPIC_OR_PARTITION,
    Ack,
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsTopics,
    ReassignablePartition,
    ReassignableTopic,
)
from kreassign.spec.state import NO_LEADER, make_cluster

P = profile("kip455")


def cluster(brokers, *replica_lists, topic="t", **kw):
    return P.initial_state(make_cluster(brokers, {topic: [list(r) for r in replica_lists]}, **kw))


def run(state, *actions):
    for a in actions:
        state = P.apply(state, a).state
    return state


def rias(state, topic="t", index=0):
    """[R, I, AR, RR] of a partition, as the seed prints them."""
    p = state.partition(topic, index)
    return [list(p.replicas), list(p.isr), list(p.adding), list(p.removing)]


def code(step, topic="t", index=0):
    return step.response.partition_error(topic, index)


# -- registry and plan ------------------------------------------------------------------------------


def test_profile_is_registered():
    assert isinstance(P, K.Kip455Profile)
    assert P.name == "kip455"


def test_plan_puts_removing_replicas_first_then_the_target():
    p = P.plan((1, 2, 3), (4, 3, 2))
    assert (p.replicas, p.adding, p.removing) == ((1, 4, 3, 2), (4,), (1,))
    p = P.plan((1, 2, 3), (3, 4, 5))
    assert (p.replicas, p.adding, p.removing) == ((1, 2, 3, 4, 5), (4, 5), (1, 2))


# -- the seed's two traces, line by line ---------------------------------------------------------------


def test_seed_trace_1_reassign_to_4_3_2():
    """Seed 000, first code block of "Algorithm" (reassignment called with targetReplicas=[4,3,2])."""
    s = cluster([1, 2, 3, 4], (1, 2, 3))
    assert rias(s) == [[1, 2, 3], [1, 2, 3], [], []]
    s = P.apply(s, A.Reassign("t", 0, (4, 3, 2))).state
    assert rias(s) == [[1, 4, 3, 2], [1, 2, 3], [4], [1]]  # controller sends LeaderAndIsr
    # "Leader 1 adds 4 to ISR": the leader's write, before the controller picks it up ...
    written = K.leader_isr_write(s.partition("t", 0), (1, 2, 3, 4))
    assert (list(written.replicas), list(written.isr), list(written.adding), list(written.removing)) == (
        [1, 4, 3, 2], [1, 2, 3, 4], [4], [1])
    # ... and the controller removing 4 from AR: one model step (LeaderExpandIsr)
    assert K.pick_up(written) == P.apply(s, A.LeaderExpandIsr("t", 0, 4)).state.partition("t", 0)
    s = P.apply(s, A.LeaderExpandIsr("t", 0, 4)).state
    assert rias(s) == [[1, 4, 3, 2], [1, 2, 3, 4], [], [1]]  # "(in-memory)" line
    assert P.enabled_actions(s, ActionSpace(isr_changes=False)) == [A.ControllerStep("t", 0)]
    s = P.apply(s, A.ControllerStep("t", 0)).state
    assert rias(s) == [[4, 3, 2], [1, 2, 3, 4], [], []]  # reassignment complete
    assert s.partition("t", 0).leader == 1  # 1 still leads: not in R, and I ⊄ R (a finding)
    s = P.apply(s, A.ControllerStep("t", 0)).state
    assert rias(s) == [[4, 3, 2], [2, 3, 4], [], []]  # 1 retires, 4 leads and shrinks the ISR
    assert s.partition("t", 0).leader == 4
    assert P.enabled_actions(s, ActionSpace(isr_changes=False)) == []


def test_seed_trace_2_cancellation_reading_rr_as_1_2():
    """Seed 000, the cancellation example (targetReplicas=[3,4,5]); the seed prints RR: [] — we read [1, 2]."""
    s = cluster([1, 2, 3, 4, 5], (1, 2, 3))
    assert rias(s) == [[1, 2, 3], [1, 2, 3], [], []]
    s = P.apply(s, A.Reassign("t", 0, (3, 4, 5))).state
    assert rias(s) == [[1, 2, 3, 4, 5], [1, 2, 3], [4, 5], [1, 2]]
    s = P.apply(s, A.LeaderExpandIsr("t", 0, 4)).state
    assert rias(s) == [[1, 2, 3, 4, 5], [1, 2, 3, 4], [5], [1, 2]]
    s = P.apply(s, A.Cancel("t", 0)).state
    assert rias(s) == [[1, 2, 3, 4], [1, 2, 3, 4], [], []]


# -- findings ------------------------------------------------------------------------------------------


def test_finding_rf_above_original_after_cancel_shortest():
    """kip455 leaves the replication factor above the original after a cancel: RF 1 -> 2 in 3 steps."""
    s = cluster(2, (0,))
    s = run(s, A.Reassign("t", 0, (1,)), A.LeaderExpandIsr("t", 0, 1), A.Cancel("t", 0))
    p = s.partition("t", 0)
    assert p.replicas == (0, 1) and not p.reassigning
    assert len(p.replicas) > 1  # the original RF was 1


def test_finding_rf_above_original_after_cancel_seed_example():
    s = cluster([1, 2, 3, 4, 5], (1, 2, 3))
    s = run(s, A.Reassign("t", 0, (3, 4, 5)), A.LeaderExpandIsr("t", 0, 4), A.Cancel("t", 0))
    assert len(s.partition("t", 0).replicas) == 4  # configured RF 3


def test_finding_cancel_does_not_restore_the_original_order():
    """R = RR ++ target puts the removing replicas first: a cancel keeps that order (2 steps) and the
    preferred leader changes from 1 to 2."""
    s = cluster([1, 2, 3], (1, 2))
    s = run(s, A.Reassign("t", 0, (1, 3)), A.Cancel("t", 0))
    assert s.partition("t", 0).replicas == (2, 1)


def test_finding_isr_not_subset_of_replicas_after_completion_shortest():
    """Completion removes RR from R but not from I: isr ⊆ replicas and leader ∈ replicas break (2 steps)."""
    s = cluster(2, (0, 1))
    s = run(s, A.Reassign("t", 0, (1,)), A.ControllerStep("t", 0))
    p = s.partition("t", 0)
    assert p.replicas == (1,) and p.isr == (0, 1) and p.leader == 0
    assert not set(p.isr) <= set(p.replicas) and p.leader not in p.replicas
    s = P.apply(s, A.ControllerStep("t", 0)).state  # the retire step repairs it
    p = s.partition("t", 0)
    assert (p.replicas, p.isr, p.leader) == ((1,), (1,), 1)


def test_finding_completion_with_a_retained_target_replica_outside_the_isr():
    """Only AR is watched: a retained target replica that left the ISR does not hold completion back (4 steps)."""
    s = cluster(3, (0, 1))
    s = run(s, A.Reassign("t", 0, (1, 2)), A.LeaderShrinkIsr("t", 0, 1), A.LeaderExpandIsr("t", 0, 2),
            A.ControllerStep("t", 0))
    p = s.partition("t", 0)
    assert (p.replicas, p.isr, p.reassigning) == ((1, 2), (0, 2), False)
    assert not set(p.replicas) <= set(p.isr)


def test_finding_completion_after_an_isr_shrink_leaves_no_electable_leader():
    """A new replica picked up from AR and then shrunk out of the ISR: completion and retire leave the
    partition leaderless with its only replica live, and no clean election can fix it (5 steps)."""
    s = cluster(2, (0,))
    s = run(s, A.Reassign("t", 0, (1,)), A.LeaderExpandIsr("t", 0, 1), A.LeaderShrinkIsr("t", 0, 1),
            A.ControllerStep("t", 0), A.ControllerStep("t", 0))
    p = s.partition("t", 0)
    assert (p.replicas, p.isr, p.leader) == ((1,), (0,), NO_LEADER) and s.is_active(1)
    s = run(s, A.BrokerFail(1), A.BrokerRecover(1))
    assert s.partition("t", 0).leader == NO_LEADER


# -- request rules ---------------------------------------------------------------------------------------


def test_request_bumps_the_leader_epoch_and_keeps_leader_and_isr():
    s = cluster(4, (0, 1, 2))
    s2 = P.apply(s, A.Reassign("t", 0, (3, 1, 2))).state
    p, q = s.partition("t", 0), s2.partition("t", 0)
    assert q.leader_epoch == p.leader_epoch + 1 and q.partition_epoch == p.partition_epoch + 1
    assert (q.leader, q.isr) == (p.leader, p.isr)


def test_new_request_during_ongoing_cancels_then_recomputes_from_updated_r():
    s = cluster([1, 2, 3, 4, 5, 6], (1, 2, 3))
    s = run(s, A.Reassign("t", 0, (3, 4, 5)), A.LeaderExpandIsr("t", 0, 4))
    before = s.partition("t", 0)
    s = P.apply(s, A.Reassign("t", 0, (2, 5, 6))).state
    # cancel: R = [1,2,3,4,5] − [5] = [1,2,3,4]; then AR = [5,6], RR = [1,3,4], R = RR ++ target
    assert rias(s) == [[1, 3, 4, 2, 5, 6], [1, 2, 3, 4], [5, 6], [1, 3, 4]]
    assert s.partition("t", 0).leader_epoch == before.leader_epoch + 2  # cancel and start each send LeaderAndIsr


def test_resubmitting_the_same_target_keeps_the_lists():
    s = cluster([1, 2, 3, 4, 5], (1, 2, 3))
    s = run(s, A.Reassign("t", 0, (3, 4, 5)), A.LeaderExpandIsr("t", 0, 4))
    s2 = P.apply(s, A.Reassign("t", 0, (3, 4, 5))).state
    assert rias(s2) == rias(s)


def test_target_equal_to_replicas_changes_nothing_and_a_permutation_reorders():
    s = cluster(3, (0, 1, 2))
    step = P.apply(s, A.Reassign("t", 0, (0, 1, 2)))
    assert step.state == s and code(step) == (NONE, None)
    s2 = P.apply(s, A.Reassign("t", 0, (2, 1, 0))).state
    assert rias(s2) == [[2, 1, 0], [0, 1, 2], [], []]
    assert s2.partition("t", 0).leader_epoch == 1


def test_shrinking_request_completes_with_one_controller_step():
    s = cluster(3, (0, 1, 2))
    s = P.apply(s, A.Reassign("t", 0, (1, 2))).state
    assert rias(s) == [[0, 1, 2], [0, 1, 2], [], [0]]
    assert P.pending_step(s, "t", 0) == K.COMPLETE
    s = run(s, A.ControllerStep("t", 0), A.ControllerStep("t", 0))
    assert rias(s) == [[1, 2], [1, 2], [], []] and s.partition("t", 0).leader == 1


def test_ar_members_leave_ar_one_by_one():
    s = cluster(5, (0,))
    s = P.apply(s, A.Reassign("t", 0, (2, 3, 4))).state
    assert rias(s)[2:] == [[2, 3, 4], [0]]
    s = P.apply(s, A.LeaderExpandIsr("t", 0, 3)).state
    assert rias(s)[2] == [2, 4]
    assert P.pending_step(s, "t", 0) is None
    s = run(s, A.LeaderExpandIsr("t", 0, 4), A.LeaderExpandIsr("t", 0, 2))
    assert rias(s)[2:] == [[], [0]] and P.pending_step(s, "t", 0) == K.COMPLETE


def test_alter_partition_also_picks_up_ar_members():
    s = cluster(4, (0, 1))
    s = P.apply(s, A.Reassign("t", 0, (2, 3))).state
    p = s.partition("t", 0)
    s = P.apply(s, A.AlterPartition("t", 0, 0, (0, 1, 3), p.leader_epoch, p.partition_epoch)).state
    assert rias(s) == [[0, 1, 2, 3], [0, 1, 3], [2], [0, 1]]


def test_unclean_election_of_an_adding_replica_picks_it_up():
    s = cluster(2, (0,))
    s = run(s, A.Reassign("t", 0, (1,)), A.BrokerFail(0))
    assert s.partition("t", 0).leader == NO_LEADER
    s = P.apply(s, A.ElectLeaders("t", 0, A.UNCLEAN)).state
    assert rias(s) == [[0, 1], [1], [], [0]] and s.partition("t", 0).leader == 1


def test_cancel_keeps_joined_replicas_and_drops_the_others():
    s = cluster(5, (0, 1))
    s = run(s, A.Reassign("t", 0, (2, 3, 4)), A.LeaderExpandIsr("t", 0, 3))
    step = P.apply(s, A.Cancel("t", 0))
    assert code(step) == (NONE, None)
    assert rias(step.state) == [[0, 1, 3], [0, 1, 3], [], []]
    assert step.state.partition("t", 0).leader_epoch == s.partition("t", 0).leader_epoch + 1


def test_cancel_when_ar_is_empty_but_rr_is_not():
    s = cluster(3, (0, 1))
    s = run(s, A.Reassign("t", 0, (2,)), A.LeaderExpandIsr("t", 0, 2))
    assert rias(s) == [[0, 1, 2], [0, 1, 2], [], [0, 1]]
    s = P.apply(s, A.Cancel("t", 0)).state
    assert rias(s) == [[0, 1, 2], [0, 1, 2], [], []]


# -- error responses ------------------------------------------------------------------------------------


def test_cancel_without_reassignment_is_no_reassignment_in_progress():
    s = cluster(3, (0, 1))
    step = P.apply(s, A.Cancel("t", 0))
    assert code(step) == (NO_REASSIGNMENT_IN_PROGRESS, "No reassignment is in progress for partition t-0.")
    assert step.state == s


@pytest.mark.parametrize(
    "replicas, message",
    [
        ((), "The replica list for t-0 is empty."),
        ((1, -1), "The replica list for t-0 includes the negative broker id -1."),
        ((1, 2, 1), "The replica list for t-0 includes broker 1 more than once."),
        ((1, 7), "The replica list for t-0 includes broker 7, which the controller is not aware of."),
    ],
)
def test_invalid_replica_assignment(replicas, message):
    s = cluster(3, (0, 1))
    step = P.apply(s, A.Reassign("t", 0, replicas))
    assert code(step) == (INVALID_REPLICA_ASSIGNMENT, message)
    assert step.state == s


def test_unknown_topic_and_partition_answer_unknown_topic_or_partition():
    s = cluster(3, (0, 1))
    step = P.apply(s, A.Reassign("nope", 0, (1,)))
    assert code(step, "nope", 0) == (UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope.")
    step = P.apply(s, A.Cancel("t", 5))
    assert code(step, "t", 5) == (UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t-5.")


def test_a_failed_but_registered_broker_is_accepted():
    s = run(cluster(3, (0, 1)), A.BrokerFail(2))
    step = P.apply(s, A.Reassign("t", 0, (0, 2)))
    assert code(step) == (NONE, None) and step.state.partition("t", 0).adding == (2,)


def test_multi_partition_request_answers_each_partition():
    s = cluster(3, (0, 1), (1, 2))
    req = AlterPartitionReassignmentsRequest(
        topics=(ReassignableTopic("t", (ReassignablePartition(0, (1, 2)), ReassignablePartition(1, None),
                                        ReassignablePartition(2, (0,)))),)
    )
    step = P.apply(s, A.AlterReassignments(req))
    assert [code(step, "t", i)[0] for i in range(3)] == [NONE, NO_REASSIGNMENT_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION]
    assert rias(step.state) == [[0, 1, 2], [0, 1], [2], [0]]


# -- cancellation granularity -------------------------------------------------------------------------


def test_cancel_topic_cancels_only_that_topics_pending_partitions():
    s = P.initial_state(make_cluster(4, {"a": [[0], [1]], "b": [[2]]}))
    s = run(s, A.Reassign("a", 0, (3,)), A.Reassign("b", 0, (3,)))
    step = P.cancel_topic(s, "a")
    assert [(tr.name, [p.partition_index for p in tr.partitions]) for tr in step.response.responses] == [("a", [0])]
    assert not step.state.partition("a", 0).reassigning and step.state.partition("b", 0).reassigning
    step = P.cancel_topic(step.state, "a")
    assert [p.error_code for p in step.response.responses[0].partitions] == [NO_REASSIGNMENT_IN_PROGRESS] * 2
    with pytest.raises(InvalidAction):
        P.cancel_topic(s, "zz")


def test_cancel_topic_through_a_null_partitions_list():
    s = P.initial_state(make_cluster(4, {"a": [[0], [1]]}))
    s = P.apply(s, A.Reassign("a", 1, (3,))).state
    step = P.alter_partition_reassignments(s, AlterPartitionReassignmentsRequest(topics=(ReassignableTopic("a", None),)))
    assert step.response.partition_error("a", 1) == (NONE, None)
    assert not step.state.partition("a", 1).reassigning


def test_cancel_all_action_and_null_topics():
    s = P.initial_state(make_cluster(4, {"a": [[0], [1]], "b": [[2]]}))
    s = run(s, A.Reassign("a", 0, (3,)), A.Reassign("b", 0, (3,)))
    for step in (P.apply(s, A.CancelAll()), P.alter_partition_reassignments(s, AlterPartitionReassignmentsRequest(topics=None))):
        assert not any(p.reassigning for _, _, p in step.state.partitions())
        assert step.response.partition_error("a", 0) == (NONE, None)
        assert step.response.partition_error("b", 0) == (NONE, None)
    assert P.apply(cluster(2, (0,)), A.CancelAll()).response.responses == ()
    with pytest.raises(ActionNotSupported):
        P.apply(s, A.RemoveCancelMarker())
    with pytest.raises(ActionNotSupported):
        P.apply(s, A.ZnodeReassign("a", 0, (1,)))


# -- ISR changes -----------------------------------------------------------------------------------------


def test_isr_change_errors():
    s = cluster(4, (0, 1, 2))
    assert P.apply(s, A.LeaderExpandIsr("t", 0, 3)).response.error_code == INELIGIBLE_REPLICA  # not a replica
    assert P.apply(s, A.LeaderShrinkIsr("t", 0, 0)).response.error_code == INVALID_REQUEST  # the leader itself
    assert P.apply(s, A.LeaderExpandIsr("t", 0, 1)).state == s  # already in
    p = s.partition("t", 0)
    assert P.apply(s, A.AlterPartition("t", 0, 1, (1,), 0, 0)).response.error_code == NOT_LEADER_OR_FOLLOWER
    assert P.apply(s, A.AlterPartition("t", 0, 0, (0,), 5, 0)).response.error_code == FENCED_LEADER_EPOCH
    assert P.apply(s, A.AlterPartition("t", 0, 0, (0,), 0, 5)).response.error_code == INVALID_UPDATE_VERSION
    ok = P.apply(s, A.AlterPartition("t", 0, 0, (0, 2), p.leader_epoch, p.partition_epoch))
    assert ok.response == Ack() and ok.state.partition("t", 0).isr == (0, 2)
    assert ok.state.partition("t", 0).partition_epoch == 1 and ok.state.partition("t", 0).leader_epoch == 0


def test_isr_shrink_bumps_only_the_partition_epoch():
    s = P.apply(cluster(3, (0, 1, 2)), A.LeaderShrinkIsr("t", 0, 2)).state
    p = s.partition("t", 0)
    assert (p.isr, p.leader_epoch, p.partition_epoch) == ((0, 1), 0, 1)


# -- brokers and elections ----------------------------------------------------------------------------------


def test_broker_fail_elects_from_replicas_order_and_removes_it_from_isrs():
    s = cluster(3, (0, 1, 2), (1, 0))
    s = P.apply(s, A.BrokerFail(0)).state
    p0, p1 = s.partition("t", 0), s.partition("t", 1)
    assert (p0.leader, p0.isr) == (1, (1, 2))
    assert (p1.leader, p1.isr) == (1, (1,))
    assert not s.is_active(0)


def test_last_isr_member_is_kept_and_recovery_elects_it():
    s = cluster(2, (0, 1))
    s = run(s, A.LeaderShrinkIsr("t", 0, 1), A.BrokerFail(0))
    p = s.partition("t", 0)
    assert (p.leader, p.isr) == (NO_LEADER, (0,))
    assert P.apply(s, A.LeaderExpandIsr("t", 0, 1)).response.error_code == LEADER_NOT_AVAILABLE
    s = P.apply(s, A.BrokerRecover(0)).state
    assert (s.partition("t", 0).leader, s.partition("t", 0).isr) == (0, (0,))


def test_preferred_and_unclean_elections():
    s = cluster(3, (0, 1, 2))
    assert P.apply(s, A.ElectLeaders("t", 0, A.PREFERRED)).response.error_code == ELECTION_NOT_NEEDED
    s2 = run(s, A.BrokerFail(0), A.BrokerRecover(0))
    assert s2.partition("t", 0).leader == 1
    assert P.apply(s2, A.ElectLeaders("t", 0, A.PREFERRED)).response.error_code == PREFERRED_LEADER_NOT_AVAILABLE
    s3 = run(s2, A.LeaderExpandIsr("t", 0, 0), A.ElectLeaders("t", 0, A.PREFERRED))
    assert s3.partition("t", 0).leader == 0
    assert P.apply(s3, A.ElectLeaders("t", 0, A.UNCLEAN)).response.error_code == ELECTION_NOT_NEEDED
    s4 = run(cluster(2, (0, 1)), A.LeaderShrinkIsr("t", 0, 1), A.BrokerFail(0))
    s5 = P.apply(s4, A.ElectLeaders("t", 0, A.UNCLEAN)).state
    assert (s5.partition("t", 0).leader, s5.partition("t", 0).isr) == (1, (1,))
    s6 = run(cluster(1, (0,)), A.BrokerFail(0))
    assert P.apply(s6, A.ElectLeaders("t", 0, A.UNCLEAN)).response.error_code == ELIGIBLE_LEADERS_NOT_AVAILABLE


def test_unknown_names_in_non_admin_actions_raise_invalid_action():
    s = cluster(2, (0, 1))
    for a in (A.LeaderExpandIsr("x", 0, 1), A.LeaderShrinkIsr("t", 3, 1), A.LeaderExpandIsr("t", 0, 9),
              A.BrokerFail(9), A.BrokerRecover(9), A.ElectLeaders("x", 0), A.ControllerStep("t", 4),
              A.AlterPartition("t", 0, 0, (0, 9), 0, 0), A.ElectLeaders("t", 0, "ONLINE")):
        with pytest.raises(InvalidAction):
            P.apply(s, a)


# -- controller, listing, enumeration -----------------------------------------------------------------


def test_failover_changes_nothing_and_pending_steps_survive_it():
    s = run(cluster(3, (0, 1)), A.Reassign("t", 0, (1,)))
    step = P.apply(s, A.ControllerFailover())
    assert step.state == s and P.pending_step(step.state, "t", 0) == K.COMPLETE


def test_controller_step_without_pending_work_changes_nothing():
    s = cluster(2, (0, 1))
    assert P.apply(s, A.ControllerStep("t", 0)).state == s


def test_list_partition_reassignments():
    s = P.initial_state(make_cluster(4, {"a": [[0], [1]], "b": [[2]]}))
    s = run(s, A.Reassign("a", 1, (3,)), A.Reassign("b", 0, (2, 3)))
    r = P.list_partition_reassignments(s)
    assert [(t.name, [(p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas) for p in t.partitions])
            for t in r.topics] == [("a", [(1, (1, 3), (3,), (1,))]), ("b", [(0, (2, 3), (3,), ())])]
    r = P.apply(s, A.ListReassignments(ListPartitionReassignmentsRequest(
        (ListPartitionReassignmentsTopics("a", (0, 1, 7)), ListPartitionReassignmentsTopics("zz", (0,)))))).response
    assert [t.name for t in r.topics] == ["a"] and [p.partition_index for p in r.topics[0].partitions] == [1]


def test_enabled_actions():
    s = run(cluster(3, (0, 1)), A.Reassign("t", 0, (2,)))
    space = ActionSpace(targets=(("t", 0, (2,)),), znode=True, cancel_all=True, failover=True)
    acts = P.enabled_actions(s, space)
    assert not any(isinstance(a, A.ZnodeReassign) for a in acts)
    assert A.CancelAll() in acts and A.ControllerStep("t", 0) not in acts
    assert acts[-1] == A.ControllerFailover()
    s = P.apply(s, A.LeaderExpandIsr("t", 0, 2)).state
    assert A.ControllerStep("t", 0) in P.enabled_actions(s, space)


def test_replication_layer_cancel_drops_the_log_of_a_removed_replica():
    s = cluster(3, (0,), replication_layer=True)
    s = run(s, A.Produce("t", 0), A.Reassign("t", 0, (1, 2)), A.FollowerFetch("t", 0, 1))
    assert s.partition("t", 0).log.log_of(1) == (0,)
    s = P.apply(s, A.Cancel("t", 0)).state
    assert [b for b, _ in s.partition("t", 0).log.logs] == [0]


# -- properties over random runs ------------------------------------------------------------------------------

SPACE = ActionSpace(
    targets=(("t", 0, (1, 2)), ("t", 0, (2, 3, 0)), ("t", 1, (3,)), ("t", 1, (0, 1))),
    failures=True,
    failover=True,
    elections=(A.PREFERRED, A.UNCLEAN),
    cancel_all=True,
)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_runs_keep_epochs_and_the_lists_consistent(data):
    s = cluster(4, (0, 1), (1, 2))
    for _ in range(25):
        acts = P.enabled_actions(s, SPACE)
        acts += [a for a in acts if isinstance(a, (A.ControllerStep, A.LeaderExpandIsr))] * 4  # weight progress
        a = data.draw(st.sampled_from(acts))
        n = P.apply(s, a).state
        for (t, i, p), (_, _, q) in zip(s.partitions(), n.partitions()):
            assert q.leader_epoch >= p.leader_epoch and q.partition_epoch >= p.partition_epoch, a
            assert not set(q.adding) & set(q.isr), a  # AR never holds an in-sync replica (rule 2)
            assert set(q.adding) <= set(q.replicas) and set(q.removing) <= set(q.replicas), a
            assert not set(q.adding) & set(q.removing), a
            assert q.isr, a
            assert q.leader == NO_LEADER or q.leader in q.isr, a
            cancelled = isinstance(a, A.CancelAll) or (isinstance(a, A.Cancel) and (a.topic, a.partition) == (t, i))
            if cancelled and p.reassigning:
                assert q.replicas == tuple(r for r in p.replicas if r not in p.adding)
        s = n
