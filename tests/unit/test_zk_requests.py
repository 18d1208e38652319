"""The zk controller's requests to brokers (issue 14, item 1; bounds broker_replicas with the zk profile):
per-broker FIFO queues of LeaderAndIsr / StopReplica, brokers acting on them, and the properties of
spec/zk_request_properties.py, each caught on a deliberately broken controller or broker."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.reference import zk_controller as C
from kreassign.reference import zk_requests as R
from kreassign.reference.broker_replicas import BrokerReplicaManager, hosts, with_broker_replicas
from kreassign.reference.capabilities import KAFKA
from kreassign.reference.zk import ZkProfile
from kreassign.spec import actions as A
from kreassign.spec.codec import state_from_json, to_json
from kreassign.spec.state import make_cluster
from kreassign.spec.zk_request_properties import ZK_REQUEST_PROPERTY_NAMES

ZK = ZkProfile()


def _run(state, *actions):
    for a in actions:
        state = KAFKA.apply(ZK, state, a).state
    return state


def _kinds(state, broker):
    return [(q.kind, q.delete) if q.kind == R.STOP_REPLICA else q.kind for q in R.queue_of(state, broker)]


def test_a_move_queues_requests_and_the_brokers_act_on_them_in_order():
    s = with_broker_replicas(ZK.initial_state(make_cluster([1, 2], {"t": [[1]]})))
    s = _run(s, A.Reassign("t", 0, (2,)), A.ControllerStep("t", 0), A.ControllerStep("t", 0))  # U, A1
    assert _kinds(s, 1) == ["LeaderAndIsr"] and _kinds(s, 2) == ["LeaderAndIsr"]
    assert not KAFKA.allows(s, A.LeaderExpandIsr("t", 0, 2))  # 2 has not been told: no log, no fetching
    s = _run(s, A.ControllerStep("t", 0), A.BrokerReplay(2))  # A2's copy is not queued twice
    assert hosts(s, 2, "t", 0) and R.queue_of(s, 2) == ()
    assert KAFKA.allows(s, A.LeaderExpandIsr("t", 0, 2))  # it follows at the current epoch
    s = _run(s, A.LeaderExpandIsr("t", 0, 2))
    s = C.drain(R.to_absolute(s))
    s = R.to_relative(s)
    assert s.partition("t", 0).replicas == (2,)
    # broker 1: the A1 LeaderAndIsr, B4's StopReplica(delete=false), B5's StopReplica(delete=true)
    assert _kinds(s, 1) == ["LeaderAndIsr", ("StopReplica", False), ("StopReplica", True)]
    s = _run(s, A.BrokerReplay(1), A.BrokerReplay(1))
    assert hosts(s, 1, "t", 0) and R.known_of(s, 1, "t", 0)[4] == R.STOPPED
    s = _run(s, A.BrokerReplay(1))
    assert not hosts(s, 1, "t", 0) and R.known_of(s, 1, "t", 0) is None
    assert state_from_json(to_json(s)) == s


def test_a_failed_broker_loses_its_queue_and_memory_not_its_logs():
    s = with_broker_replicas(ZK.initial_state(make_cluster([1, 2], {"t": [[1, 2]]})))
    s = _run(s, A.BrokerFail(2))
    assert hosts(s, 2, "t", 0) and R.known_of(s, 2, "t", 0) is None and R.queue_of(s, 2) == ()
    s = _run(s, A.BrokerRecover(2))  # OnlineReplica: a LeaderAndIsr for its replica
    assert _kinds(s, 2) == ["LeaderAndIsr"] and not KAFKA.allows(s, A.LeaderExpandIsr("t", 0, 2))
    s = _run(s, A.BrokerReplay(2))
    assert KAFKA.allows(s, A.LeaderExpandIsr("t", 0, 2))


def test_an_older_leader_epoch_is_ignored_and_epochs_stay_relative():
    s = with_broker_replicas(ZK.initial_state(make_cluster([1, 2], {"t": [[1, 2]]})))
    s = R.to_absolute(s)
    stale = replace(R.queue_of(R.send_leader_and_isr(s, "t", 0, (2,)), 2)[0], leader_epoch=-1, leader=2)
    assert R.become_leader_or_follower(s, 2, stale) == s
    assert R.stop_replica(s, 2, replace(stale, kind=R.STOP_REPLICA, delete=True)) == s  # fenced
    assert all(k[3] == 0 for k in R.to_relative(s).requests.known)


def test_off_by_default_and_zk_only():
    assert ReassignmentModel("zk", Bounds()).init_states()[0].cluster.requests is None
    kraft = ReassignmentModel("kraft", Bounds(broker_replicas=True))
    assert kraft.init_states()[0].cluster.requests is None
    assert not set(ZK_REQUEST_PROPERTY_NAMES) & {p.name for p in kraft.properties()}
    zk = ReassignmentModel("zk", Bounds(broker_replicas=True))
    assert set(ZK_REQUEST_PROPERTY_NAMES) <= {p.name for p in zk.properties()}


# -- deliberately broken controllers and brokers --------------------------------------------------------


class DeletesSourcesAtStart(ZkProfile):
    """Broken on purpose: step A1 also sends the removing replicas StopReplica(delete = true), as if a move
    could drop its sources when it starts."""

    def controller_step(self, state, topic, partition):
        first = C.next_step(state.zk, topic, partition) == "A1"
        step = super().controller_step(state, topic, partition)
        if not first:
            return step
        removing = step.state.partition(topic, partition).removing
        return replace(step, state=R.send_stop_replica(step.state, topic, partition, removing, delete=True))


class StopsWithoutDelete(ZkProfile):
    """Broken on purpose: step B5 sends StopReplica(delete = false) (KAFKA-16120's shape)."""

    def controller_step(self, state, topic, partition):
        b5 = C.next_step(state.zk, topic, partition) == "B5"
        step = super().controller_step(state, topic, partition)
        if not b5 or step.state.requests is None:
            return step
        queues = tuple((b, tuple(replace(q, delete=False) if (q.topic, q.partition) == (topic, partition) else q
                                 for q in queue)) for b, queue in step.state.requests.queues)
        return replace(step, state=replace(step.state, requests=replace(step.state.requests, queues=queues)))


class HostsLogIsEnough(BrokerReplicaManager):
    """Broken on purpose: a follower fetches as soon as it hosts the log (KRaft's rule), before any
    LeaderAndIsr told it it follows (a restarted broker's log from before its failure)."""

    def can_fetch(self, cluster, topic, partition, broker):
        return hosts(cluster, broker, topic, partition)


BROKEN = [
    # property, model factory, smallest bounds it is caught at, counterexample length
    ("last_in_sync_log_kept", lambda p, b: ReassignmentModel(DeletesSourcesAtStart(), b),
     Bounds(brokers=2, rf=1, reassigns=1, cancels=0, broker_replicas=True), 5),
    ("isr_joiner_told_by_leader_and_isr", lambda p, b: ReassignmentModel(p, b, replicas=HostsLogIsEnough()),
     Bounds(brokers=2, rf=2, reassigns=0, cancels=0, failures=1, broker_replicas=True), 3),
    ("no_strays_once_quiet", lambda p, b: ReassignmentModel(StopsWithoutDelete(), b),
     Bounds(brokers=2, rf=1, reassigns=1, cancels=0, broker_replicas=True), 19),
]


@pytest.mark.parametrize("prop,factory,bounds,length", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_variant_is_caught(prop, factory, bounds, length, tmp_path):
    real = check_model("zk", bounds, minimize_counterexamples=False)
    assert real.properties[prop].status in (HOLDS, KNOWN) and prop not in real.unexpected
    caught = check_model("zk", bounds, factory=factory, minimize_counterexamples=False, out_dir=str(tmp_path))
    v = caught.properties[prop]
    assert v.status == VIOLATED and prop in caught.unexpected
    assert v.length == length and len(read_trace(v.counterexample).steps) >= length
