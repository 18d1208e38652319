"""Liveness for every cluster size (checker/z3/liveness.py): ranking proofs and stuck-state refutations."""

from __future__ import annotations

import pytest

z3 = pytest.importorskip("z3")

from kreassign.checker.z3 import liveness as LV
from kreassign.checker.z3.encoding import subset
from kreassign.checker.z3.prove import prove_reassignment, refute_stuck
from kreassign.checker.z3.reassign import STEP, Kip455Encoding
from kreassign.checker.z3.results import PROVED, REFUTED

CAN, IN_SYNC = LV.LIVENESS_PROPERTIES


def _verdicts(profile, **kw):
    res = prove_reassignment(profile, max_brokers=6, properties=[CAN, IN_SYNC], out_dir=None, **kw)
    return {r.property: r for r in res if r.property in (CAN, IN_SYNC)}


def test_kip455_in_sync_proved_can_finish_refuted_as_declared():
    v = _verdicts("kip455")
    assert v[IN_SYNC].verdict == PROVED and v[IN_SYNC].brokers == (3, 6)
    assert v[CAN].verdict == REFUTED and v[CAN].findings == ("leaderless_for_good",)


def test_kraft_releases_differ_as_the_explorer_says():
    at_44 = _verdicts("kraft")
    assert at_44[CAN].verdict == REFUTED and at_44[CAN].findings == ("stale_adding_never_completes",)
    assert at_44[IN_SYNC].findings == ("stale_adding_never_completes",)
    at_39 = _verdicts("kraft", kafka_version="3.9.2")
    assert at_39[CAN].verdict == PROVED and at_39[IN_SYNC].verdict == PROVED


class _WaitsOnRemoved(Kip455Encoding):
    """A broken completion rule: the controller completes only once the removing replicas are in the ISR too."""

    def branches(self, s, a, tag):
        out = super().branches(s, a, tag)
        for b in out:
            if b.kind == STEP:
                b.guard = z3.And(b.guard, subset(s.RR, s.I))
        return out


def test_ranking_fails_when_completion_waits_on_removed_replicas():
    from kreassign.checker.z3.encoding import houdini

    for make, expect in ((Kip455Encoding, True), (_WaitsOnRemoved, False)):
        enc = make(5, epochs=False, min_brokers=3)
        h = houdini(enc, enc.candidates(), enc.KINDS, pure_bv=True)
        ranking = LV.RANKINGS[("kip455", IN_SYNC)]
        inv, _ = LV.strengthen(enc, h.inductive, ranking)
        assert LV.prove_ranking(enc, ranking, inv, in_sync=True).proved is expect


def test_stuck_witness_replays_and_is_stuck(tmp_path):
    from kreassign.checker.traces.format import read_trace
    from kreassign.checker.traces.replay import replay

    n, file, steps, (stuck,) = refute_stuck("kip236", CAN, out_dir=str(tmp_path))
    assert n == 3 and steps >= 1
    trace = read_trace(file)
    assert trace.property == CAN and replay(trace).reproduces
    assert any(p.leader == -1 for p in (q for _, _, q in stuck.cluster.partitions()))
