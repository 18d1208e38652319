"""The liveness verdicts of z3 tied to the explorer's (issue 27, item 4): at small N the ranking proof and
the explorer agree, and a bug planted in the reference — with its twin in the encoding, which the
differential test ties to it — turns both verdicts."""

from __future__ import annotations

import pytest

z3 = pytest.importorskip("z3")

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.explore.liveness import violation
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.z3 import liveness as LV
from kreassign.checker.z3.diff import differential
from kreassign.checker.z3.profiles import kraft_encoding, reference_model
from kreassign.checker.z3.prove import PROVED, REFUTED, prove_reassignment
from kreassign.reference.kraft import KraftProfile

CAN, IN_SYNC = LV.LIVENESS_PROPERTIES
RELEASE = "3.9.2"  # where both properties hold (docs/proofs.md)
BOUNDS = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)


def _completes_only_without_removals(r, i, adding, removing=()):
    """A planted bug: the 3.9 rule (every target replica in the ISR), but never while a replica is removed."""
    return set(r) <= set(i) and not removing


class NeverCompletesARemoval(KraftProfile):
    name = "mutated-never-completes-a-removal"

    def __init__(self):
        super().__init__(kafka_version=RELEASE, elr=False)
        self.completion_rule = _completes_only_without_removals


class NeverCompletesARemovalEncoding(kraft_encoding(RELEASE)):
    """The planted bug's twin (of _completes_only_without_removals)."""

    def completion_rule(self, r1, i1, ar, rr):
        return z3.And(super().completion_rule(r1, i1, ar, rr), rr == 0)


def explorer_verdicts(model) -> dict[str, bool]:
    graph = explore(model, keep_graph=True).graph
    props = {p.name: p for p in model.properties()}
    return {name: violation(graph, props[name]) is None for name in (CAN, IN_SYNC)}


def z3_verdicts(**kw) -> dict[str, str]:
    res = prove_reassignment("kraft", kafka_version=RELEASE, max_brokers=5, properties=[CAN, IN_SYNC],
                             out_dir=None, **kw)
    return {r.property: r.verdict for r in res if r.property in (CAN, IN_SYNC)}


def test_the_planted_bug_and_its_twin_agree_and_the_real_rule_does_not():
    mutant = NeverCompletesARemoval()
    assert differential(NeverCompletesARemovalEncoding(3), ReassignmentModel(mutant, BOUNDS)).ok
    assert not differential(NeverCompletesARemovalEncoding(3), reference_model("kraft", BOUNDS, RELEASE),
                            max_mismatches=1).ok


def test_z3_and_the_explorer_agree_on_the_real_rule_and_on_the_planted_bug():
    real = explorer_verdicts(reference_model("kraft", BOUNDS, RELEASE))
    assert real == {CAN: True, IN_SYNC: True}
    assert z3_verdicts() == {CAN: PROVED, IN_SYNC: PROVED}
    mutant = NeverCompletesARemoval()
    planted = explorer_verdicts(ReassignmentModel(mutant, BOUNDS))
    assert planted == {CAN: False, IN_SYNC: False}
    # refuted with a stuck state the planted model confirms (no completion reachable through environment edges)
    assert z3_verdicts(variant=(NeverCompletesARemovalEncoding, mutant)) == {CAN: REFUTED, IN_SYNC: REFUTED}
