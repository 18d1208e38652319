"""CreatePartitions on a topic being reassigned (reference/topic_changes.py) and its property."""

from __future__ import annotations

import pytest
from kreassign.checker.check.run import HOLDS, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.reference import profile
from kreassign.reference.topic_changes import (
    INVALID_PARTITIONS,
    INVALID_REPLICATION_FACTOR,
    create_partitions,
    partition_zero_replication_factor,
)
from kreassign.spec import actions as A
from kreassign.spec import findings as F
from kreassign.spec.state import make_cluster

PROP = "created_partitions_get_replication_factor"


def reassigning():
    s = make_cluster([1, 2, 3, 4], {"t": [[1, 2]]})
    return profile("kraft").apply(s, A.Reassign("t", 0, (3, 4))).state  # replicas [3,4,1,2], adding [3,4]


def test_kafka_reads_the_replication_factor_off_partition_zeros_full_replica_list():
    s = reassigning()
    grown = create_partitions(s, "t", 2).state.partition("t", 1)
    assert len(grown.replicas) == 4  # |original ∪ target|, as ReplicationControlManager / AdminZkClient do
    fixed = create_partitions(s, "t", 2, partition_zero_replication_factor).state.partition("t", 1)
    assert len(fixed.replicas) == 2 and fixed.isr == fixed.replicas and fixed.leader == fixed.replicas[0]


def test_errors_change_nothing():
    s = reassigning()
    step = create_partitions(s, "t", 1)
    assert step.response.error_code == INVALID_PARTITIONS and step.state is s
    small = make_cluster([1, 2], {"t": [[1, 2]]})
    small = profile("kraft").apply(small, A.BrokerFail(2)).state
    step = create_partitions(small, "t", 2)
    assert step.response.error_code == INVALID_REPLICATION_FACTOR and step.state is small


SMALL = Bounds(brokers=2, rf=1, reassigns=1, cancels=0, create_partitions=1)


def test_kafkas_rule_is_caught_during_a_reassignment(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "FINDINGS", tuple(f for f in F.FINDINGS if f.property != PROP))  # the property alone, undeclared
    result = check_model("kraft", SMALL, out_dir=str(tmp_path))
    v = result.properties[PROP]
    assert v.status == VIOLATED and v.length == 2
    trace = read_trace(v.counterexample)
    assert [s["action_text"] for s in trace.steps] == ["Reassign(t-0 -> [2])", "CreatePartitions(t -> 2)"]
    assert len(trace.steps[-1]["state"]["cluster"]["topics"][0]["partitions"][1]["replicas"]) == 2
    assert replay(trace).reproduces


def test_the_brokers_replication_factor_holds():
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, create_partitions=1)
    result = check_model("kraft", bounds, factory=lambda p, b: ReassignmentModel(
        p, b, rf_rule=partition_zero_replication_factor))
    assert result.properties[PROP].status == HOLDS
    assert result.properties["reassignment_can_finish"].status == HOLDS  # new partitions do not disturb it


def test_profiles_with_controller_wide_state_are_refused():
    with pytest.raises(ConfigError, match="create_partitions"):
        ReassignmentModel("zk", SMALL).init_states()


def test_off_by_default():
    m = ReassignmentModel("kraft", Bounds())
    assert len(m.init_states()[0].budget) == 4
    assert not any(isinstance(a, A.CreatePartitions) for a in m.actions(m.init_states()[0]))


# -- automatic preferred-leader balancing beside reassignments ----------------------------------------

BALANCE = "preferred_leader_eventually_leads"


def test_balancing_candidates_follow_checkAndTriggerAutoLeaderRebalance():
    from kreassign.reference.leader_balance import auto_leader_balance, candidates

    kraft = profile("kraft")
    s = make_cluster([1, 2, 3], {"t": [[1, 2], [2, 1]]})
    s = kraft.apply(s, A.BrokerFail(2)).state  # t-1's leader moves to 1
    s = kraft.apply(s, A.BrokerRecover(2)).state
    s = kraft.apply(s, A.LeaderExpandIsr("t", 1, 2)).state
    assert s.partition("t", 1).leader == 1 and candidates(s) == [("t", 1)]
    s = kraft.apply(s, A.Reassign("t", 0, (1, 3))).state  # an unrelated reassignment in flight
    assert candidates(s, skip_while_reassigning=True) == []  # Kafka < 3.4 (KAFKA-10149)
    assert auto_leader_balance(kraft, s).state.partition("t", 1).leader == 2


def test_real_balancing_is_never_blocked():
    bounds = Bounds(brokers=3, partitions=2, rf=2, reassigns=1, cancels=0, failures=1, leader_balance=True)
    assert check_model("kraft", bounds).properties[BALANCE].status == HOLDS


def test_balancing_blocked_by_a_reassignment_is_caught_as_a_lasso(tmp_path):
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, leader_balance=True)
    result = check_model("kraft-pre-3.4", bounds, out_dir=str(tmp_path), factory=lambda _p, b: ReassignmentModel(
        "kraft", b, balance_skips_reassigning=True))
    v = result.properties[BALANCE]
    assert v.status == VIOLATED and v.length == 2
    trace = read_trace(v.counterexample)
    # the reassigned partition's preferred leader is now 2 (in sync, live), but the reassignment
    # waits for 3, which stays down: the pre-3.4 rule never balances while it is in flight
    assert [s["action_text"] for s in trace.steps] == ["Reassign(t-0 -> [2,3])", "BrokerFail(3)"]
    assert trace.loop_start == 2
