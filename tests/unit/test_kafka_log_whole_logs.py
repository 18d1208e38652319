"""Whole ZooKeeper-era logs: many partitions interleaved, creations, failures, elections, failovers.

`bench/validate_log.py` writes such a log from a run of the zk reference in Kafka's line shapes
(the bench measures 100,000 lines; here a few thousand). `zk_create_and_elect.log` is written by
hand: a topic created, then broker 2 fails (an election, an ISR removal).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from kreassign.checker.traces.validation import report, validate_text

from kreassign.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from validate_log import generate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def whole_log() -> str:
    return generate(target_lines=2500, topics=3)


def test_a_whole_log_of_interleaved_partitions_and_failovers_validates(whole_log):
    result = validate_text(whole_log, "kafka-log", "zk")
    assert result.verdict == "VALID", report(result, "generated")
    assert len({(o.topic, o.partition) for o in result.explanation and [e[0] for e in result.explanation]
                if o.topic is not None}) == 24
    epochs = {int(m) for m in re.findall(r"\[Controller id=\d+ epoch=(\d+)\]", whole_log)}
    assert len(epochs) >= 2  # at least one controller failover
    failovers = [a for _, acts, _, _ in result.explanation for a in acts if type(a).__name__ == "ControllerFailover"]
    assert len(failovers) == len(epochs) - 1
    assert result.ignored and result.not_understood == {}


def test_a_changed_epoch_in_a_whole_log_is_invalid_at_that_line(whole_log):
    lines = whole_log.splitlines()
    n = next(i for i, line in enumerate(lines) if "from OfflinePartition to OnlinePartition with state" in line)
    lines[n] = re.sub(r"leaderEpoch=(\d+)", lambda m: f"leaderEpoch={int(m.group(1)) + 1}", lines[n])
    result = validate_text("\n".join(lines) + "\n", "kafka-log", "zk")
    assert result.verdict == "INVALID" and result.failed.line == n + 1
    assert [m.field for m in result.closest.mismatches] == ["leader_epoch"]


def test_a_log_that_creates_topics_and_elects_leaders_is_valid(capsys):
    path = FIXTURES / "zk_create_and_elect.log"
    assert main(["validate-trace", str(path)]) == 0
    out = capsys.readouterr().out
    assert "VALID" in out and "1 ignored (other loggers)" in out
    result = validate_text(path.read_text(), "kafka-log", "zk")
    # the creation lines are the initial state; the election is broker 2's failure
    assert [(o.line, [type(a).__name__ for a in acts]) for o, acts, _, _ in result.explanation] == [
        (6, []), (7, []), (8, []), (9, []), (14, ["BrokerFail"]), (15, [])]


def test_a_topic_deletion_makes_it_inconclusive_not_invalid(capsys, tmp_path):
    text = (FIXTURES / "zk_create_and_elect.log").read_text() + (
        "[2023-03-01 10:00:02,000] INFO [Controller id=1] New topics: [Set()], deleted topics: [HashSet(orders)], new "
        "partition replica assignment [Map()] (kafka.controller.KafkaController)\n"
        "[2023-03-01 10:00:02,001] INFO [Controller id=1 epoch=1] Changed partition orders-0 state from "
        "OfflinePartition to NonExistentPartition (state.change.logger)\n")
    f = tmp_path / "deleted.log"
    f.write_text(text)
    assert main(["validate-trace", str(f)]) == 4
    out = capsys.readouterr().out
    assert "INCONCLUSIVE" in out and "not understood: topic deletion: 1 line(s), first at line 16" in out
    assert "not understood: partition deleted: 1 line(s), first at line 17" in out


def test_a_log_starting_mid_life_takes_its_first_lines_as_the_initial_state():
    # no creation, no earlier line: the first state logged for each partition is where the run starts
    log = (
        "[Controller id=3 epoch=7] Changed partition t-0 from OnlinePartition to OnlinePartition with state "
        "LeaderAndIsr(leader=2, leaderEpoch=41, isr=List(2, 3, 1), zkVersion=77)\n"
        "[Controller id=3 epoch=7] Changed partition u-1 from OfflinePartition to OnlinePartition with state "
        "LeaderAndIsr(leader=3, leaderEpoch=9, isr=List(3), zkVersion=12)\n"
        "[Partition t-0 broker=2] ISR updated to 2,3 and version updated to [78]\n")
    result = validate_text(log, "kafka-log", "zk")
    assert result.verdict == "VALID", report(result, "mid-life")
    assert result.initial.partition("t", 0).leader_epoch == 41 and result.initial.zk.epoch == 7
    # ... but what follows must still be legal: the ISR cannot lose the leader
    bad = log.replace("ISR updated to 2,3 and", "ISR updated to 3,1 and")
    assert validate_text(bad, "kafka-log", "zk").failed.line == 3
