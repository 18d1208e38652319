"""The one list of allowed differences between Kafka's KRaft controller and the reference.

Each entry is a deliberate modelling abstraction — something the model leaves out on
purpose — never a loosening of the comparison: an entry recognises one situation (the
action, the state before it, and the exact diff lines it explains) and nothing else. A
step whose diff lines are not *all* explained by one entry is a mismatch. Each entry
names a minimal trace under counterexamples/kafka/ that shows it; the tests replay every
trace against Kafka and check that the entry (and only it) explains its last step.

Where Kafka proved the reference wrong, the reference was fixed instead (docs/kafka.md,
"Divergences found").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kreassign.spec import actions as A


@dataclass(frozen=True)
class AllowedDifference:
    name: str
    description: str  # what Kafka does, what the model does, and why the model abstracts it
    trace: str  # a minimal trace (counterexamples/kafka/...) whose last step shows it
    explains: Callable[[Any, Any, str], bool]  # (state before, action, one diff line) -> explained?


def _controlled_shutdown_line(before: Any, action: Any, line: str) -> bool:
    return False


#: the allowed differences, in one place (docs/kafka.md lists them with their traces)
ALLOWED: tuple[AllowedDifference, ...] = ()


def explain(before: Any, action: Any, lines: tuple[str, ...]) -> str | None:
    """The name of the one allowed difference explaining every diff line of a step, or None."""
    if not lines:
        return None
    for d in ALLOWED:
        if all(d.explains(before, action, line) for line in lines):
            return d.name
    return None


_ = (re, A)

__all__ = ["ALLOWED", "AllowedDifference", "explain"]
