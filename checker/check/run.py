"""`kreassign check` as a library: explore a model, classify every violation, minimize counterexamples.

A profile promises some properties and declares *findings* for the others
(spec/findings.py): named ways its algorithm breaks a property, each with a signature
that recognises it. Classification happens in the driver, so every engine (embedded,
Spark) gives the same verdicts: each `always` / `transition` property P with findings
F1..Fk is handed to the engine as k + 1 properties,

- ``P`` itself, violated only where P fails and no signature matches (unexpected), and
- ``P::Fi``, violated where P fails and Fi's signature matches (an occurrence of Fi),

so the engine's usual "first (shortest) violation per property" yields the shortest
unexpected violation and the shortest occurrence of each finding in one search. For an
`eventually` property every stuck state of the graph is classified the same way. A
property is then

- ``holds``: no violation;
- ``known-violation``: every violation matches a declared finding;
- ``violated``: some violation matches none (unexpected; its trace is minimized and written);
- ``finding-missing``: a finding declared to occur at these bounds (`expected_at`) did not
  occur: the algorithm changed, and the declaration must follow.

`violated` and `finding-missing` fail the run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import Any

from kreassign.checker.check.minimize import bounds_json, minimize
from kreassign.checker.check.search import Search, as_search
from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.config.engine_options import DEFAULT_ENGINE, EngineOptions
from kreassign.checker.explore import liveness
from kreassign.checker.explore.bfs import ExploreResult, Path, StateGraph
from kreassign.checker.explore.protocol import Model
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.bfs import PackedResult
from kreassign.checker.packed.compositional import CompositionalResult, compositional_explorer
from kreassign.checker.packed.reassignment import packable, packed_explorer
from kreassign.checker.traces.format import trace_from_path, write_trace
from kreassign.spec.findings import MONOTONE_BOUNDS, Finding, findings_for, trace_file
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION, Property

HOLDS = "holds"
VIOLATED = "violated"
KNOWN = "known-violation"
NOT_CHECKED = "not-checked"
FINDING_MISSING = "finding-missing"

#: statuses that fail the run
FAILING = (VIOLATED, FINDING_MISSING)

SEP = "::"  # engine property name of a finding: "<property>::<finding>"

Found = tuple[Path, "int | None"]  # (path, loop start of a lasso or None)


@dataclass
class FindingVerdict:
    """One declared finding of a property at the checked bounds."""

    trace: str  # the curated counterexample file
    length: int | None  # steps of its shortest occurrence here (None: it did not occur)
    expected: bool  # declared to occur at these bounds


@dataclass
class PropertyVerdict:
    status: str
    counterexample: str | None = None  # path of the trace file
    length: int | None = None  # steps in the counterexample
    found_at: dict[str, Any] | None = None  # bounds the unexpected violation was found at
    minimized_to: dict[str, Any] | None = None  # bounds of the written (minimized) trace
    findings: dict[str, FindingVerdict] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        return [n for n, f in self.findings.items() if f.expected and f.length is None]


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
    reduction: dict[str, Any] | None = None  # a reduced search (compositional): what was explored instead
    memory: dict[str, Any] | None = None  # the packed path's figures: bytes per stored state, table bytes
    #: the run's name, unique within a `kreassign check` (checker/check/suite.py `run_names`): the profile,
    #: or e.g. `kraft-2p-rf3` for the default suite's second kraft run; None: the profile
    run: str | None = None

    @property
    def name(self) -> str:
        return self.run or self.profile

    @property
    def unexpected(self) -> list[str]:
        return [n for n, v in self.properties.items() if v.status in FAILING]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "profile": self.profile,
            "engine": self.engine,
            "bounds": self.bounds,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "complete": self.complete,
            "properties": {n: _verdict_json(v) for n, v in self.properties.items()},
            **({"reduction": self.reduction} if self.reduction is not None else {}),
            **({"memory": self.memory} if self.memory is not None else {}),
        }


def _verdict_json(v: PropertyVerdict) -> dict[str, Any]:
    out: dict[str, Any] = {"status": v.status, "counterexample": v.counterexample, "length": v.length}
    if v.found_at is not None:
        out["found_at"] = v.found_at
        out["minimized_to"] = v.minimized_to
    if v.findings:
        out["findings"] = {n: {"trace": f.trace, "length": f.length, "expected": f.expected}
                           for n, f in v.findings.items()}
        out["missing_findings"] = v.missing
    return out


ModelFactory = Callable[[str, Any], Model]


def reassignment_factory(profile: str, bounds: Bounds) -> Model:
    return ReassignmentModel(profile, bounds)


# -- classification ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unexplained:
    """Holds where the property holds or a declared signature explains the violation."""

    holds: Callable[..., bool]
    signatures: tuple[Callable[..., bool], ...]

    def __call__(self, *x: Any) -> bool:
        return self.holds(*x) or any(sig(*x) for sig in self.signatures)


@dataclass(frozen=True)
class _NotThisFinding:
    """Holds unless the property fails *and* this finding's signature matches (an occurrence)."""

    holds: Callable[..., bool]
    signature: Callable[..., bool]

    def __call__(self, *x: Any) -> bool:
        return self.holds(*x) or not self.signature(*x)


def _engine_free(extra: dict[str, Any]) -> dict[str, Any]:
    """A rewritten predicate has no vectorised form."""
    return {k: v for k, v in extra.items() if k != "array_predicate"}


def model_release(model: Any) -> str | None:
    """The Kafka release whose rules a kraft model follows (its findings depend on it); None for others."""
    inner = getattr(model, "inner", model)  # a symmetry-reduced model wraps the real one
    return getattr(getattr(inner, "profile", None), "kafka_version", None)


def engine_properties(properties: list[Property], profile: str, release: str | None = None) -> list[Property]:
    """The properties handed to the engine: each safety property with findings split into its
    unexpected part (same name) and one occurrence property per finding (`P::F`); the findings are
    those `profile` declares at the Kafka `release` (kraft)."""
    out = []
    for p in properties:
        found = findings_for(profile, p.name, release) if p.kind in (ALWAYS, TRANSITION) else ()
        if not found:
            out.append(p)
            continue
        extra = _engine_free(p.extra)
        out.append(replace(p, predicate=_Unexplained(p.predicate, tuple(f.signature for f in found)), extra=extra))
        out += [replace(p, name=p.name + SEP + f.name, predicate=_NotThisFinding(p.predicate, f.signature),
                        extra=extra) for f in found]
    return out


@dataclass
class Classified:
    """What one search says about one property: the shortest unexpected violation, if any, and the
    shortest occurrence of each of its findings that occurred."""

    unexpected: Found | None = None
    findings: dict[str, Found] = field(default_factory=dict)


def _classify_stuck(graph: StateGraph, prop: Property, found: tuple[Finding, ...], want_findings: bool) -> Classified:
    """Classify every stuck state of an `eventually` property (liveness.classify_stuck, the one
    definition every engine shares); fair liveness (spec/fairness.py) by its fair components."""
    if prop.extra.get("fairness") is not None:  # fair liveness (spec/fairness.py): the first fair lasso
        if not found:
            return Classified(unexpected=liveness.violation(graph, prop))
        return _classify_fair(graph, prop, found, want_findings)

    def edges(among: set[int]):
        return ((i, j) for i in among for j, a in zip(graph.successors[i], graph.actions[i])
                if j in among and liveness.environment_edge(a))

    unexpected, findings = liveness.classify_stuck(
        liveness.stuck_states(graph, prop.predicate), lambda i: graph.states[i], edges,
        lambda i: liveness.lasso(graph, liveness.stuck_at(graph, i)), prop.extra.get("from"), found, want_findings)
    return Classified(unexpected, findings)


def _classify_fair(graph: StateGraph, prop: Property, found: tuple[Finding, ...], want_findings: bool) -> Classified:
    """Classify each fair component (a fair run that never reaches the goal loops in one): a finding
    explains it when its signature holds on every state of the component."""
    fairness, out = prop.extra["fairness"], Classified()
    for members, _ in liveness.fair_components(graph, prop.predicate, fairness):
        matched = [f for f in found if all(f.signature(graph.states[i]) for i in members)]
        new = [f for f in matched if f.name not in out.findings] if want_findings else []
        if (matched or out.unexpected is not None) and not new:
            continue
        ids = {id(graph.states[i]) for i in members}  # the lasso of this component only
        lasso = liveness.find_fair_lasso(graph, lambda s, ids=ids: prop.predicate(s) or id(s) not in ids, fairness)
        if not matched:
            out.unexpected = lasso
        for f in new:
            out.findings[f.name] = lasso
        if out.unexpected is not None and (not want_findings or len(out.findings) == len(found)):
            break
    return out


def explore_classified(model: Model, profile: str, *, keep_graph: bool, progress=None,
                       only: str | None = None, findings: bool = True,
                       explorer: Search | Callable[..., ExploreResult] | None = None,
                       compose: bool | None = None,
                       engine_options: EngineOptions = DEFAULT_ENGINE) -> tuple[ExploreResult, dict[str, Classified]]:
    """Explore once and classify every violation of every property (or of `only`, stopping at its
    first unexpected violation when it is a safety property).

    `explorer` is the engine (check/search.py): None or `Search()` the embedded one, `Search(engine=f)` or a
    bare search function `f` another with the same signature and result (the Spark engine); liveness and the classification of stuck states run on the graph it returns.
    `engine_options` (config/engine_options.py, `check`'s engine flags): the packed path or not (`fast`),
    and what the packed engine is given (workers, kernel, subsumption); `compose` (default:
    `engine_options.compositional`) checks each partition apart (packed/compositional.py).
    """
    props = [p for p in model.properties() if only is None or p.name == only]
    release = model_release(model)
    engine_props = engine_properties(props, profile, release)
    if not findings:
        engine_props = [p for p in engine_props if SEP not in p.name]
    # stopping at the first violation is only right when that violation is the one wanted
    stop = only is not None and all(p.kind != EVENTUALLY and SEP not in p.name for p in engine_props)
    # the embedded engine runs on the packed path when the model splits per partition (packed/reassignment.py)
    search = as_search(explorer)
    fast = search.embedded and engine_options.fast and packable(model, engine_props)
    compose = engine_options.compositional if compose is None else compose
    if compose and not fast:
        raise ConfigError("--compositional: needs the packed path (profile kraft, kraft-3.7 or kip455 with none of "
                          "the issue-14 capability bounds, the embedded engine, no --no-fast)")
    engine = partial(compositional_explorer if compose else packed_explorer, engine_options=engine_options) if fast \
        else None
    # every engine reads the properties it checks from `engine_properties` (explore/protocol.py), Spark's executors too
    result = search.run(engine, model.checking(engine_props), keep_graph=keep_graph, progress=progress,
                        stop_on_violation=stop)
    out: dict[str, Classified] = {}
    for p in props:
        declared = findings_for(profile, p.name, release)
        if p.kind in (ALWAYS, TRANSITION):
            c = out[p.name] = Classified()
            if p.name in result.violations:
                c.unexpected = (result.violations[p.name].path, None)
            for f in declared:
                v = result.violations.get(p.name + SEP + f.name)
                if v is not None:
                    c.findings[f.name] = (v.path, None)
        elif p.kind == EVENTUALLY and keep_graph and result.classify_stuck is not None and result.complete:
            c = out[p.name] = Classified()
            c.unexpected, c.findings = result.classify_stuck(p, declared, findings)
        elif p.kind == EVENTUALLY and keep_graph and result.graph is not None and result.complete:
            out[p.name] = _classify_stuck(result.graph, p, declared, findings)
    return result, out


def find_violations(model: Model, *, keep_graph: bool, progress=None, stop_on: str | None = None,
                    explorer: Search | Callable[..., ExploreResult] | None = None,
                    engine_options: EngineOptions = DEFAULT_ENGINE) -> tuple[ExploreResult, dict[str, Found]]:
    """Explore and collect {property: (path, loop_start)}: the first violation of each property,
    unclassified (no findings), for callers that judge violations themselves."""
    result, classified = explore_classified(model, "", keep_graph=keep_graph, progress=progress, only=stop_on,
                                            explorer=explorer, engine_options=engine_options)
    return result, {n: c.unexpected for n, c in classified.items() if c.unexpected is not None}


def _memory(result: Any) -> dict[str, Any] | None:
    """What the packed path (and each compositional projection) held: bytes per stored state (visited
    set, parents, actions, goal bits), the liveness edges and the tabulated table; and how many answers
    each of the reference, the scalar and the vector kraft kernel gave."""
    runs = [p.result for p in result.projections] if isinstance(result, CompositionalResult) else [result]
    if not all(isinstance(r, PackedResult) and r.packed is not None for r in runs):
        return None
    answers: dict[str, int] = {}
    for r in runs:
        for who, n in r.packed.answers.items():
            answers[who] = answers.get(who, 0) + n
    return {"bytes_per_state": max(r.bytes_per_state for r in runs),
            "edge_bytes": sum(r.edge_bytes for r in runs),
            "table_bytes": sum(r.packed.table_bytes() for r in runs),
            # who tabulated the successors (the kraft kernels' rows spot-checked against the reference)
            "answers": answers, "spot_checks": sum(r.packed.kernel_checks for r in runs)}


#: bound keys naming the Kafka release and its features: not compared by `expected_at`
RELEASE_KEYS = ("kafka_version", "elr")


def expected_at(finding: Finding, bounds: Any, profile: str) -> bool:
    """Is `finding` declared to occur at these bounds? For reassignment bounds: when they are at
    least its `at` on the monotone keys (more brokers, partitions, budget: only more behaviours)
    and equal to it (completed with the defaults) on every other key. Other models: only at the
    configuration named by `at["config"]` (the quota profiles' default "small")."""
    if isinstance(bounds, Bounds):
        try:
            least = replace(Bounds(), **{k: v for k, v in finding.at.items() if k != "config"})
        except (ConfigError, TypeError):
            return False
        for f in fields(Bounds):
            if f.name in RELEASE_KEYS:  # the release decides whether a finding exists (Finding.releases)
                continue
            have, need = getattr(bounds, f.name), getattr(least, f.name)
            if not (have >= need if f.name in MONOTONE_BOUNDS else have == need):
                return False
        return True
    if finding.at.get("config") is None:
        return False
    from kreassign.checker.models.quota import QUOTA_CONFIGS

    named = QUOTA_CONFIGS.get(finding.at["config"])
    return named is not None and replace(named, profile=profile) == bounds


# -- minimization ------------------------------------------------------------------------------------


def _unexpected_at(factory: ModelFactory, profile: str, bounds: Bounds, prop_name: str, graph: bool,
                   engine_options: EngineOptions = DEFAULT_ENGINE) -> Found | None:
    """The shortest unexpected violation of `prop_name` at `bounds`, if any (minimization's search: the
    run's engine options, never compositional)."""
    try:
        model = factory(profile, bounds)
    except (ConfigError, ValueError):
        return None
    _, classified = explore_classified(model, profile, keep_graph=graph, only=prop_name, findings=False,
                                       compose=False, engine_options=engine_options)
    c = classified.get(prop_name)
    return c.unexpected if c is not None else None


# -- the check ----------------------------------------------------------------------------------------


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
    explorer: Search | Callable[..., ExploreResult] | None = None,
    engine: str = "embedded",
    engine_options: EngineOptions = DEFAULT_ENGINE,
    run: str | None = None,
) -> CheckResult:
    """Explore one profile at the given bounds and classify every property.

    `run` names the run (CheckResult.run; checker/check/suite.py): its counterexample files are
    `<run>__<property>.json`, so two runs of one profile never write the same file.

    `engine_options` (config/engine_options.py) are `check`'s engine flags (--no-fast, --no-kernel,
    --workers, --subsume, --compositional); the default is the default run.

    With `symmetry`, the model is explored on broker-renaming orbits (checker/models/symmetry.py);
    counterexamples are turned back into concrete paths before they are written.
    """
    model = factory(profile, bounds)
    if symmetry:
        from kreassign.checker.models.symmetry import SYMMETRIC_PROFILES, SymmetryReduced

        if profile not in SYMMETRIC_PROFILES:
            raise ValueError(f"profile {profile} is not symmetric under broker renaming "
                             f"(symmetric: {', '.join(sorted(SYMMETRIC_PROFILES))})")
        model = SymmetryReduced(model)
    started = time.perf_counter()
    result, classified = explore_classified(model, profile, keep_graph=liveness_check, progress=progress,
                                            explorer=explorer, engine_options=engine_options)
    check = CheckResult(profile, engine, model.describe(), result.states, result.transitions, result.depth,
                        0.0, result.complete, reduction=result.reduction,
                        memory=_memory(result), run=run)
    for prop in model.properties():
        if prop.kind == SOMETIMES:
            status = HOLDS if prop.name in result.examples else VIOLATED
            check.properties[prop.name] = PropertyVerdict(status)
            continue
        c = classified.get(prop.name)
        if c is None:  # a graph property not checked (no liveness, or an incomplete search)
            check.properties[prop.name] = PropertyVerdict(NOT_CHECKED)
            continue
        verdict = _findings_verdict(profile, prop.name, bounds, c, result.complete, model_release(model))
        check.properties[prop.name] = verdict
        if c.unexpected is None:
            continue
        path, loop = c.unexpected
        if symmetry:
            path = model.concretize(path)
            model_for_trace = model.inner
        else:
            model_for_trace = model
        small_model, small_bounds = model_for_trace, bounds
        if minimize_counterexamples and isinstance(bounds, Bounds):
            small_bounds, (path, loop) = minimize(
                bounds, (path, loop),
                lambda b, name=prop.name, graph=prop.kind == EVENTUALLY: _unexpected_at(factory, profile, b, name, graph,
                                                                                        engine_options))
            if small_bounds != bounds:
                small_model = factory(profile, small_bounds)
        verdict.status, verdict.length = VIOLATED, len(path) - 1
        verdict.found_at, verdict.minimized_to = bounds_json(bounds), bounds_json(small_bounds)
        if out_dir is not None:
            kind = "mismatch" if prop.name == "implementation_matches_reference" else prop.kind
            trace = trace_from_path(small_model, model_kind, prop.name, kind, path, loop_start=loop, engine=engine,
                                    description=prop.description)
            trace.found_at = verdict.found_at
            verdict.counterexample = os.path.join(out_dir, f"{check.name}__{prop.name}.json")
            write_trace(trace, verdict.counterexample)
    check.seconds = time.perf_counter() - started
    return check


def _findings_verdict(profile: str, prop_name: str, bounds: Any, c: Classified, complete: bool,
                      release: str | None = None) -> PropertyVerdict:
    """The verdict before any unexpected violation is handled: holds, known, or a finding missing."""
    verdict = PropertyVerdict(HOLDS if complete else NOT_CHECKED)
    for f in findings_for(profile, prop_name, release):
        occurred = c.findings.get(f.name)
        verdict.findings[f.name] = FindingVerdict(trace_file(profile, f),
                                                  None if occurred is None else len(occurred[0]) - 1,
                                                  complete and expected_at(f, bounds, profile))
    seen = [n for n, f in verdict.findings.items() if f.length is not None]
    if seen:
        first = verdict.findings[seen[0]]
        verdict.status, verdict.counterexample, verdict.length = KNOWN, first.trace, first.length
    if verdict.missing:
        verdict.status = FINDING_MISSING
    return verdict


__all__ = ["FAILING", "FINDING_MISSING", "HOLDS", "KNOWN", "NOT_CHECKED", "VIOLATED", "CheckResult", "Classified",
           "EngineOptions", "FindingVerdict", "PropertyVerdict", "check_model", "engine_properties", "expected_at",
           "explore_classified", "find_violations", "minimize"]
