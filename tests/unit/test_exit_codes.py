"""The exit-code contract (kreassign/errors.py), subcommand by subcommand, and clean interrupts.

    0 all good, 1 a finding, 2 bad usage or input, 3 infrastructure failure,
    4 inconclusive, 130 interrupted

Each subcommand is driven down each of its paths in process; interrupts need real signals,
so those run `python -m kreassign` as a subprocess and send SIGINT once the run has
visibly started (no timing assertions: a run that finished first fails the test).
"""

from __future__ import annotations

import errno
import os
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kreassign.cli import SUBCOMMANDS, build_parser, main
from kreassign.errors import EXIT_CODES_HELP, FINDING, INCONCLUSIVE, INFRA, INTERRUPTED, OK, USAGE

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
BAD = FIXTURES / "bad_input"
TRACE = BAD / "valid_trace.json"
IMPL = f"{BAD / 'raising_impl.py'}"
BUGGY = f"{ROOT / 'docs' / 'examples' / 'buggy_kraft.py'}:BuggyKraft"
# at Kafka 3.9, the release docs/examples/buggy_kraft.py follows
SMALL = ["--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--cancels", "1", "--failures", "0",
         "--kafka-version", "3.9.2"]
PLAN = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}\n'


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


# -- the contract is documented ---------------------------------------------------------------------


def test_help_documents_the_contract(capsys) -> None:
    assert "130 interrupted" in EXIT_CODES_HELP and "2 bad usage" in EXIT_CODES_HELP
    parser = build_parser()
    text = " ".join(parser.format_help().split())
    assert " ".join(EXIT_CODES_HELP.split()) in text
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in SUBCOMMANDS:
        assert " ".join(EXIT_CODES_HELP.split()) in " ".join(sub.choices[name].format_help().split()), name


# -- each subcommand, each code --------------------------------------------------------------------------


def test_check(tmp_path, capsys) -> None:
    out = str(tmp_path / "out")
    assert run(["check", *SMALL, "--out", out], capsys)[0] == OK
    code, stdout, _ = run(["check", *SMALL, "--impl", BUGGY, "--out", out], capsys)
    assert code == FINDING and stdout.rstrip().endswith(f"— exit {FINDING}")
    assert run(["check", *SMALL, "--rf", "9"], capsys)[0] == USAGE
    assert run(["check", *SMALL, "--impl", f"{IMPL}:ApplyRaises", "--out", out], capsys)[0] == INFRA
    code, stdout, _ = run(["check", *SMALL, "--max-states", "20", "--out", out, "--json"], capsys)
    assert code == INCONCLUSIVE
    result = json.loads(stdout)["results"][0]
    assert result["complete"] is False and result["stopped"] == "max-states" and result["states"] == 20


def test_check_refuses_absurd_bounds_unless_forced(tmp_path, capsys) -> None:
    code, _, err = run(["check", "--profile", "kraft", "--brokers", "10000"], capsys)
    assert code == USAGE and "--brokers" in err and "--force" in err and "states" in err
    # forced, the run starts and a limit stops it cleanly: incomplete, exit 4, not a dead machine
    absurd = ["check", "--profile", "kraft", "--brokers", "6", "--rf", "3", "--partitions", "3"]
    code, _, err = run(absurd, capsys)
    assert code == USAGE and "lower --partitions" in err
    code, stdout, _ = run([*absurd, "--force", "--max-states", "50", "--no-liveness", "--out", str(tmp_path / "o"),
                           "--json"], capsys)
    assert code == INCONCLUSIVE and json.loads(stdout)["results"][0]["complete"] is False


def test_check_max_memory_stops_cleanly(tmp_path, capsys) -> None:
    # a limit below what the process already uses stops the search at once
    code, stdout, _ = run(["check", *SMALL, "--max-memory", "1M", "--out", str(tmp_path / "o"), "--json"], capsys)
    assert code == INCONCLUSIVE
    result = json.loads(stdout)["results"][0]
    assert result["complete"] is False and result["stopped"].startswith("max-memory")


def test_show(capsys, tmp_path) -> None:
    assert run(["show", str(TRACE)], capsys)[0] == OK
    assert run(["show", str(BAD / "truncated_trace.json")], capsys)[0] == USAGE


def test_replay(tmp_path, capsys) -> None:
    assert run(["replay", str(TRACE)], capsys)[0] == OK
    other = json.loads(TRACE.read_text())
    other["property"] = "isr_non_empty"  # a property the trace does not break: the replay is a mismatch
    (tmp_path / "t.json").write_text(json.dumps(other))
    assert run(["replay", str(tmp_path / "t.json")], capsys)[0] == FINDING
    assert run(["replay", str(BAD / "no_initial_state.json")], capsys)[0] == USAGE
    code, _, err = run(["replay", str(TRACE), "--impl", f"{IMPL}:ApplyRaises"], capsys)
    assert code == INFRA and "boom" in err


def test_validate_trace(tmp_path, capsys) -> None:
    assert run(["validate-trace", str(FIXTURES / "seed003_zk_reassignment.log")], capsys)[0] == OK
    assert run(["validate-trace", str(FIXTURES / "seed003_leader_outside_replicas.log")], capsys)[0] == FINDING
    assert run(["validate-trace", str(tmp_path / "missing.log")], capsys)[0] == USAGE
    (tmp_path / "nothing.log").write_text("hello\n")
    assert run(["validate-trace", str(tmp_path / "nothing.log")], capsys)[0] == INCONCLUSIVE


def test_reassign_json(tmp_path, capsys, monkeypatch) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(PLAN)
    assert run(["reassign-json", "validate", str(plan)], capsys)[0] == OK
    (tmp_path / "bad.json").write_text('{"version": 1, "partitions": [}')
    assert run(["reassign-json", "validate", str(tmp_path / "bad.json")], capsys)[0] == USAGE

    def disk_full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    assert run(["reassign-json", "normalize", str(plan), "--out", str(tmp_path / "o.json")], capsys)[0] == INFRA


def test_fuzz(tmp_path, capsys) -> None:
    base = ["fuzz", "--examples", "3", "--steps", "4", "--seed", "1", "--no-exhaustive", "--out", str(tmp_path)]
    assert run(base, capsys)[0] == OK
    assert run([*base, "--examples", "0"], capsys)[0] == USAGE
    assert run([*base, "--impl", f"{IMPL}:ApplyRaises"], capsys)[0] == INFRA


def test_prove(tmp_path, capsys) -> None:
    argv = ["prove", "--profile", "kraft", "--max-brokers", "3", "--property", "isr_in_replicas", "--quiet",
            "--out", str(tmp_path)]
    assert run(argv, capsys)[0] == OK
    assert run(["prove", "--profile", "nope"], capsys)[0] == USAGE


def test_oracle(capsys, monkeypatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO('{"op": "profiles"}\n'))
    code, out, _ = run(["oracle"], capsys)
    assert code == OK and '"ok":true' in out
    assert run(["oracle", "--profile", "nope"], capsys)[0] == USAGE


def test_interrupted_writes_leave_old_files_alone(tmp_path, capsys, monkeypatch) -> None:
    """Ctrl-C in the middle of an --out write: exit 130, the old file intact, no temp file left."""

    plan = tmp_path / "plan.json"
    plan.write_text(PLAN)
    out = tmp_path / "out.json"
    out.write_text("precious\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    code, _, err = run(["reassign-json", "normalize", str(plan), "--out", str(out)], capsys)
    assert code == INTERRUPTED and err.strip() == "kreassign reassign-json: interrupted"
    assert out.read_text() == "precious\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "plan.json"]


def test_interrupted_trace_write_leaves_old_trace_alone(tmp_path, monkeypatch) -> None:
    from kreassign.checker.traces import format as trace_format

    trace = trace_format.read_trace(str(TRACE))
    target = tmp_path / "t.json"
    target.write_text("precious\n")
    monkeypatch.setattr(trace_format.os, "replace", lambda a, b: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        trace_format.write_trace(trace, str(target))
    assert target.read_text() == "precious\n" and [p.name for p in tmp_path.iterdir()] == ["t.json"]


# -- real Ctrl-C -----------------------------------------------------------------------------------------


def _start(argv: list[str], cwd: Path) -> subprocess.Popen:
    # a background job's SIGINT may be ignored (SIG_IGN is inherited): give the child the default
    return subprocess.Popen([sys.executable, "-m", "kreassign", *argv], cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _interrupt_after(proc: subprocess.Popen, marker: str | None, seconds: float = 5.0) -> tuple[int, str, str]:
    """SIGINT once stderr shows `marker` (or after `seconds` when there is none); (code, stdout, stderr)."""
    seen = ""
    if marker is not None:
        while marker not in seen:
            line = proc.stderr.readline()
            assert line, f"the run ended before {marker!r}: {seen[-2000:]}"
            seen += line
    else:
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass
        assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, seen + err


@pytest.mark.slow
def test_ctrl_c_in_check_prints_what_was_explored(tmp_path) -> None:
    proc = _start(["check", "--profile", "kraft", "--brokers", "5", "--rf", "3", "--reassigns", "2",
                   "--failures", "2", "--progress-interval", "0.01", "--out", str(tmp_path / "o")], tmp_path)
    code, out, err = _interrupt_after(proc, "progress kraft:")
    assert code == INTERRUPTED and "Traceback" not in err
    assert "interrupted: kraft" in err and "states" in err and "depth" in err and "incomplete" in err
    assert out.rstrip().endswith(f"— exit {INTERRUPTED} (interrupted: 1 of 1 profile(s) incomplete or not run)")


@pytest.mark.slow
def test_ctrl_c_in_prove_is_130_not_0(tmp_path) -> None:
    # without the fix z3 swallows SIGINT: every property "unknown", exit 0
    proc = _start(["prove", "--out", str(tmp_path)], tmp_path)
    code, out, err = _interrupt_after(proc, "[prove]")
    assert code == INTERRUPTED and "Traceback" not in err and "interrupted" in err
    assert "unknown" not in out


@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ["fuzz", "--examples", "1000000", "--steps", "50", "--no-exhaustive"],
    ["validate-trace", str(FIXTURES / "seed003_zk_reassignment.log"), "--max-unlogged", "12", "--max-requests", "4",
     "--all-explanations", "--max-states", "100000000"],
    ["oracle"],
], ids=["fuzz", "validate-trace", "oracle"])
def test_ctrl_c_is_130_without_traceback(argv, tmp_path) -> None:
    proc = _start([*argv, *(["--out", str(tmp_path)] if argv[0] == "fuzz" else [])], tmp_path)
    code, _, err = _interrupt_after(proc, None)
    assert code == INTERRUPTED and "Traceback" not in err
    if argv[0] != "oracle":
        assert err.strip().endswith("interrupted")


def test_keyboard_interrupt_in_any_subcommand_is_130(capsys, monkeypatch) -> None:
    """main's contract: whatever a subcommand is doing, KeyboardInterrupt becomes one line and 130."""
    from kreassign.checker.cli import show

    def boom(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(show, "run", boom)  # register() reads it when main builds the parser
    code, _, err = run(["show", str(TRACE)], capsys)
    assert code == INTERRUPTED and err == "kreassign show: interrupted\n"


def test_a_spark_failure_is_an_infrastructure_failure(tmp_path, capsys, monkeypatch) -> None:
    """A Spark job that fails for good (or a JVM that will not start) is exit 3, not 1 ("a finding")."""
    from kreassign.checker.spark import engine

    def failing_explorer(**_options):
        def explorer(model, **_kw):
            raise RuntimeError("Spark job failed:\nPy4JJavaError: executor lost")

        return explorer

    monkeypatch.setattr(engine, "spark_explorer", failing_explorer)
    code, _, err = run(["check", *SMALL, "--engine", "spark", "--out", str(tmp_path)], capsys)
    assert code == INFRA and "Spark failed: Spark job failed:" in err and len(err.strip().splitlines()) == 1


def test_ctrl_c_inside_a_gc_callback_is_redelivered_not_swallowed() -> None:
    """Python ignores exceptions raised in gc callbacks; the fuzz handler defers instead of raising there."""
    import sys as _sys

    from kreassign import interrupts

    def gc_callback():
        return _sys._getframe()

    def ordinary():
        return _sys._getframe()

    assert interrupts._in_swallowing_frame(gc_callback())
    assert not interrupts._in_swallowing_frame(ordinary())
    interrupts._state.update(active=False, pending=False)
    interrupts._handler(signal.SIGINT, gc_callback())  # deferred: no exception here
    assert interrupts._state["pending"]
    with pytest.raises(KeyboardInterrupt):
        interrupts._handler(signal.SIGINT, ordinary())
