"""The controller and state-change logs of Kafka 3.9.2 in ZooKeeper mode, as a scenario run wrote them
(tests/fixtures/zk_real/3.9.2/, README there), through validate-trace's ZooKeeper log reader under zk: each is
VALID, and edited copies — a leader outside the ISR, a phase of onPartitionReassignment skipped — are INVALID at
the edited line. Also the merging of several brokers' logs into one scenario's lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kreassign.checker.kafka_logs.zk_controller_log import parse_log
from kreassign.checker.scenarios.zk_logs import divergences_of, merge, scenario_lines, validate_lines

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "zk_real" / "3.9.2"
NAMES = ("w431-10", "w431-11", "w431-14")


def lines_of(name: str) -> list[str]:
    return (FIXTURES / f"{name}.log").read_text().split("\n")


@pytest.mark.parametrize("name", NAMES)
def test_each_real_log_is_valid_under_zk(name):
    text = "\n".join(lines_of(name))
    result = validate_lines(text)
    assert result.verdict == "VALID", divergences_of(result, text)
    assert divergences_of(result, text) == [] and result.observations >= 10


def test_what_3_9_2_prints_is_read():
    parsed = parse_log("\n".join(lines_of("w431-11")))
    shapes = parsed.shapes
    # the controller's write of a leader's AlterPartition (DEBUG), the invalid NewReplica -> NewReplica of a
    # resumed reassignment's A2, and a removal logged for a partition whose ISR did not hold the replica
    assert shapes["ISR written for AlterPartition"] >= 2 and shapes["replica already in the state"] == 1
    assert any(o.what.endswith("(no write: not in the ISR)") for o in parsed.observations)
    assert not parsed.outside


def test_a_leader_outside_the_isr_is_rejected_at_its_line():
    lines = lines_of("w431-14")
    k = next(k for k, line in enumerate(lines) if "after removing replica" in line and "(Leader:1,ISR:1,2,4," in line)
    lines[k] = lines[k].replace("(Leader:1,ISR:1,2,4,", "(Leader:3,ISR:1,2,4,")
    text = "\n".join(lines)
    [d] = divergences_of(validate_lines(text), text)
    assert (d["kind"], d["verdict"], d["line"]) == ("controller_log", "INVALID", k + 1)
    assert "Leader:3" in d["text"] and any(x.startswith("leader:") for x in d["differs"])


def test_a_skipped_phase_is_rejected_at_its_line():
    lines = lines_of("w431-14")
    u = next(k for k, line in enumerate(lines) if "Successfully updated assignment" in line
             and "replicas=1,2,4,3, addingReplicas=4, removingReplicas=3" in line)
    b6 = next(k for k, line in enumerate(lines) if "Successfully updated assignment" in line
              and "replicas=1,2,4, addingReplicas=, " in line)
    moved = lines[:u + 1] + [lines[b6]] + lines[u + 1:b6] + lines[b6 + 1:]  # B6 written right after U
    text = "\n".join(moved)
    [d] = divergences_of(validate_lines(text), text)
    assert d["verdict"] == "INVALID" and d["line"] == u + 2


def test_merging_keeps_timestamp_order_and_continuation_lines_and_drops_other_topics():
    a = ("[2026-01-01 00:00:00,002] INFO [Controller id=1] New topics: [Set(t)], deleted topics: [HashSet()], x\n"
         "[2026-01-01 00:00:00,005] ERROR boom\njava.lang.IllegalStateException: x\n\tat y")
    b = ("[2026-01-01 00:00:00,001] INFO [Controller id=1] New topics: [Set(other)], deleted topics: [HashSet()], x\n"
         "[2026-01-01 00:00:00,003] INFO [Controller id=1 epoch=1] Changed partition other-0 state from A to B\n"
         "[2026-01-01 00:00:00,004] INFO [Controller id=1 epoch=1] Changed partition t-0 state from A to B")
    merged = merge([a, b])
    assert [re.match(r"\[[^]]*,(\d+)\]", e).group(1) for e in merged] == ["001", "002", "003", "004", "005"]
    assert merged[-1].endswith("\tat y")
    kept = scenario_lines(merged, "t")
    assert len(kept) == 3 and not any("other-0" in e for e in kept) and "New topics: [Set(t)]" in kept[0]


def test_the_last_isr_member_failing_is_valid():  # Kafka keeps it in the ISR with leader -1
    text = "\n".join(lines_of("w322-42"))
    assert validate_lines(text).verdict == "VALID"  # its failed offline election is now a checked no-op


# -- failed elections and refused transitions: no-op lines whose cause is checked (conformance smoke tier, 3.9.2) --

FAILED = ("conformance-2401", "conformance-2404", "conformance-2417")


@pytest.mark.parametrize("name", FAILED)
def test_failed_elections_and_refused_new_replicas_are_read_as_checked_no_ops(name):
    text = "\n".join(lines_of(name))
    result = validate_lines(text)
    assert result.verdict == "VALID", divergences_of(result, text)
    parsed = parse_log(text)
    assert not parsed.outside
    errors = [k + 1 for k, line in enumerate(text.split("\n")) if " ERROR [Controller id=" in line]
    assert errors and sorted(o.line for o in parsed.observations if "no write" in o.what and o.line in errors) == errors


def test_a_pause_of_the_controller_broker_is_valid_without_the_probe_topics_lines():
    text = "\n".join(lines_of("conformance-2419"))
    assert validate_lines(text).verdict == "VALID"


def test_each_failed_election_strategy_is_read():
    whats = {o.what for name in FAILED for o in parse_log("\n".join(lines_of(name))).observations}
    assert {"failed election (ControlledShutdownPartitionLeaderElectionStrategy, no write)",
            "failed election (OfflinePartitionLeaderElectionStrategy(false), no write)",
            "failed election (ReassignPartitionLeaderElectionStrategy, no write)",
            "OnlineReplica -> NewReplica refused in step A2 (no write)"} <= whats


def _moved_failure(strategy: str) -> tuple[str, int]:
    """conformance-2401 with a failed election copied to right after the partition's creation, where both replicas
    are live and in the ISR (the model elects a leader under every strategy)."""
    lines = lines_of("conformance-2401")
    first = next(k for k, line in enumerate(lines) if "to OnlinePartition with state" in line)
    err = next(k for k, line in enumerate(lines) if "from OfflinePartition to OnlinePartition" in line and "ERROR" in line)
    cause = lines[err + 1].replace("OfflinePartitionLeaderElectionStrategy(false)", strategy)
    return "\n".join(lines[:first + 1] + [lines[err], cause] + lines[first + 1:]), first + 2


@pytest.mark.parametrize("strategy,field", [("OfflinePartitionLeaderElectionStrategy(false)", "offline_electable"),
                                            ("ReassignPartitionLeaderElectionStrategy", "reassign_electable")])
def test_a_failed_election_where_the_model_elects_a_leader_is_rejected_at_its_line(strategy, field):
    text, line = _moved_failure(strategy)
    [d] = divergences_of(validate_lines(text), text)
    assert (d["verdict"], d["line"]) == ("INVALID", line) and any(x.startswith(f"{field}:") for x in d["differs"])


def test_a_controlled_shutdown_elects_another_live_in_sync_replica_in_the_model_view():
    from dataclasses import replace

    from kreassign.checker.config.bounds import Bounds
    from kreassign.checker.scenarios.mapping import make_model, settle
    from kreassign.checker.traces.validation import view

    model = make_model(Bounds(brokers=3, rf=2), "zk")
    state = settle(model, model.init_states()[0])[0]
    part = state.cluster.partition("t", 0)
    assert view(state.cluster, "t", 0)["shutdown_electable"] is True  # another live ISR member than the leader
    alone = state.cluster.with_partition("t", 0, replace(part, isr=(part.leader,)))
    assert view(alone, "t", 0)["shutdown_electable"] is False and view(alone, "t", 0)["offline_electable"] is True


def test_another_cause_of_a_failed_state_change_stays_outside():
    lines = lines_of("conformance-2401")
    err = next(k for k, line in enumerate(lines) if "from OfflinePartition to OnlinePartition" in line and "ERROR" in line)
    lines[err + 1] = "kafka.common.StateChangeFailedException: LeaderAndIsr information doesn't exist for partition " \
                     "conformance-2401-0 in OfflinePartition state"
    parsed = parse_log("\n".join(lines))
    assert parsed.outside == {"failed partition state change": [err + 1]}


def test_another_topics_deletion_is_not_a_scenario_line():
    entries = ["[2026-01-01 00:00:00,001] INFO [Controller id=1] New topics: [Set(t)], deleted topics: [HashSet()], x",
               ("[2026-01-01 00:00:00,002] INFO [Controller id=1] New topics: [HashSet()], deleted topics: "
                "[HashSet(kreassign-probe-t)], new partition replica assignment [HashMap()]"),
               ("[2026-01-01 00:00:00,003] INFO [Controller id=1] New topics: [HashSet()], deleted topics: "
                "[HashSet(t)], new partition replica assignment [HashMap()]"),
               ("[2026-01-01 00:00:00,004] INFO [Controller id=3] Starting topic deletion for topics kreassign-probe-t "
                "(kafka.controller.KafkaController)")]
    assert scenario_lines(entries, "t") == [entries[0], entries[2]]


def test_the_scenario_bounds_the_search_by_what_it_did():
    from dataclasses import replace as _with

    from kreassign.checker.scenarios.format import Step
    from kreassign.checker.scenarios.zk_logs import LIMITS, limits_for
    from kreassign.checker.scenarios.generate import random_walk
    from kreassign.checker.config.bounds import Bounds

    base = random_walk(Bounds(brokers=4, rf=3, reassigns=2, cancels=1, failures=1, failovers=1), 3, 1, mode="zk",
                       faults=("failover",))
    only_requests = _with(base, steps=(Step("reelect_controller"), Step("reassign", topic=base.topic, partition=0,
                                                                        target=(1, 2, 4))))
    lim = limits_for(only_requests)
    assert (lim.max_failures, lim.max_failovers, lim.max_requests) == (0, 1, 1)
    with_kill = _with(only_requests, steps=only_requests.steps + (Step("kill", broker=2),))
    lim = limits_for(with_kill)
    assert (lim.max_failures, lim.max_failovers) == (1, 3) and lim.max_unlogged == LIMITS.max_unlogged
    assert limits_for(_with(with_kill, steps=with_kill.steps * 5)) == _with(LIMITS, max_requests=LIMITS.max_requests)
