"""Every Kafka release of the matrix in lockstep with the reference (issue 22, docs/kafka.md).

Each release's own controller classes (resolved by Maven into the cache) run beside the reference at the
same release: zero mismatches and the same state counts, with ELR off and on wherever the release has it.
Planted differences in the reference's release rules are caught, so the comparison of the fields that
differ between releases (completion, ELR, last known leader) cannot pass vacuously.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.implementations.kafka import KafkaImplementation, KafkaOptions, make_spec
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.differential import MATCH_PROPERTY
from kreassign.checker.oracle.kafka_lockstep import (
    KafkaLockstepModel,
    LockstepStats,
    reference_profile,
)
from kreassign.reference.kraft_change import all_target_replicas_in_isr
from kreassign.spec import actions as A
from kreassign.spec import kafka_releases
from kreassign.spec import messages as M
from kreassign.spec.state import make_cluster
from lockstep_run import run_lockstep

from kreassign import cli

RELEASES = [r.version for r in kafka_releases.RELEASES]
#: (release, ELR on?) for every release, ELR on only where the release can enable it
MODES = [(r.version, elr) for r in kafka_releases.RELEASES for elr in (False, True)
         if not elr or kafka_releases.elr_possible(r.version, r.latest_production)]

SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, failovers=1, elections=("PREFERRED", "UNCLEAN"))
ACTIONS = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1,
                 kraft_actions=("controlled-shutdown", "restart", "balance-leaders", "elect-unclean"))
MIN_ISR_2 = Bounds(brokers=3, rf=3, reassigns=1, cancels=1, failures=2, min_insync=2)
DEFAULT = Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1)  # the default suite's kraft bounds


@pytest.fixture(scope="module", params=MODES, ids=[f"{v}-elr-{'on' if e else 'off'}" for v, e in MODES])
def release(request):
    version, elr = request.param
    impl = KafkaImplementation(KafkaOptions(kafka_version=version, elr=elr))
    yield version, elr, impl
    impl.close()


def _lockstep(version: str, elr: bool, impl, bounds: Bounds):
    return run_lockstep(make_spec(kafka_version=version, elr=elr), bounds, impl=impl, liveness=False)


def test_the_release_table_is_what_each_release_reports(release):
    version, elr, impl = release
    info = impl.version_info()
    row = kafka_releases.release(version)
    assert info["kafka_version"] == version and info["elr"] == elr
    assert tuple(info["metadata_versions"]) == row.metadata_versions
    assert info["latest_production_metadata_version"] == row.latest_production == impl.metadata_version
    assert info["elr_default"] == row.elr_default
    assert info["elr_supported"] == kafka_releases.elr_possible(version, row.latest_production)


@pytest.mark.parametrize("bounds", [SMALL, ACTIONS, MIN_ISR_2], ids=["small", "controller-actions", "min-isr-2"])
def test_every_release_is_in_lockstep_with_the_reference(release, bounds):
    version, elr, impl = release
    result, stats = _lockstep(version, elr, impl, bounds)
    assert result.complete and result.properties[MATCH_PROPERTY].status == HOLDS, (version, elr)
    assert stats.steps == result.transitions > 500 and stats.mismatches == 0
    alone = explore(ReassignmentModel(reference_profile(kafka_version=version, elr=elr), bounds), keep_graph=False)
    assert alone.states == result.states  # the same graph: Kafka's states are the reference's


@pytest.mark.parametrize("version", [RELEASES[0], RELEASES[-1]])
def test_the_oldest_and_newest_release_at_the_default_bounds(version):
    impl = KafkaImplementation(KafkaOptions(kafka_version=version))  # the release's own default ELR
    try:
        result, stats = _lockstep(version, impl.elr, impl, DEFAULT)
    finally:
        impl.close()
    assert stats.mismatches == 0 and stats.steps == result.transitions > 15_000


def test_the_check_command_names_the_release_and_runs_it(capsys):
    newest = RELEASES[-1]
    assert cli.main(["check", "--impl", "kafka", "--kafka-version", newest, "--brokers", "3", "--reassigns", "1",
                     "--no-liveness"]) == 0
    out = capsys.readouterr().out
    row = kafka_releases.release(newest)
    assert f"kraft at Kafka {newest}, metadata.version {row.latest_production}, ELR on — exit 0" in out


# -- the lockstep sees each release rule: planted differences are caught ------------------------------------


def _mismatches(version: str, elr: bool, profile, bounds: Bounds) -> int:
    impl = KafkaImplementation(KafkaOptions(kafka_version=version, elr=elr))
    stats = LockstepStats()
    try:
        model = KafkaLockstepModel(bounds, impl, impl.spec, stats)
        profile.controller_actions = bounds.kraft_actions
        model.profile = profile  # the planted reference, at the same release
        explore(model, keep_graph=False)
    finally:
        impl.close()
    return stats.mismatches


def test_a_reference_with_the_3_8_completion_rule_mismatches_4_3_and_later():
    planted = reference_profile(kafka_version=RELEASES[-1], elr=False)
    planted.completion_rule = all_target_replicas_in_isr  # KAFKA-15665's rule, which KAFKA-19975 replaced in 4.3
    assert _mismatches(RELEASES[-1], False, planted, SMALL) > 0
    assert _mismatches(RELEASES[-1], False, reference_profile(kafka_version=RELEASES[-1], elr=False), SMALL) == 0


def test_a_reference_with_4_0s_last_known_leader_rule_mismatches_4_1_and_later():
    newest = RELEASES[-1]
    planted = reference_profile(kafka_version=newest, elr=True)
    planted.elr_last_known_leader_rule = "4.0"
    planted.elr_last_known_leader_must_be_acceptable = False
    assert _mismatches(newest, True, planted, ACTIONS) > 0


def test_a_reference_without_elr_mismatches_a_release_with_elr():
    newest = RELEASES[-1]
    planted = reference_profile(kafka_version=newest, elr=True)
    planted.elr = False  # the builder without KIP-966: the last ISR member stays, no ELR
    assert _mismatches(newest, True, planted, SMALL) > 0


def test_restart_moves_leadership_from_4_0_and_the_3_9_finding_is_gone(capsys):
    bounds = ["--brokers", "2", "--reassigns", "0", "--cancels", "0", "--kraft-actions", "restart", "--no-liveness"]
    assert cli.main(["check", "--profile", "kraft", "--kafka-version", RELEASES[0], *bounds]) == 0
    assert "known (1 steps)" in capsys.readouterr().out  # fenced_leader_keeps_leadership, 3.9's
    assert cli.main(["check", "--profile", "kraft", "--kafka-version", "4.0.2", *bounds]) == 0
    out = capsys.readouterr().out
    assert "restart_moves_leadership" in out and "known (1 steps)" not in out


def test_allow_replication_factor_change_as_each_release_answers_it():
    s = make_cluster([1, 2, 3], {"t": [[1, 2]]})

    def request(target, allow):
        return A.AlterReassignments(M.AlterPartitionReassignmentsRequest(
            topics=(M.ReassignableTopic("t", (M.ReassignablePartition(0, target),)),),
            allow_replication_factor_change=allow))

    for version in ("4.0.2", "4.1.2"):
        impl = KafkaImplementation(KafkaOptions(kafka_version=version, elr=False))
        ref = reference_profile(kafka_version=version, elr=False)
        try:
            for target, allow in (((1, 2, 3), False), ((2, 3), False), ((1, 2, 3), True)):
                impl.reset("kraft", s)
                state, response = impl.apply(request(target, allow))
                step = ref.apply(s, request(target, allow))
                assert (state, response) == (step.state, step.response), (version, target, allow)
        finally:
            impl.close()
    new = reference_profile(kafka_version="4.1.2", elr=False).apply(s, request((1, 2, 3), False)).response
    assert new.partition_error("t", 0) == (M.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 2 to 3")
    old = reference_profile(kafka_version="4.0.2", elr=False).apply(s, request((1, 2, 3), False)).response
    assert old.error_code == M.UNSUPPORTED_VERSION


def test_findings_are_declared_per_release(capsys):
    # KAFKA-19975 (4.3) brought back 3.7's stuck reassignment after an override to the original
    bounds = ["--brokers", "3", "--reassigns", "2", "--cancels", "0"]
    assert cli.main(["check", "--profile", "kraft", "--kafka-version", "4.2.2", *bounds]) == 0
    out = capsys.readouterr().out
    assert "stale_adding_never_completes" not in out
    assert cli.main(["check", "--profile", "kraft", "--kafka-version", "4.3.1", *bounds]) == 0
    assert "kraft__reassignment_can_finish__stale_adding_never_completes.json" in capsys.readouterr().out


def test_a_finding_a_release_fixed_is_unexpected_if_it_comes_back(monkeypatch, capsys, tmp_path):
    # plant 3.9's restart rule into 4.4: the declared 3.9-only finding must not explain it there
    from kreassign.reference.kraft import KraftProfile

    original = KraftProfile.__init__

    def planted(self, *a, **k):
        original(self, *a, **k)
        self.restart_fences_replicas = False

    monkeypatch.setattr(KraftProfile, "__init__", planted)
    code = cli.main(["check", "--profile", "kraft", "--kafka-version", RELEASES[-1], "--elr", "off", "--brokers", "2",
                     "--reassigns", "0", "--cancels", "0", "--kraft-actions", "restart", "--no-liveness",
                     "--no-minimize", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "VIOLATED (1 steps)" in out and "restart_moves_leadership" in out


def test_bounds_record_the_release_so_a_trace_replays_under_it():
    model = ReassignmentModel("kraft", replace(SMALL, kafka_version="4.0.2", elr="on"))
    described = model.describe()
    assert (described["kafka_version"], described["elr"]) == ("4.0.2", "on")
    assert model.profile.kafka_version == "4.0.2" and model.profile.elr
    default = ReassignmentModel("kraft", SMALL).describe()
    assert (default["kafka_version"], default["elr"]) == (kafka_releases.NEWEST, "on")
    with pytest.raises(ValueError, match="ELR"):
        ReassignmentModel("kraft", replace(SMALL, kafka_version="3.9.2", elr="on"))
