"""The Spark engine: the embedded BFS, distributed on Apache Spark (PySpark RDDs), same answers.

`spark_explorer(options)` returns a `SparkExplorer`, a callable with `bfs.explore`'s signature and
result, so `check_model(..., explorer=spark_explorer())` checks a model on Spark and does the rest
(liveness, minimization, trace files) exactly as for the embedded engine; `explore_spark(model,
options)` is one search. One `SparkOptions` value (checker/spark/options.py) says how either runs.
docs/spark.md explains the design and its costs; in short:

- level-synchronous BFS: the states are hash-partitioned into buckets by identity; one
  Spark job per level runs one task per bucket, which deduplicates the candidates sent to
  its bucket against its visited runs (cached with the bucket, co-partitioned, never
  shuffled), checks the new states, expands them and sends each successor to the bucket
  that owns it (one shuffle per level, of the candidates only); every RDD keeps its lineage,
  so Spark recomputes what a lost executor held; the first, small levels run the same task
  code on the driver, where they cost less than a Spark job (rounds.py, run.py);
- states travel as compact bytes (codec.py), never pickled; the model travels as a recipe
  rebuilt on the executors, or pickled when it is not one of ours (recipes.py);
- discovery keys (tasks.py) make the state order of every level exactly the embedded engine's:
  counts, verdicts and counterexamples do not depend on the number of buckets or on the order
  tasks run in, and paths are rebuilt on the driver from the keys (search.py, results.py), so
  they are shortest paths with the model's own action labels, in the embedded engine's Path shape;
- tasks are pure functions of their input, and their findings reach the driver through an
  accumulator merged by (level, bucket), which Spark fills from successful attempts only:
  a retried task changes nothing; each level can be checkpointed (`checkpoint_dir`) and an
  interrupted run resumed from its last complete level (`resume_dir`; checkpoint.py);
- the session honours the user's configuration (explicit master/conf, then spark-submit's
  and spark-defaults.conf, then kreassign's defaults: session.py); every Spark failure is an
  InfraError (exit 3) naming its Java cause (errors.py, jobs.py); masters that do not answer or
  grant nothing fail fast.

The driver keeps 8 bytes per state (the discovery keys, which are the BFS tree). Liveness
(`liveness=True`, what `spark_explorer` asks for) runs on the executors (stuck.py, liveness.py);
`keep_graph=True` still brings the whole graph to the driver.

Starting the JVM and the session is here rather than in session.py because it sets the two
environment variables Spark's launcher reads (SPARK_SUBMIT_OPTS, PYSPARK_PYTHON), the only writes
to the process environment tests/unit/test_layout.py allows checker/, in this file.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.checker.explore.bfs import ExploreResult
from kreassign.checker.explore.protocol import Model, checked_properties
from kreassign.checker.spark.context import RunContext
from kreassign.checker.spark.errors import describe_error, first_line, quietly
from kreassign.checker.spark.layout import layout_for
from kreassign.checker.spark.options import DEFAULT_OPTIONS, SparkOptions
from kreassign.checker.spark.resident.coordinator import ResidentRun
from kreassign.checker.spark.run import SparkRun
from kreassign.checker.spark.session import (
    DEFAULT_MASTER,
    DRIVER_DEFAULTS,
    LAUNCH_KEYS,
    SHELL_SETTINGS,
    check_reachable,
    defaults_file_keys,
    log4j2_file,
    session_settings,
    wait_for_executors,
)
from kreassign.spec.properties import EVENTUALLY

from kreassign.errors import InfraError
from kreassign.interrupts import defer_inside, interrupt_pending

# -- the session ---------------------------------------------------------------------------------


def launch_settings(conf: dict[str, str] | None = None) -> dict[str, str]:
    """What a JVM kreassign starts must be given on its command line, not later (Spark applies nothing of it
    once the JVM runs): the caller's driver settings among LAUNCH_KEYS (`--conf`), and kreassign's
    DRIVER_DEFAULTS for those the user set nowhere Spark's launcher reads (spark-defaults.conf,
    SPARK_DRIVER_MEMORY, PYSPARK_SUBMIT_ARGS). In local mode that JVM is the executor too: Spark's default
    heap of 1g runs out on the cached levels and liveness's reverse graph of a few million states, and its
    optimizing JIT compiler spends more CPU than it saves on a run of minutes (bench/spark_packed.py)."""
    conf = conf or {}
    settings = {k: conf[k] for k in LAUNCH_KEYS if conf.get(k)}
    mine = defaults_file_keys()
    submit_args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    elsewhere = {"spark.driver.memory": bool(os.environ.get("SPARK_DRIVER_MEMORY")) or "--driver-memory" in submit_args,
                 "spark.driver.extraJavaOptions": "--driver-java-options" in submit_args}
    for key, value in DRIVER_DEFAULTS.items():
        if key not in settings and key not in mine and not elsewhere[key]:
            settings[key] = value
    return settings


def start_gateway(jvm_stderr: str | None = None, conf: dict[str, str] | None = None) -> None:
    """The JVM: spark-submit's (it set PYSPARK_GATEWAY_PORT), or a new one, which reads
    spark-defaults.conf and gets `launch_settings(conf)`. kreassign's quiet log4j2 file goes on its
    command line (SPARK_SUBMIT_OPTS, added to the user's) unless the user has a log4j2 configuration of
    their own. `jvm_stderr`: a file the new JVM's stderr is appended to instead of this process's
    (`--json` to a stdout stderr shares)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is None and not os.environ.get("PYSPARK_GATEWAY_PORT"):
        conf_dir = os.environ.get("SPARK_CONF_DIR") or os.path.join(os.environ.get("SPARK_HOME", "/nonexistent"), "conf")
        opts = os.environ.get("SPARK_SUBMIT_OPTS", "")
        if "log4j2.configurationFile" not in opts and not os.path.exists(os.path.join(conf_dir, "log4j2.properties")):
            os.environ["SPARK_SUBMIT_OPTS"] = f"{opts} -Dlog4j2.configurationFile=file:{log4j2_file()}".strip()
    before = _children()
    try:
        if SparkContext._gateway is None and not os.environ.get("PYSPARK_GATEWAY_PORT"):
            launch = SparkConf(loadDefaults=False).setAll(list(launch_settings(conf).items()))
            if jvm_stderr is not None:
                with open(jvm_stderr, "ab") as log:
                    gateway = launch_gateway(launch, popen_kwargs={"stderr": log})
            else:
                gateway = launch_gateway(launch)
            atexit.register(_end_jvm, gateway.proc)
            SparkContext._ensure_initialized(gateway=gateway)
        SparkContext._ensure_initialized()  # (PySpark has no public call that starts the JVM alone)
    except KeyboardInterrupt:  # PySpark forgets the JVM it was starting, which would run on until it had started
        _end_started(_children() - before)
        raise
    except Exception as e:  # noqa: BLE001 - Java missing, JAVA_HOME wrong, a broken installation
        raise InfraError(f"Spark: cannot start the JVM ({type(e).__name__}: {first_line(e)})") from None


def _end_jvm(proc: Any, seconds: float = 15.0) -> None:
    """At exit: the JVM this process started ends before it does. The JVM ends itself when its stdin closes
    (PySpark's launcher), but only once it notices, a second or two after this process is gone: stop the
    session, close it and wait, then kill the JVM if it does not end in `seconds`."""
    import subprocess

    if proc.poll() is not None:
        return
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:  # stopped first: its accumulator server ends before the JVM closes the connection
        quietly(active.stop)
    with contextlib.suppress(OSError):
        proc.stdin.close()
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        _end_started({proc.pid})


def _children(parent: int | None = None) -> set[int]:
    """The processes whose parent is `parent` (default: this one), from /proc (empty where there is none)."""
    parent = os.getpid() if parent is None else parent
    out = set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == parent:
            out.add(int(name))
    return out


def _end_started(pids: set[int]) -> None:
    """Kill the launcher processes in `pids` (spark-submit's scripts, the JVM they become) with their own children,
    and reap them, so that nothing of an interrupted start is left behind or writes to the terminal afterwards."""
    import signal

    tree, todo = [], list(pids)
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += _children(pid)
    for pid in tree:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)


def resolve_conf(master: str | None = None, conf: dict[str, str] | None = None,
                 partitions: int | None = None) -> tuple[str, dict[str, str]]:
    """(master, settings to apply) in Spark's own order of precedence: what the caller passes
    explicitly (`kreassign check --master/--conf`, `SparkOptions(master=, conf=)`) wins over
    spark-submit's --master/--conf and spark-defaults.conf, which win over kreassign's defaults.
    Starts the JVM (that is where spark-submit's and spark-defaults' settings live)."""
    from pyspark import SparkConf

    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # (set by spark-submit, not by PySpark's launcher)
    start_gateway(conf=conf)
    user = SparkConf()  # now loaded from the JVM: spark-submit's arguments and spark-defaults.conf

    def user_set(key: str) -> bool:
        if key in SHELL_SETTINGS and not submitted:  # PySpark's own launcher sets it (as for a shell)
            return key in defaults_file_keys()
        return user.contains(key)

    conf = dict(conf or {})
    master = master or conf.pop("spark.master", None) or user.get("spark.master", None) or DEFAULT_MASTER
    settings = {k: v for k, v in session_settings(master, partitions).items() if not user_set(k)}
    settings.update(conf)
    return master, settings


def spark_session(master: str | None = None, *, partitions: int | None = None,
                  conf: dict[str, str] | None = None, app_name: str = "kreassign",
                  timeout: float | None = None) -> Any:
    """The active SparkSession, or a new one on `master` (see `resolve_conf` for who wins).

    Fails fast (InfraError) when a standalone master does not answer, or when no executor
    registers within `timeout` seconds (`spark.kreassign.executorTimeout`, default
    EXECUTOR_TIMEOUT): a cluster without free resources would otherwise hang silently.
    In local mode the executors' Python (PYSPARK_PYTHON) defaults to this interpreter.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    master, settings = resolve_conf(master, conf, partitions)
    if master.startswith("spark://"):
        check_reachable(master, min(10.0, timeout or 10.0))
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        # the context first, with the builder's settings (getOrCreate then takes it as it is): the SIGINT
        # handler it installs, which calls the JVM from inside the signal handler, is replaced at once by
        # kreassign's (kreassign/interrupts.py), before the session's own calls to the JVM
        SparkContext.getOrCreate(SparkConf().setMaster(master).setAppName(app_name).setAll(list(settings.items())))
        defer_inside("py4j")
        spark = builder.getOrCreate()
    except Exception as e:  # noqa: BLE001 - a bad master URL, a setting Spark rejects, ...
        raise InfraError(f"Spark: cannot start a session on {master} ({describe_error(e)})") from None
    spark.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        wait_for_executors(spark.sparkContext, timeout)
    return spark


def spark_context(options: SparkOptions = DEFAULT_OPTIONS) -> Any:
    """The active SparkContext (a test's, a spark-submit's), or a new quiet session's on `options.master`."""
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        return active
    if options.jvm_stderr is not None:
        start_gateway(options.jvm_stderr, dict(options.conf))
    return spark_session(options.master, conf=dict(options.conf), timeout=options.timeout).sparkContext


# -- exploring -----------------------------------------------------------------------------------


@dataclass(eq=False)  # (an explorer is compared by identity, as the function it replaces was)
class SparkExplorer:
    """An explorer with `bfs.explore`'s signature that runs on Spark (`kreassign check --engine spark`).

    The session starts on the first call. After each call `runs[-1]` says where it ran
    (`cluster_info` plus the buckets and the executors that ran its tasks)."""

    options: SparkOptions = DEFAULT_OPTIONS
    engine: str = field(default="spark", init=False)
    runs: list[dict[str, Any]] = field(default_factory=list, init=False)

    def __call__(self, model: Model, **search: Any) -> ExploreResult:
        defer_inside("py4j")  # a Ctrl-C never lands inside a call to the JVM (kreassign/interrupts.py)
        sc = spark_context(self.options)
        # a SparkContext installs its own SIGINT handler, which calls the JVM from inside the signal handler
        # (two tracebacks when a job is running): ours again (spark_session took it back already, not a context
        # spark-submit or a test started), and Ctrl-C cancels the jobs from a thread of its own
        defer_inside("py4j", on_interrupt=lambda: _cancel_jobs(sc))
        info: dict[str, Any] = {}
        try:
            options = self.options.for_search(**search)
            # liveness needs no graph on the driver: the engine checks it where the states are,
            # except fair liveness (spec/fairness.py: strongly connected components), which keeps it
            live = options.keep_graph and not any(
                p.kind == EVENTUALLY and p.extra.get("fairness") is not None for p in checked_properties(model))
            options = replace(options, keep_graph=options.keep_graph and not live, liveness=live)
            return explore_spark(model, options, sc=sc, run_info=info)
        finally:
            self.runs.append(info)


def _cancel_jobs(sc: Any) -> None:
    """After a Ctrl-C: cancel Spark's jobs until the driver has taken the interrupt (a job submitted just after a
    cancellation would otherwise run to its end; checker/spark/jobs.py `run_job` raises it)."""
    while interrupt_pending():
        quietly(sc.cancelAllJobs)
        time.sleep(0.2)


def spark_explorer(options: SparkOptions = DEFAULT_OPTIONS) -> SparkExplorer:
    """An explorer running on Spark as `options` say (master and conf win over spark-submit's and
    spark-defaults' settings, which win over kreassign's defaults; checkpoint_dir keeps every level;
    resume_dir continues the runs checkpointed there and keeps checkpointing into it)."""
    return SparkExplorer(options)


def explore_spark(model: Model, options: SparkOptions = DEFAULT_OPTIONS, *, sc: Any = None,
                  level_log: list[dict[str, Any]] | None = None,
                  run_info: dict[str, Any] | None = None) -> ExploreResult:
    """`bfs.explore` on Spark: the same counts, verdicts and (shortest) counterexamples.

    `sc`: the SparkContext (None: the active one, else a new session as `options` say). `level_log`,
    when given, receives one dict per level (where it ran, new_states, edges expanded, job_seconds,
    seconds since the previous level ended): the per-level costs bench/spark_scaling.py reports.
    `options.warmup=False` runs every level on Spark (by default the first, small levels run on the
    driver, see `SparkRun.search_levels`).

    Differences, all documented in docs/spark.md: with `max_states` the same states are kept
    but the transitions counted are those of whole levels; with `stop_on_violation` the
    search stops at the end of the level of the first finding.
    """
    if sc is None:
        sc = spark_context(options)
    if layout_for(sc, model, options, RunContext.buckets_for(sc, options)) == "resident":
        return ResidentRun(sc, model, options, level_log=level_log, run_info=run_info).run()
    return SparkRun(sc, model, options, level_log=level_log, run_info=run_info).run()


__all__ = [
    "SparkExplorer",
    "explore_spark",
    "launch_settings",
    "resolve_conf",
    "spark_context",
    "spark_explorer",
    "spark_session",
    "start_gateway",
]
