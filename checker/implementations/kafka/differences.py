"""The one list of allowed differences between Kafka's KRaft controller and the reference.

Each entry of ALLOWED is a deliberate modelling abstraction — something the model leaves out
on purpose — never a loosening of the comparison: it recognises one situation (the state
before, the action, and each diff line it explains) and nothing else, and a step is excused
only when *one* entry explains *all* of its diff lines. Each entry names a minimal trace
under counterexamples/kafka/ whose last step shows it; tests/kafka/test_differences.py
replays every trace against Kafka and checks that this entry, and only it, explains it.

ALLOWED has one entry, the placement of the partitions CreatePartitions adds (a random choice in
Kafka); every other divergence the lockstep found was the reference's to fix (docs/kafka.md,
"Divergences found"). UNOBSERVED lists the abstractions that cannot show up as a diff, because
the model has no field for what Kafka keeps beyond it (the adapter does not read it back).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AllowedDifference:
    name: str
    description: str  # what Kafka does, what the model does, and why the model abstracts it
    trace: str  # a minimal trace (counterexamples/kafka/...) whose last step shows it
    explains: Callable[[Any, Any, str], bool]  # (state before, action, one diff line) -> explained?


_NEW_PARTITION_LINE = re.compile(
    r"^state\.topics\[(?P<t>\d+)\]\.partitions\[(?P<p>\d+)\]\.(?P<field>replicas|isr|leader): "
    r"reference (?P<ref>\[[\d,]*\]|-?\d+), implementation (?P<impl>\[[\d,]*\]|-?\d+)$")


def _placement(before: Any, action: Any, line: str) -> bool:
    """A CreatePartitions step, a partition the step created, and a replica list, ISR or leader that
    differ in *which* brokers only: as many replicas (the replication factor is compared in full), all
    registered; as many ISR members, all active; an active leader on both sides."""
    if type(action).__name__ != "CreatePartitions":
        return False
    m = _NEW_PARTITION_LINE.match(line)
    if m is None:
        return False
    topics = before.topics
    t = int(m["t"])
    if t >= len(topics) or topics[t].name != action.topic or int(m["p"]) < len(topics[t].partitions):
        return False  # only the new partitions' placement, never an existing partition's state
    ref, impl = json.loads(m["ref"]), json.loads(m["impl"])
    if m["field"] == "leader":
        return before.is_active(ref) and before.is_active(impl)
    if len(ref) != len(impl) or len(set(ref)) != len(ref) or len(set(impl)) != len(impl):
        return False
    ok = before.is_active if m["field"] == "isr" else before.is_registered
    return all(ok(b) for b in ref + impl)


#: the allowed differences, in one place (docs/kafka.md lists them with their traces)
ALLOWED: tuple[AllowedDifference, ...] = (
    AllowedDifference(
        "create_partitions_placement",
        ("Which brokers a new partition's replicas go to: Kafka's StripedReplicaPlacer starts at a random "
         "offset (a Random per controller), the reference places round-robin from the partition's index, "
         "unfenced brokers first on both sides (reference/topic_changes.py). The replication factor, the ISR's "
         "size and every existing partition are compared in full."),
        "counterexamples/kafka/kraft__create_partitions_placement.json",
        _placement,
    ),
)

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
