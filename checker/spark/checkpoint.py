"""Checkpointing a Spark run: each level committed when it ends, a run resumed from its last committed level.

A level is committed by writing its states (and, with the graph, its edges) and then its
meta.json, the search so far (checker/spark/checkpoint_files.py has the layout); a level without
meta.json does not count and is rewritten. Resuming reads every committed level back: the
discovery keys to the driver, the states into their buckets (cached), and expands the last level
again to get the next level's candidates, checked to rebuild exactly the saved states.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
from kreassign.checker.spark import checkpoint_files as files
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.checkpoint_files import CheckpointError
from kreassign.checker.spark.context import RunContext
from kreassign.checker.spark.jobs import run_job
from kreassign.checker.spark.rounds import DriverLevel, Rounds, finished_level
from kreassign.checker.spark.search import SearchSoFar
from kreassign.checker.spark.stuck import StuckStates


class Checkpoints:
    """The checkpoint directory of one run (`<checkpoint_root>/<model slug>-<hash>`)."""

    def __init__(self, ctx: RunContext, search: SearchSoFar, rounds: Rounds, stuck: StuckStates):
        self.ctx, self.search, self.rounds, self.stuck = ctx, search, rounds, stuck
        given = ctx.options.checkpoint_root
        root = files.absolute_uri(given)
        self.fs = files.HadoopFS(ctx.sc, root)
        if ctx.options.resume and not self.fs.exists(root):
            raise FileNotFoundError(f"--resume {given}: no such checkpoint directory")
        self.run_dir = f"{root}/{files.run_name(ctx.model, ctx.codec.name)}"

    def start_afresh(self) -> None:
        """Remove what an earlier run left (every level is written again)."""
        files.remove_uncommitted(self.fs, self.run_dir, 0)

    def meta(self, level: int, done: bool) -> dict[str, Any]:
        ctx, opts = self.ctx, self.ctx.options
        return {
            "level": level, "done": done, **self.search.counts(), "keep_graph": opts.keep_graph,
            "codec": ctx.codec.name, "check_deadlock": opts.check_deadlock,
            "model": {"class": f"{type(ctx.model).__module__}.{type(ctx.model).__qualname__}",
                      "describe": json.loads(json.dumps(ctx.model.describe(), default=str))},
        }

    def commit(self, level: int, out: Any, done: bool) -> None:
        """Write the level's states (and edges), then its meta.json; a level without meta does not count."""
        ctx, search = self.ctx, self.search
        if search.truncated:
            return
        if len(search.level_keys) == level:  # an empty level: the search ended with the previous one
            if done and level > 0:
                files.write_meta(self.fs, self.run_dir, level - 1, self.meta(level - 1, True))
            return
        directory = files.level_dir(self.run_dir, level)
        self.fs.delete(directory)
        if isinstance(out, DriverLevel):
            text = [T.saved_line(tag, level, value) for tag, value in out.saved]
            lines = ctx.sc.parallelize(text, max(1, min(ctx.buckets, len(text))))
        else:  # the states from where they are cached; the edges (with the graph) are on the driver
            lines = out.states.mapPartitions(functools.partial(T.saved_states, level=level))
            if out.edges:
                edges = [T.saved_line(T.EDGES, level, value) for value in out.edges]
                lines = lines.union(ctx.sc.parallelize(edges, max(1, min(ctx.buckets, len(edges)))))
        run_job(lambda: lines.saveAsTextFile(f"{directory}/data"), ctx.sc, f"checkpoint of level {level}",
                ctx.options.timeout)
        files.write_meta(self.fs, self.run_dir, level, self.meta(level, done))

    def resume(self) -> tuple[int, Any, bool, bool] | None:
        """The last committed level read back: (level, its output, stop, done), or None (nothing saved)."""
        ctx, search, opts = self.ctx, self.search, self.ctx.options
        levels = files.committed_levels(self.fs, self.run_dir)
        if not levels:
            return None
        last = levels[-1]
        meta = files.read_meta(self.fs, self.run_dir, last)
        if meta["codec"] != ctx.codec.name:
            raise CheckpointError(f"{self.run_dir}: written with the {meta['codec']} codec, this run uses "
                                  f"{ctx.codec.name}")
        if opts.keep_graph and not meta["keep_graph"]:
            raise CheckpointError(f"{self.run_dir}: the checkpointed run kept no state graph, this one needs it "
                                  "(liveness): resume with --no-liveness or start afresh")
        if opts.check_deadlock and not meta["check_deadlock"]:
            raise CheckpointError(f"{self.run_dir}: the checkpointed run did not look for deadlocks")
        files.remove_uncommitted(self.fs, self.run_dir, last + 1)
        search.restore(meta)
        paths = ",".join(f"{files.level_dir(self.run_dir, n)}/data" for n in levels)
        saved = ctx.sc.textFile(paths).map(T.read_saved)
        self._read_levels(saved, levels)
        if [len(k) for k in search.level_keys] != meta["level_sizes"]:
            raise CheckpointError(f"{self.run_dir}: the level files do not match meta.json (sizes differ)")
        history = self.rounds.shuffled(saved.filter(lambda r: r[0].startswith(T.STATES + ":")).flatMap(
            functools.partial(T.rebucket, buckets=ctx.buckets, int64=ctx.int64)))
        history.persist(self.ctx.storage_level())
        self.stuck.keep(history)  # (every saved level's states, for liveness)
        if meta["done"]:
            return last, finished_level(), True, True
        # the last level's expansion again (its counts are in meta.json): the candidates of the next level
        self.rounds.runs = [self.rounds.visited_run(history)]  # every saved level's states: a run per bucket
        job = ctx.job(search.found, "seed", level=last, seed_level=last, check=False, keep_graph=False,
                      keep_states=False, save_states=False)
        out = self.rounds.spark_level(history, job, add_run=False)
        again = np.sort(np.concatenate([np.frombuffer(v["keys"], dtype=np.int64)
                                        for tag, v in self.rounds.collect(out) if tag == T.STATS]))
        if not np.array_equal(again, search.level_keys[last]):
            raise CheckpointError(f"{self.run_dir}: level {last} does not rebuild to the same states")
        return last, out, False, False

    def _read_levels(self, saved: Any, levels: list[int]) -> None:
        """The saved levels' discovery keys (and, with the graph, their blobs) into the search."""
        ctx, search, keep_graph = self.ctx, self.search, self.ctx.options.keep_graph
        wanted = (lambda r: True) if keep_graph else (lambda r: r[0].startswith(T.STATES + ":"))
        blobs = saved.filter(wanted).map(functools.partial(T.saved_blob, keys_only=not keep_graph))
        # (toLocalIterator: not capped by spark.driver.maxResultSize)
        rows = run_job(blobs.toLocalIterator, ctx.sc, "reading the checkpoint", ctx.options.timeout)
        per_level: dict[int, list[np.ndarray]] = {n: [] for n in levels}
        search.graph_states = [[] for _ in levels]
        search.graph_edges = [[] for _ in levels]
        for tag, level, blob in rows:
            if tag == T.STATES:
                per_level[level].append(np.frombuffer(blob[0], dtype=np.int64))
                if keep_graph:
                    search.graph_states[level].append(blob)
            else:
                search.graph_edges[level].append(blob)
        search.level_keys = [np.sort(np.concatenate(per_level[n])) if per_level[n] else T.EMPTY_I64
                             for n in levels]


__all__ = ["CheckpointError", "Checkpoints"]
