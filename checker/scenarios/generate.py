"""Scenarios drawn from the kraft model (docs/scenarios.md): seeded random walks, and shortest paths to states
a predicate picks, over the model's *settled* states (after every driven action, the ISR expansions the cluster
makes by itself, a paused follower's excepted). Every walk ends by resuming each paused follower and bringing
each failed broker back, so that the cluster is whole again. `faults` says which faults a scenario may inject
(FAULTS). Deterministic: the same arguments give the same JSON.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import TOPIC
from kreassign.spec import actions as A
from kreassign.spec.reassign_properties import ModelState

from .format import Scenario, Step
from .mapping import (
    DRIVEN,
    PROFILE_OF_MODE,
    Held,
    expectation,
    held_after,
    make_model,
    model_action,
    real_step,
    response_code,
    settle,
    waits_for,
)

DEFAULT_VERSION = "4.4.0"
#: the release a mode's scenarios default to (ZooKeeper mode: the last release that has it)
DEFAULT_VERSIONS = {"kraft": DEFAULT_VERSION, "zk": "3.9.2"}
#: the share of requests sent through Kafka's reassignment tool rather than the Admin client (where it may)
TOOL_SHARE = 0.3
#: the faults a scenario may inject, by name (`kreassign conformance --faults`): a broker killed (SIGKILL) or
#: stopped cleanly (BrokerFail, then BrokerRecover: restarted), the active controller killed
#: (ControllerFailover), a follower paused (LeaderShrinkIsr, then `resume`)
FAULTS = ("kill", "stop", "failover", "pause")


@dataclass(frozen=True)
class Resume:
    """Not a model action: the end of a pause (the follower's throttle removed), chosen like one."""

    partition: int
    broker: int

    def __str__(self) -> str:
        return f"Resume({TOPIC}-{self.partition} +{self.broker})"


def _allowed(action: Any, faults: frozenset[str]) -> bool:
    if isinstance(action, A.BrokerFail):
        return bool({"kill", "stop"} & faults)
    if isinstance(action, A.ControllerFailover):
        return "failover" in faults
    if isinstance(action, A.LeaderShrinkIsr):
        return "pause" in faults
    return True


def check_faults(faults: Any) -> frozenset[str]:
    out = frozenset(faults)
    unknown = sorted(out - set(FAULTS))
    if unknown:
        raise ValueError(f"unknown fault {unknown[0]!r} (known: {', '.join(FAULTS)})")
    return out


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


def _driven(model: Any, state: ModelState, faults: frozenset[str] = frozenset(FAULTS),
            held: Held = frozenset()) -> list[Any]:
    """The actions a scenario may take next: the model's driven ones the faults allow (a follower already held
    is not paused again), then a resume of each held follower."""
    out = [a for a in model.actions(state) if isinstance(a, DRIVEN) and _allowed(a, faults)
           and not (isinstance(a, A.LeaderShrinkIsr) and (a.partition, a.broker) in held)]
    return out + [Resume(p, b) for p, b in sorted(held)]


def _step_of(action: Any, topic: str) -> Step:
    if isinstance(action, Resume):
        return Step("resume", topic=topic, partition=action.partition, broker=action.broker)
    return real_step(action, topic)


def _successor(model: Any, state: ModelState, action: Any,
               held: Held = frozenset()) -> tuple[ModelState | None, Any, tuple[str, ...], Held]:
    """The settled state after `action`, its label (None for a resume), the model's actions taken, the held
    followers after it."""
    now_held = held_after(_step_of(action, TOPIC), held)
    if isinstance(action, Resume):
        settled, taken = settle(model, state, now_held)
        return settled, None, taken, now_held
    nxt, label = model.step(state, action)
    settled, taken = settle(model, nxt, now_held)
    return settled, label, (str(action), *taken), now_held


class _Builder:
    def __init__(self, bounds: Bounds, topic: str, rng: random.Random, faults: frozenset[str], *,
                 mode: str = "kraft", kafka_version: str = DEFAULT_VERSION):
        self.mode, self.kafka_version = mode, kafka_version
        self.model = make_model(bounds, PROFILE_OF_MODE[mode])
        self.topic, self.rng, self.faults = topic, rng, faults
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self.held: Held = frozenset()
        state, taken = settle(self.model, self.model.init_states()[0])
        if state is None or taken:
            raise ValueError("the model's initial state is not settled")
        self.state: ModelState = state

    def add(self, action: Any, clean: bool | None = None, via: str | None = None) -> bool:
        """Append the step for `action`; False (nothing appended) when its settled state is not determined.
        `clean`: a BrokerFail's stop (True) or kill (False); None: as the faults allow and the seed says."""
        settled, label, taken, held = _successor(self.model, self.state, action, self.held)
        if settled is None:
            self.notes.append(f"{action}: left out, the cluster's own steps after it may end in different states")
            return False
        if isinstance(action, A.BrokerFail) and clean is None:  # kill or stop, among those the faults allow
            ways = [w for w in ("kill", "stop") if w in self.faults] or ["kill"]
            clean = self.rng.random() < 0.5 if len(ways) == 2 else ways == ["stop"]
        clean = bool(clean)
        step = _step_of(action, self.topic) if isinstance(action, Resume) else \
            real_step(action, self.topic, clean_shutdown=clean, mode=self.mode)
        code = response_code(label.response, step.partition) if step.do in ("reassign", "cancel") else None
        self.steps.append(Step(step.do, topic=step.topic, partition=step.partition, target=step.target,
                               broker=step.broker, waits=waits_for(step, self.state, settled), model=taken,
                               expect=expectation(settled, code), via=via or self._via(action)))
        self.state, self.held = settled, held
        return True

    def _via(self, action: Any) -> str:
        """Some requests go through Kafka's reassignment tool, where it sends what the Admin API would: a
        reassignment whose every target broker is up (the tool refuses a broker DescribeCluster does not list,
        reassign_tool.py), a cancel on 4.x (3.9's tool skips a reassignment that only adds replicas, KAFKA-14595,
        fixed in 4.0)."""
        if not isinstance(action, A.Reassign | A.Cancel):
            return "admin"
        pick = self.rng.random() < TOOL_SHARE
        if isinstance(action, A.Cancel):
            return "tool" if pick and int(self.kafka_version.split(".")[0]) >= 4 else "admin"
        up = {b.id for b in self.state.cluster.brokers if b.active}
        return "tool" if pick and set(action.replicas) <= up else "admin"

    def recover_all(self) -> None:
        """Resume every paused follower, then bring every failed broker back — also where the model does not
        determine what follows (the step then expects nothing: `expect` null, only its own wait): the next
        scenario must start on a whole cluster. Seen: two ISR expansions after an ELR leader's return completing
        a reassignment in either order left a broker down at the end (seeds 5196, 7016)."""
        closing = [Resume(p, b) for p, b in sorted(self.held)]
        closing += [A.BrokerRecover(br.id) for br in self.state.cluster.brokers if not br.active]
        lost = False  # after one step without an expectation, none of the following has one either
        for action in closing:
            if lost or not self.add(action):
                if not lost:
                    self.notes.pop()  # add's "left out" note: the step is done after all
                self._undetermined(action)
                lost = True

    def _undetermined(self, action: Any) -> None:
        """Append `action`'s step with no expectation, and go on from its unsettled state (only the brokers'
        and the holds' bookkeeping matters to the closing steps after it)."""
        step = _step_of(action, self.topic) if isinstance(action, Resume) else real_step(action, self.topic,
                                                                                          mode=self.mode)
        self.notes.append(f"{action}: done without an expectation (the cluster's own steps before or after it may "
                          "end in different states), so that the cluster ends whole")
        self.steps.append(Step(step.do, topic=step.topic, partition=step.partition, broker=step.broker,
                               waits=waits_for(step, self.state, None), model=(str(action),), expect=None))
        self.held = held_after(step, self.held)
        if not isinstance(action, Resume):
            self.state = self.model.step(self.state, action)[0]

    def scenario(self, bounds: Bounds, seed: int, kafka_version: str, generator: dict[str, Any]) -> Scenario:
        initial = {p: tuple(r) for p, r in enumerate(bounds.initial_assignment())}
        return Scenario(kafka_version=kafka_version, seed=seed, profile=PROFILE_OF_MODE[self.mode], mode=self.mode,
                        bounds=json.loads(json.dumps(bounds.to_json())),
                        brokers=bounds.brokers, controllers=1, topic=self.topic, initial=initial,
                        steps=tuple(self.steps), generator=generator, notes=tuple(self.notes))


def _bounds(bounds: Bounds, kafka_version: str, mode: str = "kraft") -> Bounds:
    if mode not in PROFILE_OF_MODE:
        raise ValueError(f"unknown mode {mode!r} (known: {', '.join(PROFILE_OF_MODE)})")
    if mode == "zk":  # the zk profile is Kafka 2.4 - 3.9's controller as one: bounds name no release
        if not kafka_version.startswith("3."):
            raise ValueError(f"zk mode needs Kafka 3.x (4.0 removed ZooKeeper), not {kafka_version}")
        if bounds.kafka_version:
            raise ValueError("bounds.kafka_version applies to the kraft profile only")
        return bounds
    if bounds.kafka_version and bounds.kafka_version != kafka_version:
        raise ValueError(f"bounds.kafka_version {bounds.kafka_version} is not the scenario's {kafka_version}")
    from dataclasses import replace

    return replace(bounds, kafka_version=kafka_version)


def random_walk(bounds: Bounds, seed: int, length: int = 6, *, topic: str | None = None,
                kafka_version: str | None = None, require: tuple[type, ...] = (),
                faults: Any = FAULTS, mode: str = "kraft") -> Scenario:
    """A seeded random walk of `length` driven actions over the settled model, then every paused follower
    resumed and every failed broker back. `require`: action kinds the walk must take (each chosen first, in a
    random place, while enabled); `faults`: the fault kinds it may inject (FAULTS); `mode`: "kraft" or "zk" (the
    profile the walk is drawn from; the release defaults to DEFAULT_VERSIONS[mode])."""
    kafka_version = kafka_version or DEFAULT_VERSIONS.get(mode, DEFAULT_VERSION)
    bounds = _bounds(bounds, kafka_version, mode)
    allowed = check_faults(faults)
    if bounds.min_insync > 1:  # a pause cannot hold a follower there (pauses.py, PAUSES_NEED)
        allowed -= {"pause"}
    rng = random.Random(seed)
    b = _Builder(bounds, topic or f"walk-{seed}", rng, allowed, mode=mode, kafka_version=kafka_version)
    pending = list(require)
    for _ in range(length):
        choices = _driven(b.model, b.state, allowed, b.held)
        if not choices:
            break
        wanted = [a for a in choices if pending and isinstance(a, pending[0])]
        action = rng.choice(wanted) if wanted and rng.random() < 0.6 else rng.choice(choices)
        if b.add(action) and pending and isinstance(action, pending[0]):
            pending.pop(0)
    b.recover_all()
    generator: dict[str, Any] = {"kind": "walk", "length": length, "require": [k.__name__ for k in require]}
    if allowed != frozenset(FAULTS):
        generator["faults"] = sorted(allowed)
    return b.scenario(bounds, seed, kafka_version, generator)


def shortest_path(bounds: Bounds, predicate: str, *, seed: int = 0, topic: str | None = None,
                  kafka_version: str | None = None, max_states: int = 100_000, mode: str = "kraft") -> Scenario:
    """A shortest path (breadth-first, actions in the model's order) over the settled model to a state
    `predicate` holds in, then every failed broker back. `seed` picks kill or stop for each failure."""
    if predicate not in PREDICATES:
        raise ValueError(f"unknown predicate {predicate!r} (known: {', '.join(PREDICATES)})")
    kafka_version = kafka_version or DEFAULT_VERSIONS.get(mode, DEFAULT_VERSION)
    bounds = _bounds(bounds, kafka_version, mode)
    model = make_model(bounds, PROFILE_OF_MODE[mode])
    start = settle(model, model.init_states()[0])[0]
    parent: dict[ModelState, tuple[ModelState, Any] | None] = {start: None}
    queue: deque[ModelState] = deque([start])
    found = None
    while queue:
        s = queue.popleft()
        if PREDICATES[predicate](s):
            found = s
            break
        for a in _driven(model, s, frozenset(FAULTS) - {"pause"}):
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
    b = _Builder(bounds, topic or f"path-{predicate.replace('_', '-')}-{seed}", random.Random(seed),
                 frozenset(FAULTS) - {"pause"}, mode=mode, kafka_version=kafka_version)
    for a in reversed(path):
        b.add(a)
    b.recover_all()
    return b.scenario(bounds, seed, kafka_version, {"kind": "shortest_path", "predicate": predicate,
                                                    "length": len(path)})


def actions_of(scenario: Scenario) -> list[tuple[Any, bool, str]]:
    """The scenario's steps as (model action or Resume, clean shutdown, via) triples: what `from_actions`
    rebuilds."""
    out = []
    for step in scenario.steps:
        if step.do == "resume":
            out.append((Resume(step.partition, step.broker), False, "admin"))
        else:
            out.append((model_action(step), step.do == "stop", step.via))
    return out


def from_actions(scenario: Scenario, actions: list[tuple[Any, bool, str]], *, topic: str) -> Scenario | None:
    """A scenario like `scenario` (release, mode, bounds, seed) made of `actions` (as `actions_of` gives them),
    then every paused follower resumed and every failed broker back; None if an action is not enabled where it
    comes, or its outcome is not determined (minimization tries such subsets)."""
    from kreassign.checker.config.bounds import bounds_from_mapping

    bounds = bounds_from_mapping(scenario.bounds)
    b = _Builder(bounds, topic, random.Random(scenario.seed), frozenset(FAULTS), mode=scenario.mode,
                 kafka_version=scenario.kafka_version)
    for action, clean, via in actions:
        enabled = _driven(b.model, b.state, frozenset(FAULTS), b.held)
        if action not in enabled or not b.add(action, clean, via):
            return None
    b.recover_all()
    return b.scenario(bounds, scenario.seed, scenario.kafka_version,
                      {**scenario.generator, "minimized_from": scenario.topic})


__all__ = ["DEFAULT_VERSION", "DEFAULT_VERSIONS", "FAULTS", "PREDICATES", "Resume", "actions_of", "check_faults",
           "from_actions", "random_walk", "shortest_path"]
