"""`kreassign prove` as a library: prove the set-level properties for every cluster size, or refute them.

For a reassignment profile:

1. **Strengthening.** Houdini (checker/z3/encoding.py) takes the profile's properties and
   auxiliary lemmas and keeps the largest subset that is inductive — base case and
   inductive step — on the bit-width-W encoding whose brokers are the symbolic prefix
   {1…N}, for every N from `min_brokers` to W at once (W = `max_brokers`, 32 by default).
2. **Proof.** Each state property in that subset is proved: its base case (Init ⇒ P) and
   its inductive step (∧H ∧ T ⇒ P'), each timed on its own. Each transition property is
   proved under the invariant (∧H ∧ T ⇒ P(s, a, s')).
3. **Refutation.** A property not proved is searched for by bounded model checking from the
   explorer's initial state at N = 3, then 4 brokers; an abstract path is turned into
   concrete actions, re-executed by the reference through the explorer's model
   (ReassignmentModel), and kept only if the property really fails there; it is then
   written in the common trace format (checker/traces/format.py) and replayed (checker/traces/replay.py).
   A path the reference does not follow (the encoding's list-order freedom) is blocked and
   the search goes on.

The order property (cancel_restores_original_order) is proved or refuted the same way on the
relation with list order (checker/z3/order.py), under the same set invariant. A property the
encoding cannot state (liveness) is reported `unknown` with the reason. The quota profiles are
proved by checker/z3/quota.py.

The kraft encoding follows one Kafka release (`KraftEncoding.KAFKA_VERSION`, the newest;
`kafka_version=` proves another) with eligible leader replicas (KIP-966) off: its
counterexamples are re-executed by the explorer's model at that release with ELR off
(`profiles.reference_model`), their trace files record both (bounds `kafka_version`, `elr`)
so that `replay` reproduces them, and a verdict is classified by that release's findings
(spec/findings.py declares kraft's per release). Each result carries the release.

A refutation is classified as `kreassign check` classifies a violation: each finding the profile
declares for the property at that release is asked whether its signature matches the
counterexample's violating state or edge (`results.matching`); a refutation none matches is
unexpected, like a proof of a property with a finding declared within the proved sizes
(results.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import z3
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import read_trace, trace_from_path, write_trace
from kreassign.checker.traces.replay import replay
from kreassign.checker.z3.encoding import Bmc, Candidate, houdini, prove_base
from kreassign.checker.z3.liveness import LIVENESS_PROPERTIES
from kreassign.checker.z3.order import ORDER_PROPERTIES
from kreassign.checker.z3.profiles import encoding, encoding_class, reference_model
from kreassign.checker.z3.reassign import (
    CANCEL,
    FAIL,
    FAILOVER,
    REASSIGN,
)
from kreassign.checker.z3.results import INVARIANT, PROVED, REFUTED, UNKNOWN, ProofResult, encodes, matching
from kreassign.spec.properties import ALWAYS, TRANSITION
from kreassign.spec.reassign_properties import PROPERTIES as REASSIGN_PROPERTIES

REASSIGNMENT_PROFILES = ("kraft", "kraft-3.7", "zk", "kip455", "kip236")
QUOTA_PROFILES = ("kip599", "kip599-draft")
ALL_PROFILES = REASSIGNMENT_PROFILES + QUOTA_PROFILES

#: why a property of spec/reassign_properties.py has no z3 proof here
NOT_ENCODED = {
    "committed_records_kept": "replication layer (logs), not encoded",
}

#: BMC depth per profile (the explorer's longest known counterexample plus margin)
BMC_DEPTH = {"kraft": 6, "kraft-3.7": 6, "kip455": 7, "kip236": 8, "zk": 14}
BMC_BROKERS = (3, 4)
#: seconds a counterexample search may take per property before the verdict is "unknown"; None: no clock, the
#: search is bounded by BMC_DEPTH, BMC_BROKERS and its attempts per depth alone, so a verdict never depends on
#: the machine's load (a library caller may still pass budget_s)
BMC_BUDGET_S: float | None = None
#: a single solver query gives up after this long (the verdict is then "unknown")
QUERY_TIMEOUT_MS = 300_000
#: width of the first, cheap Houdini pass
PRUNE_WIDTH = 6


def reassignment_properties() -> list[str]:
    """The properties of spec/reassign_properties.py reported for a reassignment profile, in the spec's
    order (committed_records_kept needs the replication layer, which neither engine has on by default)."""
    return [p.name for p in REASSIGN_PROPERTIES if p.name != "committed_records_kept"]


# -- reassignment --------------------------------------------------------------------------------


def prove_reassignment(
    profile: str,
    *,
    max_brokers: int = 32,
    min_brokers: int = 3,
    targets: str = "rf",
    properties: Sequence[str] | None = None,
    out_dir: str | None = "kreassign-out",
    progress: Callable[[str], None] | None = None,
    variant: tuple[type, Any] | None = None,
    kafka_version: str | None = None,
) -> list[ProofResult]:
    """Prove or refute every requested property of one reassignment profile (see the module doc).

    `kafka_version`: kraft only, the Kafka release whose rules are encoded (None: KraftEncoding's,
    the newest). `variant` = (encoding class, reference Profile object) proves a variant instead of
    the named profile (tests: a deliberately broken rule, on both sides); its counterexamples are
    re-executed through the explorer's model of that Profile object.
    """
    wanted = list(properties) if properties is not None else reassignment_properties()
    make = variant[0] if variant else encoding_class(profile, kafka_version)  # make(n, **kw): the encoding
    #: the release whose rules are encoded (kraft), which the findings classifying the verdicts are of
    release = make.KAFKA_VERSION if make.profile == "kraft" else None
    label = f"{profile} ({encodes(release)})" if release else profile
    say = progress or (lambda _msg: None)

    def result(*args: Any, **kw: Any) -> ProofResult:
        return ProofResult(*args, kafka_version=release, **kw)
    inv_enc = make(max_brokers, targets=targets, epochs=False, min_brokers=min_brokers)
    full_enc = make(max_brokers, targets=targets, epochs=True, min_brokers=min_brokers)
    state_props = inv_enc.state_properties()
    edge_props = full_enc.edge_properties()
    span = (min_brokers, max_brokers)
    results: list[ProofResult] = []
    encoded = [p for p in wanted if p in state_props or p in edge_props or p in ORDER_PROPERTIES
               or p in LIVENESS_PROPERTIES]

    invariant: list[str] = []
    strengthening = 0.0
    if encoded:
        say(f"{label}: strengthening (Houdini) at width {max_brokers}")
        cands = inv_enc.candidates()
        seconds = 0.0
        try:
            if max_brokers > PRUNE_WIDTH:
                # a counterexample to induction over ≤ PRUNE_WIDTH brokers is one at any larger width (the
                # broker set is a symbolic prefix), so what fails there is dropped first, cheaply
                small = make(PRUNE_WIDTH, targets=targets, epochs=False,
                             min_brokers=min(min_brokers, PRUNE_WIDTH))
                pre = houdini(small, small.candidates(), small.KINDS, pure_bv=True, timeout_ms=QUERY_TIMEOUT_MS)
                seconds += pre.seconds
                cands = [c for c in cands if c.name in pre.inductive]
            h = houdini(inv_enc, cands, inv_enc.KINDS, pure_bv=True, timeout_ms=QUERY_TIMEOUT_MS)
        except TimeoutError as e:
            return [result(name, profile, None, UNKNOWN, 0.0, note=f"solver gave up: {e}") for name in wanted]
        strengthening = seconds + h.seconds
        invariant = h.inductive
        system = h.system
        by_name = {c.name: c for c in inv_enc.candidates()}
        lemmas = [n for n in invariant if n not in state_props]
        systems = _Systems(inv_enc, full_enc, system, invariant, by_name)
    for name in wanted:
        if name in ORDER_PROPERTIES:  # list order: the order layer (order.py) over the same invariant
            results.append(_prove_order(name, make, profile, label=label, result=result, span=span, targets=targets,
                                        invariant=invariant, out_dir=out_dir, variant=variant,
                                        kafka_version=kafka_version, say=say))
            continue
        if name in LIVENESS_PROPERTIES:  # AG EF: a ranking over helpful steps, or a stuck state (liveness.py)
            results.append(_prove_liveness(name, make, profile, label=label, result=result, span=span,
                                           targets=targets, invariant=invariant, out_dir=out_dir, variant=variant,
                                           kafka_version=kafka_version, say=say))
            continue
        if name in NOT_ENCODED or name not in state_props and name not in edge_props:
            results.append(result(name, profile, None, UNKNOWN, 0.0,
                                  note=NOT_ENCODED.get(name, "not encoded")))
            continue
        started = time.perf_counter()
        say(f"{profile}: {name}: " + ("base case and inductive step" if name in state_props
                                      else "one step under the invariant"))
        try:
            proved = _prove_one(name, systems, state_props, edge_props)
        except TimeoutError:
            proved = False
        if proved:
            how = "base case + inductive step" if name in state_props else "one step under the invariant"
            results.append(result(name, profile, span, PROVED, time.perf_counter() - started,
                                  note=f"{how} ({len(invariant)}-conjunct invariant)", lemmas=lemmas))
            continue
        say(f"{profile}: {name}: not provable by induction, searching a counterexample")
        found = refute_reassignment(profile, name, targets=targets, out_dir=out_dir, variant=variant,
                                    kafka_version=kafka_version)
        seconds = time.perf_counter() - started
        if found is not None:
            n, file, steps, violation = found
            results.append(result(name, profile, (n, n), REFUTED, seconds, file,
                                  note=f"{steps} step(s), replayed against the reference",
                                  findings=matching(profile, name, release, violation)))
        else:
            results.append(result(name, profile, None, UNKNOWN, seconds,
                                  note=f"not inductive with the lemmas, no counterexample up to "
                                       f"{BMC_DEPTH.get(profile, 6)} steps"))
    if encoded:
        # the strengthening every proof of the profile shares, as its own row
        n_props = sum(n in state_props for n in invariant)
        results.insert(0, result(
            INVARIANT, profile, span, PROVED, strengthening, lemmas=list(invariant),
            note=(f"{encodes(release)}; " if release else "") + f"Houdini: {len(invariant)} conjuncts "
                 f"({n_props} properties, {len(invariant) - n_props} lemmas)"))
    return results


def _prove_order(name: str, make, profile: str, *, label: str, result, span, targets: str, invariant: list[str],
                 out_dir, variant, kafka_version, say) -> ProofResult:
    """An order property (order.py): one step of the relation with list order under the set invariant and
    the order lemmas Houdini keeps, for every N at once; else bounded model checking with list order."""
    from kreassign.checker.z3.order import ordered, prove_order_property

    started = time.perf_counter()
    say(f"{label}: {name}: one step of the relation with list order, under the invariant")
    try:
        proved, kept, _ = prove_order_property(make, name, max_brokers=span[1], min_brokers=span[0], targets=targets,
                                               invariant=invariant, timeout_ms=QUERY_TIMEOUT_MS,
                                               prune_width=PRUNE_WIDTH)
    except TimeoutError:
        proved, kept = False, []
    if proved:
        return result(name, profile, span, PROVED, time.perf_counter() - started,
                      note=f"one step with list order under the invariant ({len(invariant)} conjuncts, "
                           f"{len(kept)} order lemmas)", lemmas=list(invariant) + kept)
    say(f"{profile}: {name}: not implied, searching a counterexample with list order")
    found = refute_reassignment(profile, name, targets=targets, out_dir=out_dir, variant=variant,
                                kafka_version=kafka_version, enc_class=ordered(make))
    seconds = time.perf_counter() - started
    if found is None:
        return result(name, profile, None, UNKNOWN, seconds,
                      note=f"not implied with list order, no counterexample up to {BMC_DEPTH.get(profile, 6)} steps")
    return _refuted(result, make, name, profile, found, seconds, "{steps} step(s), list order encoded, replayed "
                    "against the reference")


def _refuted(result, make, name: str, profile: str, found, seconds: float, note: str) -> ProofResult:
    """The verdict of a refutation `found` = (brokers, trace file, steps, violation), classified by the findings of
    the encoded release; `note` may name {steps}."""
    n, file, steps, violation = found
    release = make.KAFKA_VERSION if make.profile == "kraft" else None
    return result(name, profile, (n, n), REFUTED, seconds, file, note=note.format(steps=steps),
                  findings=matching(profile, name, release, violation))


#: seconds the stuck-state search of a liveness property may take before the verdict is "unknown"; None: bounded
#: by its depth (BMC_DEPTH), brokers (BMC_BROKERS) and attempts per depth alone, the same on a loaded machine
LIVENESS_BUDGET_S: float | None = None


def _prove_liveness(name: str, make, profile: str, *, label: str, result, span, targets: str, invariant: list[str],
                    out_dir, variant, kafka_version, say) -> ProofResult:
    """AG EF nothing in flight (liveness.py): a ranking over helpful environment steps under the invariant,
    for every N at once; else bounded model checking to a stuck state the explorer's model confirms."""
    from kreassign.checker.z3.liveness import prove_liveness

    started = time.perf_counter()
    say(f"{label}: {name}: ranking over helpful steps, under the invariant")
    try:
        proved, kept, why = prove_liveness(make, name, invariant=invariant, max_brokers=span[1],
                                           min_brokers=span[0], targets=targets, prune_width=PRUNE_WIDTH,
                                           timeout_ms=QUERY_TIMEOUT_MS)
    except TimeoutError as e:
        proved, kept, why = False, [], f"solver gave up: {e}"
    if proved:
        return result(name, profile, span, PROVED, time.perf_counter() - started,
                      note=f"ranking over helpful steps under the invariant ({len(invariant)} conjuncts, "
                           f"{len(kept)} liveness lemmas)", lemmas=list(invariant) + kept)
    say(f"{profile}: {name}: {why}; searching a stuck state")
    found = refute_stuck(profile, name, targets=targets, out_dir=out_dir, variant=variant,
                         kafka_version=kafka_version, budget_s=LIVENESS_BUDGET_S)
    seconds = time.perf_counter() - started
    if found is None:
        return result(name, profile, None, UNKNOWN, seconds,
                      note=f"{why}; no stuck state found up to {BMC_DEPTH.get(profile, 6)} steps at "
                           f"{'/'.join(map(str, BMC_BROKERS))} brokers")
    return _refuted(result, make, name, profile, found, seconds, "{steps} step(s) to a stuck state, replayed "
                    "against the reference (no completion reachable without an admin)")


def refute_stuck(profile: str, name: str, *, targets: str = "rf", out_dir: str | None = "kreassign-out",
                 variant=None, kafka_version: str | None = None, budget_s: float | None = LIVENESS_BUDGET_S):
    """liveness.refute_liveness with this module's re-execution and trace writing."""
    from kreassign.checker.z3.liveness import refute_liveness

    return refute_liveness(profile, name, concrete_path=_concrete_path, write=_write, brokers=BMC_BROKERS,
                           max_depth=BMC_DEPTH.get(profile, 6), targets=targets, out_dir=out_dir,
                           kafka_version=kafka_version, variant=variant, budget_s=budget_s)


class _Systems:
    """The solvers the proofs of one profile share (the epoch-free one from Houdini, the full one lazily)."""

    def __init__(self, inv_enc, full_enc, system, invariant: list[str], by_name: dict):
        self.inv_enc, self.full_enc, self.system = inv_enc, full_enc, system
        self.invariant, self.by_name = invariant, by_name
        self._full = None

    def full(self):
        """The relation with epochs, under the same invariant (epochs influence no other field)."""
        if self._full is None:
            from kreassign.checker.z3.encoding import StepSystem

            self._full = StepSystem.build(self.full_enc, self.full_enc.KINDS, timeout_ms=QUERY_TIMEOUT_MS)
            self._full.assume([self.by_name[n].holds for n in self.invariant])
        return self._full


def _prove_one(name: str, systems: _Systems, state_props: dict, edge_props: dict) -> bool:
    """A state property of the invariant: its own base case and inductive step; a transition property:
    one step under the invariant. Raises TimeoutError if a solver gives up."""
    if name in state_props:
        if name not in systems.invariant:
            return False
        base = prove_base(systems.inv_enc, state_props[name], pure_bv=True)
        system = systems.system
        return base == z3.unsat and system.counterexample(z3.Not(systems.by_name[name].holds(system.t))) is None
    system = systems.full() if name == "epochs_monotone" else systems.system
    prop = edge_props[name]
    return system.counterexample(z3.Not(prop(system.s, system.a, system.t, system.lab))) is None


def refute_reassignment(profile: str, prop_name: str, *, targets: str = "rf", out_dir: str | None = "kreassign-out",
                        max_attempts: int = 20, variant: tuple[type, Any] | None = None,
                        max_depth: int | None = None, budget_s: float | None = None,
                        kafka_version: str | None = None,
                        enc_class: type | None = None) -> tuple[int, str | None, int, tuple] | None:
    """Bounded model checking from the explorer's initial state; (brokers, trace file, steps, violation)
    or None, where violation is what a finding's signature is asked about: the violating state (an
    `always` property) or edge (prev, label, next). Kraft: at the release `kafka_version` (None: the
    encoded one), re-executed with ELR off. `enc_class`: the encoding class to unroll instead of the
    profile's (or the variant's), e.g. with list order (order.ordered).

    Like `check`, which reports the shortest violation no declared finding explains: at the first
    length with a violation, a path a finding's signature matches is kept while the search goes on
    (up to `max_attempts` paths of that length) for one none matches, which is returned instead."""
    prop = next(p for p in REASSIGN_PROPERTIES if p.name == prop_name)
    name = profile if kafka_version is None else f"{profile}@{kafka_version}"  # of the trace file
    budget = budget_s if budget_s is not None else BMC_BUDGET_S
    deadline = float("inf") if budget is None else time.perf_counter() + budget
    for n in BMC_BROKERS:
        kw = {"targets": targets, "epochs": True, "exact_rf": targets == "rf"}
        if enc_class is not None:
            enc = enc_class(n, **kw)
        else:
            enc = variant[0](n, **kw) if variant else encoding(profile, n, kafka_version=kafka_version, **kw)
        release = enc.KAFKA_VERSION if enc.profile == "kraft" else None  # the findings' release
        state_props, edge_props = enc.state_properties(), enc.edge_properties()
        bmc = Bmc(enc, init=enc.init_explorer)
        s0 = bmc.states[0]
        # within one length, prefer the explorer's default configuration (rf 2, no unclean elections)
        preferences = [[z3.Not(s0.unc), s0.rf == min(2, n)], [z3.Not(s0.unc)], []]
        for depth in range(1, (max_depth or BMC_DEPTH.get(profile, 6)) + 1):
            if time.perf_counter() > deadline:
                return None
            bmc.unroll(depth)
            if prop.kind == ALWAYS:
                bad = z3.Not(state_props[prop_name](bmc.states[depth]))
            else:
                bad = z3.Not(edge_props[prop_name](bmc.states[depth - 1], bmc.actions[depth - 1],
                                                   bmc.states[depth], bmc.labels[depth - 1]))
            blocked: list[z3.BoolRef] = []
            known = None  # the first path of this length that a declared finding explains
            for _ in range(max_attempts):
                model = bmc.find(depth, bad, blocked)
                if model is None:
                    break
                for prefer in preferences[:-1] if known is None else ():  # prefer a default-like path
                    better = bmc.find(depth, bad, blocked + prefer)
                    if better is not None:
                        model = better
                        break
                path = _concrete_path(variant[1] if variant else profile, enc, bmc, model, depth, targets,
                                      kafka_version)
                if path is not None and _violates(path[0], prop, path[1]):
                    rm, steps = path
                    violation = ((steps[-1][0],) if prop.kind == ALWAYS
                                 else (steps[-2][0], steps[-1][1], steps[-1][0]))
                    if not matching(profile, prop_name, release, violation):
                        return n, _write(name, prop, rm, steps, out_dir, replayable=variant is None), depth, violation
                    # a declared finding: look on among the paths of this length for one no finding explains
                    # (the shortest unexpected violation is what `check` reports), else report this one
                    known = known or (rm, steps, violation)
                blocked.append(bmc.block(model, depth))
            if known is not None:
                rm, steps, violation = known
                return n, _write(name, prop, rm, steps, out_dir, replayable=variant is None), depth, violation
    return None


def _concrete_path(profile: Any, enc, bmc: Bmc, model: z3.ModelRef, depth: int, targets: str,
                   kafka_version: str | None = None):
    """The BMC path as spec actions, run through the explorer's model of what `enc` encodes (kraft: at its
    release, ELR off; a variant's Profile object as it is), or None if not enabled there."""
    s0 = enc.read(enc.STATE, model, bmc.states[0])
    acts = [enc.read(enc.ACTION, model, a) for a in bmc.actions[:depth]]
    actions = [enc.concrete_action(a) for a in acts]
    kinds = [a["k"] for a in acts]
    from kreassign.checker.z3.encoding import ids

    reassign_targets = sorted({ids(a["tgt"]) for a in acts if a["k"] == REASSIGN})
    bounds = Bounds(
        brokers=enc.n,
        rf=s0["rf"],
        targets="all" if targets == "rf" else (tuple(reassign_targets) or ((1,),)),
        reassigns=kinds.count(REASSIGN),
        cancels=kinds.count(CANCEL),
        failures=kinds.count(FAIL),
        failovers=kinds.count(FAILOVER),
        unclean=bool(s0["unc"]),
        elections=tuple(enc.elections),
    )
    rm = (reference_model(profile, bounds, kafka_version) if isinstance(profile, str)
          else ReassignmentModel(profile, bounds))
    state = rm.init_states()[0]
    steps: list[tuple[Any, Any]] = [(state, None)]
    for action in actions:
        if action not in rm.actions(state):
            return None
        state, label = rm.step(state, action)
        steps.append((state, label))
    return rm, steps


def _violates(rm: ReassignmentModel, prop, steps) -> bool:
    if prop.kind == ALWAYS:
        return not prop.predicate(steps[-1][0])
    if prop.kind == TRANSITION:
        return len(steps) > 1 and not prop.predicate(steps[-2][0], steps[-1][1], steps[-1][0])
    return False


def _write(profile: str, prop, rm: ReassignmentModel, steps, out_dir: str | None, replayable: bool = True) -> str | None:
    """Write the trace and check that `replay` reproduces it; the file name, or None without out_dir.

    The trace's bounds are the model's (`describe`: for kraft its kafka_version and elr, so `replay`
    rebuilds the release and ELR setting the path was re-executed at, whatever the default). A variant
    Profile object (tests) cannot be rebuilt by `replay` from its name: its path was re-executed
    through the explorer's model of that object instead."""
    trace = trace_from_path(rm, "reassignment", prop.name, prop.kind, steps, engine="z3", description=prop.description)
    if not replayable:
        return None
    if out_dir is None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            write_trace(trace, path)
            if not replay(read_trace(path)).reproduces:
                raise AssertionError(f"{profile}: the {prop.name} counterexample does not replay")
        return None
    path = os.path.join(out_dir, f"{profile}__{prop.name}.z3.json")
    write_trace(trace, path)
    result = replay(read_trace(path))
    if not result.reproduces:
        raise AssertionError(f"{profile}: the {prop.name} counterexample {path} does not replay: {result.mismatch}")
    return path


# -- everything -------------------------------------------------------------------------------------


def prove(profiles: Sequence[str] = ALL_PROFILES, *, max_brokers: int = 32, min_brokers: int = 3,
          targets: str = "rf", properties: Sequence[str] | None = None, out_dir: str | None = "kreassign-out",
          progress: Callable[[str], None] | None = None,
          kafka_version: str | None = None) -> list[ProofResult]:
    """Every requested property of every requested profile (reassignment and quota); `kafka_version`: the
    release kraft's rules are encoded at (None: the newest), the other profiles have none."""
    out: list[ProofResult] = []
    for profile in profiles:
        if profile in QUOTA_PROFILES:
            from kreassign.checker.z3.quota import prove_quota

            out += prove_quota(profile, properties=properties, out_dir=out_dir, progress=progress)
            continue
        names = None
        if properties is not None:
            names = [p for p in properties if p in reassignment_properties()]
            if not names:
                continue
        out += prove_reassignment(profile, max_brokers=max_brokers, min_brokers=min_brokers, targets=targets,
                                  properties=names, out_dir=out_dir, progress=progress,
                                  kafka_version=kafka_version if profile == "kraft" else None)
    return out


__all__ = [
    "ALL_PROFILES",
    "PROVED",
    "QUOTA_PROFILES",
    "REASSIGNMENT_PROFILES",
    "REFUTED",
    "UNKNOWN",
    "Candidate",
    "ProofResult",
    "prove",
    "prove_reassignment",
    "refute_reassignment",
]
