"""Running a Spark job: any failure becomes one InfraError naming what ran, and a watchdog cancels
a job on a cluster that has lost every executor; plus Spark's own shuffle metrics per job.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from kreassign.checker.spark.errors import describe_error, from_spark
from kreassign.checker.spark.session import executor_timeout, executors

from kreassign.errors import InfraError
from kreassign.interrupts import take_interrupt


def run_job(action: Callable[[], Any], sc: Any = None, what: str = "a Spark job",
            timeout: float | None = None) -> Any:
    """Run a Spark action; any failure becomes an InfraError naming what ran (the BFS level),
    the Java exception (class, message, stage) and, for a task's Python error, its traceback's end.

    On a cluster a watchdog cancels the job when no executor has been registered for `timeout`
    seconds (all lost and none granted again): Spark itself would wait for ever.

    A Ctrl-C that arrived while the driver was in a call to the JVM waited there (kreassign/interrupts.py)
    and is raised here, before the job or after it; the failure of a job it cancelled is the interrupt."""
    if take_interrupt():
        raise KeyboardInterrupt
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
        result = action()
    except Exception as e:
        if take_interrupt():  # Ctrl-C cancelled the job: not a failure of Spark
            raise KeyboardInterrupt from None
        if stalled:
            raise InfraError(f"Spark: {what} cancelled: {stalled[0]} on {sc.master} "
                             "(the cluster lost them all and granted none again)") from None
        if isinstance(e, (InfraError, KeyboardInterrupt)) or not from_spark(e):
            raise
        raise InfraError(f"Spark: {what} failed: {describe_error(e)}") from None
    finally:
        if watchdog is not None:
            done.set()
    if take_interrupt():  # the job ended before the cancellation reached it
        raise KeyboardInterrupt
    return result


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


__all__ = ["run_job", "shuffle_write_by_job"]
