"""The broker's own view (reference/broker_view.py) against Kafka's Partition.scala, and its
properties catching deliberately broken views."""

from __future__ import annotations

import pytest
from kreassign.checker.check.run import HOLDS, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.reference import broker_view as bv
from kreassign.spec.state import NO_LEADER, Partition

B = 101  # AbstractPartitionTest.brokerId: the local broker, which leads

# Kafka 3.8 core/src/test/scala/unit/kafka/cluster/AssignmentStateTest.scala, `parameters`, row by row:
# (isr, replicas, adding, removing, isUnderReplicated) with the local broker B as leader. Kafka's
# test first installs SimpleAssignmentState(original); makeLeader then replaces it, so the
# original list does not change the outcome.
ASSIGNMENT_STATE_TEST = [
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [], [], False),
    ([B, B + 1], [B, B + 1, B + 2], [], [], True),
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [B + 3, B + 4], [B + 1], False),
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [B + 3, B + 4], [], False),
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [], [B + 1], False),
    ([B + 1, B + 2], [B + 1, B + 2], [B], [], False),
    ([B + 2, B + 3, B + 4], [B, B + 1, B + 2], [B + 3, B + 4, B + 5], [], False),
    ([B + 2, B + 3], [B, B + 1, B + 2], [B + 3, B + 4, B + 5], [], True),
]


@pytest.mark.parametrize("isr,replicas,adding,removing,urp", ASSIGNMENT_STATE_TEST)
def test_matches_kafkas_assignment_state_test(isr, replicas, adding, removing, urp):
    p = Partition(replicas=tuple(replicas), isr=tuple(isr), leader=B, adding=tuple(adding), removing=tuple(removing))
    assert bv.is_reassigning(p) == bool(adding or removing)
    assert all(bv.is_adding_replica(p, r) for r in adding)
    assert bv.is_adding_local_replica(p, B) == (B in adding)
    assert bv.is_under_replicated(p, B) == urp


def test_replication_factor_excludes_adding_replicas_and_only_the_leader_reports():
    # [1,2] -> [3,4] in flight: replicas [3,4,1,2], adding [3,4]; the ISR still holds the originals
    p = Partition(replicas=(3, 4, 1, 2), isr=(1, 2), leader=1, adding=(3, 4), removing=(1, 2))
    assert bv.replication_factor(p) == 2
    assert not bv.is_under_replicated(p, 1)
    assert bv.replicas_count(p, 1) == 2 and bv.replicas_count(p, 2) == 0
    assert bv.in_sync_replicas_count(p, 1) == 2 and bv.in_sync_replicas_count(p, 3) == 0
    assert bv.is_adding_local_replica(p, 3) and not bv.is_adding_local_replica(p, 1)
    q = Partition(replicas=(3, 4, 1, 2), isr=(1,), leader=1, adding=(3, 4), removing=(1, 2))
    assert bv.under_replicated_reporters(q, [1, 2, 3, 4]) == (1,)
    # effectiveMinIsr counts every assigned replica: min(2, 4) = 2 > |isr| = 1
    assert bv.is_under_min_isr(q, 1, 2) and not bv.is_under_min_isr(q, 2, 2)
    assert bv.under_replicated_reporters(Partition(replicas=(1, 2), isr=(1,), leader=NO_LEADER), [1, 2]) == ()


def size_of_all_replicas(p: Partition) -> int:
    """Broken on purpose: the replication factor counts the adding replicas (SimpleAssignmentState's rule)."""
    return len(p.replicas)


def every_broker_reports(p, brokers):
    """Broken on purpose: a follower reports the partition under-replicated too."""
    return tuple(b for b in brokers if b in p.replicas and len(p.isr) < len(p.replicas) and p.leader != NO_LEADER)


def broken_rf(p, brokers):
    return bv.under_replicated_reporters(p, brokers, rf=size_of_all_replicas)


VIEW = Bounds(brokers=2, rf=1, reassigns=1, cancels=0, broker_view=True)


def _check(reporters, bounds=VIEW):
    return check_model("kraft", bounds, factory=lambda _p, b: ReassignmentModel("kraft", b, reporters=reporters))


def test_real_view_holds():
    result = _check(None, Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, broker_view=True))
    for name in ("only_leader_reports_under_replicated", "reassignment_alone_not_under_replicated",
                 "under_replicated_reported"):
        assert result.properties[name].status == HOLDS


def test_counting_adding_replicas_is_caught_in_one_step():
    v = _check(broken_rf).properties["reassignment_alone_not_under_replicated"]
    assert v.status == VIOLATED and v.length == 1  # Reassign [1] -> [2]: RF 2 > |isr| 1 at once


def test_followers_reporting_is_caught():
    v = _check(every_broker_reports, Bounds(brokers=2, rf=2, reassigns=0, cancels=0, broker_view=True))
    assert v.properties["only_leader_reports_under_replicated"].status == VIOLATED
    assert v.properties["only_leader_reports_under_replicated"].length == 1  # the leader shrinks the ISR


def test_off_by_default():
    names = {p.name for p in ReassignmentModel("kraft", Bounds()).properties()}
    assert "only_leader_reports_under_replicated" not in names
