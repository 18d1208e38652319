"""Real KRaft metadata logs (tests/fixtures/kraft_metadata_real/: Kafka 3.9.2, 4.0.2 and 4.4.0 clusters running
scenarios drawn from the model, dumped by each release's own dump-log tool) read by validate-trace: each is
VALID, each scenario's topic agrees with the scenario (validate_metadata_log: no divergence), and copies with one
record edited or deleted are rejected at that record (issue 24, items 4 and 6)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kreassign.checker.scenarios.format import read_scenario
from kreassign.checker.scenarios.metadata_log import check_metadata_log
from kreassign.checker.scenarios.metadata_log import validate_metadata_log as validate_records
from kreassign.checker.scenarios.run import RunResult
from kreassign.checker.traces.validation import validate_text

from kreassign.cli import main

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "kraft_metadata_real"
VERSIONS = ("3.9.2", "4.0.2", "4.4.0")
FIXTURES = sorted((v, p.name.removesuffix(".dump.txt")) for v in VERSIONS for p in (ROOT / v).glob("*.dump.txt"))


def load(version: str, name: str):
    return (ROOT / version / f"{name}.dump.txt").read_text(encoding="utf-8"), \
        read_scenario(str(ROOT / version / f"{name}.scenario.json"))


def validate_metadata_log(text: str, s) -> list[dict]:
    """validate_metadata_log for a run that did every step of `s` (as the fixtures' runs did)."""
    done = RunResult(s.kafka_version, s.topic, s.seed, steps=[{"index": k} for k in range(len(s.steps))])
    return validate_records(text, s, done)


def payload(line: str) -> dict:
    return json.loads(line.split(" payload: ", 1)[1])


def topic_id(text: str, topic: str) -> str:
    for line in text.splitlines():
        if '"TOPIC_RECORD"' in line and payload(line)["data"]["name"] == topic:
            return payload(line)["data"]["topicId"]
    raise AssertionError(f"no TopicRecord of {topic}")


def changes(text: str, topic: str) -> list[tuple[int, dict]]:
    """(line number, data) of the topic's PartitionChangeRecords, in order."""
    tid = topic_id(text, topic)
    return [(n, payload(line)["data"]) for n, line in enumerate(text.splitlines(), start=1)
            if '"PARTITION_CHANGE_RECORD"' in line and payload(line)["data"]["topicId"] == tid]


def edited(text: str, n: int, data: dict | None) -> str:
    """`text` with line `n`'s payload data replaced (None: the line deleted)."""
    lines = text.splitlines()
    if data is None:
        del lines[n - 1]
    else:
        head, body = lines[n - 1].split(" payload: ", 1)
        p = json.loads(body)
        p["data"] = data
        lines[n - 1] = f"{head} payload: {json.dumps(p, separators=(',', ':'))}"
    return "\n".join(lines) + "\n"


def test_the_fixtures_are_there():
    assert {v for v, _ in FIXTURES} == set(VERSIONS)
    assert len(FIXTURES) >= 3 * len(VERSIONS)
    for v, name in FIXTURES:
        assert (ROOT / v / f"{name}.dump.txt").stat().st_size < 200_000
    assert all(f"`{v}/" in (ROOT / "README.md").read_text() for v in VERSIONS)


@pytest.mark.parametrize(("version", "name"), FIXTURES)
def test_real_dump_is_valid_and_agrees_with_its_scenario(version, name):
    text, s = load(version, name)
    assert s.kafka_version == version
    whole = validate_text(text, "kraft-metadata", kafka_version=version)
    assert whole.verdict == "VALID", (whole.finding, whole.not_understood)
    assert whole.explained["PARTITION_CHANGE_RECORD"] >= 2
    mine = check_metadata_log(text, s)
    assert mine.verdict == "VALID" and mine.topics == (s.topic,)
    assert validate_metadata_log(text, s) == []
    # the records the scenario's steps wrote are explained by the model's actions of those steps
    actions = " ".join(a for _line, _t, a in mine.explanation)
    for step in s.steps:
        if step.do == "reassign" and step.expect["error"] == "NONE":
            assert "Reassign(" in actions
        if step.do in ("kill", "stop"):
            assert re.search(rf"Broker(Fail|ControlledShutdown)\({step.broker}\)", actions)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_cli_says_valid_for_one_topic(version, capsys):
    name = "walk-19"
    path = ROOT / version / f"{name}.dump.txt"
    assert main(["validate-trace", str(path), "--kafka-version", version, "--topic", name, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "VALID" and out["topics"] == [name] and out["other_topic_records"] > 0


def _rejected(text: str, s, line: int, field: str) -> dict:
    """The one divergence of an edited dump, at `line`, naming `field` among the differences."""
    found = validate_metadata_log(text, s)
    assert len(found) == 1, found
    d = found[0]
    assert d["kind"] == "metadata_log" and d["verdict"] == "INVALID" and d["line"] == line, d
    assert any(x.startswith(f"{field}:") for x in d["differs"]), d
    assert f"line {line} " in d["what"] and d["record"] == "PARTITION_CHANGE_RECORD"
    assert 0 <= d["step"] < len(s.steps)
    return d


@pytest.mark.parametrize("version", VERSIONS)
def test_a_leader_outside_the_isr_is_rejected_at_its_record(version):
    text, s = load(version, "walk-19")
    n, data = next((n, d) for n, d in changes(text, s.topic) if "leader" in d and d.get("isr"))
    outside = next(b for b in range(1, s.brokers + 1) if b not in data["isr"])
    d = _rejected(edited(text, n, {**data, "leader": outside}), s, n, "leader")
    assert s.steps[d["step"]].do == "restart"  # the completion, once the restarted broker 4 is in sync


@pytest.mark.parametrize("version", VERSIONS)
def test_a_completion_with_the_target_out_of_sync_is_rejected_at_its_record(version):
    text, s = load(version, "path-failed-target")
    # the record that completes the reassignment: the target as replicas, no adding, its ISR with the new replica
    n, data = next((n, d) for n, d in changes(text, s.topic) if d.get("addingReplicas") == [] and d.get("isr"))
    added = next(b for b in data["replicas"] if b not in s.initial[0])
    d = _rejected(edited(text, n, {**data, "isr": [b for b in data["isr"] if b != added]}), s, n, "isr")
    assert s.steps[d["step"]].do == "restart" and s.steps[d["step"]].broker == added


@pytest.mark.parametrize("version", VERSIONS)
def test_a_deleted_reassignment_record_is_rejected_at_the_next_record(version):
    text, s = load(version, "walk-19")
    recs = changes(text, s.topic)
    k = next(k for k, (_n, d) in enumerate(recs) if d.get("addingReplicas"))  # the first Reassign
    n, nxt = recs[k][0], recs[k + 1][0]
    d = validate_metadata_log(edited(text, n, None), s)
    assert len(d) == 1 and d[0]["verdict"] == "INVALID" and d[0]["line"] == nxt - 1, d  # a line less above it


@pytest.mark.parametrize("version", VERSIONS)
def test_a_deleted_last_isr_change_shows_in_the_final_state(version):
    text, s = load(version, "path-failed-target")
    n, _data = [(n, d) for n, d in changes(text, s.topic) if d.get("isr")][-1]
    found = validate_metadata_log(edited(text, n, None), s)
    assert found and all(d["kind"] == "metadata_log" for d in found)
    assert any(d.get("field", "").startswith("partition 0") for d in found), found
    assert all(d["step"] == len(s.steps) - 1 for d in found if "field" in d)


def test_an_edited_elr_is_rejected_at_its_record():
    text, s = load("4.4.0", "min2-walk-4")
    n, data = next((n, d) for n, d in changes(text, s.topic) if d.get("eligibleLeaderReplicas"))
    other = next(b for b in range(1, s.brokers + 1) if b not in data["eligibleLeaderReplicas"])
    _rejected(edited(text, n, {**data, "eligibleLeaderReplicas": [other]}), s, n, "elr")


def test_other_topics_are_not_checked_for_the_scenario():
    text, s = load("4.4.0", "walk-19")
    other = next(t for t in ("path-failed-target",) if f'"name":"{t}"' in text)
    n, data = changes(text, other)[0]
    broken = edited(text, n, {**data, "leader": 7})
    assert validate_metadata_log(broken, s) == []  # not the scenario's topic
    assert validate_text(broken, "kraft-metadata", kafka_version="4.4.0").verdict == "INVALID"


def test_a_controlled_shutdown_batch_with_another_leader_is_rejected_at_its_record():
    # 3.9.2, min2-walk-4: broker 1 stops while it leads (an earlier scenario's partitions): inControlledShutdown,
    # its ISR removals and leader moves in one batch — the reference's BrokerControlledShutdown(1)
    text, _s = load("3.9.2", "min2-walk-4")
    lines = text.splitlines()
    at = next(n for n, line in enumerate(lines, start=1) if '"inControlledShutdown":1' in line)
    n = next(n for n in range(at + 1, at + 8) if '"PARTITION_CHANGE_RECORD"' in lines[n - 1]
             and '"leader"' in lines[n - 1])
    data = payload(lines[n - 1])["data"]
    whole = validate_text(text, "kraft-metadata", kafka_version="3.9.2")
    assert any(line == at and a == "BrokerControlledShutdown(1)" for line, _t, a in whole.explanation)
    outside = next(b for b in range(2, 5) if b not in data["isr"])
    broken = validate_text(edited(text, n, {**data, "leader": outside}), "kraft-metadata", kafka_version="3.9.2")
    assert broken.verdict == "INVALID" and broken.finding.record.line == n
    assert any(d.startswith("leader:") for d in broken.finding.differs)


# -- a live broker registering again (restarted before its session expired): the reference's BrokerRestart ------

TID = "rAM_nwYcSAaE3aPYeN5TFQ"


def _dump(batches: list[list[tuple[str, int, dict]]]) -> str:
    """A dump as DumpLogSegments prints it (the real fixtures' line layout)."""
    out = ["Dumping /x/__cluster_metadata-0/00000000000000000000.log", "Log starting offset: 0"]
    offset = 0
    for recs in batches:
        out.append(f"baseOffset: {offset} lastOffset: {offset + len(recs) - 1} count: {len(recs)} baseSequence: -1 "
                   "lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false "
                   "isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1 size: 1 magic: 2 "
                   "compresscodec: none crc: 1 isvalid: true")
        for t, v, d in recs:
            body = json.dumps({"type": t, "version": v, "data": d}, separators=(",", ":"))
            out.append(f"| offset: {offset} CreateTime: 1 keySize: -1 valueSize: 1 sequence: -1 headerKeys: [] "
                       f"payload: {body}")
            offset += 1
    return "\n".join(out) + "\n"


def _register(b: int, epoch: int) -> tuple[str, int, dict]:
    return ("REGISTER_BROKER_RECORD", 3, {"brokerId": b, "isMigratingZkBroker": False, "incarnationId": f"inc{epoch}",
                                          "brokerEpoch": epoch, "endPoints": [], "features": [], "rack": None,
                                          "fenced": True, "inControlledShutdown": False, "logDirs": []})


def _restart_log(version: str, isr_change: bool) -> str:
    unfence = [("BROKER_REGISTRATION_CHANGE_RECORD", 0, {"brokerId": b, "brokerEpoch": b, "fenced": -1})
               for b in (1, 2, 3)]
    again = [_register(2, 20)]
    if isr_change:
        again.append(("PARTITION_CHANGE_RECORD", 1, {"partitionId": 0, "topicId": TID, "isr": [1, 3]}))
    level = {"3.9.2": 21, "4.0.2": 25}[version]
    return _dump([[("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": level})],
                  [_register(1, 1)], [_register(2, 2)], [_register(3, 3)], unfence,
                  [("TOPIC_RECORD", 0, {"name": "t", "topicId": TID}),
                   ("PARTITION_RECORD", 1, {"partitionId": 0, "topicId": TID, "replicas": [1, 2, 3], "isr": [1, 2, 3],
                                            "removingReplicas": [], "addingReplicas": [], "leader": 1,
                                            "leaderEpoch": 0, "partitionEpoch": 0})],
                  again])


@pytest.mark.parametrize(("version", "isr_change", "verdict"), [
    ("3.9.2", False, "VALID"),  # 3.9: the new registration is fenced, its ISRs untouched
    ("3.9.2", True, "INVALID"),
    ("4.0.2", True, "VALID"),  # 4.0+ (KAFKA-18106): it leaves every ISR as in a fence
    ("4.0.2", False, "INVALID"),
])
def test_a_live_broker_registering_again_is_the_reference_s_broker_restart(version, isr_change, verdict):
    result = validate_text(_restart_log(version, isr_change), "kraft-metadata", kafka_version=version)
    assert result.verdict == verdict, (result.finding, result.not_understood)
    if verdict == "VALID":
        assert any(a == "BrokerRestart(2)" for _line, _t, a in result.explanation)
    else:
        assert result.finding.record.line >= result.total_lines - 1  # the re-registration's batch


@pytest.mark.parametrize("version", VERSIONS)
def test_a_killed_broker_never_fenced_is_a_step_without_its_record(version):
    # path-failed-target: step 0 kills broker 4 (not a replica of the topic): its fence is a batch of its own
    text, s = load(version, "path-failed-target")
    assert (s.steps[0].do, s.steps[0].broker) == ("kill", 4)
    lines = text.splitlines()
    created = next(n for n, line in enumerate(lines, start=1) if f'"name":"{s.topic}"' in line)
    n = next(n for n, line in enumerate(lines, start=1)
             if n > created and '"brokerId":4' in line and '"fenced":1' in line)
    found = validate_metadata_log(edited(text, n, None), s)
    assert [d["step"] for d in found] == [0], found
    assert "no fence or controlled shutdown" in found[0]["what"]


def test_without_a_run_only_the_records_are_checked():
    text, s = load("4.4.0", "path-failed-target")
    n, _data = [(n, d) for n, d in changes(text, s.topic) if d.get("isr")][-1]
    broken = edited(text, n, None)  # the final state differs: seen only for a run that did every step
    assert validate_records(broken, s) == [] and validate_metadata_log(broken, s)
    failed = RunResult(s.kafka_version, s.topic, s.seed, steps=[{"index": 0}], failed="step 0: ...")
    assert validate_records(broken, s, failed) == []


@pytest.mark.parametrize(("version", "name"), FIXTURES)
def test_each_fixture_s_scenario_still_replays_on_the_model(version, name):
    # produce.py replays these files: the model must still take every step and expect what Kafka did
    from kreassign.checker.scenarios.mapping import replay_on_model

    _text, s = load(version, name)
    assert len(replay_on_model(s)) == len(s.steps)


def test_an_unclean_restart_s_elr_removal_is_the_reference_s_and_nothing_else_is():
    # 4.4.0 (ELR on): a killed broker in the ELR registers again; ClusterControlManager.registerBroker runs the
    # unclean-shutdown handler in the registration's batch, removing it from the ELR (BrokerRestart in the
    # reference). Seen as "not understood" before the reader took it (conformance smoke tier, seed 2417)
    text, s = load("4.4.0", "unclean-restart-2417")
    lines = text.splitlines()
    n = next(k for k, line in enumerate(lines, start=1)
             if '"PARTITION_CHANGE_RECORD"' in line and payload(line)["data"].get("eligibleLeaderReplicas") == []
             and '"REGISTER_BROKER_RECORD"' in lines[k])
    mine = check_metadata_log(text, s)
    assert mine.verdict == "VALID" and any(line == n and "BrokerRestart(2)" in a for line, _t, a in mine.explanation)
    data = payload(lines[n - 1])["data"]
    _rejected(edited(text, n, {**data, "eligibleLeaderReplicas": [2, 4]}), s, n, "elr")


def test_two_brokers_fenced_in_one_batch_are_two_steps_and_each_change_is_its_own():
    # 4.4.0: the Raft client put two fence events in one batch; the change between them is broker 1's fence
    text = (ROOT / "campaigns" / "4.4.0-two-fences-5050.dump.txt").read_text(encoding="utf-8")
    s = read_scenario(str(ROOT / "campaigns" / "4.4.0-two-fences-5050.scenario.json"))
    lines = text.splitlines()
    n = next(k for k, line in enumerate(lines, start=1) if f'"topicId":"{topic_id(text, s.topic)}"' in line
             and '"PARTITION_CHANGE_RECORD"' in line and '"BROKER_REGISTRATION_CHANGE_RECORD"' in lines[k]
             and '"BROKER_REGISTRATION_CHANGE_RECORD"' in lines[k - 3])
    mine = check_metadata_log(text, s)
    assert mine.verdict == "VALID" and any(line == n and "BrokerFail(1)" in a for line, _t, a in mine.explanation)
    data = payload(lines[n - 1])["data"]
    _rejected(edited(text, n, {**data, "leader": 4, "isr": [4]}), s, n, "leader")
