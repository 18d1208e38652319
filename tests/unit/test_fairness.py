"""Liveness under weak fairness with lasso counterexamples (spec/fairness.py, checker/explore/liveness.py)."""

from __future__ import annotations

from dataclasses import replace

from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import StateGraph
from kreassign.checker.explore.liveness import find_fair_lasso
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.reference.kraft import KraftProfile
from kreassign.reference.kraft_change import build_change
from kreassign.spec import findings as F
from kreassign.spec.fairness import Fairness

FAIR = "reassignment_completes_when_targets_live"


def graph(edges: dict[int, list[tuple[int, str]]], n: int) -> StateGraph:
    return StateGraph(states=list(range(n)), index={i: i for i in range(n)},
                      successors=[[j for j, _ in edges.get(i, [])] for i in range(n)],
                      actions=[[a for _, a in edges.get(i, [])] for i in range(n)])


# toy fairness: actions named "f..." are weakly fair, "x" may not be in a loop
TOY = Fairness(condition=lambda s: True, loop_edge=lambda a: a != "x", fair_class=lambda a: a if a.startswith("f") else None)


def test_a_loop_that_starves_an_always_enabled_fair_action_is_not_a_counterexample():
    # 0 -> 1 <-> 2 by unfair "u"; "f" (to the goal 3) is enabled in 1 and 2 but never taken in the loop
    g = graph({0: [(1, "f0")], 1: [(2, "u"), (3, "f")], 2: [(1, "u"), (3, "f")]}, 4)
    assert find_fair_lasso(g, lambda s: s == 3, TOY) is None


def test_a_fair_loop_is_returned_as_prefix_plus_loop():
    # "f" is enabled only in 1, so the loop 1 <-> 2 is fair though it never takes it
    g = graph({0: [(1, "f0")], 1: [(2, "u"), (3, "f")], 2: [(1, "u")]}, 4)
    path, loop_start = find_fair_lasso(g, lambda s: s == 3, TOY)
    assert [s for s, _ in path] == [0, 1, 2, 1] and loop_start == 1


def test_stuttering_is_fair_only_where_no_fair_action_is_enabled():
    g = graph({0: [(1, "f0")], 1: [(2, "x")]}, 3)  # state 1 enables only an action a loop may not take
    path, loop_start = find_fair_lasso(g, lambda s: s == 2, TOY)
    assert [s for s, _ in path] == [0, 1] and loop_start == 1  # stutter in 1
    g = graph({0: [(1, "f0")], 1: [(2, "f")]}, 3)
    assert find_fair_lasso(g, lambda s: s == 2, TOY) is None
    # a state with only unfair actions may stutter for good, even as the initial state
    assert find_fair_lasso(graph({0: [(1, "u")]}, 2), lambda s: s == 1, TOY) == ([(0, None)], 0)


def test_the_condition_restricts_the_loop():
    g = graph({0: [(1, "u")], 1: [(1, "u")]}, 2)
    cond = Fairness(condition=lambda s: s != 1, loop_edge=TOY.loop_edge, fair_class=TOY.fair_class)
    assert find_fair_lasso(g, lambda s: False, cond) == ([(0, None)], 0)  # 0 stutters; 1 is excluded
    assert find_fair_lasso(g, lambda s: s == 0, cond) is None


class WaitsForRemovedReplicas(KraftProfile):
    """Broken on purpose: a reassignment completes only once the replicas it removes are in sync too."""

    name = "waits-for-removed"

    def _build(self, state, part, topic=None, **targets):
        removing = targets.get("removing", part.removing)
        if removing and not set(removing) <= set(targets.get("isr", part.isr)):
            return build_change(state, part, lambda r, i, adding, removing=(): False,
                                elr=self.elr_rules(state, topic) if self.elr else None, **targets)
        return super()._build(state, part, topic, **targets)


SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, fair=True)


def test_real_kraft_completes_under_fairness():
    # Kafka 3.8 - 4.2; from 4.3 (KAFKA-19975) an override back to the original never completes: a declared finding
    bounds = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, fair=True)
    result = check_model("kraft", replace(bounds, kafka_version="4.2.2"))
    assert result.properties[FAIR].status == HOLDS
    newest = check_model("kraft", bounds)
    assert newest.properties[FAIR].status == KNOWN
    assert "stale_adding_never_completes" in newest.properties[FAIR].counterexample


def test_waiting_on_a_removed_replica_whose_broker_stays_down_is_caught(tmp_path):
    result = check_model("waits-for-removed", SMALL, out_dir=str(tmp_path),
                         factory=lambda _p, b: ReassignmentModel(WaitsForRemovedReplicas(), b))
    # AG EF completion cannot say it: the removed replica's broker may always come back
    assert result.properties["reassignment_can_finish"].status == HOLDS
    v = result.properties[FAIR]
    assert v.status == VIOLATED and v.length == 3
    trace = read_trace(v.counterexample)
    assert [s["action_text"] for s in trace.steps] == ["Reassign(t-0 -> [1,3])", "BrokerFail(2)", "LeaderExpandIsr(t-0 +3)"]
    assert trace.loop_start == 3  # the loop: stutter with 2 down for good, nothing fair left to do
    trace.profile = "kraft"  # the real profile completes at the expansion: replay names the difference
    verdict = replay(trace)
    assert not verdict.reproduces and verdict.steps_matched == 2


def test_replay_rechecks_the_fair_lasso():
    from kreassign.checker.check.run import find_violations

    model = ReassignmentModel(WaitsForRemovedReplicas(), SMALL)
    _, found = find_violations(model, keep_graph=True)
    path, loop_start = found[FAIR]
    from kreassign.checker.explore.liveness import fair_lasso_holds

    prop = next(p for p in model.properties() if p.name == FAIR)
    states, labels = [s for s, _ in path], [a for _, a in path]
    assert fair_lasso_holds(model, prop, states, labels, loop_start)
    # one step earlier 3 can still join the ISR (LeaderExpandIsr is weakly fair): not a fair stutter
    assert not fair_lasso_holds(model, prop, states[:-1], labels[:-1], loop_start - 1)


def test_off_by_default():
    assert FAIR not in {p.name for p in ReassignmentModel("kraft", Bounds()).properties()}


def test_kraft_37_override_back_to_the_original_never_completes_under_fairness(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "FINDINGS", tuple(f for f in F.FINDINGS if f.property != FAIR))  # the property alone, undeclared
    # the mechanism of the known kraft-3.7 finding, now as a fair lasso that replays
    result = check_model("kraft-3.7", Bounds(brokers=3, rf=2, reassigns=2, cancels=0, fair=True), out_dir=str(tmp_path))
    v = result.properties[FAIR]
    assert v.status == VIOLATED and v.length == 3
    trace = read_trace(v.counterexample)
    assert [s["action_text"] for s in trace.steps] == [
        "Reassign(t-0 -> [1,3])", "Reassign(t-0 -> [1,2])", "LeaderExpandIsr(t-0 +3)"]
    assert replay(trace).reproduces
