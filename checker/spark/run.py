"""One exploration of one model on Spark: the search loop, composed of the engine's parts.

`SparkRun(sc, model, options).run()` gives `bfs.explore`'s result. Its parts, each a module:
the run's context (context.py: the model, its codec and recipe, the buckets), the search so far
(search.py), the levels run on Spark or on the driver (rounds.py), checkpoints (checkpoint.py),
liveness where the states are (stuck.py) and the result (results.py). This module decides only
where each level runs, when the search stops, and what stays cached until liveness is done.

Run limits stop the search as the embedded engine's do, with its `stopped` reasons: `max_states`
keeps the same states (the first ones in BFS order), and a Spark level whose new states could
reach the cap (the previous level's transitions bound them) is deduplicated and checked first and
expanded only when the cap does not fall in it, so the cap's level is never expanded to be thrown
away (check_task.py); `watch` (--max-memory, the driver's memory) is asked before each level.
"""

from __future__ import annotations

import time
from typing import Any

from kreassign.checker.explore.bfs import MAX_STATES, ExploreResult
from kreassign.checker.explore.protocol import Model
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.checkpoint import Checkpoints
from kreassign.checker.spark.context import RunContext
from kreassign.checker.spark.errors import quietly
from kreassign.checker.spark.options import DEFAULT_OPTIONS, SparkOptions
from kreassign.checker.spark.results import explore_result
from kreassign.checker.spark.rounds import DriverLevel, Rounds
from kreassign.checker.spark.search import SearchSoFar
from kreassign.checker.spark.session import cluster_info, executors, lost_executors
from kreassign.checker.spark.stuck import StuckStates

PROGRESS_INTERVAL = 1.0  # seconds between progress calls (checked after each level)
#: the first levels run on the driver while each takes less than this (a Spark job costs 0.1-0.3 s)
DRIVER_LEVEL_SECONDS = 0.02


def begin(ctx: RunContext, search: SearchSoFar, run_info: dict[str, Any], layout: str) -> ExploreResult | None:
    """A run's start, in either layout: where it runs into `run_info`; the result when there is no initial state
    to explore, else None once the model's recipe is shipped."""
    run_info.update(cluster_info(ctx.sc), buckets=ctx.buckets, layout=layout)
    if not ctx.inits:
        return explore_result(ctx, search, 0.0, complete=not search.truncated,
                              stopped=MAX_STATES if search.truncated else None)
    ctx.ship()
    return None


def record_executors(ctx: RunContext, run_info: dict[str, Any], since: float) -> None:
    """The executors registered at the end, and those lost since `since` (ms), into `run_info`."""
    run_info["executors_registered"] = executors(ctx.sc)
    run_info["executors_lost"] = lost_executors(ctx.sc, since)


def report_progress(options: SparkOptions, search: SearchSoFar, started: float, last: float) -> float:
    """Call `options.progress` if PROGRESS_INTERVAL has passed since `last`; when it was last called."""
    now = time.perf_counter()
    if options.progress is None or now - last < PROGRESS_INTERVAL:
        return last
    options.progress(search.states, search.depth, search.states / max(now - started, 1e-9))
    return now


class SparkRun:
    """One exploration of one model on Spark (see the module docstring and checker/spark/engine.py).

    `level_log`, when given, receives one dict per level (where it ran, new states, edges, job and
    level seconds); `run_info` receives where the run ran (`cluster_info`, buckets, executors used)."""

    def __init__(self, sc: Any, model: Model, options: SparkOptions = DEFAULT_OPTIONS, *,
                 level_log: list[dict[str, Any]] | None = None, run_info: dict[str, Any] | None = None):
        self.ctx = RunContext.build(sc, model, options)
        self.search = SearchSoFar(options, truncated=self.ctx.inits_truncated)
        self.rounds = Rounds(self.ctx, self.search, level_log)
        self.stuck = StuckStates(self.ctx, self.search, self.rounds)
        self.checkpoints = (Checkpoints(self.ctx, self.search, self.rounds, self.stuck)
                            if self.ctx.checkpointing else None)
        self.run_info = run_info if run_info is not None else {}
        self.started = self.last_progress = time.perf_counter()
        self.last_transitions: int | None = None  # the last level's, which bound the next level's new states

    def run(self) -> ExploreResult:
        ctx, search = self.ctx, self.search
        started = self.started = self.last_progress = self.rounds.level_started = time.perf_counter()
        empty = begin(ctx, search, self.run_info, "levels")
        if empty is not None:
            return empty
        since = time.time() * 1000
        try:
            complete = self.search_levels()
        finally:
            self.run_info["executors_used"] = len(self.rounds.executors_used)
            record_executors(ctx, self.run_info, since)  # (Spark recomputed what lost ones held)
        live = ctx.liveness and complete  # check/run.py classifies stuck states through it (no graph)
        stopped = search.stopped or (MAX_STATES if search.truncated else None)
        return explore_result(ctx, search, time.perf_counter() - started, complete, stopped=stopped,
                              classify_stuck=self.classify_stuck if live else None,
                              release_liveness=self.release_liveness if live else None)

    def search_levels(self) -> bool:
        """Level after level until no new state (or a bound); True iff the search ran to the end.

        The first levels run on the driver, with the tasks' own code, while a level takes less than
        DRIVER_LEVEL_SECONDS (a Spark job costs more than that); the first longer one hands its
        output over to Spark, which runs every later level."""
        ctx, search, rounds = self.ctx, self.search, self.rounds
        outputs: list[Any] = []  # cached level outputs, dropped on the way out whatever happens
        try:
            level, out, stop, done = self._start()
            outputs.append(out)
            while not stop:
                if self._over_memory():
                    break
                more = ctx.options.max_depth is None or level + 1 < ctx.options.max_depth
                job = ctx.job(search.found, "expand" if more else "count", level=level + 1)
                if isinstance(out, DriverLevel) and out.seconds < DRIVER_LEVEL_SECONDS:
                    nxt = rounds.on_driver(out.to, job, search.level_keys[level].tobytes())
                    results = nxt.results
                else:
                    capped = more and self._may_reach_cap()
                    nxt = rounds.dedupe_and_check(out, job) if capped else rounds.next_on_spark(out, job)
                    outputs.append(nxt)
                    results = rounds.collect(nxt)
                    if capped and self._cap_falls_in(results):
                        rounds.log_checked(nxt, results)  # (absorb keeps its first states and stops)
                    elif capped:
                        results = rounds.expand_checked(nxt, job, results)
                    if job["mode"] != "count":
                        self.stuck.keep(nxt.states)
                out.unpersist(keep_states=ctx.liveness)
                out = nxt
                level += 1
                if not more:
                    search.dropped = any(v["new"] for tag, v in results if tag == T.STATS)
                    break
                stop, done = search.absorb(level, results)
                self.last_transitions = sum(v.get("transitions", 0) for tag, v in results if tag == T.STATS)
                self._commit(level, out, done)
                self._report()
            complete = search.complete(done)
            if complete and ctx.liveness:
                self.stuck.prepare()
            return complete
        finally:
            for cached in outputs:
                cached.unpersist(keep_states=self.stuck.pending)
            for run in rounds.runs:
                quietly(run.unpersist)
            if not self.stuck.pending:  # (else classify_stuck needs them, and the lineage its broadcasts)
                self.release_liveness()

    def _start(self) -> tuple[int, Any, bool, bool]:
        """Level 0 (the initial states), or a checkpoint's last level: (level, its output, stop, done)."""
        ctx, rounds = self.ctx, self.rounds
        if self.checkpoints is not None:
            resumed = self.checkpoints.resume() if ctx.options.resume else None
            if resumed is not None:
                if not resumed[3]:  # (not done: the last level was expanded again)
                    self._report()
                return resumed
            self.checkpoints.start_afresh()
        job = ctx.job(self.search.found, "seed", level=0, seed_level=0, check=True)
        if ctx.options.warmup:
            inputs: dict[int, list[Any]] = {}
            for b, record in rounds.seed_records():
                inputs.setdefault(b, []).append((b, record))
            out = rounds.on_driver(inputs, job, None)
            results = out.results
        else:
            seeds = rounds.shuffled(ctx.sc.parallelize(rounds.seed_records(), ctx.buckets))
            out = rounds.spark_level(seeds, job)
            results = rounds.collect(out)
            self.stuck.keep(out.states)
        stop, done = self.search.absorb(0, results)
        self.last_transitions = sum(v.get("transitions", 0) for tag, v in results if tag == T.STATS)
        self._commit(0, out, done)
        self._report()
        return 0, out, stop, done

    def _may_reach_cap(self) -> bool:
        """Could the next level's new states reach max_states? They are at most the previous level's
        transitions (unknown after a resume: maybe). Not with keep_graph (small runs that keep everything)."""
        cap, search = self.ctx.options.max_states, self.search
        if cap is None or self.ctx.options.keep_graph:
            return False
        return self.last_transitions is None or search.states + self.last_transitions > cap

    def _cap_falls_in(self, results: list[tuple[str, Any]]) -> bool:
        """Does max_states fall in the level these (checked, not expanded) results report?"""
        new = sum(v["new"] for tag, v in results if tag == T.STATS)
        return self.search.states + new > self.ctx.options.max_states

    def _over_memory(self) -> bool:
        """Ask the run's `watch` (--max-memory) before a level, as the embedded engine does between chunks;
        a reason to stop ends the search, incomplete, with that reason."""
        watch = self.ctx.options.watch
        reason = watch(self.search.states) if watch is not None else None
        if reason is not None:
            self.search.stopped = reason
        return reason is not None

    def _commit(self, level: int, out: Any, done: bool) -> None:
        if self.checkpoints is not None:
            self.checkpoints.commit(level, out, done)

    def _report(self) -> None:
        self.last_progress = report_progress(self.ctx.options, self.search, self.started, self.last_progress)

    def classify_stuck(self, prop: Any, findings: tuple[Any, ...] = (), want_findings: bool = True):
        """(unexpected lasso or None, {finding: lasso}) for an `eventually` property (stuck.py); once
        every property is classified, what liveness kept is released."""
        try:
            return self.stuck.classify(prop, findings, want_findings)
        finally:
            if not self.stuck.pending:
                self.release_liveness()

    def release_liveness(self) -> None:
        """Drop what liveness kept cached (every level's states) and the run's broadcasts."""
        self.stuck.release()
        self.rounds.release_broadcasts()
        quietly(self.ctx.recipe_bc.destroy)


__all__ = ["DRIVER_LEVEL_SECONDS", "PROGRESS_INTERVAL", "SparkRun", "begin", "record_executors", "report_progress"]
