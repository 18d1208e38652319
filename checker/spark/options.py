"""How one Spark exploration runs: one frozen value instead of a dozen loose parameters.

`kreassign check --engine spark` builds it once from its flags (checker/cli/check.py) and hands it
to `spark_explorer`; `explore_spark(model, options)` and `SparkRun(sc, model, options)` take the
same value. The search's own options (bfs.explore's) are fields too: the explorer sets them per
call from what `check_model` asks for (`for_search`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from kreassign.checker.spark.checkpoint_files import absolute_uri

#: SparkOptions.layout's values
LAYOUTS = ("auto", "resident", "levels")

#: the options an explorer with bfs.explore's signature receives on each call
SEARCH_FIELDS = ("max_states", "max_depth", "check_deadlock", "stop_on_violation", "keep_graph", "progress", "watch")


@dataclass(frozen=True)
class SparkOptions:
    # the session: explicit settings win over spark-submit's and spark-defaults.conf's (--master, --conf)
    master: str | None = None  # None: spark-submit's or spark-defaults' master, else local[*]
    conf: Mapping[str, str] = field(default_factory=dict)  # read-only once built
    timeout: float | None = None  # s without any executor before giving up (--spark-timeout; None: 120)
    #: buckets the states are spread over (None: spark.kreassign.partitions, else the session's default
    #: parallelism)
    partitions: int | None = None
    # checkpoints: every level kept in checkpoint_dir (--checkpoint); resume_dir continues the runs kept
    # there and keeps checkpointing into it (--resume)
    checkpoint_dir: str | None = None
    resume_dir: str | None = None
    # the search: bfs.explore's options, same meanings (docs/spark.md says where results differ)
    max_states: int | None = None
    max_depth: int | None = None
    check_deadlock: bool = False
    stop_on_violation: bool = False
    keep_graph: bool = False
    progress: Callable[[int, int, float], None] | None = None  # (states, depth, states per second)
    #: asked before each level with the states so far: a reason to stop ("max-memory: ...") or None (bfs.explore's
    #: `watch`; --max-memory: the driver's memory, checker/config/limits.py)
    watch: Callable[[int], str | None] | None = None
    liveness: bool = False  # stuck states classified on the executors (no graph on the driver)
    warmup: bool = True  # the first, small levels on the driver (False: every level on Spark)
    #: each task prints its phases' times on stderr (a development aid; also spark.kreassign.taskTimings=true)
    task_timings: bool = False
    #: a file for the stderr of the JVM kreassign starts (None: this process's stderr); `kreassign check --json`
    #: sets it when stderr is stdout (`2>&1`), so that the JVM's own lines stay out of the JSON
    jvm_stderr: str | None = None
    #: packable models (checker/packed/reassignment.py) on the packed path, as the embedded engine takes it
    #: (False: the object path, the engine before issue 28; `check --no-fast`)
    packed: bool = True
    #: the most states in one record (a level's states, a visited run, the candidates for one bucket,
    #: tasks.record_slices): a wide level is many records, not one array the JVM copies whole
    record_states: int = 1 << 18
    #: how the search's RDDs are cached (a pyspark.StorageLevel name; None: spark.kreassign.storage, else
    #: MEMORY_AND_DISK). DISK_ONLY keeps the executors' heaps for the records in flight (the OS caches the files)
    storage: str | None = None
    #: a level's discovery keys (8 bytes a state, the driver's) go to a memory-mapped file once the next level is
    #: found if it has at least this many (None: never): the driver then holds the keys of its last level only
    spill_keys: int | None = 1 << 20
    #: how the search runs on Spark (docs/spark.md, "Layouts"): "resident" (one long-lived task per bucket, a
    #: barrier stage: the visited set and the model's replica stay with their bucket, tasks exchange states
    #: directly), "levels" (one Spark job per level over cached RDDs: checkpoints, liveness on the executors,
    #: executors lost and recomputed), or "auto": resident where it applies (layout_for), else levels
    layout: str = "auto"

    def __post_init__(self) -> None:
        object.__setattr__(self, "conf", MappingProxyType(dict(self.conf)))
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout: expected one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        if self.checkpoint_dir and self.resume_dir and \
                absolute_uri(self.checkpoint_dir) != absolute_uri(self.resume_dir):
            raise ValueError("--resume continues checkpointing into its own directory: "
                             "drop --checkpoint or use the same one")

    @property
    def checkpoint_root(self) -> str | None:
        """The directory levels are saved in (and, when resuming, read from)."""
        return self.checkpoint_dir or self.resume_dir

    @property
    def resume(self) -> bool:
        return self.resume_dir is not None

    def for_search(self, **search: Any) -> SparkOptions:
        """These options with bfs.explore's keyword arguments applied (TypeError for any other name)."""
        unknown = sorted(set(search) - set(SEARCH_FIELDS))
        if unknown:
            raise TypeError(f"the Spark explorer takes bfs.explore's options, not {', '.join(unknown)}")
        return replace(self, **search)


#: the defaults: the user's (or spark-submit's) session, else local[*]; no checkpoint; a plain search
DEFAULT_OPTIONS = SparkOptions()

__all__ = ["DEFAULT_OPTIONS", "LAYOUTS", "SEARCH_FIELDS", "SparkOptions"]
