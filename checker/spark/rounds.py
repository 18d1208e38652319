"""One BFS level at a time: as one Spark job over the buckets, or the same task code on the driver.

A level run on Spark is a `SparkLevel`: per bucket, `dedupe_task` over the bucket's visited runs
and the candidates sent to it gives the level's new states (cached with the bucket), and
`expand_task` expands them into the next level's candidates (cached, shuffled once by the next
level). The first, small levels run on the driver instead (`DriverLevel`: every bucket's task in
turn, in this process, same code, same output). `Rounds` runs both kinds and turns a level's
output into the next level's input; the search loop choosing between them is checker/spark/run.py.
A level where `--max-states` may fall runs as two jobs, `dedupe_and_check` then, only when the cap
did not fall in it, `expand_checked` (checker/spark/check_task.py says why).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.check_task import check_task
from kreassign.checker.spark.context import RunContext
from kreassign.checker.spark.errors import quietly
from kreassign.checker.spark.jobs import run_job
from kreassign.checker.spark.search import SearchSoFar


@dataclass
class SparkLevel:
    """A level run on Spark: its new states (cached with their buckets), its expansion's output
    (the next level's candidates, cached in shuffle-writer form), the accumulator of its findings."""

    number: int
    states: Any
    output: Any
    results: Any
    edges: list[Any] = field(default_factory=list)
    checked_only: bool = False  # dedupe_and_check ran it: its states are checked, not expanded (yet)
    check_seconds: float = 0.0  # that job's time, logged with the level's

    def unpersist(self, keep_states: bool = False) -> None:
        """Drop the cached blocks (the RDDs and their lineage stay: Spark may recompute them)."""
        for rdd in (None if keep_states else self.states, self.output):
            if rdd is not None:
                quietly(rdd.unpersist)
        self.states = self.output = None


def finished_level() -> SparkLevel:
    """The output of a finished checkpointed run (nothing to expand)."""
    return SparkLevel(-1, None, None, None)


@dataclass
class DriverLevel:
    """A level computed on the driver: the next level's input per bucket, the findings, the
    records a checkpoint saves, and how long it took."""

    number: int
    to: dict[int, list[Any]]
    results: list[tuple[str, Any]] = field(default_factory=list)
    saved: list[tuple[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def unpersist(self, keep_states: bool = False) -> None:
        self.to = {}


class DriverValue:
    """Stands for a broadcast variable when a task's code runs on the driver."""

    def __init__(self, value: Any):
        self.value = value


class Rounds:
    """Runs the levels of one search and keeps what the next level needs: each bucket's visited runs
    (`runs`: cached RDDs co-partitioned with the states), the broadcast keys of past levels."""

    def __init__(self, ctx: RunContext, search: SearchSoFar, level_log: list[dict[str, Any]] | None = None):
        self.ctx, self.search, self.level_log = ctx, search, level_log
        self.runs: list[Any] = []  # per Spark level, the buckets' visited runs (cached, co-partitioned)
        self.executors_used: set[str] = set()
        self.driver_states: list[tuple[int, tuple[str, Any]]] = []  # with liveness: levels run on the driver
        self.broadcasts: list[Any] = []  # kept until the run ends: a recomputation may need them
        self.level_started = time.perf_counter()
        self._jvm_classes: tuple[Any, ...] | None = None

    def spark_level(self, inputs: Any, job: dict[str, Any], prev_keys: Any = None,
                    add_run: bool = True) -> SparkLevel:
        """One level on Spark, as one job: per bucket, `dedupe_task` over `inputs` (the bucket's
        visited runs and the candidates sent to it: a partitioner-aware union, no shuffle) gives
        the level's new states, cached with the bucket; `expand_task` expands them into the next
        level's candidates (cached, shuffled by the next level). The new states' identities become
        one more cached run of the bucket's visited set (`self.runs`), computed from the cached
        states by the next level's job. Lineage is kept (not cut): a lost executor's cached blocks
        and shuffle files are recomputed by Spark, deterministically (tasks are pure functions)."""
        ctx = self.ctx
        results = ctx.sc.accumulator({}, T.Results())
        dedupe = functools.partial(T.dedupe_task, job=job, recipe=ctx.recipe_bc, prev_keys=prev_keys, results=results)
        if inputs.getNumPartitions() != ctx.buckets:  # a union that is not partitioner-aware: buckets mixed up
            raise RuntimeError(f"level {job['level']}: {inputs.getNumPartitions()} partitions for {ctx.buckets} buckets")
        states = inputs.mapPartitionsWithIndex(dedupe, preservesPartitioning=True)
        states.persist(self.ctx.storage_level())
        output = None
        if job["mode"] != "count":
            expand = functools.partial(T.expand_task, job=job, recipe=ctx.recipe_bc, results=results)
            output = states.mapPartitionsWithIndex(expand)
            output._bypass_serializer = True  # the task writes PySpark's shuffle format itself
            output.persist(self.ctx.storage_level())
            if add_run:
                self.runs.append(self.visited_run(states))
        return SparkLevel(job["level"], states, output, results)

    def dedupe_and_check(self, previous: Any, job: dict[str, Any]) -> SparkLevel:
        """The level after `previous`, deduplicated and checked but not expanded (the level where
        --max-states may fall): per bucket, `dedupe_task` (its new states cached with the bucket, as in
        `spark_level`) then `check_task` (their keys and findings, through the accumulator). `collect`
        runs it; `expand_checked` expands it when the cap did not fall in it."""
        ctx = self.ctx
        cands = self.candidates(previous)
        keys_bc = ctx.sc.broadcast(self.search.level_keys[job["level"] - 1].tobytes())
        self.broadcasts.append(keys_bc)
        inputs = ctx.sc.union([*self.runs, cands])
        if inputs.getNumPartitions() != ctx.buckets:
            raise RuntimeError(f"level {job['level']}: {inputs.getNumPartitions()} partitions for {ctx.buckets} buckets")
        results = ctx.sc.accumulator({}, T.Results())
        dedupe = functools.partial(T.dedupe_task, job=job, recipe=ctx.recipe_bc, prev_keys=keys_bc, results=results)
        states = inputs.mapPartitionsWithIndex(dedupe, preservesPartitioning=True)
        states.persist(self.ctx.storage_level())
        check = functools.partial(check_task, job=job, recipe=ctx.recipe_bc, results=results)
        return SparkLevel(job["level"], states, states.mapPartitionsWithIndex(check), results, checked_only=True)

    def expand_checked(self, level: SparkLevel, job: dict[str, Any],
                       checked: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        """Expand a level `dedupe_and_check` ran (one more job over its cached states, `expand_task` without
        checking them again); its records as `collect` gives them, with the findings `checked` reported."""
        ctx = self.ctx
        results = ctx.sc.accumulator({}, T.Results())
        expand = functools.partial(T.expand_task, job={**job, "check": False}, recipe=ctx.recipe_bc, results=results)
        output = level.states.mapPartitionsWithIndex(expand)
        output._bypass_serializer = True  # the task writes PySpark's shuffle format itself
        output.persist(self.ctx.storage_level())
        self.runs.append(self.visited_run(level.states))
        level.output, level.results, level.checked_only = output, results, False
        records = self.collect(level)
        found = {v["bucket"]: v for tag, v in checked if tag == T.STATS}
        for tag, v in records:
            if tag == T.STATS:
                v.update(violations=found[v["bucket"]]["violations"], examples=found[v["bucket"]]["examples"])
        return records

    def visited_run(self, states: Any) -> Any:
        """The identities of a level's states, one sorted run per bucket (cached)."""
        run = states.mapPartitionsWithIndex(functools.partial(T.run_task, int64=self.ctx.int64,
                                                                      most=self.ctx.options.record_states),
                                            preservesPartitioning=True)
        run.persist(self.ctx.storage_level())
        return run

    def next_on_spark(self, previous: Any, job: dict[str, Any]) -> SparkLevel:
        """The level after `previous` on Spark: its candidates against every visited run."""
        cands = self.candidates(previous)
        keys_bc = self.ctx.sc.broadcast(self.search.level_keys[job["level"] - 1].tobytes())
        self.broadcasts.append(keys_bc)
        return self.spark_level(self.ctx.sc.union([*self.runs, cands]), job, keys_bc)

    def collect(self, level: SparkLevel) -> list[tuple[str, Any]]:
        """Run the level's job; its findings, from the accumulator, as (tag, value) records (STATS
        merges each bucket's dedupe and expand reports)."""
        ctx = self.ctx
        what = f"BFS level {level.number} of {ctx.model_name}"
        ctx.sc.setJobDescription(f"kreassign: {what}")
        started = time.perf_counter()
        target = level.output if level.output is not None else level.states
        run_job(lambda: target._jrdd.count(), ctx.sc, what, ctx.options.timeout)
        job_seconds = time.perf_counter() - started
        found = level.results.value
        level.results.value = {}  # the registry keeps the accumulator: do not keep its data too
        per_bucket: dict[int, dict[str, Any]] = {}
        others: list[tuple[int, str, Any]] = []
        for (_, bucket, _part), tags in found.items():
            for tag, values in tags.items():
                if tag == T.STATS:
                    for v in values:
                        per_bucket.setdefault(bucket, {}).update(v)
                else:
                    others.extend((bucket, tag, v) for v in values)
        expanded = level.output is not None and not level.checked_only
        if len(per_bucket) != ctx.buckets or (expanded and any("transitions" not in v for v in per_bucket.values())):
            raise RuntimeError(f"level {level.number}: {len(per_bucket)} of {ctx.buckets} buckets reported (engine bug)")
        for v in per_bucket.values():
            self.executors_used.update(v.pop("executors", ()))
        records = [(T.STATS, per_bucket[b]) for b in sorted(per_bucket)]
        records += [(tag, v) for _, tag, v in sorted(others, key=lambda r: (r[0], r[1]))]
        level.edges = [v for tag, v in records if tag == T.EDGES]
        if level.checked_only:  # logged with its expansion (expand_checked), or by `log_checked` if there is none
            level.check_seconds = job_seconds
        else:
            self._log_level(level.number, records, level.check_seconds + job_seconds, spark=True)
        return records

    def log_checked(self, level: SparkLevel, records: list[tuple[str, Any]]) -> None:
        """Log a level `dedupe_and_check` ran and that was not expanded (the cap fell in it)."""
        self._log_level(level.number, records, level.check_seconds, spark=True)

    def on_driver(self, inputs: dict[int, list[Any]], job: dict[str, Any], prev_keys: bytes | None) -> DriverLevel:
        """One level on the driver: every bucket's task in turn, in this process (same code, same output)."""
        ctx = self.ctx
        started = time.perf_counter()
        out = DriverLevel(job["level"], {b: [] for b in range(ctx.buckets)})
        keys = None if prev_keys is None else DriverValue(prev_keys)
        for b in range(ctx.buckets):
            for target, (tag, value) in T.run_step(b, inputs.get(b, []), job, ctx.recipe_bc, keys):
                if target >= 0:
                    out.to[target].append((target, (tag, value)))
                    continue
                if tag == T.STATS or (job["keep_graph"] and tag in (T.STATES, T.EDGES)):
                    out.results.append((tag, value))
                if job["save_states"] and tag in (T.STATES, T.EDGES):
                    out.saved.append((tag, value))
                if ctx.liveness and tag == T.STATES and len(value[1][0]):
                    self.driver_states.append((value[0], (T.LEVEL, (job["level"], value[1]))))
        out.seconds = time.perf_counter() - started
        self._log_level(out.number, out.results, out.seconds)
        return out

    def _log_level(self, number: int, records: list[tuple[str, Any]], job_seconds: float, spark: bool = False) -> None:
        if self.level_log is not None:
            stats = [v for tag, v in records if tag == T.STATS]
            now = time.perf_counter()
            self.level_log.append({
                "level": number, "where": "spark" if spark else "driver", "new_states": sum(v["new"] for v in stats),
                "edges": sum(v.get("transitions", 0) for v in stats), "job_seconds": job_seconds,
                "shuffled_bytes": sum(v.get("shuffled", 0) for v in stats),
                "visited": self.search.states + sum(v["new"] for v in stats),
                "seconds": now - self.level_started})
            self.level_started = now

    def seed_records(self) -> list[tuple[int, tuple[str, Any]]]:
        """The initial states as level 0, split into buckets (keys 0..n-1 in init_states order)."""
        ctx, int64 = self.ctx, self.ctx.int64
        encoded = [ctx.codec.encode(s) for s in ctx.inits]
        keys = np.arange(len(encoded), dtype=np.int64)
        if int64:
            states = np.array([p for _, p in encoded], dtype=np.int64)
            level = T.Level(keys, states, states)
            owner = T.int_buckets(states, ctx.buckets)
        else:
            hi, lo = T.split_digests(b"".join(i for i, _ in encoded))
            level = T.Level(keys, (hi, lo), ctx.codec.gather([p for _, p in encoded]))
            owner = T.digest_buckets(lo, ctx.buckets)
        records = []
        for b in range(ctx.buckets):
            part = T.select(level, owner == b, int64)
            if len(part):
                records.append((b, (T.LEVEL, (0, T.states_blob(part, int64)))))
        return records

    def as_input(self, rdd: Any) -> Any:
        """The same records read with the context's serializer, so that unions of inputs need no
        Python re-serialization pass (every input holds pickled batches of records)."""
        from pyspark.rdd import RDD

        return RDD(rdd._jrdd, self.ctx.sc, self.ctx.sc.serializer)

    def shuffled(self, rdd: Any) -> Any:
        """Records (bucket, record) into partition `bucket`, with the engine's partitioner."""
        return self.as_input(rdd.partitionBy(self.ctx.buckets, T.bucket_of))

    def candidates(self, level: Any) -> Any:
        """The next level's candidates, partitioned by bucket: a Spark level's cached output shuffled
        by the JVM (PySpark's partitionBy without its Python stage: the task already wrote (bucket,
        pickled batch) pairs); for a level run on the driver, its candidates (and, the first time,
        the buckets' visited runs, which become a cached run RDD)."""
        sc, buckets = self.ctx.sc, self.ctx.buckets
        if isinstance(level, DriverLevel):
            runs, cands = [], []
            for b in range(buckets):
                blobs = [v for _, (tag, v) in level.to[b] if tag == T.RUN]
                if blobs:
                    visited = T.IntVisited(blobs) if self.ctx.int64 else T.DigestVisited(blobs)
                    runs.append((b, (T.RUN, visited.merged())))
                cands.extend(r for r in level.to[b] if r[1][0] == T.CANDIDATES)
            run = self.shuffled(sc.parallelize(runs, buckets))
            run.persist(self.ctx.storage_level())
            self.runs = [run]
            return self.shuffled(sc.parallelize(cands, buckets))
        if self._jvm_classes is None:  # each lookup is a round trip to the JVM
            jvm = sc._jvm
            self._jvm_classes = (jvm.PairwiseRDD, jvm.PythonPartitioner, jvm.PythonRDD)
        from pyspark.rdd import RDD

        pairwise, python_partitioner, python_rdd = self._jvm_classes
        pairs = pairwise(level.output._jrdd.rdd()).asJavaPairRDD()
        jrdd = python_rdd.valueOfPair(pairs.partitionBy(python_partitioner(buckets, id(T.bucket_of))))
        return RDD(jrdd, sc, sc.serializer)

    def release_broadcasts(self) -> None:
        for b in self.broadcasts:
            quietly(b.destroy)
        self.broadcasts = []


__all__ = ["DriverLevel", "DriverValue", "Rounds", "SparkLevel", "finished_level"]
