"""The hypothesis engine: random walks over a model as a RuleBasedStateMachine, shrunk to a trace.

`machine_for(model)` turns any explorable model (checker/explore/protocol.py; in practice a
`ReassignmentModel`, or its `DifferentialModel` subclass that steps another
implementation in lockstep with the reference) into a Hypothesis state machine:

- one rule, `step`, draws an action among those the model enables in the current state
  (`model.actions(state)`: first the action's kind, then one action of that kind, so that
  a rare kind such as `ControllerFailover` is not drowned by twenty `Reassign` targets),
  applies it with `model.step` (or `next_state`), and checks every `transition` property
  on the edge;
- one invariant checks every `always` property on the state reached (and notes the first
  example of every `sometimes` property, which a random run may or may not meet).

A violated property raises a `PropertyViolated` subclass of its own (one class per
property, so that Hypothesis treats two properties as two bugs and shrinks each), and the
shortest failing path seen for it is kept in the machine's `FuzzRecorder`: after
shrinking, it is Hypothesis's minimal program (or shorter), and `run_fuzz` writes it as a
counterexample in the common trace format (checker/traces/format.py): a property failing at step
k gives a trace of k steps. Properties listed as `known` are recorded (shortest path) but
never raised, so the run keeps looking for the others. `eventually` (graph) properties
need the whole state graph and are left to `kreassign check`.

The recorder also collects every distinct model state visited, so a run can say how much
of the exhaustive state space (checker/explore/bfs.py) it reached.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.reporting import with_reporter
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test, initialize, invariant, rule
from kreassign.checker.explore.protocol import Model
from kreassign.checker.traces.format import trace_from_path, write_trace
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION, Property

#: a path as the other engines give it: [(initial state, None), (state, label), ...]
Path = list[tuple[Any, Any]]

PASSED = "passed"  # not violated in any step the run made (random testing proves nothing more)
VIOLATED = "violated"
KNOWN = "known-violation"
NOT_CHECKED = "not-checked"
EXAMPLE_FOUND = "example-found"  # a `sometimes` property held in some visited state
NO_EXAMPLE = "no-example-seen"  # ... or in none (random testing proves nothing either way)


class PropertyViolated(AssertionError):
    """A property failed on the machine's path; `property` names it. Subclassed once per property."""

    property: str = ""


_violation_classes: dict[str, type[PropertyViolated]] = {}


def violation_class(name: str) -> type[PropertyViolated]:
    """One exception class per property name: Hypothesis tells bugs apart by exception type and origin."""
    cls = _violation_classes.get(name)
    if cls is None:
        ident = "".join(c if c.isalnum() else "_" for c in name)
        cls = type(f"Violated_{ident}", (PropertyViolated,), {"property": name, "__module__": __name__})
        _violation_classes[name] = cls
    return cls


@dataclass
class FuzzRecorder:
    """What every run of one machine class saw (shared by all its instances)."""

    states: set = field(default_factory=set)  # distinct model states visited
    runs: int = 0  # machine instances (one per example, shrinking included)
    steps: int = 0  # actions applied
    known: dict[str, Path] = field(default_factory=dict)  # known property -> shortest violating path
    failures: dict[str, Path] = field(default_factory=dict)  # raised property -> shortest violating path
    examples: dict[str, Path] = field(default_factory=dict)  # sometimes property -> shortest path to an example

    def record(self, table: dict[str, Path], name: str, path: Path) -> None:
        """Keep the shortest path (ties: the latest, i.e. Hypothesis's final replay of the shrunk program)."""
        old = table.get(name)
        if old is None or len(path) <= len(old):
            table[name] = list(path)


def _kind(action: Any) -> str:
    return type(getattr(action, "action", action)).__name__


def machine_for(
    model: Model,
    *,
    check: Iterable[str] | None = None,
    known: Iterable[str] = (),
    recorder: FuzzRecorder | None = None,
    name: str | None = None,
) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class exploring `model` at random.

    `check` restricts the properties checked (default: every `always` and `transition`
    property of the model); `known` names properties that are recorded but not raised.
    The class's `recorder` attribute is the FuzzRecorder shared by its runs.
    """
    wanted = None if check is None else set(check)
    props = [p for p in model.properties() if p.kind in (ALWAYS, TRANSITION) and (wanted is None or p.name in wanted)]
    always = [p for p in props if p.kind == ALWAYS]
    sometimes = [p for p in model.properties() if p.kind == SOMETIMES and (wanted is None or p.name in wanted)]
    transition = [p for p in props if p.kind == TRANSITION]
    known_names = frozenset(known)
    rec = recorder if recorder is not None else FuzzRecorder()
    has_step = callable(getattr(model, "step", None))
    inits = list(model.init_states())
    if not inits:
        raise ValueError("the model has no initial state")

    def violated(machine: ReassignmentMachine, prop: Property) -> None:
        path = machine.path
        if prop.name in known_names:
            rec.record(rec.known, prop.name, path)
            machine.reported.add(prop.name)
            return
        rec.record(rec.failures, prop.name, path)
        actions = " -> ".join(model.format_action(label) for _, label in path[1:]) or "(initial state)"
        raise violation_class(prop.name)(
            f"{prop.name} ({prop.kind}) fails after {len(path) - 1} step(s): {actions}"
        )

    class ReassignmentMachine(RuleBasedStateMachine):
        """Random walks over the model; every always/transition property checked at every step."""

        recorder: FuzzRecorder = rec  # shared by every run of this class
        checked: tuple[str, ...] = tuple(p.name for p in props + sometimes)  # the properties it checks

        def __init__(self) -> None:
            super().__init__()
            rec.runs += 1
            self.state: Any = None
            self.path: Path = []
            self.reported: set[str] = set()  # known violations already recorded on this path

        @initialize(index=st.integers(min_value=0, max_value=len(inits) - 1))
        def start(self, index: int) -> None:
            self.state = inits[index]
            self.path = [(self.state, None)]
            rec.states.add(self.state)

        @rule(data=st.data())
        def step(self, data: st.DataObject) -> None:
            actions = list(model.actions(self.state))
            if not actions:  # a deadlock: nothing is enabled (budgets spent, nobody can act)
                return
            kinds: list[str] = []
            for a in actions:
                if _kind(a) not in kinds:
                    kinds.append(_kind(a))
            kind = data.draw(st.sampled_from(kinds), label="kind") if len(kinds) > 1 else kinds[0]
            action = data.draw(st.sampled_from([a for a in actions if _kind(a) == kind]), label="action")
            if has_step:
                nxt, label = model.step(self.state, action)
            else:
                nxt, label = model.next_state(self.state, action), action
                if nxt is None:  # "does nothing here"
                    nxt = self.state
            prev = self.state
            self.state = nxt
            self.path.append((nxt, label))
            rec.steps += 1
            rec.states.add(nxt)
            for prop in transition:
                if prop.name not in self.reported and not prop.predicate(prev, label, nxt):
                    violated(self, prop)

        @invariant()
        def always_properties(self) -> None:
            if self.state is None:
                return
            for prop in sometimes:
                if prop.predicate(self.state):
                    rec.record(rec.examples, prop.name, self.path)
            for prop in always:
                if prop.name not in self.reported and not prop.predicate(self.state):
                    violated(self, prop)

    ReassignmentMachine.__name__ = ReassignmentMachine.__qualname__ = name or "ReassignmentMachine"
    return ReassignmentMachine


def fuzz_settings(examples: int = 200, steps: int = 50, *, parent: settings | None = None, **kw: Any) -> settings:
    """Settings for a fuzz run: `examples` random programs of at most `steps` actions, no deadline,
    no example database (a run is reproduced by its seed), every bug reported."""
    base: dict[str, Any] = {
        "max_examples": examples,
        "stateful_step_count": steps,
        "deadline": None,
        "database": None,
        "report_multiple_bugs": True,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    }
    base.update(kw)
    return settings(parent, **base) if parent is not None else settings(**base)


@dataclass
class PropertyOutcome:
    status: str  # passed / violated / known-violation / not-checked / example-found / no-example-seen
    kind: str
    length: int | None = None  # steps of the (shortest) violating path
    counterexample: str | None = None  # the trace file written for it
    known_file: str | None = None  # the curated counterexample declaring it known


@dataclass
class FuzzResult:
    profile: str
    bounds: dict[str, Any]
    examples: int
    max_steps: int
    seed: int | None
    runs: int
    steps: int
    seconds: float
    states: int  # distinct model states the runs visited
    properties: dict[str, PropertyOutcome]
    programs: list[str]  # Hypothesis's printed falsifying programs
    errors: list[str]  # exceptions other than property violations (a crash of the model or adapter)
    visited: set = field(default_factory=set, repr=False)
    paths: dict[str, Path] = field(default_factory=dict, repr=False)  # violated + known -> path

    @property
    def unexpected(self) -> list[str]:
        return [n for n, o in self.properties.items() if o.status == VIOLATED]


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for e in exc.exceptions:
            out += _leaves(e)
        return out
    return [exc]


def run_fuzz(
    model: Model,
    *,
    model_kind: str = "reassignment",
    examples: int = 200,
    steps: int = 50,
    seed: int | None = None,
    known: Callable[[str], str | None] | Iterable[str] = (),
    check: Iterable[str] | None = None,
    out_dir: str | None = None,
    hypothesis_settings: settings | None = None,
    report: Callable[[str], None] | None = None,
) -> FuzzResult:
    """Run the machine of `model` and classify every property; write a trace per unexpected violation.

    `known` is a set of property names, or a function property -> curated file or None
    (spec.findings.known_violation bound to a profile). `hypothesis_settings`
    replaces the settings built from `examples` / `steps`; `seed` fixes Hypothesis's
    seed (otherwise it is random unless the settings derandomize). Hypothesis's printed
    programs go to `report` (default: collected in `FuzzResult.programs` only).
    """
    props = list(model.properties())
    if callable(known):
        known_of = known
    else:
        names = set(known)
        known_of = lambda n: ("(declared known)" if n in names else None)
    known_names = [p.name for p in props if known_of(p.name) is not None]
    recorder = FuzzRecorder()
    machine = machine_for(model, check=check, known=known_names, recorder=recorder)
    s = hypothesis_settings or fuzz_settings(examples, steps)
    test = get_state_machine_test(machine, settings=s)
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    programs: list[str] = []
    errors: list[str] = []

    def reporter(text: str) -> None:
        programs.append(text)
        if report is not None:
            report(text)

    started = time.perf_counter()
    try:
        with with_reporter(reporter):
            test()
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        if any(isinstance(leaf, KeyboardInterrupt) for leaf in _leaves(exc)):  # Ctrl-C inside an exception group
            raise KeyboardInterrupt from exc
        for leaf in _leaves(exc):
            notes = "\n".join(getattr(leaf, "__notes__", ()))
            if notes:
                reporter(f"{type(leaf).__name__}: {leaf}\n{notes}")
            if not isinstance(leaf, PropertyViolated):
                errors.append(f"{type(leaf).__name__}: {leaf}")
    seconds = time.perf_counter() - started

    desc = model.describe() if hasattr(model, "describe") else {}
    profile = desc.get("profile", getattr(model, "name", "model"))
    outcomes: dict[str, PropertyOutcome] = {}
    paths: dict[str, Path] = {}
    checked = set(machine.checked)
    for prop in props:
        if prop.kind == EVENTUALLY or prop.name not in checked:
            outcomes[prop.name] = PropertyOutcome(NOT_CHECKED, prop.kind)
        elif prop.kind == SOMETIMES:
            path = recorder.examples.get(prop.name)
            if path is not None:
                paths[prop.name] = path
            outcomes[prop.name] = PropertyOutcome(EXAMPLE_FOUND if path is not None else NO_EXAMPLE, prop.kind,
                                                  len(path) - 1 if path is not None else None)
        elif prop.name in recorder.failures:
            path = recorder.failures[prop.name]
            paths[prop.name] = path
            file = None
            if out_dir is not None:
                trace = trace_from_path(model, model_kind, prop.name, prop.kind, path, engine="hypothesis",
                                        description=prop.description)
                file = os.path.join(out_dir, f"{profile}__{prop.name}.json")
                write_trace(trace, file)
            outcomes[prop.name] = PropertyOutcome(VIOLATED, prop.kind, len(path) - 1, file)
        elif prop.name in recorder.known:
            path = recorder.known[prop.name]
            paths[prop.name] = path
            outcomes[prop.name] = PropertyOutcome(KNOWN, prop.kind, len(path) - 1, None, known_of(prop.name))
        else:
            outcomes[prop.name] = PropertyOutcome(PASSED, prop.kind)
    return FuzzResult(
        profile=profile,
        bounds={k: v for k, v in desc.items() if k != "profile"},
        examples=s.max_examples,
        max_steps=s.stateful_step_count,
        seed=seed,
        runs=recorder.runs,
        steps=recorder.steps,
        seconds=seconds,
        states=len(recorder.states),
        properties=outcomes,
        programs=programs,
        errors=errors,
        visited=recorder.states,
        paths=paths,
    )


__all__ = [
    "EXAMPLE_FOUND",
    "KNOWN",
    "NOT_CHECKED",
    "NO_EXAMPLE",
    "PASSED",
    "VIOLATED",
    "FuzzRecorder",
    "FuzzResult",
    "PropertyOutcome",
    "PropertyViolated",
    "fuzz_settings",
    "machine_for",
    "run_fuzz",
    "violation_class",
]
