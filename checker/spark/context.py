"""What every part of one Spark run reads: Spark, the model and its codec, the buckets, the options.

Built once per run (`RunContext.build`); `ship` broadcasts the model's recipe when the search
starts, and `job` describes a level's work to the tasks (checker/spark/tasks.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kreassign.checker.explore.protocol import Model, checked_properties
from kreassign.checker.spark.codec import Codec, CodecError
from kreassign.checker.spark.codec_choice import check_codec, codec_for
from kreassign.checker.spark.options import SparkOptions
from kreassign.checker.spark.packed_codec import PackedCodec
from kreassign.checker.spark.recipes import model_recipe, recipe_id
from kreassign.checker.spark.search import Found
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION

from kreassign.errors import UsageError


@dataclass
class RunContext:
    sc: Any  # the SparkContext
    model: Model
    options: SparkOptions
    buckets: int  # partitions of every RDD of the search: a state's bucket is a hash of its identity
    properties: dict[str, Any]  # name -> Property
    kernel: bool  # the model answers with arrays (successor_arrays, action_of)
    inits: list[Any]  # the distinct initial states, at most max_states
    inits_truncated: bool  # max_states cut the initial states
    codec: Codec | None  # how states travel (None: no initial state)
    liveness: bool  # eventually properties classified on the executors: every level's states kept
    checkpointing: bool  # every level saved (a checkpoint directory, and states to save)
    storage: str = "MEMORY_AND_DISK"  # the StorageLevel of the search's cached RDDs (options.storage)
    task_timings: bool = False  # options.task_timings, or spark.kreassign.taskTimings=true
    recipe_id: str = ""  # set by `ship`
    recipe_bc: Any = None  # the model's recipe, broadcast by `ship`

    @classmethod
    def build(cls, sc: Any, model: Model, options: SparkOptions) -> RunContext:
        properties = {p.name: p for p in checked_properties(model)}
        inits, truncated = _initial_states(model, options.max_states)
        codec = None
        if inits and _packed_path(model, options):
            codec = codec_for(model, inits[0], "packed")
            check_codec(codec, inits)
        elif inits:
            codec = codec_for(model, inits[0])
            try:
                check_codec(codec, inits)
            except CodecError:
                if codec.name != "struct":
                    raise
                codec = codec_for(model, inits[0], "json")  # e.g. a field typed Any
                check_codec(codec, inits)
        conf = sc.getConf()
        buckets = cls.buckets_for(sc, options)
        timings = (conf.get("spark.kreassign.taskTimings", "false") or "false").strip().lower()
        if timings not in ("true", "false"):
            raise UsageError(f"spark.kreassign.taskTimings: expected true or false, got {timings!r}")
        storage = options.storage or sc.getConf().get("spark.kreassign.storage", "MEMORY_AND_DISK")
        if not storage.isupper() or not hasattr(_storage_levels(), storage):
            raise UsageError(f"spark.kreassign.storage: {storage!r} is not a pyspark StorageLevel "
                             "(MEMORY_AND_DISK, DISK_ONLY, MEMORY_ONLY, ...)")
        kernel = callable(getattr(model, "successor_arrays", None)) and callable(getattr(model, "action_of", None))
        return cls(
            sc=sc, model=model, options=options, buckets=buckets, properties=properties, kernel=kernel,
            inits=inits, inits_truncated=truncated, codec=codec,
            # (a graph on the driver serves liveness there; without `eventually` properties there is none)
            liveness=options.liveness and not options.keep_graph
            and any(p.kind == EVENTUALLY for p in properties.values()),
            checkpointing=options.checkpoint_root is not None and codec is not None, storage=storage,
            task_timings=options.task_timings or timings == "true",
        )

    @staticmethod
    def buckets_for(sc: Any, options: SparkOptions) -> int:
        """The buckets of a run: `options.partitions`, else spark.kreassign.partitions, else the default parallelism."""
        raw = (sc.getConf().get("spark.kreassign.partitions", "0") or "0").strip()
        if not raw.isdigit():
            raise UsageError(f"spark.kreassign.partitions: expected a number of buckets, got {raw!r}")
        return int(options.partitions or int(raw)) or max(1, sc.defaultParallelism)

    def storage_level(self) -> Any:
        """The StorageLevel every cached RDD of the search uses."""
        return getattr(_storage_levels(), self.storage)

    @property
    def int64(self) -> bool:
        return bool(self.codec and self.codec.int64)

    @property
    def model_name(self) -> str:
        return getattr(self.model, "name", "the model")

    def ship(self) -> None:
        """Broadcast how executors rebuild the model (checker/spark/recipes.py)."""
        # (the packed codec is rebuilt on the executors from the model: its replica is theirs to fill)
        recipe = model_recipe(self.model, None if self.codec is not None and self.codec.name == PackedCodec.name
                              else self.codec)
        self.recipe_id = recipe_id(recipe)
        self.recipe_bc = self.sc.broadcast(recipe)

    def job(self, found: Found, mode: str, **extra: Any) -> dict[str, Any]:
        """A level's work for the tasks, which check only the properties not `found` yet."""
        opts, props = self.options, self.properties.items()
        return {
            "recipe_id": self.recipe_id,
            "codec": self.codec.name,
            "buckets": self.buckets,
            "mode": mode,
            "always": [n for n, p in props if p.kind == ALWAYS and n not in found.violations],
            "sometimes": [n for n, p in props if p.kind == SOMETIMES and n not in found.examples],
            "transition": [n for n, p in props if p.kind == TRANSITION and n not in found.edge_violations],
            "check_deadlock": opts.check_deadlock and found.deadlock is None,
            "keep_graph": opts.keep_graph,
            "keep_states": opts.keep_graph or self.liveness or self.checkpointing,
            "save_states": self.checkpointing,
            "task_timings": self.task_timings,
            "record_states": opts.record_states,
            **extra,
        }


def _storage_levels() -> Any:
    from pyspark import StorageLevel

    return StorageLevel


def _packed_path(model: Model, options: SparkOptions) -> bool:
    """Does the search take the packed path (the embedded engine's, checker/packed/reassignment.py `packable`):
    tasks expand with a replica of the packed model (packed_codec.PackedCodec, tasks.check_and_expand_packed)?
    Not with the whole graph on the driver (`keep_graph`: fair liveness), whose edge labels the object path gives."""
    if options.keep_graph or not options.packed:
        return False
    from kreassign.checker.packed.reassignment import packable

    try:
        return packable(model)
    except Exception:  # noqa: BLE001 - a model packable() cannot read is not one of the packed path's
        return False


def _initial_states(model: Model, max_states: int | None) -> tuple[list[Any], bool]:
    """The distinct initial states in the model's order, and whether `max_states` cut them."""
    out, seen = [], set()
    for s in model.init_states():
        if s not in seen:
            if max_states is not None and len(out) >= max_states:
                return out, True
            seen.add(s)
            out.append(s)
    return out, False


__all__ = ["RunContext"]
