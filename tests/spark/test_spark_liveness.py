"""Liveness on Spark without the state graph on the driver (checker/spark/liveness.py).

The distributed backward fixpoint must classify stuck states exactly as check/run.py does on
the embedded engine's graph: the same first unexpected lasso (path and loop start), the same
first lasso of each declared finding, the premise respected; and `check_model` through
`spark_explorer` (which asks for liveness, never for the graph) gives the embedded verdicts.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import ClassVar

import pytest
from kreassign.checker.check.run import _classify_stuck
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.protocol import Model
from kreassign.checker.models.registry import build_model
from kreassign.spec.properties import Property

pytestmark = pytest.mark.spark

from kreassign.checker.spark.engine import explore_spark
from kreassign.checker.spark.options import SparkOptions


class Cancel:  # an admin action (liveness.ADMIN_ACTIONS): it does not rescue a stuck state
    def __eq__(self, other):
        return isinstance(other, Cancel)

    def __hash__(self):
        return 1


class Trap(Model):
    """0 -> 1 -> 2 (the goal); 1 -> 3 <-> 4, a loop the environment cannot leave (3 -> 2 needs an
    admin); 0 -> 5, a dead end; 0 -> 6 -> 7 -> 6, another loop, outside the premise when
    `premise` is on. States are ints (the int64 codec) or 1-tuples (the object codecs)."""

    name = "trap"
    EDGES: ClassVar[dict] = {0: [("a", 1), ("b", 5), ("c", 6)], 1: [("d", 2), ("e", 3)], 2: [("f", 2)], 3: [("g", 4), (Cancel(), 2)],
                             4: [("h", 3)], 6: [("i", 7)], 7: [("j", 6)]}

    def __init__(self, wrap: bool, premise: bool = False):
        self.wrap, self.premise = wrap, premise

    def _s(self, n):
        return (n,) if self.wrap else n

    def _n(self, s):
        return s[0] if self.wrap else s

    def init_states(self):
        return [self._s(0)]

    def successors(self, s):
        for action, n in self.EDGES.get(self._n(s), []):
            yield action, self._s(n)

    def properties(self):
        extra = {"from": lambda s: self._n(s) not in (6, 7)} if self.premise else {}
        return [Property.eventually("reaches_two", lambda s: self._n(s) == 2, extra=extra)]


def classified(sc, model, findings, want=True):
    prop = model.properties()[0]
    embedded = _classify_stuck(explore(model, keep_graph=True).graph, prop, findings, want)
    spark = explore_spark(model, SparkOptions(warmup=False, liveness=True), sc=sc)
    assert spark.graph is None  # nothing of the graph came to the driver
    return (embedded.unexpected, embedded.findings), spark.classify_stuck(prop, findings, want)


@pytest.mark.parametrize("wrap", [False, True], ids=["int64", "objects"])
def test_stuck_states_are_classified_as_on_the_graph(sc, wrap):
    dead_end = SimpleNamespace(name="dead_end", signature=lambda s: (s[0] if wrap else s) == 5)
    expected, got = classified(sc, Trap(wrap), (dead_end,))
    assert got == expected
    unexpected, found = got
    # 5 (a dead end) is the first stuck state, but a declared finding; 6 is the first unexpected one
    assert [s for s, _ in unexpected[0]] == [Trap(wrap)._s(n) for n in (0, 6, 7, 6)] and unexpected[1] == 1
    assert found["dead_end"][1] is None  # a dead end: no loop


def test_premise_and_unwanted_findings(sc):
    everything = SimpleNamespace(name="all", signature=lambda s: s in (3, 4))
    expected, got = classified(sc, Trap(False, premise=True), (everything,), want=False)
    assert got == expected and got[1] == {}
    assert [s for s, _ in got[0][0]] == [0, 5]  # 6 and 7 are outside the premise, 3 and 4 matched a finding


def test_a_model_whose_goal_is_always_reachable_has_no_stuck_state(sc):
    class Rescued(Trap):
        EDGES: ClassVar[dict] = {**Trap.EDGES, 3: [("g", 4), ("k", 2)], 0: [("a", 1)]}

    expected, got = classified(sc, Rescued(True), ())
    assert got == expected == (None, {})


def test_check_model_verdicts_with_distributed_liveness(sc, tmp_path):
    from kreassign.checker.check.run import check_model
    from kreassign.checker.spark.engine import spark_explorer

    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)
    factory = lambda p, b: build_model("reassignment", p, b)
    embedded = check_model("kip455", bounds, factory=factory, out_dir=str(tmp_path / "e"))
    spark = check_model("kip455", bounds, factory=factory, out_dir=str(tmp_path / "s"),
                        explorer=spark_explorer(), engine="spark")
    assert {n: (v.status, v.length) for n, v in spark.properties.items()} == \
        {n: (v.status, v.length) for n, v in embedded.properties.items()}


class TwoGoals(Trap):
    """Trap with three `eventually` properties: two with the same goal (2), one with others (4 to 7, which
    every state but 2 reaches: its one stuck state is 2, not the dead end 5)."""

    def properties(self):
        return [Property.eventually("reaches_two", lambda s: s == 2),
                Property.eventually("reaches_two_too", lambda s: s == 2),
                Property.eventually("reaches_four", lambda s: s in (4, 5, 6, 7))]


def _two_goals(sc):
    model = TwoGoals(False)
    graph = explore(model, keep_graph=True).graph
    spark = explore_spark(model, SparkOptions(warmup=False, liveness=True), sc=sc)
    live = dict(spark.classify_stuck.__self__.stuck.live_runs)
    expected = {p.name: _classify_stuck(graph, p, (), True) for p in model.properties()}
    got = {p.name: spark.classify_stuck(p, (), True) for p in model.properties()}
    return live, {n: (e.unexpected, e.findings) for n, e in expected.items()}, got


def test_properties_with_the_same_goals_share_one_fixpoint(sc):
    live, expected, got = _two_goals(sc)
    assert live["reaches_two"] is live["reaches_two_too"] is not live["reaches_four"]
    assert got == expected
    assert got["reaches_two"] != got["reaches_four"]


def test_one_fixpoint_for_different_goals_is_caught(sc, monkeypatch):
    """The broken variant: every property in one group (the first one's goals for all)."""
    from kreassign.checker.spark.stuck import StuckStates

    monkeypatch.setattr(StuckStates, "_same_goals", lambda self, names: [tuple(names)] if names else [])
    _, expected, got = _two_goals(sc)
    assert got["reaches_two"] == expected["reaches_two"]
    assert got["reaches_four"] != expected["reaches_four"]
