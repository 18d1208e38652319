"""The visited runs of a bucket (tasks.IntVisited, tasks.DigestVisited): membership is exact whether the
runs are searched one by one or merged first (tasks._merge_first decides by cost), including identities that
share a 64-bit half (ties, which the merged run orders by that half only)."""

from __future__ import annotations

import numpy as np
from kreassign.checker.spark import tasks as T


def _digest_runs(rng: np.random.Generator, sizes: list[int]) -> tuple[list[bytes], set[tuple[int, int]]]:
    runs, seen = [], set()
    shared = rng.integers(0, 2**63, size=4, dtype=np.uint64)  # a few hi halves shared across runs (ties)
    for n in sizes:
        hi = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        hi[: n // 4] = shared[rng.integers(0, 4, size=n // 4)]
        lo = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        pairs = sorted({(int(h), int(low)) for h, low in zip(hi, lo)} - seen)
        seen |= set(pairs)
        h = np.array([p[0] for p in pairs], dtype=np.uint64)
        low = np.array([p[1] for p in pairs], dtype=np.uint64)
        runs.append(T.join_digests(h, low))
    return runs, seen


def _probe(rng: np.random.Generator, seen: set[tuple[int, int]], n: int) -> tuple[np.ndarray, np.ndarray]:
    known = sorted(seen)
    picks = [known[i] for i in rng.integers(0, len(known), size=n // 2)]
    fresh = [(int(h), int(low)) for h, low in zip(rng.integers(0, 2**63, size=n // 2, dtype=np.uint64),
                                                  rng.integers(0, 2**63, size=n // 2, dtype=np.uint64))]
    sharing = [(picks[i][0], int(x)) for i, x in enumerate(rng.integers(0, 2**63, size=n // 4, dtype=np.uint64))]
    cands = sorted(set(picks + fresh + sharing))  # (the engine searches its candidates sorted)
    return (np.array([c[0] for c in cands], dtype=np.uint64), np.array([c[1] for c in cands], dtype=np.uint64))


def test_digest_membership_is_exact_searched_or_merged():
    rng = np.random.default_rng(7)
    runs, seen = _digest_runs(rng, [40, 900, 30, 2000, 5, 700])
    for n in (8, 6000):  # few candidates: a search per run; many: the runs merged first
        hi, lo = _probe(rng, seen, n)
        want = np.array([(int(h), int(low)) not in seen for h, low in zip(hi, lo)])
        visited = T.DigestVisited(runs)
        assert T._merge_first(visited.runs, [len(r[0]) for r in visited.runs], len(hi)) == (n > 8)
        assert np.array_equal(visited.unknown(hi, lo), want)
        assert (len(visited.runs) == 1) == (n > 8)
        assert np.array_equal(visited.unknown(hi, lo), want)  # (and again, on the merged run)
        assert 0 < want.sum() < len(want)


def test_digest_ties_are_scanned_broken_variant_misses_members():
    """The broken variant, checking only the first identity with the candidate's hi, calls visited states new."""
    rng = np.random.default_rng(11)
    runs, seen = _digest_runs(rng, [3000, 3000, 3000])
    hi, lo = _probe(rng, seen, 6000)
    want = np.array([(int(h), int(low)) not in seen for h, low in zip(hi, lo)])
    visited = T.DigestVisited(runs)
    assert np.array_equal(visited.unknown(hi, lo), want)
    rhi, rlo = visited.runs[0]
    left = np.minimum(np.searchsorted(rhi, hi), len(rhi) - 1)
    first_only = ~((rhi[left] == hi) & (rlo[left] == lo))
    assert not np.array_equal(first_only, want)


def test_int_membership_is_exact_searched_or_merged():
    rng = np.random.default_rng(3)
    runs, seen = [], set()
    for n in (50, 4000, 20, 3000):
        states = np.unique(rng.integers(0, 10**6, size=n))
        states = np.array(sorted(set(states.tolist()) - seen), dtype=np.int64)
        seen |= set(states.tolist())
        runs.append(states.tobytes())
    for n in (6, 8000):
        probe = np.sort(rng.integers(0, 10**6, size=n))
        want = np.array([s not in seen for s in probe.tolist()])
        visited = T.IntVisited(runs)
        assert np.array_equal(visited.unknown(probe), want)
        assert (len(visited.runs) == 1) == (n > 6)


def test_liveness_locate_is_exact_with_shared_high_halves():
    """liveness._locate / _unique (the backward fixpoint's runs, reverse targets, stuck states): each value's
    position in a sorted distinct run, or -1, against a dict oracle, on digests whose high halves are shared and
    on int64; `_unique` of a column full of duplicates is the sorted set. The broken variant, the first entry
    with the value's high half only (no scan), loses members."""
    from kreassign.checker.spark import liveness as SL

    rng = np.random.default_rng(5)
    runs, seen = _digest_runs(rng, [5000])
    hi, lo = T.split_digests(runs[0])
    run = SL._unique(SL._digest_column(np.concatenate([hi, hi[:999]]), np.concatenate([lo, lo[:999]])))
    assert len(run) == len(seen) and [tuple(x) for x in run.tolist()] == sorted(seen)
    where = {tuple(x): i for i, x in enumerate(run.tolist())}
    phi, plo = _probe(rng, seen, 8000)
    values = SL._digest_column(phi, plo)[rng.permutation(len(phi))]  # (values need not be sorted)
    want = np.array([where.get(tuple(x), -1) for x in values.tolist()])
    got = SL._locate(run, values)
    assert np.array_equal(got, want) and 0 < (want >= 0).sum() < len(want)
    at = np.minimum(np.searchsorted(run["hi"], values["hi"]), len(run) - 1)
    first_only = np.where((run["hi"][at] == values["hi"]) & (run["lo"][at] == values["lo"]), at, -1)
    assert not np.array_equal(first_only, want)

    ints = SL._unique(rng.integers(0, 5000, size=6000))
    probe = rng.integers(0, 10000, size=3000)
    index = {v: i for i, v in enumerate(ints.tolist())}
    assert np.array_equal(SL._locate(ints, probe), [index.get(v, -1) for v in probe.tolist()])


def _candidates(rng: np.random.Generator) -> tuple[list[tuple[bytes, ...]], dict[tuple[int, int], int]]:
    """Candidate records from several sources (byte flavour: digests, parent key << 16 | k, payloads), the same
    digest sent by several edges, many digests sharing a hi with others; and the oracle: digest -> least key."""
    shared = rng.integers(0, 2**63, size=3, dtype=np.uint64)
    pool_hi = rng.integers(0, 2**63, size=400, dtype=np.uint64)
    pool_hi[:150] = shared[rng.integers(0, 3, size=150)]
    pool_lo = rng.integers(0, 2**63, size=400, dtype=np.uint64)
    least: dict[tuple[int, int], int] = {}
    cands = []
    keys = rng.permutation(2**20)[:3000].astype(np.int64)  # distinct keys, any order
    for part in np.array_split(np.arange(3000), 6):
        pick = rng.integers(0, 400, size=len(part))
        hi, lo, best = pool_hi[pick], pool_lo[pick], keys[part]
        for h, low, b in zip(hi.tolist(), lo.tolist(), best.tolist()):
            least[(h, low)] = min(least.get((h, low), b), b)
        payloads = [f"{h}:{low}".encode() for h, low in zip(hi.tolist(), lo.tolist())]
        cands.append((T.join_digests(hi, lo), best.tobytes(), *T.payload_parts(payloads)))
    return cands + cands[:1], least  # (the first record twice: a key sent twice is still one state)


def _new_states(cands: list[tuple[bytes, ...]]) -> dict[tuple[int, int], tuple[int, bytes]]:
    prev_keys = np.arange(2**20 >> T.K_BITS, dtype=np.int64)  # parent ranks = parent keys: keys unchanged
    level = T.dedupe_bytes(cands, T.DigestVisited(), prev_keys)
    hi, lo = level.ident
    assert bool((hi[1:] >= hi[:-1]).all())  # sorted by hi: a visited run's order
    return {(h, low): (k, p) for h, low, k, p in zip(hi.tolist(), lo.tolist(), level.keys.tolist(), level.payloads)}


def test_dedupe_keeps_each_digest_once_with_its_least_key():
    """dedupe_bytes against a dict oracle: each distinct digest once, with its smallest key and its own payload,
    on digests whose high halves are shared (the sort by hi alone must fall back to (hi, lo) there)."""
    cands, least = _candidates(np.random.default_rng(5))
    got = _new_states(cands)
    assert set(got) == set(least)
    for (h, low), (key, payload) in got.items():
        assert key == least[(h, low)] and payload == f"{h}:{low}".encode()


def test_dedupe_broken_variant_sorting_by_hi_alone_is_caught(monkeypatch):
    """Without the fallback to (hi, lo), digests sharing a hi interleave and one state comes out several times."""
    cands, least = _candidates(np.random.default_rng(5))
    monkeypatch.setattr(T, "digest_order", lambda hi, lo: np.argsort(hi, kind="stable"))
    level = T.dedupe_bytes(cands, T.DigestVisited(), np.arange(2**20 >> T.K_BITS, dtype=np.int64))
    assert len(level) > len(least)
