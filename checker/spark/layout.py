"""Which layout a Spark search runs in (SparkOptions.layout; docs/spark.md, "Layouts").

The resident layout (checker/spark/resident/) keeps one task per bucket alive for the whole search; it
does not checkpoint, keep the graph or classify stuck states on the executors, and it needs every task
running at once (a barrier stage). The levels layout (rounds.py, run.py) does all of that. "auto" takes
the resident layout wherever it applies; asking for it where it does not is a usage error naming why.
"""

from __future__ import annotations

from typing import Any

from kreassign.checker.explore.protocol import Model, checked_properties
from kreassign.checker.spark.options import SparkOptions
from kreassign.spec.properties import EVENTUALLY

from kreassign.errors import UsageError


def task_slots(sc: Any) -> int:
    """How many tasks the cluster runs at once now (what a barrier stage needs for its tasks)."""
    try:
        jsc = sc._jsc.sc()
        return int(jsc.maxNumConcurrentTasks(jsc.resourceProfileManager().defaultResourceProfile()))
    except Exception:  # noqa: BLE001 - a Spark without the call: its default parallelism
        return int(sc.defaultParallelism)


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
    slots = task_slots(sc)
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
