"""`kreassign check` as a library: explore a model, classify every property, minimize counterexamples.

The engine finds a shortest path per violated property; `minimize` then shrinks the
bounds (fewer partitions, brokers, failovers, failures, cancels, requests) while the
same property still fails, so the trace handed back is the shortest one in the
smallest configuration that shows it. A profile declares the violations it is known to
have (spec/known_violations.py); only an undeclared violation makes the run fail.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.spec.known_violations import known_violation
from kreassign.spec.properties import EVENTUALLY, SOMETIMES

from . import liveness
from .bfs import ExploreResult, Path, explore
from .config import Bounds, ConfigError
from .model import Model
from .reassign_model import ReassignmentModel
from .trace import trace_from_path, write_trace

HOLDS = "holds"
VIOLATED = "violated"
KNOWN = "known-violation"
NOT_CHECKED = "not-checked"


@dataclass
class PropertyVerdict:
    status: str
    counterexample: str | None = None  # path of the trace file
    length: int | None = None  # steps in the counterexample


@dataclass
class CheckResult:
    profile: str
    engine: str
    bounds: dict[str, Any]
    states: int
    transitions: int
    depth: int
    seconds: float
    complete: bool
    properties: dict[str, PropertyVerdict] = field(default_factory=dict)

    @property
    def unexpected(self) -> list[str]:
        return [n for n, v in self.properties.items() if v.status == VIOLATED]

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "engine": self.engine,
            "bounds": self.bounds,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "complete": self.complete,
            "properties": {
                n: {"status": v.status, "counterexample": v.counterexample, "length": v.length}
                for n, v in self.properties.items()
            },
        }


ModelFactory = Callable[[str, Any], Model]


def reassignment_factory(profile: str, bounds: Bounds) -> Model:
    return ReassignmentModel(profile, bounds)


def find_violations(model: Model, *, keep_graph: bool, progress=None, stop_on: str | None = None,
                    explorer: Callable[..., ExploreResult] = explore) -> tuple[ExploreResult, dict[str, tuple[Path, int | None]]]:
    """Explore and collect {property: (path, loop_start)} for safety and graph properties.

    `explorer` is the engine: `explore` (embedded) or another with the same signature and
    result (the Spark engine); liveness runs on the graph it returns.
    """
    result = explorer(model, keep_graph=keep_graph, progress=progress, stop_on_violation=stop_on is not None)
    found: dict[str, tuple[Path, int | None]] = {n: (v.path, None) for n, v in result.violations.items()}
    if keep_graph and result.graph is not None and result.complete:
        for prop in model.properties():
            if prop.kind == EVENTUALLY:
                stuck = liveness.find_stuck(result.graph, prop.predicate)
                if stuck is not None:
                    found[prop.name] = liveness.lasso(result.graph, stuck)
    return result, found


def _violates(factory: ModelFactory, profile: str, bounds: Any, prop_name: str, graph: bool) -> tuple[Path, int | None] | None:
    try:
        model = factory(profile, bounds)
    except (ConfigError, ValueError):
        return None
    # check this property alone, so that stopping at the first violation stops at this one
    only = [p for p in model.properties() if p.name == prop_name]
    model.properties = lambda: only  # type: ignore[method-assign]
    _, found = find_violations(model, keep_graph=graph, stop_on=None if graph else prop_name)
    return found.get(prop_name)


SHRINKABLE = ("partitions", "brokers", "failovers", "failures", "cancels", "reassigns", "log_length")


def minimize(factory: ModelFactory, profile: str, bounds: Bounds, prop_name: str, graph: bool,
             found: tuple[Path, int | None]) -> tuple[Bounds, tuple[Path, int | None]]:
    """Greedily shrink each bound while `prop_name` still fails; return the smallest bounds and path."""
    best_bounds, best = bounds, found
    for key in SHRINKABLE:
        while getattr(best_bounds, key) > 0:
            try:
                candidate = replace(best_bounds, **{key: getattr(best_bounds, key) - 1})
                if key == "brokers" and candidate.initial is None and candidate.rf > candidate.brokers:
                    candidate = replace(candidate, rf=candidate.brokers)
            except ConfigError:
                break
            again = _violates(factory, profile, candidate, prop_name, graph)
            if again is None:
                break
            best_bounds, best = candidate, again
    return best_bounds, best


def check_model(
    profile: str,
    bounds: Bounds,
    *,
    factory: ModelFactory = reassignment_factory,
    model_kind: str = "reassignment",
    out_dir: str | None = None,
    liveness_check: bool = True,
    minimize_counterexamples: bool = True,
    progress=None,
    symmetry: bool = False,
    explorer: Callable[..., ExploreResult] = explore,
    engine: str = "embedded",
) -> CheckResult:
    """Explore one profile at the given bounds and classify every property.

    With `symmetry`, the model is explored on broker-renaming orbits (checker/symmetry.py);
    counterexamples are turned back into concrete paths before they are written.
    """
    model = factory(profile, bounds)
    if symmetry:
        from .symmetry import SYMMETRIC_PROFILES, SymmetryReduced

        if profile not in SYMMETRIC_PROFILES:
            raise ValueError(f"profile {profile} is not symmetric under broker renaming "
                             f"(symmetric: {', '.join(sorted(SYMMETRIC_PROFILES))})")
        model = SymmetryReduced(model)
    started = time.perf_counter()
    result, found = find_violations(model, keep_graph=liveness_check, progress=progress, explorer=explorer)
    check = CheckResult(profile, engine, model.describe(), result.states, result.transitions, result.depth,
                        0.0, result.complete)
    for prop in model.properties():
        if prop.kind == SOMETIMES:
            status = HOLDS if prop.name in result.examples else VIOLATED
            check.properties[prop.name] = PropertyVerdict(status)
            continue
        if prop.kind == EVENTUALLY and not liveness_check:
            check.properties[prop.name] = PropertyVerdict(NOT_CHECKED)
            continue
        if prop.name not in found:
            check.properties[prop.name] = PropertyVerdict(HOLDS if result.complete else NOT_CHECKED)
            continue
        known = known_violation(profile, prop.name)
        if known is not None:
            check.properties[prop.name] = PropertyVerdict(KNOWN, known, len(found[prop.name][0]) - 1)
            continue
        path, loop = found[prop.name]
        if symmetry:
            path = model.concretize(path)
            model_for_trace = model.inner
        else:
            model_for_trace = model
        small_model = model_for_trace
        if minimize_counterexamples and isinstance(bounds, Bounds):
            small_bounds, (path, loop) = minimize(factory, profile, bounds, prop.name, prop.kind == EVENTUALLY, (path, loop))
            small_model = factory(profile, small_bounds)
        file = None
        if out_dir is not None:
            kind = "mismatch" if prop.name == "implementation_matches_reference" else prop.kind
            trace = trace_from_path(small_model, model_kind, prop.name, kind, path, loop_start=loop, engine=engine,
                                    description=prop.description)
            file = os.path.join(out_dir, f"{profile}__{prop.name}.json")
            write_trace(trace, file)
        check.properties[prop.name] = PropertyVerdict(VIOLATED, file, len(path) - 1)
    check.seconds = time.perf_counter() - started
    return check
