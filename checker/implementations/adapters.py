"""Other implementations behind one small protocol, so that the checker can test them.

An implementation is anything that can be put in a kreassign state and then apply a
spec action, answering with its new state and its response (docs/adapters.md):

- ``ReferenceImplementation``: the reference itself (for tests, and as a template);
- ``module:Class`` or ``path/to/file.py:Class``: a Python class, instantiated with no arguments;
- ``exec:COMMAND``: any program speaking JSON lines on its stdin/stdout
  (``SubprocessImplementation``): ``{"op": "reset", "profile": ..., "state": ...}``,
  ``{"op": "apply", "action": ...}``, ``{"op": "close"}``.

Every failure of the adapter itself (a child that dies, hangs past the timeout, prints a
malformed line, a spec that does not load) is an ``ImplementationError`` naming what
happened; an implementation that answers ``{"ok": false}`` to an action raises the
subclass ``ImplementationRefused``, which the differential checker reports as a mismatch
rather than as a broken adapter.
"""

from __future__ import annotations

import atexit
import collections
import importlib
import importlib.util
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
import weakref
from typing import IO, Any, Protocol, Self, runtime_checkable

from kreassign.spec import messages as M
from kreassign.spec.codec import (
    DecodeError,
    decode_action,
    from_json,
    state_from_json,
    to_json,
    validate_state,
)
from kreassign.spec.state import ClusterState

from kreassign.errors import INFRA, USAGE, KreassignError

#: message classes an implementation may answer with, by name (the optional "type" key of a response)
RESPONSE_TYPES: dict[str, type] = {
    "Ack": M.Ack,
    "AlterPartitionReassignmentsResponse": M.AlterPartitionReassignmentsResponse,
    "ListPartitionReassignmentsResponse": M.ListPartitionReassignmentsResponse,
}

#: how many bytes of a child's stderr an error message quotes
STDERR_TAIL = 2000


class ImplementationError(KreassignError, ValueError):
    """The implementation or its adapter failed: it died, hung, raised or spoke garbage (exit code 3)."""

    exit_code = INFRA


class ImplementationSpecError(ImplementationError):
    """The --impl spec names nothing loadable (malformed spec, no such file, module or class): exit code 2."""

    exit_code = USAGE


class ImplementationRefused(ImplementationError):
    """The implementation answered an operation with an error ({"ok": false, "error": ...})."""


@runtime_checkable
class Implementation(Protocol):
    """What the checker needs of an implementation; states and actions are kreassign values."""

    def reset(self, profile: str, state: ClusterState) -> None:
        """Forget everything and take `state` (kreassign form, real epochs) as the current state."""
        ...

    def apply(self, action: Any) -> tuple[ClusterState, object]:
        """Apply one spec action to the current state: the new state (kreassign form) and the response."""
        ...

    def close(self) -> None:
        ...


# -- the reference behind the protocol ----------------------------------------------------------------


class ReferenceImplementation:
    """The reference as an Implementation.

    With `profile`, the reference of that profile is used whatever `reset` names, which
    turns a profile into "another implementation" of a second one (e.g. `kraft-3.7`
    checked against `kraft`, whose completion rule differs). Actions of the optional
    capabilities (ToolExecute, CreatePartitions, BrokerReplay, AutoLeaderBalance ...) go
    through `capabilities` (reference/capabilities.py; Kafka's rules unless a test plants
    a broken variant), as in the explorer's model.
    """

    def __init__(self, profile: str | None = None, capabilities: Any = None):
        from kreassign.reference import profile as get_profile
        from kreassign.reference.capabilities import KAFKA

        self._capabilities = capabilities if capabilities is not None else KAFKA
        self._fixed = get_profile(profile) if profile is not None else None
        self._profile = self._fixed
        self._state: ClusterState | None = None

    def reset(self, profile: str, state: ClusterState) -> None:
        from kreassign.reference import profile as get_profile

        self._profile = self._fixed if self._fixed is not None else get_profile(profile)
        self._state = state

    def apply(self, action: Any) -> tuple[ClusterState, object]:
        if self._state is None or self._profile is None:
            raise ImplementationError("apply before reset: the implementation has no state")
        try:
            step = self._capabilities.apply(self._profile, self._state, action)
        except ValueError as e:  # InvalidAction / ActionNotSupported
            raise ImplementationRefused(f"{type(e).__name__}: {e}") from None
        self._state = step.state
        return step.state, step.response

    def close(self) -> None:
        self._state = None


# -- decoding what an implementation says -------------------------------------------------------------


def expected_response_type(action: Any) -> type:
    """The message class the reference answers `action` with, when the response does not name one."""
    name = type(action).__name__
    if name in ("Reassign", "Cancel", "AlterReassignments", "CancelTopic", "ToolExecute"):
        return M.AlterPartitionReassignmentsResponse
    if name == "ListReassignments":
        return M.ListPartitionReassignmentsResponse
    return M.Ack


def response_type_name(response: Any) -> str:
    return type(response).__name__


def response_to_json(response: Any) -> dict[str, Any]:
    """A response as the protocol carries it: its fields plus "type" naming its message class."""
    data = to_json(response)
    if isinstance(data, dict):
        return {"type": response_type_name(response), **data}
    return {"type": response_type_name(response), "value": data}


def decode_response(data: Any, action: Any = None, path: str = "response") -> Any:
    """Decode a response object; its optional "type" names the class, else the keys and the action decide."""
    if not isinstance(data, dict):
        raise DecodeError(path, "expected a response object")
    name = data.get("type")
    if name is not None:
        cls = RESPONSE_TYPES.get(name) if isinstance(name, str) else None
        if cls is None:
            raise DecodeError(f"{path}.type", f"unknown message type {name!r} (known: {', '.join(RESPONSE_TYPES)})")
    elif "responses" in data:
        cls = M.AlterPartitionReassignmentsResponse
    elif "topics" in data:
        cls = M.ListPartitionReassignmentsResponse
    elif action is not None:
        cls = expected_response_type(action)
    else:
        cls = M.Ack
    body = {k: v for k, v in data.items() if k != "type"}
    return from_json(cls, body, path)


# -- a program speaking JSON lines ----------------------------------------------------------------------


def _reap(proc: subprocess.Popen) -> None:
    """Finalizer: never leave a child behind (weakref.finalize / atexit)."""
    if proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except (subprocess.TimeoutExpired, OSError):
        pass
    for f in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if f is not None:
                f.close()
        except OSError:
            pass


def _pipe(stream: IO[str] | None) -> IO[str]:
    """A child's pipe: always there, since every SubprocessImplementation child is started with three."""
    if stream is None:
        raise ValueError("the implementation's pipe is closed")
    return stream


class SubprocessImplementation:
    """An implementation in another process: JSON lines over its stdin/stdout (docs/adapters.md).

    `command` is split with shell rules (shlex) and run without a shell; wrap it in
    `sh -c '...'` for pipes or variables. The child is started on the first request and
    kept for the whole session; each reply must arrive within `timeout` seconds.
    """

    def __init__(self, command: str, *, timeout: float = 10.0):
        if not isinstance(command, str) or not command.strip():
            raise ImplementationSpecError("exec: needs a command, e.g. 'exec:python3 my_adapter.py'")
        try:
            self.argv = shlex.split(command)
        except ValueError as e:
            raise ImplementationSpecError(f"exec:{command}: cannot split the command: {e}") from None
        self.command = command
        self.timeout = float(timeout)
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._broken: str | None = None
        self._finalizer: weakref.finalize | None = None
        self._stderr_thread: threading.Thread | None = None
        self.requests = 0  # requests sent, for reports and tests

    # -- process management ------------------------------------------------------------------------
    def _start(self) -> subprocess.Popen:
        if self._broken is not None:
            raise ImplementationSpecError(self._broken)
        if self._proc is not None:
            return self._proc
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", bufsize=1,
            )
        except OSError as e:
            # the spec names no program that runs (missing, not executable): usage (2), like a missing module
            self._broken = f"exec:{self.command}: cannot start the implementation: {e.strerror or e}"
            raise ImplementationSpecError(self._broken) from None
        self._proc = proc
        threading.Thread(target=self._pump_stdout, args=(proc,), daemon=True).start()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, args=(proc,), daemon=True)
        self._stderr_thread.start()
        self._finalizer = weakref.finalize(self, _reap, proc)
        atexit.register(self._finalizer)
        return proc

    def _pump_stdout(self, proc: subprocess.Popen) -> None:
        try:
            for line in _pipe(proc.stdout):
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        self._lines.put(None)  # EOF

    def _pump_stderr(self, proc: subprocess.Popen) -> None:
        try:
            for line in _pipe(proc.stderr):
                self._stderr.append(line)
        except (OSError, ValueError):
            pass

    def stderr_tail(self) -> str:
        text = "".join(self._stderr)
        return text[-STDERR_TAIL:]

    def fail(self, what: str) -> ImplementationError:
        """Mark the child broken (killing it) and build the error, quoting its stderr tail."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            # let the stderr pump drain what the child wrote before dying (it ends at EOF)
            if self._stderr_thread is not None:
                self._stderr_thread.join(timeout=1.0)
        tail = self.stderr_tail().rstrip()
        msg = f"exec:{self.command}: {what}"
        if tail:
            msg += "\n--- stderr of the implementation (tail) ---\n" + tail
        self._broken = msg
        return ImplementationError(msg)

    # -- one request ---------------------------------------------------------------------------------
    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one request line and read one reply line; {"ok": false} raises ImplementationRefused."""
        proc = self._start()
        op = message.get("op")
        line = json.dumps(message, separators=(",", ":"))
        try:
            stdin = _pipe(proc.stdin)
            stdin.write(line + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            code = proc.poll()
            raise self.fail(f"the implementation exited (code {code}) before the {op!r} request") from None
        self.requests += 1
        try:
            reply = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self.fail(f"no reply to the {op!r} request within {self.timeout:g} s (killed)") from None
        if reply is None:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            raise self.fail(f"the implementation closed its stdout (exit code {code}) instead of answering {op!r}")
        try:
            data = json.loads(reply)
        except json.JSONDecodeError as e:
            raise self.fail(f"malformed reply to {op!r} (not JSON: {e.msg} at column {e.colno}): {reply.strip()[:200]!r}") from None
        if not isinstance(data, dict) or not isinstance(data.get("ok"), bool):
            raise self.fail(f"malformed reply to {op!r}: expected an object with a boolean \"ok\", got {reply.strip()[:200]!r}")
        if not data["ok"]:
            err = data.get("error")
            if isinstance(err, dict):
                err = err.get("message", json.dumps(err))
            raise ImplementationRefused(f"exec:{self.command}: the implementation refused {op!r}: {err}")
        return data

    # -- the Implementation protocol -----------------------------------------------------------------
    def reset(self, profile: str, state: ClusterState) -> None:
        self.request({"op": "reset", "profile": profile, "state": to_json(state)})

    def apply(self, action: Any) -> tuple[ClusterState, object]:
        data = self.request({"op": "apply", "action": to_json(action)})
        if "state" not in data:
            raise self.fail("malformed reply to 'apply': missing \"state\"")
        try:
            state = state_from_json(data["state"])
        except DecodeError as e:
            raise self.fail(f"malformed state in the reply to 'apply': state.{e}") from None
        try:
            response = decode_response(data.get("response"), action)
        except DecodeError as e:
            raise self.fail(f"malformed response in the reply to 'apply': {e}") from None
        return state, response

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        if proc.poll() is None and self._broken is None:
            try:
                stdin = _pipe(proc.stdin)
                stdin.write(json.dumps({"op": "close"}) + "\n")
                stdin.flush()
                stdin.close()
                proc.wait(timeout=min(self.timeout, 5.0))
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        if self._finalizer is not None:
            self._finalizer()  # kills it if it is still there, closes the pipes
            atexit.unregister(self._finalizer)
            self._finalizer = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- a Python object that returns what it likes ---------------------------------------------------------


class CheckedImplementation:
    """Wraps a Python implementation: checks that it returns a ClusterState and a message value."""

    def __init__(self, inner: Any, spec: str):
        self.inner = inner
        self.spec = spec

    def reset(self, profile: str, state: ClusterState) -> None:
        try:
            self.inner.reset(profile, state)
        except ImplementationError:
            raise
        except Exception as e:  # noqa: BLE001 - user code: a crash is an infrastructure failure, not a traceback
            raise ImplementationError(f"{self.spec}: reset raised {type(e).__name__}: {_short(e)}") from e

    def apply(self, action: Any) -> tuple[ClusterState, object]:
        try:
            result = self.inner.apply(action)
        except ImplementationError:
            raise
        except Exception as e:  # noqa: BLE001 - user code: a crash is an infrastructure failure, not a traceback
            raise ImplementationError(f"{self.spec}: apply({type(action).__name__}) raised "
                                      f"{type(e).__name__}: {_short(e)}") from e
        if not (isinstance(result, tuple) and len(result) == 2):
            raise ImplementationError(f"{self.spec}: apply must return (state, response), got {type(result).__name__}")
        state, response = result
        if not isinstance(state, ClusterState):
            raise ImplementationError(f"{self.spec}: apply returned a {type(state).__name__}, not a ClusterState")
        try:
            validate_state(state)
        except DecodeError as e:
            raise ImplementationError(f"{self.spec}: apply returned a malformed state: state.{e}") from None
        if type(response).__name__ not in RESPONSE_TYPES:
            raise ImplementationError(
                f"{self.spec}: apply returned a {type(response).__name__} response, not one of {', '.join(RESPONSE_TYPES)}")
        return state, response

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def _short(e: BaseException, limit: int = 300) -> str:
    """An exception's message on one line, cut to `limit` characters."""
    try:
        text = " ".join(str(e).split())
    except Exception:  # noqa: BLE001 - a user exception whose __str__ itself fails
        text = "(unprintable)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _import_class(spec: str) -> Any:
    module_name, sep, cls_name = spec.rpartition(":")
    if not sep or not module_name or not cls_name:
        raise ImplementationSpecError(
            f"implementation {spec!r}: expected 'module:Class', 'path/to/file.py:Class' or 'exec:COMMAND'")
    if module_name.endswith(".py") or os.sep in module_name or "/" in module_name:
        path = os.path.abspath(module_name)
        if not os.path.isfile(path):
            raise ImplementationSpecError(f"implementation {spec!r}: no such file {module_name!r}")
        mod_key = "kreassign_impl_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        try:
            loader_spec = importlib.util.spec_from_file_location(mod_key, path)
            if loader_spec is None or loader_spec.loader is None:
                raise ImplementationError(f"implementation {spec!r}: cannot load {module_name!r} as a module")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[mod_key] = module
            writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # nothing written beside the user's file
            try:
                loader_spec.loader.exec_module(module)
            finally:
                sys.dont_write_bytecode = writes
        except ImplementationError:
            raise
        except Exception as e:  # noqa: BLE001 - user code: any failure becomes a clear ImplementationError
            sys.modules.pop(mod_key, None)
            raise ImplementationError(f"implementation {spec!r}: importing {module_name!r} failed: "
                                      f"{type(e).__name__}: {e}") from None
    else:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            raise ImplementationSpecError(f"implementation {spec!r}: no module named {e.name!r}") from None
        except Exception as e:  # noqa: BLE001 - user code: any failure becomes a clear ImplementationError
            raise ImplementationError(f"implementation {spec!r}: importing {module_name!r} failed: "
                                      f"{type(e).__name__}: {e}") from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise ImplementationSpecError(f"implementation {spec!r}: module {module_name!r} has no attribute {cls_name!r}")
    return cls


#: how long an exec: implementation may take to answer one request (seconds; `--impl-timeout`)
DEFAULT_TIMEOUT = 10.0


def load_implementation(spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> Implementation:
    """Load an implementation from its spec: "exec:COMMAND", "module:Class", "path/to/file.py:Class"
    ("kafka" is resolved one layer up, by differential.load_any, since the Kafka adapter builds on this module).

    A class is instantiated with no arguments and must have reset, apply and close.
    `timeout` (exec: only; `--impl-timeout`, default 10 s) bounds each reply.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ImplementationSpecError("implementation: empty spec (expected 'module:Class' or 'exec:COMMAND')")
    if spec.startswith("exec:"):
        return SubprocessImplementation(spec[len("exec:"):], timeout=timeout)
    cls = _import_class(spec)
    try:
        obj = cls()
    except Exception as e:  # noqa: BLE001 - user code: any failure becomes a clear ImplementationError
        raise ImplementationError(f"implementation {spec!r}: {getattr(cls, '__name__', cls)}() failed: "
                                  f"{type(e).__name__}: {e}") from None
    missing = [m for m in ("reset", "apply", "close") if not callable(getattr(obj, m, None))]
    if missing:
        raise ImplementationSpecError(f"implementation {spec!r}: {type(obj).__name__} has no method(s) {', '.join(missing)}")
    if isinstance(obj, (ReferenceImplementation, SubprocessImplementation, CheckedImplementation)):
        return obj
    return CheckedImplementation(obj, spec)


# -- serving an implementation over the protocol ---------------------------------------------------------


def serve(impl: Implementation, stdin=None, stdout=None) -> int:
    """Speak the subprocess protocol on stdin/stdout for a Python implementation; EOF or close ends it.

    `python -m kreassign.checker.implementations.adapters [--profile P | --impl module:Class]` serves the
    reference (or a Python class) this way: the exec: side of the protocol, for tests and
    as a template for adapters in other languages.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    profile_name = "kraft"

    def reply(obj: dict[str, Any]) -> None:
        stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        stdout.flush()

    for line in stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as e:
            reply({"ok": False, "error": f"invalid JSON: {e.msg}"})
            continue
        op = req.get("op") if isinstance(req, dict) else None
        try:
            if op == "reset":
                profile_name = req.get("profile", profile_name)
                impl.reset(profile_name, state_from_json(req.get("state")))
                reply({"ok": True})
            elif op == "apply":
                state, response = impl.apply(decode_action(req.get("action"), "action"))
                reply({"ok": True, "state": to_json(state), "response": response_to_json(response)})
            elif op == "close":
                reply({"ok": True})
                break
            else:
                reply({"ok": False, "error": f"op: unknown op {op!r} (reset, apply, close)"})
        except (DecodeError, ImplementationError) as e:
            reply({"ok": False, "error": str(e)})
    impl.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kreassign.checker.implementations.adapters",
                                     description="serve an implementation over the JSON-lines adapter protocol")
    parser.add_argument("--profile", help="always use this reference profile, whatever reset names")
    parser.add_argument("--impl", help="serve this Python implementation (module:Class or file.py:Class) instead")
    args = parser.parse_args(argv)
    impl = load_implementation(args.impl) if args.impl else ReferenceImplementation(args.profile)
    return serve(impl)


__all__ = [
    "RESPONSE_TYPES",
    "CheckedImplementation",
    "Implementation",
    "ImplementationError",
    "ImplementationRefused",
    "ReferenceImplementation",
    "SubprocessImplementation",
    "decode_action",
    "decode_response",
    "expected_response_type",
    "load_implementation",
    "response_to_json",
    "serve",
]


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
