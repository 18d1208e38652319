"""What a proof attempt yields: its verdict (proved / refuted / unknown) and the row
`kreassign prove` reports, shared by the reassignment and the quota proofs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kreassign.spec.findings import known_violation

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
#: the row reporting a profile's strengthening (the inductive invariant every proof shares)
INVARIANT = "inductive_invariant"


@dataclass
class ProofResult:
    property: str
    profile: str
    brokers: tuple[int, int] | None  # the cluster sizes the verdict covers (None for the quota)
    verdict: str  # proved / refuted / unknown
    seconds: float
    counterexample: str | None = None  # trace file of a refutation
    note: str = ""
    lemmas: list[str] = field(default_factory=list)  # the strengthening a proof used

    @property
    def known(self) -> str | None:
        return known_violation(self.profile, self.property)

    @property
    def unexpected(self) -> bool:
        """A refutation of a property the profile promises, or a proof of one it declares findings for
        (spec/findings.py)."""
        if self.verdict == REFUTED:
            return self.known is None
        if self.verdict == PROVED:
            return self.known is not None
        return False

    def to_json(self) -> dict[str, Any]:
        return {
            "property": self.property,
            "profile": self.profile,
            "brokers": list(self.brokers) if self.brokers is not None else None,
            "verdict": self.verdict,
            "seconds": round(self.seconds, 3),
            "counterexample": self.counterexample,
            "known_violation": self.known,
            "note": self.note,
        }
