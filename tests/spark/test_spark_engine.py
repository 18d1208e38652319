"""The Spark engine gives the embedded engine's answers: counts, verdicts, counterexamples, graphs.

Every comparison is against `bfs.explore` on the same model. For models on the embedded
engine's object store the counterexamples are identical (the same shortest path), for
array-kernel models (the anchor) they are shortest paths of the same length. Results do
not depend on the number of buckets (partitions) the states are spread over.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from kreassign.checker.check.run import check_model
from kreassign.checker.check.suite import DEFAULT_SUITE, QUOTA_SUITE
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.protocol import Model
from kreassign.checker.models.registry import build_model
from kreassign.spec.properties import Property

from kreassign.errors import InfraError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from anchor_model import CONFIGS, AnchorModel, anchor_model

pytestmark = pytest.mark.spark

from kreassign.checker.spark.engine import explore_spark, spark_explorer
from kreassign.checker.spark.options import SparkOptions

SMALL_ZK = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, failovers=1)
SMALL_KIP455 = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)  # 457 states, 10 levels


class CancelKeepsIsr(AnchorModel):
    """A broken cancellation (tests/unit/test_anchor.py): the adding replicas stay in the ISR."""

    def cancel_reassignment(self, s):
        for action, n in super().cancel_reassignment(s):
            yield action, replace(n, isr=s.isr)


class Grid(Model):
    """A walk on a 5×5 grid (plain tuple states) exercising every option of the protocol: a
    boundary, dead ends, a transition property, a sometimes property, an action kind."""

    name = "grid"

    def init_states(self):
        return [(0, 0), (0, 0), (2, 0)]

    def successors(self, s):
        x, y = s
        if (x, y) in ((4, 4), (1, 3)):
            return  # dead ends
        for step, (dx, dy) in (("right", (1, 0)), ("up", (0, 1)), ("jump", (2, 2))):
            if x + dx <= 4 and y + dy <= 4:
                yield (step, x + dx), (x + dx, y + dy)

    def within_boundary(self, s):
        return s != (3, 0)

    def action_kind(self, action):
        return action[0]

    def properties(self):
        return [
            Property.always("below_diagonal_far", lambda s: s[0] + s[1] < 7),
            Property.transition("no_long_jump", lambda s, a, n: not (a[0] == "jump" and n[0] == 4)),
            Property.sometimes("corner", lambda s: s == (4, 0)),
            Property.sometimes("never", lambda s: s == (9, 9)),
        ]


def replay(model, path):
    assert path[0][1] is None and path[0][0] in model.init_states()
    for (state, _), (nxt, action) in pairwise(path):
        assert (action, nxt) in list(model.successors(state))


def assert_same(embedded, spark, model, identical_paths=True):
    assert (spark.states, spark.transitions, spark.depth, spark.complete) == \
        (embedded.states, embedded.transitions, embedded.depth, embedded.complete)
    assert spark.per_action_edges == embedded.per_action_edges
    assert set(spark.violations) == set(embedded.violations)
    assert set(spark.examples) == set(embedded.examples)
    assert (spark.deadlock is None) == (embedded.deadlock is None)
    found = [(embedded.violations[n].path, spark.violations[n].path) for n in embedded.violations]
    found += [(embedded.examples[n], spark.examples[n]) for n in embedded.examples]
    if embedded.deadlock is not None:
        found.append((embedded.deadlock, spark.deadlock))
    for ours, theirs in found:
        if identical_paths:
            assert theirs == ours
        else:
            assert len(theirs) == len(ours)
            replay(model, theirs)


CASES = {
    "anchor-mutant": (lambda: CancelKeepsIsr(CONFIGS["N4_nofail"]), {}, True),
    "kraft": (lambda: build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"]), {}, True),
    "zk": (lambda: build_model("reassignment", "zk", SMALL_ZK), {}, True),
    "kip599": (lambda: build_model("quota", "kip599", QUOTA_SUITE["kip599"]()), {}, True),
    "grid": (Grid, {"check_deadlock": True}, True),
}


@pytest.mark.parametrize("layout", ["levels", "resident"])
@pytest.mark.parametrize("case", list(CASES))
def test_same_answers_as_the_embedded_engine(sc, case, layout):
    """Levels layout: every level on Spark (warmup=False), and with the first small levels on the driver.
    Resident layout: every level in the resident tasks."""
    make, options, identical = CASES[case]
    model = make()
    embedded = explore(model, **options)
    levels: list[dict] = []
    info: dict = {}
    assert_same(embedded, explore_spark(model, SparkOptions(warmup=False, layout=layout, **options), sc=sc,
                                        level_log=levels, run_info=info), model, identical)
    assert {lv["where"] for lv in levels} == {"spark" if layout == "levels" else "resident"}
    assert info["layout"] == layout
    if case == "kraft" and layout == "levels":
        levels = []
        assert_same(embedded, explore_spark(model, SparkOptions(layout=layout, **options), sc=sc, level_log=levels), model,
                    identical)
        # level 0 on the driver, and the next ones while each takes under DRIVER_LEVEL_SECONDS
        # (how many depends on the machine's speed), the last ones on Spark
        assert levels[0]["where"] == "driver" and levels[-1]["where"] == "spark"


@pytest.mark.parametrize("buckets", [1, 3])
def test_results_do_not_depend_on_the_number_of_buckets(sc, buckets):
    """One, two (CASES above) and three buckets give the same answers, down to the counterexample
    paths (identical to the embedded engine's on the object store)."""
    model = build_model("reassignment", "kip455", SMALL_KIP455)
    assert_same(explore(model), explore_spark(model, SparkOptions(partitions=buckets), sc=sc), model)


def test_kernel_model_same_answers_whatever_the_buckets(sc):
    """The anchor's numpy kernel: the embedded counts with two buckets, the same paths with three."""
    anchor = anchor_model("N4_fail")
    two, three = (explore_spark(anchor, SparkOptions(partitions=n, check_deadlock=True), sc=sc) for n in (2, 3))
    assert_same(explore(anchor, check_deadlock=True), two, anchor, identical_paths=False)
    assert_same(two, three, anchor)


def test_bounds_and_stopping(sc):
    model = Grid()
    for options in ({"max_depth": 3}, {"max_depth": 1}, {"max_states": 7}):
        embedded, spark = explore(model, **options), explore_spark(model, SparkOptions(**options), sc=sc)
        assert spark.complete is False
        assert (spark.states, spark.depth) == (embedded.states, embedded.depth)
        if "max_depth" in options:
            assert spark.transitions == embedded.transitions
    stopped = explore_spark(model, SparkOptions(stop_on_violation=True, check_deadlock=True), sc=sc)
    assert not stopped.complete and (stopped.violations or stopped.deadlock)


def test_state_graph_is_the_embedded_engines(sc):
    model = build_model("quota", "kip599-draft", QUOTA_SUITE["kip599-draft"]())
    embedded = explore(model, keep_graph=True).graph
    graph = explore_spark(model, SparkOptions(keep_graph=True, warmup=False), sc=sc).graph
    assert graph.states == embedded.states
    assert graph.successors == embedded.successors
    assert graph.actions == embedded.actions  # decoded from the actions' JSON


def test_check_gives_the_same_matrix_and_counterexamples(sc, tmp_path):
    model_kind = "reassignment"
    bounds = DEFAULT_SUITE["kraft-3.7"]
    factory = lambda p, b: build_model(model_kind, p, b)
    embedded = check_model("kraft-3.7", bounds, factory=factory, out_dir=str(tmp_path / "e"))
    spark = check_model("kraft-3.7", bounds, factory=factory, out_dir=str(tmp_path / "s"),
                        explorer=spark_explorer(), engine="spark")
    assert (spark.states, spark.transitions, spark.depth) == (embedded.states, embedded.transitions, embedded.depth)
    assert {n: (v.status, v.length) for n, v in spark.properties.items()} == \
        {n: (v.status, v.length) for n, v in embedded.properties.items()}


def test_cli_engine_spark_prints_the_embedded_matrix(sc, capsys, tmp_path):
    from kreassign.cli import main

    def matrix(args):
        assert main(["check", "--profile", "kip455", "--reassigns", "1", "--out", str(tmp_path), *args]) == 0
        out = capsys.readouterr().out
        return [line for line in out.splitlines() if not line.startswith("kip455 ")]  # drop the seconds

    assert matrix(["--engine", "spark", "--master", "local[2]"]) == matrix([])


def test_a_model_that_fails_for_good_names_the_error(sc):
    class Broken(Grid):
        def successors(self, s):
            if s == (1, 1):
                raise ValueError("broken successor function at (1, 1)")
            yield from super().successors(s)

    with pytest.raises(InfraError, match="BFS level 2 of grid failed: .*broken successor function"):  # the task's error
        explore_spark(Broken(), SparkOptions(warmup=False, layout="levels"), sc=sc)
    with pytest.raises(ValueError, match="broken successor function"):  # raised on the driver (warm-up)
        explore_spark(Broken(), SparkOptions(layout="levels"), sc=sc)
    info: dict = {}  # resident: the stage attempted as often as a task (local[2,3]: 3 times), then its error
    with pytest.raises(InfraError, match=r"resident search of grid failed in task \d: ValueError: broken successor function"):
        explore_spark(Broken(), SparkOptions(layout="resident"), sc=sc, run_info=info)
    assert len(info["restarts"]) == 2


class Ladder(Model):
    """WIDTH new states per level for DEPTH levels: the frontier stays the same while the
    visited set grows DEPTH-fold."""

    name = "ladder"
    WIDTH, DEPTH = 400, 12

    def init_states(self):
        return list(range(self.WIDTH))

    def successors(self, s):
        level, j = divmod(s, self.WIDTH)
        if level + 1 < self.DEPTH:
            for k, nj in enumerate((j, (j + 1) % self.WIDTH)):
                yield k, (level + 1) * self.WIDTH + nj

    def properties(self):
        return []


def test_bytes_shuffled_follow_the_frontier_not_the_visited_set(sc):
    """Spark's own shuffle-write metric per level: constant while the visited set grows 10-fold
    (the visited runs stay with their buckets; before issue 17 they went through every shuffle)."""
    from kreassign.checker.spark.jobs import shuffle_write_by_job

    model = Ladder()
    result = explore_spark(model, SparkOptions(warmup=False, layout="levels"), sc=sc)
    assert (result.states, result.depth) == (Ladder.WIDTH * Ladder.DEPTH, Ladder.DEPTH)
    written = shuffle_write_by_job(sc)
    per_level = [written.get(f"kreassign: BFS level {n} of ladder", 0) for n in range(2, Ladder.DEPTH)]
    assert min(per_level) > 0
    # 400 candidates of 16 bytes per level; the visited set reaches 4,400 states (35 KB as int64)
    assert max(per_level) < 1.25 * min(per_level), per_level


def test_resident_tasks_send_the_frontier_not_the_visited_set(sc):
    """The resident layout's bytes sent between tasks per level: constant while the visited set grows 10-fold
    (each task keeps its bucket's visited set)."""
    log: list[dict] = []
    result = explore_spark(Ladder(), SparkOptions(layout="resident"), sc=sc, level_log=log)
    assert (result.states, result.depth) == (Ladder.WIDTH * Ladder.DEPTH, Ladder.DEPTH)
    per_level = [level["shuffled_bytes"] for level in log[1:-1]]
    assert min(per_level) > 0
    assert max(per_level) < 1.25 * min(per_level), per_level


def test_packable_models_take_the_packed_path(sc):
    """kraft goes through the packed path's codec (tasks expand with a replica of the packed model, which
    test_same_answers_as_the_embedded_engine[kraft] compares); zk, and kraft with packed=False, do not."""
    from kreassign.checker.spark.context import RunContext

    kraft = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"])
    zk = build_model("reassignment", "zk", DEFAULT_SUITE["zk"])
    assert RunContext.build(sc, kraft, SparkOptions()).codec.name == "packed-v4"
    assert RunContext.build(sc, kraft, SparkOptions(packed=False)).codec.name == "struct"
    assert RunContext.build(sc, zk, SparkOptions()).codec.name == "struct"


def test_the_local_session_jvm_has_kreassigns_heap_and_jit(sc):
    """The tests' session was started by spark_session with no driver settings given: its JVM (local mode: the
    executor too) got DRIVER_MEMORY and DRIVER_JAVA_OPTIONS at launch, not Spark's 1g and both JIT compilers (a
    setting applied after launch would change neither)."""
    from kreassign.checker.spark.session import DRIVER_JAVA_OPTIONS, DRIVER_MEMORY

    assert DRIVER_MEMORY.endswith("g")
    most = sc._jvm.java.lang.Runtime.getRuntime().maxMemory()
    assert most > 0.9 * int(DRIVER_MEMORY[:-1]) * 2**30
    jvm_args = list(sc._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert DRIVER_JAVA_OPTIONS in jvm_args
