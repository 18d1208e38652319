"""`check --kraft-actions`: the KRaft controller's own actions as a bound (bounds.kraft_actions).

The reference's kraft profile keeps three of their properties and breaks `restart_moves_leadership`
the way Kafka 3.9 does (declared: fenced_leader_keeps_leadership), so `check` exits 0 with the
finding known; a planted bug breaking one of these properties is unexpected (exit 1).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, KNOWN, VIOLATED, check_model, expected_at
from kreassign.checker.config.bounds import Bounds, ConfigError, bounds_from_mapping, load_config
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.reassignment import packable
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.reference.kraft import CONTROLLER_ACTIONS, KraftProfile
from kreassign.reference.steps import Step
from kreassign.spec import findings as F
from kreassign.spec import messages as M

from kreassign.cli import main

SMALL = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, kraft_actions=CONTROLLER_ACTIONS, kafka_version="3.9.2")  # the release of the restart finding (3.9 only)
RESTART = next(f for f in F.FINDINGS if f.property == "restart_moves_leadership")


def test_the_bound_is_normalized_optional_in_json_and_checked():
    assert Bounds(kraft_actions=("restart", "controlled-shutdown")).kraft_actions == ("controlled-shutdown", "restart")
    assert "kraft_actions" not in Bounds().to_json()  # older traces and counts are unchanged
    assert list(Bounds(kraft_actions=("restart",)).to_json()["kraft_actions"]) == ["restart"]
    assert bounds_from_mapping({"kraft_actions": ["restart"]}) == Bounds(kraft_actions=("restart",))
    with pytest.raises(ConfigError, match=r"^bounds\.kraft_actions: unknown action\(s\) 'reboot'"):
        bounds_from_mapping({"kraft_actions": ["reboot"]})
    with pytest.raises(ConfigError, match=r"^bounds\.kraft_actions: expected a list of strings"):
        bounds_from_mapping({"kraft_actions": "restart"})


def test_toml_key(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text('[bounds]\nbrokers = 2\nkraft_actions = ["restart", "balance-leaders"]\n')
    assert load_config(str(path))[0].kraft_actions == ("restart", "balance-leaders")
    path.write_text('[bounds]\nkraft_actions = ["nope"]\n')
    with pytest.raises(ConfigError, match=r"b\.toml: bounds\.kraft_actions: unknown action"):
        load_config(str(path))


def test_other_profiles_refuse_the_bound():
    with pytest.raises(ConfigError, match="^kraft_actions: apply to the kraft profiles only, not 'zk'"):
        ReassignmentModel("zk", Bounds(kraft_actions=("restart",)))


def test_the_packed_engine_refuses_it():
    assert packable(ReassignmentModel("kraft", Bounds(kafka_version="3.9.2")))
    assert not packable(ReassignmentModel("kraft", replace(SMALL, kraft_actions=("restart",))))


def test_the_real_profile_keeps_three_properties_and_the_restart_finding_is_known():
    result = check_model("kraft", SMALL, minimize_counterexamples=False)
    assert result.unexpected == []
    for name in ("controlled_shutdown_moves_leadership", "balance_elects_preferred", "unclean_election_fills_leaderless"):
        assert result.properties[name].status == HOLDS, name
    v = result.properties["restart_moves_leadership"]
    assert v.status == KNOWN and v.findings["fenced_leader_keeps_leadership"].length == 1


def test_the_finding_is_expected_at_its_bounds_and_its_trace_replays():
    at = Bounds(**RESTART.at)
    assert expected_at(RESTART, at, "kraft") and expected_at(RESTART, replace(at, brokers=4, reassigns=2), "kraft")
    assert RESTART.occurs_in("kraft", "3.9.2") and not RESTART.occurs_in("kraft", "4.0.2")  # KAFKA-18106
    assert not expected_at(RESTART, replace(at, kraft_actions=()), "kraft")
    for profile in RESTART.profiles:
        trace = read_trace(RESTART.trace_file(profile))
        assert trace.bounds["kraft_actions"] == ["restart"] and replay(trace).reproduces


class BalanceDoesNothing(KraftProfile):
    """Broken on purpose: the periodic leader balancing elects nobody."""

    name = "balance-does-nothing"

    def balance_leaders(self, state):
        return Step(state, M.Ack())


class RestartTakesLeadership(KraftProfile):
    """Broken on purpose: a restarted broker becomes the leader of every partition it is a replica of
    (a new way to break restart_moves_leadership, which the finding's signature does not match)."""

    name = "restart-takes-leadership"

    def broker_restart(self, state, broker):
        step = super().broker_restart(state, broker)
        s = step.state
        for t, i, p in list(s.partitions()):
            if broker in p.replicas and p.leader != broker:
                s = s.with_partition(t, i, replace(p, leader=broker))
        return Step(s, step.response)


@pytest.mark.parametrize("prof,prop,steps", [
    # replicas [2,3,1] still led by 1 while 2, the preferred replica, is live and in the ISR
    (BalanceDoesNothing(kafka_version="3.9.2"), "balance_elects_preferred", ["Reassign(t-0 -> [2,3])", "BalanceLeaders()"]),
    (RestartTakesLeadership(kafka_version="3.9.2"), "restart_moves_leadership", ["BrokerRestart(2)"]),  # 2 took t-0 from 1
])
def test_a_planted_bug_is_unexpected(prof, prop, steps, tmp_path):
    result = check_model("kraft", SMALL, factory=lambda _p, b: ReassignmentModel(prof, b), out_dir=str(tmp_path))
    v = result.properties[prop]
    assert v.status == VIOLATED and prop in result.unexpected and v.length == len(steps)
    trace = read_trace(v.counterexample)
    assert [s["action_text"] for s in trace.steps] == steps
    assert trace.bounds["kraft_actions"] == list(CONTROLLER_ACTIONS)


def test_cli_exit_codes(tmp_path, capsys):
    flags = ["check", "--profile", "kraft", "--brokers", "3", "--reassigns", "1", "--cancels", "0",
             "--kafka-version", "3.9.2", "--out", str(tmp_path), "--no-liveness"]
    assert main(flags + ["--kraft-actions", "restart,balance-leaders"]) == 0
    assert "known kraft restart_moves_leadership" in capsys.readouterr().out
    assert main(flags + ["--kraft-actions", "restart,reboot"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "kraft_actions: unknown action(s) 'reboot'" in err[0]
    assert main(["check", "--profile", "zk", "--kraft-actions", "restart", "--out", str(tmp_path)]) == 2
    assert "kraft_actions: apply to the kraft profiles only" in capsys.readouterr().err
