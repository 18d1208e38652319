"""Implementation adapters: the reference behind the protocol, subprocesses, loading by spec, failures."""

from __future__ import annotations

import io
import json
import os
import shlex
import sys

import pytest
from kreassign.checker.implementations.adapters import (
    CheckedImplementation,
    Implementation,
    ImplementationError,
    ImplementationRefused,
    ReferenceImplementation,
    SubprocessImplementation,
    decode_response,
    load_implementation,
    response_to_json,
    serve,
)
from kreassign.reference import profile
from kreassign.reference.kraft import KraftProfile
from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.codec import DecodeError, to_json
from kreassign.spec.state import make_cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "docs", "examples")
KRAFT_ADAPTER = os.path.join(EXAMPLES, "kraft_adapter.py")
BUGGY_MODULE = os.path.join(EXAMPLES, "buggy_kraft.py")
PY = shlex.quote(sys.executable)

CLUSTER = make_cluster([1, 2, 3, 4], {"t": [[1, 2]]})

#: a scenario touching every family the kraft adapter implements, errors included
SCENARIO = [
    A.Reassign("t", 0, (2, 3)),
    A.ListReassignments(),
    A.LeaderExpandIsr("t", 0, 3),
    A.Reassign("t", 0, (3, 4)),
    A.Cancel("t", 0),
    A.Cancel("t", 0),  # 85, null message
    A.Reassign("t", 0, (1, 9)),  # 39, not registered
    A.Reassign("t", 0, ()),  # 39, empty
    A.Reassign("x", 0, (1, 2)),  # 3, unknown topic
    A.BrokerFail(1),
    A.ElectLeaders("t", 0, "PREFERRED"),
    A.BrokerRecover(1),
    A.ElectLeaders("t", 0, "PREFERRED"),
    A.LeaderShrinkIsr("t", 0, 2),
    A.ControllerFailover(),
]


def run_reference(actions, prof="kraft", state=CLUSTER):
    out = []
    for a in actions:
        step = (profile(prof) if isinstance(prof, str) else prof).apply(state, a)
        state = step.state
        out.append((state, step.response))
    return out


def run_impl(impl, actions, prof="kraft", state=CLUSTER):
    impl.reset(prof, state)
    return [impl.apply(a) for a in actions]


def script(tmp_path, body: str) -> str:
    """A child program for failure tests; returns the exec: spec."""
    path = tmp_path / "child.py"
    path.write_text(body)
    return f"{PY} {shlex.quote(str(path))}"


# -- the reference behind the protocol --------------------------------------------------------------


def test_reference_implementation_is_the_reference():
    impl = ReferenceImplementation()
    assert isinstance(impl, Implementation)
    assert run_impl(impl, SCENARIO) == run_reference(SCENARIO)


def test_reference_implementation_with_a_fixed_profile_ignores_reset():
    # kraft-3.7 completes when the adding replicas are in the ISR, kraft 3.8 - 4.2 when all target replicas are
    state = make_cluster([1, 2, 3], {"t": [[1, 2]]})
    actions = [A.Reassign("t", 0, (1, 3)), A.LeaderShrinkIsr("t", 0, 2), A.Reassign("t", 0, (2, 3)),
               A.LeaderExpandIsr("t", 0, 3)]
    fixed = run_impl(ReferenceImplementation("kraft-3.7"), actions, "kraft", state)
    assert fixed == run_reference(actions, "kraft-3.7", state)
    assert fixed != run_reference(actions, KraftProfile(kafka_version="3.9.2"), state)


def test_reference_implementation_refuses_what_the_reference_refuses():
    impl = ReferenceImplementation()
    with pytest.raises(ImplementationError, match="apply before reset"):
        impl.apply(A.ControllerFailover())
    impl.reset("kraft", CLUSTER)
    with pytest.raises(ImplementationRefused, match="unknown broker 9"):
        impl.apply(A.BrokerFail(9))
    with pytest.raises(ImplementationRefused, match="ActionNotSupported"):
        impl.apply(A.ControllerStep("t", 0))


# -- responses --------------------------------------------------------------------------------------


def test_responses_round_trip_with_and_without_their_type():
    for _, response in run_reference(SCENARIO):
        data = response_to_json(response)
        assert decode_response(data) == response
        untyped = {k: v for k, v in data.items() if k != "type"}
        action = A.Cancel("t", 0) if isinstance(response, M.AlterPartitionReassignmentsResponse) else A.BrokerFail(1)
        assert decode_response(untyped, action) == response


def test_bad_responses_name_the_field():
    with pytest.raises(DecodeError, match=r"response.type: unknown message type 'Nope'"):
        decode_response({"type": "Nope"})
    with pytest.raises(DecodeError, match=r"response.error_code: expected an integer"):
        decode_response({"type": "Ack", "error_code": "x"})
    with pytest.raises(DecodeError, match="expected a response object"):
        decode_response([1])


# -- subprocesses -------------------------------------------------------------------------------------


def test_reference_served_over_the_protocol_equals_the_reference():
    impl = load_implementation(f"exec:{PY} -m kreassign.checker.implementations.adapters")
    assert isinstance(impl, SubprocessImplementation)
    try:
        assert run_impl(impl, SCENARIO) == run_reference(SCENARIO)
        # the session survives a refused action
        impl.reset("kraft", CLUSTER)
        with pytest.raises(ImplementationRefused, match="unknown broker 9"):
            impl.apply(A.BrokerFail(9))
        step = profile("kraft").apply(CLUSTER, A.BrokerFail(1))
        assert impl.apply(A.BrokerFail(1)) == (step.state, step.response)
    finally:
        impl.close()
    assert impl._proc is None


def test_standalone_kraft_adapter_follows_the_reference_on_a_scenario():
    with SubprocessImplementation(f"{PY} {shlex.quote(KRAFT_ADAPTER)}") as impl:
        assert run_impl(impl, SCENARIO) == run_reference(SCENARIO)
        assert run_impl(impl, SCENARIO, "kraft-3.7") == run_reference(SCENARIO, "kraft-3.7")
        with pytest.raises(ImplementationRefused, match="implements kraft and kraft-3.7, not 'zk'"):
            impl.reset("zk", CLUSTER)


def test_standalone_buggy_adapter_differs_only_on_cancel():
    actions = [A.Reassign("t", 0, (3, 4)), A.LeaderExpandIsr("t", 0, 3), A.Cancel("t", 0)]
    with SubprocessImplementation(f"{PY} {shlex.quote(KRAFT_ADAPTER)} --bug cancel-keeps-adding-in-isr") as impl:
        got = run_impl(impl, actions)
    want = run_reference(actions)
    assert got[:2] == want[:2]
    assert want[2][0].partition("t", 0).isr == (1, 2)
    assert got[2][0].partition("t", 0).isr == (1, 2, 3)  # 3 is no replica any more


def test_a_child_that_dies_is_reported_with_its_exit_code_and_stderr(tmp_path):
    cmd = script(tmp_path, "import sys\nsys.stdin.readline()\nsys.stderr.write('parse error in adapter\\n')\nsys.exit(3)\n")
    impl = SubprocessImplementation(cmd)
    with pytest.raises(ImplementationError) as e:
        impl.reset("kraft", CLUSTER)
    assert "exit code 3" in str(e.value) and "parse error in adapter" in str(e.value)
    with pytest.raises(ImplementationError, match="exit code 3"):  # stays broken
        impl.reset("kraft", CLUSTER)
    impl.close()


def test_a_child_that_hangs_is_killed_after_the_timeout(tmp_path):
    cmd = script(tmp_path, "import sys, time\nsys.stdin.readline()\nsys.stderr.write('thinking\\n')\n"
                 "sys.stderr.flush()\ntime.sleep(60)\n")
    impl = SubprocessImplementation(cmd, timeout=0.5)
    with pytest.raises(ImplementationError, match=r"no reply to the 'reset' request within 0.5 s \(killed\)") as e:
        impl.reset("kraft", CLUSTER)
    assert "thinking" in str(e.value)
    proc = impl._proc
    assert proc.poll() is not None  # killed at the timeout, not left sleeping its 60 s (no wall-clock bound here)
    impl.close()


@pytest.mark.parametrize("reply, message", [
    ("hello", "not JSON"),
    ("[1, 2]", 'expected an object with a boolean "ok"'),
    ('{"ok": "yes"}', 'expected an object with a boolean "ok"'),
])
def test_a_malformed_reply_is_an_error_quoting_it(tmp_path, reply, message):
    cmd = script(tmp_path, f"import sys\nsys.stdin.readline()\nprint({reply!r}, flush=True)\nsys.stdin.readline()\n")
    with SubprocessImplementation(cmd) as impl, pytest.raises(ImplementationError, match="malformed reply") as e:
        impl.reset("kraft", CLUSTER)
    assert message in str(e.value)


def test_a_reply_with_a_bad_state_names_the_field(tmp_path):
    bad_state = to_json(CLUSTER)
    bad_state["topics"][0]["partitions"][0]["isr"] = [1, "x"]
    cmd = script(tmp_path, "import json, sys\nsys.stdin.readline()\nprint(json.dumps({'ok': True}), flush=True)\n"
                 "sys.stdin.readline()\n"
                 f"print(json.dumps({{'ok': True, 'state': {bad_state!r}, 'response': {{}}}}), flush=True)\n"
                 "sys.stdin.readline()\n")
    with SubprocessImplementation(cmd) as impl:
        impl.reset("kraft", CLUSTER)
        with pytest.raises(ImplementationError, match=r"state\.topics\[0\]\.partitions\[0\]\.isr\[1\]: expected an integer"):
            impl.apply(A.ControllerFailover())


def test_an_error_reply_is_a_refusal_not_a_broken_child(tmp_path):
    cmd = script(tmp_path, "import json, sys\nfor line in sys.stdin:\n"
                 "    print(json.dumps({'ok': False, 'error': 'no such thing'}), flush=True)\n")
    with SubprocessImplementation(cmd) as impl:
        for _ in range(2):
            with pytest.raises(ImplementationRefused, match="refused 'reset': no such thing"):
                impl.reset("kraft", CLUSTER)


def test_exec_spec_errors():
    with pytest.raises(ImplementationError, match="needs a command"):
        load_implementation("exec:   ")
    impl = load_implementation("exec:/nonexistent/adapter --flag")
    with pytest.raises(ImplementationError, match="cannot start the implementation"):
        impl.reset("kraft", CLUSTER)
    with pytest.raises(ImplementationError, match="cannot split the command"):
        load_implementation("exec:python 'unterminated")


def test_timeout_is_a_value_the_cli_passes_down(tmp_path, capsys):
    """--impl-timeout reaches the adapter as a value (no environment variable): a slow reply is killed at it."""
    from kreassign.checker.oracle.differential import differential_factory

    from kreassign.cli import main

    assert load_implementation("exec:true", timeout=2.5).timeout == 2.5
    factory = differential_factory("exec:true", 2.5)
    assert factory.timeout == 2.5 and factory.impl is None  # loaded on first use
    assert main(["check", "--profile", "kraft", "--impl", "exec:sleep 100", "--impl-timeout", "0.3",
                 "--no-liveness", "--out", str(tmp_path)]) == 3
    assert "within 0.3 s (killed)" in capsys.readouterr().err
    assert main(["check", "--profile", "kraft", "--impl", "exec:true", "--impl-timeout", "0"]) == 2
    assert "--impl-timeout: must be a positive number of seconds, got 0" in capsys.readouterr().err


# -- module:Class -------------------------------------------------------------------------------------


def test_load_by_module_and_by_path():
    assert isinstance(load_implementation("kreassign.checker.implementations.adapters:ReferenceImplementation"), ReferenceImplementation)
    buggy = load_implementation(f"{BUGGY_MODULE}:BuggyKraft")
    assert isinstance(buggy, CheckedImplementation)
    actions = [A.Reassign("t", 0, (3, 4)), A.LeaderExpandIsr("t", 0, 3), A.Cancel("t", 0)]
    got = run_impl(buggy, actions)
    assert got[-1][0].partition("t", 0).isr == (1, 2, 3)
    assert got[:2] == run_reference(actions)[:2]


@pytest.mark.parametrize("spec, message", [
    ("nocolon", "expected 'module:Class'"),
    ("kreassign.nosuch:X", "no module named 'kreassign.nosuch'"),
    ("kreassign.checker.implementations.adapters:Nope", "has no attribute 'Nope'"),
    ("docs/examples/missing.py:X", "no such file"),
    ("", "empty spec"),
])
def test_load_errors_name_the_problem(spec, message):
    with pytest.raises(ImplementationError, match=message):
        load_implementation(spec)


def test_load_errors_from_the_class(tmp_path):
    mod = tmp_path / "impls.py"
    mod.write_text("class Boom:\n    def __init__(self):\n        raise RuntimeError('no config')\n"
                   "class Half:\n    def reset(self, p, s):\n        pass\n"
                   "class Liar:\n    def reset(self, p, s):\n        self.s = s\n"
                   "    def apply(self, a):\n        return 'state', 'response'\n    def close(self):\n        pass\n"
                   "raise_me = 1\n")
    with pytest.raises(ImplementationError, match=r"Boom\(\) failed: RuntimeError: no config"):
        load_implementation(f"{mod}:Boom")
    with pytest.raises(ImplementationError, match="has no method.s. apply, close"):
        load_implementation(f"{mod}:Half")
    liar = load_implementation(f"{mod}:Liar")
    liar.reset("kraft", CLUSTER)
    with pytest.raises(ImplementationError, match="returned a str, not a ClusterState"):
        liar.apply(A.ControllerFailover())
    broken = tmp_path / "broken.py"
    broken.write_text("import nothing_here_at_all\n")
    with pytest.raises(ImplementationError, match="importing .* failed: ModuleNotFoundError"):
        load_implementation(f"{broken}:X")


# -- serve() ------------------------------------------------------------------------------------------


def test_serve_speaks_the_protocol_and_survives_bad_lines():
    lines = [
        json.dumps({"op": "reset", "profile": "kraft", "state": to_json(CLUSTER)}),
        "not json",
        json.dumps({"op": "apply", "action": {"type": "Nope"}}),
        json.dumps({"op": "apply", "action": to_json(A.Reassign("t", 0, (2, 3)))}),
        json.dumps({"op": "frobnicate"}),
        json.dumps({"op": "close"}),
        json.dumps({"op": "apply", "action": to_json(A.ControllerFailover())}),  # after close: not read
    ]
    out = io.StringIO()
    assert serve(ReferenceImplementation(), io.StringIO("\n".join(lines) + "\n"), out) == 0
    replies = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [r["ok"] for r in replies] == [True, False, False, True, False, True]
    assert "invalid JSON" in replies[1]["error"]
    assert "action.type: unknown action 'Nope'" in replies[2]["error"]
    step = profile("kraft").apply(CLUSTER, A.Reassign("t", 0, (2, 3)))
    assert replies[3]["state"] == to_json(step.state)
    assert replies[3]["response"]["type"] == "AlterPartitionReassignmentsResponse"
    assert "unknown op 'frobnicate'" in replies[4]["error"]
