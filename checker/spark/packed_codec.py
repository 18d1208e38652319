"""How the packed path's states travel between Spark executors: int64 columns, never a payload per state.

Each executor fills its own replica of the packed model (checker/packed/reassignment.py), which numbers the
fields it interns (a partition's (Partition, Ghost) pair, the brokers) in the order it meets them, so a replica's
int64 value means nothing to another replica. What they share is the *content* of a field (its struct form,
codec.StructCodec) and the content's 64-bit fingerprint (BLAKE2b). A batch of states therefore travels as
`PackedRows`:

- `rows`, one uint64 row per state: the budget bits, the brokers' fingerprint, then each partition's;
- a dictionary, fingerprint -> content, for the fingerprints the rows use: one entry per distinct field of
  the batch, not per state (kraft `--brokers 5 --rf 3 --failures 2`: 207,646 states, 24,874 fields).

A receiving replica maps each distinct fingerprint to its own id (interning the content it has not met), then
rebuilds every value with numpy (`PackedCodec.values_of`); a sender turns values into rows with numpy look-ups
(`PackedCodec.rows_of`). Identities are computed from the rows with numpy too (`PackedCodec.identities`): 128
bits whose high half mixes every column and whose low half mixes the fields without the budget (the
*situation*, which decides the bucket, so each situation is tabulated by one replica only) with other
constants; two states share an identity only if both halves collide. Before this module a state travelled as its fields'
content (hundreds of bytes) and was hashed, joined and split one by one in Python.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from kreassign.checker.spark.codec import Codec, StructCodec, frame, unframe

_U64 = np.uint64


def _fingerprint(content: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(content, digest_size=8).digest(), "little")


def _mix(x: np.ndarray, a: int, b: int) -> np.ndarray:
    """A bijective 64-bit finalizer (SplitMix64's / MurmurHash3's shape, with the multipliers given)."""
    x = x ^ (x >> _U64(30))
    x = x * _U64(a)
    x = x ^ (x >> _U64(27))
    x = x * _U64(b)
    return x ^ (x >> _U64(31))


_HI = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x9E3779B97F4A7C15)  # SplitMix64's constants
_LO = (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0xD6E8FEB86659FD93)  # MurmurHash3's fmix64, another seed


def identities(rows: np.ndarray, situation_buckets: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo) identity halves of uint64 rows [budget, field fingerprints...]: hi chains every column, lo
    chains the fields only (not the budget: the situation) with other constants. Buckets come from lo
    (tasks.digest_buckets), and the visited runs search on hi first, which is then rarely shared.
    `situation_buckets=False` (the bench's "before" variant) puts the budget in lo as well."""
    with np.errstate(over="ignore"):
        hi = np.full(len(rows), _U64(_HI[2]))
        for j in range(rows.shape[1]):
            hi = _mix(hi ^ rows[:, j], _HI[0], _HI[1])
        lo = np.full(len(rows), _U64(_LO[2]))
        for j in range(1 if situation_buckets else 0, rows.shape[1]):
            lo = _mix((lo + rows[:, j]) * _U64(_LO[2]), _LO[0], _LO[1])
    return hi, lo


def _marked(ids: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of `ids` (small non-negative integers below `size`), sorted, in linear time."""
    seen = np.zeros(size, dtype=bool)
    seen[ids] = True
    return np.flatnonzero(seen)


class PackedRows:
    """A batch of packed states as int64 columns: `rows` (n × (2 + partitions) uint64) and the dictionary of the
    fingerprints they use (`fps` sorted, `contents` aligned; a superset after `take`, pruned when written)."""

    __slots__ = ("contents", "fps", "rows")

    def __init__(self, rows: np.ndarray, fps: np.ndarray, contents: list[bytes]):
        self.rows, self.fps, self.contents = rows, fps, contents

    def __len__(self) -> int:
        return self.rows.shape[0]

    def take(self, idx: np.ndarray) -> PackedRows:
        return PackedRows(self.rows[idx], self.fps, self.contents)

    def content(self, fp: int) -> bytes:
        j = int(np.searchsorted(self.fps, _U64(fp)))
        if j >= len(self.fps) or int(self.fps[j]) != fp:
            raise ValueError(f"packed rows: fingerprint {fp:#x} has no content in the batch (engine bug)")
        return self.contents[j]

    @staticmethod
    def concat(batches: list[PackedRows]) -> PackedRows:
        batches = [b for b in batches if len(b)]
        if not batches:
            return PackedRows(np.empty((0, 0), dtype=_U64), np.empty(0, dtype=_U64), [])
        if len(batches) == 1:
            return batches[0]
        rows = np.concatenate([b.rows for b in batches])
        fps = np.concatenate([b.fps for b in batches])
        everything = [c for b in batches for c in b.contents]
        fps, first = np.unique(fps, return_index=True)
        return PackedRows(rows, fps, [everything[j] for j in first.tolist()])

    def parts(self) -> tuple[bytes, bytes, bytes]:
        """(head, used fingerprints, their contents framed): three parts, where a list of payloads has two
        (tasks.payload_parts). The head is the width, the budget column's byte width, the budget column, then
        each row's fields as uint32 indices into the used fingerprints: 4 + 4 × fields bytes a state where
        the rows themselves take 8 + 8 × fields (kraft, two partitions: 16 bytes instead of 32)."""
        n = len(self)
        if not n:
            return np.zeros(2, dtype="<i8").tobytes(), b"", frame([])
        fields = self.rows[:, 1:]
        used = np.unique(fields)
        index = np.searchsorted(used, fields).astype("<u4")
        budget = self.rows[:, 0]
        narrow = int(budget.max()) < 1 << 32
        head = np.array([self.rows.shape[1], 4 if narrow else 8], dtype="<i8").tobytes()
        at = np.searchsorted(self.fps, used)
        contents = self.contents
        return (head + budget.astype("<u4" if narrow else "<u8").tobytes() + index.tobytes(),
                used.astype("<u8").tobytes(), frame([contents[j] for j in at.tolist()]))

    @staticmethod
    def from_parts(parts: tuple[bytes, ...]) -> PackedRows:
        head, fps, contents = parts
        width, budget_bytes = (int(x) for x in np.frombuffer(head[:16], dtype="<i8"))
        used = np.frombuffer(fps, dtype="<u8").astype(_U64)
        if not width:
            return PackedRows(np.empty((0, 0), dtype=_U64), used, unframe(contents))
        n = (len(head) - 16) // (budget_bytes + 4 * (width - 1))
        budget = np.frombuffer(head, dtype="<u4" if budget_bytes == 4 else "<u8", count=n, offset=16)
        index = np.frombuffer(head, dtype="<u4", offset=16 + budget_bytes * n).reshape(n, width - 1)
        rows = np.empty((n, width), dtype=_U64)
        rows[:, 0] = budget
        rows[:, 1:] = used[index]
        return PackedRows(rows, used, unframe(contents))

    def __getitem__(self, i: int) -> bytes:
        """One state's payload, self-describing (what codec.decode reads)."""
        return frame(list(self.take(np.array([i])).parts()))

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class PackedCodec(Codec):
    """States of a model on the packed path (checker/packed/reassignment.py `packable`): a replica of the
    packed model, built here from the reference, tabulates and expands on the executors (tasks.py
    `check_and_expand_packed`); batches of states travel as PackedRows (above). A single state's payload
    (`encode`/`decode`, for the driver) is a one-row batch, framed. Identity: `identities`, as 16 bytes."""

    # the version of its identities and payloads: checkpoints record the codec's name, so one written with another
    # scheme (v1: whole-payload digests; v2: content payloads, before int64 rows; v3: rows of 64-bit fingerprints,
    # before uint32 indices) is refused on resume, never mixed
    name = "packed-v4"
    situation_buckets = True  # (bench/spark_replicas.py turns it off: its "before" variant)

    def __init__(self, model: Any):
        from kreassign.checker.packed.reassignment import PackedReassignment
        from kreassign.spec.reassign_properties import Ghost
        from kreassign.spec.state import Broker, Partition

        self.model = model
        self.packed = PackedReassignment(model, workers=1, kernel=True)
        self._part, self._ghost, self._broker = StructCodec(Partition), StructCodec(Ghost), StructCodec(Broker)
        self._local_bytes: list[bytes] = []  # replica id -> content (of every field interned so far)
        self._env_bytes: list[bytes] = []
        self._local_fp = np.empty(0, dtype=_U64)  # replica id -> fingerprint
        self._env_fp = np.empty(0, dtype=_U64)
        self._local_of: dict[int, int] = {}  # fingerprint -> replica id
        self._env_of: dict[int, int] = {}
        p = self.packed
        self.budget_mask = (1 << p.budget_total_bits) - 1

    # -- fields: replica ids <-> fingerprints and contents
    def _grow(self) -> None:
        """Contents and fingerprints of every field the replica has interned (each computed once)."""
        p = self.packed
        if len(self._local_bytes) < len(p.locals):
            new = []
            for part, ghost in p.locals[len(self._local_bytes):]:
                data = self._part.encode(part)[1] + b"\n" + self._ghost.encode(ghost)[1]
                fp = _fingerprint(data)
                self._local_of.setdefault(fp, len(self._local_bytes))
                self._local_bytes.append(data)
                new.append(fp)
            self._local_fp = np.concatenate([self._local_fp, np.array(new, dtype=_U64)])
        if len(self._env_bytes) < len(p.envs):
            new = []
            for brokers in p.envs[len(self._env_bytes):]:
                data = b"\n".join(self._broker.encode(b)[1] for b in brokers)
                fp = _fingerprint(data)
                self._env_of.setdefault(fp, len(self._env_bytes))
                self._env_bytes.append(data)
                new.append(fp)
            self._env_fp = np.concatenate([self._env_fp, np.array(new, dtype=_U64)])

    def _ids(self, column: np.ndarray, batch: PackedRows, local: bool) -> np.ndarray:
        """This replica's ids of a column of fingerprints (interning the contents it has not met)."""
        uniq, inverse = np.unique(column, return_inverse=True)
        known = self._local_of if local else self._env_of
        out = np.empty(len(uniq), dtype=np.int64)
        for j, fp in enumerate(uniq.tolist()):
            i = known.get(fp)
            out[j] = i if i is not None else self._intern(fp, batch.content(fp), local)
        return out[inverse.reshape(-1)]

    def _intern(self, fp: int, data: bytes, local: bool) -> int:
        """This replica's id of a field it has not met, interned from its content."""
        if local:
            part, ghost = data.split(b"\n", 1)
            i = self.packed.intern_local(self._part.decode(part), self._ghost.decode(ghost))
        else:
            i = self.packed.intern_env(tuple(self._broker.decode(b) for b in data.split(b"\n")))
        self._grow()
        return (self._local_of if local else self._env_of).setdefault(fp, i)

    # -- batches straight from and to replica values, in linear time (the resident layout's; same bytes)
    def parts_of_values(self, values: np.ndarray) -> tuple[bytes, bytes, bytes]:
        """`rows_of(values).parts()` without sorting the rows: the replica's ids are small integers, so the
        batch's distinct fields are marked in a table of ids, and only they are sorted by fingerprint."""
        if not len(values):
            return PackedRows(np.empty((0, 0), dtype=_U64), np.empty(0, dtype=_U64), []).parts()
        p = self.packed
        self._grow()
        locs, env, _ = p.fields(values)
        env_used = _marked(env, len(self._env_fp))
        loc_used = _marked(np.concatenate(locs), len(self._local_fp))
        fps = np.concatenate([self._env_fp[env_used], self._local_fp[loc_used]])
        order = np.argsort(fps, kind="stable")
        ordered = fps[order]
        first = np.concatenate(([True], ordered[1:] != ordered[:-1]))  # (two ids of one content: one entry)
        rank = np.empty(len(fps), dtype=np.int64)
        rank[order] = np.cumsum(first) - 1
        env_index = np.zeros(len(self._env_fp), dtype="<u4")
        env_index[env_used] = rank[: len(env_used)]
        loc_index = np.zeros(len(self._local_fp), dtype="<u4")
        loc_index[loc_used] = rank[len(env_used):]
        index = np.empty((len(values), 1 + p.partitions), dtype="<u4")
        index[:, 0] = env_index[env]
        for k, loc in enumerate(locs):
            index[:, 1 + k] = loc_index[loc]
        budget = values & self.budget_mask
        narrow = int(budget.max()) < 1 << 32
        head = np.array([2 + p.partitions, 4 if narrow else 8], dtype="<i8").tobytes()
        ids = np.concatenate([env_used, loc_used])[order[first]]
        is_env = order[first] < len(env_used)
        contents = [self._env_bytes[i] if e else self._local_bytes[i] for i, e in zip(ids.tolist(), is_env.tolist())]
        return (head + budget.astype("<u4" if narrow else "<u8").tobytes() + index.tobytes(),
                ordered[first].astype("<u8").tobytes(), frame(contents))

    def values_of_parts(self, parts: tuple[bytes, ...]) -> np.ndarray:
        """`values_of(PackedRows.from_parts(parts))` without sorting the rows: each distinct field of the batch is
        looked up (or interned) once, then every row's value is built from its indices."""
        head, fps, contents = parts
        width, budget_bytes = (int(x) for x in np.frombuffer(head[:16], dtype="<i8"))
        if not width:
            return np.empty(0, dtype=np.int64)
        used = np.frombuffer(fps, dtype="<u8").astype(_U64)
        n = (len(head) - 16) // (budget_bytes + 4 * (width - 1))
        budget = np.frombuffer(head, dtype="<u4" if budget_bytes == 4 else "<u8", count=n, offset=16)
        index = np.frombuffer(head, dtype="<u4", offset=16 + budget_bytes * n).reshape(n, width - 1)
        p, datas = self.packed, None
        out = budget.astype(np.int64)
        for column, shift, local in [(0, p.env_shift, False), *((1 + k, p.local_shift[k], True)
                                                                for k in range(p.partitions))]:
            col = index[:, column]
            table = np.zeros(len(used), dtype=np.int64)
            known = self._local_of if local else self._env_of
            for j in _marked(col, len(used)).tolist():
                fp = int(used[j])
                i = known.get(fp)
                if i is None:
                    datas = datas if datas is not None else unframe(contents)
                    i = self._intern(fp, datas[j], local)
                table[j] = i
            out |= table[col] << shift
        return out

    # -- batches
    def fingerprint_rows(self, values: np.ndarray) -> np.ndarray:
        """The uint64 rows of replica values (budget, then the fields' fingerprints): what `identities` mixes."""
        return self._rows_and_fields(values)[0]

    def _rows_and_fields(self, values: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        p = self.packed
        self._grow()
        locs, env, _ = p.fields(values)
        rows = np.empty((len(values), 2 + p.partitions), dtype=_U64)
        rows[:, 0] = (values & self.budget_mask).astype(_U64)
        rows[:, 1] = self._env_fp[env]
        for k, loc in enumerate(locs):
            rows[:, 2 + k] = self._local_fp[loc]
        return rows, locs, env

    def rows_of(self, values: np.ndarray) -> PackedRows:
        """The batch of replica values (in order)."""
        rows, locs, env = self._rows_and_fields(values)
        env_ids = np.unique(env)
        local_ids = np.unique(np.concatenate(locs)) if len(locs) else np.empty(0, dtype=np.int64)
        fps = np.concatenate([self._env_fp[env_ids], self._local_fp[local_ids]])
        contents = [self._env_bytes[i] for i in env_ids.tolist()] + [self._local_bytes[i] for i in local_ids.tolist()]
        fps, first = np.unique(fps, return_index=True)
        return PackedRows(rows, fps, [contents[j] for j in first.tolist()])

    def values_of(self, batch: Any) -> np.ndarray:
        """The replica value of each state of a batch (PackedRows, or a list of single payloads)."""
        if isinstance(batch, list):
            batch = self.gather(batch)
        if not len(batch):
            return np.empty(0, dtype=np.int64)
        p, rows = self.packed, batch.rows
        out = rows[:, 0].astype(np.int64)
        out |= self._ids(rows[:, 1], batch, local=False) << p.env_shift
        for k in range(p.partitions):
            out |= self._ids(rows[:, 2 + k], batch, local=True) << p.local_shift[k]
        return out

    def identities(self, batch: PackedRows) -> tuple[np.ndarray, np.ndarray]:
        return identities(batch.rows, self.situation_buckets)

    def identities_of_values(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The identities of replica values: those of their rows, without writing the rows' dictionary."""
        return identities(self.fingerprint_rows(values), self.situation_buckets)

    def gather(self, payloads: list[bytes]) -> PackedRows:
        return PackedRows.concat([PackedRows.from_parts(tuple(unframe(p))) for p in payloads])

    def states_of(self, payloads: Any) -> list[Any]:
        return [self.packed.unpack(v) for v in self.values_of(payloads).tolist()]

    # -- single states (the driver's)
    def encode(self, state: Any) -> tuple[bytes, bytes]:
        batch = self.rows_of(np.array([self.packed.pack(state)], dtype=np.int64))
        hi, lo = self.identities(batch)
        return np.array([hi[0], lo[0]], dtype=">u8").tobytes(), batch[0]

    def decode(self, payload: bytes) -> Any:
        return self.packed.unpack(int(self.values_of([payload])[0]))


__all__ = ["PackedCodec", "PackedRows", "identities"]
