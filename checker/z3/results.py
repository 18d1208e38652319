"""What a proof attempt yields: its verdict (proved / refuted / unknown) and the row
`kreassign prove` reports, shared by the reassignment and the quota proofs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kreassign.spec.findings import known_violation

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
#: the row reporting a profile's strengthening (the inductive invariant every proof shares)
INVARIANT = "inductive_invariant"


def encodes(kafka_version: str | None) -> str:
    """What an encoding at `kafka_version` follows beyond its profile's name (`kreassign prove`'s output)."""
    return f"Kafka {kafka_version} rules, ELR not encoded" if kafka_version else ""


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
    #: the Kafka release whose rules were encoded (kraft; None for the other profiles): the findings that
    #: classify the verdict are that release's (spec/findings.py declares kraft's per release)
    kafka_version: str | None = None

    @property
    def known(self) -> str | None:
        return known_violation(self.profile, self.property, self.kafka_version)

    @property
    def encodes(self) -> str:
        """Beyond the profile's name, what was encoded ("Kafka 4.4.0 rules, ELR not encoded"), or ""."""
        return encodes(self.kafka_version)

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
            "kafka_version": self.kafka_version,
            "encodes": self.encodes,
            "brokers": list(self.brokers) if self.brokers is not None else None,
            "verdict": self.verdict,
            "seconds": round(self.seconds, 3),
            "counterexample": self.counterexample,
            "known_violation": self.known,
            "note": self.note,
        }
