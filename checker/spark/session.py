"""What kreassign asks of Spark and what it got: default settings, quiet logs, executors, a reachable master.

kreassign's defaults apply only where the user set nothing (docs/spark.md, "Whose settings win");
`wait_for_executors` and `check_reachable` make a cluster without free resources, or a master that
does not answer, fail fast with an InfraError instead of hanging. Starting the JVM and the session
is in engine.py (`spark_session`, `spark_context`).
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from typing import Any

from kreassign.checker.spark.errors import quietly

from kreassign.errors import InfraError, UsageError
from kreassign.outputs import write_output

DEFAULT_MASTER = "local[*]"  # when neither the caller nor spark-submit / spark-defaults.conf names one
#: the heap of a JVM kreassign starts (engine.launch_settings), unless the user gives one
DRIVER_MEMORY = "4g"
#: the JIT compiler it runs: C1 only. Its optimizing compiler (C2) cost 4 of a local session's 8.7 CPU-s at
#: start and 5.4 more on a 3-million-state run, for no shorter wall time (docs/spark.md, "The JVM kreassign starts")
DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"
DRIVER_DEFAULTS = {"spark.driver.memory": DRIVER_MEMORY, "spark.driver.extraJavaOptions": DRIVER_JAVA_OPTIONS}
#: the driver's settings Spark reads only when its JVM starts (client mode)
LAUNCH_KEYS = ("spark.driver.memory", "spark.driver.extraJavaOptions", "spark.driver.extraClassPath",
               "spark.driver.extraLibraryPath")
#: seconds to wait for a first executor on a cluster (spark.kreassign.executorTimeout, --spark-timeout)
EXECUTOR_TIMEOUT = 120.0

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
# with its Python traceback (checker/spark/jobs.py run_job), so these loggers would only repeat it
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = off
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = off
"""


def _private_dir() -> str:
    """kreassign's own folder in the temp directory, made 0700 for this user; anything else found under that
    name (a symlink, a file, another user's folder) is left alone and a fresh folder is made instead."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(tempfile.gettempdir(), f"kreassign-{uid}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix="kreassign-")
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077:
        return tempfile.mkdtemp(prefix="kreassign-")
    return path


def log4j2_file() -> str:
    """A quiet log4j2 configuration, written once to kreassign's private folder in the temp directory (by the
    output rule of kreassign/outputs.py: atomically, never over anything but a regular file)."""
    path = os.path.join(_private_dir(), "log4j2.properties")
    try:
        with open(path) as f:
            if f.read() == LOG4J2:
                return path
    except OSError:
        pass
    write_output(path, LOG4J2)
    return path


def jvm_log_file() -> str:
    """Where the JVM kreassign starts writes its stderr when that must not reach this process's (SparkOptions.jvm_stderr)."""
    return os.path.join(_private_dir(), "spark-jvm.log")


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


#: settings PySpark's launcher gives every session it starts (as for an interactive shell)
SHELL_SETTINGS = frozenset({"spark.ui.showConsoleProgress"})


def defaults_file_keys() -> set[str]:
    """The keys of the user's spark-defaults.conf ($SPARK_CONF_DIR, else $SPARK_HOME/conf)."""
    from pyspark.find_spark_home import _find_spark_home

    conf_dir = os.environ.get("SPARK_CONF_DIR") or os.path.join(_find_spark_home(), "conf")
    try:
        with open(os.path.join(conf_dir, "spark-defaults.conf")) as f:
            return {line.split()[0] for line in f if line.strip() and not line.lstrip().startswith("#")}
    except OSError:
        return set()


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
            quietly(sc.stop)
            raise InfraError(f"Spark: no executor registered with {sc.master} within {limit:g} s: the cluster "
                             f"has no free resources for this application{asked}; free some, ask for less, "
                             "or wait longer (--spark-timeout, spark.kreassign.executorTimeout)")
        time.sleep(0.2)


def cluster_info(sc: Any) -> dict[str, Any]:
    """Where a run ran: the master, the application, the executors registered now."""
    return {"master": sc.master, "app_id": sc.applicationId, "executors_registered": executors(sc),
            "default_parallelism": sc.defaultParallelism}


def lost_executors(sc: Any, since_ms: float) -> list[dict[str, str]]:
    """The executors removed since `since_ms` (ms since the epoch): id, host and Spark's reason ("Command exited
    with code 137", "worker lost", an idle executor dynamic allocation released...), from the JVM's status store,
    which keeps removed executors (the UI's Executors page; PySpark has no public call for it). [] when the
    store cannot say (local mode has only the driver)."""
    out: list[dict[str, str]] = []
    try:
        listed = sc._jsc.sc().statusStore().executorList(False)
        for i in range(listed.length()):
            e = listed.apply(i)
            removed = e.removeTime()
            if e.isActive() or e.id() == "driver" or not removed.isDefined() or removed.get().getTime() < since_ms:
                continue
            reason = e.removeReason()
            out.append({"id": str(e.id()), "host": str(e.hostPort()),
                        "reason": str(reason.get()) if reason.isDefined() else "unknown"})
    except Exception:  # noqa: BLE001 - a status store without these calls: report nothing rather than fail a run
        return []
    return out


def spark_conf(pairs: list[str]) -> dict[str, str]:
    """`--conf KEY=VALUE` flags as a dict (UsageError naming the bad one)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair!r}: expected KEY=VALUE, e.g. spark.executor.memory=4g")
        out[key.strip()] = value
    return out


__all__ = [
    "DEFAULT_MASTER",
    "DRIVER_DEFAULTS",
    "DRIVER_JAVA_OPTIONS",
    "DRIVER_MEMORY",
    "EXECUTOR_TIMEOUT",
    "LAUNCH_KEYS",
    "LOG4J2",
    "SHELL_SETTINGS",
    "check_reachable",
    "cluster_info",
    "defaults_file_keys",
    "executor_timeout",
    "executors",
    "jvm_log_file",
    "log4j2_file",
    "lost_executors",
    "session_settings",
    "spark_conf",
    "wait_for_executors",
]
