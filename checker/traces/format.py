"""One JSON trace format for every engine (docs/trace-format.md): write, read, replay.

A trace is a path through a model: the initial state, then one step per action with
the full state after it. It names the model kind, profile and bounds, so that the
model can be rebuilt and the trace re-executed against the reference (`replay`).
Files are written atomically by the output rule of kreassign/outputs.py; reading checks every field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kreassign.checker.explore.protocol import Model
from kreassign.spec.codec import to_json
from kreassign.spec.properties import ALWAYS, EVENTUALLY, SOMETIMES, TRANSITION

from kreassign._version import __version__
from kreassign.errors import InfraError, UsageError
from kreassign.outputs import read_text, write_output

FORMAT = "kreassign-trace"
FORMAT_VERSION = 1


class TraceError(UsageError, ValueError):
    """A malformed trace file; the message names the file and the field path (exit code 2)."""


@dataclass
class Trace:
    model: str  # model kind: "reassignment", "quota", "anchor"
    profile: str
    bounds: dict[str, Any]
    property: str
    kind: str  # the property's kind: always / transition / eventually / sometimes / mismatch
    initial: Any  # JSON of the initial state
    steps: list[dict[str, Any]]  # {"action": JSON, "action_text": str, "response": JSON|None, "state": JSON}
    summary: str = ""
    engine: str = "embedded"
    loop_start: int | None = None  # liveness: index into steps where the lasso's loop starts
    description: str = ""
    tool_version: str = __version__
    found_at: dict[str, Any] | None = None  # the bounds the violation was found at, when minimized to `bounds`

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "tool_version": self.tool_version,
            "model": self.model,
            "profile": self.profile,
            "engine": self.engine,
            "bounds": self.bounds,
            "property": self.property,
            "kind": self.kind,
            "description": self.description,
            "summary": self.summary,
            "initial_state": self.initial,
            "steps": self.steps,
            "loop_start": self.loop_start,
            **({"found_at_bounds": self.found_at} if self.found_at is not None else {}),
        }


def trace_from_path(
    model: Model,
    model_kind: str,
    prop_name: str,
    prop_kind: str,
    path: Sequence[tuple[Any, Any]],
    *,
    engine: str = "embedded",
    description: str = "",
    loop_start: int | None = None,
) -> Trace:
    """Build a Trace from an engine path [(init, None), (state, action), ...]."""
    init = path[0][0]
    notes = model.annotate_path(path)
    steps = []
    for (state, action), note in zip(path[1:], notes[1:]):
        response = getattr(action, "response", None)
        steps.append(
            {
                "action": model.action_to_json(action),
                "action_text": model.format_action(action),
                "response": to_json(response) if response is not None else None,
                "state": model.state_to_json(state),
                **note,
            }
        )
    desc = model.describe()
    profile = desc.get("profile", model.name)
    bounds = {k: v for k, v in desc.items() if k != "profile"}
    summary = f"{profile}: {prop_name} ({prop_kind}) fails after {len(steps)} step(s)"
    if steps:
        summary += ": " + " -> ".join(s["action_text"] for s in steps)
    return Trace(model_kind, profile, bounds, prop_name, prop_kind, model.state_to_json(init), steps,
                 summary=summary, engine=engine, loop_start=loop_start, description=description)


def write_trace(trace: Trace, path: str) -> None:
    """Write atomically by the output rule (kreassign/outputs.py, docs/outputs.md): a crash or Ctrl-C never
    leaves a half-written file or clobbers an old one; never over a device, FIFO or socket; a symlink is
    written through to its target.

    An unusable destination (a file where the directory should be, no permission, not a regular file) is a
    TraceWriteError naming it (exit code 2); a full or failing disk is an InfraError (exit code 3); the
    existing file, if any, is left as it was.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise TraceWriteError(f"{directory}: cannot write counterexample files there: {e.strerror or e}") from None
    text = json.dumps(trace.to_json(), indent=1) + "\n"
    try:
        write_output(path, text)
    except InfraError:
        raise
    except UsageError as e:
        raise TraceWriteError(str(e)) from None


class TraceWriteError(UsageError, OSError):
    """The trace could not be written where asked (exit code 2); nothing was overwritten."""


def _need(data: dict, key: str, types: type | tuple, where: str = "") -> Any:
    if key not in data:
        raise TraceError(f"{where}{key}: missing")
    v = data[key]
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in (types if isinstance(types, tuple) else (types,))):
        raise TraceError(f"{where}{key}: wrong type {type(v).__name__}")
    return v


def read_trace(path: str) -> Trace:
    """Read and check a trace file; every error is a TraceError naming the file (and field path or line)."""
    text = read_text(path, "a trace file", TraceError)
    if not text.strip():
        raise TraceError(f"{path}: empty file, not a trace")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        what = "truncated JSON" if e.pos >= len(text.rstrip()) else "invalid JSON"
        raise TraceError(f"{path}: {what} at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except (ValueError, RecursionError) as e:  # an integer beyond Python's digit limit, nesting too deep
        raise TraceError(f"{path}: invalid JSON: {str(e)[:200]}") from None
    try:
        return trace_from_json(data)
    except TraceError as e:
        raise TraceError(f"{path}: {e}") from None


def trace_from_json(data: Any) -> Trace:
    if not isinstance(data, dict):
        raise TraceError("expected a JSON object")
    if data.get("format") != FORMAT:
        raise TraceError(f"format: expected {FORMAT!r}, got {data.get('format')!r}")
    version = _need(data, "format_version", int)
    if version != FORMAT_VERSION:
        raise TraceError(f"format_version: unsupported version {version} (this tool reads {FORMAT_VERSION})")
    steps = _need(data, "steps", list)
    if "initial_state" not in data:
        raise TraceError("initial_state: missing")
    if not isinstance(data["initial_state"], dict):
        raise TraceError(f"initial_state: expected an object, got {type(data['initial_state']).__name__}")
    for k, s in enumerate(steps):
        if not isinstance(s, dict):
            raise TraceError(f"steps[{k}]: expected an object")
        for key in ("action", "state"):
            if key not in s:
                raise TraceError(f"steps[{k}].{key}: missing")
        if not isinstance(s["state"], dict):
            raise TraceError(f"steps[{k}].state: expected an object, got {type(s['state']).__name__}")
    kind = _need(data, "kind", str)
    if kind not in (ALWAYS, TRANSITION, EVENTUALLY, SOMETIMES, "deadlock", "mismatch"):
        raise TraceError(f"kind: unknown property kind {kind!r}")
    loop = data.get("loop_start")
    if loop is not None and (not isinstance(loop, int) or not 0 <= loop <= len(steps)):
        raise TraceError(f"loop_start: must be null or an index into steps, got {loop!r}")
    return Trace(
        model=_need(data, "model", str),
        profile=_need(data, "profile", str),
        bounds=_need(data, "bounds", dict),
        property=_need(data, "property", str),
        kind=kind,
        initial=data.get("initial_state"),
        steps=steps,
        summary=data.get("summary", ""),
        engine=data.get("engine", "embedded"),
        loop_start=loop,
        description=data.get("description", ""),
        tool_version=data.get("tool_version", ""),
        found_at=data.get("found_at_bounds") if isinstance(data.get("found_at_bounds"), dict) else None,
    )
