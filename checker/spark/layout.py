"""Which layout a Spark search runs in (SparkOptions.layout; docs/spark.md, "Layouts").

The resident layout (checker/spark/resident/) keeps one task per bucket alive for the whole search; it
does not checkpoint, keep the graph or classify stuck states on the executors, and it needs every task
running at once (a barrier stage). The levels layout (rounds.py, run.py) does all of that. "auto" takes
the resident layout wherever it applies; asking for it where it does not is a usage error naming why.
"""

from __future__ import annotations

import time
from typing import Any

from kreassign.checker.explore.protocol import Model, checked_properties
from kreassign.checker.spark.options import SparkOptions
from kreassign.checker.spark.session import executor_timeout
from kreassign.spec.properties import EVENTUALLY

from kreassign.errors import UsageError

#: seconds `auto` waits for a cluster's executors to offer a slot per bucket before it takes the levels layout
#: (`--spark-layout resident` waits as long as for any executor: spark.kreassign.executorTimeout)
AUTO_SLOT_WAIT = 10.0


def task_slots(sc: Any, want: int = 0, wait: float = 0.0) -> int:
    """How many tasks the cluster runs at once (what a barrier stage needs for its tasks), waiting up to `wait`
    seconds for `want` (a cluster's executors register one by one: the first may be alone for seconds)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            jsc = sc._jsc.sc()
            slots = int(jsc.maxNumConcurrentTasks(jsc.resourceProfileManager().defaultResourceProfile()))
        except Exception:  # noqa: BLE001 - a Spark without the call: its default parallelism
            return int(sc.defaultParallelism)
        if slots >= want or time.monotonic() >= deadline:
            return slots
        time.sleep(0.5)


def not_resident(sc: Any, model: Model, options: SparkOptions, buckets: int) -> str | None:
    """Why the resident layout cannot run this search (None: it can)."""
    if options.keep_graph:
        return "the whole state graph on the driver (fair liveness)"
    if options.liveness and any(p.kind == EVENTUALLY for p in checked_properties(model)):
        return "liveness on the executors (add --no-liveness, or use --spark-layout levels)"
    if options.checkpoint_root is not None:
        return "checkpoints (--checkpoint, --resume)"
    conf = sc.getConf()
    if (conf.get("spark.dynamicAllocation.enabled", "false") or "false").strip().lower() == "true":
        return "dynamic allocation (a barrier stage needs all its task slots at once)"
    wait = 0.0 if sc.master.startswith("local") else (
        executor_timeout(sc, options.timeout) if options.layout == "resident" else AUTO_SLOT_WAIT)
    slots = task_slots(sc, buckets, wait)
    if buckets > slots:
        return f"{buckets} buckets on {slots} task slots (one resident task per bucket, all at once)"
    return None


def layout_for(sc: Any, model: Model, options: SparkOptions, buckets: int) -> str:
    """"resident" or "levels", as `options.layout` says ("auto": resident where it applies)."""
    if options.layout == "levels":
        return "levels"
    why = not_resident(sc, model, options, buckets)
    if why is None:
        return "resident"
    if options.layout == "resident":
        raise UsageError(f"--spark-layout resident: not with {why}")
    return "levels"


__all__ = ["layout_for", "not_resident", "task_slots"]
