"""What the model of the cluster's release says about one in-flight reassignment.

From the located state (locate.py), three questions, each answered by the reference alone:

1. **Can it finish, and what does it wait on?** A breadth-first search over what the environment can still
   do for it — a down broker comes back (`BrokerRecover`), a follower joins the ISR (`LeaderExpandIsr`), the
   controller takes its next step (`ControllerStep`) — for the nearest state with no reassignment in flight
   (`in_flight`, checker/models/reassign.py). Its path is the shortest sequence of events after which the
   move completes. An event is *required* when no completion is reachable without it (the search again, that
   broker never back / that replica never in sync). Verdicts: `waiting` (only live replicas must catch up),
   `stuck` (a broker must come back), `never` (no completion whatever comes back and catches up: the reasons
   are the declared findings of spec/findings.py whose signature holds here, e.g. a replica both adding and
   removing), `unexplained` (the model cannot reach what the cluster shows).
2. **What would a cancel leave?** The reference's Cancel from the located state, then the controller's own
   steps; every state the partition can pass through while followers catch up is searched for a missing
   leader.
3. **What would an override to the original list leave?** The same with a request to `replicas − adding`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.models.reassign import TOPIC, ReassignmentModel, in_flight
from kreassign.checker.plan.model import unclean_needed
from kreassign.checker.scenarios.mapping import code_name, response_code
from kreassign.spec import actions as A
from kreassign.spec.findings import FINDINGS
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import NO_LEADER

from .locate import LOCATE_STATES, Located, Shape, locate, with_fresh_budget
from .release import Rules

#: what the environment can still do for a reassignment without anyone's decision but a broker's restart
ENVIRONMENT = (A.BrokerRecover, A.LeaderExpandIsr, A.ControllerStep)
#: what happens by itself once a request is accepted: the controller's steps, followers catching up
BY_ITSELF = (A.LeaderExpandIsr, A.ControllerStep)
LIVENESS = ("reassignment_can_finish", "reassignment_can_finish_in_sync")
#: from a located state only the environment moves: a few hundred states for RF 3, this is a guard
FINISH_STATES = 200_000

Event = tuple[str, int]  # ("back", broker) or ("sync", broker), shape ids


def event_of(action: Any) -> Event | None:
    if isinstance(action, A.BrokerRecover):
        return ("back", action.broker)
    if isinstance(action, A.LeaderExpandIsr):
        return ("sync", action.broker)
    return None


def _allowed(action: Any, kinds: tuple[type, ...], forbid: frozenset[Event]) -> bool:
    if not isinstance(action, kinds):
        return False
    e = event_of(action)
    if e is None:
        return True
    return e not in forbid and not (e[0] == "sync" and ("back", e[1]) in forbid)


def search(model: ReassignmentModel, start: ModelState, goal: Callable[[ModelState], bool],
           kinds: tuple[type, ...] = ENVIRONMENT, forbid: frozenset[Event] = frozenset()) -> list[tuple[Any, ModelState]] | None:
    """The shortest path [(action, state after)] from `start` to a goal state over `kinds` of actions; None when
    no goal is reachable (or the search passed FINISH_STATES, which a one-partition model never does)."""
    if goal(start):
        return []
    parent: dict[ModelState, tuple[ModelState | None, Any]] = {start: (None, None)}
    queue = deque([start])
    while queue and len(parent) < FINISH_STATES:
        s = queue.popleft()
        for a in model.actions(s):
            if not _allowed(a, kinds, forbid):
                continue
            n = model.step(s, a)[0]
            if n in parent:
                continue
            parent[n] = (s, a)
            if goal(n):
                path = []
                while parent[n][0] is not None:
                    prev, act = parent[n]
                    path.append((act, n))
                    n = prev
                return path[::-1]
            queue.append(n)
    return None


def reachable(model: ReassignmentModel, start: ModelState, kinds: tuple[type, ...]) -> list[ModelState]:
    seen = {start}
    queue = deque([start])
    while queue and len(seen) < FINISH_STATES:
        s = queue.popleft()
        for a in model.actions(s):
            if isinstance(a, kinds):
                n = model.step(s, a)[0]
                if n not in seen:
                    seen.add(n)
                    queue.append(n)
    return list(seen)


def finished(ms: ModelState) -> bool:
    return not in_flight(ms.cluster, TOPIC, 0)


# -- views in real broker ids -------------------------------------------------------------------------------


@dataclass
class Ids:
    back: dict[int, int]  # shape id -> real id

    def one(self, b: int) -> int | None:
        return None if b == NO_LEADER else self.back.get(b, b)

    def many(self, ids: Iterable[int]) -> list[int]:
        return [self.back.get(b, b) for b in ids]

    def partition(self, ms: ModelState) -> dict[str, Any]:
        p = ms.cluster.partition(TOPIC, 0)
        return {"replicas": self.many(p.replicas), "adding": self.many(p.adding), "removing": self.many(p.removing),
                "isr": self.many(p.isr), "leader": self.one(p.leader), "elr": self.many(p.elr),
                "down": self.many(b.id for b in ms.cluster.brokers if not (b.registered and b.active))}

    def action(self, a: Any) -> str:
        for kind, says in _SAYS.items():
            if isinstance(a, kind):
                return says.format(self.one(a.broker))
        if isinstance(a, A.ControllerStep):
            return "the controller takes its next step"
        if isinstance(a, A.Reassign):
            return f"reassign to {self.many(a.replicas)}"
        return "cancel" if isinstance(a, A.Cancel) else str(a)


#: the events of one broker, as the operator reads them
_SAYS = {A.BrokerRecover: "broker {} comes back", A.LeaderExpandIsr: "replica {} joins the ISR",
         A.BrokerFail: "broker {} fails", A.LeaderShrinkIsr: "replica {} drops out of the ISR"}


# -- the three questions ------------------------------------------------------------------------------------


@dataclass
class Finish:
    verdict: str  # waiting, stuck, never, finishing
    path: list[tuple[Any, ModelState]] | None
    required: list[Event] = field(default_factory=list)
    reasons: list[dict[str, str]] = field(default_factory=list)  # never: the findings whose signature holds


def finish(model: ReassignmentModel, ms: ModelState, rules: Rules) -> Finish:
    path = search(model, ms, finished)
    if path is None:
        return Finish("never", None, reasons=stuck_reasons(ms, rules))
    events = list(dict.fromkeys(e for a, _ in path if (e := event_of(a)) is not None))
    required = [e for e in events if search(model, ms, finished, forbid=frozenset({e})) is None]
    if any(kind == "back" for kind, _ in required):
        verdict = "stuck"
    elif required:
        verdict = "waiting"
    else:
        verdict = "finishing"
    return Finish(verdict, path, required)


def stuck_reasons(ms: ModelState, rules: Rules) -> list[dict[str, str]]:
    """The declared findings of `reassignment_can_finish` that explain why this state can never complete: those
    whose signature holds here and that are declared for this profile and release."""
    out, seen = [], set()
    for f in FINDINGS:
        if f.property == LIVENESS[0] and f.occurs_in(rules.profile, rules.kafka_version or None) and f.name not in seen:
            try:
                holds = f.signature(ms)
            except Exception:  # noqa: BLE001 - a signature written for another capability's state
                holds = False
            if holds:
                seen.add(f.name)
                out.append({"finding": f.name, "summary": f.summary})
    return out


@dataclass
class Outcome:
    """What a request (cancel, or an override to the original list) would leave."""

    request: str
    error: str | None  # Kafka's error name when the request would be refused
    settled: ModelState | None
    leaderless_now: bool = False
    leaderless_possible: bool = False
    unclean_needed: bool = False
    then: Finish | None = None  # when the request starts a reassignment of its own (zk's revert, an override)


def outcome(model: ReassignmentModel, ms: ModelState, action: Any, rules: Rules) -> Outcome:
    name = "cancel" if isinstance(action, A.Cancel) else "override"
    after, tr = model.step(ms, action)
    code = response_code(tr.response, 0)
    if code:
        return Outcome(name, code_name(code), None)
    # the controller's own steps (zk: steps U, A, B of the revert) up to the first state it waits in
    settled = after
    while True:
        step = next((a for a in model.actions(settled) if isinstance(a, A.ControllerStep)), None)
        if step is None:
            break
        settled = model.step(settled, step)[0]
    passing = reachable(model, after, BY_ITSELF)
    p = settled.cluster.partition(TOPIC, 0)
    then = finish(model, settled, rules) if not finished(settled) else None
    return Outcome(name, None, settled, p.leader == NO_LEADER,
                   any(s.cluster.partition(TOPIC, 0).leader == NO_LEADER for s in passing),
                   unclean_needed(settled), then)


@dataclass
class PartitionAnalysis:
    """The answers for one shape (shape ids); partitions of the same shape share them."""

    shape: Shape
    located: Located | None
    finishes: list[Finish] = field(default_factory=list)  # one per located state
    cancel: Outcome | None = None
    override: Outcome | None = None
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        if self.located is None:
            return "unexplained"
        order = ("never", "stuck", "waiting", "finishing")  # the worst of the located states' verdicts
        return min((f.verdict for f in self.finishes), key=order.index)

    @property
    def finish(self) -> Finish | None:
        return next((f for f in self.finishes if f.verdict == self.verdict), None)


def analyze(shape: Shape, rules: Rules, search_states: int = LOCATE_STATES) -> PartitionAnalysis:
    began = time.monotonic()
    located = locate(shape, rules, search_states)
    out = PartitionAnalysis(shape, located)
    if located is not None:
        model = located.model
        for ms in located.states:
            out.finishes.append(finish(model, ms, rules))
        ms = with_fresh_budget(model, located.states[0])
        out.cancel = outcome(model, ms, A.Cancel(TOPIC, 0), rules)
        if shape.original != shape.target:
            out.override = outcome(model, ms, A.Reassign(TOPIC, 0, shape.original), rules)
    out.seconds = time.monotonic() - began
    return out


__all__ = ["BY_ITSELF", "ENVIRONMENT", "Finish", "Ids", "Outcome", "PartitionAnalysis", "analyze", "event_of",
           "finish", "finished", "outcome", "search", "stuck_reasons"]
