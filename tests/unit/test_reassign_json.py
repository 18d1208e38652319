"""Kafka's reassignment JSON (reference/reassign_json.py) and `kreassign reassign-json`."""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kreassign.reference.reassign_json import (
    ReassignJsonError,
    ReassignmentEntry,
    ReassignmentPlanJson,
    check_against_cluster,
    format_reassignment_json,
    from_list_response,
    from_request,
    parse_reassignment_json,
    plan_from_json_data,
    plan_to_json_data,
    rollback_plan,
    to_cancel_request,
    to_request,
)
from kreassign.spec.codec import from_json, state_to_json, to_json
from kreassign.spec.messages import (
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
    ReassignablePartition,
    ReassignableTopic,
)
from kreassign.spec.state import Broker, Partition, make_cluster

from kreassign import cli

# -- strategies -------------------------------------------------------------------

broker_ids = st.integers(0, 2**31 - 1)
replica_lists = st.lists(broker_ids, min_size=1, max_size=5, unique=True).map(tuple)
# topic names Kafka accepts (spec/kafka_limits.py: Topic.validate's [a-zA-Z0-9._-], not "." or "..")
topics = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=12).filter(lambda t: t not in (".", ".."))


@st.composite
def entries(draw: st.DrawFn) -> ReassignmentEntry:
    replicas = draw(replica_lists)
    n = len(replicas)
    log_dirs = draw(
        st.none() | st.lists(st.just("any") | st.text(min_size=1), min_size=n, max_size=n).map(tuple)
    )
    original = draw(st.none() | replica_lists)
    return ReassignmentEntry(draw(topics), draw(broker_ids), replicas, log_dirs, original)


plans = st.lists(entries(), min_size=1, max_size=8, unique_by=lambda e: (e.topic, e.partition)).map(
    lambda es: ReassignmentPlanJson(tuple(es))
)

KAFKA_TEXT = (
    '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3],"log_dirs":["any","any","any"]},'
    '{"topic":"foo","partition":1,"replicas":[2,3,4],"log_dirs":["any","/data/kafka-1","any"]}]}'
)


def plan_text(*entries: dict) -> str:
    return json.dumps({"version": 1, "partitions": list(entries)})


def entry(topic: str = "foo", partition: int = 0, replicas: list | None = None, **extra) -> dict:
    return {
        "topic": topic,
        "partition": partition,
        "replicas": [1, 2] if replicas is None else replicas,
        **extra,
    }


def plain(topic: str, partition: int, *replicas: int) -> ReassignmentEntry:
    return ReassignmentEntry(topic, partition, tuple(replicas))


# -- round trips --------------------------------------------------------------------


@given(plans)
def test_text_round_trip_is_identity(plan: ReassignmentPlanJson) -> None:
    text = format_reassignment_json(plan)
    assert parse_reassignment_json(text, allow_original_replicas=True) == plan
    assert format_reassignment_json(parse_reassignment_json(text, allow_original_replicas=True)) == text


@given(plans)
def test_data_round_trip_is_identity(plan: ReassignmentPlanJson) -> None:
    assert plan_from_json_data(plan_to_json_data(plan), allow_original_replicas=True) == plan


def test_kafka_output_is_reproduced_byte_for_byte() -> None:
    plan = parse_reassignment_json(KAFKA_TEXT)
    assert plan.entries[1] == ReassignmentEntry("foo", 1, (2, 3, 4), ("any", "/data/kafka-1", "any"))
    assert format_reassignment_json(plan) == KAFKA_TEXT


def test_writer_uses_kafka_key_order_and_omits_absent_keys() -> None:
    text = '{ "partitions": [ {"replicas": [3, 1], "partition": 2, "topic": "t"} ],\n "version": 1 }'
    assert format_reassignment_json(parse_reassignment_json(text)) == (
        '{"version":1,"partitions":[{"topic":"t","partition":2,"replicas":[3,1]}]}'
    )


def test_parse_from_loaded_data() -> None:
    data = json.loads(KAFKA_TEXT)
    assert plan_from_json_data(data) == parse_reassignment_json(KAFKA_TEXT)


# -- malformed input names the field -------------------------------------------------

MALFORMED = [
    ('{"version":1,\n "partitions": [}', "", "invalid JSON at line 2, column 17"),
    ("[]", "", "expected a reassignment JSON object"),
    ('{"partitions":[]}', "version", "missing required field"),
    ('{"version":"1","partitions":[]}', "version", "expected the integer 1"),
    ('{"version":true,"partitions":[]}', "version", "expected the integer 1"),
    ('{"version":2,"partitions":[]}', "version", "unsupported version 2"),
    ('{"version":1}', "partitions", "missing required field"),
    ('{"version":1,"partitions":{}}', "partitions", "expected a list"),
    ('{"version":1,"partitions":[]}', "partitions", "empty list"),
    ('{"version":1,"partitions":[],"extra":0}', "extra", "unknown field"),
    ('{"version":1,"version":1,"partitions":[]}', "version", "duplicate key"),
    (plan_text(entry(), 7), "partitions[1]", "expected a partition entry object"),
    (
        plan_text(entry(), entry(topic="bar", replicas=[1, 2, 1])),
        "partitions[1].replicas[2]",
        "appears more than once",
    ),
    (plan_text(entry(replicas=[1, True])), "partitions[0].replicas[1]", "expected a broker id"),
    (plan_text(entry(replicas=[1, 2.0])), "partitions[0].replicas[1]", "expected a broker id"),
    (plan_text(entry(replicas=[1, -2])), "partitions[0].replicas[1]", "negative broker id -2"),
    (plan_text(entry(replicas=[2**31])), "partitions[0].replicas[0]", "32-bit"),
    (plan_text(entry(replicas=[])), "partitions[0].replicas", "empty replica list"),
    (plan_text(entry(replicas="1,2")), "partitions[0].replicas", "expected a list of broker ids"),
    (plan_text(entry(partition=-1)), "partitions[0].partition", "negative partition id -1"),
    (plan_text(entry(partition=False)), "partitions[0].partition", "expected a partition id"),
    (plan_text(entry(partition="0")), "partitions[0].partition", "expected a partition id"),
    (plan_text(entry(topic="")), "partitions[0].topic", "empty topic name"),
    (plan_text(entry(topic=3)), "partitions[0].topic", "expected a topic name"),
    (plan_text({"topic": "foo", "replicas": [1]}), "partitions[0].partition", "missing required field"),
    (
        plan_text(entry(), entry(partition=1), entry()),
        "partitions[2]",
        "duplicate entry for foo-0 (first at partitions[0])",
    ),
    (plan_text(entry(log_dirs=["any"])), "partitions[0].log_dirs", "1 log dirs for 2 replicas"),
    (plan_text(entry(log_dirs=["any", 5])), "partitions[0].log_dirs[1]", "expected a log directory"),
    (plan_text(entry(log_dirs=["any", ""])), "partitions[0].log_dirs[1]", "expected a log directory"),
    (plan_text(entry(log_dirs=None)), "partitions[0].log_dirs", "expected a list of log directories"),
    (plan_text(entry(replica=[1])), "partitions[0].replica", "unknown field"),
    (plan_text(entry(original_replicas=[1])), "partitions[0].original_replicas", "KIP-236"),
    (
        '{"version":1,"partitions":[{"topic":"a","topic":"b","partition":0,"replicas":[1]}]}',
        "partitions[0].topic",
        "duplicate key",
    ),
]


@pytest.mark.parametrize("text, path, problem", MALFORMED)
def test_malformed_input_names_the_field(text: str, path: str, problem: str) -> None:
    with pytest.raises(ReassignJsonError) as info:
        parse_reassignment_json(text)
    assert info.value.path == path
    assert problem in info.value.problem
    assert str(info.value) == f"{path or '<root>'}: {info.value.problem}"


def test_deeply_nested_input_is_an_error_not_a_crash() -> None:
    with pytest.raises(ReassignJsonError, match="nested too deeply"):
        parse_reassignment_json("[" * 100_000)


def test_kip236_original_replicas_accepted_only_with_the_flag() -> None:
    text = plan_text(entry(replicas=[1, 2, 4], original_replicas=[1, 2, 3]))
    plan = parse_reassignment_json(text, allow_original_replicas=True)
    assert plan.entries[0].original_replicas == (1, 2, 3)
    assert format_reassignment_json(plan).endswith('"replicas":[1,2,4],"original_replicas":[1,2,3]}]}')
    bad = plan_text(entry(original_replicas=[1, 1]))
    with pytest.raises(ReassignJsonError) as info:
        parse_reassignment_json(bad, allow_original_replicas=True)
    assert info.value.path == "partitions[0].original_replicas[1]"


# -- against a cluster ---------------------------------------------------------------

CLUSTER = make_cluster(4, {"foo": [[0, 1], [1, 2]], "bar": [[2, 3]]})


def test_check_against_cluster_accepts_a_valid_plan() -> None:
    check_against_cluster(ReassignmentPlanJson((plain("foo", 1, 3, 0), plain("bar", 0, 1))), CLUSTER)


@pytest.mark.parametrize(
    "bad, path, problem",
    [
        (plain("baz", 0, 1), "partitions[1].topic", "unknown topic 'baz'"),
        (plain("foo", 2, 1), "partitions[1].partition", "no partition 2 in topic 'foo' (partitions 0..1)"),
        (plain("bar", 0, 1, 9), "partitions[1].replicas[1]", "broker 9 is not registered"),
    ],
)
def test_check_against_cluster_names_the_field(bad: ReassignmentEntry, path: str, problem: str) -> None:
    with pytest.raises(ReassignJsonError) as info:
        check_against_cluster(ReassignmentPlanJson((plain("foo", 0, 1), bad)), CLUSTER)
    assert (info.value.path, info.value.problem) == (path, problem)


def test_check_against_cluster_rejects_an_unregistered_broker() -> None:
    state = CLUSTER.with_broker(Broker(3, registered=False))
    with pytest.raises(ReassignJsonError, match=r"partitions\[0\].replicas\[0\]: broker 3 is not registered"):
        check_against_cluster(ReassignmentPlanJson((plain("foo", 0, 3),)), state)


# -- rollback --------------------------------------------------------------------------


def test_rollback_is_kafkas_current_assignment_text() -> None:
    plan = ReassignmentPlanJson((plain("foo", 1, 3, 0), plain("bar", 0, 0, 1)))
    assert format_reassignment_json(rollback_plan(plan, CLUSTER)) == (
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[2,3],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[1,2],"log_dirs":["any","any"]}]}'
    )


def test_rollback_during_a_reassignment_uses_the_full_replica_list() -> None:
    moving = Partition(replicas=(3, 0, 1), isr=(0, 1), leader=0, adding=(3,), removing=(1,))
    state = CLUSTER.with_partition("foo", 0, moving)
    rollback = rollback_plan(ReassignmentPlanJson((plain("foo", 0, 2),)), state)
    assert rollback.entries == (ReassignmentEntry("foo", 0, (3, 0, 1), ("any", "any", "any")),)


def test_rollback_from_a_mapping() -> None:
    plan = ReassignmentPlanJson((plain("t", 1, 5), plain("t", 0, 5)))
    rollback = rollback_plan(plan, {("t", 0): [1, 2], ("t", 1): (2, 3), ("u", 0): (4,)})
    assert [(e.partition, e.replicas) for e in rollback.entries] == [(0, (1, 2)), (1, (2, 3))]


@pytest.mark.parametrize("current", [CLUSTER, {("foo", 0): (0, 1)}])
def test_rollback_of_an_unknown_partition_names_the_entry(current) -> None:
    plan = ReassignmentPlanJson((plain("foo", 0, 1), plain("foo", 7, 1)))
    with pytest.raises(ReassignJsonError) as info:
        rollback_plan(plan, current)
    assert info.value.path == "partitions[1]"
    assert "foo-7" in info.value.problem


@given(st.lists(st.tuples(st.sampled_from(["foo", "bar"]), st.integers(0, 1)), min_size=1, unique=True))
def test_rollback_names_exactly_the_plans_partitions_and_parses(names: list[tuple[str, int]]) -> None:
    names = [(t, p) for t, p in names if CLUSTER.partition(t, p) is not None] or [("foo", 0)]
    plan = ReassignmentPlanJson(tuple(plain(t, p, 0) for t, p in names))
    rollback = parse_reassignment_json(format_reassignment_json(rollback_plan(plan, CLUSTER)))
    assert [(e.topic, e.partition) for e in rollback.entries] == sorted(names)
    assert all(e.replicas == CLUSTER.partition(e.topic, e.partition).replicas for e in rollback.entries)


# -- requests and responses ---------------------------------------------------------------


def test_to_request_groups_topics_in_first_appearance_order() -> None:
    plan = ReassignmentPlanJson((plain("b", 2, 1), plain("a", 0, 2, 3), plain("b", 0, 4)))
    assert to_request(plan) == AlterPartitionReassignmentsRequest(
        topics=(
            ReassignableTopic("b", (ReassignablePartition(2, (1,)), ReassignablePartition(0, (4,)))),
            ReassignableTopic("a", (ReassignablePartition(0, (2, 3)),)),
        )
    )
    cancel = to_cancel_request(plan)
    assert [(t.name, [(p.partition_index, p.replicas) for p in t.partitions]) for t in cancel.topics] == [
        ("b", [(2, None), (0, None)]),
        ("a", [(0, None)]),
    ]


@given(plans)
def test_request_round_trip_keeps_every_entry(plan: ReassignmentPlanJson) -> None:
    back = from_request(to_request(plan))
    expected = [(e.topic, e.partition, e.replicas) for e in plan.entries]
    assert sorted((e.topic, e.partition, e.replicas) for e in back.entries) == sorted(expected)
    assert to_request(back) == to_request(plan)


@given(plans)
def test_from_request_is_inverse_for_grouped_plans_without_log_dirs(plan: ReassignmentPlanJson) -> None:
    bare = [replace(e, log_dirs=None, original_replicas=None) for e in plan.entries]
    order = {t: i for i, t in reversed(list(enumerate(e.topic for e in bare)))}
    grouped = ReassignmentPlanJson(tuple(sorted(bare, key=lambda e: order[e.topic])))
    assert from_request(to_request(grouped)) == grouped


def test_from_request_rejects_a_cancellation() -> None:
    request = AlterPartitionReassignmentsRequest(
        topics=(ReassignableTopic("t", (ReassignablePartition(0, (1,)), ReassignablePartition(1, None))),)
    )
    with pytest.raises(ReassignJsonError) as info:
        from_request(request)
    assert info.value.path == "topics[0].partitions[1].replicas"


def test_from_request_checks_the_result() -> None:
    empty = AlterPartitionReassignmentsRequest(topics=(ReassignableTopic("t", ()),))
    with pytest.raises(ReassignJsonError, match=r"^topics: no partitions"):
        from_request(empty)
    twice = AlterPartitionReassignmentsRequest(
        topics=(ReassignableTopic("t", (ReassignablePartition(0, (1, 1)),)),)
    )
    with pytest.raises(
        ReassignJsonError, match=r"^partitions\[0\].replicas\[1\]: broker 1 appears more than once"
    ):
        from_request(twice)


def test_from_list_response_targets_sorted() -> None:
    response = ListPartitionReassignmentsResponse(
        topics=(
            OngoingTopicReassignment("z", (OngoingPartitionReassignment(0, (4, 1, 2), (4,), (1,)),)),
            OngoingTopicReassignment(
                "a",
                (
                    OngoingPartitionReassignment(3, (5, 6, 1, 2), (5, 6), (1, 2)),
                    OngoingPartitionReassignment(1, (1, 2, 3), (3,), ()),
                ),
            ),
        )
    )
    assert from_list_response(response).entries == (
        plain("a", 1, 1, 2, 3),
        plain("a", 3, 5, 6),
        plain("z", 0, 4, 2),
    )


def test_from_list_response_errors() -> None:
    with pytest.raises(ReassignJsonError, match=r"^error_code: .*NOT_CONTROLLER"):
        from_list_response(ListPartitionReassignmentsResponse(error_code=41))
    with pytest.raises(ReassignJsonError, match=r"^topics: No partition reassignments found"):
        from_list_response(ListPartitionReassignmentsResponse())


# -- the CLI --------------------------------------------------------------------------


@pytest.fixture
def run(monkeypatch, capsys):
    """Run `kreassign reassign-json ARGS`; returns (exit code, stdout, stderr)."""
    monkeypatch.setitem(
        cli.SUBCOMMANDS, "reassign-json", ("reassign JSON", "kreassign.checker.cli.reassign_json:register")
    )

    def go(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        try:
            code = cli.main(["reassign-json", *argv])
        except SystemExit as e:
            code = e.code
        out, err = capsys.readouterr()
        return code, out, err

    return go


@pytest.fixture
def files(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(KAFKA_TEXT)
    state = tmp_path / "state.json"
    state.write_text(json.dumps(state_to_json(make_cluster(5, {"foo": [[0, 1, 2], [1, 2, 3]]}))))
    bad = tmp_path / "bad.json"
    bad.write_text(plan_text(entry(replicas=[1, 1])))
    return tmp_path


def test_cli_validate(run, files) -> None:
    assert run("validate", str(files / "plan.json")) == (
        0,
        f"{files / 'plan.json'}: valid reassignment JSON: 2 partitions in 1 topic\n",
        "",
    )
    code, out, _ = run("validate", str(files / "plan.json"), "--state", str(files / "state.json"))
    assert code == 0 and out.endswith(f", checked against {files / 'state.json'}\n")


def test_cli_validate_invalid_names_the_field(run, files) -> None:
    code, out, err = run("validate", str(files / "bad.json"))
    assert (code, out) == (2, "")
    problem = "broker 1 appears more than once (first at [0])"
    assert err == f"kreassign reassign-json: partitions[0].replicas[1]: {problem}\n"


def test_cli_validate_against_a_cluster(run, files) -> None:
    code, _, err = run(
        "validate", "-", "--state", str(files / "state.json"), stdin=plan_text(entry(replicas=[1, 9]))
    )
    assert code == 2
    assert err == "kreassign reassign-json: partitions[0].replicas[1]: broker 9 is not registered\n"


def test_cli_reports_invalid_json_with_the_file_and_position(run, files) -> None:
    code, _, err = run("normalize", "-", stdin='{"version":1,\n  "partitions": [1,]}')
    assert code == 2
    assert err.startswith("kreassign reassign-json: <stdin>: invalid JSON at line 2, column 20: ")
    code, _, err = run("rollback", str(files / "plan.json"), "--state", str(files / "bad.json"))
    assert code == 2 and err.startswith(f"kreassign reassign-json: {files / 'bad.json'}: version: unknown field")
    assert "expected a kreassign cluster state JSON; this looks like a reassignment JSON" in err  # and --current


def test_cli_normalize_from_stdin(run) -> None:
    text = '{"partitions":[{"replicas":[2,1],"topic":"t","partition":0}],"version":1}'
    assert run("normalize", "-", stdin=text) == (  # Kafka's formatAsReassignmentJson: log_dirs always written
        0,
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,1],"log_dirs":["any","any"]}]}\n',
        "",
    )


def test_cli_to_request_and_back(run, files) -> None:
    code, out, _ = run("to-request", str(files / "plan.json"))
    assert code == 0
    request = from_json(AlterPartitionReassignmentsRequest, json.loads(out))
    assert request == to_request(parse_reassignment_json(KAFKA_TEXT))
    code, back, _ = run("from-request", "-", stdin=out)
    assert code == 0
    assert parse_reassignment_json(back) == from_request(request)
    code, out, _ = run("to-request", "--cancel", str(files / "plan.json"))
    assert json.loads(out)["topics"][0]["partitions"][1] == {"partition_index": 1, "replicas": None}
    code, _, err = run("from-request", "-", stdin=out)
    assert code == 2
    assert err.startswith("kreassign reassign-json: topics[0].partitions[0].replicas: null replicas cancel")


def test_cli_from_list(run) -> None:
    response = ListPartitionReassignmentsResponse(
        topics=(OngoingTopicReassignment("t", (OngoingPartitionReassignment(0, (3, 1), (3,), (1,)),)),)
    )
    assert run("from-list", "-", stdin=json.dumps(to_json(response))) == (
        0,
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3]}]}\n',
        "",
    )
    code, _, err = run("from-list", "-", stdin='{"topics": 3}')
    assert (code, err) == (2, "kreassign reassign-json: topics: expected a list, got 3\n")


def test_cli_rollback(run, files) -> None:
    code, out, _ = run("rollback", str(files / "plan.json"), "--state", str(files / "state.json"))
    assert code == 0
    assert out == (
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[0,1,2],"log_dirs":["any","any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[1,2,3],"log_dirs":["any","any","any"]}]}\n'
    )
    code, _, err = run(
        "rollback", "-", "--state", str(files / "state.json"), stdin=plan_text(entry(partition=4))
    )
    assert code == 2
    assert err.startswith("kreassign reassign-json: partitions[0]: Unable to find partition: foo-4")


def test_cli_kip236_flag(run) -> None:
    text = plan_text(entry(original_replicas=[2, 3]))
    assert run("validate", "-", stdin=text)[0] == 2
    assert run("validate", "--kip236", "-", stdin=text)[0] == 0


def test_cli_usage_errors_exit_2(run, files) -> None:
    assert run()[0] == 2
    assert run("validate")[0] == 2
    assert run("rollback", str(files / "plan.json"))[0] == 2
    code, _, err = run("rollback", "-", "--state", "-", stdin=KAFKA_TEXT)
    assert (code, err) == (2, "kreassign reassign-json: --state: FILE and --state cannot both read stdin\n")


def test_cli_missing_and_non_utf8_files_exit_2(run, files) -> None:
    code, _, err = run("validate", str(files / "nope.json"))
    assert (code, err) == (2, f"kreassign reassign-json: {files / 'nope.json'}: No such file or directory\n")
    (files / "latin1.json").write_bytes(b'{"version":1,"partitions":[{"topic":"\xe9"}]}')
    code, _, err = run("validate", str(files / "latin1.json"))
    assert code == 2 and "not UTF-8 text" in err


def test_cli_out_writes_the_file(run, files) -> None:
    out = files / "out.json"
    assert run("normalize", str(files / "plan.json"), "--out", str(out)) == (0, "", "")
    assert out.read_text() == KAFKA_TEXT + "\n"
    out.chmod(0o640)
    assert run("to-request", str(files / "plan.json"), "--out", str(out))[0] == 0
    assert json.loads(out.read_text())["topics"][0]["name"] == "foo"
    assert out.stat().st_mode & 0o777 == 0o640


def test_cli_out_is_untouched_when_the_input_is_invalid(run, files) -> None:
    out = files / "out.json"
    out.write_text("precious\n")
    code, _, _ = run("normalize", str(files / "bad.json"), "--out", str(out))
    assert code == 2
    assert out.read_text() == "precious\n"


def test_cli_out_is_untouched_when_the_write_fails(run, files, monkeypatch) -> None:
    out = files / "out.json"
    out.write_text("precious\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)  # the write goes through kreassign.outputs
    code, _, err = run("normalize", str(files / "plan.json"), "--out", str(out))
    assert (code, err) == (3, f"kreassign reassign-json: {out}: No space left on device\n")
    assert out.read_text() == "precious\n"
    assert sorted(p.name for p in files.iterdir()) == ["bad.json", "out.json", "plan.json", "state.json"]


def test_cli_out_into_a_missing_directory_fails_cleanly(run, files) -> None:
    code, _, err = run("normalize", str(files / "plan.json"), "--out", str(files / "no" / "out.json"))
    assert code == 2 and err.startswith(f"kreassign reassign-json: {files / 'no' / 'out.json'}: ")
    assert not os.path.exists(files / "no")
