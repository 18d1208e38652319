"""The hypothesis engine: random walks over a model catch a broken profile, shrink it, write a trace.

Every machine here runs under the fixed-seed `ci` settings profile of tests/conftest.py
(derandomize, no example database), whatever profile the session loaded, so that the
pinned lengths and counts below are the same on every machine.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import settings
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.fuzz.stateful import (
    EXAMPLE_FOUND,
    KNOWN,
    NO_EXAMPLE,
    NOT_CHECKED,
    PASSED,
    VIOLATED,
    machine_for,
    run_fuzz,
)
from kreassign.checker.implementations.adapters import ReferenceImplementation
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.differential import MATCH_PROPERTY, DifferentialModel
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.reference.kraft import KraftProfile
from kreassign.spec.findings import known_violation
from kreassign.spec.state import ordered_minus

from kreassign.cli import main

#: at Kafka 3.9: the planted cancel bug needs an adding replica in the ISR during a one-replica move, which
#: KAFKA-19975 (4.3) completes as soon as it joins
SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=0, kafka_version="3.9.2")


def ci(examples: int, steps: int) -> settings:
    """The conftest's fixed-seed CI profile, with this test's budget."""
    return settings(settings.get_profile("ci"), max_examples=examples, stateful_step_count=steps)


class CancelKeepsAddingInIsr(KraftProfile):
    """Broken on purpose: the revert forgets to drop the adding replicas from the ISR."""

    name = "broken-cancel"

    def revert(self, part):
        return ordered_minus(part.replicas, part.adding), part.isr, False


def kept(profile_name: str, model) -> list[str]:
    """The properties a profile keeps: every always/transition property it is not known to break."""
    return [p.name for p in model.properties()
            if p.kind in ("always", "transition") and known_violation(profile_name, p.name) is None]


# -- a broken profile is caught and shrunk -----------------------------------------------------------------


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz")
    model = ReassignmentModel(CancelKeepsAddingInIsr(kafka_version="3.9.2"), SMALL)
    result = run_fuzz(model, hypothesis_settings=ci(200, 20), out_dir=str(out),
                      known=lambda name: known_violation("kraft", name, "3.9.2"))
    return model, result


def test_broken_cancel_is_caught_and_shrunk_to_a_short_program(broken_run):
    _, result = broken_run
    outcome = result.properties["isr_in_replicas"]
    assert outcome.status == VIOLATED
    # the shortest counterexample is 4 actions (test_check pins it from BFS); shrinking gets close
    # to it from 20-step programs (how close depends on the shrinker's budget on a loaded machine)
    assert 4 <= outcome.length <= 8
    assert result.unexpected == ["isr_in_replicas"]
    # kraft's own known violations are recorded, not raised
    assert result.properties["cancel_restores_original_order"].status == KNOWN
    assert result.properties["reassignment_can_finish"].status == NOT_CHECKED
    # Hypothesis printed the shrunk program, one state.step per action
    program = next(p for p in result.programs if "Violated_isr_in_replicas" in p)
    assert program.count("state.step(") == outcome.length


def test_the_written_trace_reexecutes_through_the_broken_model_and_violates_the_property(broken_run):
    model, result = broken_run
    outcome = result.properties["isr_in_replicas"]
    trace = read_trace(outcome.counterexample)
    assert (trace.property, trace.kind, trace.engine) == ("isr_in_replicas", "always", "hypothesis")
    assert len(trace.steps) == outcome.length  # a property failing at step k gives a trace of k steps
    # re-execute every step through the broken model: same states, and the last one violates the property
    state = model.state_from_json(trace.initial)
    for step in trace.steps:
        state, _ = model.step(state, model.action_from_json(step["action"]))
        assert model.state_to_json(state) == step["state"]
    prop = next(p for p in model.properties() if p.name == "isr_in_replicas")
    assert not prop.predicate(state)
    # the real kraft reference does not follow it (the cancel drops the adding replica from the ISR)
    trace.profile = "kraft"
    verdict = replay(trace)
    assert not verdict.reproduces and verdict.steps_matched == len(trace.steps) - 1
    assert any(".isr" in d for d in verdict.diffs)


# -- the real references pass for the properties they keep -------------------------------------------------


def test_kraft_passes_the_machine_for_the_properties_it_keeps():
    model = ReassignmentModel("kraft", SMALL)
    names = kept("kraft", model)
    result = run_fuzz(model, check=names, hypothesis_settings=ci(60, 30))
    assert result.errors == [] and result.unexpected == []
    assert {n for n, o in result.properties.items() if o.status == PASSED} == set(names)
    assert result.properties["cancel_restores_original_replicas"].status == NOT_CHECKED  # a known kraft violation
    assert result.steps > 60 * 5
    # every state the random runs reached is one the exhaustive search reaches, and not all of them
    exhaustive = explore(model, keep_graph=True)
    assert result.visited <= set(exhaustive.graph.index)
    assert 0 < result.states < exhaustive.states


def test_zk_passes_the_machine_for_the_properties_it_keeps():
    model = ReassignmentModel("zk", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, failovers=1))
    result = run_fuzz(model, check=kept("zk", model), hypothesis_settings=ci(40, 30))
    assert result.errors == [] and result.unexpected == []
    # the runs went through the multi-step controller and through failovers
    assert any(s.cluster.zk.pending for s in result.visited)
    assert any(s.cluster.zk.epoch > 1 for s in result.visited)


def test_known_violations_are_reported_but_do_not_fail_the_run():
    model = ReassignmentModel("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=0))
    result = run_fuzz(model, hypothesis_settings=ci(100, 20), known=lambda n: known_violation("kraft", n))
    assert result.unexpected == [] and result.errors == []
    found = {n for n, o in result.properties.items() if o.status == KNOWN}
    assert "adding_removing_disjoint" in found
    assert all(known_violation("kraft", n) for n in found)
    for name in found:  # the recorded path really violates it
        path = result.paths[name]
        prop = next(p for p in model.properties() if p.name == name)
        if prop.kind == "always":
            assert not prop.predicate(path[-1][0])
        else:
            assert not prop.predicate(path[-2][0], path[-1][1], path[-1][0])


# -- an implementation behind the adapter protocol -----------------------------------------------------------


class BrokenImplementation:
    """A stand-in for another implementation: kraft with the broken cancel (an Implementation)."""

    def __init__(self):
        self.profile = CancelKeepsAddingInIsr(kafka_version="3.9.2")
        self.state = None

    def reset(self, profile_name, state):
        self.state = state

    def apply(self, action):
        step = self.profile.apply(self.state, action)
        self.state = step.state
        return step.state, step.response

    def close(self):
        self.state = None


def test_the_implementation_machine_catches_a_diverging_implementation(tmp_path):
    model = DifferentialModel("kraft", SMALL, BrokenImplementation(), "broken")
    result = run_fuzz(model, hypothesis_settings=ci(200, 20), out_dir=str(tmp_path),
                      known=lambda n: known_violation("kraft", n, "3.9.2"))
    outcome = result.properties[MATCH_PROPERTY]
    assert outcome.status == VIOLATED and 4 <= outcome.length <= 8
    trace = read_trace(outcome.counterexample)
    assert trace.steps[-1]["action"]["type"] == "Cancel"
    assert any("isr" in d for d in trace.steps[-1]["mismatch"]["diff"])


def test_the_reference_behind_the_adapter_matches_itself():
    # the served reference follows the newest release, as the reference does without --kafka-version
    model = DifferentialModel("kraft", replace(SMALL, kafka_version=""), ReferenceImplementation(), "reference")
    result = run_fuzz(model, check=[MATCH_PROPERTY], hypothesis_settings=ci(30, 20))
    assert result.properties[MATCH_PROPERTY].status == PASSED and result.errors == []


# the machine as a plain pytest test case, under the CI profile
KraftMachine = machine_for(ReassignmentModel("kraft", SMALL), check=kept("kraft", ReassignmentModel("kraft", SMALL)))
KraftMachine.TestCase.settings = ci(30, 20)
TestKraftMachine = KraftMachine.TestCase


# -- kreassign fuzz ---------------------------------------------------------------------------------------------


def test_cli_fuzz_reports_coverage_and_exits_0_with_only_known_violations(tmp_path, capsys):
    rc = main(["fuzz", "--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--examples", "40",
               "--steps", "20", "--seed", "7", "--json", "--out", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["unexpected_violations"] == 0
    states = data["states"]
    exhaustive = explore(ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1))).states
    assert states["exhaustive"] == exhaustive and states["exhaustive_complete"]
    assert 0 < states["fuzz"] <= exhaustive and states["fuzz_states_not_in_exhaustive"] == 0
    assert states["ratio"] == round(states["fuzz"] / exhaustive, 4)
    assert {o["status"] for o in data["properties"].values()} <= {PASSED, KNOWN, NOT_CHECKED, EXAMPLE_FOUND, NO_EXAMPLE}
    # the same seed repeats the run
    main(["fuzz", "--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--examples", "40",
          "--steps", "20", "--seed", "7", "--json", "--out", str(tmp_path), "--no-exhaustive"])
    again = json.loads(capsys.readouterr().out)
    assert (again["steps"], again["states"]["fuzz"]) == (data["steps"], states["fuzz"])


def test_cli_fuzz_against_a_broken_implementation_exits_1_with_a_trace(tmp_path, capsys):
    impl = tmp_path / "broken_impl.py"
    impl.write_text(
        "from kreassign.reference.kraft import KraftProfile\n"
        "from kreassign.spec.state import ordered_minus\n"
        "class Broken(KraftProfile):\n"
        "    def revert(self, part):\n"
        "        return ordered_minus(part.replicas, part.adding), part.isr, False\n"
        "class Impl:\n"
        "    def reset(self, profile, state):\n"
        "        self.state = state\n"
        "    def apply(self, action):\n"
        "        step = Broken(kafka_version='3.9.2').apply(self.state, action)\n"
        "        self.state = step.state\n"
        "        return step.state, step.response\n"
        "    def close(self):\n"
        "        pass\n"
    )
    out = tmp_path / "out"
    rc = main(["fuzz", "--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--failures", "0",
               "--kafka-version", "3.9.2", "--examples", "100", "--steps", "20", "--seed", "6", "--impl", f"{impl}:Impl",
               "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 1
    assert "VIOLATED (shrunk to" in text and "implementation_matches_reference" in text
    assert (out / f"kraft__{MATCH_PROPERTY}.json").exists()
    assert "distinct states: fuzz" in text and "exhaustive" in text


@pytest.mark.parametrize("argv", [["--profile", "nope"], ["--examples", "0"], ["--brokers", "0"],
                                  ["--profile", "kip599", "--impl", "x:Y"]])
def test_cli_fuzz_usage_errors_exit_2(argv, capsys):
    assert main(["fuzz", *argv, "--no-exhaustive"]) == 2
    assert "kreassign fuzz:" in capsys.readouterr().err


def test_the_machine_runs_any_model_and_notes_sometimes_examples():
    from kreassign.checker.models.quota import default_quota_bounds
    from kreassign.checker.models.registry import build_model

    model = build_model("quota", "kip599", default_quota_bounds("kip599"))
    result = run_fuzz(model, model_kind="quota", hypothesis_settings=ci(30, 15),
                      known=lambda n: known_violation("kip599", n))
    assert result.unexpected == [] and result.errors == []
    assert result.properties["sometimes_throttled"].status == EXAMPLE_FOUND
    prop = next(p for p in model.properties() if p.name == "sometimes_throttled")
    assert prop.predicate(result.paths["sometimes_throttled"][-1][0])
    assert {o.status for o in result.properties.values()} <= {PASSED, KNOWN, NOT_CHECKED, EXAMPLE_FOUND, NO_EXAMPLE}
