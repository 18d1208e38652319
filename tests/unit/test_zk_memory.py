"""What a zk controller remembers (issue 14, item 3; bounds zk_versions): the znodes as Kafka writes them,
the rebuild on failover through them, the cached leader/ISR with its zkVersion, and the properties of
spec/zk_memory_properties.py, each caught on a deliberately broken controller."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.reference import profile
from kreassign.reference import zk_controller as C
from kreassign.reference import zk_znodes as Z
from kreassign.reference.steps import Plan, Step
from kreassign.reference.zk import ZkProfile
from kreassign.spec import actions as A
from kreassign.spec import findings as F
from kreassign.spec.codec import state_from_json, to_json
from kreassign.spec.messages import INVALID_UPDATE_VERSION, NONE, Ack
from kreassign.spec.state import make_cluster
from kreassign.spec.zk_memory_properties import ZK_MEMORY_PROPERTY_NAMES, cache_disagreements, forget_memory

ZK = profile("zk")


def _cached(c):
    return C.with_leadership_cache(ZK.initial_state(c))


def _run(state, *actions):
    for a in actions:
        state = ZK.apply(state, a).state
    return state


# -- the znodes ------------------------------------------------------------------------------------


def test_znodes_are_written_as_kafka_writes_them_and_read_back():
    entries = (("a", 1, (3, 1)), ("t", 0, (2, 3)))
    data = Z.encode_reassignment(entries)
    assert data == b'{"version":1,"partitions":[{"topic":"a","partition":1,"replicas":[3,1]},' \
                   b'{"topic":"t","partition":0,"replicas":[2,3]}]}'
    assert Z.decode_reassignment(data) == entries
    topic = {0: Plan((2, 3, 1), (2, 3), (1,)), 1: Plan((1, 2), (), ())}
    data = Z.encode_topic(topic)
    assert json.loads(data) == {"version": 3, "partitions": {"0": [2, 3, 1], "1": [1, 2]},
                                "adding_replicas": {"0": [2, 3]}, "removing_replicas": {"0": [1]}}
    assert Z.decode_topic(data) == topic
    state = Z.encode_partition_state(2, 7, (2, 3), 4)
    assert Z.decode_partition_state(state, 12) == Z.PartitionState(2, 7, (2, 3), 4, 12)


def test_decoders_read_kafkas_other_shapes():
    # Kafka's key order is a hash order; a version-1 topic znode has no adding/removing maps;
    # the reassignment znode is a map, so a later entry for the same partition wins (Scala toMap)
    assert Z.decode_topic(b'{"partitions":{"1":[2],"0":[1,2]},"version":1}') == \
        {0: Plan((1, 2), (), ()), 1: Plan((2,), (), ())}
    assert Z.decode_reassignment(b'{"partitions":[{"replicas":[1],"partition":0,"topic":"t"},'
                                 b'{"topic":"t","partition":0,"replicas":[2]}],"version":1}') == (("t", 0, (2,)),)


def test_zookeeper_content_round_trips_every_reachable_state():
    """decode(encode(...)) gives back the persisted part of every state of a small run with failovers."""
    model = ReassignmentModel("zk", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failovers=1, znode=True,
                                           zk_versions=True))
    seen, frontier = set(), list(model.init_states())
    while frontier:
        s = frontier.pop()
        if s in seen:
            continue
        seen.add(s)
        view = Z.read_zookeeper(Z.zookeeper_content(s.cluster))
        for t, i, p in s.cluster.partitions():
            assert view.assignments[(t, i)] == Plan(p.replicas, p.adding, p.removing)
            st = view.states[(t, i)]
            assert (st.leader, st.leader_epoch, st.isr, st.zk_version) == (p.leader, p.leader_epoch, p.isr,
                                                                           p.partition_epoch)
        assert view.reassignments == s.cluster.zk.admin_znode
        frontier += [n for _, n in model.successors(s)]
    assert len(seen) > 1000


def test_the_rebuild_on_failover_reads_the_encoded_znodes(monkeypatch):
    s = _run(ZK.initial_state(make_cluster([1, 2, 3], {"t": [[1, 2]]})), A.Reassign("t", 0, (1, 3)),
             A.ControllerStep("t", 0))
    assert C.memory_of(ZK.apply(s, A.ControllerFailover()).state.zk, "t", 0) == Plan((1, 3, 2), (3,), (2,))
    real = Z.encode_topic
    monkeypatch.setattr(Z, "encode_topic", lambda a: real({p: Plan(x.replicas, (), ()) for p, x in a.items()}))
    rebuilt = ZK.apply(s, A.ControllerFailover()).state.zk
    assert C.memory_of(rebuilt, "t", 0) == Plan((1, 3, 2), (), ()) and rebuilt.being_reassigned == ()


# -- the cached leader/ISR and zkVersions --------------------------------------------------------------


def test_the_cache_is_optional_state_off_by_default():
    s = ZK.initial_state(make_cluster([1, 2], {"t": [[1, 2]]}))
    assert s.zk.leadership is None and "leadership" not in to_json(s.zk)
    c = _cached(make_cluster([1, 2], {"t": [[1, 2]]}))
    assert c.zk.leadership == (("t", 0, 1, (1, 2), 0),)
    assert state_from_json(to_json(c)) == c


def test_a_leaders_own_isr_write_leaves_the_cache_behind_until_the_notification():
    s = _run(_cached(make_cluster([1, 2], {"t": [[1, 2]]})), A.LeaderShrinkIsr("t", 0, 2))
    part = s.partition("t", 0)
    assert part.isr == (1,) and part.partition_epoch == 1 and part.leader_epoch == 0
    assert C.cached_leadership(s.zk, "t", 0, part) == (1, (1, 2), 0)  # zkVersion 0 cached, 1 in ZooKeeper
    assert s.zk.pending == (("t", 0, C.NOTIFICATION),)
    s = _run(s, A.LeaderExpandIsr("t", 0, 2))  # a second write before the controller reads: one notification
    assert s.zk.pending == (("t", 0, C.NOTIFICATION),) and s.zk.leadership[0][4] == 2
    s = _run(s, A.ControllerStep("t", 0))
    assert C.cached_leadership(s.zk, "t", 0, s.partition("t", 0)) == (1, (1, 2), 2) and cache_disagreements(s) == []


def test_a_conditional_write_with_a_stale_zk_version_fails_and_changes_nothing():
    """AlterPartition is checked against the cache and written with the request's partition epoch: ZooKeeper
    moved on behind the cache (BADVERSION) -> 95, no write, no retry; once the cache caught up it goes through."""
    s = _run(_cached(make_cluster([1, 2, 3], {"t": [[1, 2, 3]]})), A.LeaderShrinkIsr("t", 0, 3))
    stale = A.AlterPartition("t", 0, 1, (1,), 0, 0)  # the epochs the controller's cache holds
    zk_only = replace(s, zk=replace(s.zk, pending=()))  # the notification not yet queued
    step = ZK.apply(zk_only, stale)
    assert step.response == Ack(INVALID_UPDATE_VERSION, "The given update version was invalid.")
    assert step.state == zk_only
    assert C.conditional_update(s.partition("t", 0), 0, 1, (1,), False) is None
    s = _run(s, A.ControllerStep("t", 0))
    step = ZK.apply(s, A.AlterPartition("t", 0, 1, (1,), 0, 1))
    assert step.response == Ack(NONE, None) and step.state.partition("t", 0).isr == (1,)
    assert cache_disagreements(step.state) == []


def test_the_controllers_own_writes_refresh_the_cache():
    s = _run(_cached(make_cluster([1, 2, 3], {"t": [[1, 2]]})), A.Reassign("t", 0, (2, 3)))
    s = ZK.apply(s, A.BrokerFail(1)).state  # drains the run, then elects and removes 1 from the ISR
    assert s.zk.pending == () and cache_disagreements(s) == []
    s = ZK.apply(s, A.ControllerFailover()).state
    assert all(r[4] == 0 for r in s.zk.leadership)


def test_zk_versions_is_for_the_zk_profile_only():
    with pytest.raises(ConfigError, match="zk_versions"):
        ReassignmentModel("kraft", Bounds(zk_versions=True))


# -- the properties and their broken variants -----------------------------------------------------------


class KeepsZnodeEntry(ZkProfile):
    """Broken on purpose: an accepted API request leaves the partition's /admin/reassign_partitions entry
    (no maybeRemoveFromZkReassignment), so after a failover the older znode target supersedes it."""

    def alter_partition_reassignments(self, state, request):
        step = super().alter_partition_reassignments(state, request)
        return Step(replace(step.state, zk=replace(step.state.zk, admin_znode=state.zk.admin_znode)), step.response)


class RemembersAcrossFailover(ZkProfile):
    """Broken on purpose: the new controller inherits the dead one's partitionsBeingReassigned."""

    def controller_failover(self, state):
        step = super().controller_failover(state)
        kept = dict(((t, p), r) for t, p, r in state.zk.being_reassigned)
        kept.update(((t, p), r) for t, p, r in step.state.zk.being_reassigned)
        zk = replace(step.state.zk, being_reassigned=tuple((t, p, r) for (t, p), r in sorted(kept.items())))
        return Step(replace(step.state, zk=zk), step.response)


class ForgetsIsrNotification(ZkProfile):
    """Broken on purpose: processIsrChangeNotification without updateLeaderAndIsrCache."""

    def controller_step(self, state, topic, partition):
        zk = state.zk
        if zk.active and C.next_step(zk, topic, partition) == C.NOTIFICATION:
            k = zk.pending.index((topic, partition, C.NOTIFICATION))
            state = replace(state, zk=replace(zk, pending=zk.pending[:k] + zk.pending[k + 1:]))
            return Step(C.maybe_complete_reassignment(state, topic, partition), Ack())
        return super().controller_step(state, topic, partition)


BROKEN = [
    # property, broken controller, smallest bounds at which it is caught, counterexample length
    ("superseded_reassignment_never_resumed", KeepsZnodeEntry,
     Bounds(brokers=2, rf=1, reassigns=2, cancels=0, failovers=1, znode=True, zk_versions=True), 7),
    ("failover_state_from_zookeeper", RemembersAcrossFailover,
     Bounds(brokers=2, rf=1, reassigns=1, cancels=0, failovers=1, isr_changes=False, zk_versions=True), 2),
    ("controller_cache_agrees_with_zookeeper", ForgetsIsrNotification,
     Bounds(brokers=2, rf=2, reassigns=0, cancels=0, zk_versions=True), 2),
]


@pytest.mark.parametrize("prop,broken,bounds,length", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_controller_is_caught(prop, broken, bounds, length, tmp_path):
    real = check_model("zk", bounds, minimize_counterexamples=False)
    assert real.properties[prop].status in (HOLDS, KNOWN) and prop not in real.unexpected
    caught = check_model("zk", bounds, factory=lambda p, b: ReassignmentModel(broken(), b),
                         minimize_counterexamples=False, out_dir=str(tmp_path))
    v = caught.properties[prop]
    assert v.status == VIOLATED and prop in caught.unexpected and v.length == length


def test_the_real_controller_keeps_the_memory_properties_but_one():
    result = check_model("zk", Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failovers=1, zk_versions=True),
                         minimize_counterexamples=False)
    assert result.unexpected == []
    assert result.properties["failover_state_from_zookeeper"].status == HOLDS
    assert result.properties["controller_cache_agrees_with_zookeeper"].status == HOLDS
    v = result.properties["superseded_reassignment_never_resumed"]
    assert v.status == KNOWN and v.findings["lost_request_resumes_superseded"].length == 6


def test_the_finding_is_the_lost_override_not_any_resumption():
    """A crash after the override's U resumes the override itself: no violation, no finding."""
    model = ReassignmentModel("zk", Bounds(brokers=3, rf=2, reassigns=2, failovers=1, zk_versions=True))
    prop = next(p for p in model.properties() if p.name == "superseded_reassignment_never_resumed")
    s = model.init_states()[0]
    for a in (A.Reassign("t", 0, (1, 3)), A.ControllerStep("t", 0), A.ControllerStep("t", 0),
              A.ControllerStep("t", 0), A.Reassign("t", 0, (2, 3))):
        s = model.next_state(s, a)
    lost, lost_edge = model.step(s, A.ControllerFailover())
    assert not prop.predicate(s, lost_edge, lost)
    finding = next(f for f in F.findings_for("zk", prop.name))
    assert finding.signature(s, lost_edge, lost)
    s = model.next_state(s, A.ControllerStep("t", 0))  # the override's U: ZooKeeper now holds it
    after, edge = model.step(s, A.ControllerFailover())
    assert prop.predicate(s, edge, after) and not finding.signature(s, edge, after)


def test_forgetting_memory_keeps_only_what_zookeeper_holds():
    s = _run(_cached(make_cluster([1, 2, 3], {"t": [[1, 2]]})), A.Reassign("t", 0, (2, 3)))
    bare = forget_memory(s)
    assert bare.zk.memory == bare.zk.being_reassigned == bare.zk.pending == bare.zk.leadership == ()
    assert bare.topics == s.topics and bare.zk.admin_znode == s.zk.admin_znode and bare.zk.epoch == s.zk.epoch


def test_the_properties_come_with_the_bound_only():
    names = {p.name for p in ReassignmentModel("zk", Bounds()).properties()}
    assert not names & set(ZK_MEMORY_PROPERTY_NAMES)
    names = {p.name for p in ReassignmentModel("zk", Bounds(zk_versions=True)).properties()}
    assert set(ZK_MEMORY_PROPERTY_NAMES) <= names
