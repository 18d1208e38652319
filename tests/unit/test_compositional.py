"""`check --compositional` (checker/packed/compositional.py) against the unreduced run.

Each configuration is small enough for both: the verdicts, the shortest counterexample and
finding lengths must be equal, and the compositional search smaller. Planted bugs (on any
partition) must be caught the same way, and each condition the mode relies on has a variant
that breaks it and is refused.

The kraft configurations with pinned verdicts are pinned to Kafka 3.9.2 (where they were measured);
the newest release (4.4.0: the 4.3+ completion rule, ELR on by default) is compared too.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from kreassign.checker.check.run import check_model
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.config.engine_options import EngineOptions
from kreassign.checker.models.reassign import ReassignmentModel, in_flight
from kreassign.checker.packed import compositional as C
from kreassign.spec.findings import Finding
from test_property_mutants import planted  # the real profile with every step through a corruption

TOPIC = "t"


def _verdicts(result):
    return {n: (v.status, v.length, {f: x.length for f, x in v.findings.items()}) for n, v in result.properties.items()}


COMPOSITIONAL = EngineOptions(compositional=True)  # check --compositional


def _both(profile, bounds, model=None, liveness=True):
    factory = (lambda p, b: ReassignmentModel(model, b)) if model is not None else None
    kw = {"factory": factory} if factory else {}
    kw["liveness_check"] = liveness
    whole = check_model(profile, bounds, minimize_counterexamples=False, **kw)
    parts = check_model(profile, bounds, minimize_counterexamples=False, engine_options=COMPOSITIONAL, **kw)
    return whole, parts


OLD = "3.9.2"  # the 3.8-4.2 rules, where the kraft verdicts below were measured
KRAFT = replace(DEFAULT_SUITE["kraft"], kafka_version=OLD)

CONFIGS = [
    ("kraft", replace(KRAFT, partitions=2)),
    ("kraft-3.7", replace(DEFAULT_SUITE["kraft-3.7"], partitions=2)),
    ("kip455", replace(DEFAULT_SUITE["kip455"], partitions=2)),
    ("kraft", replace(KRAFT, partitions=2, brokers=4, rf=3)),
    ("kraft", replace(KRAFT, partitions=2, initial=((1, 2), (2, 3)))),  # two projections
    ("kraft", Bounds(partitions=3, brokers=3, rf=2, failures=1, failovers=1, kafka_version=OLD)),
    # 4.4.0 and its default, ELR on (the kernels decline): the 4.3+ completion rule's liveness finding
    # (stale_adding_never_completes), and with min.insync.replicas 2 an ISR shrink leaves an eligible replica
    ("kraft", replace(DEFAULT_SUITE["kraft"], partitions=2, kafka_version="4.4.0")),
    ("kraft", replace(DEFAULT_SUITE["kraft"], partitions=2, kafka_version="4.4.0", min_insync=2)),
]


@pytest.mark.parametrize("profile,bounds", CONFIGS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(CONFIGS)])
def test_same_verdicts_as_the_whole_cluster(profile, bounds):
    whole, parts = _both(profile, bounds)
    assert whole.complete and parts.complete
    assert _verdicts(parts) == _verdicts(whole)
    assert parts.states < whole.states
    assert parts.reduction["mode"] == "compositional" and whole.reduction is None
    distinct = {tuple(r) for r in (bounds.initial or [tuple(range(1, bounds.rf + 1))] * bounds.partitions)}
    assert len(parts.reduction["projections"]) == len(distinct)


# -- planted bugs, on whichever partition the step names ------------------------------------------------


def leader_leaves_isr(before, action, step):
    """The named partition's leader drops out of its ISR after any step on it."""
    k = getattr(action, "partition", None)
    if k is None:
        return None
    q = step.state.partition(TOPIC, k)
    if q.leader in q.isr and len(q.isr) > 1:
        return step.state.with_partition(TOPIC, k, replace(q, isr=tuple(b for b in q.isr if b != q.leader)))
    return None


def never_ends(before, action, step):
    """A step that would end any partition's reassignment does nothing."""
    ends = any(in_flight(before, t, i) and not in_flight(step.state, t, i) for t, i, _ in before.partitions())
    return before if ends else None


def ends_only_during_a_fault(before, action, step):
    """A reassignment can end only while some broker is down (finishing needs a fault: condition C1)."""
    if all(b.active for b in step.state.brokers):
        return never_ends(before, action, step)
    return None


# a leader outside its ISR can make finishing need a fault (condition C1): its safety verdicts alone
@pytest.mark.parametrize("corrupt,prop,liveness", [(leader_leaves_isr, "leader_in_isr", False),
                                                   (never_ends, "reassignment_can_finish", True)])
def test_planted_bug_caught_alike(corrupt, prop, liveness):
    bounds = replace(DEFAULT_SUITE["kraft"], partitions=2)
    whole, parts = _both("kraft", bounds, model=planted("kraft", corrupt), liveness=liveness)
    assert whole.properties[prop].status == "violated"
    assert _verdicts(parts) == _verdicts(whole)


def test_counterexample_is_a_path_of_the_whole_cluster(tmp_path):
    model = planted("kraft", never_ends)
    bounds = Bounds(partitions=2, brokers=3, rf=2, failures=1)
    result = check_model("kraft", bounds, factory=lambda p, b: ReassignmentModel(model, b),
                         minimize_counterexamples=False, out_dir=str(tmp_path), engine_options=COMPOSITIONAL)
    verdict = result.properties["reassignment_can_finish"]
    assert verdict.status == "violated"
    import json

    with open(verdict.counterexample) as f:
        trace = json.load(f)
    assert trace["bounds"]["partitions"] == 2 and trace["loop_start"] is not None
    assert len(trace["initial_state"]["cluster"]["topics"][0]["partitions"]) == 2
    # the lasso closes in the whole cluster: the state after the loop is the one it started at
    states = [trace["initial_state"]] + [step["state"] for step in trace["steps"]]
    assert states[-1] == states[trace["loop_start"]]


# -- the conditions, each broken once --------------------------------------------------------------------


def test_refused_when_finishing_needs_a_fault():
    model = planted("kraft", ends_only_during_a_fault)
    with pytest.raises(C.CompositionError, match="needs a broker or controller fault"):
        check_model("kraft", Bounds(partitions=2, brokers=3, rf=2, failures=1),
                    factory=lambda p, b: ReassignmentModel(model, b), minimize_counterexamples=False,
                    engine_options=COMPOSITIONAL)


def test_refused_when_an_idle_partition_matches_a_finding(monkeypatch):
    everywhere = Finding("matches_everything", "leader_in_isr", ("kraft",), lambda s: True, "planted", {})
    real = C.findings_for
    monkeypatch.setattr(C, "findings_for", lambda profile, name, release=None: (everywhere,)
                        if name == "leader_in_isr" else real(profile, name, release))
    model = planted("kraft", leader_leaves_isr)  # leader_in_isr fails somewhere, so its findings matter
    with pytest.raises(C.CompositionError, match="matches a partition no admin touched"):
        check_model("kraft", Bounds(partitions=2, brokers=3, rf=2, failures=1),
                    factory=lambda p, b: ReassignmentModel(model, b), minimize_counterexamples=False,
                    engine_options=COMPOSITIONAL)


class _Prop:
    def __init__(self, name):
        self.name = name


def test_refused_when_a_signature_matches_where_its_property_holds():
    words = np.array([(1 << 0) | (0 << 32)], dtype=np.int64)  # property holds (bit 0), signature 0 matches
    with pytest.raises(C.CompositionError, match="where its property holds"):
        C._implies([_Prop("p")], [("unexplained", [0])], words, "state", {"p"})
    C._implies([_Prop("p")], [("unexplained", [0])], words, "state", set())  # a property that never fails: fine
    fine = np.array([(0 << 0) | (0 << 32), (1 << 0) | (1 << 32)], dtype=np.int64)
    C._implies([_Prop("p")], [("unexplained", [0])], fine, "state", {"p"})


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "kreassign.cli", "check", *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("args,culprit", [
    (["--profile", "zk"], "--compositional"),
    (["--profile", "kraft", "--throttles"], "--compositional"),
    (["--profile", "kraft", "--engine", "spark"], "--compositional"),
    (["--profile", "kraft", "--no-fast"], "--compositional"),
])
def test_cli_refuses_where_it_does_not_apply(args, culprit, tmp_path):
    done = _cli(*args, "--compositional", "--partitions", "2", "--out", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert culprit in done.stderr and "Traceback" not in done.stderr


def test_cli_reports_the_projections(tmp_path):
    done = _cli("--profile", "kraft", "--partitions", "2", "--compositional", "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    import json

    result = json.loads(done.stdout)["results"][0]
    assert result["reduction"]["mode"] == "compositional"
    assert result["reduction"]["projections"][0]["partitions"] == [0, 1]
    assert result["states"] == result["reduction"]["projections"][0]["states"]
    assert 0 < result["memory"]["bytes_per_state"] <= 100  # the packed visited set (issue 13's bound)
