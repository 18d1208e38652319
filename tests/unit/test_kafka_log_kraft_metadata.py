"""KRaft metadata logs (`kafka-dump-log.sh --cluster-metadata-decoder`) checked strictly under kraft.

The records below are written by hand as Kafka 3.9's controller writes them, not derived from
the reference: field names from metadata/src/main/resources/common/metadata/*.json (3.9.0),
in the camelCase of the generated JSON converters, tagged fields left out when they hold their
default (JsonConverterGenerator: `generateNonDefaultValueCheck`), so a PartitionChangeRecord
carries only what it changes. Line layout from DumpLogSegments.scala (3.9.0): `printBatchLevel`
and the `| offset: … payload: …` record line. The records Kafka 3.9's own controller wrote
(tests/fixtures/kraft_metadata/, generated through the Kafka adapter) are checked by
`test_real_fixtures`: VALID, every step's state reached, tampered copies INVALID at the record.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kreassign.checker.kafka_logs.kraft_metadata_log import check_metadata, parse_metadata_log, partition_diff
from kreassign.checker.traces.validation import guess_format, validate_text
from kreassign.reference.kraft import KraftProfile
from kreassign.spec.codec import state_from_json

from kreassign.cli import main
from kreassign.errors import UsageError

TID = "Rb6qTLBzRg2xWqGmCw1tJg"
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "kraft_metadata"


def batch_header(base: int, count: int, position: int) -> str:
    # DumpLogSegments.printBatchLevel (magic 2), 3.9.0
    return (f"baseOffset: {base} lastOffset: {base + count - 1} count: {count} baseSequence: -1 lastSequence: -1 "
            f"producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: false "
            f"deleteHorizonMs: OptionalLong.empty position: {position} CreateTime: 1700000000000 size: 120 magic: 2 "
            f"compresscodec: none crc: 2876392129 isvalid: true")


def dump(batches: list[list[tuple[str, int, dict]]]) -> str:
    out = ["Dumping /var/lib/kafka/data/__cluster_metadata-0/00000000000000000000.log", "Log starting offset: 0"]
    offset = 0
    for k, recs in enumerate(batches):
        out.append(batch_header(offset, len(recs), 120 * k))
        for t, v, d in recs:
            payload = json.dumps({"type": t, "version": v, "data": d}, separators=(",", ":"))
            out.append(f"| offset: {offset} CreateTime: 1700000000000 keySize: -1 valueSize: {len(payload)} "
                       f"sequence: -1 headerKeys: [] payload: {payload}")
            offset += 1
    return "\n".join(out) + "\n"


def register(b: int) -> tuple[str, int, dict]:
    return ("REGISTER_BROKER_RECORD", 3, {
        "brokerId": b, "isMigratingZkBroker": False, "incarnationId": "x9tGq1ZJQ1u3Kc0o2c0v0A", "brokerEpoch": 10 + b,
        "endPoints": [{"name": "PLAINTEXT", "host": f"kafka-{b}", "port": 9092, "securityProtocol": 0}],
        "features": [{"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": 21}],
        "rack": None, "fenced": True, "inControlledShutdown": False, "logDirs": ["b2fTmwD7T9m3S9Yc9X8XqQ"]})


def unfence(b: int) -> tuple[str, int, dict]:
    return ("BROKER_REGISTRATION_CHANGE_RECORD", 2, {"brokerId": b, "brokerEpoch": 10 + b, "fenced": -1})


def fence(b: int) -> tuple[str, int, dict]:
    return ("BROKER_REGISTRATION_CHANGE_RECORD", 2, {"brokerId": b, "brokerEpoch": 10 + b, "fenced": 1})


def partition(p: int, replicas: list[int]) -> tuple[str, int, dict]:
    return ("PARTITION_RECORD", 1, {
        "partitionId": p, "topicId": TID, "replicas": replicas, "isr": replicas, "removingReplicas": [],
        "addingReplicas": [], "leader": replicas[0], "leaderEpoch": 0, "partitionEpoch": 0,
        "directories": ["b2fTmwD7T9m3S9Yc9X8XqQ"] * len(replicas)})


def change(p: int, **fields) -> tuple[str, int, dict]:
    return ("PARTITION_CHANGE_RECORD", 1, {"partitionId": p, "topicId": TID, **fields})


def scenario() -> list[list[tuple[str, int, dict]]]:
    """Brokers 1..6; orders-0 [1,2,3] reassigned to [4,5,6]; orders-1 [5,1,2]: broker 5 fenced, unfenced,
    back in the ISR, preferred election; then orders-1 reassigned to [1,2,3] and cancelled."""
    return [
        [("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21})],
        *[[register(b)] for b in range(1, 7)],
        *[[unfence(b)] for b in range(1, 7)],
        [("TOPIC_RECORD", 0, {"name": "orders", "topicId": TID}), partition(0, [1, 2, 3]), partition(1, [5, 1, 2])],
        # AlterPartitionReassignments orders-0 -> [4,5,6] (PartitionReassignmentReplicas: target ++ removing)
        [change(0, replicas=[4, 5, 6, 1, 2, 3], removingReplicas=[1, 2, 3], addingReplicas=[4, 5, 6])],
        [change(0, isr=[1, 2, 3, 4])],  # AlterPartition from leader 1
        [change(0, isr=[1, 2, 3, 4, 5])],
        # the last target replica joins: the reassignment completes, leader 1 is not a target replica
        [change(0, isr=[4, 5, 6], leader=4, replicas=[4, 5, 6], removingReplicas=[], addingReplicas=[])],
        # broker 5 misses its heartbeats: handleBrokerFenced writes the ISR changes, then the fence
        [change(0, isr=[4, 6]), change(1, isr=[1, 2], leader=1), fence(5)],
        [unfence(5)],  # no leaderless partition: nothing to elect
        [change(1, isr=[1, 2, 5])],  # AlterPartition from leader 1
        [change(1, leader=5)],  # preferred election (ElectLeaders or auto-rebalance)
        [change(1, replicas=[1, 2, 3, 5], removingReplicas=[5], addingReplicas=[3])],
        # cancel: replicas - adding; the replica set shrinks, so the leader epoch is bumped (leader unchanged)
        [change(1, leader=5, replicas=[1, 2, 5], removingReplicas=[], addingReplicas=[])],
    ]


def lines_of(text: str) -> list[str]:
    return text.splitlines()


def line_of(text: str, needle: str, nth: int = 0) -> int:
    hits = [i + 1 for i, line in enumerate(lines_of(text)) if needle in line]
    return hits[nth]


def test_the_dump_is_read_record_by_record():
    text = dump(scenario())
    log = parse_metadata_log(text)
    assert guess_format(text) == "kraft-metadata"
    assert log.shapes["PARTITION_CHANGE_RECORD"] == 10 and log.shapes["REGISTER_BROKER_RECORD"] == 6
    assert log.shapes["batch header"] == 24 and log.other == [1, 2]
    rec = next(r for r in log.records if r.type == "PARTITION_CHANGE_RECORD")
    assert rec.data["addingReplicas"] == [4, 5, 6] and rec.offset == 16


def test_a_reassignment_a_fence_an_election_and_a_cancel_validate_under_kraft():
    result = validate_text(dump(scenario()), "kraft-metadata", "kraft")
    assert result.verdict == "VALID", result.finding
    actions = [a for _, t, a in result.explanation if t == "PARTITION_CHANGE_RECORD"]
    assert actions[0] == "Reassign(orders-0 -> [4,5,6])"
    assert actions[3].startswith("AlterPartition(orders-0 leader=1 isr=[1,2,3,4,5,6]")
    assert actions[6] == "AlterPartition(orders-1 leader=1 isr=[1,2,5] leaderEpoch=1 partitionEpoch=1 v3)"
    assert actions[4:6] == ["part of BrokerFail(5)"] * 2
    assert actions[7] == "ElectLeaders(orders-1, PREFERRED)" and actions[9] == "Cancel(orders-1)"


def test_a_tampered_isr_is_invalid_at_that_record():
    batches = scenario()
    batches[15] = [change(0, isr=[1, 2, 3, 4, 7])]  # broker 7 is not a replica (nor registered)
    text = dump(batches)
    result = validate_text(text, "kraft-metadata", "kraft")
    assert result.verdict == "INVALID"
    assert result.finding.record.line == line_of(text, '"isr":[1,2,3,4,7]')
    assert any(d.startswith("isr:") for d in result.finding.differs)


def test_a_tampered_epoch_is_invalid_at_that_record():
    batches = scenario()
    # the cancel without its leader epoch bump (no "leader" field: the leader epoch stays)
    batches[-1] = [change(1, replicas=[1, 2, 5], removingReplicas=[], addingReplicas=[])]
    text = dump(batches)
    result = validate_text(text, "kraft-metadata", "kraft")
    assert result.verdict == "INVALID" and result.finding.record.line == len(lines_of(text))
    assert [d.split(":")[0] for d in result.finding.differs] == ["leader_epoch"]
    # and a bump the controller does not write (an ISR expansion keeps the leader epoch)
    batches = scenario()
    batches[15] = [change(0, isr=[1, 2, 3, 4], leader=1)]
    text = dump(batches)
    result = validate_text(text, "kraft-metadata", "kraft")
    assert result.verdict == "INVALID" and result.finding.record.line == line_of(text, '"isr":[1,2,3,4],"leader":1')


def test_a_fence_that_forgets_a_partition_is_invalid_at_the_fence_record():
    batches = scenario()
    batches[18] = [change(1, isr=[1, 2], leader=1), fence(5)]  # orders-0 keeps 5 in its ISR
    text = dump(batches)
    result = validate_text(text, "kraft-metadata", "kraft")
    assert result.verdict == "INVALID" and result.finding.record.line == line_of(text, '"fenced":1')
    assert result.finding.actions == "BrokerFail(5)"


def test_the_completion_rule_tells_kraft_from_kraft_37():
    # orders-0 [1,2,3] with 3 lagging, reassigned to [2,3,4]; 4 joins the ISR. Kafka 3.7 completes (the adding
    # replica 4 is in sync), Kafka 3.8+ waits for the retained replica 3 (KAFKA-15665).
    start = scenario()[:14] + [[change(0, isr=[1, 2])],
                               [change(0, replicas=[2, 3, 4, 1], removingReplicas=[1], addingReplicas=[4])]]
    completes = dump(start + [[change(0, isr=[2, 4], leader=2, replicas=[2, 3, 4], removingReplicas=[],
                                      addingReplicas=[])]])
    waits = dump(start + [[change(0, isr=[1, 2, 4])]])
    assert validate_text(completes, "kraft-metadata", "kraft-3.7").verdict == "VALID"
    assert validate_text(waits, "kraft-metadata", "kraft", kafka_version="3.9.2").verdict == "VALID"
    wrong = validate_text(completes, "kraft-metadata", "kraft", kafka_version="3.9.2")
    assert wrong.verdict == "INVALID" and wrong.finding.record.line == len(lines_of(completes))
    assert validate_text(waits, "kraft-metadata", "kraft-3.7").verdict == "INVALID"
    # Kafka 4.3 (KAFKA-19975) completes again once the adding replica is in sync, unless the RF shrinks
    assert validate_text(completes, "kraft-metadata", "kraft", kafka_version="4.3.1").verdict == "VALID"
    assert validate_text(waits, "kraft-metadata", "kraft", kafka_version="4.3.1").verdict == "INVALID"


def test_topic_deletion_and_partitions_created_before_the_log_are_inconclusive(tmp_path, capsys):
    batches = scenario()[:15] + [[("REMOVE_TOPIC_RECORD", 0, {"topicId": TID})]]
    result = validate_text(dump(batches), "kraft-metadata", "kraft")
    assert result.verdict == "INCONCLUSIVE" and "topic deletion (not in the model)" in result.not_understood
    # a log that starts after the topic's creation: its changes cannot be checked, never an error
    mid = [[register(b)] for b in range(1, 7)] + [[change(0, isr=[1, 2])]]
    f = tmp_path / "mid.log"
    f.write_text(dump(mid))
    assert main(["validate-trace", str(f)]) == 4
    assert "INCONCLUSIVE" in capsys.readouterr().out


def test_metadata_shell_states_are_checked_against_the_log():
    text = dump(scenario())
    final = ("PartitionRegistration(replicas=[1, 2, 5], directories=[AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA, "
             "AAAAAAAAAAAAAAAAAAAAAA], isr=[1, 2, 5], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], "
             "leader=5, leaderRecoveryState=RECOVERED, leaderEpoch={le}, partitionEpoch=5)")
    shell = ">> cat /topics/orders/1\n"
    assert validate_text(text + shell + final.format(le=3) + "\n", "kraft-metadata", "kraft").verdict == "VALID"
    wrong = text + shell + final.format(le=2) + "\n"
    result = validate_text(wrong, "kraft-metadata", "kraft")
    assert result.verdict == "INVALID" and result.finding.record.line == len(lines_of(wrong))
    assert result.finding.differs == ["leader_epoch: the log has 2, the model has 3"]
    # the 3.0 - 3.4 shell prints the PartitionRecord JSON, pretty-printed
    pretty = json.dumps({"partitionId": 0, "topicId": TID, "replicas": [4, 5, 6], "isr": [4, 6], "removingReplicas": [],
                         "addingReplicas": [], "leader": 4, "leaderRecoveryState": 0, "leaderEpoch": 1,
                         "partitionEpoch": 5}, indent=2)
    assert validate_text(text + pretty + "\n", "kraft-metadata", "kraft").verdict == "VALID"
    only = validate_text(pretty + "\n", "kraft-metadata", "kraft")  # alone: an initial state, nothing to contradict
    assert only.verdict == "VALID" and only.partitions == 1


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('payload: {"type":"TOPIC_RECORD"', 'payload: {"type":"TOPIC_RECORD",,', 1), "payload is not valid JSON"),
    (lambda t: t.replace('"isr":[1,2,3,4]', '"isr":"1,2,3,4"', 1), "data.isr: expected a list"),
])
def test_unreadable_records_are_usage_errors_naming_the_line(edit, message, tmp_path, capsys):
    text = edit(dump(scenario()))
    with pytest.raises(UsageError, match=message):
        validate_text(text, "kraft-metadata", "kraft")
    f = tmp_path / "bad.log"
    f.write_text(text)
    assert main(["validate-trace", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "line " in err


def test_cli_on_a_metadata_dump(tmp_path, capsys):
    f = tmp_path / "meta.log"
    f.write_text(dump(scenario()))
    assert main(["validate-trace", str(f)]) == 0
    out = capsys.readouterr().out
    assert "kraft-metadata, profile kraft" in out and "VALID" in out
    assert main(["validate-trace", str(f), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "VALID" and data["explained"]["PARTITION_CHANGE_RECORD"] == 10
    assert main(["validate-trace", str(f), "--profile", "zk"]) == 2  # a metadata log is checked under a kraft profile


def real_fixtures() -> list[Path]:
    if not REAL.is_dir():
        return []
    return sorted(p for p in REAL.iterdir() if p.is_file() and not p.name.lower().startswith("readme")
                  and "payload: {" in p.read_text(errors="replace"))


def _tamper(text: str, edit) -> tuple[str, int]:
    """The first PartitionChangeRecord `edit` changes, and its line."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if '"type":"PARTITION_CHANGE_RECORD"' in line:
            new = edit(line)
            if new != line:
                lines[n] = new
                return "\n".join(lines) + "\n", n + 1
    raise AssertionError("no record to tamper with")


def _add_to_isr(line: str) -> str:
    # a broker that is no replica joins the ISR (the field added if the record does not change the ISR)
    if '"isr":[' in line:
        return line.replace('"isr":[', '"isr":[999,', 1)
    return line.replace('"data":{', '"data":{"isr":[999],', 1)


def _flip_leader_epoch(line: str) -> str:
    # "leader" present = a leader-epoch bump: drop it, or add one with the same leader
    if re.search(r',"leader":-?\d+', line):
        return re.sub(r',"leader":-?\d+', "", line, count=1)
    return line


@pytest.mark.skipif(not real_fixtures(), reason="no generated fixtures in tests/fixtures/kraft_metadata/ yet")
@pytest.mark.parametrize("path", real_fixtures(), ids=lambda p: p.name)
def test_real_fixtures(path):
    """Kafka 3.9's own controller records (tests/fixtures/kraft_metadata/README.md): VALID under kraft, every
    step's state reached at its last offset (epochs included), and a tampered copy INVALID at that record."""
    text = path.read_text()
    result = check_metadata(parse_metadata_log(text), KraftProfile(kafka_version="3.9.2"), keep_states=True)
    assert result.verdict == "VALID", (result.finding, result.not_understood)
    side = json.loads(path.with_suffix(".json").read_text())
    checked = 0
    for step in side["steps"]:
        if step["offsets"] is None:
            continue
        expected = state_from_json(step["state"])
        got = result.states[step["offsets"][1]]
        for t, i, p in expected.partitions():
            q = got.partition(f"{t}/{i}", 0)
            assert q is not None and not partition_diff(q, p), (step["action"], partition_diff(q, p))
        assert {b.id: b.active for b in got.brokers} == {b.id: b.active for b in expected.brokers}
        checked += 1
    assert checked
    bad, line = _tamper(text, _add_to_isr)
    result = validate_text(bad, "kraft-metadata", "kraft")
    assert result.verdict == "INVALID" and result.finding.record.line == line
    if re.search(r'"type":"PARTITION_CHANGE_RECORD".*,"leader":-?\d+', text):
        bad, line = _tamper(text, _flip_leader_epoch)
        result = validate_text(bad, "kraft-metadata", "kraft")
        assert result.verdict == "INVALID" and result.finding.record.line == line
