"""The controller's own actions (--kraft-actions): in the reference, in lockstep with Kafka, with their properties."""

from __future__ import annotations

from dataclasses import replace

from kreassign.checker.check.run import HOLDS, KNOWN, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.oracle.differential import MATCH_PROPERTY
from kreassign.checker.oracle.kafka_lockstep import kafka_factory, reference_profile, replay_against_kafka
from kreassign.checker.traces.format import read_trace
from kreassign.reference.kraft import CONTROLLER_ACTIONS
from kreassign.spec import actions as A
from kreassign.spec.state import Broker, make_cluster

from kreassign import cli

K39 = "kafka[version=3.9.2]"  # the release these tests pin (its counts and findings)

FINDING = "counterexamples/kraft__restart_moves_leadership__fenced_leader_keeps_leadership.json"  # spec/findings.py
ALL = CONTROLLER_ACTIONS


def test_every_controller_action_in_lockstep_with_kafka(kafka):
    bounds = Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, unclean=True)
    factory = kafka_factory(K39, ALL, impl=kafka)
    try:
        result = check_model("kraft", bounds, factory=factory, out_dir=None, minimize_counterexamples=False)
    finally:
        factory.close()
    assert result.transitions > 5000 and factory.stats.mismatches == 0
    assert result.properties[MATCH_PROPERTY].status == HOLDS
    for name in ("controlled_shutdown_moves_leadership", "balance_elects_preferred", "unclean_election_fills_leaderless"):
        assert result.properties[name].status == HOLDS, name
    # Kafka's finding: a broker that re-registers before it was fenced keeps leading while fenced
    # (declared in spec/findings.py: fenced_leader_keeps_leadership)
    assert result.properties["restart_moves_leadership"].status == KNOWN and result.unexpected == []


def test_the_restart_finding_replays_on_kafka(kafka, capsys):
    trace = read_trace(FINDING)
    assert trace.steps[-1]["action"]["type"] == "BrokerRestart"
    assert replay_against_kafka(trace, K39, impl=kafka).reproduces
    assert cli.main(["replay", FINDING, "--impl", "kafka", "--kafka-version", "3.9.2"]) == 0
    assert "reproduces" in capsys.readouterr().out


def test_default_enumeration_is_unchanged_without_the_flag():
    from kreassign.reference import ActionSpace

    s = make_cluster([1, 2, 3], {"t": [[1, 2]]})
    s = s.with_partition("t", 0, replace(s.partition("t", 0), leader=2))

    space = ActionSpace(targets=(), reassign=False, cancel=False, isr_changes=False, failures=True, failover=True,
                        elections=(), replication=False, log_length=0, znode=False)
    plain = reference_profile("3.9-IV0", kafka_version="3.9.2").enabled_actions(s, space)
    extended = reference_profile("3.9-IV0", ALL, kafka_version="3.9.2").enabled_actions(s, space)
    assert not any(isinstance(a, A.KRAFT_CONTROLLER_ACTIONS) for a in plain)
    assert extended[-1] == A.ControllerFailover() and A.BalanceLeaders() in extended  # t-0 is led by 2, not 1
    assert A.BrokerControlledShutdown(1) in extended and A.BrokerRestart(3) in extended


def test_reference_semantics_of_the_controller_actions():
    kraft = reference_profile(kafka_version="3.9.2")
    s = make_cluster([1, 2, 3], {"t": [[1, 2, 3]]})
    down = kraft.apply(s, A.BrokerControlledShutdown(1)).state
    p = down.partition("t", 0)
    assert (p.leader, p.isr, down.is_active(1)) == (2, (2, 3), False)
    restarted = kraft.apply(s, A.BrokerRestart(1)).state
    assert restarted.partition("t", 0) == s.partition("t", 0) and not restarted.is_active(1)
    # from 4.0 (KAFKA-18106) a re-registration is handled as a fencing: leadership moves, the broker leaves the ISR
    for version in ("4.0.2", "4.4.0"):
        p = reference_profile(kafka_version=version).apply(s, A.BrokerRestart(1)).state.partition("t", 0)
        assert (p.leader, p.isr) == (2, (2, 3)), version
    moved = s.with_partition("t", 0, replace(s.partition("t", 0), leader=2))
    assert kraft.apply(moved, A.BalanceLeaders()).state.partition("t", 0).leader == 1
    u = make_cluster([1, 2], {"t": [[1, 2]]}, unclean=["t"]).with_broker(Broker(1, active=False))
    u = u.with_partition("t", 0, replace(u.partition("t", 0), leader=-1, isr=(1,)))
    p = kraft.apply(u, A.ElectUncleanLeaders()).state.partition("t", 0)
    assert (p.leader, p.isr, p.leader_epoch) == (2, (2,), 1)
