"""Scenarios drawn from the kraft model (docs/scenarios.md): seeded random walks, and shortest paths to states
a predicate picks, over the model's *settled* states (after every driven action, the ISR expansions the cluster
makes by itself). Every walk ends by bringing each failed broker back, so that the cluster is whole again.
Deterministic: the same arguments give the same JSON.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable
from typing import Any

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import TOPIC
from kreassign.spec import actions as A
from kreassign.spec.reassign_properties import ModelState

from .format import Scenario, Step
from .mapping import (
    DRIVEN,
    NOT_DRIVEN_NOTE,
    expectation,
    make_model,
    real_step,
    response_code,
    settle,
    waits_for,
)

DEFAULT_VERSION = "4.4.0"


def _in_flight_with_failed_target(state: ModelState) -> bool:
    c = state.cluster
    down = {b.id for b in c.brokers if not b.active}
    return any(p.reassigning and set(p.adding) & down for p in c.topic(TOPIC).partitions)


#: named predicates on settled model states, for shortest paths
PREDICATES: dict[str, Callable[[ModelState], bool]] = {
    "reassigning": lambda s: any(p.reassigning for p in s.cluster.topic(TOPIC).partitions),
    "reassigning_with_failed_target": _in_flight_with_failed_target,
    "leader_not_preferred": lambda s: any(p.leader >= 0 and p.leader != p.replicas[0]
                                          for p in s.cluster.topic(TOPIC).partitions),
    "under_replicated": lambda s: any(len(p.isr) < len(p.replicas) for p in s.cluster.topic(TOPIC).partitions),
}


def _driven(model: Any, state: ModelState) -> list[Any]:
    return [a for a in model.actions(state) if isinstance(a, DRIVEN)]


def _successor(model: Any, state: ModelState, action: Any) -> tuple[ModelState | None, Any, tuple[str, ...]]:
    nxt, label = model.step(state, action)
    settled, taken = settle(model, nxt)
    return settled, label, (str(action), *taken)


class _Builder:
    def __init__(self, bounds: Bounds, topic: str, rng: random.Random):
        self.model = make_model(bounds)
        self.topic, self.rng = topic, rng
        self.steps: list[Step] = []
        self.notes: list[str] = [NOT_DRIVEN_NOTE]
        state, taken = settle(self.model, self.model.init_states()[0])
        if state is None or taken:
            raise ValueError("the model's initial state is not settled")
        self.state: ModelState = state

    def add(self, action: Any) -> bool:
        """Append the step for `action`; False (nothing appended) when its settled state is not determined."""
        settled, label, taken = _successor(self.model, self.state, action)
        if settled is None:
            self.notes.append(f"{action}: left out, the cluster's own steps after it may end in different states")
            return False
        clean = self.rng.random() < 0.5 if isinstance(action, A.BrokerFail) else False
        step = real_step(action, self.topic, clean_shutdown=clean)
        code = response_code(label.response, step.partition) if step.do in ("reassign", "cancel") else None
        self.steps.append(Step(step.do, topic=step.topic, partition=step.partition, target=step.target,
                               broker=step.broker, waits=waits_for(step, self.state, settled), model=taken,
                               expect=expectation(settled, code)))
        self.state = settled
        return True

    def recover_all(self) -> None:
        for b in self.state.cluster.brokers:
            if not b.active:
                self.add(A.BrokerRecover(b.id))

    def scenario(self, bounds: Bounds, seed: int, kafka_version: str, generator: dict[str, Any]) -> Scenario:
        initial = {p: tuple(r) for p, r in enumerate(bounds.initial_assignment())}
        return Scenario(kafka_version=kafka_version, seed=seed, profile="kraft",
                        bounds=json.loads(json.dumps(bounds.to_json())),
                        brokers=bounds.brokers, controllers=1, topic=self.topic, initial=initial,
                        steps=tuple(self.steps), generator=generator, notes=tuple(self.notes))


def _bounds(bounds: Bounds, kafka_version: str) -> Bounds:
    if bounds.kafka_version and bounds.kafka_version != kafka_version:
        raise ValueError(f"bounds.kafka_version {bounds.kafka_version} is not the scenario's {kafka_version}")
    from dataclasses import replace

    return replace(bounds, kafka_version=kafka_version)


def random_walk(bounds: Bounds, seed: int, length: int = 6, *, topic: str | None = None,
                kafka_version: str = DEFAULT_VERSION, require: tuple[type, ...] = ()) -> Scenario:
    """A seeded random walk of `length` driven actions over the settled model, then every failed broker back.
    `require`: action kinds the walk must take (each chosen first, in a random place, while enabled)."""
    bounds = _bounds(bounds, kafka_version)
    rng = random.Random(seed)
    b = _Builder(bounds, topic or f"walk-{seed}", rng)
    pending = list(require)
    for _ in range(length):
        choices = _driven(b.model, b.state)
        if not choices:
            break
        wanted = [a for a in choices if pending and isinstance(a, pending[0])]
        action = rng.choice(wanted) if wanted and rng.random() < 0.6 else rng.choice(choices)
        if b.add(action) and pending and isinstance(action, pending[0]):
            pending.pop(0)
    b.recover_all()
    return b.scenario(bounds, seed, kafka_version, {"kind": "walk", "length": length,
                                                    "require": [k.__name__ for k in require]})


def shortest_path(bounds: Bounds, predicate: str, *, seed: int = 0, topic: str | None = None,
                  kafka_version: str = DEFAULT_VERSION, max_states: int = 100_000) -> Scenario:
    """A shortest path (breadth-first, actions in the model's order) over the settled model to a state
    `predicate` holds in, then every failed broker back. `seed` picks kill or stop for each failure."""
    if predicate not in PREDICATES:
        raise ValueError(f"unknown predicate {predicate!r} (known: {', '.join(PREDICATES)})")
    bounds = _bounds(bounds, kafka_version)
    model = make_model(bounds)
    start = settle(model, model.init_states()[0])[0]
    parent: dict[ModelState, tuple[ModelState, Any] | None] = {start: None}
    queue: deque[ModelState] = deque([start])
    found = None
    while queue:
        s = queue.popleft()
        if PREDICATES[predicate](s):
            found = s
            break
        for a in _driven(model, s):
            n = _successor(model, s, a)[0]
            if n is not None and n not in parent:
                parent[n] = (s, a)
                if len(parent) > max_states:
                    raise ValueError(f"no state where {predicate} holds within {max_states} states")
                queue.append(n)
    if found is None:
        raise ValueError(f"no reachable state where {predicate} holds at these bounds")
    path: list[Any] = []
    s = found
    while parent[s] is not None:
        s, a = parent[s]
        path.append(a)
    b = _Builder(bounds, topic or f"path-{predicate.replace('_', '-')}-{seed}", random.Random(seed))
    for a in reversed(path):
        b.add(a)
    b.recover_all()
    return b.scenario(bounds, seed, kafka_version, {"kind": "shortest_path", "predicate": predicate,
                                                    "length": len(path)})


__all__ = ["DEFAULT_VERSION", "PREDICATES", "random_walk", "shortest_path"]
