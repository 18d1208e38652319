"""One bucket of a resident search: what a long-lived task keeps between levels, and its steps.

The steps are the levels layout's own (checker/spark/tasks.py `dedupe`, `expand`, the checks): the same
discovery keys, deduplication, kernels and findings. What differs is only where their inputs live: the
bucket's visited set stays in this object instead of cached runs re-read every level, the model's
replica stays with its bucket (its tabulated situations are the bucket's own), and each level's keys
are kept here with their global positions, so that the driver never holds them: it asks for the few
a counterexample's path needs (`lookup`).

On the packed path a bucket keeps its states as its own replica's int64 values, as the embedded engine does
(checker/packed/bfs.py): values mean nothing to another replica (packed_codec.py), so only the candidates
sent to another bucket are written as rows, and read back into values by the bucket that receives them.
The visited set, the candidates a bucket keeps for itself and the deduplication are int64 throughout; no
128-bit identity is computed but the low half that picks a successor's bucket, the same as everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from kreassign.checker.spark import tasks as T

#: where a bucket's candidate records go: send(target bucket, record)
Send = Callable[[int, Any], None]

#: states a packed bucket checks and expands at a time: a level's edges (a dozen int64 arrays each) never exist
#: all at once, as in the embedded engine (checker/packed/bfs.py); kraft, 3 partitions, a bucket of a 25M-state
#: level would otherwise hold some 10 GB of temporaries
CHUNK = 1 << 18


def merge_keys(parts: list[np.ndarray]) -> np.ndarray:
    """A level's keys over every bucket, sorted (each part is a bucket's sorted keys: a stable sort merges
    runs in linear time)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return T.EMPTY_I64
    if len(parts) == 1:
        return parts[0]
    return np.sort(np.concatenate(parts), kind="stable")


class ResidentBucket:
    """A bucket's visited set, its current level's new states, and every level's keys with their ranks."""

    def __init__(self, bucket: int, job: dict[str, Any], recipe: Any):
        self.bucket = bucket
        self.rt = T.runtime(job, recipe)
        self.buckets = job["buckets"]
        self.most = job["record_states"]
        self.chunk = CHUNK
        self.packed = self.rt.packed is not None
        self.int64 = self.rt.codec.int64 or self.packed  # (packed: the replica's values, see the module docstring)
        self.visited = T.IntVisited() if self.int64 else T.DigestVisited()
        self.new = T.concat_levels([], self.int64)
        # per level: this bucket's keys (sorted) and their ranks among the level's keys over every bucket
        self.keys: list[np.ndarray] = []
        self.ranks: list[np.ndarray] = []

    def seed(self, blobs: list[tuple[bytes, ...]]) -> T.Level:
        """Level 0: the initial states of this bucket (level blobs in the codec's flavour), with their final keys."""
        if self.packed:
            level = T.concat_levels([T.level_from_blob(b, False) for b in blobs], False)
            values = self.rt.codec.values_of(level.payloads)
            self.new = T.Level(level.keys, values, values)
        else:
            self.new = T.concat_levels([T.level_from_blob(b, self.int64) for b in blobs], self.int64)
        self._visit(self.new)
        return self.new

    def dedupe(self, cands: list[Any], prev_keys: np.ndarray) -> T.Level:
        """The level's new states: the candidates sent to this bucket minus its visited set (which gains them),
        keyed against `prev_keys`, the previous level's keys over every bucket."""
        if self.packed:  # another bucket's rows (digest, best, *row parts) read into this replica's values
            cands = [c if len(c) == 2 else (self.rt.codec.values_of_parts(c[2:]).tobytes(), c[1]) for c in cands]
        if self.int64:
            self.new = T.dedupe_int(cands, self.visited, prev_keys)
        else:
            self.new = T.dedupe_bytes(cands, self.visited, prev_keys, getattr(self.rt.codec, "identities", None))
        self._visit(self.new)
        return self.new

    def _visit(self, level: T.Level) -> None:
        if self.int64:
            self.visited.add(np.sort(level.payloads))
        else:
            self.visited.add(*level.ident)

    def sorted_keys(self) -> np.ndarray:
        return np.sort(self.new.keys)

    def place(self, level_keys: np.ndarray, keep: int | None = None) -> None:
        """Record the level's keys over every bucket (sorted): this bucket's keep their ranks; with `keep`
        (max_states fell in this level) only the states among the first `keep` keys stay."""
        if keep is not None:
            threshold = level_keys[keep - 1] if keep else -1
            self.new = T.select(self.new, self.new.keys <= threshold, self.int64)
        mine = np.sort(self.new.keys)
        self.keys.append(mine)
        self.ranks.append(np.searchsorted(level_keys, mine).astype(np.int64))

    def check_and_expand(self, job: dict[str, Any], expand: bool, send: Send) -> dict[str, Any]:
        """Check the level's new states and, with `expand`, expand them: each candidate record goes to
        `send(target bucket, record)` as soon as it is made (a level's records are never all held here);
        the findings."""
        if self.packed:
            return self._check_and_expand_values(job, expand, send)
        if not expand:
            found = T.Findings()
            if self.int64:
                T.check_states_int(self.rt, self.new, job, found)
            else:
                T.check_and_expand_bytes(self.rt, self.new, job, found, False)
            return {"bucket": self.bucket, **found.to_json()}
        stats: dict[str, Any] = {}
        for target, (tag, value) in T.expand(self.bucket, self.rt, self.new, job, self.visited):
            if target >= 0:
                send(target, value)
            elif tag == T.STATS:
                stats = value
        return stats

    def _check_and_expand_values(self, job: dict[str, Any], expand: bool, send: Send) -> dict[str, Any]:
        """The packed path on the replica's values: each successor's bucket from its situation (the low half of
        its identity, as tasks.candidates_bytes picks it); this bucket's own successors stay values (and those
        it has visited are dropped here), the others are written as rows."""
        found = T.Findings()
        values, keys = self.new.payloads, self.new.keys
        for at in range(0, max(len(values), 1), self.chunk):  # (check_and_expand_values takes empty input too)
            uniq, best = T.check_and_expand_values(self.rt, values[at : at + self.chunk], keys[at : at + self.chunk],
                                                   job, found, expand)
            if len(uniq):
                self._route(uniq, best, send)
        return {"bucket": self.bucket, **found.to_json()}

    def _route(self, uniq: np.ndarray, best: np.ndarray, send: Send) -> None:
        """A chunk's distinct successors into records per target bucket (a state several chunks reach is sent
        once per chunk: the receiving bucket keeps its smallest key)."""
        codec = self.rt.codec
        owner = T.digest_buckets(codec.identities_of_values(uniq)[1], self.buckets)
        for target in range(self.buckets):
            idx = np.flatnonzero(owner == target)
            if target == self.bucket and len(idx):
                idx = idx[self.visited.unknown(uniq[idx])]
            for part in T.record_slices(len(idx), self.most):
                chosen = idx[part]
                if not len(chosen):
                    continue
                if target == self.bucket:
                    record = (uniq[chosen].tobytes(), best[chosen].tobytes())
                else:
                    record = (b"", best[chosen].tobytes(), *codec.parts_of_values(uniq[chosen]))
                send(target, record)

    def lookup(self, wanted: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
        """The keys of the (level, rank) pairs this bucket holds."""
        out = {}
        for level, rank in wanted:
            if level >= len(self.ranks):
                continue
            ranks = self.ranks[level]
            at = int(np.searchsorted(ranks, rank))
            if at < len(ranks) and int(ranks[at]) == rank:
                out[(level, rank)] = int(self.keys[level][at])
        return out


__all__ = ["ResidentBucket", "merge_keys"]
