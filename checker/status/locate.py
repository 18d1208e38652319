"""Find the model's state that a live partition is in.

The model is the reassignment model of one partition (checker/models/reassign.py) on the brokers the
partition involves, renamed 1..k in increasing id order (the renaming commutes with every profile's rules:
checker/models/symmetry.py). Kafka does not say how a partition got where it is, so the state is found by
search: breadth first from the partition before its reassignment (the replicas that are not adding, in every
order, all in sync and up) through every history the model allows — requests to the current target and back
to the original, broker failures and recoveries, ISR changes, the controller's own steps — until the
partition looks exactly as observed: replicas in order, adding, removing, ISR, leader, ELR, and which of its
brokers are up. The shortest history is the explanation; states found at the same depth that differ in what
the cluster holds are all kept (their verdicts are compared, docs/status.md).

If the model cannot reach the observed state, the partition is `unexplained`: the cluster is somewhere the
model of its release says it cannot be (a difference to report, never hidden).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Any

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import TOPIC, ReassignmentModel
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import NO_LEADER

from .release import Rules
from .snapshot import LivePartition

#: states explored per attempt before a partition is called unexplained (`status --search-states`): a partition
#: of RF 3 moving to three new brokers is found within a few thousand; an unreachable one of that size would
#: take minutes to exhaust
LOCATE_STATES = 50_000
MAX_MATCHES = 6


@dataclass(frozen=True)
class Shape:
    """A live partition in renamed ids (1..k): what the model is asked about."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int  # NO_LEADER when none
    elr: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    down: tuple[int, ...]
    brokers: int
    min_isr: int
    unclean: bool

    @property
    def original(self) -> tuple[int, ...]:
        return tuple(b for b in self.replicas if b not in self.adding)

    @property
    def target(self) -> tuple[int, ...]:
        return tuple(b for b in self.replicas if b not in self.removing)


def shape_of(p: LivePartition, live: set[int], min_isr: int, unclean: bool) -> tuple[Shape, dict[int, int]]:
    """The shape and the map shape id -> real broker id."""
    involved = set(p.replicas) | set(p.isr) | set(p.elr) | ({p.leader} if p.leader is not None else set())
    order = sorted(involved)
    to = {b: k for k, b in enumerate(order, 1)}

    def m(ids):
        return tuple(to[b] for b in ids)

    shape = Shape(m(p.replicas), m(p.isr), to[p.leader] if p.leader is not None else NO_LEADER,
                  tuple(sorted(m(p.elr))), m(p.adding), m(p.removing),
                  tuple(sorted(to[b] for b in order if b not in live)), len(order), min_isr, unclean)
    return shape, {k: b for b, k in to.items()}


def observed(ms: ModelState, with_elr: bool = True) -> tuple:
    """The part of a model state a live partition shows (the Admin client's view)."""
    c = ms.cluster
    p = c.partition(TOPIC, 0)
    down = tuple(b.id for b in c.brokers if not (b.registered and b.active))
    return (p.replicas, tuple(sorted(p.isr)), p.leader, tuple(sorted(p.adding)), tuple(sorted(p.removing)),
            tuple(sorted(p.elr)) if with_elr else (), down)


def wanted(shape: Shape, with_elr: bool = True) -> tuple:
    return (shape.replicas, tuple(sorted(shape.isr)), shape.leader, tuple(sorted(shape.adding)),
            tuple(sorted(shape.removing)), shape.elr if with_elr else (), shape.down)


def model_for(shape: Shape, rules: Rules, *, targets: tuple[tuple[int, ...], ...], reassigns: int, cancels: int,
              initial: tuple[int, ...] | None = None) -> ReassignmentModel:
    original = initial or shape.original
    bounds = Bounds(brokers=shape.brokers, partitions=1, rf=len(original), initial=(original,), targets=targets,
                    reassigns=reassigns, cancels=cancels, failures=shape.brokers, failovers=0,
                    unclean=shape.unclean, kafka_version=rules.kafka_version, elr=rules.elr,
                    min_insync=max(1, shape.min_isr) if rules.profile == "kraft" else 1)
    return ReassignmentModel(rules.profile, bounds)


@dataclass
class Located:
    model: ReassignmentModel  # steps every found state (its bounds hold the targets of the history)
    states: list[ModelState]  # the observed partition as the model holds it: one per distinct cluster
    history: list[Any]  # the shortest explanation (model actions, shape ids)
    ignored_elr: bool  # matched without comparing the ELR (the model's ELR differs: docs/status.md)
    explored: int


def _attempts(shape: Shape) -> list[tuple[tuple[tuple[int, ...], ...], int, int]]:
    """(targets, reassigns, cancels): first the one request that explains most states, then overrides and
    cancels among every list over the partition's brokers of the original's and the target's sizes."""
    simple = tuple(dict.fromkeys((shape.target, shape.original)))
    ids = range(1, shape.brokers + 1)
    wide = list(simple)
    for size in sorted({len(shape.target), len(shape.original)}):
        wide += [c for c in combinations(ids, size) if c not in wide]
    return [(simple, 1, 0), (tuple(wide), 2, 1)]


def locate(shape: Shape, rules: Rules, search_states: int = LOCATE_STATES) -> Located | None:
    for with_elr in (True, False):
        goal = wanted(shape, with_elr)
        for targets, reassigns, cancels in _attempts(shape):
            found = _search(shape, rules, goal, with_elr, targets, reassigns, cancels, search_states)
            if found is not None:
                found.ignored_elr = not with_elr
                return found
        if rules.elr != "on":
            break  # without ELR there is nothing to ignore
    return None


def _starts(shape: Shape, model: ReassignmentModel, rules: Rules, targets, reassigns, cancels) -> list[ModelState]:
    """The partition before its reassignment, in every order of its original replicas (Kafka's listing
    keeps the target's order first, so the original order is not observable)."""
    out = []
    for order in permutations(shape.original):
        m = model_for(shape, rules, targets=targets, reassigns=reassigns, cancels=cancels, initial=order)
        out += m.init_states()
    return out


def _search(shape: Shape, rules: Rules, goal: tuple, with_elr: bool, targets, reassigns: int,
            cancels: int, search_states: int) -> Located | None:
    model = model_for(shape, rules, targets=targets, reassigns=reassigns, cancels=cancels)
    starts = _starts(shape, model, rules, targets, reassigns, cancels)
    parent: dict[ModelState, tuple[ModelState | None, Any]] = {s: (None, None) for s in starts}
    queue = deque((s, 0) for s in starts)
    matches: list[ModelState] = []
    match_depth = None
    while queue and len(parent) < search_states:
        s, depth = queue.popleft()
        if match_depth is not None and depth > match_depth:
            break
        if observed(s, with_elr) == goal:
            match_depth = depth
            if all(s.cluster != m.cluster for m in matches) and len(matches) < MAX_MATCHES:
                matches.append(s)
            continue
        for a in model.actions(s):
            n = model.step(s, a)[0]
            if n not in parent:
                parent[n] = (s, a)
                queue.append((n, depth + 1))
    if not matches:
        return None
    history, s = [], matches[0]
    while parent[s][0] is not None:
        prev, a = parent[s]
        history.append(a)
        s = prev
    return Located(model, matches, history[::-1], False, len(parent))


def with_fresh_budget(model: ReassignmentModel, ms: ModelState) -> ModelState:
    """The located state with the operator's next moves available: one request, one cancel, no failure."""
    budget = list(ms.budget)
    budget[0], budget[1] = max(budget[0], 1), max(budget[1], 1)
    return ms._replace(budget=tuple(budget))


__all__ = ["LOCATE_STATES", "Located", "Shape", "locate", "model_for", "observed", "shape_of", "wanted",
           "with_fresh_budget"]
