"""The Spark engine: the embedded BFS, distributed on Apache Spark (PySpark RDDs), same answers.

`spark_explorer(master=...)` returns a callable with `bfs.explore`'s signature and result,
so `check_model(..., explorer=spark_explorer())` checks a model on Spark and does the rest
(liveness on the returned graph, minimization, trace files) exactly as for the embedded
engine. docs/spark.md explains the design and its costs; in short:

- level-synchronous BFS: the states are hash-partitioned into buckets by identity; one
  Spark job per level runs one task per bucket, which deduplicates the candidates sent to
  its bucket against its visited runs (cached with the bucket, co-partitioned, never
  shuffled), checks the new states, expands them and sends each successor to the bucket
  that owns it (one shuffle per level, of the candidates only); every RDD keeps its lineage,
  so Spark recomputes what a lost executor held; the first, small levels run the same task
  code on the driver, where they cost less than a Spark job;
- states travel as compact bytes (checker/spark/codec.py), never pickled;
- discovery keys (checker/spark/tasks.py) make the state order of every level exactly the
  embedded engine's: counts, verdicts and counterexamples do not depend on the number of
  buckets or on the order tasks run in, and paths are rebuilt on the driver from the keys
  (the k-th successor of the parent, recursively), so they are shortest paths with the
  model's own action labels, in the same Path shape as the embedded engine's;
- tasks are pure functions of their input, and their findings reach the driver through an
  accumulator merged by (level, bucket), which Spark fills from successful attempts only:
  a retried task changes nothing; each level can be checkpointed (checkpoint_dir) and an
  interrupted run resumed from its last complete level (resume_dir).

- the session honours the user's configuration (explicit master/conf, then spark-submit's
  and spark-defaults.conf, then kreassign's defaults); every Spark failure is an InfraError
  (exit 3) naming its Java cause; masters that do not answer or grant nothing fail fast.

The driver keeps 8 bytes per state (the discovery keys, which are the BFS tree). Liveness
(`liveness=True`, what `spark_explorer` asks for) runs on the executors
(checker/spark/liveness.py); `keep_graph=True` still brings the whole graph to the driver.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION

from kreassign.checker.spark import checkpoint as ckpt
from kreassign.checker.spark import liveness as SL
from kreassign.checker.spark import tasks as T
from kreassign.checker.explore.bfs import ExploreResult, Path, StateGraph, Violation
from kreassign.checker.explore.protocol import Model
from kreassign.checker.spark.codec import CodecError, check_codec, codec_for
from kreassign.errors import InfraError, UsageError

DEFAULT_MASTER = "local[*]"  # when neither the caller nor spark-submit / spark-defaults.conf names one
#: seconds to wait for a first executor on a cluster (spark.kreassign.executorTimeout, --spark-timeout)
EXECUTOR_TIMEOUT = 120.0
PROGRESS_INTERVAL = 1.0  # seconds between progress calls (checked after each level)
#: the first levels run on the driver while each takes less than this (a Spark job costs 0.1-0.3 s)
DRIVER_LEVEL_SECONDS = 0.02

#: Spark's own logging, quietened: errors only, on stderr (the JVM still prints one line about
#: jdk.incubator.vector, which no configuration removes)
LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
# a failed task attempt is retried; one that fails for good reaches the user as an exception
# with its Python traceback (spark_engine._run_job), so these loggers would only repeat it
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
"""

Explorer = Callable[..., ExploreResult]


# -- the session ---------------------------------------------------------------------------------


def log4j2_file() -> str:
    """A quiet log4j2 configuration (written once per process to the temp directory)."""
    path = os.path.join(tempfile.gettempdir(), f"kreassign-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}.properties")
    try:
        with open(path) as f:
            if f.read() == LOG4J2:
                return path
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".kreassign-log4j2-", dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as f:
        f.write(LOG4J2)
    os.replace(tmp, path)
    return path


def session_settings(master: str, partitions: int | None = None) -> dict[str, str]:
    """kreassign's defaults (docs/spark.md): UI and console progress off, Python workers reused,
    few shuffle partitions locally, retries; the user's own configuration wins over each of them."""
    local = master.startswith("local")
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.python.worker.reuse": "true",
        "spark.sql.shuffle.partitions": str(partitions or (4 if local else 200)),
        "spark.task.maxFailures": "4",  # clusters; local mode retries only with local[N,F]
    }
    if local:  # the shuffles hold packed ints and digests, which lz4 does not shrink: no network to save
        settings["spark.shuffle.compress"] = "false"
        settings["spark.driver.host"] = settings["spark.driver.bindAddress"] = "127.0.0.1"
    return settings


def _start_gateway() -> None:
    """The JVM: spark-submit's (it set PYSPARK_GATEWAY_PORT), or a new one, which reads
    spark-defaults.conf. kreassign's quiet log4j2 file goes on its command line (SPARK_SUBMIT_OPTS,
    added to the user's) unless the user has a log4j2 configuration of their own."""
    from pyspark import SparkContext

    if SparkContext._gateway is None and not os.environ.get("PYSPARK_GATEWAY_PORT"):
        conf_dir = os.environ.get("SPARK_CONF_DIR") or os.path.join(os.environ.get("SPARK_HOME", "/nonexistent"), "conf")
        opts = os.environ.get("SPARK_SUBMIT_OPTS", "")
        if "log4j2.configurationFile" not in opts and not os.path.exists(os.path.join(conf_dir, "log4j2.properties")):
            os.environ["SPARK_SUBMIT_OPTS"] = f"{opts} -Dlog4j2.configurationFile=file:{log4j2_file()}".strip()
    try:
        SparkContext._ensure_initialized()  # (PySpark has no public call that starts the JVM alone)
    except Exception as e:  # noqa: BLE001 - Java missing, JAVA_HOME wrong, a broken installation
        raise InfraError(f"Spark: cannot start the JVM ({type(e).__name__}: {first_line(e)})") from None


#: settings PySpark's launcher gives every session it starts (as for an interactive shell)
SHELL_SETTINGS = frozenset({"spark.ui.showConsoleProgress"})


def _defaults_file_keys() -> set[str]:
    """The keys of the user's spark-defaults.conf ($SPARK_CONF_DIR, else $SPARK_HOME/conf)."""
    from pyspark.find_spark_home import _find_spark_home

    conf_dir = os.environ.get("SPARK_CONF_DIR") or os.path.join(_find_spark_home(), "conf")
    try:
        with open(os.path.join(conf_dir, "spark-defaults.conf")) as f:
            return {line.split()[0] for line in f if line.strip() and not line.lstrip().startswith("#")}
    except OSError:
        return set()


def resolve_conf(master: str | None = None, conf: dict[str, str] | None = None,
                 partitions: int | None = None) -> tuple[str, dict[str, str]]:
    """(master, settings to apply) in Spark's own order of precedence: what the caller passes
    explicitly (`kreassign check --master/--conf`, `spark_explorer(master=, conf=)`) wins over
    spark-submit's --master/--conf and spark-defaults.conf, which win over kreassign's defaults.
    Starts the JVM (that is where spark-submit's and spark-defaults' settings live)."""
    from pyspark import SparkConf

    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))  # (set by spark-submit, not by PySpark's launcher)
    _start_gateway()
    user = SparkConf()  # now loaded from the JVM: spark-submit's arguments and spark-defaults.conf

    def user_set(key: str) -> bool:
        if key in SHELL_SETTINGS and not submitted:  # PySpark's own launcher sets it (as for a shell)
            return key in _defaults_file_keys()
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
        spark = builder.getOrCreate()
    except Exception as e:  # noqa: BLE001 - a bad master URL, a setting Spark rejects, ...
        raise InfraError(f"Spark: cannot start a session on {master} ({describe_error(e)})") from None
    spark.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        wait_for_executors(spark.sparkContext, timeout)
    return spark


def check_reachable(master: str, seconds: float) -> None:
    """A standalone master answers on its port (else Spark retries for about a minute, then gives up)."""
    import socket

    hosts = master[len("spark://"):].split(",")
    errors = []
    for host_port in hosts:
        host, _, port = host_port.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=seconds).close()
            return
        except (OSError, ValueError) as e:
            errors.append(f"{host_port}: {e}")
    raise InfraError(f"Spark master {master} is unreachable ({'; '.join(errors)})")


def executors(sc: Any) -> int:
    """Executors registered now (local mode: 1, the driver's own)."""
    infos = sc._jsc.sc().statusTracker().getExecutorInfos()
    return len(infos) if sc.master.startswith("local") else len(infos) - 1  # (the driver is listed too)


def executor_timeout(sc: Any, timeout: float | None = None) -> float:
    if timeout is not None:
        return float(timeout)
    return float(sc.getConf().get("spark.kreassign.executorTimeout", str(EXECUTOR_TIMEOUT)))


def wait_for_executors(sc: Any, timeout: float | None = None) -> None:
    """Wait until an executor registers; stop the session and raise InfraError after `timeout` s."""
    limit = executor_timeout(sc, timeout)
    deadline = time.monotonic() + limit
    conf = sc.getConf()
    asked = ", ".join(f"{k}={conf.get(k)}" for k in ("spark.executor.cores", "spark.executor.memory",
                                                     "spark.cores.max", "spark.executor.instances") if conf.contains(k))
    asked = f" ({asked})" if asked else ""
    while executors(sc) == 0:
        if sc._jsc.sc().isStopped():
            raise InfraError(f"Spark: no executor registered with {sc.master}: the session stopped (the master "
                             f"rejected the application{asked}, or became unreachable)")
        if time.monotonic() > deadline:
            _quietly(sc.stop)
            raise InfraError(f"Spark: no executor registered with {sc.master} within {limit:g} s: the cluster "
                             f"has no free resources for this application{asked}; free some, ask for less, "
                             "or wait longer (--spark-timeout, spark.kreassign.executorTimeout)")
        time.sleep(0.2)


def cluster_info(sc: Any) -> dict[str, Any]:
    """Where a run ran: the master, the application, the executors registered now."""
    return {"master": sc.master, "app_id": sc.applicationId, "executors_registered": executors(sc),
            "default_parallelism": sc.defaultParallelism}


def spark_conf(pairs: list[str]) -> dict[str, str]:
    """`--conf KEY=VALUE` flags as a dict (UsageError naming the bad one)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair!r}: expected KEY=VALUE, e.g. spark.executor.memory=4g")
        out[key.strip()] = value
    return out


def spark_context(master: str | None = None, conf: dict[str, str] | None = None,
                  timeout: float | None = None) -> Any:
    """The active SparkContext (a test's, a spark-submit's), or a new quiet session's."""
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        return active
    return spark_session(master, conf=conf, timeout=timeout).sparkContext


def spark_explorer(master: str | None = None, checkpoint_dir: str | None = None, resume_dir: str | None = None,
                   *, partitions: int | None = None, conf: dict[str, str] | None = None,
                   timeout: float | None = None) -> Explorer:
    """An explorer with `bfs.explore`'s signature that runs on Spark (`kreassign check --engine spark`).

    `master` and `conf` win over spark-submit's and spark-defaults' settings, which win over
    kreassign's defaults (None: the user's, else local[*]). `checkpoint_dir` keeps every level;
    `resume_dir` continues the runs checkpointed there (and keeps checkpointing into it). The
    session starts on the first call. After each call `explorer.runs` holds where it ran
    (`cluster_info` plus the buckets and the executors that ran its tasks).
    """
    if checkpoint_dir and resume_dir and ckpt.absolute_uri(checkpoint_dir) != ckpt.absolute_uri(resume_dir):
        raise ValueError("--resume continues checkpointing into its own directory: drop --checkpoint or use the same one")

    def explorer(model: Model, **options: Any) -> ExploreResult:
        sc = spark_context(master, conf, timeout)
        info: dict[str, Any] = {}
        try:
            # liveness needs no graph on the driver: the engine checks it where the states are,
            # except fair liveness (spec/fairness.py: strongly connected components), which keeps it
            live = options.get("keep_graph", False) and not any(
                p.kind == EVENTUALLY and p.extra.get("fairness") is not None for p in model.properties())
            if live:
                options["keep_graph"] = False
            return explore_spark(model, sc=sc, partitions=partitions, checkpoint_dir=checkpoint_dir or resume_dir,
                                 resume=resume_dir is not None, run_info=info, timeout=timeout, liveness=live,
                                 **options)
        finally:
            explorer.runs.append(info)  # type: ignore[attr-defined]

    explorer.engine = "spark"  # type: ignore[attr-defined]
    explorer.runs = []  # type: ignore[attr-defined]
    return explorer


# -- shipping the model to the executors ----------------------------------------------------------


def _patched(model: Any) -> bool:
    """Does the instance override a method (e.g. `model.properties = lambda: ...`)?"""
    cls = type(model)
    return any(callable(v) and hasattr(cls, k) for k, v in getattr(model, "__dict__", {}).items())


def _plain_json(data: Any) -> Any:
    """JSON data as it reads back (tuples become lists): a recipe is plain data."""
    return json.loads(json.dumps(data))


def _rebuildable_recipe(model: Any) -> dict[str, Any] | None:
    """The recipe that rebuilds a known model from its profile and bounds (no pickled objects)."""
    from kreassign.checker.models.quota import QuotaModel
    from kreassign.checker.models.reassign import ReassignmentModel
    from kreassign.checker.models.symmetry import SymmetryReduced

    if _patched(model):
        return None
    if type(model) is ReassignmentModel:
        from kreassign.reference import PROFILES, profile

        name = model.profile_name
        if name in PROFILES and profile(name) is model.profile and model.name == name:
            return {"kind": "reassignment", "profile": name, "bounds": _plain_json(model.bounds.to_json())}
    if type(model) is QuotaModel:
        from kreassign.reference import quota as ref

        if model.rule is ref.RULES.get(model.config.profile):
            return {"kind": "quota", "profile": model.config.profile, "bounds": _plain_json(model.config.describe())}
    if type(model) is SymmetryReduced:
        inner = _rebuildable_recipe(model.inner)
        if inner is not None:
            return {"kind": "symmetry", "inner": inner}
    return None


@functools.cache
def _distributions() -> frozenset[str]:
    return frozenset(importlib.metadata.packages_distributions())


def _installed(module_name: str) -> bool:
    """Can an executor import this module (standard library or an installed distribution)?"""
    top = module_name.split(".")[0]
    return top in sys.stdlib_module_names or top == "builtins" or top in _distributions()


def _local_modules(model: Any) -> list[Any]:
    """Modules behind the model's classes that executors cannot import (bench/, tests, __main__)."""
    classes = set(type(model).__mro__)
    for value in getattr(model, "__dict__", {}).values():
        classes.update(type(value).__mro__)
    names = {c.__module__ for c in classes if not _installed(c.__module__) and c.__module__ != "__main__"}
    return [sys.modules[n] for n in sorted(names) if n in sys.modules]


def pickled_recipe(model: Any, codec: Any = None) -> dict[str, Any]:
    """The model itself, cloudpickled; the code of modules executors cannot import goes by value,
    and so does the driver's codec (its state classes may exist on the executors only as
    unpickled copies, whose annotations cannot be resolved there)."""
    from pyspark import cloudpickle

    modules = _local_modules(model)
    for m in modules:
        cloudpickle.register_pickle_by_value(m)
    try:
        data = cloudpickle.dumps((model, codec))
    except Exception as e:  # noqa: BLE001 - pickling raises anything: say what it means here
        raise ValueError(f"model {type(model).__qualname__}: cannot be shipped to Spark executors ({e}); "
                         "a model must be rebuildable from its profile and bounds, or picklable") from None
    finally:
        for m in modules:
            cloudpickle.unregister_pickle_by_value(m)
    return {"kind": "pickle", "data": data}


def _by_value(data: Any, model: Any) -> bytes:
    """Callables for the executors, cloudpickled with the code of modules they cannot import
    (the model's, and those defining the callables: a test's, a notebook's) by value."""
    from pyspark import cloudpickle

    names = {getattr(f, "__module__", None) for f in _callables(data)}
    modules = _local_modules(model) + [sys.modules[n] for n in sorted(n for n in names if n)
                                       if n != "__main__" and not _installed(n) and n in sys.modules]
    for m in modules:
        cloudpickle.register_pickle_by_value(m)
    try:
        return cloudpickle.dumps(data)
    finally:
        for m in modules:
            with contextlib.suppress(ValueError):
                cloudpickle.unregister_pickle_by_value(m)


def _callables(data: Any) -> list[Any]:
    if callable(data):
        return [data]
    if isinstance(data, (list, tuple)):
        return [f for item in data for f in _callables(item)]
    return []


def model_recipe(model: Any, codec: Any = None) -> dict[str, Any]:
    """How executors get the model: rebuilt from its profile + bounds when it is one of ours and
    unmodified (checked by rebuilding it here), otherwise the pickled model itself (with `codec`)."""
    recipe = _rebuildable_recipe(model)
    if recipe is not None:
        try:
            rebuilt = T.build_model(recipe)
            same = (rebuilt.describe() == model.describe()
                    and [p.name for p in rebuilt.properties()] == [p.name for p in model.properties()]
                    and list(rebuilt.init_states()) == list(model.init_states()))
        except Exception:  # noqa: BLE001 - a recipe that does not rebuild: ship the model itself
            same = False
        if same:
            return recipe
    return pickled_recipe(model, codec)


# -- one run ------------------------------------------------------------------------------------


@dataclass
class _Found:
    """Findings so far, as discovery keys: (level, key) of a state, (level, key, k) of an edge."""

    violations: dict[str, tuple[int, int]] = field(default_factory=dict)
    examples: dict[str, tuple[int, int]] = field(default_factory=dict)
    edge_violations: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    deadlock: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"violations": self.violations, "examples": self.examples,
                "edge_violations": self.edge_violations, "deadlock": self.deadlock}

    @staticmethod
    def from_json(d: dict[str, Any]) -> _Found:
        return _Found({n: tuple(v) for n, v in d["violations"].items()},
                      {n: tuple(v) for n, v in d["examples"].items()},
                      {n: tuple(v) for n, v in d["edge_violations"].items()},
                      tuple(d["deadlock"]) if d["deadlock"] is not None else None)


class SparkRun:
    """One exploration of one model on Spark (see the module docstring)."""

    def __init__(self, sc: Any, model: Model, *, partitions: int | None, checkpoint_dir: str | None, resume: bool,
                 max_states: int | None, max_depth: int | None, check_deadlock: bool, stop_on_violation: bool,
                 progress: Callable[[int, int, float], None] | None, keep_graph: bool,
                 level_log: list[dict[str, Any]] | None = None, warmup: bool = True,
                 run_info: dict[str, Any] | None = None, timeout: float | None = None, liveness: bool = False):
        self.sc, self.model = sc, model
        # (a graph on the driver serves liveness there; without `eventually` properties there is none)
        self.liveness = liveness and not keep_graph and any(p.kind == EVENTUALLY for p in model.properties())
        self.level_states: list[Any] = []  # with liveness: every Spark level's states, kept cached
        self.driver_states: list[tuple[int, tuple[str, Any]]] = []  # and those of the levels run on the driver
        self.live_runs: dict[str, list[Any]] = {}  # eventually property -> cached runs of the states reaching a goal
        self.all_states: Any = None
        self.run_info = run_info if run_info is not None else {}
        self.timeout = timeout
        self.runs: list[Any] = []  # per level run on Spark, the buckets' visited runs (cached, co-partitioned)
        self.executors_used: set[str] = set()
        self.warmup = warmup
        self.level_log = level_log
        self._jvm_classes: tuple[Any, ...] | None = None
        self.buckets = int(partitions or os.environ.get("KREASSIGN_SPARK_PARTITIONS") or
                           sc.getConf().get("spark.kreassign.partitions", "0") or 0) or max(1, sc.defaultParallelism)
        self.max_states, self.max_depth = max_states, max_depth
        self.check_deadlock, self.stop_on_violation = check_deadlock, stop_on_violation
        self.progress, self.keep_graph = progress, keep_graph
        self.properties = {p.name: p for p in model.properties()}
        self.truncated = self.dropped = False
        self.kernel = callable(getattr(model, "successor_arrays", None)) and callable(getattr(model, "action_of", None))
        self.inits = self._initial_states()
        if self.inits:
            self.codec = codec_for(model, self.inits[0])
            try:
                check_codec(self.codec, self.inits)
            except CodecError:
                if self.codec.name != "struct":
                    raise
                self.codec = codec_for(model, self.inits[0], "json")  # e.g. a field typed Any
                check_codec(self.codec, self.inits)
        else:
            self.codec = None
        self.int64 = bool(self.codec and self.codec.int64)
        self.run_dir = None
        self.fs = None
        if checkpoint_dir is not None and self.codec is not None:
            root = ckpt.absolute_uri(checkpoint_dir)
            self.fs = ckpt.HadoopFS(sc, root)
            if resume and not self.fs.exists(root):
                raise FileNotFoundError(f"--resume {checkpoint_dir}: no such checkpoint directory")
            self.run_dir = f"{root}/{ckpt.run_name(model, self.codec.name)}"
        self.resume = resume
        # the search so far
        self.level_keys: list[np.ndarray] = []  # per level, the sorted discovery keys
        self.states = self.transitions = self.depth = 0
        self.kinds: dict[str, int] = {}
        self.found = _Found()
        self.graph_states: list[list[tuple[bytes, ...]]] = []  # per level, the buckets' state blobs
        self.graph_edges: list[list[tuple[bytes, ...]]] = []

    def _initial_states(self) -> list[Any]:
        out, seen = [], set()
        for s in self.model.init_states():
            if s not in seen:
                if self.max_states is not None and len(out) >= self.max_states:
                    self.truncated = True
                    break
                seen.add(s)
                out.append(s)
        return out

    # -- jobs ---------------------------------------------------------------------------------------
    def _job(self, mode: str, **extra: Any) -> dict[str, Any]:
        return {
            "recipe_id": self.recipe_id,
            "codec": self.codec.name,
            "buckets": self.buckets,
            "mode": mode,
            "always": [n for n, p in self.properties.items() if p.kind == ALWAYS and n not in self.found.violations],
            "sometimes": [n for n, p in self.properties.items() if p.kind == SOMETIMES and n not in self.found.examples],
            "transition": [n for n, p in self.properties.items()
                           if p.kind == TRANSITION and n not in self.found.edge_violations],
            "check_deadlock": self.check_deadlock and self.found.deadlock is None,
            "keep_graph": self.keep_graph,
            "keep_states": self.keep_graph or self.liveness or self.run_dir is not None,
            "save_states": self.run_dir is not None,
            **extra,
        }

    def _spark_level(self, inputs: Any, job: dict[str, Any], prev_keys: Any = None, add_run: bool = True) -> _Level:
        """One level on Spark, as one job: per bucket, `dedupe_task` over `inputs` (the bucket's
        visited runs and the candidates sent to it: a partitioner-aware union, no shuffle) gives
        the level's new states, cached with the bucket; `expand_task` expands them into the next
        level's candidates (cached, shuffled by the next level). The new states' identities become
        one more cached run of the bucket's visited set (`self.runs`), computed from the cached
        states by the next level's job. Lineage is kept (not cut): a lost executor's cached blocks
        and shuffle files are recomputed by Spark, deterministically (tasks are pure functions)."""
        from pyspark import StorageLevel

        results = self.sc.accumulator({}, T.Results())
        dedupe = functools.partial(T.dedupe_task, job=job, recipe=self.recipe_bc, prev_keys=prev_keys, results=results)
        if inputs.getNumPartitions() != self.buckets:  # a union that is not partitioner-aware: buckets mixed up
            raise RuntimeError(f"level {job['level']}: {inputs.getNumPartitions()} partitions for {self.buckets} buckets")
        states = inputs.mapPartitionsWithIndex(dedupe, preservesPartitioning=True)
        states.persist(StorageLevel.MEMORY_AND_DISK)
        output = None
        if job["mode"] != "count":
            expand = functools.partial(T.expand_task, job=job, recipe=self.recipe_bc, results=results)
            output = states.mapPartitionsWithIndex(expand)
            output._bypass_serializer = True  # the task writes PySpark's shuffle format itself
            output.persist(StorageLevel.MEMORY_AND_DISK)
            if add_run:
                run = states.mapPartitionsWithIndex(functools.partial(T.run_task, int64=self.int64),
                                                    preservesPartitioning=True)
                run.persist(StorageLevel.MEMORY_AND_DISK)
                self.runs.append(run)
        return _Level(job["level"], states, output, results)

    def _collect(self, level: _Level) -> list[tuple[str, Any]]:
        """Run the level's job; its findings, from the accumulator, as (tag, value) records (STATS
        merges each bucket's dedupe and expand reports)."""
        what = f"BFS level {level.number} of {getattr(self.model, 'name', 'the model')}"
        self.sc.setJobDescription(f"kreassign: {what}")
        started = time.perf_counter()
        target = level.output if level.output is not None else level.states
        _run_job(lambda: target._jrdd.count(), self.sc, what, self.timeout)
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
        expanded = level.output is not None
        if len(per_bucket) != self.buckets or (expanded and any("transitions" not in v for v in per_bucket.values())):
            raise RuntimeError(f"level {level.number}: {len(per_bucket)} of {self.buckets} buckets reported (engine bug)")
        for v in per_bucket.values():
            self.executors_used.update(v.pop("executors", ()))
        records = [(T.STATS, per_bucket[b]) for b in sorted(per_bucket)]
        records += [(tag, v) for _, tag, v in sorted(others, key=lambda r: (r[0], r[1]))]
        level.edges = [v for tag, v in records if tag == T.EDGES]
        self._log_level(level.number, records, job_seconds, spark=True)
        return records

    def _log_level(self, number: int, records: list[tuple[str, Any]], job_seconds: float, spark: bool = False) -> None:
        if self.level_log is not None:
            stats = [v for tag, v in records if tag == T.STATS]
            now = time.perf_counter()
            self.level_log.append({
                "level": number, "where": "spark" if spark else "driver", "new_states": sum(v["new"] for v in stats),
                "edges": sum(v.get("transitions", 0) for v in stats), "job_seconds": job_seconds,
                "shuffled_bytes": sum(v.get("shuffled", 0) for v in stats),
                "visited": self.states + sum(v["new"] for v in stats),
                "seconds": now - self._level_started})
            self._level_started = now

    def _seed_records(self) -> list[tuple[int, tuple[str, Any]]]:
        """The initial states as level 0, split into buckets (keys 0..n-1 in init_states order)."""
        encoded = [self.codec.encode(s) for s in self.inits]
        keys = np.arange(len(encoded), dtype=np.int64)
        if self.int64:
            states = np.array([p for _, p in encoded], dtype=np.int64)
            level = T.Level(keys, states, states)
            owner = T.int_buckets(states, self.buckets)
        else:
            hi, lo = T.split_digests(b"".join(i for i, _ in encoded))
            level = T.Level(keys, (hi, lo), [p for _, p in encoded])
            owner = T.digest_buckets(hi, self.buckets)
        records = []
        for b in range(self.buckets):
            part = T.select(level, owner == b, self.int64)
            if len(part):
                records.append((b, (T.LEVEL, (0, T.states_blob(part, self.int64)))))
        return records

    def _as_input(self, rdd: Any) -> Any:
        """The same records read with the context's serializer, so that unions of inputs need no
        Python re-serialization pass (every input holds pickled batches of records)."""
        from pyspark.rdd import RDD

        return RDD(rdd._jrdd, self.sc, self.sc.serializer)

    def _shuffled(self, rdd: Any) -> Any:
        """Records (bucket, record) into partition `bucket`, with the engine's partitioner."""
        return self._as_input(rdd.partitionBy(self.buckets, T.bucket_of))

    def _candidates(self, level: Any) -> Any:
        """The next level's candidates, partitioned by bucket: a Spark level's cached output shuffled
        by the JVM (PySpark's partitionBy without its Python stage: the task already wrote (bucket,
        pickled batch) pairs); for a level run on the driver, its candidates (and, the first time,
        the buckets' visited runs, which become a cached run RDD)."""
        if isinstance(level, _DriverLevel):
            from pyspark import StorageLevel

            runs, cands = [], []
            for b in range(self.buckets):
                blobs = [v for _, (tag, v) in level.to[b] if tag == T.RUN]
                if blobs:
                    visited = T.IntVisited(blobs) if self.int64 else T.DigestVisited(blobs)
                    runs.append((b, (T.RUN, visited.merged())))
                cands.extend(r for r in level.to[b] if r[1][0] == T.CANDIDATES)
            run = self._shuffled(self.sc.parallelize(runs, self.buckets))
            run.persist(StorageLevel.MEMORY_AND_DISK)
            self.runs = [run]
            return self._shuffled(self.sc.parallelize(cands, self.buckets))
        if self._jvm_classes is None:  # each lookup is a round trip to the JVM
            jvm = self.sc._jvm
            self._jvm_classes = (jvm.PairwiseRDD, jvm.PythonPartitioner, jvm.PythonRDD)
        from pyspark.rdd import RDD

        pairwise, python_partitioner, python_rdd = self._jvm_classes
        pairs = pairwise(level.output._jrdd.rdd()).asJavaPairRDD()
        jrdd = python_rdd.valueOfPair(pairs.partitionBy(python_partitioner(self.buckets, id(T.bucket_of))))
        return RDD(jrdd, self.sc, self.sc.serializer)

    # -- the search -----------------------------------------------------------------------------------
    def run(self) -> ExploreResult:
        started = self.started = self.last_progress = self._level_started = time.perf_counter()
        self.run_info.update(cluster_info(self.sc), buckets=self.buckets)
        if not self.inits:
            return self._result(0.0, complete=not self.truncated)
        recipe = model_recipe(self.model, self.codec)
        self.recipe_id = T.recipe_id(json.dumps(recipe, default=repr, sort_keys=True).encode()
                                     if recipe["kind"] != "pickle" else recipe["data"])
        self.recipe_bc = self.sc.broadcast(recipe)
        try:
            complete = self._search()
        finally:
            self.run_info["executors_used"] = len(self.executors_used)
            self.run_info["executors_registered"] = executors(self.sc)
        return self._result(time.perf_counter() - started, complete)

    def _search(self) -> bool:
        """Level after level until no new state (or a bound); True iff the search ran to the end.

        The first levels run on the driver, with the tasks' own code, while a level takes less than
        DRIVER_LEVEL_SECONDS (a Spark job costs more than that); the first longer one hands its
        output over to Spark, which runs every later level."""
        self._outputs: list[Any] = []  # cached level outputs, dropped on the way out whatever happens
        self._broadcasts: list[Any] = []
        try:
            level, out, stop, done = self._start()
            self._outputs.append(out)
            while not stop:
                more = self.max_depth is None or level + 1 < self.max_depth
                job = self._job("expand" if more else "count", level=level + 1)
                if isinstance(out, _DriverLevel) and out.seconds < DRIVER_LEVEL_SECONDS:
                    nxt = self._on_driver(out.to, job, self.level_keys[level].tobytes())
                    results = nxt.results
                else:
                    cands = self._candidates(out)
                    keys_bc = self.sc.broadcast(self.level_keys[level].tobytes())
                    self._broadcasts.append(keys_bc)  # (kept until the end: a recomputation may need it)
                    nxt = self._spark_level(self.sc.union([*self.runs, cands]), job, keys_bc)
                    self._outputs.append(nxt)
                    results = self._collect(nxt)
                    if self.liveness and job["mode"] != "count":
                        self.level_states.append(nxt.states)
                out.unpersist(keep_states=self.liveness)
                out = nxt
                level += 1
                if not more:
                    self.dropped = any(v["new"] for tag, v in results if tag == T.STATS)
                    break
                stop, done = self._absorb(level, results)
                self._commit(level, out, done)
                self._report()
            complete = done and not (self.truncated or self.dropped)
            if complete and self.liveness:
                self._prepare_liveness()
            return complete
        finally:
            for cached in self._outputs:
                cached.unpersist(keep_states=bool(self.live_runs))
            for run in self.runs:
                _quietly(run.unpersist)
            if not self.live_runs:  # (otherwise classify_stuck needs them, and the lineage its broadcasts)
                self.release_liveness()

    def _start(self) -> tuple[int, Any, bool, bool]:
        """Level 0 (the initial states), or the last level of a checkpoint: (level, its output, stop, done)."""
        if self.resume and self.run_dir is not None:
            resumed = self._resume()
            if resumed is not None:
                return resumed
        if self.run_dir is not None:
            ckpt.remove_uncommitted(self.fs, self.run_dir, 0)
        job = self._job("seed", level=0, seed_level=0, check=True)
        if self.warmup:
            inputs: dict[int, list[Any]] = {}
            for b, record in self._seed_records():
                inputs.setdefault(b, []).append((b, record))
            out = self._on_driver(inputs, job, None)
            results = out.results
        else:
            out = self._spark_level(self._shuffled(self.sc.parallelize(self._seed_records(), self.buckets)), job)
            results = self._collect(out)
            if self.liveness:
                self.level_states.append(out.states)
        stop, done = self._absorb(0, results)
        self._commit(0, out, done)
        self._report()
        return 0, out, stop, done

    def _on_driver(self, inputs: dict[int, list[Any]], job: dict[str, Any], prev_keys: bytes | None) -> _DriverLevel:
        """One level on the driver: every bucket's task in turn, in this process (same code, same output)."""
        started = time.perf_counter()
        out = _DriverLevel(job["level"], {b: [] for b in range(self.buckets)})
        keys = None if prev_keys is None else _Value(prev_keys)
        for b in range(self.buckets):
            for target, (tag, value) in T.run_step(b, inputs.get(b, []), job, self.recipe_bc, keys):
                if target >= 0:
                    out.to[target].append((target, (tag, value)))
                    continue
                if tag == T.STATS or (job["keep_graph"] and tag in (T.STATES, T.EDGES)):
                    out.results.append((tag, value))
                if job["save_states"] and tag in (T.STATES, T.EDGES):
                    out.saved.append((tag, value))
                if self.liveness and tag == T.STATES and len(value[1][0]):
                    self.driver_states.append((value[0], (T.LEVEL, (job["level"], value[1]))))
        out.seconds = time.perf_counter() - started
        self._log_level(out.number, out.results, out.seconds)
        return out

    def _prepare_liveness(self) -> None:
        """For every `eventually` property, the states that reach a goal, by a distributed backward
        fixpoint (checker/spark/liveness.py), kept cached as runs until `classify_stuck` asks."""
        from pyspark import StorageLevel

        parts = list(self.level_states)
        if self.driver_states or not parts:
            parts.append(self._shuffled(self.sc.parallelize(self.driver_states, self.buckets)))
        self.all_states = self.sc.union(parts)
        job = self._job("liveness")
        edges = self.all_states.mapPartitionsWithIndex(functools.partial(SL.edges_task, job=job, recipe=self.recipe_bc))
        reverse = self._shuffled(edges).mapPartitionsWithIndex(
            functools.partial(SL.reverse_task, int64=self.int64), preservesPartitioning=True)
        reverse.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            for prop in self.properties.values():
                if prop.kind == EVENTUALLY:
                    self.live_runs[prop.name] = self._reaching(prop.name, reverse)
        finally:
            _quietly(reverse.unpersist)

    def _reaching(self, name: str, reverse: Any) -> list[Any]:
        """Cached runs of the states from which a goal of `name` is reachable (a BFS backwards from the goals)."""
        from pyspark import StorageLevel

        job = {**self._job("liveness"), "property": name}
        cands = self.all_states.mapPartitionsWithIndex(
            functools.partial(SL.goal_task, job=job, recipe=self.recipe_bc), preservesPartitioning=True)
        runs: list[Any] = []
        for step in range(1, 1 << 62):
            inputs = self.sc.union([*runs, cands])
            if inputs.getNumPartitions() != self.buckets:
                raise RuntimeError(f"liveness: {inputs.getNumPartitions()} partitions for {self.buckets} buckets")
            counts = self.sc.accumulator({}, T.Results())
            new = inputs.mapPartitionsWithIndex(
                functools.partial(SL.reach_task, int64=self.int64, results=counts, step=step),
                preservesPartitioning=True)
            new.persist(StorageLevel.MEMORY_AND_DISK)
            runs.append(new)
            what = f"liveness of {name}, step {step}"
            self.sc.setJobDescription(f"kreassign: {what}")
            _run_job(new._jrdd.count, self.sc, what, self.timeout)
            if not sum(counts.value.values()):
                return runs
            cands = self._shuffled(self.sc.union([new, reverse]).mapPartitionsWithIndex(
                functools.partial(SL.preds_task, int64=self.int64, buckets=self.buckets)))
        raise AssertionError("unreachable")

    def classify_stuck(self, prop: Any, findings: tuple[Any, ...] = (), want_findings: bool = True):
        """(unexpected lasso or None, {finding: lasso}): the stuck states of `prop` classified as
        check/run.py does on a graph (the first of each class in BFS order; premise
        `extra["from"]` first), computed where the states are; the lassos are built on the driver."""
        runs = self.live_runs.pop(prop.name)
        try:
            callables = (prop.extra.get("from"), [(f.name, f.signature) for f in findings])
            spec = self.sc.broadcast(_by_value(callables, self.model))
            job = self._job("liveness")
            task = functools.partial(SL.classify_task, job=job, recipe=self.recipe_bc, spec=spec)
            firsts = _run_job(self.sc.union([*runs, self.all_states]).mapPartitionsWithIndex(task).collect,
                              self.sc, f"liveness of {prop.name}: classifying the stuck states", self.timeout)
            _quietly(spec.destroy)
        finally:
            for run in runs:
                _quietly(run.unpersist)
            if not self.live_runs:
                self.release_liveness()
        best: dict[str, tuple[int, int]] = {}
        for name, level, key in firsts:
            best[name] = min(best.get(name, (level, key)), (level, key))
        lassos: dict[tuple[int, int], tuple[Path, int | None]] = {}

        def lasso(at: tuple[int, int]) -> tuple[Path, int | None]:
            if at not in lassos:
                lassos[at] = SL.lasso_from(self.model, self._path(*at))
            return lassos[at]

        unexpected = lasso(best[""]) if "" in best else None
        found = {f.name: lasso(best[f.name]) for f in findings if want_findings and f.name in best}
        return unexpected, found

    def release_liveness(self) -> None:
        """Drop what liveness kept cached (every level's states)."""
        for runs in self.live_runs.values():
            for run in runs:
                _quietly(run.unpersist)
        self.live_runs = {}
        for states in self.level_states:
            _quietly(states.unpersist)
        self.level_states = []
        for b in self._broadcasts:
            _quietly(b.destroy)
        self._broadcasts = []
        _quietly(self.recipe_bc.destroy)

    def _absorb(self, level: int, results: list[tuple[str, Any]]) -> tuple[bool, bool]:
        """Fold one level's results into the search; return (stop, done)."""
        stats = [v for tag, v in results if tag == T.STATS]
        keys = np.sort(np.concatenate([np.frombuffer(s["keys"], dtype=np.int64) for s in stats]))
        if not len(keys):
            return True, True
        if len(keys) >= 1 << 31:  # a parent's rank must leave room for two edge indices in an int64
            raise InfraError(f"level {level} has {len(keys):,} states: the Spark engine's discovery keys hold up to "
                             "2**31 per level")
        threshold = None
        if self.max_states is not None and self.states + len(keys) > self.max_states:
            room = self.max_states - self.states
            self.truncated = True
            keys = keys[:room]
            if not room:
                return True, False
            threshold = int(keys[-1])
        self.level_keys.append(keys)
        self.states += len(keys)
        self.depth += 1
        for table, part in ((self.found.violations, "violations"), (self.found.examples, "examples")):
            first: dict[str, int] = {}  # the smallest key over the buckets
            for s in stats:
                for name, key in s[part].items():
                    first[name] = min(key, first.get(name, key))
            for name, key in first.items():
                if name not in table and (threshold is None or key <= threshold):
                    table[name] = (level, key)
        if self.keep_graph:
            self.graph_states.append([v[1] for tag, v in results if tag == T.STATES])
            self.graph_edges.append([] if self.truncated else [v[1] for tag, v in results if tag == T.EDGES])
        if self.truncated:  # the embedded engine stops before expanding this level
            return True, False
        transitions = 0
        edge_hits: dict[str, tuple[int, int]] = {}
        deadlocks = []
        for s in stats:
            transitions += s["transitions"]
            for kind, n in s["kinds"].items():
                self.kinds[kind] = self.kinds.get(kind, 0) + n
            for name, (key, k) in s["edge_violations"].items():
                if name not in edge_hits or (key, k) < edge_hits[name]:
                    edge_hits[name] = (key, k)
            if s["deadlock"] is not None:
                deadlocks.append(s["deadlock"])
        self.transitions += transitions
        for name, (key, k) in edge_hits.items():
            self.found.edge_violations.setdefault(name, (level, key, k))
        if deadlocks and self.found.deadlock is None and self.check_deadlock:
            self.found.deadlock = (level, min(deadlocks))
        stopping = self.stop_on_violation and bool(
            self.found.violations or self.found.edge_violations or (self.check_deadlock and self.found.deadlock))
        if transitions == 0:
            return True, True
        return stopping, False

    def _report(self) -> None:
        now = time.perf_counter()
        if self.progress is not None and now - self.last_progress >= PROGRESS_INTERVAL:
            self.last_progress = now
            self.progress(self.states, self.depth, self.states / max(now - self.started, 1e-9))

    # -- checkpoints ------------------------------------------------------------------------------------
    def _meta(self, level: int, done: bool) -> dict[str, Any]:
        return {
            "level": level, "done": done, "states": self.states, "transitions": self.transitions,
            "depth": self.depth, "kinds": self.kinds, "found": self.found.to_json(),
            "level_sizes": [len(k) for k in self.level_keys], "keep_graph": self.keep_graph,
            "codec": self.codec.name, "check_deadlock": self.check_deadlock,
            "model": {"class": f"{type(self.model).__module__}.{type(self.model).__qualname__}",
                      "describe": json.loads(json.dumps(self.model.describe(), default=str))},
        }

    def _commit(self, level: int, out: Any, done: bool) -> None:
        """Write the level's states (and edges) and then its meta.json; a level without meta does not count."""
        if self.run_dir is None or self.truncated:
            return
        if len(self.level_keys) == level:  # an empty level: the search ended with the previous one
            if done and level > 0:
                ckpt.write_meta(self.fs, self.run_dir, level - 1, self._meta(level - 1, True))
            return
        directory = ckpt.level_dir(self.run_dir, level)
        self.fs.delete(directory)
        if isinstance(out, _DriverLevel):
            text = [T.saved_line(tag, level, value) for tag, value in out.saved]
            lines = self.sc.parallelize(text, max(1, min(self.buckets, len(text))))
        else:  # the states from where they are cached; the edges (with the graph) are on the driver
            lines = out.states.mapPartitions(functools.partial(T.saved_states, level=level))
            if out.edges:
                edges = [T.saved_line(T.EDGES, level, value) for value in out.edges]
                lines = lines.union(self.sc.parallelize(edges, max(1, min(self.buckets, len(edges)))))
        _run_job(lambda: lines.saveAsTextFile(f"{directory}/data"), self.sc, f"checkpoint of level {level}",
                 self.timeout)
        ckpt.write_meta(self.fs, self.run_dir, level, self._meta(level, done))

    def _resume(self) -> tuple[int, Any, bool, bool] | None:
        levels = ckpt.committed_levels(self.fs, self.run_dir)
        if not levels:
            return None
        last = levels[-1]
        meta = ckpt.read_meta(self.fs, self.run_dir, last)
        if meta["codec"] != self.codec.name:
            raise ckpt.CheckpointError(f"{self.run_dir}: written with the {meta['codec']} codec, this run uses "
                                       f"{self.codec.name}")
        if self.keep_graph and not meta["keep_graph"]:
            raise ckpt.CheckpointError(f"{self.run_dir}: the checkpointed run kept no state graph, this one needs it "
                                       "(liveness): resume with --no-liveness or start afresh")
        if self.check_deadlock and not meta["check_deadlock"]:
            raise ckpt.CheckpointError(f"{self.run_dir}: the checkpointed run did not look for deadlocks")
        ckpt.remove_uncommitted(self.fs, self.run_dir, last + 1)
        self.states, self.transitions, self.depth = meta["states"], meta["transitions"], meta["depth"]
        self.kinds = dict(meta["kinds"])
        self.found = _Found.from_json(meta["found"])
        paths = ",".join(f"{ckpt.level_dir(self.run_dir, n)}/data" for n in levels)
        files = self.sc.textFile(paths).map(T.read_saved)
        wanted = (lambda r: True) if self.keep_graph else (lambda r: r[0].startswith(T.STATES + ":"))
        rows = _run_job(lambda: files.filter(wanted).map(functools.partial(_unnamed_blob, keys_only=not self.keep_graph))
                        .toLocalIterator(), self.sc, "reading the checkpoint", self.timeout)  # (not capped by maxResultSize)
        per_level: dict[int, list[np.ndarray]] = {n: [] for n in levels}
        self.graph_states = [[] for _ in levels]
        self.graph_edges = [[] for _ in levels]
        for tag, level, blob in rows:
            if tag == T.STATES:
                per_level[level].append(np.frombuffer(blob[0], dtype=np.int64))
                if self.keep_graph:
                    self.graph_states[level].append(blob)
            else:
                self.graph_edges[level].append(blob)
        self.level_keys = [np.sort(np.concatenate(per_level[n])) if per_level[n] else T.EMPTY_I64 for n in levels]
        if [len(k) for k in self.level_keys] != meta["level_sizes"]:
            raise ckpt.CheckpointError(f"{self.run_dir}: the level files do not match meta.json (sizes differ)")
        from pyspark import StorageLevel

        history = self._shuffled(files.filter(lambda r: r[0].startswith(T.STATES + ":")).flatMap(
            functools.partial(T.rebucket, buckets=self.buckets, int64=self.int64)))
        history.persist(StorageLevel.MEMORY_AND_DISK)
        if meta["done"]:
            if self.liveness:
                self.level_states.append(history)  # (every saved level's states, for liveness)
            return last, _nothing(), True, True
        # the last level's expansion again (its counts are in meta.json): the candidates of the next level
        run = history.mapPartitionsWithIndex(functools.partial(T.run_task, int64=self.int64), preservesPartitioning=True)
        run.persist(StorageLevel.MEMORY_AND_DISK)
        self.runs = [run]  # every saved level's states: one run per bucket
        if self.liveness:
            self.level_states.append(history)  # (every saved level's states, for liveness)
        job = self._job("seed", level=last, seed_level=last, check=False, keep_graph=False, keep_states=False,
                        save_states=False)
        out = self._spark_level(history, job, add_run=False)
        again = np.sort(np.concatenate([np.frombuffer(v["keys"], dtype=np.int64)
                                        for tag, v in self._collect(out) if tag == T.STATS]))
        if not np.array_equal(again, self.level_keys[last]):
            raise ckpt.CheckpointError(f"{self.run_dir}: level {last} does not rebuild to the same states")
        self._report()
        return last, out, False, False

    # -- the result ---------------------------------------------------------------------------------------
    def _path(self, level: int, key: int) -> Path:
        """The shortest path the keys encode: the k-th successor of the parent, from an initial state."""
        ks = []
        while level > 0:
            ks.append(key & T.K_MASK)
            level -= 1
            key = int(self.level_keys[level][key >> T.K_BITS])
        state = self.inits[key]
        path: Path = [(state, None)]
        for k in reversed(ks):
            action, state = T.kth_successor(self.model, state, k, self.kernel)
            path.append((state, action))
        return path

    def _result(self, seconds: float, complete: bool) -> ExploreResult:
        found = self.found
        violations = {n: Violation(self.properties[n], self._path(*found.violations[n])) for n in found.violations}
        for name, (level, key, k) in found.edge_violations.items():
            path = self._path(level, key)
            action, nxt = T.kth_successor(self.model, path[-1][0], k, self.kernel)
            violations[name] = Violation(self.properties[name], path + [(nxt, action)])
        deadlock = None
        if self.check_deadlock and found.deadlock is not None:
            deadlock = self._path(*found.deadlock)
        result = ExploreResult(
            states=self.states,
            transitions=self.transitions,
            depth=self.depth,
            seconds=seconds,
            complete=complete,
            violations=violations,
            examples={n: self._path(*found.examples[n]) for n in found.examples},
            deadlock=deadlock,
            per_action_edges=dict(self.kinds),
            graph=self._graph() if self.keep_graph else None,
        )
        if self.liveness and complete:  # check/run.py classifies stuck states through it (no graph)
            result.classify_stuck = self.classify_stuck  # type: ignore[attr-defined]
            result.release_liveness = self.release_liveness  # type: ignore[attr-defined]
        return result

    def _graph(self) -> StateGraph:
        """The state graph in the embedded engine's order (levels, then discovery keys)."""
        states: list[Any] = []
        by_ident: dict[Any, int] = {}
        offsets = []
        for level, blobs in enumerate(self.graph_states):
            offsets.append(len(states))
            if self.codec is None or not blobs:
                continue
            merged = T._concat_levels([T.level_from_blob(b, self.int64) for b in blobs], self.int64)
            order = np.argsort(merged.keys)
            if self.int64:
                idents = merged.payloads[order].tolist()
                for s in idents:
                    by_ident[s] = len(states)
                    states.append(s)
            else:
                hi, lo = merged.ident
                raw = T.join_digests(hi[order], lo[order])
                for j, i in enumerate(order.tolist()):
                    by_ident[raw[16 * j : 16 * j + 16]] = len(states)
                    states.append(self.codec.decode(merged.payloads[i]))
        successors: list[list[int]] = [[] for _ in states]
        actions: list[list[Any]] = [[] for _ in states]
        decode_action = self._action_decoder()
        for level, blobs in enumerate(self.graph_edges):
            rows = []
            for src_b, k_b, to_b, ids_b, table_b in blobs:
                src = np.frombuffer(src_b, dtype=np.int64)
                ranks = np.searchsorted(self.level_keys[level], src)
                sources = (offsets[level] + ranks).tolist()
                ks = np.frombuffer(k_b, dtype=np.uint16).tolist()
                if self.int64:
                    targets = np.frombuffer(to_b, dtype=np.int64).tolist()
                else:
                    targets = [to_b[16 * j : 16 * j + 16] for j in range(len(ks))]
                table = json.loads(table_b)
                ids = np.frombuffer(ids_b, dtype=np.int32).tolist()
                rows.extend(zip(sources, ks, targets, (table[i] for i in ids)))
            rows.sort(key=lambda r: (r[0], r[1]))
            for i, k, target, token in rows:
                j = by_ident.get(target)
                if j is not None:
                    successors[i].append(j)
                    actions[i].append(decode_action(token, states[i], k))
        return StateGraph(states, {s: i for i, s in enumerate(states)}, successors, actions)

    def _action_decoder(self) -> Callable[[str, Any, int], Any]:
        """Edge labels from their JSON: `action_from_json` (cached), or the k-th successor again."""
        cache: dict[str, Any] = {}
        model = self.model

        def by_replay(token: str, state: Any, k: int) -> Any:
            return T.kth_successor(model, state, k, self.kernel)[0]

        def decode(token: str, state: Any, k: int) -> Any:
            action = cache.get(token)
            if action is None:
                try:
                    action = cache[token] = model.action_from_json(json.loads(token))
                except Exception:  # noqa: BLE001 - the model cannot read its actions back: ask it again
                    return by_replay(token, state, k)
            return action

        return decode


@dataclass
class _Level:
    """A level run on Spark: its new states (cached with their buckets), its expansion's output
    (the next level's candidates, cached in shuffle-writer form), the accumulator of its findings."""

    number: int
    states: Any
    output: Any
    results: Any
    edges: list[Any] = field(default_factory=list)

    def unpersist(self, keep_states: bool = False) -> None:
        """Drop the cached blocks (the RDDs and their lineage stay: Spark may recompute them)."""
        for rdd in (None if keep_states else self.states, self.output):
            if rdd is not None:
                _quietly(rdd.unpersist)
        self.states = self.output = None


@dataclass
class _DriverLevel:
    """A level computed on the driver: the next level's input per bucket, the findings, the
    records a checkpoint saves, and how long it took."""

    number: int
    to: dict[int, list[Any]]
    results: list[tuple[str, Any]] = field(default_factory=list)
    saved: list[tuple[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def unpersist(self, keep_states: bool = False) -> None:
        self.to = {}


class _Value:
    """Stands for a broadcast variable when a task's code runs on the driver."""

    def __init__(self, value: Any):
        self.value = value


def _each(records: list[Any]) -> list[Any]:
    return records


def _quietly(cleanup: Callable[[], Any]) -> None:
    """Clean-up that must not hide the exception being handled (the context may be gone)."""
    with contextlib.suppress(Exception):
        cleanup()


def _nothing() -> _Level:
    """The output of a finished checkpointed run (nothing to expand)."""
    return _Level(-1, None, None, None)


def _unnamed_blob(record: tuple[str, bytes], keys_only: bool) -> tuple[str, int, tuple[bytes, ...]]:
    name, data = record
    tag, level, _ = name.split(":")
    parts = T.unpack(bytes(data))
    return tag, int(level), tuple(parts[:1] if keys_only and tag == T.STATES else parts)


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def describe_error(e: BaseException) -> str:
    """The real cause of a Spark failure: the Java exception's class and message (the root cause's
    too), or the Python exception of the task, with the last lines of its traceback."""
    java = getattr(e, "java_exception", None) or getattr(e, "_origin", None)  # (Py4JJavaError, captured exceptions)
    parts = []
    with contextlib.suppress(Exception):
        cause, seen = java, 0
        if java is None:
            raise LookupError
        while cause is not None and seen < 8:
            message = str(cause.getMessage() or "").strip()
            parts.append(f"{cause.getClass().getName()}: {message.splitlines()[0] if message else ''}".rstrip(": "))
            cause, seen = cause.getCause(), seen + 1
    text = str(e)
    start = text.find("Traceback (most recent call last)")
    if start >= 0:  # a Python exception in a task: its last frame and the exception itself
        lines = [ln for ln in text[start:].split("\n\tat ")[0].strip().splitlines() if ln.strip()]
        parts.append("Python task error: " + " | ".join(ln.strip() for ln in lines[-3:]))
    return "; caused by ".join(dict.fromkeys(parts)) or f"{type(e).__name__}: {first_line(e)}"


def _run_job(action: Callable[[], Any], sc: Any = None, what: str = "a Spark job",
             timeout: float | None = None) -> Any:
    """Run a Spark action; any failure becomes an InfraError naming what ran (the BFS level),
    the Java exception (class, message, stage) and, for a task's Python error, its traceback's end.

    On a cluster a watchdog cancels the job when no executor has been registered for `timeout`
    seconds (all lost and none granted again): Spark itself would wait for ever."""
    stalled: list[str] = []
    watchdog = None
    if sc is not None and not sc.master.startswith("local"):
        import threading

        done = threading.Event()
        limit = executor_timeout(sc, timeout)

        def watch() -> None:
            since = None
            while not done.wait(1.0):
                with contextlib.suppress(Exception):
                    if executors(sc) > 0:
                        since = None
                    elif since is None:
                        since = time.monotonic()
                    elif time.monotonic() - since > limit:
                        stalled.append(f"no executor for {limit:g} s")
                        sc.cancelAllJobs()
                        return

        watchdog = threading.Thread(target=watch, name="kreassign-spark-watchdog", daemon=True)
        watchdog.start()
    try:
        return action()
    except Exception as e:
        if stalled:
            raise InfraError(f"Spark: {what} cancelled: {stalled[0]} on {sc.master} "
                             "(the cluster lost them all and granted none again)") from None
        if isinstance(e, (InfraError, KeyboardInterrupt)) or not _from_spark(e):
            raise
        raise InfraError(f"Spark: {what} failed: {describe_error(e)}") from None
    finally:
        if watchdog is not None:
            done.set()


def _from_spark(e: BaseException) -> bool:
    """Errors Spark, Py4J or the JVM raise (not the engine's own bugs, which keep their traceback)."""
    module = type(e).__module__ or ""
    return (module.startswith(("py4j", "pyspark")) or type(e).__name__ in ("Py4JJavaError", "PythonException")
            or hasattr(e, "java_exception"))


def shuffle_write_by_job(sc: Any) -> dict[str, int]:
    """Spark's shuffle-write bytes per job description (the JVM's status store; PySpark has no public
    call for task metrics, hence the JVM handle)."""
    store = sc._jsc.sc().statusStore()
    jobs = store.jobsList(None)
    out: dict[str, int] = {}
    for j in range(jobs.length()):
        job = jobs.apply(j)
        description = job.description()
        name = description.get() if description.isDefined() else ""
        ids = job.stageIds()
        for k in range(ids.length()):
            try:  # a skipped stage (its shuffle output existed) has no attempt
                out[name] = out.get(name, 0) + store.lastStageAttempt(ids.apply(k)).shuffleWriteBytes()
            except Exception:  # noqa: BLE001, S110
                pass
    return out


def explore_spark(model: Model, *, sc: Any = None, master: str | None = None, partitions: int | None = None,
                  checkpoint_dir: str | None = None, resume: bool = False, max_states: int | None = None,
                  max_depth: int | None = None, check_deadlock: bool = False, stop_on_violation: bool = False,
                  progress: Callable[[int, int, float], None] | None = None, keep_graph: bool = False,
                  level_log: list[dict[str, Any]] | None = None, warmup: bool = True,
                  run_info: dict[str, Any] | None = None, timeout: float | None = None,
                  liveness: bool = False) -> ExploreResult:
    """`bfs.explore` on Spark: the same counts, verdicts and (shortest) counterexamples.

    `level_log`, when given, receives one dict per level (where it ran, new_states, edges expanded,
    job_seconds, seconds since the previous level ended): the per-level costs bench/spark_scaling.py
    reports. `warmup=False` runs every level on Spark (by default the first, small levels run on
    the driver, see `SparkRun._search`).

    Differences, all documented in docs/spark.md: with `max_states` the same states are kept
    but the transitions counted are those of whole levels; with `stop_on_violation` the
    search stops at the end of the level of the first finding.
    """
    if sc is None:
        sc = spark_context(master)
    run = SparkRun(sc, model, partitions=partitions, checkpoint_dir=checkpoint_dir, resume=resume,
                   max_states=max_states, max_depth=max_depth, check_deadlock=check_deadlock,
                   stop_on_violation=stop_on_violation, progress=progress, keep_graph=keep_graph,
                   level_log=level_log, warmup=warmup, run_info=run_info, timeout=timeout, liveness=liveness)
    return run.run()


__all__ = [
    "DEFAULT_MASTER",
    "LOG4J2",
    "explore_spark",
    "model_recipe",
    "spark_context",
    "spark_explorer",
    "spark_session",
    "shuffle_write_by_job",
]
