"""Replication throttles as kafka-reassign-partitions.sh manages them (reference/throttles.py), and
the throttle properties catching deliberately broken tools."""

from __future__ import annotations

from dataclasses import replace

from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.reference import profile
from kreassign.reference.throttles import ReassignTool, clear_all, proposed_moves, set_throttles
from kreassign.spec import actions as A
from kreassign.spec import findings as F
from kreassign.spec.codec import state_from_json, to_json
from kreassign.spec.state import ReplicationThrottles, make_cluster

KRAFT = profile("kraft")
TOOL = ReassignTool()


def cluster(assignment=((1, 2),)):
    return make_cluster([1, 2, 3, 4], {"t": [list(r) for r in assignment]})


def test_execute_throttles_sources_as_leader_and_new_replicas_as_follower():
    step = TOOL.execute(KRAFT, cluster(), "t", 0, (2, 3))
    th = step.state.throttles
    # calculateLeaderThrottles: every source "0:1,0:2"; calculateFollowerThrottles: "0:3"
    assert th.leader == (("t", 0, 1), ("t", 0, 2)) and th.follower == (("t", 0, 3),)
    assert th.brokers == (1, 2, 3)  # modifyInterBrokerThrottle on every moving broker
    assert step.state.partition("t", 0).adding == (3,)


def test_override_keeps_the_ongoing_moves_sources():
    s = TOOL.execute(KRAFT, cluster(), "t", 0, (2, 3)).state
    moves = proposed_moves(KRAFT, s, {("t", 0): (3, 4)})
    # calculateProposedMoveMap: the sources of an in-flight partition come from its ongoing move
    assert moves[("t", 0)] == (frozenset({1, 2}), frozenset({3, 4}))
    th = TOOL.execute(KRAFT, s, "t", 0, (3, 4)).state.throttles
    assert th.follower == (("t", 0, 3), ("t", 0, 4)) and th.leader == (("t", 0, 1), ("t", 0, 2))


def test_throttles_are_set_even_when_the_request_fails():
    step = TOOL.execute(KRAFT, cluster(), "t", 0, (2, 9))  # broker 9 is not registered: 39
    assert step.response.partition_error("t", 0)[0] == 39
    assert ("t", 0, 9) in step.state.throttles.follower


def test_verify_clears_only_when_nothing_moves_and_cancel_clears_regardless():
    s = TOOL.execute(KRAFT, cluster(((1, 2), (1, 2))), "t", 0, (2, 3)).state
    assert TOOL.verify(KRAFT, s, "t", 1).state.throttles == s.throttles  # t-0 still moving
    cancelled = TOOL.cancel(KRAFT, s, "t", 1)  # t-1 is not moving: nothing cancelled ...
    assert cancelled.response.error_code == 85
    assert cancelled.state.throttles is None  # ... but every throttle is cleared (clearAllThrottles)
    assert clear_all(ReplicationThrottles((("u", 0, 1),), (), (1,)), {"t"}) == ReplicationThrottles((("u", 0, 1),))


def test_throttles_round_trip_and_stay_out_of_json_when_unset():
    s = cluster()
    assert "throttles" not in to_json(s)
    t = replace(s, throttles=set_throttles(None, {("t", 0): (frozenset({1}), frozenset({3}))}))
    assert state_from_json(to_json(t)) == t


# -- the checker ------------------------------------------------------------------------------------


class VerifyClearsWhenOwnPartitionIsDone(ReassignTool):
    """Broken on purpose: --verify clears all throttles once *its own* partitions are done (the rule
    of the tool before --additional existed), though another batch is still moving."""

    def verify_may_clear(self, profile, state, topic, partition):
        listing = profile.list_partition_reassignments(state).topics
        return not any(t.name == topic and any(r.partition_index == partition for r in t.partitions) for t in listing)


class ClearForgetsBrokerRates(ReassignTool):
    """Broken on purpose: clearing removes the topic configs but leaves the broker rates behind."""

    clear = staticmethod(lambda throttles, topics: None if throttles is None else replace(
        throttles, leader=tuple(e for e in throttles.leader if e[0] not in topics),
        follower=tuple(e for e in throttles.follower if e[0] not in topics)))


def _check(bounds, tool=None, prof="kraft", **kw):
    return check_model(prof, bounds, factory=lambda p, b: ReassignmentModel(p, b, tool=tool), **kw)


ONE = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, throttles=True)
TWO = Bounds(brokers=2, partitions=2, rf=1, reassigns=2, cancels=0, throttles=True)


def test_real_tool_keeps_throttles_on_one_partition():
    result = _check(replace(ONE, kafka_version="4.2.2"))
    assert result.properties["moving_replicas_throttled"].status == HOLDS
    assert result.properties["throttles_eventually_cleared"].status == HOLDS
    # from 4.3 (KAFKA-19975) an override back to the original never completes, so --verify never clears it
    newest = _check(ONE)
    assert newest.properties["moving_replicas_throttled"].status == HOLDS
    v = newest.properties["throttles_eventually_cleared"]
    assert v.status == KNOWN and "stale_adding_never_completes" in v.counterexample


def test_verify_of_one_batch_clearing_another_is_caught(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "FINDINGS", tuple(f for f in F.FINDINGS if f.property != "moving_replicas_throttled"))  # the property alone, undeclared
    assert _check(TWO).properties["moving_replicas_throttled"].status == HOLDS
    v = _check(TWO, VerifyClearsWhenOwnPartitionIsDone(), out_dir=str(tmp_path)).properties["moving_replicas_throttled"]
    assert v.status == VIOLATED and v.length == 2
    trace = read_trace(v.counterexample)
    # --execute for t-0, then --verify of t-1's (idle) batch clears t-0's throttles
    assert [s["action_text"] for s in trace.steps] == ["ToolExecute(t-0 -> [2])", "ToolVerify(t-1)"]
    # the real tool does not reproduce it: replay names the throttles as the differing field
    verdict = replay(trace)
    assert not verdict.reproduces and verdict.diffs == ["cluster.throttles: unexpected"]


def test_clear_forgetting_broker_rates_is_caught_by_the_liveness_property(tmp_path):
    v = _check(Bounds(brokers=2, rf=1, reassigns=1, cancels=0, throttles=True), ClearForgetsBrokerRates(),
               out_dir=str(tmp_path))
    prop = v.properties["throttles_eventually_cleared"]
    assert prop.status == VIOLATED and prop.length == 3
    trace = read_trace(prop.counterexample)
    # --execute sets broker 1's rate (even for a move to the same replicas); --verify then clears the
    # topic configs but never the rate: the loop is --verify forever
    assert [s["action_text"] for s in trace.steps] == ["ToolExecute(t-0 -> [1])", "ToolVerify(t-0)", "ToolVerify(t-0)"]
    assert trace.loop_start == 2
    assert replay(trace).diffs == ["cluster.throttles: missing"]  # the real tool clears the rates


def test_real_cancel_clears_the_throttles_of_another_running_move(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "FINDINGS", tuple(f for f in F.FINDINGS if f.property != "moving_replicas_throttled"))  # the property alone, undeclared
    # a finding about Kafka's tool: cancelAssignment calls clearAllThrottles unconditionally
    v = _check(Bounds(brokers=2, partitions=2, rf=1, reassigns=1, cancels=1, throttles=True), out_dir=str(tmp_path))
    prop = v.properties["moving_replicas_throttled"]
    assert prop.status == VIOLATED and prop.length == 2
    trace = read_trace(prop.counterexample)
    assert [s["action_text"] for s in trace.steps][1].startswith("ToolCancel(t-1)")
    assert replay(trace).reproduces


def test_off_by_default():
    m = ReassignmentModel("kraft", Bounds())
    assert not any(isinstance(a, A.ToolExecute) for a in m.actions(m.init_states()[0]))
    assert "moving_replicas_throttled" not in {p.name for p in m.properties()}
