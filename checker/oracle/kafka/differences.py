"""The one list of allowed differences between Kafka's KRaft controller and the reference.

Each entry of ALLOWED is a deliberate modelling abstraction — something the model leaves out
on purpose — never a loosening of the comparison: it recognises one situation (the state
before, the action, and each diff line it explains) and nothing else, and a step is excused
only when *one* entry explains *all* of its diff lines. Each entry names a minimal trace
under counterexamples/kafka/ whose last step shows it; tests/kafka/test_differences.py
replays every trace against Kafka and checks that this entry, and only it, explains it.

ALLOWED is empty: every divergence the lockstep found was the reference's to fix (docs/kafka.md,
"Divergences found"). UNOBSERVED lists the abstractions that cannot show up as a diff, because
the model has no field for what Kafka keeps beyond it (the adapter does not read it back).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AllowedDifference:
    name: str
    description: str  # what Kafka does, what the model does, and why the model abstracts it
    trace: str  # a minimal trace (counterexamples/kafka/...) whose last step shows it
    explains: Callable[[Any, Any, str], bool]  # (state before, action, one diff line) -> explained?


#: the allowed differences, in one place (docs/kafka.md lists them with their traces)
ALLOWED: tuple[AllowedDifference, ...] = ()

#: abstractions no comparison can see (name, what Kafka keeps, what the model does)
UNOBSERVED: tuple[tuple[str, str], ...] = (
    ("leader recovery state",
     ("After an unclean election Kafka marks the partition RECOVERING until the leader's next AlterPartition; "
      "the model has no such field and every reset starts RECOVERED.")),
    ("broker epochs, incarnations, controlled shutdown",
     ("The model's `active` is 'registered, unfenced and not shutting down'; the adapter registers inactive "
      "brokers as fenced, every broker with one fixed broker epoch.")),
    ("ELR, log directories, topic ids",
     "ELR is off (Kafka 3.9's default); one log directory per broker; topic ids derived from the names."),
    ("replication layer",
     ("Logs, fetches and the high watermark are the brokers', not the controller's: the reference moves "
      "records on Kafka's controller state.")),
)


def explain(before: Any, action: Any, lines: tuple[str, ...],
            allowed: tuple[AllowedDifference, ...] | None = None) -> str | None:
    """The name of the one allowed difference explaining every diff line of a step, or None."""
    if not lines:
        return None
    for d in ALLOWED if allowed is None else allowed:
        if all(d.explains(before, action, line) for line in lines):
            return d.name
    return None


__all__ = ["ALLOWED", "UNOBSERVED", "AllowedDifference", "explain"]
