"""The search so far, on the driver: each level's discovery keys, the counts, the findings.

The driver keeps each level's sorted discovery keys (checker/spark/tasks.py), 8 bytes a state, which
are the BFS tree, so paths are rebuilt from them (checker/spark/results.py); a large level's keys move
to a memory-mapped file of a temporary directory once the next level is found (SparkOptions.spill_keys),
so the driver's memory follows the widest level, not the whole search. Findings are discovery keys too
(`Found`); `absorb` folds one level's results in, as the embedded engine would have met them.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.options import SparkOptions

from kreassign.errors import InfraError


@dataclass
class Found:
    """Findings so far, as discovery keys: (level, key) of a state, (level, key, k) of an edge."""

    violations: dict[str, tuple[int, int]] = field(default_factory=dict)
    examples: dict[str, tuple[int, int]] = field(default_factory=dict)
    edge_violations: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    deadlock: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"violations": self.violations, "examples": self.examples,
                "edge_violations": self.edge_violations, "deadlock": self.deadlock}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Found:
        return Found({n: tuple(v) for n, v in d["violations"].items()},
                     {n: tuple(v) for n, v in d["examples"].items()},
                     {n: tuple(v) for n, v in d["edge_violations"].items()},
                     tuple(d["deadlock"]) if d["deadlock"] is not None else None)


@dataclass
class SearchSoFar:
    options: SparkOptions
    truncated: bool = False  # max_states cut the search
    dropped: bool = False  # max_depth left new states unexplored
    stopped: str | None = None  # a run limit's reason to stop other than max_states (watch: --max-memory)
    level_keys: list[np.ndarray] = field(default_factory=list)  # per level, the sorted discovery keys
    states: int = 0
    transitions: int = 0
    depth: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # action kind -> edges
    found: Found = field(default_factory=Found)
    # with keep_graph: per level, the buckets' state blobs and edge blobs
    graph_states: list[list[tuple[bytes, ...]]] = field(default_factory=list)
    graph_edges: list[list[tuple[bytes, ...]]] = field(default_factory=list)
    spilled: Any = None  # the temporary directory of the keys' files (removed with this object, or at exit)

    def complete(self, done: bool) -> bool:
        """Did a search that reached its end (`done`) explore everything?"""
        return done and not (self.truncated or self.dropped or self.stopped)

    def counts(self) -> dict[str, Any]:
        """What a checkpoint's meta.json records of the search."""
        return {"states": self.states, "transitions": self.transitions, "depth": self.depth,
                "kinds": self.kinds, "found": self.found.to_json(), "level_sizes": [len(k) for k in self.level_keys]}

    def restore(self, meta: dict[str, Any]) -> None:
        """The counts and findings a checkpoint recorded (the level keys are read from its files)."""
        self.states, self.transitions, self.depth = meta["states"], meta["transitions"], meta["depth"]
        self.kinds = dict(meta["kinds"])
        self.found = Found.from_json(meta["found"])

    def _spill(self, level: int) -> None:
        """Level `level`'s keys to a memory-mapped file (read back page by page when a path needs them)."""
        keys, most = self.level_keys[level], self.options.spill_keys
        if most is None or len(keys) < most or isinstance(keys, np.memmap):
            return
        if self.spilled is None:
            self.spilled = tempfile.TemporaryDirectory(prefix="kreassign-keys-")
        path = Path(self.spilled.name) / f"level-{level}.npy"
        np.save(path, keys)
        self.level_keys[level] = np.load(path, mmap_mode="r")

    def absorb(self, level: int, results: list[tuple[str, Any]]) -> tuple[bool, bool]:
        """Fold one level's results into the search; return (stop, done)."""
        stats = [v for tag, v in results if tag == T.STATS]
        keys = np.sort(np.concatenate([np.frombuffer(s["keys"], dtype=np.int64) for s in stats]))
        if not len(keys):
            return True, True
        if len(keys) >= 1 << 31:  # a parent's rank must leave room for two edge indices in an int64
            raise InfraError(f"level {level} has {len(keys):,} states: the Spark engine's discovery keys hold up to "
                             "2**31 per level")
        threshold = None
        if self.options.max_states is not None and self.states + len(keys) > self.options.max_states:
            room = self.options.max_states - self.states
            self.truncated = True
            keys = keys[:room]
            if not room:
                return True, False
            threshold = int(keys[-1])
        self.level_keys.append(keys)
        if len(self.level_keys) > 1:
            self._spill(len(self.level_keys) - 2)  # (the last level's keys are broadcast to the next level)
        if self.options.keep_graph:
            self.graph_states.append([v[1] for tag, v in results if tag == T.STATES])
            self.graph_edges.append([] if self.truncated else [v[1] for tag, v in results if tag == T.EDGES])
        return self.fold(level, len(keys), stats, threshold)

    def fold(self, level: int, count: int, stats: list[dict[str, Any]],
             threshold: int | None = None) -> tuple[bool, bool]:
        """Fold a level of `count` kept states into the counts and findings, from its buckets' STATS (each
        finding the smallest key over the buckets; with `threshold`, only keys up to it: the states kept under
        max_states); return (stop, done). `absorb` calls it once it has the level's keys; the resident layout
        (checker/spark/resident/), whose keys stay on the executors, calls it directly."""
        self.states += count
        self.depth += 1
        for table, part in ((self.found.violations, "violations"), (self.found.examples, "examples")):
            first: dict[str, int] = {}  # the smallest key over the buckets
            for s in stats:
                for name, key in s[part].items():
                    first[name] = min(key, first.get(name, key))
            for name, key in first.items():
                if name not in table and (threshold is None or key <= threshold):
                    table[name] = (level, key)
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
        if deadlocks and self.found.deadlock is None and self.options.check_deadlock:
            self.found.deadlock = (level, min(deadlocks))
        found = self.found
        stopping = self.options.stop_on_violation and bool(
            found.violations or found.edge_violations or (self.options.check_deadlock and found.deadlock))
        if transitions == 0:
            return True, True
        return stopping, False


__all__ = ["Found", "SearchSoFar"]
