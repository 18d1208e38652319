"""Faults and long runs: failed tasks change nothing; a checkpointed run resumes to the same answers."""

from __future__ import annotations

import os

import pytest
from kreassign.checker.check.suite import QUOTA_SUITE
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark import run as spark_run

pytestmark = pytest.mark.spark

from kreassign.checker.spark.engine import explore_spark
from kreassign.checker.spark.options import SparkOptions

SMALL_KRAFT = Bounds(brokers=3, rf=2, reassigns=2, cancels=1)  # 100 states, 7 levels, 3 violations


class FailsOncePerTask(ReassignmentModel):
    """A reassignment model whose successor function raises in the first attempt of the bucket-0
    task of the first three levels it expands states in (a marker file per stage remembers the
    failure, so the retry runs)."""

    def __init__(self, markers: str, *args, most: int = 3):
        super().__init__(*args)
        self.markers, self.most = markers, most

    def successors(self, state):
        from pyspark import TaskContext

        task = TaskContext.get()
        if task is not None and task.partitionId() == 0:  # on an executor (the driver replays without faults)
            marker = os.path.join(self.markers, f"stage{task.stageId()}")
            if not os.path.exists(marker) and len(os.listdir(self.markers)) < self.most:
                open(marker, "w").close()
                raise RuntimeError(f"injected failure, attempt {task.attemptNumber()}")
        yield from super().successors(state)


def counts(result):
    paths = {n: v.path for n, v in result.violations.items()}
    return (result.states, result.transitions, result.depth, result.complete, result.per_action_edges, paths,
            result.examples)


def test_failed_tasks_change_nothing(sc, tmp_path):
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)
    result = explore_spark(FailsOncePerTask(str(tmp_path), "kip455", bounds), SparkOptions(warmup=False, layout="levels"),
                           sc=sc)
    assert len(os.listdir(tmp_path)) >= 3  # tasks failed at several levels, and were retried
    assert counts(result) == counts(explore(build_model("reassignment", "kip455", bounds)))


def test_a_failed_resident_task_restarts_the_search_with_the_same_answers(sc, tmp_path):
    """The resident layout: a task that fails fails its barrier stage, and the search starts again in a new one."""
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)
    info: dict = {}
    result = explore_spark(FailsOncePerTask(str(tmp_path), "kip455", bounds, most=1), SparkOptions(layout="resident"),
                           sc=sc, run_info=info)
    assert len(os.listdir(tmp_path)) == 1 and len(info["restarts"]) == 1
    assert "resident search of kip455 failed" in info["restarts"][0]  # (the task that failed, or a peer it left)
    assert counts(result) == counts(explore(build_model("reassignment", "kip455", bounds)))


def test_resume_after_a_depth_bound_gives_the_uninterrupted_counts(sc, tmp_path):
    """Stopped after level 3, resumed: the counts and paths of an uninterrupted run (the embedded
    engine's, which test_spark_engine.py shows equal to an uninterrupted Spark run's)."""
    model = build_model("reassignment", "kraft", SMALL_KRAFT)
    uninterrupted = explore(model)
    part = explore_spark(model, SparkOptions(checkpoint_dir=str(tmp_path), max_depth=3), sc=sc)
    assert (part.complete, part.depth) == (False, 3)
    (run_dir,) = os.listdir(tmp_path)
    assert sorted(os.listdir(tmp_path / run_dir)) == [f"level-{n:05d}" for n in range(3)]
    resumed = explore_spark(model, SparkOptions(resume_dir=str(tmp_path)), sc=sc)
    assert counts(resumed) == counts(uninterrupted)


def test_an_interrupted_run_resumes_with_its_state_graph(sc, tmp_path, monkeypatch):
    class Interrupted(Exception):
        pass

    def interrupt_at_level_4(states, depth, rate):
        if depth >= 4:
            raise Interrupted

    monkeypatch.setattr(spark_run, "PROGRESS_INTERVAL", 0.0)  # a progress call after every level
    model = build_model("reassignment", "kraft-3.7", Bounds(brokers=4, rf=2, reassigns=2, cancels=1))
    with pytest.raises(Interrupted):
        explore_spark(model, SparkOptions(checkpoint_dir=str(tmp_path), keep_graph=True, progress=interrupt_at_level_4),
                      sc=sc)
    resumed = explore_spark(model, SparkOptions(resume_dir=str(tmp_path), keep_graph=True), sc=sc)
    embedded = explore(model, keep_graph=True)
    assert counts(resumed) == counts(embedded)
    assert resumed.graph.states == embedded.graph.states
    assert resumed.graph.successors == embedded.graph.successors


def test_cli_resume_of_a_finished_run_reads_it_back(sc, tmp_path, capsys):
    from kreassign.cli import main

    def run(*args):
        assert main(["check", "--profile", "kraft", "--brokers", "3", "--failures", "0", "--engine", "spark",
                     "--out", str(tmp_path / "out"), *args]) == 0
        return [line for line in capsys.readouterr().out.splitlines() if not line.startswith("kraft ")]

    checkpoint = str(tmp_path / "ckpt")
    first = run("--checkpoint", checkpoint)
    assert run("--resume", checkpoint) == first
    with pytest.raises(FileNotFoundError):
        explore_spark(build_model("quota", "kip599-draft", QUOTA_SUITE["kip599-draft"]()),
                      SparkOptions(resume_dir=str(tmp_path / "missing")), sc=sc)
