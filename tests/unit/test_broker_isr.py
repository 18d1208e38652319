"""The leaders' ISR maintenance and the followers' fetchers (reference/broker_isr.py, bounds broker_isr): Kafka's
rules step by step, the real profiles keeping the properties, and deliberately broken leaders and brokers
caught with short counterexamples."""

from __future__ import annotations

import json

import pytest
from kreassign.checker.check.run import HOLDS, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.server import Oracle
from kreassign.checker.traces.format import read_trace, trace_from_path, write_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.validation import validate_text
from kreassign.reference import profile
from kreassign.reference.broker_isr import LeaderIsrManager, _following
from kreassign.reference.capabilities import apply_action
from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.codec import decode_action, state_from_json, to_json

PROPS = ("acked_on_every_isr_member", "isr_joiner_in_sync", "removed_replica_not_readmitted",
         "no_fetcher_without_log", "isr_shrinks_only_out_of_sync")


# -- deliberately broken leaders and brokers --------------------------------------------------------------


class AdmitsAnyFetcher(LeaderIsrManager):
    """Broken on purpose: the leader records a fetch from any broker, replica or not (no
    followerReplicaOrThrow / getReplica check), so a removed replica whose fetcher still runs is proposed
    for the ISR (KAFKA-6638 / KAFKA-9672's leader)."""

    def knows_replica(self, cluster, topic, partition, part, broker):
        return broker != part.leader


class HwIgnoresPendingJoiner(LeaderIsrManager):
    """Broken on purpose: the high watermark waits for the committed ISR only, not the maximal ISR (before
    KIP-497's PendingExpandIsr), so it passes a joiner whose AlterPartition is still in flight."""

    def hw_waits_for(self, cluster, layer, topic, partition, part):
        return part.isr


class ExpandsWithoutCatchingUp(LeaderIsrManager):
    """Broken on purpose: the leader adds any fetching follower to the ISR (no isFollowerInSync)."""

    def in_sync(self, part, broker):
        return True


class DeletesBeforeStoppingFetcher(LeaderIsrManager):
    """Broken on purpose: a broker drops the partition without removeFetcherForPartitions first."""

    def stopped_fetchers(self, before, after):
        dropped = set(before.hosted or ()) - set(after.hosted or ())
        return (_following(before) - _following(after)) - dropped


class ShrinksInSyncFollowers(LeaderIsrManager):
    """Broken on purpose: the isr-expiration task expels every follower, caught up or not."""

    def out_of_sync(self, cluster, layer, topic, partition, part):
        return tuple(b for b in part.isr if b != part.leader)


def isr_model(isr=None):
    return lambda p, b: ReassignmentModel(p, b, isr=isr)


LOGS = Bounds(brokers=2, rf=2, reassigns=0, cancels=0, log_length=2, broker_isr=True)
MOVES = Bounds(brokers=2, rf=1, reassigns=1, cancels=1, broker_replicas=True, broker_isr=True)

#: (property, broken variant, profile, bounds, factory): the smallest bounds that catch each variant
BENCH_ROWS = [
    ("removed_replica_not_readmitted", "leader records a fetch from any broker (no getReplica check)", "kraft",
     MOVES, isr_model(AdmitsAnyFetcher())),
    ("removed_replica_not_readmitted", "leader records a fetch from any broker (no getReplica check)", "zk",
     MOVES, isr_model(AdmitsAnyFetcher())),
    ("acked_on_every_isr_member", "high watermark over the committed ISR only (no KIP-497 maximal ISR)", "kraft",
     LOGS, isr_model(HwIgnoresPendingJoiner())),
    ("isr_joiner_in_sync", "leader expands the ISR with any fetching follower", "kraft", LOGS,
     isr_model(ExpandsWithoutCatchingUp())),
    ("no_fetcher_without_log", "partition dropped before its fetcher stops", "kraft", MOVES,
     isr_model(DeletesBeforeStoppingFetcher())),
    ("isr_shrinks_only_out_of_sync", "isr-expiration expels caught-up followers", "kraft", LOGS,
     isr_model(ShrinksInSyncFollowers())),
]


def _violation(prop, isr, bounds, prof="kraft", out_dir=None):
    return check_model(prof, bounds, factory=isr_model(isr), out_dir=out_dir).properties[prop]


# -- Kafka's rules, step by step ---------------------------------------------------------------------------


def _walk(model, actions):
    state = model.init_states()[0]
    path = [(state, None)]
    for a in actions:
        assert a in model.actions(state), (str(a), [str(x) for x in model.actions(state)])
        state, label = model.step(state, a)
        path.append((state, label))
    return path


#: a follower expelled for lagging, then re-admitted by its fetches (the high watermark waits for it)
EXPEL_READMIT = (A.Produce("t", 0), A.LagExpire("t", 0, 2), A.LeaderMaybeShrinkIsr("t", 0),
                 A.AlterPartitionArrive("t", 0), A.Produce("t", 0), A.ReplicaFetch("t", 0, 2),
                 A.ReplicaFetch("t", 0, 2), A.AlterPartitionArrive("t", 0))


def test_a_lagging_follower_is_expelled_and_readmitted_by_its_fetches():
    model = ReassignmentModel("kraft", LOGS)
    path = _walk(model, EXPEL_READMIT)
    part = [s.cluster.partition("t", 0) for s, _ in path]
    assert part[1].log.hw == 0  # acks=all: the record waits for follower 2, in the ISR
    assert path[3][0].cluster.broker_isr.inflight == (("t", 0, 1, (1,), -1, 0, 0),)  # PendingShrinkIsr
    assert part[3].isr == (1, 2) and part[4].isr == (1,) and part[4].log.hw == 1
    assert part[5].log.hw == 2  # the ISR is the leader alone
    assert part[6].isr == (1,) and not path[6][0].cluster.broker_isr.inflight  # 1 record behind the HW: not in sync
    assert path[7][0].cluster.broker_isr.inflight == (("t", 0, 1, (1, 2), 2, 0, 0),)  # caught up: PendingExpandIsr
    assert part[8].isr == (1, 2) and path[8][0].cluster.broker_isr.lagging == ()
    # the layer round-trips through JSON, actions included
    assert state_from_json(to_json(path[7][0].cluster)) == path[7][0].cluster
    assert all(decode_action(to_json(a)) == a and str(a) for a in EXPEL_READMIT)


def test_a_stale_alter_partition_is_refused_by_the_kraft_controller():
    # the expansion is in flight when a reassignment changes the partition: the controller refuses it
    model = ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=0, log_length=1, broker_isr=True))
    path = _walk(model, (A.Produce("t", 0), A.LagExpire("t", 0, 2), A.LeaderMaybeShrinkIsr("t", 0),
                         A.AlterPartitionArrive("t", 0), A.ReplicaFetch("t", 0, 2), A.Reassign("t", 0, (1, 3))))
    request = path[-1][0].cluster.broker_isr.inflight[0]
    assert request[:5] == ("t", 0, 1, (1, 2), 2) and request[6] == 1  # sent one partition epoch ago
    state, label = model.step(path[-1][0], A.AlterPartitionArrive("t", 0))
    assert label.response.error_code == M.INVALID_UPDATE_VERSION
    assert state.cluster.partition("t", 0).isr == (1,) and not state.cluster.broker_isr.inflight


def test_a_removed_replica_fetching_with_its_own_metadata_is_refused():
    # Cancel removes 2 while its broker still runs the fetcher it started; the leader refuses its fetch
    model = ReassignmentModel("kraft", MOVES)
    path = _walk(model, (A.Reassign("t", 0, (2,)), A.BrokerReplay(2), A.Cancel("t", 0)))
    cluster = path[-1][0].cluster
    assert (2, "t", 0) in cluster.broker_isr.fetchers and 2 not in cluster.partition("t", 0).replicas
    step = model.apply(cluster, A.ReplicaFetch("t", 0, 2))
    assert step.state == cluster and step.response.error_code == M.NOT_LEADER_OR_FOLLOWER
    state, _ = model.step(path[-1][0], A.BrokerReplay(2))  # the broker acts on the metadata: fetcher first
    assert state.cluster.broker_isr.fetchers == () and state.cluster.hosted == ((1, "t", 0),)


# -- the real profiles keep every property --------------------------------------------------------------------


@pytest.mark.parametrize("prof, bounds", [
    ("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, log_length=2, broker_replicas=True, broker_isr=True)),
    ("kraft", Bounds(brokers=2, rf=2, reassigns=1, cancels=1, failures=1, log_length=2, broker_isr=True,
                     kafka_version="3.9.2")),
    ("zk", Bounds(brokers=2, rf=1, reassigns=1, cancels=1, log_length=1, broker_replicas=True, broker_isr=True)),
])
def test_real_profiles_keep_every_broker_isr_property(prof, bounds):
    result = check_model(prof, bounds, factory=isr_model())
    assert result.complete
    assert {p: result.properties[p].status for p in PROPS} == dict.fromkeys(PROPS, HOLDS)


# -- broken variants, caught ------------------------------------------------------------------------------------


def test_a_leader_admitting_any_fetcher_proposes_a_removed_replica(tmp_path):
    v = _violation("removed_replica_not_readmitted", AdmitsAnyFetcher(), MOVES, out_dir=str(tmp_path))
    assert v.status == VIOLATED and v.length == 4  # Reassign [2], BrokerReplay(2), Cancel, ReplicaFetch(2)
    steps = [s["action_text"] for s in read_trace(v.counterexample).steps]
    assert steps[-1] == "ReplicaFetch(t-0 <- 2)" and "Cancel(t-0)" in steps


def test_the_kraft_controller_still_refuses_the_removed_replica():
    # the broken leader's AlterPartition reaches the controller, which refuses a member not in the replicas
    model = ReassignmentModel("kraft", MOVES, isr=AdmitsAnyFetcher())
    path = _walk(model, (A.Reassign("t", 0, (2,)), A.BrokerReplay(2), A.Cancel("t", 0), A.ReplicaFetch("t", 0, 2)))
    state, label = model.step(path[-1][0], A.AlterPartitionArrive("t", 0))
    assert label.response.error_code == M.INVALID_REQUEST and state.cluster.partition("t", 0).isr == (1,)


def test_a_high_watermark_past_a_pending_joiner_is_caught():
    v = _violation("acked_on_every_isr_member", HwIgnoresPendingJoiner(), LOGS)
    assert v.status == VIOLATED and v.length == 7


def test_zk_leaders_are_held_to_the_same_rules():
    # Kafka 3.9.2's ZooKeeper controller does not check that an AlterPartition's members are assigned or caught
    # up (tryProcessAlterPartition): with broker_isr the zk profile's two model guards are off, so a leader's
    # mistake reaches ZooKeeper's ISR as it would in Kafka
    v = _violation("acked_on_every_isr_member", HwIgnoresPendingJoiner(), LOGS, prof="zk")
    assert v.status == VIOLATED and v.length == 7


def test_an_expansion_without_catching_up_is_caught():
    v = _violation("isr_joiner_in_sync", ExpandsWithoutCatchingUp(), LOGS)
    assert v.status == VIOLATED and v.length == 7


def test_a_partition_dropped_before_its_fetcher_stops_is_caught():
    v = _violation("no_fetcher_without_log", DeletesBeforeStoppingFetcher(), MOVES)
    assert v.status == VIOLATED and v.length == 4  # Reassign [2], BrokerReplay(2), Cancel, BrokerReplay(2)


def test_expelling_a_caught_up_follower_is_caught():
    v = _violation("isr_shrinks_only_out_of_sync", ShrinksInSyncFollowers(), LOGS)
    assert v.status == VIOLATED and v.length == 1


# -- configuration and plumbing -----------------------------------------------------------------------------------


def test_off_by_default_and_refused_where_it_does_not_apply():
    m = ReassignmentModel("kraft", Bounds())
    assert m.init_states()[0].cluster.broker_isr is None and not set(PROPS) & {p.name for p in m.properties()}
    for prof, extra in (("kip455", {}), ("kip236", {}), ("zk", {"zk_versions": True}),
                        ("kraft", {"delete_topic": True})):
        with pytest.raises(ConfigError, match="broker_isr"):
            ReassignmentModel(prof, Bounds(broker_isr=True, **extra))


def test_a_trace_of_the_new_actions_replays_validates_and_the_oracle_agrees(tmp_path):
    model = ReassignmentModel("kraft", LOGS)
    path = _walk(model, EXPEL_READMIT)
    file = tmp_path / "kraft__broker_isr.json"
    write_trace(trace_from_path(model, "reassignment", "acked_on_every_isr_member", "always", path), str(file))
    trace = read_trace(str(file))
    assert replay(trace).steps_matched == len(EXPEL_READMIT)
    lines = [json.dumps({"initial_state": trace.initial["cluster"], "profile": "kraft"})]
    lines += [json.dumps({"action": s["action"], "state": s["kafka_state"]}) for s in trace.steps]
    assert validate_text("\n".join(lines) + "\n", "jsonl").verdict == "VALID"
    # an unlogged fetch is explained by the layer's own enumeration
    unlogged = lines[:6] + [json.dumps({"state": trace.steps[5]["kafka_state"]})] + lines[7:]
    assert validate_text("\n".join(unlogged) + "\n", "jsonl").verdict == "VALID"
    oracle, state = Oracle("kraft"), trace.initial["cluster"]
    for step in trace.steps:
        got = oracle.handle({"id": 1, "op": "step", "state": state, "action": step["action"]})
        assert got["ok"] and got["result"]["state"] == step["kafka_state"]
        assert apply_action(profile("kraft"), state_from_json(state), decode_action(step["action"])).state == \
            state_from_json(step["kafka_state"])
        state = step["kafka_state"]


def test_fuzz_finds_a_broken_leader_through_the_same_dispatch(tmp_path):
    from kreassign.checker.fuzz.stateful import VIOLATED as FUZZ_VIOLATED
    from kreassign.checker.fuzz.stateful import fuzz_settings, run_fuzz

    run = run_fuzz(ReassignmentModel("kraft", LOGS, isr=ShrinksInSyncFollowers()), seed=1, out_dir=str(tmp_path),
                   hypothesis_settings=fuzz_settings(30, 6, derandomize=True))
    o = run.properties["isr_shrinks_only_out_of_sync"]
    assert o.status == FUZZ_VIOLATED
    assert read_trace(o.counterexample).steps[-1]["action"]["type"] == "LeaderMaybeShrinkIsr"


def test_the_properties_view_of_the_assignment_is_the_leaders():
    # twin: spec/broker_isr_properties.still_assigned and reference/broker_isr.leader_view, on every state of a
    # zk run through phase B (where the controller's assignment runs ahead of ZooKeeper's) and of a kraft run
    from kreassign.reference.broker_isr import leader_view
    from kreassign.spec.broker_isr_properties import still_assigned

    seen = 0
    for prof in ("zk", "kraft"):
        model = ReassignmentModel(prof, Bounds(brokers=3, rf=2, reassigns=1, cancels=1, log_length=0, broker_isr=True))
        frontier, visited = [model.init_states()[0]], set()
        while frontier:
            state = frontier.pop()
            if state in visited:
                continue
            visited.add(state)
            for t, i, p in state.cluster.partitions():
                assert still_assigned(state.cluster, t, i, p) == set(leader_view(state.cluster, t, i, p)) & set(
                    p.replicas)
                seen += set(leader_view(state.cluster, t, i, p)) != set(p.replicas)
            frontier += [nxt for _, nxt in model.successors(state)]
    assert seen  # phase B was reached: the two views differed somewhere
