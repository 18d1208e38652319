"""The `kip236` profile: rollback, the cancel marker, extra reassignments, routes, the drop rule."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kreassign.reference import ActionSpace, InvalidAction, profile
from kreassign.reference import kip236 as K
from kreassign.reference.zk_era_controller import (
    NOT_ENOUGH_REPLICAS,
    POLICY_VIOLATION,
    REASSIGNMENT_IN_PROGRESS,
)
from kreassign.spec import actions as A
from kreassign.spec.messages import (
    INVALID_REPLICA_ASSIGNMENT,
    NO_REASSIGNMENT_IN_PROGRESS,
    NONE,
    UNKNOWN_TOPIC_OR_PARTITION,
    Ack,
)
from kreassign.spec.state import NO_LEADER, Kip236Admin, make_cluster

P = profile("kip236")


def cluster(brokers, *replica_lists, topic="t", prof=P, **kw):
    return prof.initial_state(make_cluster(brokers, {topic: [list(r) for r in replica_lists]}, **kw))


def run(state, *actions, prof=P):
    for a in actions:
        state = prof.apply(state, a).state
    return state


def part(state, topic="t", index=0):
    return state.partition(topic, index)


# -- registry and set-up ---------------------------------------------------------------------------------


def test_profile_is_registered_and_adds_its_admin_znodes():
    assert isinstance(P, K.Kip236Profile) and P.name == "kip236" and P.min_insync_replicas == 1
    s = cluster(3, (0, 1))
    assert s.kip236 == Kip236Admin()
    assert P.initial_state(s) is s


def test_plan_is_the_zk_era_union():
    p = P.plan((1, 2, 3), (4, 5, 6))
    assert (p.replicas, p.adding, p.removing) == ((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))


# -- submission records the original replicas ---------------------------------------------------------------


@pytest.mark.parametrize("action", [A.Reassign("t", 0, (4, 5, 6)), A.ZnodeReassign("t", 0, (4, 5, 6))])
def test_submission_records_original_replicas_and_the_route(action):
    s = cluster([1, 2, 3, 4, 5, 6], (1, 2, 3))
    s = P.apply(s, action).state
    p = part(s)
    assert (p.replicas, p.adding, p.removing, p.original) == ((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3), (1, 2, 3))
    assert (p.leader, p.isr, p.leader_epoch) == (1, (1, 2, 3), 1)
    route = K.LEGACY if isinstance(action, A.ZnodeReassign) else K.REQUESTS
    assert s.kip236.routes == (("t", 0, route),)


# -- the seed's rollback example -----------------------------------------------------------------------------


def test_seed_rollback_example_1_2_3_to_4_5_6_cancelled():
    """Seed 001: original [1,2,3], new [4,5,6]; cancel reverts to [1,2,3] and drops the new replicas."""
    s = cluster([1, 2, 3, 4, 5, 6], (1, 2, 3), replication_layer=True)
    s = run(s, A.Produce("t", 0), A.ZnodeReassign("t", 0, (4, 5, 6)),
            A.FollowerFetch("t", 0, 4), A.LeaderExpandIsr("t", 0, 4), A.FollowerFetch("t", 0, 5),
            A.LeaderExpandIsr("t", 0, 5), A.ElectLeaders("t", 0, A.PREFERRED))
    p = part(s)
    assert p.leader == 4 and p.isr == (1, 2, 3, 4, 5)  # the new replica 4 leads now
    step = P.apply(s, A.CancelAll())
    q = part(step.state)
    assert step.response.partition_error("t", 0) == (NONE, None)
    assert q.replicas == (1, 2, 3)  # original order
    assert (q.adding, q.removing, q.original) == ((), (), None)
    assert q.leader == 1  # elected from original ∩ ISR
    assert q.isr == (1, 2, 3)  # 4 and 5 left the ISR (OfflineReplica)
    assert q.leader_epoch > p.leader_epoch
    assert [b for b, _ in q.log.logs] == [1, 2, 3]  # the new replicas are deleted
    assert step.state.kip236 == Kip236Admin(cancel_marker=True)


def test_rollback_with_leader_in_original_only_bumps_the_epoch_then_removes():
    s = cluster([1, 2, 3, 4], (1, 2, 3))
    s = run(s, A.Reassign("t", 0, (2, 3, 4)), A.LeaderExpandIsr("t", 0, 4))
    p = part(s)
    step = P.apply(s, A.Cancel("t", 0))
    q = part(step.state)
    assert step.response.partition_error("t", 0) == (NONE, None)
    assert (q.replicas, q.isr, q.leader) == ((1, 2, 3), (1, 2, 3), 1)
    assert q.leader_epoch == p.leader_epoch + 2  # step 2 (bump) and step 3 (ISR removal of 4)
    assert step.state.kip236.cancel_marker is False  # a per-partition cancel does not create the marker


def test_cancel_without_reassignment_is_no_reassignment_in_progress():
    s = cluster(3, (0, 1))
    step = P.apply(s, A.Cancel("t", 0))
    assert step.response.partition_error("t", 0) == (
        NO_REASSIGNMENT_IN_PROGRESS, "No reassignment is in progress for partition t-0.")
    assert step.state == s


def test_finding_rollback_leaves_isr_outside_replicas_and_no_leader():
    """kip236 rollback: no original replica in the ISR -> leader -1 and the ISR keeps only the deleted replica."""
    s = cluster(2, (0,))
    s = run(s, A.Reassign("t", 0, (1,)), A.LeaderExpandIsr("t", 0, 1), A.ElectLeaders("t", 0, A.PREFERRED),
            A.LeaderShrinkIsr("t", 0, 0), A.Cancel("t", 0))
    q = part(s)
    assert q.replicas == (0,) and q.isr == (1,) and q.leader == NO_LEADER
    assert not set(q.isr) <= set(q.replicas) and s.is_active(0)


# -- the drop rule (requests route) ---------------------------------------------------------------------


def test_drop_rule_function_and_the_literal_slice_reading():
    # seed: [1,2] -> [2,3] changed to [2,4]; assigned [2,3,1], leader 1, isr [1,2]
    assert K.drop_replicas((2, 3, 1), (1, 2), 1, 2) == (3,)
    assert K.drop_replicas((2, 3, 1), (1, 2), 1, 2, literal_seed_slice=True) == (2, 3)
    # a leading intermediate replica is kept, an original one dropped instead
    assert K.drop_replicas((2, 3, 1), (3, 1), 3, 2) == (2,)
    # no leader: existing = isr ++ osr
    assert K.drop_replicas((4, 5, 1, 2), (2,), NO_LEADER, 2) == (5, 1)


def test_seed_intermediate_replica_example_broker_3_is_dropped():
    s = cluster([1, 2, 3, 4], (1, 2))
    s = P.apply(s, A.Reassign("t", 0, (2, 3))).state
    assert (part(s).replicas, part(s).original) == ((2, 3, 1), (1, 2))
    s = P.apply(s, A.Reassign("t", 0, (2, 4))).state
    p = part(s)
    assert 3 not in p.replicas and 3 not in p.isr
    assert (p.replicas, p.adding, p.removing, p.original) == ((2, 4, 1), (4,), (1,), (1, 2))
    # completion then reaches [2, 4]
    s = run(s, A.LeaderExpandIsr("t", 0, 4), A.ControllerStep("t", 0))
    q = part(s)
    assert (q.replicas, q.isr, q.leader, q.original) == ((2, 4), (2, 4), 2, None)


def test_drop_rule_drops_an_in_sync_intermediate_replica_too():
    s = cluster([1, 2, 3, 4], (1, 2))
    s = run(s, A.Reassign("t", 0, (2, 3)), A.LeaderExpandIsr("t", 0, 3), A.Reassign("t", 0, (2, 4)))
    assert part(s).replicas == (2, 4, 1) and part(s).isr == (1, 2)


def test_finding_drop_rule_drops_an_original_replica_and_rollback_then_leaves_no_leader():
    """top = len(original) = 1 keeps only the (new) leader 1: original replica 0 is dropped, the kept
    intermediate 1 is both adding and removing, and a rollback to [0] leaves 1 as the only ISR member,
    outside the replicas, with no leader; with clean elections only, no recovery elects one."""
    s = cluster(3, (0,))
    s = run(s, A.Reassign("t", 0, (1,)), A.LeaderExpandIsr("t", 0, 1), A.ElectLeaders("t", 0, A.PREFERRED),
            A.Reassign("t", 0, (2,)))
    p = part(s)
    assert (p.replicas, p.isr, p.leader, p.original) == ((2, 1), (1,), 1, (0,))
    assert 0 not in p.replicas  # an original replica is gone while the reassignment is in flight
    assert set(p.adding) & set(p.removing) == {1}
    s = P.apply(s, A.Cancel("t", 0)).state
    q = part(s)
    assert (q.replicas, q.isr, q.leader) == ((0,), (1,), NO_LEADER)
    s = run(s, A.BrokerFail(1), A.BrokerRecover(1), A.BrokerFail(0), A.BrokerRecover(0))
    assert part(s).leader == NO_LEADER
    assert A.ElectLeaders("t", 0, A.UNCLEAN) in P.enabled_actions(s, ActionSpace(elections=(A.UNCLEAN,)))
    s = P.apply(s, A.ElectLeaders("t", 0, A.UNCLEAN)).state
    assert (part(s).leader, part(s).isr) == (0, (0,))  # only an unclean election brings it back


def test_finding_drop_rule_drops_an_out_of_sync_original_replica():
    """osr in assigned order puts the new replica 3 before the original 2: top = 2 keeps [1, 3] (3 steps)."""
    s = cluster([1, 2, 3], (1, 2))
    s = run(s, A.Reassign("t", 0, (1, 3)), A.LeaderShrinkIsr("t", 0, 2), A.Reassign("t", 0, (1, 3)))
    p = part(s)
    assert (p.replicas, p.isr, p.original) == ((1, 3), (1,), (1, 2))
    assert not set(p.original) <= set(p.replicas)


def test_finding_drop_rule_ignores_the_new_target():
    """The drop set is computed before the new target is looked at: 2 is dropped (log deleted) and
    re-added by the new target [1, 2]; the kept 3 is both adding and removing (3 steps)."""
    s = cluster([1, 2, 3], (1, 2), replication_layer=True)
    s = run(s, A.Reassign("t", 0, (1, 3)), A.LeaderShrinkIsr("t", 0, 2))
    assert 2 in dict(part(s).log.logs)
    s = P.apply(s, A.Reassign("t", 0, (1, 2))).state
    p = part(s)
    assert (p.replicas, p.adding, p.removing, p.isr) == ((1, 2, 3), (3,), (3,), (1,))
    assert 2 not in dict(p.log.logs)


def test_finding_extra_reassignment_rollback_leaves_a_live_isr_replica_without_leadership():
    """Rolling back first removes the new leader 3 from the replicas; the restart puts it back, in the
    ISR and live, but nobody elects it (5 steps)."""
    s = cluster([1, 2, 3], (1, 2))
    s = run(s, A.ZnodeReassign("t", 0, (1, 3)), A.LeaderExpandIsr("t", 0, 3), A.LeaderShrinkIsr("t", 0, 2),
            A.BrokerFail(1))
    assert (part(s).leader, part(s).isr) == (3, (3,))
    s = P.apply(s, A.ZnodeReassign("t", 0, (1, 3))).state
    p = part(s)
    assert (p.replicas, p.isr, p.leader) == ((1, 3, 2), (3,), NO_LEADER) and s.is_active(3)


def test_resubmitting_the_same_target_restarts_the_copy_of_out_of_sync_new_replicas():
    """The drop rule keeps the first len(original) of [leader] ++ isr ++ osr: a not-yet-in-sync new replica
    is dropped (its log deleted) and added back, so a resubmission throws its copy away."""
    s = cluster(2, (0,), replication_layer=True)
    s = run(s, A.Produce("t", 0), A.Produce("t", 0), A.Reassign("t", 0, (1,)), A.FollowerFetch("t", 0, 1))
    assert part(s).log.log_of(1) == (0,)
    s = P.apply(s, A.Reassign("t", 0, (1,))).state
    p = part(s)
    assert (p.replicas, p.adding, p.original) == ((1, 0), (1,), (0,))
    assert p.log.log_of(1) == ()


def test_changing_back_to_the_original_via_requests_is_a_plain_assignment():
    s = cluster([1, 2, 3], (1, 2))
    s = run(s, A.Reassign("t", 0, (2, 3)), A.Reassign("t", 0, (1, 2)))
    p = part(s)
    assert (p.replicas, p.adding, p.removing, p.original) == ((1, 2), (), (), None)
    assert s.kip236.routes == ()


# -- extra reassignments, routes, the marker, min.insync.replicas ---------------------------------------------


def test_extra_legacy_reassignment_rolls_back_first():
    s = cluster([1, 2, 3, 4, 5, 6], (1, 2, 3))
    s = run(s, A.ZnodeReassign("t", 0, (4, 5, 6)), A.LeaderExpandIsr("t", 0, 5))
    e = part(s).leader_epoch
    step = P.apply(s, A.ZnodeReassign("t", 0, (1, 2, 4)))
    p = part(step.state)
    assert step.response == Ack()
    assert (p.replicas, p.adding, p.removing, p.original) == ((1, 2, 4, 3), (4,), (3,), (1, 2, 3))
    assert p.isr == (1, 2, 3)  # 5 was rolled back (removed from the ISR)
    assert p.leader_epoch == e + 3  # rollback bump, ISR removal of 5, new start


@pytest.mark.parametrize(
    "first, second, other",
    [(A.Reassign("t", 0, (2,)), A.ZnodeReassign("t", 0, (3,)), K.REQUESTS),
     (A.ZnodeReassign("t", 0, (2,)), A.Reassign("t", 0, (3,)), K.LEGACY)],
)
def test_other_route_is_ignored_with_a_warning(first, second, other):
    s = P.apply(cluster(4, (0, 1)), first).state
    step = P.apply(s, second)
    resp = step.response
    code, msg = (resp.error_code, resp.error_message) if isinstance(resp, Ack) else resp.partition_error("t", 0)
    assert code == REASSIGNMENT_IN_PROGRESS
    assert msg == f"WARN: ignoring the reassignment of t-0: it is already being reassigned through the {other} route."
    assert step.state == s


def test_cancel_marker_blocks_new_reassignments_until_removed():
    s = P.apply(cluster(3, (0, 1)), A.CancelAll()).state
    assert s.kip236.cancel_marker
    msg = "Reassignment of t-0 rejected: /admin/reassign_cancel exists (remove it with --remove-cancel first)."
    step = P.apply(s, A.Reassign("t", 0, (1, 2)))
    assert step.response.partition_error("t", 0) == (POLICY_VIOLATION, msg) and step.state == s
    step = P.apply(s, A.ZnodeReassign("t", 0, (1, 2)))
    assert step.response == Ack(POLICY_VIOLATION, msg) and step.state == s
    assert P.apply(s, A.CancelAll()).state == s  # the marker exists already
    s = P.apply(s, A.RemoveCancelMarker()).state
    assert not s.kip236.cancel_marker
    assert P.apply(s, A.RemoveCancelMarker()).state == s
    assert part(P.apply(s, A.Reassign("t", 0, (1, 2))).state).reassigning


def test_cancel_all_rolls_back_both_routes():
    s = P.initial_state(make_cluster(4, {"a": [[0], [1]]}))
    s = run(s, A.Reassign("a", 0, (2,)), A.ZnodeReassign("a", 1, (3,)))
    step = P.apply(s, A.CancelAll())
    assert [(p.replicas, p.original) for _, _, p in step.state.partitions()] == [((0,), None), ((1,), None)]
    assert step.response.partition_error("a", 0) == (NONE, None) and step.response.partition_error("a", 1) == (NONE, None)


def test_min_insync_replicas_ignores_a_reassignment_with_a_warning():
    prof = K.Kip236Profile(min_insync_replicas=2)
    s = cluster(3, (0,), (0, 1), prof=prof)
    step = prof.apply(s, A.Reassign("t", 0, (1, 2)))
    assert step.response.partition_error("t", 0) == (
        NOT_ENOUGH_REPLICAS,
        ("WARN: ignoring the reassignment of t-0: it keeps top = len(original_replicas) = 1 replicas, "
         "fewer than min.insync.replicas = 2."),
    )
    assert step.state == s
    assert prof.apply(s, A.Reassign("t", 1, (1, 2))).response.partition_error("t", 1) == (NONE, None)


@pytest.mark.parametrize(
    "replicas, message",
    [((), "The replica list for t-0 is empty."),
     ((0, -2), "The replica list for t-0 includes the negative broker id -2."),
     ((0, 0), "The replica list for t-0 includes broker 0 more than once."),
     ((0, 9), "The replica list for t-0 includes broker 9, which the controller is not aware of.")],
)
def test_invalid_replica_assignment_on_both_routes(replicas, message):
    s = cluster(3, (0, 1))
    assert P.apply(s, A.ZnodeReassign("t", 0, replicas)).response == Ack(INVALID_REPLICA_ASSIGNMENT, message)
    assert P.apply(s, A.Reassign("t", 0, replicas)).response.partition_error("t", 0) == (
        INVALID_REPLICA_ASSIGNMENT, message)


def test_unknown_topic_or_partition():
    s = cluster(3, (0, 1))
    assert P.apply(s, A.ZnodeReassign("x", 0, (1,))).response == Ack(
        UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named x.")
    assert P.apply(s, A.ZnodeReassign("t", 2, (1,))).response == Ack(
        UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t-2.")
    assert P.apply(s, A.Reassign("t", 2, (1,))).response.partition_error("t", 2)[0] == UNKNOWN_TOPIC_OR_PARTITION
    for a in (A.LeaderExpandIsr("x", 0, 1), A.BrokerFail(7), A.ControllerStep("t", 3), A.ElectLeaders("t", 9)):
        with pytest.raises(InvalidAction):
            P.apply(s, a)


# -- completion ---------------------------------------------------------------------------------------


def test_completion_moves_to_target_elects_and_removes_old_replicas():
    s = cluster([1, 2, 3, 4, 5, 6], (1, 2, 3))
    s = run(s, A.Reassign("t", 0, (4, 5, 6)), A.LeaderExpandIsr("t", 0, 4), A.LeaderExpandIsr("t", 0, 5))
    assert P.pending_step(s, "t", 0) is None
    s = P.apply(s, A.LeaderExpandIsr("t", 0, 6)).state
    assert P.pending_step(s, "t", 0) == K.COMPLETE
    assert A.ControllerStep("t", 0) in P.enabled_actions(s, ActionSpace())
    s = P.apply(s, A.ControllerStep("t", 0)).state
    p = part(s)
    assert (p.replicas, p.isr, p.leader, p.adding, p.removing, p.original) == ((4, 5, 6), (4, 5, 6), 4, (), (), None)
    assert s.kip236.routes == ()


def test_shrinking_reassignment_is_complete_at_once_and_bumps_when_leader_stays():
    s = cluster(3, (0, 1, 2))
    s = P.apply(s, A.Reassign("t", 0, (0, 1))).state
    e = part(s).leader_epoch
    s = P.apply(s, A.ControllerStep("t", 0)).state
    p = part(s)
    assert (p.replicas, p.isr, p.leader) == ((0, 1), (0, 1), 0)
    assert p.leader_epoch == e + 2  # B3 bump + ISR removal of 2


# -- failover ----------------------------------------------------------------------------------------------


def test_failover_is_a_no_op_on_model_states():
    s = run(cluster(4, (0, 1), (1, 2)), A.Reassign("t", 0, (2,)), A.ZnodeReassign("t", 1, (3,)))
    assert P.apply(s, A.ControllerFailover()).state == s
    assert P.rebuild(s) == [("t", 0, (2,), K.REQUESTS), ("t", 1, (3,), K.LEGACY)]


def test_failover_processes_unhandled_extra_entries_in_the_seeds_order():
    s = run(cluster(4, (0, 1), (1, 2)), A.Reassign("t", 0, (2,)), A.ZnodeReassign("t", 1, (3,)))
    s = replace(s, kip236=replace(s.kip236, extra=(("t", 0, (3,)), ("t", 1, (0,)))))
    # t-0 has a requests-route context: its extra entry is ignored; t-1 is legacy: rolled back, then (0,)
    assert P.rebuild(s) == [("t", 0, (2,), K.REQUESTS), ("t", 1, (0,), K.LEGACY)]
    step = P.apply(s, A.ControllerFailover())
    n = step.state
    assert n.kip236.extra == ()
    assert part(n, "t", 0) == part(s, "t", 0)
    assert (part(n, "t", 1).replicas, part(n, "t", 1).original) == ((0, 1, 2), (1, 2))
    assert "already being reassigned through the requests route" in step.response.error_message


# -- enumeration -----------------------------------------------------------------------------------------------


def test_enabled_actions_offer_the_marker_actions_and_the_znode_route():
    space = ActionSpace(targets=(("t", 0, (1, 2)),), znode=True, cancel_all=True)
    s = cluster(3, (0, 1))
    acts = P.enabled_actions(s, space)
    assert A.ZnodeReassign("t", 0, (1, 2)) in acts and A.CancelAll() in acts and A.RemoveCancelMarker() not in acts
    s = P.apply(s, A.CancelAll()).state
    acts = P.enabled_actions(s, space)
    assert A.RemoveCancelMarker() in acts and A.CancelAll() not in acts


# -- properties over random runs ------------------------------------------------------------------------------

SPACE = ActionSpace(
    targets=(("t", 0, (1, 2)), ("t", 0, (2, 3)), ("t", 0, (3, 0)), ("t", 1, (3,)), ("t", 1, (0, 2))),
    failures=True,
    failover=True,
    elections=(A.PREFERRED, A.UNCLEAN),
    znode=True,
    cancel_all=True,
)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_runs_keep_epochs_and_cancel_restores_the_original_order(data):
    s = cluster(4, (0, 1), (1, 2))
    for _ in range(25):
        acts = P.enabled_actions(s, SPACE)
        acts += [a for a in acts if isinstance(a, (A.ControllerStep, A.LeaderExpandIsr))] * 4  # weight progress
        a = data.draw(st.sampled_from(acts))
        step = P.apply(s, a)
        n = step.state
        routes = {(t, i) for t, i, _ in n.kip236.routes}
        for (t, i, p), (_, _, q) in zip(s.partitions(), n.partitions()):
            assert q.leader_epoch >= p.leader_epoch and q.partition_epoch >= p.partition_epoch, a
            cancelled = isinstance(a, A.CancelAll) or (isinstance(a, A.Cancel) and (a.topic, a.partition) == (t, i))
            if cancelled and p.reassigning and not s.kip236.cancel_marker:
                assert q.replicas == p.original, a  # exactly the original list, in order
                assert not q.reassigning and q.original is None
            assert (q.original is not None) == q.reassigning == ((t, i) in routes), a
            if q.reassigning:
                assert set(q.target) <= set(q.replicas) and q.replicas[: len(q.target)] == q.target
            assert q.isr and (q.leader == NO_LEADER or q.leader in q.isr), a
        if n.kip236.cancel_marker:
            assert not any(q.reassigning for _, _, q in n.partitions())
        s = n
