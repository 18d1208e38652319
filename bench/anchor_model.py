"""The performance anchor: `shared/anchor/KafkaReassign.tla` as a kreassign `Model`.

Two models of the same transition system:

- `AnchorModel`: readable states (frozensets), one generator per TLA+ action, a direct
  transliteration of the spec. It is the semantics.
- `PackedAnchorModel`: the same model over packed-int states. Its `successors`,
  `actions`, `next_state` and scalar invariants go through the codec to `AnchorModel`;
  its speed comes from `successor_arrays`, a numpy kernel expanding a whole BFS level at
  once, and from vectorised invariants (`Property.extra["array_predicate"]`). Both are
  second encodings, so `tests/unit/test_anchor.py` compares them with `AnchorModel` on
  every reachable state of small configurations.

An action is the TLA+ action plus the witnesses of its non-deterministic choices, so
that every transition TLC counts is one (action, next state) pair:

- `\\E l \\in S : leader' = l` is the `elected` field (None when the IF took the branch
  without an election);
- TLC explores every true disjunct of an action as a branch of its own, and
  `Reassigning == ar # {} \\/ rr # {}` is a conjunct of CompleteReassignment and
  CancelReassignment, so each of them yields one transition per true disjunct (the
  `disjunct` field, "ar" or "rr"). That is why TLC reports 576 CancelReassignment edges
  for N4_nofail although only 288 distinct (state, next state) pairs exist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import NamedTuple

import numpy as np
from kreassign.checker.explore.protocol import Model
from kreassign.spec.properties import Property

SOURCE = "shared/anchor/KafkaReassign.tla"


@dataclass(frozen=True, slots=True)
class AnchorParams:
    """The constants of KafkaReassign.tla: Brokers = 1..brokers, RF, Failures."""

    brokers: int
    rf: int = 3
    failures: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.rf <= self.brokers:
            raise ValueError(f"rf: must be in 1..brokers ({self.brokers}), got {self.rf}")


#: the configurations of shared/anchor/*.cfg, by the name of their file
CONFIGS: dict[str, AnchorParams] = {
    "N4_nofail": AnchorParams(4, 3, False),
    "N5_nofail": AnchorParams(5, 3, False),
    "N6_nofail": AnchorParams(6, 3, False),
    "N4_fail": AnchorParams(4, 3, True),
    "N5_fail": AnchorParams(5, 3, True),
    "N6_fail": AnchorParams(6, 3, True),
    "N7_fail": AnchorParams(7, 3, True),
}

Brokers = frozenset[int]
EMPTY: Brokers = frozenset()


def _fmt(brokers: Brokers) -> str:
    return "{" + ",".join(map(str, sorted(brokers))) + "}"


# -- states ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnchorState:
    """One state of KafkaReassign.tla."""

    rs: Brokers  # replica set RS (original ∪ target while reassigning)
    ar: Brokers  # adding replicas AR = target \ original
    rr: Brokers  # removing replicas RR = original \ target
    target: Brokers  # target replica set while reassigning, {} otherwise
    isr: Brokers  # in-sync replicas
    leader: int | None  # a broker, or None for NoLeader
    live: Brokers  # brokers currently alive


def reassigning(s: AnchorState) -> bool:
    """Reassigning == ar # {} \\/ rr # {}."""
    return bool(s.ar or s.rr)


def reassigning_disjuncts(s: AnchorState) -> tuple[str, ...]:
    """The disjuncts of Reassigning that hold; TLC branches on each of them."""
    return (("ar",) if s.ar else ()) + (("rr",) if s.rr else ())


# -- actions (the TLA+ action names, with their choice witnesses) ---------------------------


@dataclass(frozen=True, slots=True)
class StartReassignment:
    """AlterPartitionReassignments(t) with no reassignment in progress."""

    target: Brokers

    def __str__(self) -> str:
        return f"StartReassignment({_fmt(self.target)})"


@dataclass(frozen=True, slots=True)
class FollowerJoinIsr:
    """A live follower catches up and joins the ISR."""

    follower: int

    def __str__(self) -> str:
        return f"FollowerJoinIsr({self.follower})"


@dataclass(frozen=True, slots=True)
class FollowerLeaveIsr:
    """A follower falls behind and leaves the ISR."""

    follower: int

    def __str__(self) -> str:
        return f"FollowerLeaveIsr({self.follower})"


def _elects(elected: int | None) -> str:
    return "" if elected is None else f" elects {elected}"


@dataclass(frozen=True, slots=True)
class CompleteReassignment:
    """Every target replica is in the ISR: RS := target."""

    disjunct: str  # the disjunct of Reassigning TLC branched on: "ar" or "rr"
    elected: int | None = None  # the new leader when the old one is not in the target

    def __str__(self) -> str:
        return f"CompleteReassignment[{self.disjunct} # {{}}]{_elects(self.elected)}"


@dataclass(frozen=True, slots=True)
class CancelReassignment:
    """Revert: drop the adding replicas, keep the removing ones."""

    disjunct: str  # the disjunct of Reassigning TLC branched on: "ar" or "rr"
    elected: int | None = None  # the new leader when the old one was an adding replica

    def __str__(self) -> str:
        return f"CancelReassignment[{self.disjunct} # {{}}]{_elects(self.elected)}"


@dataclass(frozen=True, slots=True)
class BrokerFail:
    """A broker is fenced; it leaves the ISR unless it is the last member."""

    broker: int
    elected: int | None = None  # the new leader when the failed broker led a larger ISR

    def __str__(self) -> str:
        return f"BrokerFail({self.broker}){_elects(self.elected)}"


@dataclass(frozen=True, slots=True)
class BrokerRecover:
    """A broker is unfenced; it leads again if it is the sole ISR member of a leaderless partition."""

    broker: int

    def __str__(self) -> str:
        return f"BrokerRecover({self.broker})"


AnchorAction = (
    StartReassignment
    | FollowerJoinIsr
    | FollowerLeaveIsr
    | CompleteReassignment
    | CancelReassignment
    | BrokerFail
    | BrokerRecover
)
Step = Iterator[tuple[AnchorAction, AnchorState]]


def _elections(keep: bool, candidates: Brokers) -> list[int | None]:
    """`IF keep THEN UNCHANGED leader ELSE \\E l \\in candidates : leader' = l`, as witnesses."""
    return [None] if keep else sorted(candidates)


# -- the readable model --------------------------------------------------------------------


class AnchorModel(Model[AnchorState, AnchorAction]):
    """KafkaReassign.tla transliterated: one generator per action, `successors` is Next."""

    name = "anchor"

    def __init__(self, params: AnchorParams):
        self.params = params
        self.brokers = range(1, params.brokers + 1)
        self.rf_sets = [frozenset(c) for c in combinations(self.brokers, params.rf)]  # RFSets

    def init_states(self) -> list[AnchorState]:
        init_rs = self.rf_sets[0]  # CHOOSE s \in RFSets: the RF smallest ids, as TLC picks
        return [AnchorState(init_rs, EMPTY, EMPTY, EMPTY, init_rs, min(init_rs), frozenset(self.brokers))]

    def successors(self, state: AnchorState) -> Step:
        """Next, in the order of its disjuncts."""
        yield from self.start_reassignment(state)
        for f in self.brokers:
            yield from self.follower_join_isr(state, f)
            yield from self.follower_leave_isr(state, f)
        yield from self.complete_reassignment(state)
        yield from self.cancel_reassignment(state)
        for b in self.brokers:
            yield from self.broker_fail(state, b)
            yield from self.broker_recover(state, b)

    def actions(self, state: AnchorState) -> list[AnchorAction]:
        return [a for a, _ in self.successors(state)]

    def next_state(self, state: AnchorState, action: AnchorAction) -> AnchorState | None:
        return next((n for a, n in self.successors(state) if a == action), None)

    # -- the actions of KafkaReassign.tla ----------------------------------------------------
    def start_reassignment(self, s: AnchorState) -> Step:
        if reassigning(s):
            return
        for t in self.rf_sets:
            if t != s.rs:
                yield StartReassignment(t), AnchorState(s.rs | t, t - s.rs, s.rs - t, t, s.isr, s.leader, s.live)

    def follower_join_isr(self, s: AnchorState, f: int) -> Step:
        if s.leader is not None and f in s.rs - s.isr and f in s.live:
            yield FollowerJoinIsr(f), AnchorState(s.rs, s.ar, s.rr, s.target, s.isr | {f}, s.leader, s.live)

    def follower_leave_isr(self, s: AnchorState, f: int) -> Step:
        if s.leader is not None and f in s.isr and f != s.leader:
            yield FollowerLeaveIsr(f), AnchorState(s.rs, s.ar, s.rr, s.target, s.isr - {f}, s.leader, s.live)

    def complete_reassignment(self, s: AnchorState) -> Step:
        if s.leader is None or not s.target <= s.isr:
            return
        for disjunct in reassigning_disjuncts(s):
            for elected in _elections(s.leader in s.target, s.target & s.isr):
                leader = s.leader if elected is None else elected
                yield (
                    CompleteReassignment(disjunct, elected),
                    AnchorState(s.target, EMPTY, EMPTY, EMPTY, s.isr & s.target, leader, s.live),
                )

    def cancel_reassignment(self, s: AnchorState) -> Step:
        isr = s.isr - s.ar
        if not isr:  # the revert would need an unclean election: refused
            return
        for disjunct in reassigning_disjuncts(s):
            for elected in _elections(s.leader is None or s.leader in isr, isr):
                leader = s.leader if elected is None else elected
                yield CancelReassignment(disjunct, elected), AnchorState(s.rs - s.ar, EMPTY, EMPTY, EMPTY, isr, leader, s.live)

    def broker_fail(self, s: AnchorState, b: int) -> Step:
        if not self.params.failures or b not in s.live:
            return
        live = s.live - {b}
        if b in s.isr and s.isr != {b}:
            isr = s.isr - {b}
            for elected in _elections(s.leader != b, isr):
                leader = s.leader if elected is None else elected
                yield BrokerFail(b, elected), AnchorState(s.rs, s.ar, s.rr, s.target, isr, leader, live)
        else:
            leader = None if s.leader == b else s.leader
            yield BrokerFail(b), AnchorState(s.rs, s.ar, s.rr, s.target, s.isr, leader, live)

    def broker_recover(self, s: AnchorState, b: int) -> Step:
        if not self.params.failures or b in s.live:
            return
        leader = b if s.leader is None and b in s.isr else s.leader
        yield BrokerRecover(b), AnchorState(s.rs, s.ar, s.rr, s.target, s.isr, leader, s.live | {b})

    # -- invariants ----------------------------------------------------------------------
    def type_ok(self, s: AnchorState) -> bool:
        brokers = frozenset(self.brokers)
        sets = (s.rs, s.ar, s.rr, s.target, s.isr, s.live)
        return all(x <= brokers for x in sets) and (s.leader is None or s.leader in brokers)

    def target_in_rs(self, s: AnchorState) -> bool:
        return not reassigning(s) or (
            s.target <= s.rs
            and len(s.target) == self.params.rf
            and s.ar <= s.target
            and not s.rr & s.target
            and s.rs == s.target | s.rr
        )

    def idle_shape(self, s: AnchorState) -> bool:
        return reassigning(s) or (not s.target and len(s.rs) == self.params.rf)

    def isr_in_rs(self, s: AnchorState) -> bool:
        return s.isr <= s.rs

    def isr_non_empty(self, s: AnchorState) -> bool:
        return len(s.isr) >= 1

    def leader_in_isr(self, s: AnchorState) -> bool:
        return s.leader is None or s.leader in s.isr

    def leader_present(self, s: AnchorState) -> bool:
        return self.params.failures or s.leader is not None

    def isr_live(self, s: AnchorState) -> bool:
        return s.leader is None or s.isr <= s.live

    def properties(self) -> list[Property]:
        """The eight INVARIANTS of the .cfg files, named as in the spec."""
        invariants: list[tuple[str, Callable[[AnchorState], bool], str]] = [
            ("TypeOK", self.type_ok, "every variable has its type"),
            ("TargetInRS", self.target_in_rs, "while reassigning, RS = target ∪ RR with |target| = RF"),
            ("IdleShape", self.idle_shape, "outside a reassignment RS has exactly RF members"),
            ("IsrInRS", self.isr_in_rs, "the ISR is a subset of RS"),
            ("IsrNonEmpty", self.isr_non_empty, "the ISR is never empty"),
            ("LeaderInIsr", self.leader_in_isr, "a leader is an ISR member"),
            ("LeaderPresent", self.leader_present, "without failures there is always a leader"),
            ("IsrLive", self.isr_live, "whenever there is a leader, every ISR member is alive"),
        ]
        return [Property.always(name, pred, description=doc, source=SOURCE) for name, pred, doc in invariants]

    def describe(self) -> dict[str, object]:
        return {"brokers": self.params.brokers, "rf": self.params.rf, "failures": self.params.failures}

    def state_to_json(self, state: AnchorState) -> dict[str, object]:
        sets = {k: sorted(getattr(state, k)) for k in ("rs", "ar", "rr", "target", "isr", "live")}
        return {**sets, "leader": state.leader}


# -- the packed model ----------------------------------------------------------------------


class Layout:
    """Bit layout of a packed state: six N-bit broker sets, then a 4-bit leader (0 = NoLeader).

    Broker b is bit b-1 of a set. The leader is the top field, so a value above N in it
    (or any higher bit) is a TypeOK violation rather than a different set.
    """

    SETS = ("live", "isr", "rs", "ar", "rr", "target")

    def __init__(self, brokers: int):
        if not 1 <= brokers <= 9:  # 6 * 9 + 4 = 58 bits: a packed state fits in an int64
            raise ValueError(f"brokers: the packed anchor supports 1..9 brokers, got {brokers}")
        self.n = brokers
        self.full = (1 << brokers) - 1
        self.shift = {name: i * brokers for i, name in enumerate(self.SETS)}
        self.shift["leader"] = len(self.SETS) * brokers


class Fields(NamedTuple):
    """The fields of an int64 array of packed states, as int64 arrays."""

    state: np.ndarray
    live: np.ndarray
    isr: np.ndarray
    rs: np.ndarray
    ar: np.ndarray
    rr: np.ndarray
    target: np.ndarray
    leader: np.ndarray


class EdgeBuffer:
    """Collects the transitions out of an array of states, one (positions, next states) block per action."""

    def __init__(self, action_id: Callable[[AnchorAction], int]):
        self._action_id = action_id
        self.positions: list[np.ndarray] = []
        self.ids: list[np.ndarray] = []
        self.nexts: list[np.ndarray] = []

    def add(self, action: AnchorAction, positions: np.ndarray, nexts: np.ndarray) -> None:
        if len(positions):
            self.positions.append(positions)
            self.ids.append(np.full(len(positions), self._action_id(action), dtype=np.int32))
            self.nexts.append(nexts)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.positions:
            empty = np.empty(0, dtype=np.int64)
            return empty, np.empty(0, dtype=np.int32), empty
        return np.concatenate(self.positions), np.concatenate(self.ids), np.concatenate(self.nexts)


def _has(sets: np.ndarray, broker: int) -> np.ndarray:
    """Element-wise `broker \\in sets`."""
    return (sets & (1 << (broker - 1))) != 0


def _has_each(sets: np.ndarray, brokers: np.ndarray) -> np.ndarray:
    """Element-wise `brokers[i] \\in sets[i]`; broker 0 (NoLeader) is in no set."""
    return (((sets >> np.maximum(brokers - 1, 0)) & 1) != 0) & (brokers != 0)


class PackedAnchorModel(Model[int, AnchorAction]):
    """AnchorModel over packed-int states, with a vectorised successor kernel."""

    name = "anchor"

    def __init__(self, params: AnchorParams):
        self.params = params
        self.plain = AnchorModel(params)
        self.layout = Layout(params.brokers)
        self._sets = [frozenset(b for b in self.plain.brokers if m >> (b - 1) & 1) for m in range(1 << params.brokers)]
        self._popcount = np.array([m.bit_count() for m in range(1 << params.brokers)], dtype=np.int64)
        self._action_table: list[AnchorAction] = []
        self._action_ids: dict[AnchorAction, int] = {}

    # -- codec ---------------------------------------------------------------------------
    def encode(self, s: AnchorState) -> int:
        shift = self.layout.shift
        packed = (s.leader or 0) << shift["leader"]
        for name in Layout.SETS:
            packed |= sum(1 << (b - 1) for b in getattr(s, name)) << shift[name]
        return packed

    def decode(self, packed: int) -> AnchorState:
        shift, full = self.layout.shift, self.layout.full
        sets = {name: self._sets[(packed >> shift[name]) & full] for name in Layout.SETS}
        return AnchorState(leader=(packed >> shift["leader"]) or None, **sets)

    # -- the protocol, through the codec ---------------------------------------------------
    def init_states(self) -> list[int]:
        return [self.encode(s) for s in self.plain.init_states()]

    def successors(self, state: int) -> Iterator[tuple[AnchorAction, int]]:
        for action, n in self.plain.successors(self.decode(state)):
            yield action, self.encode(n)

    def actions(self, state: int) -> list[AnchorAction]:
        return self.plain.actions(self.decode(state))

    def next_state(self, state: int, action: AnchorAction) -> int | None:
        n = self.plain.next_state(self.decode(state), action)
        return None if n is None else self.encode(n)

    def properties(self) -> list[Property]:
        """The plain invariants on decoded states, each with its vectorised twin."""
        vectorised = self._array_invariants()
        return [
            Property.always(
                p.name,
                self._on_decoded(p.predicate),
                description=p.description,
                source=p.source,
                extra={"array_predicate": self._on_fields(vectorised[p.name])},
            )
            for p in self.plain.properties()
        ]

    def describe(self) -> dict[str, object]:
        return self.plain.describe()

    def state_to_json(self, state: int) -> dict[str, object]:
        return self.plain.state_to_json(self.decode(state))

    def _on_decoded(self, predicate: Callable[[AnchorState], bool]) -> Callable[[int], bool]:
        return lambda packed: predicate(self.decode(packed))

    def _on_fields(self, predicate: Callable[[Fields], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        return lambda states: predicate(self.fields(states))

    # -- the vectorised kernel ---------------------------------------------------------------
    def fields(self, states: np.ndarray) -> Fields:
        shift, full = self.layout.shift, self.layout.full
        sets = {name: (states >> shift[name]) & full for name in Layout.SETS}
        return Fields(state=states, leader=states >> shift["leader"], **sets)

    def action_of(self, action_id: int) -> AnchorAction:
        """The action behind an id returned by `successor_arrays`."""
        return self._action_table[action_id]

    def _action_id(self, action: AnchorAction) -> int:
        action_id = self._action_ids.get(action)
        if action_id is None:
            action_id = self._action_ids[action] = len(self._action_table)
            self._action_table.append(action)
        return action_id

    def successor_arrays(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every transition out of `states` (int64): (positions in `states`, action ids, next states)."""
        f = self.fields(states)
        out = EdgeBuffer(self._action_id)
        self._start_reassignment(f, out)
        for b in self.plain.brokers:
            self._follower_join_isr(f, b, out)
            self._follower_leave_isr(f, b, out)
        self._complete_reassignment(f, out)
        self._cancel_reassignment(f, out)
        if self.params.failures:
            for b in self.plain.brokers:
                self._broker_fail(f, b, out)
                self._broker_recover(f, b, out)
        return out.arrays()

    def _bit(self, field: str, broker: int) -> int:
        return 1 << (self.layout.shift[field] + broker - 1)

    def _start_reassignment(self, f: Fields, out: EdgeBuffer) -> None:
        sh = self.layout.shift
        idle = np.flatnonzero((f.ar | f.rr) == 0)  # so AR and RR are {} before the step
        rs, target, states = f.rs[idle], f.target[idle], f.state[idle]
        for t in self.plain.rf_sets:
            mask = sum(1 << (b - 1) for b in t)
            moved = rs != mask
            r = rs[moved]
            nexts = states[moved] + (((mask & ~r) << sh["rs"]) | ((mask & ~r) << sh["ar"]) | ((r & ~mask) << sh["rr"]))
            out.add(StartReassignment(t), idle[moved], nexts + ((mask - target[moved]) << sh["target"]))

    def _follower_join_isr(self, f: Fields, b: int, out: EdgeBuffer) -> None:
        pos = np.flatnonzero((f.leader != 0) & _has(f.rs & ~f.isr & f.live, b))
        out.add(FollowerJoinIsr(b), pos, f.state[pos] + self._bit("isr", b))

    def _follower_leave_isr(self, f: Fields, b: int, out: EdgeBuffer) -> None:
        pos = np.flatnonzero((f.leader != 0) & _has(f.isr, b) & (f.leader != b))
        out.add(FollowerLeaveIsr(b), pos, f.state[pos] - self._bit("isr", b))

    def _idle_states(self, f: Fields, rs: np.ndarray, isr: np.ndarray) -> np.ndarray:
        """The states with RS := rs, ISR := isr, no reassignment, live unchanged, leader 0."""
        sh = self.layout.shift
        return f.live | (isr << sh["isr"]) | (rs << sh["rs"])

    def _reverts(self, f: Fields, enabled: np.ndarray, keep: np.ndarray, candidates: np.ndarray,
                 after: np.ndarray, action: type[CompleteReassignment | CancelReassignment],
                 out: EdgeBuffer) -> None:
        """The transitions of Complete / Cancel: per true disjunct, keep the leader or elect one.

        `after` holds the next states without a leader, aligned with `enabled`'s positions.
        """
        lsh = self.layout.shift["leader"]
        for disjunct, field in (("ar", f.ar), ("rr", f.rr)):
            branch = enabled & (field != 0)
            kept = np.flatnonzero(branch & keep)
            out.add(action(disjunct), kept, after[kept] + (f.leader[kept] << lsh))
            electing = np.flatnonzero(branch & ~keep)
            for b in self.plain.brokers:
                pos = electing[_has(candidates[electing], b)]
                out.add(action(disjunct, b), pos, after[pos] + (b << lsh))

    def _complete_reassignment(self, f: Fields, out: EdgeBuffer) -> None:
        enabled = (f.leader != 0) & ((f.target & ~f.isr) == 0)
        after = self._idle_states(f, f.target, f.isr & f.target)
        self._reverts(f, enabled, _has_each(f.target, f.leader), f.target & f.isr, after, CompleteReassignment, out)

    def _cancel_reassignment(self, f: Fields, out: EdgeBuffer) -> None:
        isr = f.isr & ~f.ar
        keep = (f.leader == 0) | _has_each(isr, f.leader)
        after = self._idle_states(f, f.rs & ~f.ar, isr)
        self._reverts(f, isr != 0, keep, isr, after, CancelReassignment, out)

    def _broker_fail(self, f: Fields, b: int, out: EdgeBuffer) -> None:
        live_bit, isr_bit, lsh = self._bit("live", b), self._bit("isr", b), self.layout.shift["leader"]
        alive = _has(f.live, b)
        shrink = alive & _has(f.isr, b) & (f.isr != 1 << (b - 1))  # b \in isr /\ isr # {b}
        leads = f.leader == b
        pos = np.flatnonzero(alive & ~(shrink & leads))  # no election: shrink the ISR, or lose the leader
        nexts = f.state[pos] - live_bit - np.where(shrink[pos], isr_bit, 0) - np.where(leads[pos], b << lsh, 0)
        out.add(BrokerFail(b), pos, nexts)
        electing = np.flatnonzero(shrink & leads)
        for e in self.plain.brokers:
            if e != b:
                pos = electing[_has(f.isr[electing], e)]
                out.add(BrokerFail(b, e), pos, f.state[pos] - live_bit - isr_bit + ((e - b) << lsh))

    def _broker_recover(self, f: Fields, b: int, out: EdgeBuffer) -> None:
        live_bit, lsh = self._bit("live", b), self.layout.shift["leader"]
        pos = np.flatnonzero(~_has(f.live, b))
        elect = (f.leader[pos] == 0) & _has(f.isr[pos], b)
        out.add(BrokerRecover(b), pos, f.state[pos] + live_bit + np.where(elect, b << lsh, 0))

    # -- vectorised invariants ---------------------------------------------------------------
    def _array_invariants(self) -> dict[str, Callable[[Fields], np.ndarray]]:
        """The eight invariants over `Fields`, twins of AnchorModel's (tested equal)."""
        rf, n, pop = self.params.rf, self.params.brokers, self._popcount

        def target_in_rs(f: Fields) -> np.ndarray:
            shape = ((f.target & ~f.rs) == 0) & (pop[f.target] == rf) & ((f.ar & ~f.target) == 0)
            return ((f.ar | f.rr) == 0) | (shape & ((f.rr & f.target) == 0) & (f.rs == (f.target | f.rr)))

        return {
            "TypeOK": lambda f: (f.state >= 0) & (f.leader <= n),
            "TargetInRS": target_in_rs,
            "IdleShape": lambda f: ((f.ar | f.rr) != 0) | ((f.target == 0) & (pop[f.rs] == rf)),
            "IsrInRS": lambda f: (f.isr & ~f.rs) == 0,
            "IsrNonEmpty": lambda f: f.isr != 0,
            "LeaderInIsr": lambda f: (f.leader == 0) | _has_each(f.isr, f.leader),
            "LeaderPresent": lambda f: np.full(len(f.state), self.params.failures) | (f.leader != 0),
            "IsrLive": lambda f: (f.leader == 0) | ((f.isr & ~f.live) == 0),
        }


def anchor_model(config: str, packed: bool = True) -> AnchorModel | PackedAnchorModel:
    """The model of one anchor configuration, e.g. `anchor_model("N6_fail")`."""
    if config not in CONFIGS:
        raise ValueError(f"config: unknown anchor configuration {config!r}; known: {', '.join(CONFIGS)}")
    params = CONFIGS[config]
    return PackedAnchorModel(params) if packed else AnchorModel(params)
