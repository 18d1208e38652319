"""Kafka's files for `kreassign plan`: describe text, current-assignment JSON, and the rollback JSON
byte for byte as kafka-reassign-partitions.sh prints it."""

from __future__ import annotations

import pytest
from kreassign.checker.plan.formats import (
    DESCRIBE,
    PlanInputError,
    guess_format,
    parse_current,
    parse_describe,
    parse_plan,
)
from kreassign.checker.plan.kafka_json import format_as_kafka, rollback_entries, rollback_message
from kreassign.reference.reassign_json import ReassignmentEntry, ReassignmentPlanJson, parse_reassignment_json

# TopicCommand.java 3.9 (tools/src/main/java/org/apache/kafka/tools/TopicCommand.java, printDescription)
DESCRIBE_39 = (
    "Topic: orders\tTopicId: 7bS0fJ8xQ2u1c5m0YH9k3w\tPartitionCount: 2\tReplicationFactor: 3\t"
    "Configs: min.insync.replicas=2,cleanup.policy=compact,delete,unclean.leader.election.enable=true\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\tElr: N/A\tLastKnownElr: N/A\n"
    "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 2,3,4\tIsr: 4\tElr: N/A\tLastKnownElr: N/A\n"
)
# TopicCommand.scala 3.4: an in-flight reassignment adds "Adding Replicas" / "Removing Replicas"
DESCRIBE_34 = (
    "Topic: t\tTopicId: AAAAAAAAAAAAAAAAAAAAAA\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
    "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 3,1,2\tIsr: 1,2\tAdding Replicas: 3\tRemoving Replicas: 1\n"
)
# TopicCommand.scala 2.4: no TopicId, no Elr
DESCRIBE_24 = "Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 5\tReplicas: 5\tIsr: 5\n"


def test_describe_39_leaders_isrs_and_configs():
    d = parse_describe(DESCRIBE_39, "d.txt")
    p0, p1 = d.partitions[("orders", 0)], d.partitions[("orders", 1)]
    assert (p0.leader, p0.replicas, p0.isr, p0.line) == (1, (1, 2, 3), (1, 2), 2)
    assert (p1.leader, p1.isr) == (None, (4,))
    assert d.min_isr("orders") == 2 and d.unclean("orders") is True
    assert d.configs["orders"]["cleanup.policy"] == "compact,delete"  # a comma inside a value stays in it


def test_describe_34_in_flight_and_24_and_copy_pasted_spaces():
    p = parse_describe(DESCRIBE_34, "d.txt").partitions[("t", 0)]
    assert (p.adding, p.removing) == ((3,), (1,))
    assert parse_describe(DESCRIBE_24, "d.txt").partitions[("t", 0)].replicas == (5,)
    spaced = DESCRIBE_39.replace("\t", "    ")
    assert parse_describe(spaced, "d.txt").partitions == parse_describe(DESCRIBE_39, "d.txt").partitions


@pytest.mark.parametrize("text, where", [
    ("Topic: t\tPartitionCount: 1\tConfigs: \n\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,x\tIsr: 1\n", "line 2: Replicas"),
    ("Topic: t\tPartitionCount: 1\tConfigs: \n\tTopic: t\tPartition: 0\tReplicas: 1\tIsr: 1\n", "line 2"),
    ("Topic: t\tPartitionCount: 1\tConfigs: \nhello\n", "line 2"),
    (DESCRIBE_24 + DESCRIBE_24.splitlines()[1] + "\n", "line 3"),
])
def test_describe_errors_name_the_line(text, where):
    with pytest.raises(PlanInputError) as e:
        parse_describe(text, "d.txt")
    assert str(e.value).startswith(f"d.txt: {where}")


def test_wrong_file_says_what_was_expected_and_what_it_looks_like():
    plan = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}'
    with pytest.raises(PlanInputError, match="expected the text output of kafka-topics.sh --describe; this looks like a reassignment JSON"):
        parse_describe(plan, "d.txt")
    with pytest.raises(PlanInputError, match="expected a reassignment plan JSON.*looks like the text output"):
        parse_plan(DESCRIBE_39, "p.json")
    with pytest.raises(PlanInputError, match="looks like a kreassign bounds TOML"):
        parse_current("# comment\n[bounds]\nbrokers = 3\n", "c.json")
    assert guess_format(DESCRIBE_39) == DESCRIBE


def test_current_accepts_the_whole_execute_message():
    json_line = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}'
    message = ("Current partition replica assignment\n\n" + json_line +
               "\n\nSave this to use as the --reassignment-json-file option during rollback\n"
               "Successfully started partition reassignment for t-0\n")
    assert parse_current(message, "c.txt") == parse_current(json_line, "c.json")


# -- the rollback JSON, as Kafka prints it ---------------------------------------------------------------


def kafka_format(parts: dict[tuple[str, int], list[int]]) -> str:
    """A transcription of ReassignPartitionsCommand.formatAsReassignmentJson (Java, 3.5+; Scala 2.6-3.4):
    keys sorted by compareTopicPartitions (String.compareTo, then Integer.compare), LinkedHashMap key
    order, log_dirs "any" (ANY_LOG_DIR) per replica, Jackson's compact output."""
    items = []
    for topic, partition in sorted(parts, key=lambda tp: (tp[0], tp[1])):
        replicas = parts[(topic, partition)]
        items.append('{"topic":"%s","partition":%d,"replicas":[%s],"log_dirs":[%s]}' % (  # noqa: UP031 (Java's format strings, kept)
            topic, partition, ",".join(map(str, replicas)), ",".join('"any"' for _ in replicas)))
    return '{"version":1,"partitions":[%s]}' % ",".join(items)  # noqa: UP031


def kafka_rollback_message(current: dict[tuple[str, int], list[int]]) -> str:
    # currentPartitionReplicaAssignmentToString: String.format("Current partition replica assignment%n%n%s%n%n
    # Save this to use as the %s", json, "--reassignment-json-file option during rollback"), %n = "\n" on Linux
    return ("Current partition replica assignment\n\n%s\n\nSave this to use as the %s"  # noqa: UP031
            % (kafka_format(current), "--reassignment-json-file option during rollback"))


CURRENT = {("orders", 10): [3, 1, 2], ("orders", 9): [1, 2, 3], ("Zeta", 0): [4, 5], ("alpha.b-c_d", 2): [7]}


def test_rollback_is_byte_identical_to_kafkas():
    # plan names the partitions in another order; the file Kafka prints sorts them (Zeta < alpha, 9 < 10)
    plan = ReassignmentPlanJson(tuple(ReassignmentEntry(t, p, (9,)) for t, p in reversed(list(CURRENT))))
    current = ReassignmentPlanJson(tuple(ReassignmentEntry(t, p, tuple(r)) for (t, p), r in CURRENT.items()))
    rollback = rollback_entries(plan, current)
    assert format_as_kafka(rollback) == kafka_format(CURRENT)
    assert rollback_message(rollback) == kafka_rollback_message(CURRENT)
    # what --execute printed parses back to the same entries
    assert parse_current(kafka_rollback_message(CURRENT), "c.txt") == parse_reassignment_json(kafka_format(CURRENT))


def test_rollback_keeps_log_dirs_and_names_a_missing_partition():
    current = parse_reassignment_json(
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["/d1","any"]}]}')
    plan = parse_reassignment_json('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3,4]}]}')
    assert '"log_dirs":["/d1","any"]' in format_as_kafka(rollback_entries(plan, current))
    missing = parse_reassignment_json('{"version":1,"partitions":[{"topic":"t","partition":5,"replicas":[3]}]}')
    with pytest.raises(ValueError, match=r"t-5 is not in current"):
        rollback_entries(missing, current)


def test_a_formatter_that_sorts_partitions_as_strings_is_caught():
    # the broken variant: "10" < "9" as strings; Kafka compares partition numbers
    entries = tuple(ReassignmentEntry("t", p, (1,)) for p in (10, 9))
    text = format_as_kafka(ReassignmentPlanJson(entries))
    broken = sorted(entries, key=lambda e: (e.topic, str(e.partition)))
    assert text == kafka_format({("t", 9): [1], ("t", 10): [1]})
    assert [e.partition for e in broken] == [10, 9] and text.index('"partition":9') < text.index('"partition":10')
