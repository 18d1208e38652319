"""Liveness on the executors, the driver's side: which states reach a goal, and the stuck ones classified.

After a complete search `prepare` computes, for every `eventually` property, the states from which
a goal is reachable, by a distributed backward fixpoint (the tasks are checker/spark/liveness.py),
and keeps them cached; `classify` then finds the first stuck state of each class where the states
are, and builds its lasso on the driver, as check/run.py does on a graph. Every level's states
stay cached until then (`keep`), and are dropped by `release`.
"""

from __future__ import annotations

import functools
from typing import Any

from kreassign.checker.explore.bfs import Path
from kreassign.checker.spark import liveness as SL
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.context import RunContext
from kreassign.checker.spark.errors import quietly
from kreassign.checker.spark.jobs import run_job
from kreassign.checker.spark.recipes import callables_by_value
from kreassign.checker.spark.results import path_to
from kreassign.checker.spark.rounds import Rounds
from kreassign.checker.spark.search import SearchSoFar
from kreassign.spec.properties import EVENTUALLY


class StuckStates:
    def __init__(self, ctx: RunContext, search: SearchSoFar, rounds: Rounds):
        self.ctx, self.search, self.rounds = ctx, search, rounds
        self.level_states: list[Any] = []  # every Spark level's states, kept cached (the driver's: rounds)
        self.live_runs: dict[str, list[Any]] = {}  # eventually property -> runs of the states reaching a goal
        self.all_states: Any = None

    @property
    def pending(self) -> bool:
        """Are properties left to classify (their runs cached)?"""
        return bool(self.live_runs)

    def keep(self, states: Any) -> None:
        """Keep a Spark level's states cached for liveness (nothing without liveness)."""
        if self.ctx.liveness:
            self.level_states.append(states)

    def prepare(self) -> None:
        """For every `eventually` property, the states that reach a goal, by a distributed backward
        fixpoint (checker/spark/liveness.py), kept cached as runs until `classify` asks."""
        ctx, rounds = self.ctx, self.rounds
        parts = list(self.level_states)
        if rounds.driver_states or not parts:
            parts.append(rounds.shuffled(ctx.sc.parallelize(rounds.driver_states, ctx.buckets)))
        self.all_states = ctx.sc.union(parts)
        job = ctx.job(self.search.found, "liveness")
        edges = self.all_states.mapPartitionsWithIndex(functools.partial(SL.edges_task, job=job, recipe=ctx.recipe_bc))
        reverse = rounds.shuffled(edges).mapPartitionsWithIndex(
            functools.partial(SL.reverse_task, int64=ctx.int64, most=ctx.options.record_states), preservesPartitioning=True)
        reverse.persist(self.ctx.storage_level())
        try:
            for group in self._same_goals([p.name for p in ctx.properties.values() if p.kind == EVENTUALLY]):
                runs = self._reaching(group[0], reverse)
                for name in group:
                    self.live_runs[name] = runs
        finally:
            quietly(reverse.unpersist)

    def _same_goals(self, names: list[str]) -> list[tuple[str, ...]]:
        """The properties grouped by their goal states, compared exactly in every bucket (one job): each group
        needs one fixpoint (kraft's reassignment_can_finish and _in_sync have the same goals)."""
        if len(names) < 2:
            return [tuple(names)] if names else []
        ctx = self.ctx
        job = {**ctx.job(self.search.found, "liveness"), "properties": names}
        per_bucket = run_job(self.all_states.mapPartitionsWithIndex(
            functools.partial(SL.same_goals_task, job=job, recipe=ctx.recipe_bc)).collect,
            ctx.sc, "liveness: properties with the same goal states", ctx.options.timeout)
        together = {name: set(names) for name in names}  # the names with the same goals in every bucket so far
        for groups in per_bucket:
            for group in groups:
                for name in group:
                    together[name] &= set(group)
        return sorted({tuple(n for n in names if n in together[name]) for name in names},
                      key=lambda g: names.index(g[0]))

    def _reaching(self, name: str, reverse: Any) -> list[Any]:
        """Cached runs of the states from which a goal of `name` is reachable (a BFS backwards from the goals)."""
        ctx, sc = self.ctx, self.ctx.sc
        job = {**ctx.job(self.search.found, "liveness"), "property": name}
        cands = self.all_states.mapPartitionsWithIndex(
            functools.partial(SL.goal_task, job=job, recipe=ctx.recipe_bc), preservesPartitioning=True)
        runs: list[Any] = []
        for step in range(1, 1 << 62):
            inputs = sc.union([*runs, cands])
            if inputs.getNumPartitions() != ctx.buckets:
                raise RuntimeError(f"liveness: {inputs.getNumPartitions()} partitions for {ctx.buckets} buckets")
            counts = sc.accumulator({}, T.Results())
            new = inputs.mapPartitionsWithIndex(
                functools.partial(SL.reach_task, int64=ctx.int64, results=counts, step=step,
                                  most=ctx.options.record_states),
                preservesPartitioning=True)
            new.persist(self.ctx.storage_level())
            runs.append(new)
            what = f"liveness of {name}, step {step}"
            sc.setJobDescription(f"kreassign: {what}")
            run_job(new._jrdd.count, sc, what, ctx.options.timeout)
            if not sum(counts.value.values()):
                return runs
            cands = self.rounds.shuffled(sc.union([new, reverse]).mapPartitionsWithIndex(
                functools.partial(SL.preds_task, int64=ctx.int64, buckets=ctx.buckets, most=ctx.options.record_states)))
        raise AssertionError("unreachable")

    def classify(self, prop: Any, findings: tuple[Any, ...] = (), want_findings: bool = True):
        """(unexpected lasso or None, {finding: lasso}): the stuck states of `prop` classified as
        check/run.py does on a graph (the first of each class in BFS order; premise
        `extra["from"]` first), computed where the states are; the lassos are built on the driver."""
        ctx, sc = self.ctx, self.ctx.sc
        runs = self.live_runs.pop(prop.name)
        try:
            callables = (prop.extra.get("from"), [(f.name, f.signature) for f in findings])
            spec = sc.broadcast(callables_by_value(callables, ctx.model))
            job = ctx.job(self.search.found, "liveness")
            task = functools.partial(SL.classify_task, job=job, recipe=ctx.recipe_bc, spec=spec)
            firsts = run_job(sc.union([*runs, self.all_states]).mapPartitionsWithIndex(task).collect,
                             sc, f"liveness of {prop.name}: classifying the stuck states", ctx.options.timeout)
            quietly(spec.destroy)
        finally:
            if not any(other is runs for other in self.live_runs.values()):  # (a fixpoint properties share)
                for run in runs:
                    quietly(run.unpersist)
        best: dict[str, tuple[int, int]] = {}
        for name, level, key in firsts:
            best[name] = min(best.get(name, (level, key)), (level, key))
        lassos: dict[tuple[int, int], tuple[Path, int | None]] = {}

        def lasso(at: tuple[int, int]) -> tuple[Path, int | None]:
            if at not in lassos:
                lassos[at] = SL.lasso_from(ctx.model, path_to(ctx, self.search, *at))
            return lassos[at]

        unexpected = lasso(best[""]) if "" in best else None
        found = {f.name: lasso(best[f.name]) for f in findings if want_findings and f.name in best}
        return unexpected, found

    def release(self) -> None:
        """Drop what liveness kept cached (every level's states, the runs not classified)."""
        for runs in self.live_runs.values():
            for run in runs:
                quietly(run.unpersist)
        self.live_runs = {}
        for states in self.level_states:
            quietly(states.unpersist)
        self.level_states = []


__all__ = ["StuckStates"]
