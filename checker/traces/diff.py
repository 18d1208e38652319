"""Field-level differences between two JSON values (states, responses), as the
differential checker, replay and trace validation report them."""

from __future__ import annotations

import json
from typing import Any


def field_diff(expected: Any, actual: Any, path: str = "", *, left: str = "reference", right: str = "implementation") -> list[str]:
    """Field-level differences between two JSON values: 'path: reference X, implementation Y'."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out: list[str] = []
        for k in sorted(set(expected) | set(actual), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in actual:
                out.append(f"{sub}: {left} {show_json(expected[k])}, {right} has no such field")
            elif k not in expected:
                out.append(f"{sub}: {left} has no such field, {right} {show_json(actual[k])}")
            else:
                out += field_diff(expected[k], actual[k], sub, left=left, right=right)
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual) and any(
        isinstance(x, (dict, list)) for x in expected
    ):
        out = []
        for i, (a, b) in enumerate(zip(expected, actual)):
            out += field_diff(a, b, f"{path}[{i}]", left=left, right=right)
        return out
    if expected == actual:
        return []
    return [f"{path or '<root>'}: {left} {show_json(expected)}, {right} {show_json(actual)}"]


def show_json(v: Any) -> str:
    """A JSON value on one line, as diffs quote it."""
    return json.dumps(v, separators=(",", ":"))
