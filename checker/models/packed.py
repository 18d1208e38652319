"""The reassignment model packed into int64 states, its successors tabulated from the reference.

A state of `ReassignmentModel` is, for the profiles without controller-wide bookkeeping
(kraft, kraft-3.7, kip455: `cluster.zk` and `cluster.kip236` are None), the brokers, one
(partition, ghost) pair per partition and the budget. Here each of those is interned:

    state = local id of partition 0 | local id of partition 1 | ... | brokers id | budget slots

as bit fields of one non-negative int64. A *local situation* is (local id, brokers id):
one partition with its ghost, in a cluster of those brokers. The successors of a local
situation are found by asking the reference once — a one-partition ReassignmentModel
(`local_model`) steps every enabled action from it — and kept in arrays (the table).
The engine then expands whole chunks of states with numpy gathers from the table, so
the fast path cannot drift from the reference by construction; it only relies on the
reference being partition-local:

- an action that names a partition changes only that partition and its ghost, and what
  it does depends on that partition, its ghost, the brokers and the topic config;
- an action that names none (broker failure / recovery, controller failover) changes
  the brokers the same way whatever the partitions are, and each partition as it would
  in a cluster holding that partition alone;
- every property is a conjunction over partitions (spec/reassign_properties.py writes
  them with `_parts`), so a state (edge) satisfies it iff each partition does.

tests/unit/test_fast_packed.py checks all of it the way the architecture asks: on every
state of small configurations (one and two partitions) the packed model has the same
states, the same edges, the same property verdicts as the reference-backed model.
`concretize` replays a packed path through the reference model and checks every state
it reaches packs back to the path's int, so a counterexample is always the reference's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION
from kreassign.spec.reassign_properties import PROPERTIES, ModelState
from kreassign.spec.state import ClusterState

from kreassign.checker.explore.liveness import environment_edge
from kreassign.checker.models.reassign import ReassignmentModel

#: properties whose definition is a conjunction over partitions (checked by the differential test)
DECOMPOSABLE = frozenset(p.name for p in PROPERTIES)

LOCAL_BUDGET = (1, 1, 1, 1)  # the local model may take every action; the packed budget decides


class NotPackable(ValueError):
    """The model has controller-wide state or properties the packed encoding cannot split."""


def packable(model: Any) -> bool:
    """Can `model` run on the packed path? (A plain ReassignmentModel of a partition-local profile.)"""
    if type(model) is not ReassignmentModel:
        return False
    if model.profile.deferred_requests:
        return False
    if any(p.name not in DECOMPOSABLE for p in model.properties()):
        return False
    init = model.init_states()
    return len(init) == 1 and init[0].cluster.zk is None and init[0].cluster.kip236 is None


def _bits(n: int) -> int:
    return max(1, int(n).bit_length())


class PackedReassignment:
    """`model` (a ReassignmentModel) with int64 states and tabulated successors."""

    def __init__(self, model: ReassignmentModel):
        if not packable(model):
            raise NotPackable(f"profile {model.profile_name} keeps controller-wide state; no packed encoding")
        self.inner = model
        self.name = model.name
        b = model.bounds
        self.partitions = b.partitions
        init = model.init_states()[0]
        self.topic_template = init.cluster.topics[0]
        # the one-partition model: same profile and bounds, every budget available
        self.local_model = ReassignmentModel(
            model.profile,
            replace(b, partitions=1, initial=(tuple(init.cluster.topics[0].partitions[0].replicas),),
                    reassigns=1, cancels=1, failures=1, failovers=1),
        )
        self.props = list(model.properties())
        self.always = [p for p in self.props if p.kind == ALWAYS]
        self.edge_props = [p for p in self.props if p.kind == TRANSITION]
        self.goals = [p for p in self.props if p.kind == EVENTUALLY]
        self.sometimes = [p for p in self.props if p.kind == SOMETIMES]
        # interning
        self.locals: list[tuple[Any, Any]] = []  # local id -> (partition, ghost)
        self.local_ids: dict[tuple[Any, Any], int] = {}
        self.envs: list[tuple[Any, ...]] = []  # brokers id -> tuple of Broker
        self.env_ids: dict[tuple[Any, ...], int] = {}
        self.codes: list[Any] = []  # local action code -> local action (partition 0) or global action
        self.code_ids: dict[Any, int] = {}
        self.is_global: list[bool] = []
        self.environment: list[bool] = []  # liveness: may a stuck partition take it without an admin?
        # bit layout: partitions' local ids, brokers id, budget slots (lowest first)
        budget_max = init.budget
        self.budget_bits = [_bits(x) for x in budget_max]
        self.env_bits = max(1, len(init.cluster.brokers) + 1)
        free = 63 - sum(self.budget_bits) - self.env_bits
        self.local_bits = min(free // self.partitions, 31)
        if self.local_bits < 10:
            raise NotPackable(f"{self.partitions} partitions do not fit the 63-bit packed state")
        shift = 0
        self.budget_shift = []
        for nb in self.budget_bits:
            self.budget_shift.append(shift)
            shift += nb
        self.env_shift = shift
        shift += self.env_bits
        self.local_shift = [shift + k * self.local_bits for k in range(self.partitions)]
        # the table: per budget group (0: actions that spend nothing, 1 + slot: actions spending
        # that slot), a row per tabulated local situation; a group is tabulated only for states
        # that still have that budget, so the reference is asked no more than the search needs
        self.groups = [_Group(self.env_bits, 2 * len(init.cluster.brokers) + 4) for _ in range(1 + len(budget_max))]
        self.bits: dict[tuple[int, int], tuple[int, int, int]] = {}  # (local, env) -> (always, goal, sometimes)
        self.reference_calls = 0
        self.init_state = self.pack(init)

    # -- interning and packing -----------------------------------------------------------------
    def _local(self, part: Any, ghost: Any) -> int:
        key = (part, ghost)
        i = self.local_ids.get(key)
        if i is None:
            i = self.local_ids[key] = len(self.locals)
            if i >= 1 << self.local_bits:
                raise NotPackable(f"more than {1 << self.local_bits} partition-local states")
            self.locals.append(key)
        return i

    def _env(self, brokers: tuple[Any, ...]) -> int:
        i = self.env_ids.get(brokers)
        if i is None:
            i = self.env_ids[brokers] = len(self.envs)
            if i >= 1 << self.env_bits:
                raise NotPackable("too many broker configurations for the packed state")
            self.envs.append(brokers)
        return i

    def _code(self, action: Any, is_global: bool, environment: bool) -> int:
        i = self.code_ids.get(action)
        if i is None:
            i = self.code_ids[action] = len(self.codes)
            self.codes.append(action)
            self.is_global.append(is_global)
            self.environment.append(environment)
        return i

    def pack(self, ms: ModelState) -> int:
        c = ms.cluster
        if c.zk is not None or c.kip236 is not None or len(c.topics) != 1:
            raise NotPackable("not a partition-local state")
        value = self._env(c.brokers) << self.env_shift
        for k, (part, ghost) in enumerate(zip(c.topics[0].partitions, ms.ghosts)):
            value |= self._local(part, ghost) << self.local_shift[k]
        for k, left in enumerate(ms.budget):
            value |= left << self.budget_shift[k]
        return value

    def unpack(self, value: int) -> ModelState:
        value = int(value)
        lm = (1 << self.local_bits) - 1
        pairs = [self.locals[(value >> s) & lm] for s in self.local_shift]
        brokers = self.envs[(value >> self.env_shift) & ((1 << self.env_bits) - 1)]
        topic = replace(self.topic_template, partitions=tuple(p for p, _ in pairs))
        budget = tuple((value >> s) & ((1 << nb) - 1) for s, nb in zip(self.budget_shift, self.budget_bits))
        return ModelState(ClusterState(brokers, (topic,)), tuple(g for _, g in pairs), budget)

    def action_of(self, action_id: int) -> Any:
        code, k = divmod(int(action_id), self.partitions)
        a = self.codes[code]
        return a if self.is_global[code] else replace(a, partition=k)

    # -- tabulation: the reference, once per local situation ---------------------------------------
    def _local_state(self, local: int, env: int) -> ModelState:
        part, ghost = self.locals[local]
        topic = replace(self.topic_template, partitions=(part,))
        return ModelState(ClusterState(self.envs[env], (topic,)), (ghost,), LOCAL_BUDGET)

    def tabulate(self, group: int, local: int, env: int) -> None:
        """Step the actions of one budget group enabled in one local situation through the reference."""
        g = self.groups[group]
        if (local, env) in g.done:
            return
        lm = self.local_model
        ms = self._local_state(local, env)
        local_edges, global_edges = [], []
        for a in lm.actions(ms):
            slot = lm._budget_slot(a)
            slot = -1 if slot is None else slot
            if slot + 1 != group:
                continue
            nxt, label = lm.step(ms, a)
            self.reference_calls += 1
            c = nxt.cluster
            if c.zk is not None or c.kip236 is not None:
                raise NotPackable("the profile wrote controller-wide state")
            new_local = self._local(c.topics[0].partitions[0], nxt.ghosts[0])
            new_env = self._env(c.brokers)
            ok = 0
            for bit, prop in enumerate(self.edge_props):
                if prop.predicate(ms, label, nxt):
                    ok |= 1 << bit
            if getattr(a, "partition", None) is None:
                global_edges.append((self._code(a, True, environment_edge(a)), new_local, new_env, ok))
            else:
                if new_env != env:
                    raise NotPackable(f"{a} changed the brokers: not partition-local")
                local_edges.append((self._code(a, False, environment_edge(a)), new_local, ok))
        g.add(local, env, local_edges, global_edges, self)
        if group == 0:
            inv = sum(1 << k for k, p in enumerate(self.always) if p.predicate(ms))
            goal = sum(1 << k for k, p in enumerate(self.goals) if p.predicate(ms))
            some = sum(1 << k for k, p in enumerate(self.sometimes) if p.predicate(ms))
            self.bits[(local, env)] = (inv, goal, some)

    # -- vectorised expansion ---------------------------------------------------------------------
    def fields(self, states: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray]]:
        lm, em = (1 << self.local_bits) - 1, (1 << self.env_bits) - 1
        locs = [(states >> s) & lm for s in self.local_shift]
        env = (states >> self.env_shift) & em
        budget = [(states >> s) & ((1 << nb) - 1) for s, nb in zip(self.budget_shift, self.budget_bits)]
        return locs, env, budget

    def _rows(self, group: int, loc: np.ndarray, env: np.ndarray) -> np.ndarray:
        """The group's table row of each (local, env), tabulating those not seen yet."""
        g = self.groups[group]
        row = g.lookup(loc, env)
        missing = row < 0
        if missing.any():
            keys = np.unique(loc[missing] * (1 << self.env_bits) + env[missing])
            em = (1 << self.env_bits) - 1
            for k in keys.tolist():
                self.tabulate(group, k >> self.env_bits, k & em)
            row = g.lookup(loc, env)
        return row

    def state_bits(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per state: the always properties that hold, the goals that hold, the sometimes that hold (bit sets)."""
        locs, env, _ = self.fields(np.asarray(states, dtype=np.int64))
        out = [np.full(len(states), -1, dtype=np.int64) for _ in range(3)]
        for loc in locs:
            self._rows(0, loc, env)
            keys = np.unique(loc * (1 << self.env_bits) + env)
            em = (1 << self.env_bits) - 1
            table = {k: self.bits[(k >> self.env_bits, k & em)] for k in keys.tolist()}
            at = np.searchsorted(keys, loc * (1 << self.env_bits) + env)
            for j in range(3):
                col = np.array([table[k][j] for k in keys.tolist()], dtype=np.int64)
                out[j] &= col[at]
        return out[0], out[1], out[2]

    def successor_arrays(self, states: np.ndarray):
        """(position, action id, next state, edge-property bits that hold) of every edge of `states`."""
        states = np.asarray(states, dtype=np.int64)
        locs, env, budget = self.fields(states)
        P, n = self.partitions, len(states)
        pos_l, ids_l, nxt_l, ok_l = [], [], [], []
        for group, g in enumerate(self.groups):
            if group == 0:
                sel = np.arange(n)
                spend = 0
            else:
                sel = np.flatnonzero(budget[group - 1] > 0)
                spend = 1 << self.budget_shift[group - 1]
                if not len(sel):
                    continue
            sub, senv = states[sel], env[sel]
            rows = [self._rows(group, loc[sel], senv) for loc in locs]
            for k, row in enumerate(rows):
                cnt = g.count.data[row]
                total = int(cnt.sum())
                if not total:
                    continue
                at = np.repeat(np.arange(len(sel)), cnt)
                e = np.repeat(g.offset.data[row] - np.cumsum(cnt) + cnt, cnt) + np.arange(total)
                old = locs[k][sel][at]
                pos_l.append(sel[at])
                ids_l.append(g.e_code.data[e] * P + k)
                nxt_l.append(sub[at] + ((g.e_new.data[e] - old) << self.local_shift[k]) - spend)
                ok_l.append(g.e_ok.data[e])
            for gi, code in enumerate(g.global_codes):
                new0 = g.g_new.data[rows[0], gi]
                at = np.flatnonzero(new0 >= 0)
                if not len(at):
                    continue
                nxt = sub[at] - spend
                ok = np.full(len(at), -1, dtype=np.int64)
                new_env = g.g_env.data[rows[0][at], gi]
                for k, row in enumerate(rows):
                    r = row[at]
                    new = g.g_new.data[r, gi]
                    if (new < 0).any() or (g.g_env.data[r, gi] != new_env).any():
                        raise NotPackable(f"{self.codes[code]} is not enabled alike in every partition")
                    nxt += (new - locs[k][sel][at]) << self.local_shift[k]
                    ok &= g.g_ok.data[r, gi]
                nxt += (new_env - senv[at]) << self.env_shift
                pos_l.append(sel[at])
                ids_l.append(np.full(len(at), code * P, dtype=np.int64))
                nxt_l.append(nxt)
                ok_l.append(ok)
        if not pos_l:
            z = np.empty(0, dtype=np.int64)
            return z, z, z, z
        pos = np.concatenate(pos_l)
        order = np.argsort(pos, kind="stable")  # edges grouped by source state, as the reference lists them
        return pos[order], np.concatenate(ids_l)[order], np.concatenate(nxt_l)[order], np.concatenate(ok_l)[order]

    def environment_ids(self, ids: np.ndarray) -> np.ndarray:
        """Liveness: which edges (by action id) a stuck partition may take without an admin."""
        return np.array(self.environment, dtype=bool)[ids // self.partitions]

    # -- back to the reference ------------------------------------------------------------------------
    def concretize(self, path: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """Replay a packed path through the reference model: [(ModelState, Transition)], checked step by step."""
        state = self.inner.init_states()[0]
        if self.pack(state) != int(path[0][0]):
            raise AssertionError("the packed path does not start at the initial state")
        out = [(state, None)]
        for value, action in path[1:]:
            state, label = self.inner.step(state, action)
            if self.pack(state) != int(value):
                raise AssertionError(f"the reference and the packed table disagree after {action}")
            out.append((state, label))
        return out

    @property
    def table_rows(self) -> int:
        return sum(len(g.done) for g in self.groups)


class _Grow:
    """A numpy array growable along its first axis (amortised O(1) appends)."""

    def __init__(self, tail: tuple[int, ...], dtype: Any, fill: int = 0):
        self.fill = fill
        self.data = np.full((1024, *tail), fill, dtype=dtype)
        self.size = 0

    def reserve(self, n: int) -> None:
        if n > len(self.data):
            grown = np.full((max(n, 2 * len(self.data)), *self.data.shape[1:]), self.fill, dtype=self.data.dtype)
            grown[: len(self.data)] = self.data
            self.data = grown

    def append(self, values: Any) -> None:
        values = np.asarray(values, dtype=self.data.dtype)
        self.reserve(self.size + len(values))
        self.data[self.size : self.size + len(values)] = values
        self.size += len(values)


class _Group:
    """One budget group's table: (local, env) -> row; per row its local edges (CSR) and global edges (dense)."""

    def __init__(self, env_bits: int, max_globals: int):
        self.done: set[tuple[int, int]] = set()
        self.index = _Grow((1 << env_bits,), np.int32, fill=-1)  # [local, env] -> row
        self.offset, self.count = _Grow((), np.int64), _Grow((), np.int64)
        self.e_code, self.e_new, self.e_ok = _Grow((), np.int64), _Grow((), np.int64), _Grow((), np.int64)
        self.max_globals = max_globals
        self.global_codes: list[int] = []
        self.g_new = _Grow((max_globals,), np.int64, fill=-1)
        self.g_env = _Grow((max_globals,), np.int64, fill=-1)
        self.g_ok = _Grow((max_globals,), np.int64)
        self.rows = 0

    def lookup(self, loc: np.ndarray, env: np.ndarray) -> np.ndarray:
        row = np.full(len(loc), -1, dtype=np.int64)
        inside = loc < self.index.size
        row[inside] = self.index.data[loc[inside], env[inside]]
        return row

    def add(self, local: int, env: int, local_edges: list, global_edges: list, owner: PackedReassignment) -> None:
        row = self.rows
        self.rows += 1
        self.done.add((local, env))
        self.index.reserve(len(owner.locals))
        self.index.size = max(self.index.size, len(owner.locals))
        self.index.data[local, env] = row
        self.offset.append([self.e_code.size])
        self.count.append([len(local_edges)])
        if local_edges:
            codes, news, oks = zip(*local_edges)
            self.e_code.append(codes)
            self.e_new.append(news)
            self.e_ok.append(oks)
        for a in (self.g_new, self.g_env, self.g_ok):
            a.reserve(self.rows)
            a.size = self.rows
        for code, new_local, new_env, ok in global_edges:
            if code not in self.global_codes:
                if len(self.global_codes) == self.max_globals:
                    raise NotPackable("more global actions than the packed table holds")
                self.global_codes.append(code)
            gi = self.global_codes.index(code)
            self.g_new.data[row, gi], self.g_env.data[row, gi], self.g_ok.data[row, gi] = new_local, new_env, ok


__all__ = ["DECOMPOSABLE", "NotPackable", "PackedReassignment", "packable"]
