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
- every property is a conjunction over partitions (spec/per_partition.py derives each from
  its one-partition definition), so a state (edge) satisfies it iff each partition does, and
  every finding signature (spec/findings.py) a disjunction over partitions.

tests/unit/test_fast_packed.py checks all of it the way the architecture asks: on every
state of small configurations (one and two partitions) the packed model has the same
states, the same edges, the same property and signature values as the reference-backed
model; `packable` admits only the profiles (and their subclasses) checked there.
docs/performance.md describes the design and its figures.
`concretize` replays a packed path through the reference model and checks every state
it reaches packs back to the path's int, so a counterexample is always the reference's.
"""

from __future__ import annotations

import multiprocessing
from dataclasses import replace
from typing import Any

import numpy as np
from kreassign.checker.config.engine_options import DEFAULT_ENGINE, EngineOptions
from kreassign.checker.explore.liveness import classify_stuck as classify_stuck_states
from kreassign.checker.explore.liveness import environment_edge
from kreassign.checker.explore.protocol import checked_properties
from kreassign.checker.models.reassign import ReassignmentModel, budget_slot
from kreassign.checker.packed.bfs import PackedResult, explore_packed
from kreassign.checker.packed.kernel_scope import mismatch_message
from kreassign.checker.packed.kraft_kernel import KernelMismatch, KraftKernel, same_answers
from kreassign.checker.packed.kraft_vector import VECTOR_GROUPS, VectorKernel
from kreassign.reference import profile as reference_profile
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION
from kreassign.spec.reassign_properties import PROPERTIES, ModelState
from kreassign.spec.state import ClusterState

#: properties whose definition is a conjunction over partitions (checked by the differential test)
BASE = {p.name: p for p in PROPERTIES}
DECOMPOSABLE = frozenset(BASE)

#: how check/run.py names a property split by findings: "<property>::<finding>"; such an engine
#: property is violated only where its base property is, so the base's local bits find the candidates
SEP = "::"

# -- the packed encoding's own limits (partition-locality), all here: `packable` reads them, and a model
# beyond them runs on the object engine. Inside them, what the kraft kernels answer for is
# checker/packed/kernel_scope.py's KERNEL_SCOPE.

#: profiles tests/unit/test_fast_packed.py checks state by state (variants: subclasses of theirs)
PARTITION_LOCAL = ("kraft", "kraft-3.7", "kip455")

#: bounds that switch on actions or state the packed encoding does not split (tool, broker view, ...)
UNSPLIT_BOUNDS = ("broker_view", "throttles", "fair", "create_partitions", "kraft_actions", "delete_topic", "broker_isr",
                 "actors")  # state or properties beyond one partition (the issue-14 and issue-26 capabilities)


def _min_isr_partition_local(model: Any) -> bool:
    """With eligible leader replicas on (KIP-966) every partition change reads the topic's effective min ISR,
    min(min.insync.replicas, partition 0's replica count) (KraftProfile.elr_rules, Kafka's
    getTopicEffectiveMinIsr): a step of partition k depends on partition 0 unless min.insync.replicas is at
    most the fewest replicas partition 0 can have — no fewer than its initial list or any target (a move
    keeps the target and the original, a cancel the original). Otherwise the partitions are not local."""
    b = model.bounds
    if not getattr(model.profile, "elr", False) or b.partitions <= 1:
        return True
    sizes = [len(r) for r in b.initial_assignment()] + [len(t) for t in b.target_lists()]
    return b.min_insync <= min(sizes)


# -- the encoding ----------------------------------------------------------------------------------------

#: common.default_enabled_actions lists actions family by family, partition by partition within a
#: family (elections: election type first); with one partition the rank alone is its order
FAMILY = {"Reassign": 0, "Cancel": 1, "ZnodeReassign": 2, "LeaderExpandIsr": 3, "LeaderShrinkIsr": 3,
          "BrokerFail": 4, "BrokerRecover": 4, "ElectLeaders": 5, "Produce": 6, "FollowerFetch": 6,
          "ControllerFailover": 8}
FAMILY_EXTRA = 7
RANK_SPAN = 1 << 16  # actions one local situation enumerates, at most

SIGNATURE_BITS = 31  # finding signatures per word (bits 32..62)
PROPERTY_BITS = 32  # properties per word (bits 0..31)

LOCAL_BUDGET = (1, 1, 1, 1)  # the local model may take every action; the packed budget decides


class NotPackable(ValueError):
    """The model has controller-wide state or properties the packed encoding cannot split."""


def _base(prop: Any) -> Any:
    return BASE.get(prop.name.split(SEP)[0])


def _partition_local_profiles() -> tuple[type, ...]:
    """The profile classes (and their variants) the differential test shows partition-local."""
    return tuple(type(reference_profile(name)) for name in PARTITION_LOCAL)


def packable(model: Any, properties: Any = None) -> bool:
    """Can `model` (with these engine properties) run on the packed path? A plain ReassignmentModel of
    a partition-local profile (no controller-wide state), with properties split from PROPERTIES."""
    if type(model) is not ReassignmentModel or model.profile.deferred_requests:
        return False
    if not isinstance(model.profile, _partition_local_profiles()):
        return False
    if any(getattr(model.bounds, k, False) for k in UNSPLIT_BOUNDS):
        return False
    if not _min_isr_partition_local(model):
        return False
    for p in properties if properties is not None else checked_properties(model):
        base = _base(p)
        if base is None or base.kind != p.kind or p.extra.get("fairness") is not None:
            return False
        if p.kind == EVENTUALLY and p.predicate is not base.predicate:
            return False
    init = model.init_states()
    return len(init) == 1 and init[0].cluster.zk is None and init[0].cluster.kip236 is None


def _checks(predicates: list[Any]) -> list[tuple[Any, int]]:
    """Each distinct predicate once, with the bits (positions in `predicates`) of every property it decides."""
    bits: dict[Any, int] = {}
    for k, pred in enumerate(predicates):
        bits[pred] = bits.get(pred, 0) | 1 << k
    return list(bits.items())


def _bits(n: int) -> int:
    return max(1, int(n).bit_length())


class PackedReassignment:
    """`model` (a ReassignmentModel) with int64 states and tabulated successors; `workers` processes
    tabulate the reference's answers (forked workers inherit this object, so its values), and `kernel`
    lets the kraft kernels answer where they apply (`check --no-kernel`: False)."""

    def __init__(self, model: ReassignmentModel, workers: int = 1, kernel: bool = True):
        if not packable(model):  # reads the engine's (maybe split) properties
            raise NotPackable(f"profile {model.profile_name} keeps controller-wide state; no packed encoding")
        self.inner = model
        self.name = model.name
        self.workers = max(1, workers)
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
        self.props = list(checked_properties(model))
        self.always = [p for p in self.props if p.kind == ALWAYS]
        self.edge_props = [p for p in self.props if p.kind == TRANSITION]
        self.goals = [p for p in self.props if p.kind == EVENTUALLY]
        self.sometimes = [p for p in self.props if p.kind == SOMETIMES]
        # a property split by findings (check/run.py) is its base property and the findings'
        # signatures; both are tabulated per partition: base bits in the low half of a word
        # (AND over partitions), each signature's *negation* in the high half (AND of the
        # negations = no partition matches). Any other predicate is decided exactly, on the
        # full state, where its base fails.
        if max(len(self.always), len(self.edge_props), len(self.goals), len(self.sometimes)) > PROPERTY_BITS:
            raise NotPackable("more properties than a packed word holds")
        self.state_sigs: list[Any] = []
        self.edge_sigs: list[Any] = []
        self.always_forms = [self._form(p, self.state_sigs) for p in self.always]
        self.edge_forms = [self._form(p, self.edge_sigs) for p in self.edge_props]
        self.always_bases = [_base(p).predicate for p in self.always]
        self.edge_bases = [_base(p).predicate for p in self.edge_props]
        # what compute evaluates: each distinct predicate once (the engine properties split by findings share
        # their base), with the bits it sets, a signature's in the high half when it does *not* match
        self.always_checks = _checks(self.always_bases)
        self.edge_checks = _checks(self.edge_bases)
        self.state_sig_bits = [(sig, 1 << (32 + j)) for j, sig in enumerate(self.state_sigs)]
        self.edge_sig_bits = [(sig, 1 << (32 + j)) for j, sig in enumerate(self.edge_sigs)]
        self.exact_always = [f[0] == "exact" for f in self.always_forms]
        self.exact_edges = [f[0] == "exact" for f in self.edge_forms]
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
        self.budget_total_bits = shift  # the budget slots are the lowest bits (budget subsumption)
        self.env_shift = shift
        shift += self.env_bits
        self.local_shift = [shift + k * self.local_bits for k in range(self.partitions)]
        # the table: per budget group (0: actions that spend nothing, 1 + slot: actions spending
        # that slot), a row per tabulated local situation; a group is tabulated only for states
        # that still have that budget, so the reference is asked no more than the search needs
        self.groups = [_Group() for _ in range(1 + len(budget_max))]
        self.bits: dict[tuple[int, int], tuple[int, int, int]] = {}
        # (local, env) -> (its local state, per budget group the enabled actions not tabulated yet), while any are
        self._enabled: dict[tuple[int, int], tuple[ModelState, list[list[Any]]]] = {}
        self.reference_calls = 0
        self.init_state = self.pack(init)
        # the kraft profiles' steps without the reference's plumbing (checker/packed/kraft_kernel.py), where
        # it was compared with the reference; every CHECK_EVERY-th row it answers is compared again in `install`
        self.kernel = KraftKernel.build(self) if kernel else None
        # its answers of budget groups 0-3 (all but a failover), many situations at once (checker/packed/kraft_vector.py)
        self.vector = VectorKernel.build(self.kernel) if self.kernel is not None else None
        self.kernel_checks = 0
        self.installed = 0  # rows installed (the kernel's spot checks count them)
        self.answers = {"reference": 0, "kernel": 0, "vector": 0}  # answers tabulated, by who gave them

    @staticmethod
    def _form(prop: Any, sigs: list[Any]) -> tuple:
        """How an engine property is made of its base and finding signatures (see __init__)."""
        base = _base(prop).predicate
        pred = prop.predicate
        if pred is base:
            return ("plain",)
        if getattr(pred, "holds", None) is not base:
            return ("exact",)
        found = getattr(pred, "signatures", None)
        single = getattr(pred, "signature", None)
        wanted = list(found) if found is not None else [single] if single is not None else None
        if wanted is None:
            return ("exact",)
        bits = []
        for sig in wanted:
            if sig not in sigs:
                if len(sigs) == SIGNATURE_BITS:
                    return ("exact",)
                sigs.append(sig)
            bits.append(sigs.index(sig))
        return ("unexplained", bits) if found is not None else ("not_this", bits[0])

    @staticmethod
    def holds(forms: list[tuple], bit: int, words: np.ndarray) -> np.ndarray | None:
        """Whether engine property `bit` holds, from the combined words; None: decide it exactly."""
        form = forms[bit]
        base = ((words >> bit) & 1).astype(bool)
        if form[0] == "plain":
            return base
        if form[0] == "unexplained":  # holds, or some partition matches a signature
            mask = sum(1 << (32 + j) for j in form[1])
            return base | ((~words & mask) != 0)
        if form[0] == "not_this":  # holds, or no partition matches this finding's signature
            return base | ((words >> (32 + form[1])) & 1).astype(bool)
        return None

    # -- interning and packing -----------------------------------------------------------------
    def intern_local(self, part: Any, ghost: Any) -> int:
        """The local id of (partition, ghost), interned on first sight (the kernels intern what they find)."""
        key = (part, ghost)
        i = self.local_ids.get(key)
        if i is None:
            i = self.local_ids[key] = len(self.locals)
            if i >= 1 << self.local_bits:
                raise NotPackable(f"more than {1 << self.local_bits} partition-local states")
            self.locals.append(key)
        return i

    def intern_env(self, brokers: tuple[Any, ...]) -> int:
        """The brokers id of a tuple of Broker, interned on first sight."""
        i = self.env_ids.get(brokers)
        if i is None:
            i = self.env_ids[brokers] = len(self.envs)
            if i >= 1 << self.env_bits:
                raise NotPackable("too many broker configurations for the packed state")
            self.envs.append(brokers)
        return i

    def intern_action(self, action: Any) -> int:
        """The code of a local action (partition 0) or global action, interned on first sight."""
        i = self.code_ids.get(action)
        if i is None:
            i = self.code_ids[action] = len(self.codes)
            self.codes.append(action)
            self.is_global.append(getattr(action, "partition", None) is None)  # names no partition
            self.environment.append(environment_edge(action))
        return i

    def pack(self, ms: ModelState) -> int:
        c = ms.cluster
        if c.zk is not None or c.kip236 is not None or len(c.topics) != 1:
            raise NotPackable("not a partition-local state")
        value = self.intern_env(c.brokers) << self.env_shift
        for k, (part, ghost) in enumerate(zip(c.topics[0].partitions, ms.ghosts)):
            value |= self.intern_local(part, ghost) << self.local_shift[k]
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

    def _actions(self, group: int, local: int, env: int, cache: bool = True) -> tuple[ModelState, list[tuple[int, Any]]]:
        """The local state and the (rank in the reference's enumeration, action) of one budget group, each
        handed out once (`compute` is asked once per group and situation: `_Group.done`); `cache=False`:
        enumerated afresh and not kept (the kernel's spot checks)."""
        key = (local, env)
        entry = self._enabled.get(key) if cache else None
        if entry is None:  # the enabled actions of a local situation, split by budget group once
            ms = self._local_state(local, env)
            entry = (ms, [[] for _ in self.groups])
            for rank, a in enumerate(self.local_model.actions(ms)):
                slot = budget_slot(a)
                entry[1][0 if slot is None else slot + 1].append((rank, a))
        by_group = entry[1]
        actions, by_group[group] = by_group[group], []
        if not cache:
            return entry[0], actions
        if any(by_group):  # kept until every group's actions are handed out
            self._enabled[key] = entry
        else:
            self._enabled.pop(key, None)
        return entry[0], actions

    def compute(self, group: int, local: int, env: int) -> tuple[list, tuple | None]:
        """The answers for one local situation and budget group: the kernel's where it applies, else the
        reference model's (`reference_compute`)."""
        if self.kernel is not None:
            return self.kernel.compute(group, local, env)
        return self.reference_compute(group, local, env)

    def reference_compute(self, group: int, local: int, env: int, cache: bool = True) -> tuple[list, tuple | None]:
        """The reference's answers for one local situation and budget group, as plain values:
        ([(rank, action, (partition, ghost) after, brokers after, edge bits)], state bits or None);
        an unchanged (partition, ghost) or brokers comes as its id (`local`, `env`), found by identity,
        so that interning does not hash it again. Reads the interned tables, writes nothing but
        `_enabled`, so worker processes can run it."""
        step = self.local_model.step
        ms, actions = self._actions(group, local, env, cache)
        part0, ghost0, brokers0 = ms.cluster.topics[0].partitions[0], ms.ghosts[0], ms.cluster.brokers
        edge_checks, edge_sigs = self.edge_checks, self.edge_sig_bits
        out = []
        for rank, a in actions:
            nxt, label = step(ms, a)
            c = nxt.cluster
            if c.zk is not None or c.kip236 is not None or len(c.topics) != 1:
                raise NotPackable("the profile wrote controller-wide state")
            ok = 0
            for base, mask in edge_checks:
                if base(ms, label, nxt):
                    ok |= mask
            for sig, mask in edge_sigs:
                if not sig(ms, label, nxt):
                    ok |= mask
            part, ghost = c.topics[0].partitions[0], nxt.ghosts[0]
            new = local if part is part0 and ghost is ghost0 else (part, ghost)
            out.append((rank, a, new, env if c.brokers is brokers0 else c.brokers, ok))
        bits = None
        if group == 0:
            inv = 0
            for base, mask in self.always_checks:
                if base(ms):
                    inv |= mask
            for sig, mask in self.state_sig_bits:
                if not sig(ms):
                    inv |= mask
            goal = sum(1 << k for k, p in enumerate(self.goals) if p.predicate(ms))
            some = sum(1 << k for k, p in enumerate(self.sometimes) if p.predicate(ms))
            bits = (inv, goal, some)
        return out, bits

    def install(self, group: int, local: int, env: int, answers: list, bits: tuple | None) -> None:
        """Intern what `compute` found and add the row to the group's table."""
        local_edges, global_edges = [], []
        self.reference_calls += len(answers)
        self.answers["reference" if self.kernel is None else "kernel"] += len(answers)
        self.installed += 1
        if self.kernel is not None and self.installed % self.kernel.check_every == 0:
            self.check_kernel(group, local, env, (answers, bits))
        is_global = self.is_global
        # an action, (partition, ghost) or brokers already interned may come as its id (compute, _compact)
        for rank, a, new, brokers, ok in answers:
            code = a if type(a) is int else self.intern_action(a)
            new_local = new if type(new) is int else self.intern_local(*new)
            new_env = brokers if type(brokers) is int else self.intern_env(brokers)
            if is_global[code]:
                global_edges.append((code, new_local, new_env, ok, rank))
            else:
                if new_env != env:
                    raise NotPackable(f"{self.codes[code]} changed the brokers: not partition-local")
                local_edges.append((code, new_local, ok, rank))
        self.groups[group].add(local, env, local_edges, global_edges, self)
        if bits is not None:
            self.bits[(local, env)] = bits

    def _tabulate_vector(self, group: int, keys: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Tabulate the situations the vector kernel answers; return the others."""
        locs = np.fromiter((k[0] for k in keys), dtype=np.int64, count=len(keys))
        envs = np.fromiter((k[1] for k in keys), dtype=np.int64, count=len(keys))
        out = self.vector.tabulate(group, locs, envs)
        answered = np.flatnonzero(out["done"])
        every = self.kernel.check_every
        for k in answered.tolist():
            self.installed += 1
            if self.installed % every == 0:
                self.check_kernel(group, int(locs[k]), int(envs[k]), self.vector.rows(group, out, k),
                                  "vector")
        self.reference_calls += len(out["sit"])
        self.answers["vector"] += len(out["sit"])
        if group == 0:
            inv, goal, some = out["bits"]
            for l, e, a, b, c in zip(locs[answered].tolist(), envs[answered].tolist(), inv[answered].tolist(),
                                     goal[answered].tolist(), some[answered].tolist()):
                self.bits[(l, e)] = (a, b, c)
        self.groups[group].add_batch(locs, envs, answered, out, self)
        return [keys[k] for k in np.flatnonzero(~out["done"]).tolist()]

    def check_kernel(self, group: int, local: int, env: int, answer: tuple[list, tuple | None],
                     who: str = "scalar") -> None:
        """Compare the `who` kernel's answer for one situation with the reference's (KernelMismatch if they
        differ, naming the definitions restated for speed that could have drifted:
        kernel_scope.mismatch_message)."""
        self.kernel_checks += 1
        theirs = self.reference_compute(group, local, env, cache=False)
        if not same_answers(self, answer, theirs):
            raise KernelMismatch(mismatch_message(self, who, group, local, env, answer, theirs))

    def tabulate(self, group: int, local: int, env: int) -> None:
        """Step the actions of one budget group enabled in one local situation through the reference."""
        if (local, env) not in self.groups[group].done:
            self.install(group, local, env, *self.compute(group, local, env))
            self.groups[group].flush()

    def tabulate_many(self, group: int, keys: list[tuple[int, int]]) -> None:
        """Tabulate many local situations, in `workers` forked processes when there are enough."""
        done = self.groups[group].done
        keys = [k for k in keys if k not in done]
        if self.vector is not None and group in VECTOR_GROUPS and keys:
            keys = self._tabulate_vector(group, keys)  # what it leaves: the scalar kernel's
        # the kernel answers in this process: a forked worker's copy-on-write and pickled answers cost it
        # more than it saves (docs/performance.md); workers help the reference's slower answers only
        if self.workers <= 1 or len(keys) < PARALLEL_MIN or self.kernel is not None:
            install, compute = self.install, self.compute
            for local, env in keys:
                install(group, local, env, *compute(group, local, env))
            self.groups[group].flush()
            return
        # workers - 1 forked processes (they inherit the tables) and this one compute a slice each;
        # the rows are installed in key order, so the numbering is the one a single worker gives
        global _FORKED
        _FORKED = self
        n = self.workers
        slices = [keys[i::n] for i in range(n)]
        try:
            with multiprocessing.get_context("fork").Pool(n - 1) as pool:
                theirs = pool.map_async(_compute_slice, [(group, s) for s in slices[1:]])
                results = [[self.compute(group, local, env) for local, env in slices[0]], *theirs.get()]
        finally:
            _FORKED = None
        for i, (local, env) in enumerate(keys):
            self.install(group, local, env, *results[i % n][i // n])
        self.groups[group].flush()

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
            self.tabulate_many(group, [(k >> self.env_bits, k & em) for k in keys.tolist()])
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
        pos_l, ids_l, nxt_l, ok_l, key_l = [], [], [], [], []
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
            family = self._families()  # after tabulating: new action codes may have appeared
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
                key_l.append((family[g.e_code.data[e]] * P + k) * RANK_SPAN + g.e_rank.data[e])
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
                key_l.append(np.full(len(at), family[code] * P * RANK_SPAN) + g.g_rank.data[rows[0][at], gi])
        if not pos_l:
            z = np.empty(0, dtype=np.int64)
            return z, z, z, z
        pos = np.concatenate(pos_l)
        # edges in the order the reference model generates them (source, then its enumeration order),
        # so that new states are numbered as the object engine numbers them
        order = np.lexsort((np.concatenate(key_l), pos))
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

    def state_holds(self, bit: int, value: int) -> bool:
        """The exact `always` property `bit` on one (full) state."""
        return self.always[bit].predicate(self.unpack(value))

    def edge_holds(self, bit: int, value: int, action_id: int, nxt: int) -> bool:
        """The exact transition property `bit` on one edge, its label from the reference."""
        state = self.unpack(value)
        after, label = self.inner.step(state, self.action_of(action_id))
        return self.edge_props[bit].predicate(state, label, after)

    def table_bytes(self) -> int:
        """Memory of the tabulated table's arrays (every budget group)."""
        return sum(a.data.nbytes for g in self.groups for a in (g.index, g.offset, g.count, g.e_code, g.e_new, g.e_ok,
                                                                  g.e_rank, g.g_new, g.g_env, g.g_ok, g.g_rank))

    def _families(self) -> np.ndarray:
        return np.array([FAMILY.get(type(a).__name__, FAMILY_EXTRA) for a in self.codes], dtype=np.int64)

    @property
    def table_rows(self) -> int:
        return sum(len(g.done) for g in self.groups)


PARALLEL_MIN = 1024  # local situations worth forking a worker for (~0.1 s of reference work; a fork costs ~0.01 s)

_FORKED: PackedReassignment | None = None  # the model the forked workers inherit


def _compute_slice(task: tuple[int, list[tuple[int, int]]]) -> list:
    """A forked worker's share: `compute` for each key, with what the parent has interned already sent as
    ids, and equal new values as one object (pickling and interning them costs more than computing)."""
    group, keys = task
    m = _FORKED
    fresh: dict[Any, Any] = {}
    out = []
    for local, env in keys:
        found, bits = m.compute(group, local, env)
        compact = []
        for rank, a, new, brokers, ok in found:
            a = m.code_ids.get(a, a)
            if type(new) is not int:
                known = m.local_ids.get(new)
                new = known if known is not None else fresh.setdefault(new, new)
            if type(brokers) is not int:
                brokers = m.env_ids.get(brokers, brokers)
            compact.append((rank, a, new, brokers, ok))
        out.append((compact, bits))
    return out


class _Grow:
    """A numpy array growable along its first axis (amortised O(1) appends)."""

    def __init__(self, tail: tuple[int, ...], dtype: Any, fill: int = 0, size: int = 1024):
        self.fill = fill
        self.data = np.full((size, *tail), fill, dtype=dtype)
        self.size = 0

    def reserve(self, n: int) -> None:
        if n > len(self.data):
            grown = np.full((max(n, 2 * len(self.data), 1024), *self.data.shape[1:]), self.fill, dtype=self.data.dtype)
            grown[: len(self.data)] = self.data
            self.data = grown

    def append(self, values: Any) -> None:
        values = np.asarray(values, dtype=self.data.dtype)
        self.reserve(self.size + len(values))
        self.data[self.size : self.size + len(values)] = values
        self.size += len(values)


class _Group:
    """One budget group's table: (local, env) -> row; per row its local edges (CSR) and global edges (dense)."""

    def __init__(self):
        self.done: set[tuple[int, int]] = set()
        self.index = _Grow((2,), np.int32, fill=-1)  # [local, env] -> row, widened as brokers ids appear
        self.offset, self.count = _Grow((), np.int64), _Grow((), np.int64)
        self.e_code, self.e_new, self.e_ok = _Grow((), np.int32), _Grow((), np.int32), _Grow((), np.int64)
        self.e_rank = _Grow((), np.int32)  # the action's position in the reference's enumeration
        self.global_codes: list[int] = []
        # dense [row, global action]: allocated only for groups that hold global actions
        self.g_new = _Grow((0,), np.int32, fill=-1, size=0)
        self.g_env = _Grow((0,), np.int32, fill=-1, size=0)
        self.g_ok = _Grow((0,), np.int64, size=0)
        self.g_rank = _Grow((0,), np.int32, size=0)
        self.rows = 0
        self._rows: list[tuple] = []  # buffered rows (see flush)
        self._locals = 0

    def lookup(self, loc: np.ndarray, env: np.ndarray) -> np.ndarray:
        row = np.full(len(loc), -1, dtype=np.int64)
        inside = (loc < self.index.size) & (env < self.index.data.shape[1])
        row[inside] = self.index.data[loc[inside], env[inside]]
        return row

    def add(self, local: int, env: int, local_edges: list, global_edges: list, owner: PackedReassignment) -> None:
        """Buffer one row; `flush` moves the buffered rows into the arrays (once per batch: small numpy
        appends cost more than the rows)."""
        self.done.add((local, env))
        self._rows.append((local, env, local_edges, global_edges))
        self._locals = len(owner.locals)

    def add_batch(self, locs: np.ndarray, envs: np.ndarray, answered: np.ndarray, out: dict, owner: PackedReassignment) -> None:
        """Add the rows of the situations `answered` (indexes into locs / envs) from the vector kernel's
        answers `out` (one entry per edge, `sit` its situation, sorted by situation then rank)."""
        self.flush()  # rows buffered before keep their numbers
        n = len(answered)
        if not n:
            return
        first = self.rows
        self.rows += n
        row_of = np.full(len(locs), -1, dtype=np.int64)
        row_of[answered] = np.arange(first, first + n)
        self.done.update(zip(locs[answered].tolist(), envs[answered].tolist()))
        self._grow_index(len(owner.locals), int(envs[answered].max()))
        self.index.data[locs[answered], envs[answered]] = np.arange(first, first + n, dtype=np.int32)
        glob = out["global"]
        loc_sel = np.flatnonzero(~glob)
        rows = row_of[out["sit"][loc_sel]] - first
        counts = np.bincount(rows, minlength=n).astype(np.int64)
        self.offset.append(self.e_code.size + np.cumsum(counts) - counts)
        self.count.append(counts)
        if len(loc_sel):
            self.e_code.append(out["code"][loc_sel])
            self.e_new.append(out["new"][loc_sel])
            self.e_ok.append(out["ok"][loc_sel])
            self.e_rank.append(out["rank"][loc_sel])
        if self.global_codes or glob.any():
            for arr in (self.g_new, self.g_env, self.g_ok, self.g_rank):
                arr.reserve(self.rows)
                arr.size = self.rows
        g_sel = np.flatnonzero(glob)
        if len(g_sel):
            codes = out["code"][g_sel]
            for code in np.unique(codes).tolist():
                if code not in self.global_codes:
                    self.global_codes.append(code)
                    self._widen(len(self.global_codes))
            column = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
            for gi, code in enumerate(self.global_codes):
                if code < len(column):
                    column[code] = gi
            at, cols = row_of[out["sit"][g_sel]], column[codes]
            self.g_new.data[at, cols] = out["new"][g_sel]
            self.g_env.data[at, cols] = out["env"][g_sel]
            self.g_ok.data[at, cols] = out["ok"][g_sel]
            self.g_rank.data[at, cols] = out["rank"][g_sel]

    def _grow_index(self, locals_: int, top_env: int) -> None:
        """Room in the [local, env] index for `locals_` local ids and brokers ids up to `top_env`."""
        self.index.reserve(locals_)
        self.index.size = max(self.index.size, locals_)
        if top_env >= self.index.data.shape[1]:  # columns: broker configurations seen so far
            wider = np.full((len(self.index.data), 2 * (top_env + 1)), -1, dtype=np.int32)
            wider[:, : self.index.data.shape[1]] = self.index.data
            self.index.data = wider

    def _widen(self, columns: int) -> None:
        """One column per global action this group has met (a handful: the brokers, a failover)."""
        for arr in (self.g_new, self.g_env, self.g_ok, self.g_rank):
            if columns > arr.data.shape[1]:
                wider = np.full((len(arr.data), columns + 2), arr.fill, dtype=arr.data.dtype)
                wider[:, : arr.data.shape[1]] = arr.data
                arr.data = wider

    def flush(self) -> None:
        if not self._rows:
            return
        rows, self._rows = self._rows, []
        first = self.rows
        self.rows += len(rows)
        self._grow_index(self._locals, max(env for _, env, _, _ in rows))
        locs = np.array([r[0] for r in rows], dtype=np.int64)
        envs = np.array([r[1] for r in rows], dtype=np.int64)
        self.index.data[locs, envs] = np.arange(first, self.rows, dtype=np.int32)
        counts = np.array([len(r[2]) for r in rows], dtype=np.int64)
        self.offset.append(self.e_code.size + np.cumsum(counts) - counts)
        self.count.append(counts)
        edges = [e for r in rows for e in r[2]]
        if edges:
            codes, news, oks, ranks = zip(*edges)
            self.e_code.append(codes)
            self.e_new.append(news)
            self.e_ok.append(oks)
            self.e_rank.append(ranks)
        if self.global_codes or any(r[3] for r in rows):
            for arr in (self.g_new, self.g_env, self.g_ok, self.g_rank):
                arr.reserve(self.rows)
                arr.size = self.rows
        at, cols, news, envs_, oks, ranks = [], [], [], [], [], []
        column = {code: gi for gi, code in enumerate(self.global_codes)}
        for k, (_, _, _, global_edges) in enumerate(rows):
            for code, new_local, new_env, ok, rank in global_edges:
                gi = column.get(code)
                if gi is None:
                    gi = column[code] = len(self.global_codes)
                    self.global_codes.append(code)
                    self._widen(len(self.global_codes))
                at.append(first + k)
                cols.append(gi)
                news.append(new_local)
                envs_.append(new_env)
                oks.append(ok)
                ranks.append(rank)
        if at:
            self.g_new.data[at, cols], self.g_env.data[at, cols] = news, envs_
            self.g_ok.data[at, cols], self.g_rank.data[at, cols] = oks, ranks


def packed_explorer(model: ReassignmentModel, *, keep_graph: bool = False, progress: Any = None,
                    stop_on_violation: bool = False, max_states: int | None = None,
                    watch: Any = None, engine_options: EngineOptions = DEFAULT_ENGINE) -> PackedResult:
    """An `explorer` for check/run.py: `bfs.explore`'s signature and result, on the packed path.

    Violation paths come back as the reference model's own paths (`concretize`); instead of a
    graph the result answers `classify_stuck` for each `eventually` property. `engine_options`
    (config/engine_options.py): the workers, the kernel switch and budget subsumption (safety only).
    """
    packed = PackedReassignment(model, workers=engine_options.worker_count(), kernel=engine_options.kernel)
    result = explore_packed(packed, liveness=keep_graph, progress=progress, stop_on_violation=stop_on_violation,
                            max_states=max_states, watch=watch, subsume=engine_options.subsume)
    result.violations = {n: replace(v, path=packed.concretize(v.path)) for n, v in result.violations.items()}
    result.examples = {n: packed.concretize(p) for n, p in result.examples.items()}

    def classify_stuck(prop: Any, findings: tuple[Any, ...], want_findings: bool = True):
        """(unexpected lasso or None, {finding: lasso}): liveness.classify_stuck, the definition the
        object engine uses too, on the stuck states (BFS order) and environment edges kept here."""

        def edges(among: set[int]):
            src, dst, _ = result.env_edges()
            ids = np.fromiter(among, dtype=np.int64, count=len(among))
            keep = np.isin(src, ids) & np.isin(dst, ids)
            return zip(src[keep].tolist(), dst[keep].tolist())

        def lasso_of(i: int):
            path, loop = result.lasso_of(i)
            return packed.concretize(path), loop

        return classify_stuck_states(result.stuck.get(prop.name, np.empty(0, np.int64)).tolist(),
                                     lambda i: packed.unpack(result.state_of(i)), edges, lasso_of,
                                     prop.extra.get("from"), findings, want_findings)

    return replace(result, classify_stuck=classify_stuck, packed=packed)


__all__ = ["DECOMPOSABLE", "NotPackable", "PackedReassignment", "packable", "packed_explorer"]
