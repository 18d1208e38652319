"""The violations each profile is known to have, each shown by a curated counterexample.

A known violation is a finding about Kafka (or a KIP's text), not a bug in kreassign:
the checker reports it as "known-violation" and does not fail the run. Each entry
names the replayable trace in counterexamples/ that shows it (replayed by the tests),
and docs/findings.md explains it. A violation not listed here fails `kreassign check`.
"""

from __future__ import annotations

KNOWN: dict[str, dict[str, str]] = {}


def known_violation(profile: str, prop: str) -> str | None:
    """The counterexample file declaring `prop` broken under `profile`, or None."""
    return KNOWN.get(profile, {}).get(prop)
