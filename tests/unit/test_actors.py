"""Tools and automation acting beside the controller (reference/actors.py, spec/actor_properties.py):
the bound key, each actor's rule against Kafka's tool and controller, each property catching a broken
actor with a short counterexample, the real profiles' findings, and the actions in replay,
validate-trace, the oracle and fuzz."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bound_flags import add_bound_arguments, bound_overrides
from kreassign.checker.config.bounds import Bounds, ConfigError, bounds_from_mapping
from kreassign.checker.explore.bfs import explore
from kreassign.checker.fuzz.stateful import VIOLATED as FUZZ_VIOLATED
from kreassign.checker.fuzz.stateful import fuzz_settings, run_fuzz
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.server import Oracle
from kreassign.checker.traces.format import read_trace, trace_from_path, write_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.traces.validation import validate_text
from kreassign.reference import profile
from kreassign.reference.actors import (
    ActorRules,
    AutoThrottler,
    BadPlans,
    Operators,
    Rebalancer,
    unknown_partition,
)
from kreassign.reference.capabilities import KAFKA
from kreassign.reference.steps import ActionNotSupported
from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.actor_properties import missing_throttles
from kreassign.spec.state import ActorMemory, ReplicationThrottles, make_cluster
from kreassign.spec.throttle_properties import moving_replicas_throttled

KRAFT, ZK = profile("kraft"), profile("zk")


def cluster(prof=KRAFT, throttles=None):
    c = prof.initial_state(make_cluster([1, 2, 3], {"t": [[1, 2]]}))
    return replace(c, actors=ActorMemory(), throttles=throttles)


# -- the bound key -----------------------------------------------------------------------------------------


def test_actors_key_is_checked_normalized_and_off_by_default():
    assert Bounds(actors=("bad-plans", "rebalancer")).actors == ("rebalancer", "bad-plans")  # one spelling
    with pytest.raises(ConfigError, match=r"^bounds\.actors: unknown actor\(s\) 'cruise'"):
        bounds_from_mapping({"actors": ["cruise"]})
    with pytest.raises(ConfigError, match="actors: auto-throttler .* needs throttles = true"):
        Bounds(actors=("auto-throttler",))
    with pytest.raises(ConfigError, match="actors: the rebalancer .* throttles"):
        Bounds(actors=("rebalancer",), throttles=True)
    with pytest.raises(ConfigError, match="actors: expected a list of strings"):
        bounds_from_mapping({"actors": "rebalancer"})
    import argparse

    parser = argparse.ArgumentParser()
    add_bound_arguments(parser)
    assert bound_overrides(parser.parse_args(["--actors", "rebalancer, bad-plans"]))["actors"] == \
        ["rebalancer", "bad-plans"]
    m = ReassignmentModel("kraft", Bounds())
    assert m.init_states()[0].cluster.actors is None and "actors" not in Bounds().to_json()
    assert not any(isinstance(a, A.ACTOR_ACTIONS) for a in m.actions(m.init_states()[0]))
    assert "refused_plan_changes_nothing" not in {p.name for p in m.properties()}


# -- each actor against Kafka's tool and controller ------------------------------------------------------


def test_bad_plans_are_refused_by_the_tool_before_any_throttle_and_by_the_controller():
    c = cluster()
    rules = ActorRules()
    # executeAssignment: verifyBrokerIds ("Unknown broker id 4") before any throttle is set
    step = rules.apply(KRAFT, c, A.BadPlanExecute("t", 0, (1, 4)), KAFKA.tool)
    assert step.response == M.Ack(M.INVALID_REPLICA_ASSIGNMENT, "Unknown broker id 4") and step.state == c
    step = rules.apply(KRAFT, c, A.BadPlanExecute("t", 1, (1, 2)), KAFKA.tool)
    assert step.response == M.Ack(M.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition: t-1")
    # straight to the controller: KRaft's and the ZooKeeper controller's own answers, nothing recorded
    for prof, a, code in ((KRAFT, A.BadPlanAlter("t", 0, (1, 4)), 39), (KRAFT, A.BadPlanAlter("t", 1, (1, 2)), 3),
                          (ZK, A.BadPlanAlter("t", 0, (1, 4)), 39), (ZK, A.BadPlanAlter("t", 1, (1, 2)), 3)):
        c = cluster(prof)
        step = rules.apply(prof, c, a, KAFKA.tool)
        assert step.response.partition_error(a.topic, a.partition)[0] == code and step.state == c


def test_rebalancer_sends_what_it_decided_from_its_read_whatever_happened_since():
    c = cluster()
    read = KAFKA.apply(KRAFT, c, A.RebalancerRead()).state
    assert read.actors.snapshot == ()  # it saw nothing moving
    moves = [("t", 0, (2, 3)), ("t", 0, (1, 3))]
    assert Rebalancer().acts((), moves, [("t", 0)]) == [A.RebalancerMove("t", 0, (2, 3)), A.RebalancerMove("t", 0, (1, 3))]
    assert Rebalancer().acts((("t", 0, (2, 3)),), moves, [("t", 0)]) == [A.RebalancerCancel("t", 0)]
    moving = KAFKA.apply(KRAFT, read, A.Reassign("t", 0, (2, 3))).state
    # AlterPartitionReassignments has no precondition: the stale move overrides the one started since
    step = KAFKA.apply(KRAFT, moving, A.RebalancerMove("t", 0, (1, 3)))
    assert step.response.partition_error("t", 0)[0] == 0 and step.state.partition("t", 0).adding == (3,)


def test_auto_throttler_writes_back_its_cache_and_operators_verify_in_two_requests():
    c = cluster()
    cached = KAFKA.apply(KRAFT, c, A.AutoThrottlerRead()).state
    assert cached.actors.cache == ReplicationThrottles()  # nothing moving: nothing to throttle
    moving = KAFKA.apply(KRAFT, cached, A.ToolExecute("t", 0, (2, 3))).state
    assert moving.throttles.follower == (("t", 0, 3),)
    assert KAFKA.apply(KRAFT, moving, A.AutoThrottlerWrite()).state.throttles is None  # its stale cache wins
    listed = KAFKA.apply(KRAFT, c, A.OperatorVerify("t", 0, 1)).state
    assert listed.actors.verifies == ((1, False, False),)  # listed nothing in progress: will clear
    moving = KAFKA.apply(KRAFT, listed, A.OperatorExecute("t", 0, (2, 3), 2)).state
    cleared = KAFKA.apply(KRAFT, moving, A.OperatorClear("t", 0, 1)).state
    assert cleared.throttles is None and cleared.actors.verifies == ((1, False, True),)
    busy = KAFKA.apply(KRAFT, moving, A.OperatorVerify("t", 0, 2)).state
    assert busy.actors.verifies == ((1, False, False), (2, True, True))  # in progress: --verify clears nothing


def test_missing_throttles_is_empty_exactly_when_moving_replicas_throttled_holds():
    # twin: spec/actor_properties.missing_throttles of spec/throttle_properties.moving_replicas_throttled
    for prof in ("kraft", "zk"):
        model = ReassignmentModel(prof, Bounds(brokers=3, rf=2, reassigns=1, cancels=1, throttles=True,
                                               actors=("auto-throttler",)))
        result = explore(model, keep_graph=True)
        states = result.graph.states
        assert len(states) > 100
        kept = sum(moving_replicas_throttled(s) for s in states)
        assert 0 < kept < len(states)
        assert all(moving_replicas_throttled(s) == (not missing_throttles(s)) for s in states)


# -- the properties and their broken variants --------------------------------------------------------------



class MovesWhatItSawMoving(Rebalancer):
    """Broken on purpose: the rebalancer moves every partition of its plan, also those it saw moving."""

    def acts(self, snapshot, moves, partitions):
        return [A.RebalancerMove(t, i, r) for t, i, r in moves]


class DropsRatesOnWrite(AutoThrottler):
    """Broken on purpose: the auto-throttler writes its cache's replica lists but drops every broker rate."""

    def written(self, cache, live):
        out = replace(cache, brokers=())
        return None if out.empty else out


class ClearsWhileBusy(Operators):
    """Broken on purpose: --verify clears all throttles whatever its listing showed (the check skipped)."""

    def may_clear(self, listed_ongoing):
        return True


def model_with(**rules):
    """A factory of models whose actors follow `rules` (ActorRules fields), Kafka's elsewhere."""
    return lambda p, b: ReassignmentModel(p, b, actors=ActorRules(**rules))


BAD_PLANS = Bounds(brokers=1, rf=1, reassigns=1, cancels=0, actors=("bad-plans",))
REBALANCER = Bounds(brokers=3, rf=2, reassigns=2, cancels=0, actors=("rebalancer",))
THROTTLER = Bounds(brokers=2, rf=1, reassigns=1, cancels=0, throttles=True, actors=("auto-throttler",))
OPERATORS = Bounds(brokers=2, rf=1, reassigns=1, cancels=0, throttles=True, actors=("second-operator",))

#: (property, broken variant, profile, bounds, factory): the coordinator's bench imports it
BENCH_ROWS = [
    ("refused_plan_changes_nothing", "tool throttles before verifyBrokerIds", "kraft", BAD_PLANS,
     # broken on purpose: the tool sets the throttles before verifyBrokerIds (the controller then refuses)
     model_with(bad_plans=BadPlans(checks=(unknown_partition,)))),
    ("rebalancer_acts_on_what_is_there", "rebalancer moves partitions it saw moving", "kraft", REBALANCER,
     model_with(rebalancer=MovesWhatItSawMoving())),
    ("actor_writes_keep_moving_throttles", "auto-throttler drops the rates it cached", "kraft", THROTTLER,
     model_with(throttler=DropsRatesOnWrite())),
    ("actor_writes_keep_moving_throttles", "--verify clears although a move is listed", "kraft", OPERATORS,
     model_with(operators=ClearsWhileBusy())),
    ("rebalancer_acts_on_what_is_there", "finding rebalancer_acted_on_stale_read (real)", "kraft", REBALANCER, None),
    ("rebalancer_acts_on_what_is_there", "finding rebalancer_acted_on_stale_read (real)", "zk", REBALANCER, None),
    ("actor_writes_keep_moving_throttles", "finding auto_throttler_wrote_stale_cache (real)", "kraft", THROTTLER, None),
    ("actor_writes_keep_moving_throttles", "finding auto_throttler_wrote_stale_cache (real)", "zk", THROTTLER, None),
    ("actor_writes_keep_moving_throttles", "finding verify_cleared_after_listing_nothing (real)", "kraft", OPERATORS,
     None),
    ("actor_writes_keep_moving_throttles", "finding verify_cleared_after_listing_nothing (real)", "zk", OPERATORS, None),
]

#: each broken variant's counterexample, as the checker finds it
BROKEN_TRACES = {
    "tool throttles before verifyBrokerIds": ["BadPlanExecute(t-0 -> [2])"],
    "rebalancer moves partitions it saw moving": ["Reassign(t-0 -> [1,3])", "RebalancerRead()",
                                                  "RebalancerMove(t-0 -> [1,2])"],
    "auto-throttler drops the rates it cached": ["ToolExecute(t-0 -> [2])", "AutoThrottlerRead()", "AutoThrottlerWrite()"],
    "--verify clears although a move is listed": ["OperatorExecute(#1 t-0 -> [2])", "OperatorVerify(#1 t-0)",
                                                  "OperatorClear(#1 t-0)"],
}


@pytest.mark.parametrize("prop, variant, prof, bounds, factory", [r for r in BENCH_ROWS if r[4] is not None],
                         ids=lambda x: x if isinstance(x, str) and " " in x else "")
def test_broken_actor_is_caught_with_a_short_counterexample(prop, variant, prof, bounds, factory, tmp_path):
    real = check_model(prof, bounds, out_dir=str(tmp_path / "real")).properties[prop]
    assert real.status in (HOLDS, KNOWN)  # Kafka's actor: holds, or only the declared findings
    v = check_model(prof, bounds, factory=factory, out_dir=str(tmp_path)).properties[prop]
    assert v.status == VIOLATED and v.length == len(BROKEN_TRACES[variant])
    trace = read_trace(v.counterexample)
    assert [s["action_text"] for s in trace.steps] == BROKEN_TRACES[variant]
    assert not kafka_reproduces(trace)  # Kafka's actors do not do it


def kafka_reproduces(trace) -> bool:
    """Does the trace replay under Kafka's rules? (an actor's step Kafka's actor would not take is refused)"""
    try:
        return replay(trace).reproduces
    except ActionNotSupported:
        return False


@pytest.mark.parametrize("prof", ["kraft", "zk"])
def test_real_profiles_keep_refused_plans_and_break_the_others_only_as_declared(prof, tmp_path):
    kept = check_model(prof, Bounds(brokers=3, rf=2, reassigns=2, cancels=1, actors=("rebalancer", "bad-plans")),
                       out_dir=str(tmp_path)).properties
    assert kept["refused_plan_changes_nothing"].status == HOLDS
    for bounds, prop, finding, length in (
            (REBALANCER, "rebalancer_acts_on_what_is_there", "rebalancer_acted_on_stale_read", 3 if prof == "kraft" else 6),
            (THROTTLER, "actor_writes_keep_moving_throttles", "auto_throttler_wrote_stale_cache", 3 if prof == "kraft" else 4),
            (OPERATORS, "actor_writes_keep_moving_throttles", "verify_cleared_after_listing_nothing",
             3 if prof == "kraft" else 4)):
        v = check_model(prof, bounds, out_dir=str(tmp_path)).properties[prop]
        assert v.status == KNOWN and v.findings[finding].length == length, (prop, v)


# -- plumbing: replay, validate-trace, the oracle, fuzz -------------------------------------------------------

ALL_ACTORS = Bounds(brokers=3, rf=2, reassigns=3, cancels=1, throttles=True,
                    actors=("auto-throttler", "second-operator", "bad-plans"))
PATH = (A.AutoThrottlerRead(), A.OperatorVerify("t", 0, 1), A.OperatorExecute("t", 0, (2, 3), 2),
        A.BadPlanExecute("t", 0, (1, 4)), A.BadPlanAlter("t", 1, (1, 2)), A.AutoThrottlerWrite(),
        A.AutoThrottlerRead(), A.AutoThrottlerWrite(), A.OperatorClear("t", 0, 1))


def test_actor_actions_replay_validate_and_the_oracle_answers_them(tmp_path):
    model = ReassignmentModel("kraft", ALL_ACTORS)
    state = model.init_states()[0]
    path = [(state, None)]
    for a in PATH:
        assert a in model.actions(state), a
        state, label = model.step(state, a)
        path.append((state, label))
    file = tmp_path / "kraft__actors.json"
    write_trace(trace_from_path(model, "reassignment", "actor_writes_keep_moving_throttles", "transition", path),
                str(file))
    trace = read_trace(str(file))
    assert replay(trace).reproduces
    lines = [json.dumps({"initial_state": trace.initial["cluster"], "profile": "kraft"})]
    lines += [json.dumps({"action": s["action"], "state": s["kafka_state"]}) for s in trace.steps]
    assert validate_text("\n".join(lines) + "\n", "jsonl").verdict == "VALID"
    oracle, before = Oracle("kraft"), trace.initial["cluster"]
    for s in trace.steps:
        got = oracle.handle({"id": 1, "op": "step", "state": before, "action": s["action"]})
        assert got["ok"] and got["result"]["state"] == s["kafka_state"], got
        before = s["kafka_state"]
    # a run where the auto-throttler's write left the throttles in place is invalid at that line
    steps = [dict(s) for s in trace.steps]
    steps[5] = {**steps[5], "kafka_state": steps[4]["kafka_state"]}
    bad = [lines[0]] + [json.dumps({"action": s["action"], "state": s["kafka_state"]}) for s in steps]
    result = validate_text("\n".join(bad) + "\n", "jsonl")
    assert result.verdict == "INVALID" and result.failed.line == 7


def test_fuzz_takes_the_actors_and_finds_a_broken_rebalancer():
    broken = ReassignmentModel("kraft", REBALANCER, actors=ActorRules(rebalancer=MovesWhatItSawMoving()))
    run = run_fuzz(broken, seed=1, hypothesis_settings=fuzz_settings(30, 5, derandomize=True))
    v = run.properties["rebalancer_acts_on_what_is_there"]
    assert v.status == FUZZ_VIOLATED and v.length <= 5
