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
    assert validate_lines(text).verdict in ("VALID", "INCONCLUSIVE")
