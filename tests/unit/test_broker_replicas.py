"""Broker-side replica lifecycle (reference/broker_replicas.py): the logs brokers host as they act on
the metadata they replay, and its properties catching deliberately broken brokers."""

from __future__ import annotations

import os

from kreassign.checker.check.run import HOLDS, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.reference import profile
from kreassign.reference.broker_replicas import BrokerReplicaManager, initial_hosted, strays
from kreassign.spec import actions as A
from kreassign.spec import findings as F
from kreassign.spec.codec import state_from_json, to_json
from kreassign.spec.state import make_cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROPS = ("isr_joiner_was_told", "no_in_sync_log_deleted", "no_stray_replicas")


def test_replay_creates_new_replicas_logs_and_deletes_removed_ones():
    kraft, mgr = profile("kraft"), BrokerReplicaManager()
    s = make_cluster([1, 2], {"t": [[1]]})
    s = s.__class__(s.brokers, s.topics, hosted=initial_hosted(s))
    s = kraft.apply(s, A.Reassign("t", 0, (2,))).state
    assert not mgr.can_fetch(s, "t", 0, 2)  # 2 has not acted on the metadata yet: no log to fetch into
    s = mgr.replay(s, 2).state
    assert s.hosted == ((1, "t", 0), (2, "t", 0)) and mgr.can_fetch(s, "t", 0, 2)
    s = kraft.apply(s, A.LeaderExpandIsr("t", 0, 2)).state  # completes: replicas [2]
    assert strays(s) == ((1, "t", 0),)
    s = mgr.replay(s, 1).state
    assert s.hosted == ((2, "t", 0),) and strays(s) == ()
    assert state_from_json(to_json(s)) == s


class NeverDeletes(BrokerReplicaManager):
    """Broken on purpose: removed replicas' logs are never deleted (StopReplica with delete = false,
    KAFKA-16120)."""

    def deletes(self, cluster, broker, mine):
        return set()


class DeletesRemovingReplicasEarly(BrokerReplicaManager):
    """Broken on purpose: a broker deletes its log as soon as it is a *removing* replica."""

    def deletes(self, cluster, broker, mine):
        return {(t, i) for b, t, i in cluster.hosted if b == broker
                and (broker not in cluster.partition(t, i).replicas or broker in cluster.partition(t, i).removing)}


class FetchesUntold(BrokerReplicaManager):
    """Broken on purpose: a follower fetches before it was told it is a replica."""

    def can_fetch(self, cluster, topic, partition, broker):
        return True


SMALL = Bounds(brokers=2, rf=1, reassigns=1, cancels=1, broker_replicas=True)


def _check(mgr, bounds=SMALL, prof="kraft", **kw):
    return check_model(prof, bounds, factory=lambda p, b: ReassignmentModel(p, b, replicas=mgr), **kw)


def test_real_kraft_keeps_every_broker_property():
    result = _check(None, Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, broker_replicas=True))
    assert all(result.properties[p].status == HOLDS for p in PROPS)


def test_a_removed_replica_whose_log_is_never_deleted_is_caught_as_a_lasso():
    v = _check(NeverDeletes()).properties["no_stray_replicas"]
    assert v.status == VIOLATED and v.length == 3  # Reassign [2], BrokerReplay(2), Cancel: 2 keeps its log


def test_deleting_a_removing_replicas_log_early_is_caught():
    v = _check(DeletesRemovingReplicasEarly()).properties["no_in_sync_log_deleted"]
    assert v.status == VIOLATED and v.length == 2  # Reassign [2], BrokerReplay(1): 1 still leads


def test_joining_the_isr_before_being_told_is_caught():
    v = _check(FetchesUntold()).properties["isr_joiner_was_told"]
    assert v.status == VIOLATED and v.length == 2  # Reassign [2], LeaderExpandIsr(+2)


def test_zk_deletes_the_log_of_the_last_in_sync_replica():
    # a finding: the cancel's step U drops the adding replica 3 from the replicas but keeps it as the
    # ISR's last member (removeReplicasFromIsr), then StopReplica(delete = true) deletes its log; with zk
    # the brokers act on the controller's queued requests (reference/zk_requests.py), and exploring the
    # finding's bounds takes minutes, so the curated trace is replayed here (test_findings_capabilities
    # explores them)
    finding = next(f for f in F.findings_for("zk", "no_in_sync_log_deleted") if f.name == "last_isr_log_deleted")
    trace = read_trace(os.path.join(ROOT, F.trace_file("zk", finding)))
    texts = [s["action_text"] for s in trace.steps]
    assert len(texts) == 13 and "BrokerFail(1)" in texts and "Cancel(t-0)" in texts
    assert texts[-1] == "BrokerReplay(3)" and replay(trace).reproduces


def test_off_by_default():
    m = ReassignmentModel("kraft", Bounds())
    assert m.init_states()[0].cluster.hosted is None
    assert not set(PROPS) & {p.name for p in m.properties()}
