"""The `zk` profile (KafkaController with ZooKeeper): every rule of KAFKA-SEMANTICS.md's zk section,
pinned on small examples, the worked example of seed 003 step by step, crashes between steps, the
KIP-455 znode-versus-API edge case and the zk findings."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.reference import InvalidAction, Plan, profile
from kreassign.reference import zk_controller as C
from kreassign.reference.profile_base import ActionSpace
from kreassign.reference.zk_elections import remove_replica_from_isr
from kreassign.spec import actions as A
from kreassign.spec.messages import (
    Ack,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsTopics,
    ReassignablePartition,
    ReassignableTopic,
)
from kreassign.spec.state import NO_LEADER, ClusterState, Partition, make_cluster

P = profile("zk")
T = "t"


# -- helpers -------------------------------------------------------------------------------------


def start(brokers, assignments, **kw) -> ClusterState:
    return P.initial_state(make_cluster(brokers, assignments, **kw))


def part(s: ClusterState, t: str = T, p: int = 0) -> Partition:
    return s.partition(t, p)


def mem(s: ClusterState, t: str = T, p: int = 0) -> Plan:
    return C.memory_of(s.zk, t, p)


def do(s: ClusterState, *actions) -> ClusterState:
    for a in actions:
        s = P.apply(s, a).state
    return s


def steps(s: ClusterState, t: str = T, p: int = 0) -> tuple[ClusterState, list[str]]:
    """Run (t, p)'s pending steps to the end of the run; return the state and the step names."""
    names = []
    while (name := C.next_step(s.zk, t, p)) is not None:
        names.append(name)
        s = P.apply(s, A.ControllerStep(t, p)).state
    return s, names


def settle(s: ClusterState) -> ClusterState:
    """Drive every reassignment to its end: run pending steps, let live target replicas join the ISR."""
    for _ in range(200):
        if s.zk.pending:
            t, p, _ = s.zk.pending[0]
            s = P.apply(s, A.ControllerStep(t, p)).state
            continue
        for t, i, q in s.partitions():
            if q.reassigning and q.leader != NO_LEADER:
                joiners = [b for b in q.target if b not in q.isr and s.is_active(b)]
                if joiners:
                    s = P.apply(s, A.LeaderExpandIsr(t, i, joiners[0])).state
                    break
        else:
            return s
    raise AssertionError("did not settle")


def error(step, t: str = T, p: int = 0):
    return step.response.partition_error(t, p)


def reassign(s, replicas, t=T, p=0):
    return P.apply(s, A.Reassign(t, p, tuple(replicas)))


def cancel(s, t=T, p=0):
    return P.apply(s, A.Cancel(t, p))


def with_epochs(s: ClusterState, leader_epoch: int, partition_epoch: int, t=T, p=0) -> ClusterState:
    return s.with_partition(t, p, replace(part(s, t, p), leader_epoch=leader_epoch, partition_epoch=partition_epoch))


# -- set-up, plan -----------------------------------------------------------------------------------


def test_profile_is_registered_and_initial_state_fills_the_controller():
    s = start(3, {T: [[0, 1], [2, 0]]})
    assert P.name == "zk"
    assert s.zk.active and s.zk.epoch == 1
    assert s.zk.memory == ((T, 0, (0, 1), (), ()), (T, 1, (2, 0), (), ()))
    assert s.zk.being_reassigned == s.zk.pending == s.zk.admin_znode == ()
    assert P.initial_state(s) is s


def test_initial_state_resumes_partitions_already_reassigning_in_zookeeper():
    c = make_cluster(3, {T: [[0]]})
    c = c.with_partition(T, 0, Partition(replicas=(2, 0, 1), isr=(0, 1), leader=0, adding=(2,), removing=(1,)))
    s = P.initial_state(c)
    assert s.zk.being_reassigned == ((T, 0, (2, 0)),) and s.zk.pending == ((T, 0, "U"),)
    s, names = steps(s)
    assert names == ["U", "A1", "A2"] and part(s).replicas == (2, 0, 1)  # memory as is: no rewrite


def test_plan_reassign_to_from_the_origin():
    p = P.plan((1, 2, 3), (3, 4))
    assert p == Plan(replicas=(3, 4, 1, 2), adding=(4,), removing=(1, 2))
    # removing keeps the origin's order, adding the full list's
    assert P.plan((3, 1, 2), (5, 2, 4)) == Plan((5, 2, 4, 3, 1), (5, 4), (3, 1))
    # to the origin: a plain assignment
    assert P.plan((1, 2, 3), (1, 2, 3)) == Plan((1, 2, 3), (), ())
    # in flight: computed from the origin, the previous target is forgotten
    in_flight = Plan((4, 5, 1, 2), (4, 5), (1, 2))
    assert C.reassign_to(in_flight, (6, 1)) == Plan((6, 1, 2), (6,), (2,))
    assert C.reassign_to(in_flight, (1, 2)) == Plan((1, 2), (), ())


# -- AlterPartitionReassignments: validation, codes, messages, order ------------------------------


def test_not_the_active_controller_is_a_top_level_41():
    s = start(3, {T: [[0, 1]]})
    s = replace(s, zk=replace(s.zk, active=False))
    st = reassign(s, [1, 2])
    assert st.response == AlterPartitionReassignmentsResponse(
        error_code=41, error_message="This is not the correct controller for this cluster."
    )
    assert st.state == s


@pytest.mark.parametrize(
    "target, message",
    [
        ((), "Empty replica list specified in partition reassignment."),
        ((1, 1, 2), "Duplicate replica ids in partition reassignment replica list: ArrayBuffer(1, 1, 2)"),
        ((-1, 2), "Invalid broker id in replica list: ArrayBuffer(-1, 2)"),
        # order: duplicates are reported before negative ids, negative ids before dead brokers
        ((-1, -1), "Duplicate replica ids in partition reassignment replica list: ArrayBuffer(-1, -1)"),
        ((-1, 7), "Invalid broker id in replica list: ArrayBuffer(-1, 7)"),
        ((7, 7), "Duplicate replica ids in partition reassignment replica list: ArrayBuffer(7, 7)"),
        (
            (4, 3, 5, 0),
            ("Replica assignment has brokers that are not alive. "
            "Replica list: ArrayBuffer(4, 3, 5), live broker list: HashSet(0, 1, 2, 3, 4)"),
        ),
    ],
)
def test_target_validation_messages_in_kafkas_order(target, message):
    s = do(start(6, {T: [[0, 1]]}), A.BrokerFail(5))
    st = reassign(s, target)
    assert error(st) == (39, message)
    assert st.state == s


def test_only_adding_replicas_must_be_live():
    s = do(start(4, {T: [[0, 1]]}), A.BrokerFail(1))  # an existing replica is dead
    st = reassign(s, [1, 2])
    assert error(st) == (0, None)
    st = reassign(s, [1, 3])
    # liveness is checked against the origin: 1 is not adding, so only 3 must be live (it is)
    assert error(st) == (0, None)
    s2 = do(s, A.BrokerFail(3))
    assert error(reassign(s2, [1, 3])) == (
        39,
        ("Replica assignment has brokers that are not alive. Replica list: ArrayBuffer(3), "
        "live broker list: HashSet(0, 2)"),
    )


def test_liveness_is_checked_against_the_origin_of_an_in_flight_reassignment():
    s = start(5, {T: [[0, 1]]})
    s, _ = steps(reassign(s, [2, 3]).state)  # phase A: replicas [2,3,0,1], adding [2,3]
    s = do(s, A.BrokerFail(3))
    # 3 is adding relative to the origin [0,1] even though it is already a replica
    assert error(reassign(s, [1, 3]))[0] == 39
    assert error(reassign(s, [1, 4])) == (0, None)


def test_cancel_without_a_reassignment_is_85_with_the_default_message():
    s = start(3, {T: [[0, 1]]})
    st = cancel(s)
    assert error(st) == (85, "No partition reassignment is in progress.")
    assert st.state == s


def test_missing_partition_cancel_is_85_and_reassign_is_3_after_validation():
    s = start(3, {T: [[0, 1]]})
    assert error(cancel(s, T, 5), T, 5) == (85, "No partition reassignment is in progress.")
    assert error(cancel(s, "nope", 0), "nope", 0) == (85, "No partition reassignment is in progress.")
    st = reassign(s, [1, 2], T, 5)
    assert error(st, T, 5) == (3, "The partition does not exist.")
    assert st.state == s
    assert error(reassign(s, [1, 2], "nope", 0), "nope", 0) == (3, "The partition does not exist.")
    # validation comes first: against an empty origin, every target replica is adding
    s2 = do(s, A.BrokerFail(2))
    assert error(reassign(s2, [1, 2], T, 5), T, 5)[0] == 39
    assert error(reassign(s, [], T, 5), T, 5) == (39, "Empty replica list specified in partition reassignment.")


def test_partition_without_replicas_does_not_exist():
    s = start(3, {T: [[0, 1], [1]]})
    s = s.with_partition(T, 1, Partition(replicas=(), isr=()))
    s = replace(s, zk=C.with_memory(s.zk, T, 1, C.EMPTY))
    assert error(reassign(s, [1], T, 1), T, 1) == (3, "The partition does not exist.")


def test_request_with_several_partitions_answers_each_in_request_order():
    s = start(4, {T: [[0, 1], [1, 2], [2, 3]], "u": [[0]]})
    req = AlterPartitionReassignmentsRequest(
        topics=(
            ReassignableTopic(T, (
                ReassignablePartition(2, (3, 0)),
                ReassignablePartition(0, None),
                ReassignablePartition(1, (1, 1)),
            )),
            ReassignableTopic("u", (ReassignablePartition(0, (3,)),)),
        )
    )
    st = P.alter_partition_reassignments(s, req)
    r = st.response
    assert [t.name for t in r.responses] == [T, "u"]
    assert [(p.partition_index, p.error_code) for p in r.responses[0].partitions] == [(2, 0), (0, 85), (1, 39)]
    assert r.partition_error("u", 0) == (0, None)
    assert st.state.zk.pending == ((T, 2, "U"), ("u", 0, "U"))
    assert st.state.zk.being_reassigned == ((T, 2, (3, 0)), ("u", 0, (3,)))
    # nothing is written to ZooKeeper or memory before step U
    assert st.state.topics == s.topics and st.state.zk.memory == s.zk.memory


def test_an_api_reassignment_replaces_the_znode_entry_of_its_partition():
    s = start(4, {T: [[0, 1], [1, 2]]})
    s = P.znode_reassign_all(s, [(T, 0, (2, 3)), (T, 1, (3, 0))]).state
    s, _ = steps(s, T, 0)
    s, _ = steps(s, T, 1)
    assert s.zk.admin_znode == ((T, 0, (2, 3)), (T, 1, (3, 0)))
    s = reassign(s, [0, 3], T, 0).state
    assert s.zk.admin_znode == ((T, 1, (3, 0)),)
    assert C.being_reassigned_target(s.zk, T, 0) == (0, 3)


# -- onPartitionReassignment: the steps ------------------------------------------------------------


def test_seed_003_worked_example_step_by_step():
    """ORS {1,2,3} → TRS {4,5,6}: the blog's table, with the epochs of its log (LeaderEpoch 5 → 6 at A1,
    zkVersion 9..11 for the ISR expansions, 7 at B3's re-election, 8, 9, 10 for the ISR removals)."""
    s = with_epochs(start(range(1, 7), {T: [[1, 2, 3]]}), 5, 7)
    # 1. initial state
    p = part(s)
    assert (p.replicas, p.adding, p.removing, p.leader, set(p.isr)) == ((1, 2, 3), (), (), 1, {1, 2, 3})

    st = reassign(s, [4, 5, 6])
    assert error(st) == (0, None)
    s = st.state
    assert s.zk.pending == ((T, 0, "U"),) and s.zk.being_reassigned == ((T, 0, (4, 5, 6)),)

    s = do(s, A.ControllerStep(T, 0))  # U: ZooKeeper, then memory
    p = part(s)
    assert (p.replicas, p.adding, p.removing) == ((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert mem(s) == Plan((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert (p.leader_epoch, p.partition_epoch) == (5, 7)
    assert C.next_step(s.zk, T, 0) == "A1"

    s = do(s, A.ControllerStep(T, 0))  # A1: "Updated leader epoch ... to 6, zkVersion=8"
    p = part(s)
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (1, (1, 2, 3), 6, 8)
    s = do(s, A.ControllerStep(T, 0))  # A2: NewReplica, the run ends
    # 2. replication started
    p = part(s)
    assert (p.replicas, p.adding, p.removing, p.leader, set(p.isr)) == ((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3), 1, {1, 2, 3})
    assert s.zk.pending == ()

    for b, zk_version in ((4, 9), (5, 10), (6, 11)):
        s = do(s, A.LeaderExpandIsr(T, 0, b))
        assert (part(s).leader_epoch, part(s).partition_epoch) == (6, zk_version)
    # 3. "Target replicas ArrayBuffer(4, 5, 6) have all caught up": onPartitionReassignment again
    p = part(s)
    assert set(p.isr) == {1, 2, 3, 4, 5, 6} and p.leader == 1
    assert s.zk.pending == ((T, 0, "U"),)
    s, names = steps(s)
    assert names == ["U", "B1", "B2", "B3", "B4", "B5", "B6", "B7"]


def test_seed_003_phase_b_persisted_versus_memory_and_epochs():
    s = with_epochs(start(range(1, 7), {T: [[1, 2, 3]]}), 5, 7)
    s = settle_phase_a(reassign(s, [4, 5, 6]).state)
    for b in (4, 5, 6):
        s = do(s, A.LeaderExpandIsr(T, 0, b))
    s = do(s, A.ControllerStep(T, 0), A.ControllerStep(T, 0))  # U (no change), B1
    full = (4, 5, 6, 1, 2, 3)
    assert C.next_step(s.zk, T, 0) == "B2" and part(s).replicas == full
    s = do(s, A.ControllerStep(T, 0))  # B2: memory only
    assert mem(s) == Plan((4, 5, 6), (), ()) and part(s).replicas == full and part(s).adding == (4, 5, 6)
    s = do(s, A.ControllerStep(T, 0))  # B3: leader 1 is not in 4,5,6 → re-election
    p = part(s)
    # 4. "LeaderAndIsr(leader=4, leaderEpoch=7, ..., zkVersion=12)"
    assert (p.replicas, p.leader, set(p.isr), p.leader_epoch, p.partition_epoch) == (full, 4, {1, 2, 3, 4, 5, 6}, 7, 12)
    # the three OfflineReplica ISR removals of B4, one ZooKeeper write each, as the log lines show them
    q = p
    for r, isr, le, zv in ((1, {5, 6, 2, 3, 4}, 8, 13), (2, {5, 6, 3, 4}, 9, 14), (3, {5, 6, 4}, 10, 15)):
        q = remove_replica_from_isr(q, r)
        assert (q.leader, set(q.isr), q.leader_epoch, q.partition_epoch) == (4, isr, le, zv)
    s = do(s, A.ControllerStep(T, 0))  # B4
    # 5. RR stopped
    p = part(s)
    assert p == q
    assert (p.replicas, p.adding, p.removing, p.leader, set(p.isr)) == (full, (4, 5, 6), (1, 2, 3), 4, {4, 5, 6})
    s = do(s, A.ControllerStep(T, 0))  # B5: deletion (no modelled field without the log layer)
    assert part(s) == p
    s = do(s, A.ControllerStep(T, 0))  # B6: ZooKeeper = target
    p = part(s)
    # 6. done
    assert (p.replicas, p.adding, p.removing, p.leader, set(p.isr)) == ((4, 5, 6), (), (), 4, {4, 5, 6})
    assert (p.leader_epoch, p.partition_epoch) == (10, 15)
    assert s.zk.being_reassigned == ((T, 0, (4, 5, 6)),)
    s = do(s, A.ControllerStep(T, 0))  # B7 (+ B8)
    assert s.zk.being_reassigned == () and s.zk.pending == ()


def settle_phase_a(s: ClusterState, t: str = T, p: int = 0) -> ClusterState:
    s, names = steps(s, t, p)
    assert names == ["U", "A1", "A2"]
    return s


def test_b3_keeps_a_live_leader_in_target_with_an_epoch_bump():
    s = start(4, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [0, 2]).state)  # replicas [0,2,1], adding [2], removing [1]
    le = part(s).leader_epoch
    s = do(s, A.LeaderExpandIsr(T, 0, 2))
    s = do(*[s] + [A.ControllerStep(T, 0)] * 4)  # U, B1, B2, B3
    assert part(s).leader == 0 and part(s).leader_epoch == le + 1
    s, _ = steps(s)
    assert (part(s).replicas, part(s).isr, part(s).leader) == ((0, 2), (0, 2), 0)


def test_b3_with_no_eligible_target_replica_changes_nothing():
    s = start(4, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [2]).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 2))
    s = do(*[s] + [A.ControllerStep(T, 0)] * 3)  # U, B1, B2
    # hand-built: the target replica dies between B2 and B3 (Kafka's controller would see it only later)
    s = s.with_broker(replace(s.broker(2), active=False))
    before = part(s)
    s = do(s, A.ControllerStep(T, 0))  # B3: leader 0 not in [2], 2 not live → no leader found
    assert part(s) == before
    s, _ = steps(s)
    # B4 removes the old leader 0 and 1: leader -1, the last ISR member stays
    assert (part(s).replicas, part(s).leader) == ((2,), NO_LEADER)


def test_resubmitting_the_same_reassignment_repeats_phase_a():
    s = start(5, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [2, 3]).state)
    le = part(s).leader_epoch
    s = reassign(s, [2, 3]).state
    s, names = steps(s)
    assert names == ["U", "A1", "A2"]
    assert part(s).leader_epoch == le + 1
    assert part(s).replicas == (2, 3, 0, 1)


def test_a_new_target_over_an_in_flight_one_stops_the_unneeded_replicas():
    s = start(8, {T: [[1, 2, 3]]})
    s = settle_phase_a(reassign(s, [4, 5, 6]).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 4), A.LeaderExpandIsr(T, 0, 5))
    le = part(s).leader_epoch
    s = reassign(s, [7, 5, 1]).state
    s = do(s, A.ControllerStep(T, 0))  # U
    p = part(s)
    # computed from the origin [1,2,3]: the previous target [4,5,6] is forgotten
    assert (p.replicas, p.adding, p.removing) == ((7, 5, 1, 2, 3), (7, 5), (2, 3))
    assert mem(s) == Plan((7, 5, 1, 2, 3), (7, 5), (2, 3))
    # unneeded = [4, 6]: 4 was in the ISR and is removed (one write), 6 was not
    assert set(p.isr) == {1, 2, 3, 5} and p.leader_epoch == le + 1
    assert C.next_step(s.zk, T, 0) == "A1"


def test_reassigning_to_the_origin_is_a_plain_assignment_through_phase_b():
    s = start(3, {T: [[0, 1]]})
    st = reassign(s, [0, 1])
    assert error(st) == (0, None)
    s, names = steps(st.state)
    assert names == ["U", "B1", "B2", "B3", "B4", "B5", "B6", "B7"]
    assert part(s).replicas == (0, 1) and part(s).leader_epoch == 1  # B3's epoch bump
    assert s.zk.being_reassigned == ()


def test_finding_reassigning_to_the_current_replicas_completes_with_a_replica_out_of_the_isr():
    """isReassignmentComplete is true for a non-reassigning assignment: a request for the current list is
    accepted and runs phase B at once, though replica 2 is not in sync (the request "completes" with
    target ⊄ ISR)."""
    s = do(start(3, {T: [[1, 2]]}), A.LeaderShrinkIsr(T, 0, 2))
    s, names = steps(reassign(s, [1, 2]).state)
    assert names == ["U", "B1", "B2", "B3", "B4", "B5", "B6", "B7"]
    assert (part(s).replicas, part(s).isr) == ((1, 2), (1,))


# -- cancel ------------------------------------------------------------------------------------------


def test_cancel_is_reassign_to_origin_and_stops_adding_replicas():
    s = start(5, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [2, 3]).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 2))
    st = cancel(s)
    assert error(st) == (0, None)
    assert C.being_reassigned_target(st.state.zk, T, 0) == (0, 1)
    s, names = steps(st.state)
    assert names == ["U", "B1", "B2", "B3", "B4", "B5", "B6", "B7"]
    p = part(s)
    assert (p.replicas, p.adding, p.removing, p.isr, p.leader) == ((0, 1), (), (), (0, 1), 0)
    assert s.zk.being_reassigned == () and mem(s) == Plan((0, 1), (), ())


def test_finding_cancel_leaves_the_partition_leaderless_when_no_origin_replica_is_in_the_isr():
    """KAFKA-SEMANTICS.md: "Cancel never needs an unclean election check: if no origin replica is in the ISR,
    the partition is left without a leader." Origin [0], target [1,2]; 1 joins the ISR and becomes the
    preferred leader (it heads the full replica list), then shrinks 0 out; a cancel stops 1 (the last ISR
    member stays, the leader goes), and B3 finds no origin replica in the ISR. No broker ever failed."""
    s = start(3, {T: [[0]]})
    s = settle_phase_a(reassign(s, [1, 2]).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 1), A.ElectLeaders(T, 0, A.PREFERRED), A.LeaderShrinkIsr(T, 0, 0))
    assert (part(s).leader, part(s).isr) == (1, (1,))
    st = cancel(s)
    assert error(st) == (0, None)  # accepted: no unclean-election check
    s, _ = steps(st.state)
    p = part(s)
    assert (p.replicas, p.adding, p.removing) == ((0,), (), ())
    assert p.leader == NO_LEADER
    # and the ISR holds a replica that is no longer assigned (isr ⊄ replicas)
    assert p.isr == (1,) and not set(p.isr) <= set(p.replicas)
    # broker 0 is live but outside the ISR: only an unclean election can help
    assert s.is_active(0)
    assert P.apply(s, A.ElectLeaders(T, 0, A.PREFERRED)).response.error_code == 80
    s = do(s, A.BrokerFail(2), A.BrokerRecover(2), A.ControllerFailover())
    assert part(s).leader == NO_LEADER
    st = P.apply(s, A.ElectLeaders(T, 0, A.UNCLEAN))
    assert st.response.error_code == 0 and (part(st.state).leader, part(st.state).isr) == (0, (0,))


def test_finding_dropping_a_leading_adding_replica_leaves_a_live_isr_without_leader():
    """A new target over an in-flight reassignment stops the old adding replicas (step U); if one of them
    leads, the leader becomes -1 and phase A elects nobody: the partition stays leaderless with a live
    in-sync replica until the next broker failure or controller failover (admin_action_keeps_a_leader)."""
    s = start(4, {T: [[0]]})
    s = settle_phase_a(reassign(s, [1, 2]).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 1), A.ElectLeaders(T, 0, A.PREFERRED))
    assert (part(s).leader, part(s).isr) == (1, (0, 1))
    s = reassign(s, [2]).state
    s = do(s, A.ControllerStep(T, 0))  # U
    p = part(s)
    assert (p.replicas, p.leader, p.isr) == ((2, 0), NO_LEADER, (0,)) and s.is_active(0)
    s, names = steps(s)
    assert names == ["A1", "A2"] and part(s).leader == NO_LEADER
    # a failover's partition state machine start-up elects 0
    assert part(do(s, A.ControllerFailover())).leader == 0


def test_cancel_of_a_leading_adding_replica_is_leaderless_between_u_and_b3():
    s = start(4, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [2, 3]).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 2), A.ElectLeaders(T, 0, A.PREFERRED))
    assert part(s).leader == 2
    s = do(cancel(s).state, A.ControllerStep(T, 0))  # U stops 2, the leader
    assert (part(s).replicas, part(s).isr, part(s).leader) == ((0, 1), (0, 1), NO_LEADER)
    s = do(s, *[A.ControllerStep(T, 0)] * 3)  # B1, B2, B3: re-election from the target
    assert part(s).leader == 0


def test_finding_cancel_restores_the_original_set_but_not_its_order():
    """origin = replicas − adding: once the full list is target ++ origin, a retained replica that the target
    lists first moves ahead, so a cancel does not restore the original order (nor the preferred leader)."""
    s = start(5, {T: [[2, 0, 1]]})
    s = settle_phase_a(reassign(s, [3, 0]).state)
    assert part(s).replicas == (3, 0, 2, 1)
    assert C.origin_of(mem(s)) == (0, 2, 1)
    s, _ = steps(cancel(s).state)
    assert part(s).replicas == (0, 2, 1)  # not [2, 0, 1]
    assert part(s).leader == 2 and P.apply(s, A.ElectLeaders(T, 0, A.PREFERRED)).response.error_code == 0


# -- triggers -----------------------------------------------------------------------------------------


def test_isr_change_triggers_only_a_complete_reassignment():
    s = start(5, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [2, 3]).state)
    st = P.apply(s, A.LeaderExpandIsr(T, 0, 2))
    assert st.response.error_code == 0 and st.state.zk.pending == ()  # not complete: nothing scheduled
    s = do(st.state, A.LeaderExpandIsr(T, 0, 3))
    assert s.zk.pending == ((T, 0, "U"),)
    # an ISR change of a partition that is not being reassigned schedules nothing
    s2 = start(3, {T: [[0, 1, 2]]})
    assert do(s2, A.LeaderShrinkIsr(T, 0, 2), A.LeaderExpandIsr(T, 0, 2)).zk.pending == ()


def test_shrink_can_complete_a_reassignment_too():
    # target ⊆ ISR is all that matters; a removing replica leaving the ISR is a successful ISR change
    s = start(4, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [0, 2]).state)
    s = s.with_partition(T, 0, replace(part(s), isr=(0, 1, 2)))  # 2 joined before phase A ended (hand-built)
    s = do(s, A.LeaderShrinkIsr(T, 0, 1))
    assert s.zk.pending == ((T, 0, "U"),)


def test_broker_startup_resumes_reassignments_whose_target_holds_it():
    s = start(5, {T: [[0, 1], [0, 1]]})
    s = settle_phase_a(reassign(s, [2, 3], T, 0).state)
    s = settle_phase_a(reassign(s, [0, 4], T, 1).state, T, 1)
    s = do(s, A.BrokerFail(3))
    le = part(s).leader_epoch
    s = do(s, A.BrokerRecover(3))
    assert s.zk.pending == ((T, 0, "U"),)  # partition 1's target [0,4] does not hold 3
    s, names = steps(s)
    assert names == ["U", "A1", "A2"] and part(s).leader_epoch == le + 1
    # a removing (not target) replica restarting triggers nothing
    s = do(s, A.BrokerFail(1), A.BrokerRecover(1))
    assert s.zk.pending == ()


def test_controller_events_wait_for_the_running_reassignment():
    s = start(5, {T: [[0, 1]]})
    s = reassign(s, [2, 3]).state
    space = ActionSpace(targets=((T, 0, (2, 3)),), failures=True, failover=True, elections=("PREFERRED",), znode=True)
    busy = P.enabled_actions(s, space)
    assert busy == [A.ControllerStep(T, 0), A.ControllerFailover()]
    s2 = do(s, A.ControllerStep(T, 0), A.ControllerStep(T, 0), A.ControllerStep(T, 0))
    idle = P.enabled_actions(s2, space)
    assert A.Reassign(T, 0, (2, 3)) in idle and A.ZnodeReassign(T, 0, (2, 3)) in idle
    assert A.BrokerFail(0) in idle and not any(isinstance(a, A.ControllerStep) for a in idle)
    # applied anyway while busy, a controller event first finishes the run (the controller is single-threaded)
    st = P.apply(s, A.ElectLeaders(T, 0, A.PREFERRED))
    assert st.state.zk.pending == () and part(st.state).replicas == (2, 3, 0, 1)
    assert part(st.state).leader_epoch == 1  # A1 ran; the preferred replica 2 is not in the ISR
    assert st.response.error_code == 80


def test_controller_steps_follow_the_pending_order_and_only_with_an_active_controller():
    s = start(4, {T: [[0], [1]]})
    s = P.znode_reassign_all(s, [(T, 1, (2,)), (T, 0, (3,))]).state
    space = ActionSpace()
    assert [a for a in P.enabled_actions(s, space) if isinstance(a, A.ControllerStep)] == [
        A.ControllerStep(T, 0), A.ControllerStep(T, 1)
    ]
    dead = replace(s, zk=replace(s.zk, active=False))
    assert not any(isinstance(a, A.ControllerStep) for a in P.enabled_actions(dead, space))
    st = P.apply(dead, A.ControllerStep(T, 0))
    assert st.state == dead


def test_controller_step_without_pending_work_changes_nothing():
    s = start(2, {T: [[0]]})
    st = P.apply(s, A.ControllerStep(T, 0))
    assert st.state == s and st.response.error_code == 0


# -- failover ------------------------------------------------------------------------------------------


def test_failover_loses_memory_and_rebuilds_from_zookeeper():
    s = start(5, {T: [[0, 1], [1, 2]]})
    s = settle_phase_a(reassign(s, [2, 3], T, 0).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 2), A.LeaderExpandIsr(T, 0, 3))
    s = do(s, *[A.ControllerStep(T, 0)] * 3)  # U, B1, B2: memory = target, ZooKeeper still full
    assert mem(s) == Plan((2, 3), (), ()) and part(s).replicas == (2, 3, 0, 1)
    f = do(s, A.ControllerFailover())
    assert f.zk.epoch == 2 and f.zk.active
    assert mem(f) == Plan((2, 3, 0, 1), (2, 3), (0, 1))  # rebuilt from ZooKeeper
    assert f.zk.being_reassigned == ((T, 0, (2, 3)),)
    assert f.zk.pending == ((T, 0, "U"),)
    f, names = steps(f)
    assert names == ["U", "B1", "B2", "B3", "B4", "B5", "B6", "B7"]
    assert (part(f).replicas, set(part(f).isr)) == ((2, 3), {2, 3})


def test_failover_bumps_the_controller_epoch_and_elects_for_dead_leaders():
    s = start(3, {T: [[0, 1, 2]]})
    # a hand-built crash window: the leader died while no controller was active
    s = replace(s, zk=replace(s.zk, active=False, memory=(), pending=()))
    s = do(s, A.BrokerFail(0))
    assert part(s).leader == 0  # nobody reacted
    assert error(reassign(s, [1, 2]))[0] == 41
    s = do(s, A.ControllerFailover())  # the election alone
    p = part(s)
    # replica state machine first (0 leaves the ISR, leader -1), then the offline election picks 1
    assert s.zk.active and s.zk.epoch == 2
    assert (p.leader, p.isr, p.leader_epoch) == (1, (1, 2), 2)


@pytest.mark.parametrize("route", ["api", "znode"])
def test_a_crash_between_any_two_steps_resumes_to_the_same_assignment(route):
    s0 = start(range(1, 7), {T: [[1, 2, 3]]})
    if route == "api":
        s = reassign(s0, [4, 5, 6]).state
    else:
        s = P.znode_reassign(s0, T, 0, (4, 5, 6)).state
    # the whole run without a crash: every state along the way
    trace = [s]
    while True:
        if s.zk.pending:
            s = P.apply(s, A.ControllerStep(T, 0)).state
        elif part(s).reassigning:
            q = part(s)
            s = P.apply(s, A.LeaderExpandIsr(T, 0, next(b for b in q.target if b not in q.isr))).state
        else:
            break
        trace.append(s)
    final = part(s)
    assert final.replicas == (4, 5, 6) and s.zk.admin_znode == ()
    for k, mid in enumerate(trace[1:], start=1):
        s = settle(do(mid, A.ControllerFailover()))
        p = part(s)
        assert (p.replicas, set(p.isr), p.adding, p.removing) == ((4, 5, 6), {4, 5, 6}, (), ()), k
        assert s.zk.being_reassigned == () and s.zk.admin_znode == () and s.zk.pending == (), k
        assert p.leader in (4, 5, 6), k


def test_finding_a_crash_before_step_u_loses_an_accepted_api_request():
    s = start(range(1, 7), {T: [[1, 2, 3]]})
    st = reassign(s, [4, 5, 6])
    assert error(st) == (0, None)
    s = settle(do(st.state, A.ControllerFailover()))
    assert part(s).replicas == (1, 2, 3)
    # a cancel lost the same way resumes the cancelled reassignment
    s = settle_phase_a(reassign(start(5, {T: [[0, 1]]}), [2, 3]).state)
    st = cancel(s)
    assert error(st) == (0, None)
    s = settle(do(st.state, A.ControllerFailover()))
    assert part(s).replicas == (2, 3)
    # the znode route survives it: the znode is persisted
    s = P.znode_reassign(start(range(1, 7), {T: [[1, 2, 3]]}), T, 0, (4, 5, 6)).state
    s = settle(do(s, A.ControllerFailover()))
    assert part(s).replicas == (4, 5, 6)


def test_a_crash_during_a_cancel_still_ends_in_the_origin():
    s = start(5, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [2, 3]).state)
    s = do(s, A.LeaderExpandIsr(T, 0, 2))
    s = cancel(s).state
    for k in range(1, 9):
        mid = s
        for _ in range(k):
            mid = do(mid, A.ControllerStep(T, 0))
        end = settle(do(mid, A.ControllerFailover()))
        assert (part(end).replicas, part(end).adding, part(end).isr) == ((0, 1), (), (0, 1)), k


# -- the znode route and the KIP-455 edge case -------------------------------------------------------


def test_znode_write_is_accepted_only_when_the_znode_is_empty():
    s = start(4, {T: [[0], [1]]})
    st = P.apply(s, A.ZnodeReassign(T, 0, (2,)))
    assert st.response.error_code == 0
    s = st.state
    assert s.zk.admin_znode == ((T, 0, (2,)),) and s.zk.pending == ((T, 0, "U"),)
    s, _ = steps(s)
    st = P.apply(s, A.ZnodeReassign(T, 1, (3,)))
    assert (st.response.error_code, st.response.error_message) == (60, "There is an existing assignment running.")
    assert st.state == s
    assert not any(isinstance(a, A.ZnodeReassign) for a in P.enabled_actions(s, ActionSpace(targets=((T, 1, (3,)),), znode=True)))
    # completion (B7) empties the znode; then a new write is accepted
    s = settle(s)
    assert s.zk.admin_znode == ()
    assert P.apply(s, A.ZnodeReassign(T, 1, (3,))).state.zk.admin_znode == ((T, 1, (3,)),)


def test_znode_route_skips_the_liveness_check_and_broker_startup_resumes_it():
    s = do(start(4, {T: [[0]]}), A.BrokerFail(3))
    assert error(reassign(s, [3]))[0] == 39  # the API refuses a dead adding replica
    s = do(s, A.ZnodeReassign(T, 0, (3,)))  # the znode does not
    s = settle(s)
    assert (part(s).replicas, part(s).adding) == ((3, 0), (3,))  # stuck in phase A while 3 is down
    s = do(s, A.BrokerRecover(3))
    assert s.zk.pending == ((T, 0, "U"),)
    s = settle(s)
    assert part(s).replicas == (3,) and s.zk.admin_znode == ()


def test_malformed_znode_writes_are_refused_by_the_tool():
    s = start(3, {T: [[0]]})
    st = P.apply(s, A.ZnodeReassign(T, 0, (1, 1)))
    assert st.response.error_code == 39 and st.state == s
    with pytest.raises(InvalidAction):
        P.apply(s, A.ZnodeReassign(T, 4, (1,)))


def test_kip455_edge_case_znode_target_wins_when_the_crash_precedes_the_api_step_u():
    """KIP-455: "1. znode reassignment involving partitionA and partitionB starts 2. API reassignment involving
    partitionA starts 3. Controller failover ... move partitionA to the replica given reassignment by the
    znode". The API call removes A from the znode first, so this happens only if the controller crashes
    before the API reassignment's step U: ZooKeeper still holds the znode's reassignment of A."""
    s = start(6, {T: [[0], [1]]})
    s = P.znode_reassign_all(s, [(T, 0, (2,)), (T, 1, (3,))]).state
    s, _ = steps(s, T, 0)
    s, _ = steps(s, T, 1)
    st = reassign(s, [4], T, 0)
    assert error(st, T, 0) == (0, None)
    s = st.state
    assert s.zk.admin_znode == ((T, 1, (3,)),)
    s = settle(do(s, A.ControllerFailover()))
    assert part(s, T, 0).replicas == (2,)  # the znode's target, not the API's [4]
    assert part(s, T, 1).replicas == (3,)


def test_kip455_edge_case_is_closed_once_the_api_step_u_ran():
    s = start(6, {T: [[0], [1]]})
    s = P.znode_reassign_all(s, [(T, 0, (2,)), (T, 1, (3,))]).state
    s, _ = steps(s, T, 0)
    s, _ = steps(s, T, 1)
    s = do(reassign(s, [4], T, 0).state, A.ControllerStep(T, 0))  # the API's U
    s = settle(do(s, A.ControllerFailover()))
    assert part(s, T, 0).replicas == (4,) and part(s, T, 1).replicas == (3,)


def test_znode_entries_take_precedence_over_api_reassignments_at_failover():
    s = start(6, {T: [[0]]})
    s = settle_phase_a(reassign(s, [4]).state)  # ZooKeeper: reassigning to [4]
    s = do(s, A.ZnodeReassign(T, 0, (2,)))  # the watch fires; the crash comes before U
    s = do(s, A.ControllerFailover())
    assert s.zk.being_reassigned == ((T, 0, (2,)),) and s.zk.pending == ((T, 0, "U"),)
    s = settle(s)
    assert part(s).replicas == (2,)


def test_failover_queues_znode_entries_before_api_reassignments():
    s = start(6, {T: [[0], [1]]})
    s = settle_phase_a(reassign(s, [4], T, 0).state)
    s = replace(s, zk=replace(s.zk, active=False, pending=()))
    s = do(s, A.ZnodeReassign(T, 1, (5,)))  # written while no controller is active: nobody reacts
    assert s.zk.pending == () and s.zk.admin_znode == ((T, 1, (5,)),)
    s = do(s, A.ControllerFailover())
    assert s.zk.pending == ((T, 1, "U"), (T, 0, "U"))


# -- brokers ------------------------------------------------------------------------------------------


def test_broker_failure_elects_then_removes_the_dead_replica_from_the_isr():
    s = start(3, {T: [[0, 1, 2]]})
    s = do(s, A.BrokerFail(0))
    p = part(s)
    # one ZooKeeper write: the election's new ISR is the live part of the ISR, so ISR removal finds nothing
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (1, (1, 2), 1, 1)
    s = do(s, A.BrokerFail(2))
    p = part(s)
    assert (p.leader, p.isr, p.leader_epoch) == (1, (1,), 2)
    s = do(s, A.BrokerFail(1))  # the last ISR member: kept, leader -1, still a write
    p = part(s)
    assert (p.leader, p.isr, p.leader_epoch) == (NO_LEADER, (1,), 3)
    s = do(s, A.BrokerRecover(0))  # 0 is not in the ISR: no clean leader
    assert part(s).leader == NO_LEADER
    s = do(s, A.BrokerRecover(1))
    assert (part(s).leader, part(s).isr, part(s).leader_epoch) == (1, (1,), 4)


def test_broker_failure_unclean_election_only_if_the_topic_allows_it():
    for unclean, expected in ((False, (NO_LEADER, (0,))), (True, (1, (1,)))):
        s = start(3, {T: [[0, 1]]}, unclean=[T] if unclean else [])
        s = do(s, A.LeaderShrinkIsr(T, 0, 1), A.BrokerFail(0))
        assert (part(s).leader, part(s).isr) == expected


def test_broker_failure_and_recovery_of_a_dead_or_live_broker_change_nothing():
    s = start(3, {T: [[0, 1]]})
    assert P.apply(s, A.BrokerRecover(0)).state == s
    s = do(s, A.BrokerFail(2))
    assert P.apply(s, A.BrokerFail(2)).state == s


def test_offline_election_uses_the_controllers_full_replica_list():
    s = start(4, {T: [[0, 1]]})
    s = settle_phase_a(reassign(s, [2, 3]).state)  # replicas [2,3,0,1]
    s = do(s, A.LeaderExpandIsr(T, 0, 3), A.BrokerFail(0))
    # first live in-sync replica in [2,3,0,1] order: 3 (2 is not in the ISR)
    assert (part(s).leader, set(part(s).isr)) == (3, {1, 3})


# -- elections ------------------------------------------------------------------------------------------


def test_preferred_election():
    s = start(3, {T: [[0, 1, 2]]})
    assert P.apply(s, A.ElectLeaders(T, 0, A.PREFERRED)).response == Ack(84, "Leader election not needed for topic partition.")
    s = do(s, A.BrokerFail(0))
    st = P.apply(s, A.ElectLeaders(T, 0, A.PREFERRED))
    assert (st.response.error_code, st.response.error_message) == (
        80,
        "Failed to elect leader for partition t-0 under strategy PreferredReplicaPartitionLeaderElectionStrategy",
    )
    s = do(s, A.BrokerRecover(0))
    assert part(s).leader == 1  # 0 is back but not in the ISR
    s = do(s, A.LeaderExpandIsr(T, 0, 0))
    le = part(s).leader_epoch
    st = P.apply(s, A.ElectLeaders(T, 0, A.PREFERRED))
    assert st.response.error_code == 0
    assert (part(st.state).leader, part(st.state).leader_epoch) == (0, le + 1)


def test_unclean_election():
    s = start(3, {T: [[0, 1]]})
    st = P.apply(s, A.ElectLeaders(T, 0, A.UNCLEAN))
    assert (st.response.error_code, st.response.error_message) == (84, "Leader election not needed for topic partition.")
    s = do(s, A.LeaderShrinkIsr(T, 0, 1), A.BrokerFail(0))
    assert part(s).leader == NO_LEADER
    st = P.apply(s, A.ElectLeaders(T, 0, A.UNCLEAN))
    assert st.response.error_code == 0 and (part(st.state).leader, part(st.state).isr) == (1, (1,))
    s = do(s, A.BrokerFail(1))
    st = P.apply(s, A.ElectLeaders(T, 0, A.UNCLEAN))
    assert (st.response.error_code, st.response.error_message) == (
        83,
        "Failed to elect leader for partition t-0 under strategy OfflinePartitionLeaderElectionStrategy(true)",
    )
    with pytest.raises(InvalidAction):
        P.apply(s, A.ElectLeaders(T, 0, "ONLINE"))


# -- AlterPartition --------------------------------------------------------------------------------------


def test_alter_partition_checks_in_order():
    s = start(4, {T: [[0, 1, 2]]})
    s = with_epochs(s, 3, 5)
    s = do(s, A.LeaderShrinkIsr(T, 0, 2))  # partition epoch 6
    p = part(s)
    assert (p.isr, p.leader_epoch, p.partition_epoch) == ((0, 1), 3, 6)

    def ap(isr, le=3, pe=6, leader=0, version=3):
        return P.apply(s, A.AlterPartition(T, 0, leader, tuple(isr), le, pe, version))

    assert ap((0, 1, 2), le=4).response.error_code == 41
    assert ap((0, 1, 2), pe=7).response.error_code == 41
    assert ap((0, 1, 2), le=2).response == Ack(74, "The leader epoch in the request is older than the epoch on the broker.")
    assert ap((0, 1, 2), leader=1).response.error_code == 6
    same = ap((1, 0), pe=5)  # already in this state: success even with a stale partition epoch, no write
    assert same.response.error_code == 0 and same.state == s
    assert ap((0, 1, 2), pe=5).response == Ack(95, "The given update version was invalid.")
    assert ap((1, 2)).response.error_code == 42  # without the leader
    assert ap((0, 3)).response.error_code == 42  # 3 is not a replica
    dead = do(s, A.BrokerFail(2))
    d = part(dead)
    st = P.apply(dead, A.AlterPartition(T, 0, 0, (0, 1, 2), d.leader_epoch, d.partition_epoch, 3))
    assert (st.response.error_code, st.response.error_message) == (107, "The new ISR contains at least one ineligible replica.")
    st = P.apply(dead, A.AlterPartition(T, 0, 0, (0, 1, 2), d.leader_epoch, d.partition_epoch, 1))
    assert st.response.error_code == 55
    ok = ap((0, 1, 2))
    assert ok.response.error_code == 0
    assert (part(ok.state).isr, part(ok.state).leader_epoch, part(ok.state).partition_epoch) == ((0, 1, 2), 3, 7)


def test_isr_expansion_only_of_live_caught_up_replicas():
    s = start(3, {T: [[0, 1, 2]]}, replication_layer=True)
    s = do(s, A.LeaderShrinkIsr(T, 0, 2), A.Produce(T, 0))
    st = P.apply(s, A.LeaderExpandIsr(T, 0, 2))
    assert st.response.error_code == 42 and st.state == s  # 2 has not caught up
    s = do(s, A.FollowerFetch(T, 0, 2))
    s2 = do(s, A.BrokerFail(2))
    assert P.apply(s2, A.LeaderExpandIsr(T, 0, 2)).response.error_code == 107
    s = do(s, A.LeaderExpandIsr(T, 0, 2))
    assert part(s).isr == (0, 1, 2)


# -- ListPartitionReassignments -------------------------------------------------------------------------


def test_list_shows_memory_of_reassigning_partitions():
    s = start(5, {T: [[0, 1], [1, 2]], "u": [[0]]})
    s = settle_phase_a(reassign(s, [2, 3], T, 0).state)
    r = P.list_partition_reassignments(s)
    assert [(t.name, [(p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas) for p in t.partitions])
            for t in r.topics] == [(T, [(0, (2, 3, 0, 1), (2, 3), (0, 1))])]
    req = ListPartitionReassignmentsRequest(topics=(ListPartitionReassignmentsTopics(T, (1, 0, 9)),
                                                    ListPartitionReassignmentsTopics("nope", (0,))))
    r2 = P.list_partition_reassignments(s, req)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in r2.topics] == [(T, [0])]
    # after B2 memory is plain: the partition is no longer listed, though still being reassigned
    s = do(s, A.LeaderExpandIsr(T, 0, 2), A.LeaderExpandIsr(T, 0, 3), *[A.ControllerStep(T, 0)] * 3)
    assert s.zk.being_reassigned and P.list_partition_reassignments(s).topics == ()
    inactive = replace(s, zk=replace(s.zk, active=False))
    assert P.list_partition_reassignments(inactive).error_code == 41
    assert P.apply(s, A.ListReassignments()).state == s


# -- unknown names, replication layer -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        A.ControllerStep("nope", 0),
        A.ControllerStep(T, 3),
        A.LeaderExpandIsr(T, 3, 0),
        A.LeaderShrinkIsr("nope", 0, 0),
        A.LeaderExpandIsr(T, 0, 99),
        A.ElectLeaders(T, 7),
        A.ZnodeReassign("nope", 0, (1,)),
        A.BrokerFail(99),
        A.BrokerRecover(99),
        A.AlterPartition(T, 5, 0, (0,), 0, 0),
        A.Produce(T, 0),  # no replication layer
        A.FollowerFetch(T, 0, 99),
    ],
)
def test_unknown_names_raise_invalid_action(action):
    s = start(3, {T: [[0, 1]]})
    with pytest.raises(InvalidAction):
        P.apply(s, action)


def test_cancel_all_is_not_a_zk_action():
    from kreassign.reference import ActionNotSupported

    with pytest.raises(ActionNotSupported):
        P.apply(start(2, {T: [[0]]}), A.CancelAll())


def test_replication_layer_high_watermark_and_deletion_at_b5():
    s = start(3, {T: [[0, 1]]}, replication_layer=True)
    s = do(s, A.Produce(T, 0))
    assert part(s).log.hw == 0
    s = do(s, A.FollowerFetch(T, 0, 1))
    assert part(s).log.hw == 1 and part(s).log.committed == (0,)  # refreshed after the fetch
    s = settle_phase_a(reassign(s, [2]).state)
    s = do(s, A.FollowerFetch(T, 0, 2), A.LeaderExpandIsr(T, 0, 2))
    s = do(s, *[A.ControllerStep(T, 0)] * 5)  # U, B1, B2, B3, B4
    assert part(s).log.log_of(0) == (0,) and C.next_step(s.zk, T, 0) == "B5"
    s = do(s, A.ControllerStep(T, 0))  # B5: the removed replicas' logs are deleted
    assert [b for b, _ in part(s).log.logs] == [2]
    s, _ = steps(s)
    assert part(s).replicas == (2,) and part(s).log.committed == (0,)
