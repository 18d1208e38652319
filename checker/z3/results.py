"""What a proof attempt yields: its verdict (proved / refuted / unknown) and the row
`kreassign prove` reports, shared by the reassignment and the quota proofs.

Each verdict is classified against spec/findings.py as `kreassign check` classifies a
violation (checker/check/run.py), with the same status names:

- ``holds``: proved, and the profile declares no finding that should occur where it was proved;
- ``known-violation``: refuted by a counterexample that a declared finding's signature matches
  (the finding is named: `ProofResult.findings`);
- ``violated``: refuted by a counterexample no declared finding's signature matches
  (unexpected, even when the property has findings: a new way of breaking it);
- ``finding-missing``: proved, although a finding is declared to occur within what was proved
  (the encoding or the declaration is wrong);
- ``not-checked``: unknown (not encoded, liveness, the solver gave up).

`violated` and `finding-missing` fail the run (exit 1), as in `check`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kreassign.spec.findings import Finding, findings_for, trace_file

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
#: a verdict's classification: the statuses of `kreassign check` (checker/check/run.py)
HOLDS, KNOWN, VIOLATED, FINDING_MISSING, NOT_CHECKED = (
    "holds", "known-violation", "violated", "finding-missing", "not-checked")
#: statuses that fail the run
FAILING = (VIOLATED, FINDING_MISSING)
#: the keys of a finding's `at` (its smallest bounds) a proof covers whatever their value: a proof
#: holds for every number of requests, cancels, failures and failovers, and every initial RF
PROOF_COVERS = frozenset({"brokers", "rf", "reassigns", "cancels", "failures", "failovers", "config"})
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
    #: a refutation's classification: the declared findings (spec/findings.py, at `kafka_version`) whose
    #: signature matches its counterexample (the violating state, edge, or every state of a lasso's loop)
    findings: tuple[str, ...] = ()

    def declared(self) -> tuple[Finding, ...]:
        """The findings `profile` declares for this property at the encoded release."""
        if self.property == INVARIANT:
            return ()
        return findings_for(self.profile, self.property, self.kafka_version)

    @property
    def known(self) -> str | None:
        """The curated trace of the finding this verdict is about: a refutation's first matching finding, or
        a proof's first missing one; None otherwise."""
        names = self.findings if self.verdict == REFUTED else self.missing
        declared = [f for f in self.declared() if f.name in names]
        return trace_file(self.profile, declared[0]) if declared else None

    @property
    def missing(self) -> list[str]:
        """A proof's findings that should have occurred within what it covers: declared at this release,
        at bounds the proof covers (at most its largest cluster, one partition, no optional capability)."""
        if self.verdict != PROVED:
            return []
        return [f.name for f in self.declared() if covers(self.brokers, f)]

    @property
    def status(self) -> str:
        """holds / known-violation / violated / finding-missing / not-checked (see the module doc)."""
        if self.verdict == PROVED:
            return FINDING_MISSING if self.missing else HOLDS
        if self.verdict == REFUTED:
            return KNOWN if self.findings else VIOLATED
        return NOT_CHECKED

    @property
    def encodes(self) -> str:
        """Beyond the profile's name, what was encoded ("Kafka 4.4.0 rules, ELR not encoded"), or ""."""
        return encodes(self.kafka_version)

    @property
    def unexpected(self) -> bool:
        """A refutation no declared finding explains, or a proof of a property with a finding declared
        within what was proved (spec/findings.py): the run fails."""
        return self.status in FAILING

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
            "status": self.status,
            "findings": list(self.findings),
            "missing_findings": self.missing,
            "known_violation": self.known,
            "note": self.note,
        }


def covers(brokers: tuple[int, int] | None, finding: Finding) -> bool:
    """Does a proof over clusters of `brokers` (min, max; None: all parameters, the quota proofs) cover the
    bounds `finding` is declared to occur at? Only bounds the encoding has: one partition, at most `max`
    brokers, none of the optional capabilities (throttles, replication, broker replicas, ...)."""
    at = finding.at
    if set(at) - PROOF_COVERS:
        return False
    if brokers is None:
        return True
    return at.get("brokers", 3) <= brokers[1]


def matching(profile: str, prop: str, release: str | None, violation: tuple, loop: list | None = None) -> tuple[str, ...]:
    """The findings `profile` declares for `prop` at `release` whose signature matches a counterexample:
    `violation` is the violating state (an `always` property) or edge (prev, label, next; a `transition`
    property), as `kreassign check` hands them to a signature; for a lasso, `loop` is the states of its
    loop instead, and a finding matches when its signature holds on every one (checker/check/run.py)."""
    out = []
    for f in findings_for(profile, prop, release):
        if loop is not None:
            ok = bool(loop) and all(f.signature(s) for s in loop)
        else:
            ok = bool(f.signature(*violation))
        if ok:
            out.append(f.name)
    return tuple(out)
