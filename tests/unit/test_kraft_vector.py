"""The vector kernel (checker/packed/kraft_vector.py) against the reference and the scalar kernel.

`VectorKernel` is a third encoding of the kraft profiles' local step (numpy, many situations per
call) for the budget groups in `VECTOR_GROUPS`, so it gets its own differential test: every
situation a packed search tabulated in those groups is asked again of the vector kernel, and each
answer it gives must say the same (`same_answers`) as the reference's and the scalar kernel's.
Situations it declines (it cannot encode them, or their ending is not its to answer) must reach the
scalar kernel, which must agree too. Whole runs must not change with the vector kernel on or off,
it must stand aside where it cannot encode the brokers, and a vector kernel broken on purpose must
be caught by the differential comparison and by the spot checks a search runs (`CHECK_EVERY`).

The configurations and helpers are test_kraft_kernel.py's (imported: one list to extend): each kraft
one at the 3.8-4.2 completion rule (OLD) and at the 4.3+ one (NEW, ELR off), so each of the vector
kernel's three completion branches is compared with the reference, and breaking one is caught.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from kreassign.checker.packed import kernel_scope
from kreassign.checker.packed import kraft_kernel as K
from kreassign.checker.packed import kraft_vector as V
from kreassign.checker.packed.bfs import explore_packed
from kreassign.checker.packed.kernel_scope import kernel_refusal, vector_refusal
from kreassign.checker.packed.kraft_kernel import KernelMismatch, KraftKernel, same_answers
from kreassign.checker.packed.kraft_vector import VECTOR_GROUPS, VectorKernel
from kreassign.checker.packed.reassignment import PackedReassignment, packable
from kreassign.spec import findings as F
from kreassign.spec import reassign_properties as P
from test_kraft_kernel import AT_NEW, AT_OLD, CONFIG, CONFIGS, OLD, _model, _summary

#: test_kraft_kernel's differential list, and five brokers (three-bit slots, wider masks) with RF 3
B5 = {"brokers": 5, "rf": 3, "reassigns": 1, "cancels": 1, "failures": 2}
#: the kernel's configurations but those with ELR on (the vector kernel's numpy builder has none: it declines,
#: test_vector_kernel_stands_aside_with_elr), and two larger ones
ELR_CONFIGS = {n for n in CONFIG if "-elr-" in n}
DIFFERENTIAL = {**{n: c for n, c in CONFIG.items() if n not in ELR_CONFIGS},
                "kraft-b5-rf3-f2": ("kraft", {**B5, **AT_OLD}), "kraft44-b5-rf3-f2": ("kraft", {**B5, **AT_NEW})}
assert len(DIFFERENTIAL) == len(CONFIGS) - len(ELR_CONFIGS) + 2 and len(ELR_CONFIGS) == 3


def _explored(profile, mapping, plant=None):
    """A packed model explored to the end (no liveness); `plant(packed)` runs right after construction."""
    packed = PackedReassignment(_model(profile, mapping), workers=1)
    if plant is not None:
        plant(packed)
    result = explore_packed(packed, liveness=False)
    assert result.complete
    return packed


def _ask_vector(packed, group, keys):
    locs = np.array([k[0] for k in keys], dtype=np.int64)
    envs = np.array([k[1] for k in keys], dtype=np.int64)
    return packed.vector.tabulate(group, locs, envs)


def _differential(packed, keys_of=None):
    """Every situation of every vector group asked of the vector kernel, the scalar kernel and the
    reference. Returns ({group: (situations, answered by the vector kernel)}, mismatches), a mismatch
    being (who: "vector" / "scalar", group, local, env, its answer, the reference's)."""
    shares, bad = {}, []
    for group in VECTOR_GROUPS:
        keys = sorted(packed.groups[group].done) if keys_of is None else keys_of(group)
        if not keys:
            continue
        out = _ask_vector(packed, group, keys)
        assert len(out["done"]) == len(keys)
        shares[group] = (len(keys), int(np.count_nonzero(out["done"])))
        for k, (local, env) in enumerate(keys):
            ref = packed.reference_compute(group, local, env, cache=False)
            scalar = packed.kernel.compute(group, local, env)
            if not same_answers(packed, scalar, ref):
                bad.append(("scalar", group, local, env, scalar, ref))
            if out["done"][k]:
                mine = packed.vector.rows(group, out, k)
                if not same_answers(packed, mine, ref):
                    bad.append(("vector", group, local, env, mine, ref))
    return shares, bad


def _describe(packed, bad):
    who, group, local, env, mine, ref = bad[0]
    part, ghost = packed.locals[local]
    return (f"{len(bad)} mismatches; first: the {who} kernel, group {group}, {part}, {ghost}, brokers "
            f"{packed.envs[env]}\n{who}:    {mine}\nreference: {ref}")


def _vector_allowed(mapping):
    return mapping.get("brokers", 3) <= V.MAX_BROKERS  # bounds number the brokers 1..n


# -- 1. the differential comparison ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(DIFFERENTIAL))
def test_vector_answers_every_situation_like_the_reference_and_the_kernel(name):
    profile, mapping = DIFFERENTIAL[name]
    packed = _explored(profile, mapping)
    assert packed.kernel is not None, kernel_refusal(packed)
    assert _vector_allowed(mapping) and isinstance(packed.vector, VectorKernel), vector_refusal(packed.kernel)
    shares, bad = _differential(packed)
    assert not bad, _describe(packed, bad)
    # every vector group the bounds allow was asked, and the vector kernel answered (not declined) most
    assert set(shares) == set(VECTOR_GROUPS), shares
    share = {g: answered / n for g, (n, answered) in shares.items()}
    assert share[0] > 0.5, f"share answered by the vector kernel: {share}"
    assert all(s > 0 for s in share.values()), f"a vector group it never answers: {share}"


@pytest.mark.parametrize("name", ["kraft37-b4-rf2", "kraft44-b4-rf2"])
def test_the_vector_comparison_covers_every_kind_of_answer(name):
    """The answers compared are not trivial: every action kind of the vector groups, completions (the
    ghost goes idle on an ISR change), brokers changed, and edge / state bits that fail."""
    packed = _explored(*DIFFERENTIAL[name])
    kinds, ending, env_moved, edge_bits, inv_bits = set(), False, False, set(), set()
    for group in VECTOR_GROUPS:
        keys = sorted(packed.groups[group].done)
        out = _ask_vector(packed, group, keys)
        for k in np.flatnonzero(out["done"]).tolist():
            local, env = keys[k]
            rows, bits = packed.vector.rows(group, out, k)
            for _, code, new, env_after, ok in rows:
                kinds.add(type(packed.codes[code]).__name__)
                ending |= (packed.locals[local][1].original is not None and packed.locals[new][1] == K.IDLE
                           and group == 0)
                env_moved |= env_after != env
                edge_bits.add(ok)
            if bits is not None:
                inv_bits.add(bits[0])
    want = {0: {"LeaderExpandIsr", "LeaderShrinkIsr", "BrokerRecover"}, 1: {"Reassign"}, 2: {"Cancel"},
            3: {"BrokerFail"}}
    assert kinds >= set().union(*(want.get(g, set()) for g in VECTOR_GROUPS))
    assert ending and env_moved
    assert len(edge_bits) > 1 and len(inv_bits) > 1  # some property bit is off somewhere


def _declined_variants(packed, group):
    """Situations the vector kernel cannot answer, next to reachable ones: a reassignment in flight whose
    ghost is cancelled (a cancelled ending is the scalar kernel's), adding / removing listed out of
    order (not encodable as masks). Paired with the brokers its reachable original was asked with."""
    keys = set()
    for local, env in sorted(packed.groups[group].done):
        part, ghost = packed.locals[local]
        if ghost.original is None:
            continue
        variants = [(part, ghost._replace(requested=None, cancelled=True))]
        if len(part.adding) > 1:
            variants.append((replace(part, adding=part.adding[::-1]), ghost))
        if len(part.removing) > 1:
            variants.append((replace(part, removing=part.removing[::-1]), ghost))
        keys.update((packed.intern_local(p, g), env) for p, g in variants)
    return sorted(keys)


@pytest.mark.parametrize("name", ["kraft37-b4-rf2", "kraft44-b4-rf2"])
def test_declined_situations_go_to_the_scalar_kernel_which_agrees(name):
    """Reachable situations are all answered by the vector kernel in the configurations above, so its
    hand-back is checked on situations made for it: it declines them (done False), the scalar kernel
    answers them like the reference, and in a table (`tabulate_many`) each reaches exactly one of the two,
    every row checked against the reference."""
    packed = _explored(*DIFFERENTIAL[name])
    variants = {g: _declined_variants(packed, g) for g in VECTOR_GROUPS}
    shares, bad = _differential(packed, lambda g: variants[g])
    assert not bad, _describe(packed, bad)
    for group, (n, answered) in shares.items():
        assert 0 < n - answered, f"group {group}: nothing declined"
    packed.kernel.check_every = 1  # every row installed from here on is compared with the reference
    for group in VECTOR_GROUPS:
        scalar_before, checks_before = packed.kernel.answered, packed.kernel_checks
        packed.tabulate_many(group, variants[group])
        assert set(variants[group]) <= packed.groups[group].done
        n, answered = shares[group]
        assert packed.kernel.answered - scalar_before == n - answered
        assert packed.kernel_checks - checks_before == n


# -- 2. whole runs, vector kernel on and off --------------------------------------------------------


@pytest.mark.parametrize("name", ["kraft37-b4-rf2", "kraft-b4-rf3-failover", "kraft37-pre36-rf3-unclean",
                                  "kraft44-b4-rf2", "kraft44-b4-rf3-failover"])
def test_whole_runs_agree_with_the_vector_kernel_on_and_off(name):
    profile, mapping = DIFFERENTIAL[name]
    on = PackedReassignment(_model(profile, mapping), workers=1)
    assert on.vector is not None
    tabulate, answered = on.vector.tabulate, []

    def counting(group, locs, envs):
        out = tabulate(group, locs, envs)
        answered.append(int(np.count_nonzero(out["done"])))
        return out

    on.vector.tabulate = counting
    with_vector = _summary(explore_packed(on, liveness=True))
    off = PackedReassignment(_model(profile, mapping), workers=1)
    off.vector = None  # the scalar kernel answers every group
    without = _summary(explore_packed(off, liveness=True))
    assert with_vector == without
    assert sum(answered) > 0 and on.kernel.answered < off.kernel.answered  # the vector kernel did answer
    assert with_vector["violations"]  # the verdicts compared are not all empty


# -- 3. where the vector kernel stands aside --------------------------------------------------------


@pytest.mark.parametrize("at", [AT_OLD, AT_NEW], ids=["3.9", "4.4-elr-off"])
def test_vector_kernel_needs_at_most_six_brokers_and_the_scalar_kernel(at):
    six = PackedReassignment(_model("kraft", {"brokers": 6, "rf": 2, "failures": 1, **at}), workers=1)
    assert isinstance(six.vector, VectorKernel)  # the contrast, so the cases below can fail
    seven = _model("kraft", {"brokers": 7, "rf": 2, "failures": 1, **at})
    assert packable(seven)
    packed = PackedReassignment(seven, workers=1)
    assert packed.kernel is not None and packed.vector is None
    packed = PackedReassignment(_model("kraft", {"brokers": 3, "rf": 2, "failures": 1, **at}), workers=1, kernel=False)
    assert packed.kernel is None and packed.vector is None


def test_vector_kernel_stands_aside_with_elr():
    """Eligible leader replicas on (the newest release's default): the vector kernel's numpy builder has no ELR,
    so only the scalar kernel answers, whatever the brokers (tests/unit/test_kraft_kernel.py compares it)."""
    for brokers in (3, 6):
        packed = PackedReassignment(_model("kraft", {"brokers": brokers, "rf": 2, "failures": 1}), workers=1)
        assert packed.local_model.profile.elr
        assert kernel_refusal(packed) is None
        assert vector_refusal(packed.kernel).startswith("eligible leader replicas")
        assert isinstance(packed.kernel, KraftKernel) and packed.vector is None


def _without_array_form(monkeypatch, predicate):
    monkeypatch.setattr(predicate, "per_partition", predicate.per_partition._replace(masks=None))


@pytest.mark.parametrize("predicate", [P.leader_in_isr, P.epochs_monotone, F.cancel_keeps_merged_order],
                         ids=lambda p: p.__name__)
def test_vector_kernel_stands_aside_without_an_array_form(predicate, monkeypatch):
    """A property or signature with no array form (a state one, an edge one, an edge signature): no vector kernel,
    the scalar kernel still there; the contrast (with it) has both."""
    with_it = PackedReassignment(_model("kraft", {"failures": 1, **AT_OLD}), workers=1)
    assert with_it.kernel is not None and with_it.vector is not None
    _without_array_form(monkeypatch, predicate)
    packed = PackedReassignment(_model("kraft", {"failures": 1, **AT_OLD}), workers=1)
    assert packed.kernel is not None and packed.vector is None
    assert vector_refusal(packed.kernel).startswith(f"{predicate.__name__}_at has no array form")


def test_vector_kernel_answers_only_its_groups(monkeypatch):
    """KERNEL_SCOPE.vector_groups decides which budget groups the vector kernel answers: narrowed to 0-2, the
    broker failures (group 3) are the scalar kernel's, and the run does not change."""
    from dataclasses import replace as with_field

    profile, mapping = DIFFERENTIAL["kraft-b4-rf2"]
    full = PackedReassignment(_model(profile, mapping), workers=1)
    whole = _summary(explore_packed(full, liveness=False))
    monkeypatch.setattr(kernel_scope, "KERNEL_SCOPE", with_field(kernel_scope.KERNEL_SCOPE, vector_groups=(0, 1, 2)))
    narrow = PackedReassignment(_model(profile, mapping), workers=1)
    asked = []
    tabulate = narrow.vector.tabulate

    def recording(group, locs, envs):
        out = tabulate(group, locs, envs)
        asked.append((group, int(out["done"].sum())))
        return out

    narrow.vector.tabulate = recording
    assert _summary(explore_packed(narrow, liveness=False)) == whole
    assert {g for g, n in asked if n} == {0, 1, 2} and any(g == 3 for g, _ in asked)
    assert narrow.kernel.answered > full.kernel.answered


# -- 4. a broken vector kernel is caught ------------------------------------------------------------


def _minus_sorted(slots, drop):
    # ordered_minus as a set: the kept ids sorted, not in their order (kraft keeps ISR / replica order)
    keep = (slots > 0) & (((drop[:, None] >> slots) & 1) == 0)
    ids = np.sort(np.where(keep, slots, V.MAX_BROKERS + 1), axis=1)
    return np.where(ids > V.MAX_BROKERS, 0, ids)


def _rf_bound_strict(m):
    # replication_factor_bounded with < for <=: wrong whenever the replicas are exactly original ∪ target
    return ~(m.has_original & m.has_requested & m.reassigning) | (m.replica_count < m.count(m.original | m.requested))


def _always(m):
    return m.changed | ~m.changed


def _array_form(predicate, masks):
    """A stale array form: `masks` in place of the one spec/ writes next to `predicate`'s definition (the drift
    tests/unit/test_partition_properties.py guards against, planted)."""
    return lambda mp: mp.setattr(predicate, "per_partition", predicate.per_partition._replace(masks=masks))


def _flip(attr):
    def plant(packed):
        setattr(packed.vector, attr, not getattr(packed.vector, attr))
    return plant


def _completion_as(branch):
    """The vector kernel's completion rule replaced by another of its branches (kraft_change's twins)."""
    def plant(packed):
        assert packed.vector.completion != branch  # (a real change)
        packed.vector.completion = branch
    return plant


def _edge_field(name, value):
    """The vector kernel's EdgeView with one field replaced by `value` on every row."""
    def plant(packed):
        edge_bits = packed.vector._edge_bits

        def wrong(view):
            setattr(view, name, np.full(len(view.leader), value, dtype=np.int64))
            return edge_bits(view)

        packed.vector._edge_bits = wrong
    return plant


def _ranks_reversed(packed):
    # the Reassigns' ranks in reverse: each target's row at another target's position
    packed.vector.target_ranks = packed.vector.target_ranks[::-1].copy()


BROKEN_ON = "kraft37-b4-rf2"  # kraft-3.7: its completions can miss the target (the ending bug)

#: bug -> (the budget group it breaks, a patch before construction (monkeypatch), a patch of the constructed
#: packed model, the configuration it is planted in); each changes answers there (a bug that changed nothing
#: would fail the tests below)
BROKEN = {
    "minus-unordered": (0, lambda mp: mp.setattr(V, "_minus", _minus_sorted), None, BROKEN_ON),
    "election-flipped": (0, None, _flip("unclean"), BROKEN_ON),
    # on an ISR change that completes a reassignment: completion_reaches_target always holding
    "ending-predicate": (0, _array_form(P.completion_reaches_target, _always), None, BROKEN_ON),
    "state-property": (0, _array_form(P.replication_factor_bounded, _rf_bound_strict), None, BROKEN_ON),
    "reassign-ranks": (1, None, _ranks_reversed, BROKEN_ON),
    # cancel_restores_original_order compared as sets: blind to the merged order kraft leaves
    "cancel-order-as-set": (2, _array_form(P.cancel_restores_original_order,
                                           P.cancel_restores_original_replicas.per_partition.masks), None, BROKEN_ON),
    # the partition's part of an edge built wrong: every edge's epochs unmoved (epochs_monotone fails on changes)
    "edge-epochs-unmoved": (0, None, _edge_field("leader_epoch_step", 0), BROKEN_ON),
    # each completion branch in place of another, where the two differ on reachable situations:
    # 3.7's rule (adding replicas in the ISR) as 3.8-4.2's (every target replica in the ISR)
    "completion-3.7-as-3.8": (0, None, _completion_as("all-targets"), BROKEN_ON),
    # 3.8-4.2's rule as 4.3's (a retained target replica may lag unless the replication factor shrinks)
    "completion-3.8-as-4.3": (0, None, _completion_as("adding-all-targets-if-shrinking"), "kraft-b4-rf2"),
    # 4.3's rule without its shrinking clause (3.7's rule): a shrinking move completes with a target out of
    # the ISR
    "completion-4.3-as-3.7": (0, None, _completion_as("adding"), "kraft44-b4-rf2"),
    # 4.3's rule as 3.8-4.2's: a retained target out of the ISR holding a non-shrinking move back
    "completion-4.3-as-3.8": (0, None, _completion_as("all-targets"), "kraft44-b4-rf2"),
}


def _plant(bug, monkeypatch):
    group, before, after, config = BROKEN[bug]
    if group not in VECTOR_GROUPS:
        pytest.skip(f"budget group {group} is not the vector kernel's")
    if before is not None:
        before(monkeypatch)
    return after, DIFFERENTIAL[config]


@pytest.mark.parametrize("bug", list(BROKEN))
def test_a_broken_vector_kernel_fails_the_differential_comparison(bug, monkeypatch):
    after, config = _plant(bug, monkeypatch)

    def plant(packed):
        if after is not None:
            after(packed)
        packed.kernel.check_every = 1 << 62  # no spot checks: the differential comparison must find it

    packed = _explored(*config, plant=plant)
    _, bad = _differential(packed)
    assert bad and {who for who, *_ in bad} == {"vector"}


@pytest.mark.parametrize("bug", list(BROKEN))
def test_a_broken_vector_kernel_is_caught_by_the_spot_checks(bug, monkeypatch):
    after, config = _plant(bug, monkeypatch)
    monkeypatch.setattr(K, "CHECK_EVERY", 1)
    packed = PackedReassignment(_model(*config), workers=1)
    if after is not None:
        after(packed)
    assert packed.vector is not None and packed.kernel.check_every == 1
    with pytest.raises(KernelMismatch):
        explore_packed(packed, liveness=False)


def test_a_vector_mismatch_names_the_array_form_that_drifted(monkeypatch):
    """A stale array form is caught by the spot checks, and the one-line message names it with its file, and the way
    to check without the kernels."""
    _array_form(P.completion_reaches_target, _always)(monkeypatch)
    monkeypatch.setattr(K, "CHECK_EVERY", 1)
    packed = PackedReassignment(_model(*DIFFERENTIAL[BROKEN_ON]), workers=1)
    with pytest.raises(KernelMismatch) as caught:
        explore_packed(packed, liveness=False)
    message = str(caught.value)
    assert message.startswith("the vector kraft kernel and the reference disagree on ")
    assert "(the bits of completion_reaches_target differ)" in message
    assert "the array form of completion_reaches_target (spec/reassign_properties.py)" in message
    assert "`kreassign check --no-kernel`" in message and "\n" not in message


@pytest.mark.parametrize("config", sorted({c for *_, c in BROKEN.values()}))
def test_the_spot_checks_pass_a_correct_vector_kernel(config, monkeypatch):
    """The contrast to the above: with every row checked, the real vector kernel runs to the end (in every
    configuration a bug is planted in)."""
    monkeypatch.setattr(K, "CHECK_EVERY", 1)
    packed = PackedReassignment(_model(*DIFFERENTIAL[config]), workers=1)
    assert packed.vector is not None
    result = explore_packed(packed, liveness=False)
    assert result.complete
    assert packed.kernel_checks == packed.table_rows > 0
    # rows of the vector groups came from the vector kernel (the scalar kernel answered the rest)
    assert packed.kernel.answered < packed.table_rows


# -- 5. what the user sees: who answered, in check --json ----------------------------------------------


@pytest.mark.parametrize("release", [["--kafka-version", OLD], ["--kafka-version", "4.4.0", "--elr", "off"]],
                         ids=["3.9", "4.4-elr-off"])
def test_check_json_says_who_tabulated(release, capsys, tmp_path):
    """`check --json` reports the answers by who gave them and the spot checks: the kernels for kraft,
    the reference alone with --no-kernel (same counts)."""
    import json

    from test_exit_codes import run

    argv = ["check", "--profile", "kraft", "--brokers", "4", "--rf", "2", "--reassigns", "2", "--cancels", "1",
            "--failures", "1", *release, "--no-liveness", "--json", "--out", str(tmp_path)]
    code, out, _ = run(argv, capsys)
    assert code == 0
    fast = json.loads(out)["results"][0]
    code, out, _ = run([*argv, "--no-kernel"], capsys)
    assert code == 0
    slow = json.loads(out)["results"][0]
    assert fast["memory"]["answers"]["vector"] > 0 and fast["memory"]["answers"]["reference"] == 0
    assert slow["memory"]["answers"] == {"reference": sum(fast["memory"]["answers"].values()), "kernel": 0, "vector": 0}
    assert slow["memory"]["spot_checks"] == 0 < fast["memory"]["spot_checks"]
    assert (slow["states"], slow["transitions"], slow["depth"]) == (fast["states"], fast["transitions"], fast["depth"])


def test_check_json_says_the_scalar_kernel_tabulated_with_elr(capsys, tmp_path):
    """The newest release's default (ELR on): the vector kernel declines, the scalar kernel answers (spot-checked
    against the reference); the run says which release and ELR setting it followed."""
    import json

    from test_exit_codes import run

    argv = ["check", "--profile", "kraft", "--brokers", "4", "--rf", "2", "--reassigns", "2",
            "--cancels", "1", "--failures", "1", "--no-liveness", "--json", "--out", str(tmp_path)]
    code, out, _ = run(argv, capsys)
    assert code == 0
    result = json.loads(out)["results"][0]
    assert (result["bounds"]["kafka_version"], result["bounds"]["elr"]) == ("4.4.0", "on")
    answers = result["memory"]["answers"]
    assert answers["vector"] == 0 < answers["kernel"]
