"""The resident layout's driver side: start one long-lived task per bucket, then say what each level does.

`ResidentRun(sc, model, options).run()` gives `bfs.explore`'s result, as `SparkRun` does (checker/spark/run.py),
from the same parts: the run's context, the search so far (`SearchSoFar.fold` folds each level's findings),
the paths (results.py). The driver is the coordinator of a barrier stage of `buckets` tasks
(checker/spark/resident/task.py); it runs the stage's job in a thread and talks to the tasks over the
wire (wire.py): per level, one message out and one in per task for the count, the same for the findings.
It holds no key: after the search it asks the tasks for those the counterexamples' paths go through.

A failed task fails the whole barrier stage (Spark cannot retry one task of it): the coordinator then
starts the search again in a new stage, as often as Spark would attempt a task (`attempts`), so a lost
executor or a transient failure costs the work done so far, never the answers; a failure that persists
ends the run with an InfraError naming Spark's. The levels layout loses only the lost executor's work
(its lineage is recomputed): docs/spark.md, "Layouts".
"""

from __future__ import annotations

import contextlib
import functools
import secrets
import threading
import time
from typing import Any

from kreassign.checker.explore.bfs import MAX_STATES, ExploreResult
from kreassign.checker.explore.protocol import Model
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.context import RunContext
from kreassign.checker.spark.errors import quietly
from kreassign.checker.spark.jobs import run_job
from kreassign.checker.spark.options import DEFAULT_OPTIONS, SparkOptions
from kreassign.checker.spark.resident.task import resident_task
from kreassign.checker.spark.resident.wire import Channel, WireError, accept, listen
from kreassign.checker.spark.results import explore_result
from kreassign.checker.spark.rounds import Rounds
from kreassign.checker.spark.run import begin, record_executors, report_progress
from kreassign.checker.spark.search import SearchSoFar

from kreassign.errors import InfraError

#: seconds the tasks have to connect once the stage is submitted (they start together: a barrier stage)
CONNECT_SECONDS = 300.0


class TaskFailed(InfraError):
    """A resident task failed (it said why): the stage is attempted again, as a failed stage is."""


def attempts(sc: Any) -> int:
    """How often Spark attempts a task, and so the resident stage: local[N, F] says F (local mode ignores
    spark.task.maxFailures, and local[N] means once), a cluster spark.task.maxFailures (default 4)."""
    master = sc.master
    if master.startswith("local"):
        inside = master[master.find("[") + 1 : master.rfind("]")] if "[" in master else ""
        parts = inside.split(",")
        return max(1, int(parts[1])) if len(parts) == 2 and parts[1].strip().isdigit() else 1
    raw = (sc.getConf().get("spark.task.maxFailures", "4") or "4").strip()
    return max(1, int(raw)) if raw.isdigit() else 4


class _Stage:
    """The barrier stage's job, run in a thread: `check()` raises its failure once it has failed."""

    def __init__(self, sc: Any, rdd: Any, what: str, timeout: float | None):
        self.sc, self.error, self.done = sc, None, threading.Event()
        self.result: Any = None
        self.group = f"kreassign-resident-{id(self)}"

        def run() -> None:
            try:
                # (a job's group is a property of the thread that submits it: this one)
                sc.setJobGroup(self.group, f"kreassign: {what}", interruptOnCancel=True)
                self.result = run_job(rdd.collect, sc, what, timeout)
            except BaseException as e:  # noqa: BLE001 - handed to the coordinator's thread
                self.error = e
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, name="kreassign-resident-stage", daemon=True)
        self.thread.start()

    def check(self) -> None:
        if self.done.is_set() and self.error is not None:
            raise self.error

    def stop(self, seconds: float = 60.0) -> None:
        if not self.done.is_set():
            quietly(lambda: self.sc.cancelJobGroup(self.group))
        self.thread.join(seconds)


class ResidentRun:
    """One exploration on Spark with resident tasks (see the module docstring)."""

    def __init__(self, sc: Any, model: Model, options: SparkOptions = DEFAULT_OPTIONS, *,
                 level_log: list[dict[str, Any]] | None = None, run_info: dict[str, Any] | None = None):
        self.ctx = RunContext.build(sc, model, options)
        self.search = SearchSoFar(options, truncated=self.ctx.inits_truncated)
        self.level_log = level_log
        self.run_info = run_info if run_info is not None else {}
        self.channels: list[Channel] = []
        self.stage: _Stage | None = None
        self.started = self.last_progress = time.perf_counter()

    def run(self) -> ExploreResult:
        ctx, search = self.ctx, self.search
        self.started = self.last_progress = time.perf_counter()
        empty = begin(ctx, search, self.run_info, "resident")
        if empty is not None:
            return empty
        since = time.time() * 1000
        try:
            done = self._search()
        finally:
            record_executors(ctx, self.run_info, since)
            quietly(ctx.recipe_bc.destroy)
        search = self.search  # (a new one if the search started again)
        stopped = search.stopped or (MAX_STATES if search.truncated else None)
        return explore_result(ctx, search, time.perf_counter() - self.started, search.complete(done), stopped=stopped)

    # -- the stage ------------------------------------------------------------------------------------------

    def _search(self) -> bool:
        """The search in one barrier stage, started again in a new one when a task fails (see the module
        docstring); True iff it ran to the end."""
        tries = attempts(self.ctx.sc)
        for attempt in range(1, tries + 1):
            try:
                return self._search_once()
            except InfraError as e:
                if attempt == tries or not (isinstance(e, TaskFailed) or self._failed_in_stage()):
                    raise
                self.run_info.setdefault("restarts", []).append(str(e)[:500])
                self.search = SearchSoFar(self.ctx.options, truncated=self.ctx.inits_truncated)
        raise AssertionError("unreachable")

    def _failed_in_stage(self) -> bool:
        """Did the stage itself fail (a task, an executor), as opposed to the coordinator?"""
        return self.stage is not None and self.stage.done.is_set() and self.stage.error is not None \
            and not isinstance(self.stage.error, KeyboardInterrupt)

    def _search_once(self) -> bool:
        ctx = self.ctx
        host = ctx.sc.getConf().get("spark.driver.host", "127.0.0.1")
        token = secrets.token_bytes(16)
        server = listen(host)
        seeds: dict[int, list[tuple[bytes, ...]]] = {}
        for b, (_, (_, blob)) in Rounds(ctx, self.search).seed_records():
            seeds.setdefault(b, []).append(blob)
        base = ctx.job(self.search.found, "seed", level=0)
        setup = {"host": host, "port": server.getsockname()[1], "token": token, "buckets": ctx.buckets,
                 "recipe": ctx.recipe_bc, "seeds": seeds,
                 "job": {k: base[k] for k in ("recipe_id", "codec", "buckets", "record_states")}}
        task = functools.partial(resident_task, setup=setup)
        rdd = ctx.sc.parallelize(range(ctx.buckets), ctx.buckets).barrier().mapPartitions(task)
        self.stage = _Stage(ctx.sc, rdd, f"the resident search of {ctx.model_name}", ctx.options.timeout)
        try:
            self._connect(server, token)
            done = self._levels()
            self._resolve_paths()
            self._tell(("end",))
            self.stage.thread.join(CONNECT_SECONDS)
            self.stage.check()
            return done
        except WireError as e:
            raise self._lost(e) from None
        finally:
            for c in self.channels:
                c.close()
            with contextlib.suppress(OSError):
                server.close()
            self.stage.stop()

    def _lost(self, e: WireError) -> BaseException:
        """The error to raise when a task's connection failed: the stage's own failure when it has one."""
        assert self.stage is not None
        self.stage.done.wait(30.0)
        if self.stage.error is not None:
            return self.stage.error
        return InfraError(f"Spark: the resident search lost a task ({e})")

    def _alive(self) -> None:
        assert self.stage is not None
        self.stage.check()
        if self.stage.done.is_set():
            raise InfraError("Spark: the resident search's tasks ended before the search did (engine bug)")

    def _connect(self, server: Any, token: bytes) -> None:
        """Every task's hello, then every task's peers."""
        ctx = self.ctx
        hellos: dict[int, tuple[Any, ...]] = {}
        deadline = time.monotonic() + CONNECT_SECONDS
        while len(hellos) < ctx.buckets:
            self._alive()
            if time.monotonic() > deadline:
                raise InfraError(f"Spark: {len(hellos)} of {ctx.buckets} resident tasks connected in "
                                 f"{CONNECT_SECONDS:g} s")
            try:
                sock, hello = accept(server, token, 1.0)
            except WireError:
                continue
            _, bucket, _attempt, address, executor, pid = hello
            if bucket in hellos:
                hellos[bucket][0].close()
            hellos[bucket] = (Channel(sock, f"resident task {bucket}"), address, executor, pid)
        self.channels = [hellos[b][0] for b in range(ctx.buckets)]
        self.run_info["executors_used"] = len({hellos[b][2] for b in hellos})
        self._tell(("peers", [hellos[b][1] for b in range(ctx.buckets)]))

    def _tell(self, message: Any) -> None:
        for c in self.channels:
            c.send(message)

    def _gather(self, tag: str) -> list[Any]:
        out = []
        for c in self.channels:
            reply = c.recv(alive=self._alive)
            if reply[0] == "failed":
                raise self._failure(reply)
            if reply[0] != tag:
                raise RuntimeError(f"{c.name} answered {reply[0]!r}, not {tag!r} (engine bug)")
            out.append(reply)
        return out

    def _failure(self, first: tuple[Any, ...]) -> TaskFailed:
        """The failure to report: the first task's own error among those the tasks sent, over one that only
        lost a peer (a connection error)."""
        failures = [first]
        for c in self.channels:
            with contextlib.suppress(Exception):
                reply = c.recv(wait=2.0)
                if reply[0] == "failed":
                    failures.append(reply)
        _, bucket, why, _secondary = min(failures, key=lambda f: f[3])
        return TaskFailed(f"Spark: the resident search of {self.ctx.model_name} failed in task {bucket}: {why}")

    # -- the levels ---------------------------------------------------------------------------------------

    def _levels(self) -> bool:
        """Level after level, as SparkRun.search_levels (same limits, same stops); True iff it ran to the end."""
        ctx, search, options = self.ctx, self.search, self.ctx.options
        level = 0
        job = ctx.job(search.found, "seed", level=0, check=True)
        while True:
            level_started = time.perf_counter()
            self._tell(("level", job))
            new = sum(reply[2] for reply in self._gather("deduped"))
            if job["mode"] == "count":
                search.dropped = new > 0
                return False
            if not new:
                return True
            if new >= 1 << 31:
                raise InfraError(f"level {level} has {new:,} states: the Spark engine's discovery keys hold up to "
                                 "2**31 per level")
            keep = None
            if options.max_states is not None and search.states + new > options.max_states:
                keep = options.max_states - search.states
                search.truncated = True
                if not keep:
                    return False
            self._tell(("check", keep, keep is None))
            stats = [reply[2] for reply in self._gather("expanded")]
            search.level_keys.append({})  # (the keys stay with the tasks: `_resolve_paths` asks for those needed)
            stop, done = search.fold(level, new if keep is None else keep, stats)
            self._log(level, new, stats, time.perf_counter() - level_started)
            self._report()
            if stop:
                return done
            watch = options.watch
            reason = watch(search.states) if watch is not None else None
            if reason is not None:
                search.stopped = reason
                return False
            more = options.max_depth is None or level + 1 < options.max_depth
            level += 1
            job = ctx.job(search.found, "expand" if more else "count", level=level)

    def _resolve_paths(self) -> None:
        """The keys on the findings' paths, from the tasks that hold them, level by level towards the start."""
        found, keys = self.search.found, self.search.level_keys
        ends = [*found.violations.values(), *found.examples.values(),
                *((level, key) for level, key, _ in found.edge_violations.values())]
        if found.deadlock is not None:
            ends.append(found.deadlock)
        wanted = {(level - 1, key >> T.K_BITS) for level, key in ends if level > 0}
        while wanted:
            self._tell(("resolve", sorted(wanted)))
            answers: dict[tuple[int, int], int] = {}
            for reply in self._gather("resolved"):
                answers.update(reply[1])
            missing = wanted - set(answers)
            if missing:
                raise RuntimeError(f"no task holds the key of (level, rank) {min(missing)} (engine bug)")
            for (level, rank), key in answers.items():
                keys[level][rank] = key
            wanted = {(level - 1, key >> T.K_BITS) for (level, _), key in answers.items()
                      if level > 0 and (key >> T.K_BITS) not in keys[level - 1]}

    def _log(self, level: int, new: int, stats: list[dict[str, Any]], seconds: float) -> None:
        """The level in `level_log`, as the levels layout logs it (`new`: the level's new states, all of them
        where max_states fell in it)."""
        if self.level_log is None:
            return
        phases: dict[str, float] = {}
        for s in stats:
            for name, t in s.get("phases", {}).items():
                phases[name] = max(phases.get(name, 0.0), t)
        self.level_log.append({
            "level": level, "where": "resident", "new_states": new,
            "edges": sum(s.get("transitions", 0) for s in stats), "job_seconds": seconds,
            "shuffled_bytes": sum(s.get("shuffled", 0) for s in stats), "visited": self.search.states,
            "seconds": seconds, "phases": phases})

    def _report(self) -> None:
        self.last_progress = report_progress(self.ctx.options, self.search, self.started, self.last_progress)


__all__ = ["ResidentRun"]
