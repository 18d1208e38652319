"""Wide levels travel as many records (SparkOptions.record_states, tasks.record_slices): with records of a few
states each, every level of every bucket is split, and the answers are still the embedded engine's — on the
packed path, on an int64 kernel, with liveness on the executors, and through a checkpoint and resume."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from kreassign.checker.check.run import check_model
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from anchor_model import anchor_model

pytest.importorskip("pyspark")

from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.engine import explore_spark, spark_explorer
from kreassign.checker.spark.options import SparkOptions
from kreassign.checker.spark.search import Found

pytestmark = pytest.mark.spark

TINY = 3  # states per record


def counts(r):
    return (r.states, r.transitions, r.depth, r.complete, sorted(r.violations), r.per_action_edges)


def test_record_slices_cover_every_index_once():
    assert T.record_slices(0, 3) == [slice(0, 0)]
    covered = np.concatenate([np.arange(10)[s] for s in T.record_slices(10, 3)])
    assert covered.tolist() == list(range(10)) and max(s.stop - s.start for s in T.record_slices(10, 3)) == 3


def test_a_run_and_a_level_come_in_records_of_at_most_the_given_states():
    from kreassign.checker.spark.packed_codec import PackedCodec

    model = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"])
    codec = PackedCodec(model)
    states = list(explore(model, keep_graph=True).graph.states)[:20]
    rows = codec.rows_of(np.array([codec.packed.pack(s) for s in states], dtype=np.int64))
    hi, lo = codec.identities(rows)
    level = T.Level(np.arange(20, dtype=np.int64), (hi, lo), rows)
    runs = list(T.run_task(0, [(0, (T.LEVEL, (1, T.states_blob(level, False))))], False, TINY))
    assert len(runs) == 7 and all(len(blob) <= 16 * TINY for _, (_, blob) in runs)
    visited = T.DigestVisited([blob for _, (_, blob) in runs])
    assert not visited.unknown(hi, lo).any()  # every state is in one of the runs


@pytest.mark.parametrize("case", ["kraft packed", "anchor kernel"])
def test_tiny_records_same_answers_as_the_embedded_engine(sc, case):
    if case == "kraft packed":
        model, options = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"]), {}
    else:
        model, options = anchor_model("N4_fail"), {"check_deadlock": True}
    embedded = explore(model, **options)
    spark = explore_spark(model, SparkOptions(warmup=False, record_states=TINY, **options), sc=sc)
    assert counts(spark) == counts(embedded)
    if case == "kraft packed":
        assert {n: [str(a) for a, _ in v.path] for n, v in spark.violations.items()} == \
            {n: [str(a) for a, _ in v.path] for n, v in embedded.violations.items()}


def test_tiny_records_with_liveness_and_a_resumed_checkpoint(sc, tmp_path):
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)
    factory = lambda p, b: build_model("reassignment", p, b)
    embedded = check_model("kip455", bounds, factory=factory, out_dir=str(tmp_path / "e"))
    spark = check_model("kip455", bounds, factory=factory, out_dir=str(tmp_path / "s"), engine="spark",
                        explorer=spark_explorer(SparkOptions(record_states=TINY, warmup=False)))
    assert {n: (v.status, v.length) for n, v in spark.properties.items()} == \
        {n: (v.status, v.length) for n, v in embedded.properties.items()}
    model = build_model("reassignment", "kip455", bounds)
    part = explore_spark(model, SparkOptions(checkpoint_dir=str(tmp_path / "c"), max_depth=4, record_states=TINY,
                                             warmup=False), sc=sc)
    assert not part.complete
    resumed = explore_spark(model, SparkOptions(resume_dir=str(tmp_path / "c"), record_states=TINY), sc=sc)
    assert counts(resumed) == counts(explore(model))


def test_disk_only_storage_same_answers_and_a_bad_level_is_named(sc):
    """spark.kreassign.storage (SparkOptions.storage): DISK_ONLY caches every RDD of the search on the executors'
    disks with the same answers; a name that is not a StorageLevel is a usage error (exit 2) naming the setting."""
    from kreassign.errors import UsageError

    model = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"])
    spark = explore_spark(model, SparkOptions(warmup=False, storage="DISK_ONLY", record_states=TINY), sc=sc)
    assert counts(spark) == counts(explore(model))
    with pytest.raises(UsageError, match="spark.kreassign.storage: 'DISK_SOMETIMES' is not a pyspark StorageLevel"):
        explore_spark(model, SparkOptions(storage="DISK_SOMETIMES"), sc=sc)
    with pytest.raises(UsageError, match="is not a pyspark StorageLevel"):
        explore_spark(model, SparkOptions(storage="__class__"), sc=sc)


def test_kreassign_settings_from_the_session_conf_are_checked(sc):
    """spark.kreassign.partitions and spark.kreassign.taskTimings (`kreassign check --conf ...`, the only way
    the CLI sets them): read from the session into the run's context; a bad value is a usage error naming it."""
    from kreassign.checker.spark.context import RunContext

    from kreassign.errors import UsageError

    model = build_model("reassignment", "kip455", Bounds(brokers=3, rf=2, reassigns=1))
    conf = sc._conf  # the running context's own (getConf() is a copy)
    try:
        conf.set("spark.kreassign.partitions", "3").set("spark.kreassign.taskTimings", "TRUE")
        ctx = RunContext.build(sc, model, SparkOptions())
        assert (ctx.buckets, ctx.task_timings) == (3, True)
        assert ctx.job(Found(), "full")["task_timings"] is True
        conf.set("spark.kreassign.partitions", "three")
        with pytest.raises(UsageError, match="spark.kreassign.partitions: expected a number of buckets, got 'three'"):
            RunContext.build(sc, model, SparkOptions())
        conf.set("spark.kreassign.partitions", "0").set("spark.kreassign.taskTimings", "sometimes")
        with pytest.raises(UsageError, match="spark.kreassign.taskTimings: expected true or false, got 'sometimes'"):
            RunContext.build(sc, model, SparkOptions())
    finally:
        conf.set("spark.kreassign.partitions", "0").set("spark.kreassign.taskTimings", "false")


def test_spilled_level_keys_give_the_same_paths_and_leave_nothing_behind(sc):
    """SparkOptions.spill_keys: every level's keys but the last move to memory-mapped files (threshold 1 state
    here), and the counterexample paths rebuilt from them (kraft, violations at several depths) are the
    embedded engine's; the files go with the search. The default threshold leaves these small levels in memory."""
    import gc
    import os

    from kreassign.checker.spark.run import SparkRun

    model = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"])
    embedded = explore(model)
    run = SparkRun(sc, model, SparkOptions(warmup=False, spill_keys=1))
    spark = run.run()
    assert counts(spark) == counts(embedded) and len(spark.violations) >= 2
    assert {n: [str(a) for a, _ in v.path] for n, v in spark.violations.items()} == \
        {n: [str(a) for a, _ in v.path] for n, v in embedded.violations.items()}
    keys = run.search.level_keys
    assert [isinstance(k, np.memmap) for k in keys] == [True] * (len(keys) - 1) + [False]
    folder = run.search.spilled.name
    assert len(os.listdir(folder)) == len(keys) - 1
    del run, spark, keys
    gc.collect()
    assert not os.path.exists(folder)

    from kreassign.checker.spark.search import SearchSoFar

    default = SearchSoFar(SparkOptions())  # the default threshold (2**20 keys): these small levels stay in memory
    default.level_keys = [np.arange(5000, dtype=np.int64), np.arange(3, dtype=np.int64)]
    default._spill(0)
    assert default.spilled is None and not isinstance(default.level_keys[0], np.memmap)


def test_a_spill_that_loses_the_key_order_is_caught(sc, monkeypatch):
    """The broken variant: a level's keys written back out of order give other paths than the embedded engine's,
    or none."""
    from kreassign.checker.spark.search import SearchSoFar

    spill = SearchSoFar._spill

    def shuffled(self, level):
        spill(self, level)
        if isinstance(self.level_keys[level], np.memmap):
            self.level_keys[level] = np.array(self.level_keys[level][::-1])

    monkeypatch.setattr(SearchSoFar, "_spill", shuffled)
    model = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"])
    embedded = explore(model)
    try:
        spark = explore_spark(model, SparkOptions(warmup=False, spill_keys=1, layout="levels"), sc=sc)
    except Exception as e:  # noqa: BLE001 - caught only if it is the path that could not be rebuilt
        import traceback

        assert "path_to" in [frame.name for frame in traceback.extract_tb(e.__traceback__)], repr(e)
        return
    assert {n: [str(a) for a, _ in v.path] for n, v in spark.violations.items()} != \
        {n: [str(a) for a, _ in v.path] for n, v in embedded.violations.items()}


def test_task_timings_name_the_worker_and_its_replicas_tabulated_situations(capsys):
    """spark.kreassign.taskTimings: an expanding task's line names its Python worker and how many situations
    that worker's replica has tabulated (docs/spark.md: workers are pooled, not tied to buckets); off, nothing."""
    import os
    from types import SimpleNamespace

    from kreassign.checker.spark import tasks as T

    rt = SimpleNamespace(packed=SimpleNamespace(installed=1234))
    timer = T._Timer(3, {"task_timings": True, "level": 7})
    timer("expand", 10, rt)
    line = capsys.readouterr().err.strip()
    assert line.startswith("L7 b3 expand ") and line.endswith(f"states=10 pid={os.getpid()} tabulated=1234")
    T._Timer(3, {"task_timings": False, "level": 7})("expand", 10, rt)
    assert capsys.readouterr().err == ""
