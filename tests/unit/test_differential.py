"""Differential checking: implementations in lockstep with the reference, mismatch traces, replay --impl."""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.implementations.adapters import ReferenceImplementation
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.differential import (
    MATCH_PROPERTY,
    DifferentialModel,
    differential_factory,
    field_diff,
    replay_against_impl,
)
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay

from kreassign.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "docs", "examples")
PY = shlex.quote(sys.executable)
ADAPTER = f"exec:{PY} {shlex.quote(os.path.join(EXAMPLES, 'kraft_adapter.py'))}"
BUGGY_EXEC = ADAPTER + " --bug cancel-keeps-adding-in-isr"
BUGGY_MODULE = f"{os.path.join(EXAMPLES, 'buggy_kraft.py')}:BuggyKraft"
REFERENCE_EXEC = f"exec:{PY} -m kreassign.checker.implementations.adapters"

#: the examples (docs/examples) implement Kafka 3.9's rules: the reference at that release
SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, kafka_version="3.9.2")


def verdicts(result):
    return {n: v.status for n, v in result.properties.items()}


def test_field_diff_names_each_differing_field():
    a = {"x": [1, 2], "y": {"z": 1, "w": [{"k": 1}]}, "gone": 1}
    b = {"x": [1, 3], "y": {"z": 1, "w": [{"k": 2}]}, "new": 2}
    assert field_diff(a, b) == [
        "gone: reference 1, implementation has no such field",
        "new: reference has no such field, implementation 2",
        "x: reference [1,2], implementation [1,3]",
        "y.w[0].k: reference 1, implementation 2",
    ]
    assert field_diff(a, a) == []


@pytest.mark.parametrize("spec,bounds", [(ADAPTER, SMALL), (REFERENCE_EXEC, replace(SMALL, kafka_version=""))],
                         ids=["standalone-adapter-3.9", "reference-served-newest"])
def test_a_correct_implementation_passes_in_lockstep(tmp_path, spec, bounds):
    factory = differential_factory(spec)
    try:
        result = check_model("kraft", bounds, factory=factory, out_dir=str(tmp_path))
    finally:
        factory.close()
    plain = check_model("kraft", bounds, out_dir=str(tmp_path / "plain"))
    status = verdicts(result)
    assert status[MATCH_PROPERTY] == HOLDS
    assert VIOLATED not in status.values()
    # lockstep with an equal implementation explores exactly the reference's state space and verdicts
    assert (result.states, result.transitions) == (plain.states, plain.transitions)
    assert {n: s for n, s in status.items() if n != MATCH_PROPERTY} == verdicts(plain)
    assert not list(tmp_path.glob("*.json"))


def test_the_standalone_adapter_follows_the_reference_with_elections_and_the_log_layer(tmp_path):
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, elections=("PREFERRED", "UNCLEAN"),
                    unclean=True, replication=True, log_length=1)
    factory = differential_factory(ADAPTER)
    try:
        result = check_model("kraft-3.7", bounds, factory=factory, out_dir=str(tmp_path), liveness_check=False)
    finally:
        factory.close()
    assert result.properties[MATCH_PROPERTY].status == HOLDS
    assert result.states > 100


@pytest.mark.parametrize("spec", [BUGGY_EXEC, BUGGY_MODULE])
def test_the_buggy_implementation_is_caught_and_its_trace_replays(tmp_path, spec):
    factory = differential_factory(spec)
    try:
        result = check_model("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, kafka_version="3.9.2"),
                             factory=factory,
                             out_dir=str(tmp_path))
    finally:
        factory.close()
    status = verdicts(result)
    assert status[MATCH_PROPERTY] == VIOLATED
    assert status["isr_in_replicas"] == VIOLATED  # a spec property, checked on the implementation's states
    assert status["cancel_restores_original_order"] == KNOWN
    path = result.properties[MATCH_PROPERTY].counterexample
    trace = read_trace(path)
    assert trace.property == MATCH_PROPERTY and trace.kind == "mismatch"
    assert [s["action"]["type"] for s in trace.steps] == ["Reassign", "LeaderShrinkIsr", "LeaderExpandIsr", "Cancel"]
    mismatch = trace.steps[-1]["mismatch"]
    assert mismatch["implementation"] == spec
    assert mismatch["diff"] == ["state.topics[0].partitions[0].isr: reference [1], implementation [1,3]"]
    assert mismatch["reference_state"]["topics"][0]["partitions"][0]["isr"] == [1]
    assert all("mismatch" not in s for s in trace.steps[:-1])
    assert trace.steps[-1]["kafka_state"]["topics"][0]["partitions"][0]["isr"] == [1, 3]
    # replays: against the buggy implementation it reproduces; against correct ones it does not
    again = replay_against_impl(trace, spec)
    assert again.reproduces and again.steps_matched == 4
    assert again.diffs == mismatch["diff"]
    fixed = replay_against_impl(trace, ADAPTER)
    assert not fixed.reproduces
    assert "step 4" in fixed.mismatch and "agrees with the reference" in fixed.mismatch
    assert fixed.diffs == ["cluster.topics[0].partitions[0].isr: trace [1,3], implementation [1]"]
    plain = replay(trace)  # the reference alone disagrees with the trace at the same step
    assert not plain.reproduces and "step 4" in plain.mismatch


def test_kraft_37_is_another_implementation_of_kraft():
    model = DifferentialModel("kraft", Bounds(brokers=3, rf=2, reassigns=2, cancels=0, kafka_version="3.9.2"),
                              ReferenceImplementation("kraft-3.7"))
    from kreassign.checker.check.run import find_violations

    _, found = find_violations(model, keep_graph=False)
    assert MATCH_PROPERTY in found
    path, _ = found[MATCH_PROPERTY]
    label = path[-1][1]
    assert label.mismatch and all(line.startswith("state.") for line in label.mismatch)


def test_a_refusal_is_a_mismatch_not_a_crash():
    class Refuser(ReferenceImplementation):
        def apply(self, action):
            from kreassign.checker.implementations.adapters import ImplementationRefused

            if type(action).__name__ == "BrokerFail":
                raise ImplementationRefused("BrokerFail is not implemented")
            return super().apply(action)

    model = DifferentialModel("kraft", SMALL, Refuser())
    from kreassign.spec import actions as A

    init = model.init_states()[0]
    _, label = model.step(init, A.BrokerFail(1))
    assert label.mismatch[0] == "implementation refused the action: BrokerFail is not implemented"
    _, label = model.step(init, A.Reassign("t", 0, (2, 3)))
    assert label.mismatch == ()


@pytest.mark.parametrize("name", ["kraft__cancel_restores_original_replicas__cancel_keeps_non_adding_replicas",
                                  "kraft__replication_factor_restored__cancel_keeps_non_adding_replicas"])
def test_curated_kafka_findings_reproduce_on_the_standalone_adapter(name):
    # a finding about Kafka's algorithm shows on every faithful implementation of it
    trace = read_trace(os.path.join(ROOT, "counterexamples", f"{name}.json"))
    result = replay_against_impl(trace, ADAPTER)
    assert result.reproduces and result.diffs == []
    assert result.steps_matched == len(trace.steps)


def test_quota_profiles_are_refused():
    with pytest.raises(ValueError, match="reassignment profiles only"):
        differential_factory(ADAPTER)("kip599", None)


def test_cli_check_and_replay_with_impl(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["check", "--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--cancels", "1",
                 "--failures", "0", "--kafka-version", "3.9.2", "--impl", BUGGY_MODULE, "--out", str(out), "--json"])
    assert code == 1
    report = json.loads(capsys.readouterr().out)
    props = report["results"][0]["properties"]
    assert props[MATCH_PROPERTY]["status"] == VIOLATED
    file = props[MATCH_PROPERTY]["counterexample"]
    assert os.path.exists(file)
    assert main(["replay", file, "--impl", BUGGY_EXEC]) == 0
    assert "reproduces: kraft violates implementation_matches_reference after 4 step(s)" in capsys.readouterr().out
    assert main(["replay", file, "--impl", ADAPTER, "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["reproduces"] is False and verdict["steps_matched"] == 3
    assert main(["check", "--profile", "kraft", "--brokers", "3", "--impl", "exec:/nonexistent/x", "--out", str(out)]) == 2
    assert "cannot start the implementation" in capsys.readouterr().err


def test_plain_models_are_unchanged_by_the_differential_subclass():
    # the lockstep model's non-match properties are exactly the reference model's
    plain = [p.name for p in ReassignmentModel("kraft", SMALL).properties()]
    diff = [p.name for p in DifferentialModel("kraft", SMALL, ReferenceImplementation()).properties()]
    assert diff == plain + [MATCH_PROPERTY]


def test_replay_against_a_broken_implementation_is_a_clear_error(tmp_path, capsys):
    from kreassign.checker.implementations.adapters import ImplementationError
    from kreassign.checker.oracle.differential import ReplayImplementationError
    from kreassign.checker.traces.format import TraceError

    trace_file = os.path.join(ROOT, "counterexamples", "kraft__cancel_restores_original_order__merged_order.json")
    dead = f"exec:{PY} -c 'import sys; sys.stderr.write(\"adapter crashed\\n\"); sys.exit(4)'"
    with pytest.raises(ReplayImplementationError, match="exit code 4") as e:
        replay_against_impl(read_trace(trace_file), dead)
    assert isinstance(e.value, TraceError) and isinstance(e.value, ImplementationError)
    assert "adapter crashed" in str(e.value)
    assert main(["replay", trace_file, "--impl", "no.such.module:X"]) == 2  # bad usage (kreassign/errors.py)
    assert "no module named 'no'" in capsys.readouterr().err
