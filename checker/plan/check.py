"""Check every partition of a plan: one exhaustive check per shape, shapes in parallel.

Per shape two explorations of the reference-backed model (checker/plan/model.py):
the spec's properties (checker/check/run.py `find_violations`: BFS + liveness) in the
full environment (ISR changes, failures, the cancel and overrides asked for), and the
operator's failure questions (leaderless, under min.insync.replicas, only an unclean
election helps) in the lag-free environment where only failures shrink the ISR, with
the failure sets that lead there before the move and while it is in flight.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.check.run import explore_classified
from kreassign.checker.config.engine_options import DEFAULT_ENGINE, EngineOptions
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.reassign import REASSIGNS, TOPIC, ReassignmentModel, in_flight
from kreassign.checker.plan.model import (
    LEADERLESS,
    UNCLEAN_NEEDED,
    UNDER_MIN_ISR,
    PlanPartitionModel,
    leaderless,
    shape_bounds,
    unclean_needed,
    under_min_isr,
)
from kreassign.checker.plan.shapes import Shape
from kreassign.checker.traces.format import trace_from_path
from kreassign.spec import actions as A
from kreassign.spec.codec import to_json
from kreassign.spec.findings import findings_for, trace_file
from kreassign.spec.properties import EVENTUALLY, SOMETIMES
from kreassign.spec.state import NO_LEADER

RISK = "risk"
NOTE = "note"
#: violations that cost the operator no availability or data, only a step to undo (the replica order
#: after a cancel: a PREFERRED election or the rollback JSON restores it); every other one is a risk,
#: whether the profile declares it as a known finding or not
NOTE_PROPERTIES = frozenset({"cancel_restores_original_order"})


@dataclass(frozen=True)
class PlanOptions:
    profile: Any = "kraft"  # a profile name, or a Profile object (a deliberately broken one in tests)
    failures: int = 1
    failovers: int = 0
    cancel: bool = True
    overrides: int = 0
    liveness: bool = True
    kafka_version: str = ""  # kraft: the Kafka release whose rules the plan is checked under ("": the newest)


@dataclass
class Finding:
    """One answer for a shape, in shape ids: a risk (exit 1) or a note."""

    severity: str  # RISK or NOTE
    property: str
    description: str
    trace: dict[str, Any] | None = None  # kreassign trace JSON (shape ids, topic "t")
    known: str | None = None  # the curated counterexample when the profile declares this finding
    finding: str | None = None  # the declared finding's name (spec/findings.py), None if unexpected
    failure_sets: list[tuple[int, ...]] = field(default_factory=list)  # minimal sets of failed brokers
    existing: list[tuple[int, ...]] = field(default_factory=list)  # sets that do it without the move too


@dataclass
class Phase:
    action: Any  # spec action (shape ids) or None for the start
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int


@dataclass
class ShapeResult:
    shape: Shape
    findings: list[Finding]
    phases: list[Phase]
    states: int
    transitions: int
    seconds: float
    complete: bool


# -- phases --------------------------------------------------------------------------------


def _part(ms):
    return next(iter(ms.cluster.partitions()))[2]


def _phase(action, ms) -> Phase:
    p = _part(ms)
    return Phase(action, p.replicas, p.adding, p.removing, p.isr, p.leader)


def happy_path(model: PlanPartitionModel) -> list[Phase]:
    """The move with nothing going wrong: the request, then the controller's steps and the new
    replicas joining the ISR (lowest id first), until nothing is in flight (the reference decides each step)."""
    (state,) = model.init_states()
    shape = model.shape
    phases = [_phase(None, state)]
    state, _ = model.step(state, A.Reassign(TOPIC, 0, shape.target))
    phases.append(_phase(A.Reassign(TOPIC, 0, shape.target), state))
    for _ in range(64):
        if not in_flight(state.cluster, TOPIC, 0):
            break
        acts = model.actions(state)
        step = next((a for a in acts if isinstance(a, A.ControllerStep)), None)
        step = step or next((a for a in acts if isinstance(a, A.LeaderExpandIsr)), None)
        if step is None:
            break
        state, _ = model.step(state, step)
        phases.append(_phase(step, state))
    return phases


# -- failure sets ----------------------------------------------------------------------------


def _down(ms, initially: frozenset[int]) -> tuple[int, ...]:
    return tuple(sorted(b.id for b in ms.cluster.brokers if not b.active and b.id not in initially))


def _minimal(sets: set[tuple[int, ...]]) -> list[tuple[int, ...]]:
    return sorted((s for s in sets if not any(set(o) < set(s) for o in sets)), key=lambda s: (len(s), s))


def _graph_path(graph, target: int):
    """A shortest path in the explored graph from the initial state (index 0) to `target`."""
    parent: dict[int, tuple[int, Any]] = {0: (-1, None)}
    queue = deque([0])
    while queue:
        i = queue.popleft()
        if i == target:
            break
        for j, act in zip(graph.successors[i], graph.actions[i]):
            if j not in parent:
                parent[j] = (i, act)
                queue.append(j)
    path, i = [], target
    while i != -1:
        p, act = parent[i]
        path.append((graph.states[i], act))
        i = p
    return path[::-1]


def _failure_findings(model: PlanPartitionModel, options: PlanOptions) -> tuple[list[Finding], int, int]:
    result = explore(model, keep_graph=True)
    graph = result.graph
    checks = {LEADERLESS: leaderless, UNDER_MIN_ISR: lambda ms: under_min_isr(ms, model.shape.min_isr),
              UNCLEAN_NEEDED: unclean_needed}
    initially = frozenset(model.shape.down)
    full_budget = model.bounds.reassigns
    before: dict[str, set] = {n: set() for n in checks}
    during: dict[str, dict[tuple[int, ...], int]] = {n: {} for n in checks}
    for idx, ms in enumerate(graph.states):
        moving = ms.budget[REASSIGNS] < full_budget and ms.ghosts[0].original is not None
        untouched = ms.budget[REASSIGNS] == full_budget
        for name, bad in checks.items():
            if not bad(ms):
                continue
            down = _down(ms, initially)
            if untouched:
                before[name].add(down)
            elif moving:
                during[name].setdefault(down, idx)
    findings = []
    props = {p.name: p for p in model.properties()}
    for name in checks:
        sets = _minimal(set(during[name]))
        if not sets:
            continue
        existing = _minimal(before[name])
        new = [s for s in sets if not any(set(e) <= set(s) for e in existing)]
        pick = new[0] if new else sets[0]
        path = _graph_path(graph, during[name][pick])
        trace = trace_from_path(model, "reassignment", name, "always", path,
                                description=props[name].description).to_json()
        findings.append(Finding(RISK if new else NOTE, name, props[name].description, trace,
                                failure_sets=sets, existing=existing))
    return findings, result.states, result.transitions


# -- one shape ---------------------------------------------------------------------------------


def spec_model(profile: Any, bounds, shape: Shape) -> ReassignmentModel:
    """The model for the spec's properties. A partition that starts where ReassignmentModel starts
    (ISR = replicas, leader the first, every broker up: most partitions of a healthy cluster) gets
    ReassignmentModel itself, the same model, which the embedded engine runs on its packed path
    (checker/packed/reassignment.py: same states, verdicts and counterexamples, a fraction of the time)."""
    model = PlanPartitionModel(profile, bounds, shape)
    plain = ReassignmentModel(profile, bounds)
    return plain if plain.init_states() == model.init_states() else model


def check_shape(shape: Shape, options: PlanOptions, engine_options: EngineOptions = DEFAULT_ENGINE) -> ShapeResult:
    """Every answer for one shape: the spec's properties (explored as `engine_options` say), then the
    failure questions."""
    started = time.perf_counter()
    bounds = shape_bounds(shape, failures=options.failures, failovers=options.failovers,
                          cancel=options.cancel, overrides=options.overrides, kafka_version=options.kafka_version)
    model = spec_model(options.profile, bounds, shape)
    name = options.profile if isinstance(options.profile, str) else options.profile.name
    result, classified = explore_classified(model, name, keep_graph=options.liveness, engine_options=engine_options)
    findings = []
    declared = {(f.property, f.name): f for f in findings_for(name, release=getattr(model.profile, "kafka_version", None))}
    for prop in model.properties():
        c = classified.get(prop.name)
        if prop.kind == SOMETIMES or c is None:
            continue
        severity = NOTE if prop.name in NOTE_PROPERTIES else RISK
        found = ([(None, c.unexpected)] if c.unexpected is not None else []) + list(c.findings.items())
        for name, (path, loop) in found:
            trace = trace_from_path(model, "reassignment", prop.name, prop.kind, path, loop_start=loop,
                                    description=prop.description).to_json()
            known = declared.get((prop.name, name))
            findings.append(Finding(severity, prop.name, known.summary if known else prop.description, trace,
                                    known=trace_file(name, known) if known else None,
                                    finding=name))
    probe = PlanPartitionModel(options.profile, bounds, shape, lag_free=True, probes=True)
    failure, states, transitions = _failure_findings(probe, options)
    findings += failure
    phases = happy_path(PlanPartitionModel(options.profile, bounds, shape))
    # liveness is answered when every `eventually` property got classified (on the graph, or by the packed result)
    complete = result.complete and (not options.liveness or all(
        p.kind != EVENTUALLY or p.name in classified for p in model.properties()))
    return ShapeResult(shape, findings, phases, result.states + states, result.transitions + transitions,
                       time.perf_counter() - started, complete)


#: in a shape worker the packed engine tabulates in that process (the shapes already take every core)
TABULATE_ALONE = EngineOptions(workers=1)


def _check_shape_args(args: tuple[Shape, PlanOptions]) -> ShapeResult:
    return check_shape(*args, engine_options=TABULATE_ALONE)


def _worker_start() -> None:
    """A shape worker ignores SIGINT: a Ctrl-C at the terminal reaches the whole process group, and only
    the parent answers it (one line, exit 130) and ends its workers; a worker raising KeyboardInterrupt
    would print its traceback ("Process ForkProcess-1: ...") while the parent reports the interrupt."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by the parent around the fork


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (SIGTERM, SIGKILL if one lingers): none is left
    behind, and a running check is not waited for. A second Ctrl-C meanwhile waits until they are gone."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        workers = list((getattr(pool, "_processes", None) or {}).values())  # the executor's own processes
        pool.shutdown(wait=False, cancel_futures=True)
        for w in workers:
            if w.is_alive():
                w.terminate()
        for w in workers:
            w.join(timeout=5)
            if w.is_alive():
                w.kill()
                w.join()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def check_shapes(shapes: list[Shape], options: PlanOptions, jobs: int | None = None,
                 progress=None) -> dict[Shape, ShapeResult]:
    """Check distinct shapes, in `jobs` processes (default: one per CPU); progress(done, total).

    Ctrl-C (KeyboardInterrupt in this process) ends the workers before it propagates: they ignore SIGINT
    (`_worker_start`; SIGINT is blocked while they are forked, so none can arrive before they ignore it)
    and are terminated here, so an interrupted plan prints one line, no worker's traceback, and leaves
    no process behind."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(shapes)))
    out: dict[Shape, ShapeResult] = {}
    if jobs == 1:
        for k, s in enumerate(shapes, 1):
            out[s] = check_shape(s, options)
            if progress:
                progress(k, len(shapes))
        return out
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=_worker_start)
    try:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:  # with fork, the executor starts all its workers at the first submit
            futures = [pool.submit(_check_shape_args, (s, options)) for s in shapes]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a Ctrl-C meanwhile is raised here
        for k, future in enumerate(as_completed(futures), 1):
            r = future.result()
            out[r.shape] = r
            if progress:
                progress(k, len(shapes))
    except BaseException:
        _end_workers(pool)
        raise
    pool.shutdown()
    return out


__all__ = [
    "NOTE",
    "NO_LEADER",
    "RISK",
    "Finding",
    "Phase",
    "PlanOptions",
    "ShapeResult",
    "check_shape",
    "check_shapes",
    "happy_path",
    "to_json",
]
