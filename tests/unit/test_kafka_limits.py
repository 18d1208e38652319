"""Kafka's own limits (spec/kafka_limits.py, issue 29): the rules themselves, checked against Kafka's source when
the jar is at hand, and every reader refusing what Kafka would refuse through its real entry point — exit 2,
one line naming the file and the field or line, no traceback."""

from __future__ import annotations

import dataclasses
import json
import re
import zipfile
from pathlib import Path

import pytest
from kreassign.checker.status.snapshot import LivePartition, Snapshot
from kreassign.spec import actions as A
from kreassign.spec import kafka_limits as K
from kreassign.spec.codec import DecodeError, state_from_json
from kreassign.spec.state import make_cluster

from kreassign.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
INT32_MAX = 2**31 - 1

# -- the rules ---------------------------------------------------------------------------------------------


def test_topic_length_249_is_accepted_and_250_refused():
    assert K.topic_problem("a" * 249) is None
    assert "250 characters long, longer than Kafka's maximum of 249" in K.topic_problem("a" * 250)


def test_topic_length_is_javas_utf16_length():
    # String.length() counts UTF-16 units: a character beyond the BMP is two (and never legal anyway)
    assert "250 characters" in K.topic_problem("\U0001F600" * 125)
    assert "contains" in K.topic_problem("\U0001F600" * 124)  # 248 units: the characters are what is wrong


@pytest.mark.parametrize("name", ["a", "Z", "0", ".a", "_", "-", "a.b_c-D9", "...", "__consumer_offsets"])
def test_each_legal_character_class_is_accepted(name):
    assert K.topic_problem(name) is None


@pytest.mark.parametrize("name, char", [
    ("a b", " "), ("a/b", "/"), ("a:b", ":"), ("a+b", "+"), ("a@b", "@"), ("a,b", ","), ("a\tb", "\t"),
    ("a\nb", "\n"), ("caf\u00e9", "\u00e9"), ("\u0663", "\u0663"), ("\u00c5", "\u00c5"), ("a\u00a0b", "\u00a0"),
])
def test_each_illegal_character_class_is_refused_naming_it(name, char):
    problem = K.topic_problem(name)
    assert problem is not None and repr(char) in problem and "[a-zA-Z0-9._-]" in problem


@pytest.mark.parametrize("name, phrase", [("", "empty topic name"), (".", "'.' is not allowed"),
                                          ("..", "'..' is not allowed")])
def test_empty_dot_and_dot_dot_are_refused(name, phrase):
    assert phrase in K.topic_problem(name)


def test_kafkas_order_of_reasons():
    # detectInvalidTopic checks the length before the characters
    assert "longer than" in K.topic_problem(" " * 250)


@pytest.mark.parametrize("check", [K.partition_problem, K.broker_problem])
def test_ids_are_non_negative_int32(check):
    assert check(0) is None and check(INT32_MAX) is None
    assert "does not fit Kafka's 32-bit int" in check(INT32_MAX + 1)
    assert check(-1).startswith("negative")
    assert "32-bit" in check(-(2**31) - 1)


def test_leader_minus_one_and_the_special_values_where_kafka_uses_them():
    assert K.leader_problem(-1) is None and K.leader_problem(INT32_MAX) is None
    assert "invalid leader -2" in K.leader_problem(-2)
    assert K.leader_problem(-2, (K.NO_LEADER, K.NO_LEADER_CHANGE)) is None
    assert "32-bit" in K.leader_problem(INT32_MAX + 1)


def test_epochs_and_zk_versions_int32_and_their_legal_negatives():
    assert K.epoch_problem(0) is None and K.epoch_problem(INT32_MAX) is None
    assert "32-bit" in K.epoch_problem(INT32_MAX + 1)
    assert K.epoch_problem(-1) == "negative leader epoch -1"
    zk = (K.ZK_MATCH_ANY_VERSION, K.ZK_UNKNOWN_VERSION)
    assert K.epoch_problem(-1, "zkVersion", zk) is None and K.epoch_problem(-2, "zkVersion", zk) is None
    assert "invalid zkVersion -3" in K.epoch_problem(-3, "zkVersion", zk)
    assert "32-bit" in K.epoch_problem(-(2**31) - 1, "zkVersion", zk)


def test_state_problem_names_the_field():
    ok = make_cluster(3, {"t": [[1, 2]]})
    assert K.state_problem(ok) is None
    assert K.state_problem(make_cluster(3, {"bad name": [[1, 2]]}))[0] == "topics[0].name"
    data = json.loads(json.dumps({"brokers": [{"id": 1}], "topics": [{"name": "t", "partitions": [
        {"replicas": [1], "isr": [1], "leader": 1, "leader_epoch": INT32_MAX + 1}]}]}))
    why = f"leader epoch {INT32_MAX + 1} does not fit Kafka's 32-bit int (at most {INT32_MAX})"
    # decoding a state (spec/codec.validate_state) refuses it with the same field and reason
    with pytest.raises(DecodeError) as e:
        state_from_json(data)
    assert str(e.value) == f"topics[0].partitions[0].leader_epoch: {why}"
    big = make_cluster(3, {"t": [[1, 2]]})
    big = dataclasses.replace(big, topics=(dataclasses.replace(big.topics[0], partitions=(dataclasses.replace(
        big.topics[0].partitions[0], leader_epoch=INT32_MAX + 1),)),))
    assert K.state_problem(big) == ("topics[0].partitions[0].leader_epoch", why)


def test_actions_are_held_to_the_wire_only():
    # a client may send a bad topic or a negative broker id; Kafka answers with an error the reference reproduces
    assert K.action_problem(A.Reassign("a b", 0, (-2, 1))) is None
    assert K.action_problem(A.Reassign("t", 0, (1, INT32_MAX + 1)))[0] == "replicas[1]"


def test_the_constants_are_kafkas_own():
    """Read Topic.java from the kafka-clients sources jar in the local Maven cache, when there is one."""
    jars = sorted(Path.home().glob(".m2/repository/org/apache/kafka/kafka-clients/*/kafka-clients-*-sources.jar"))
    if not jars:
        pytest.skip("no kafka-clients sources jar in ~/.m2")
    with zipfile.ZipFile(jars[-1]) as z:
        source = z.read("org/apache/kafka/common/internals/Topic.java").decode()
    assert re.search(r"MAX_NAME_LENGTH = (\d+);", source).group(1) == str(K.TOPIC_MAX_LENGTH)
    assert re.search(r'LEGAL_CHARS = "([^"]+)";', source).group(1) == K.TOPIC_LEGAL_CHARS
    assert '".".equals(name)' in source and '"..".equals(name)' in source


# -- every reader, through its entry point -------------------------------------------------------------------


def run(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse
        code = e.code
    err = capsys.readouterr().err
    return code, err


def refused(capsys, argv: list[str], *needles: str) -> str:
    code, err = run(capsys, argv)
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


PLAN = {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 2, 3]}]}


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_reassign_json_refuses_a_topic_kafka_refuses(tmp_path, capsys):
    plan = write(tmp_path, "p.json", json.dumps({"version": 1, "partitions": [
        {"topic": "a/b", "partition": 0, "replicas": [1]}]}))
    # reassign-json names the field of its one input file (an auxiliary --state file would be named too)
    refused(capsys, ["reassign-json", "validate", plan], "partitions[0].topic", "'/'")


def test_plan_refuses_a_topic_of_250_characters(tmp_path, capsys):
    plan = write(tmp_path, "p.json", json.dumps({"version": 1, "partitions": [
        {"topic": "t" * 250, "partition": 0, "replicas": [1]}]}))
    refused(capsys, ["plan", plan], "p.json", "partitions[0].topic", "maximum of 249")


def test_plan_refuses_a_current_json_with_a_broker_beyond_int32(tmp_path, capsys):
    plan = write(tmp_path, "p.json", json.dumps(PLAN))
    current = write(tmp_path, "c.json", json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2**31]}]}))
    refused(capsys, ["plan", plan, "--current", current], "c.json", "partitions[0].replicas[1]", "32-bit")


@pytest.mark.parametrize("line, needle", [
    ("\tTopic: or ders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3", "line 2: Topic"),
    ("\tTopic: orders\tPartition: 2147483648\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3", "line 2: Partition"),
    ("\tTopic: orders\tPartition: 0\tLeader: -3\tReplicas: 1,2,3\tIsr: 1,2,3", "line 2: Leader"),
    ("\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,-3\tIsr: 1,2", "line 2: Replicas"),
])
def test_plan_refuses_a_describe_text_kafka_cannot_print(tmp_path, capsys, line, needle):
    plan = write(tmp_path, "p.json", json.dumps(PLAN))
    describe = write(tmp_path, "d.txt", "Topic: orders\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n" + line + "\n")
    refused(capsys, ["plan", plan, "--describe", describe], "d.txt", needle)


def test_validate_trace_refuses_a_zk_log_epoch_beyond_int32(tmp_path, capsys):
    text = (FIXTURES / "zk_create_and_elect.log").read_text().splitlines()
    assert "leaderEpoch=0" in text[5]
    text[5] = text[5].replace("leaderEpoch=0", "leaderEpoch=2147483648")
    log = write(tmp_path, "controller.log", "\n".join(text) + "\n")
    refused(capsys, ["validate-trace", log], "controller.log", "line 6: leader_epoch", "32-bit")


def test_validate_trace_refuses_a_zk_log_topic_kafka_refuses(tmp_path, capsys):
    text = (FIXTURES / "zk_create_and_elect.log").read_text().replace("orders", "o" * 250)
    log = write(tmp_path, "controller.log", text)
    refused(capsys, ["validate-trace", log], "controller.log", "line 1: topic", "maximum of 249")


@pytest.mark.parametrize("old, new, needle", [
    ('"name":"t"', '"name":"t\u00e9"', "data.name"),
    ('"partitionEpoch":0', '"partitionEpoch":2147483648', "data.partitionEpoch"),
    ('"leader":1', '"leader":-7', "data.leader"),
])
def test_validate_trace_refuses_a_metadata_record_kafka_cannot_write(tmp_path, capsys, old, new, needle):
    text = (FIXTURES / "kraft_metadata" / "full_reassignment.txt").read_text()
    assert old in text
    log = write(tmp_path, "meta.txt", text.replace(old, new, 1))
    refused(capsys, ["validate-trace", log], "meta.txt", needle)


INITIAL = {"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "t", "partitions": [
    {"replicas": [1, 2], "isr": [1, 2], "leader": 1}]}]}


def jsonl(tmp_path: Path, *lines: dict) -> str:
    return write(tmp_path, "trace.jsonl", "".join(json.dumps(line) + "\n" for line in lines))


def test_validate_trace_refuses_a_jsonl_state_with_a_topic_kafka_refuses(tmp_path, capsys):
    bad = json.loads(json.dumps(INITIAL).replace('"t"', '".."'))
    refused(capsys, ["validate-trace", jsonl(tmp_path, {"initial_state": bad})], "trace.jsonl",
            "line 1: initial_state.topics[0].name", "'..' is not allowed")


def test_validate_trace_refuses_a_jsonl_observation_beyond_int32(tmp_path, capsys):
    path = jsonl(tmp_path, {"initial_state": INITIAL},
                 {"observe": {"topic": "t", "partition": 0, "leader_epoch": 2**31}})
    refused(capsys, ["validate-trace", path], "trace.jsonl", "line 2: observe.leader_epoch", "32-bit")


def test_validate_trace_observing_a_topic_the_initial_state_lacks_is_bad_input(tmp_path, capsys):
    path = jsonl(tmp_path, {"initial_state": INITIAL}, {"observe": {"topic": "ghost", "partition": 0, "leader": 1}})
    refused(capsys, ["validate-trace", path], "line 2: observe.topic", "'ghost' is not in the initial state")


def test_validate_trace_observing_a_partition_no_state_has_is_invalid(tmp_path, capsys):
    path = jsonl(tmp_path, {"initial_state": INITIAL}, {"observe": {"topic": "t", "partition": 5, "leader": 1}})
    code = main(["validate-trace", path])
    out = capsys.readouterr().out
    assert code == 1 and "INVALID at line 2: t-5 exists in no state the profile allows here" in out
    grown = jsonl(tmp_path, {"initial_state": INITIAL},
                  {"action": {"type": "CreatePartitions", "topic": "t", "count": 6},
                   "observe": {"topic": "t", "partition": 5, "isr": [1, 2]}})
    assert main(["validate-trace", grown]) == 0  # a logged CreatePartitions adds it
    capsys.readouterr()


def test_show_refuses_a_trace_file_with_a_topic_kafka_refuses(tmp_path, capsys):
    data = json.loads((FIXTURES / "bad_input" / "valid_trace.json").read_text())
    data["initial_state"]["cluster"]["topics"][0]["name"] = "a b"
    path = write(tmp_path, "t.json", json.dumps(data))
    refused(capsys, ["show", path], "t.json", "initial_state.cluster.topics[0].name", "' '")


def test_conformance_refuses_a_scenario_topic_kafka_refuses(tmp_path, capsys):
    data = json.loads((FIXTURES / "kraft_metadata_real" / "4.4.0" / "walk-19.scenario.json").read_text())
    data["cluster"]["topic"] = "w" * 250
    path = write(tmp_path, "s.json", json.dumps(data))
    refused(capsys, ["conformance", "--replay", path], "s.json", "cluster.topic", "maximum of 249")


@pytest.mark.parametrize("part, needle", [
    (LivePartition("a b", 0, (1, 2), (1, 2), 1), "partitions[0].topic"),
    (LivePartition("t", 2**31, (1, 2), (1, 2), 1), "partitions[0].partition"),
    (LivePartition("t", 0, (1, 2**31), (1,), 1), "partitions[0].replicas[1]"),
    (LivePartition("t", 0, (1, 2), (1, 2), -5), "partitions[0].leader"),
])
def test_status_refuses_a_snapshot_kafka_cannot_hold(tmp_path, capsys, part, needle):
    brokers = {b: {"rack": None, "fenced": False} for b in (1, 2, 3)}
    snap = Snapshot("h:9092", "id", "kraft", brokers, True, {"metadata.version": 33},
                    {"metadata.version": {"min": 7, "max": 33}}, [part])
    path = write(tmp_path, "snap.json", json.dumps(snap.to_json()))
    refused(capsys, ["status", "--snapshot", path], "snap.json", needle)
