"""Kafka's reassignment tool driver (checker/scenarios/reassign_tool.py), without a JVM: the plan it writes,
and its reading of the tool's output as captured from Kafka 3.9.2, 4.0.2 and 4.4.0
(tests/fixtures/reassign_tool/), including outputs it must refuse to read, a parser variant the fixtures
catch, and a tool that hangs or cannot start."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from kreassign.checker.cluster import ClusterError
from kreassign.checker.scenarios import reassign_tool as RT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reassign_tool"
VERSIONS = ("3.9.2", "4.0.2", "4.4.0")

# what each captured output must read as, the same in every release unless `by_version` says otherwise
EXPECTED = {
    "execute_throttle": {"error_class": None, "sent": True, "refused_by_tool": False,
                         "throttle_bps": 1000000},
    "execute_dup": {"error_class": "AdminCommandFailedException", "refused_by_tool": True, "sent": False,
                    "reason": "duplicate_replicas"},
    "execute_empty": {"error_class": "AdminCommandFailedException", "refused_by_tool": True,
                      "reason": "empty_replicas", "error": "Partition replica list cannot be empty"},
    "execute_unknown_topic": {"error_class": "UnknownTopicOrPartitionException", "refused_by_tool": True,
                              "reason": "unknown_topic", "error": "Topic nosuch not found."},
    "execute_unknown_partition": {"error_class": "UnknownTopicOrPartitionException", "refused_by_tool": True,
                                  "reason": "unknown_partition", "error": "Unable to find partition: tb-5"},
    "execute_unknown_broker": {"error_class": "AdminCommandFailedException", "refused_by_tool": True,
                               "reason": "unknown_broker", "error": "Unknown broker id 9"},
    "execute_fenced_target": {"error_class": "AdminCommandFailedException", "refused_by_tool": True,
                              "reason": "unknown_broker", "error": "Unknown broker id 4", "rollback": None},
    "execute_rf_change_disallowed": {"error_class": "InvalidReplicationFactorException", "sent": True,
                                     "refused_by_tool": False,
                                     "error": "The replication factor is changed from 3 to 4"},
    "cancel_none_active": {"error_class": "NoReassignmentInProgressException", "refused_by_tool": True,
                           "sent": False, "reason": "no_active_reassignment", "throttles_cleared": True},
    "cancel_unknown_topic": {"error_class": "UnknownTopicOrPartitionException", "refused_by_tool": True,
                             "sent": False, "reason": "no_active_reassignment", "throttles_cleared": False},
    "cancel_in_flight": {"error_class": None, "sent": True, "refused_by_tool": False,
                         "throttles_cleared": True},
    "verify_1": {"state": "complete", "throttles_cleared": True},
    "verify_in_progress": {"state": "in_progress", "throttles_cleared": False},
    "verify_unknown_topic": {"state": "differs", "current": [], "throttles_cleared": False,
                             "error_class": "UnknownTopicOrPartitionException"},
    "verify_after_cancel": {"state": "differs", "current": [1, 2, 3], "throttles_cleared": False,
                            "error_class": "TimeoutException"},
    "verify_after_cancel_preserve": {"state": "differs", "current": [1, 2, 3], "throttles_cleared": False},
}
# the releases differ here: 3.9.2's --cancel skips a reassignment that only adds replicas (its filter lost a
# negation in the Java rewrite, KAFKA-14595; apache/kafka#20003), so it stays in flight
BY_VERSION = {
    ("3.9.2", "cancel_pure_addition"): {"error_class": "NoReassignmentInProgressException", "sent": False,
                                        "refused_by_tool": True, "reason": "no_active_reassignment"},
    ("4.0.2", "cancel_pure_addition"): {"error_class": None, "sent": True, "refused_by_tool": False},
    ("4.4.0", "cancel_pure_addition"): {"error_class": None, "sent": True, "refused_by_tool": False},
    ("3.9.2", "verify_pure_addition"): {"state": "in_progress"},
    ("4.4.0", "verify_pure_addition"): {"state": "differs", "current": [1, 2, 3]},
}


def _cases():
    for v in VERSIONS:
        cases = json.loads((FIXTURES / v / "cases.json").read_text())
        for name, case in cases.items():
            if case["action"] != "configs":
                yield pytest.param(v, name, case, id=f"{v}-{name}")


def _parse(v: str, name: str, case: dict) -> dict:
    out = (FIXTURES / v / f"{name}.out").read_text()
    fn = {"execute": RT.parse_execute, "cancel": RT.parse_cancel, "verify": RT.parse_verify}[case["action"]]
    return fn(out, "", case["exit_code"], case["topic"], case["partition"])


@pytest.mark.parametrize(("v", "name", "case"), list(_cases()))
def test_captured_output_reads_as_expected(v, name, case):
    want = BY_VERSION.get((v, name), EXPECTED.get(name))
    assert want is not None, f"no expectation for {v} {name}"
    got = _parse(v, name, case)
    assert {k: got.get(k, "<absent>") for k in want} == want


def test_every_fixture_has_a_readme_line():
    for v in VERSIONS:
        readme = (FIXTURES / v / "README.md").read_text()
        for f in (FIXTURES / v).glob("*.out"):
            assert f"`{f.name}`" in readme, (v, f.name)


def test_rollback_json_any_up_to_4_0_then_the_replicas_log_dirs():
    """KAFKA-19582: the rollback plan names each replica's current log dir (4.4.0), not "any" (3.9.2,
    4.0.2)."""
    for v in VERSIONS:
        case = {"action": "execute", "exit_code": 0, "topic": "ta", "partition": 0}
        got = _parse(v, "execute_throttle", case)
        (part,) = got["rollback"]["partitions"]
        assert (part["topic"], part["partition"], part["replicas"]) == ("ta", 0, [1, 2, 3])
        if v == "4.4.0":
            assert [re.sub(r".*/(broker-\d)/data$", r"\1", d) for d in part["log_dirs"]] == \
                ["broker-1", "broker-2", "broker-3"]
        else:
            assert part["log_dirs"] == ["any", "any", "any"]


def test_the_strings_read_are_the_same_in_each_release():
    """Besides the rollback's log dirs, the cancel filter and the package of AdminCommandFailedException
    (org.apache.kafka.server.common in 3.9.2, org.apache.kafka.tools in 4.4.0), the outputs are equal."""
    def norm(text: str) -> str:
        text = re.sub(r'"log_dirs":\[[^\]]*\]', "", text)
        text = re.sub(r"org\.apache\.kafka\.(server\.common|tools)\.AdminCommandFailedException",
                      "AdminCommandFailedException", text)
        return "\n".join(ln for ln in text.splitlines() if not ln.startswith("\tat "))
    for name in ("execute_throttle", "execute_dup", "verify_after_cancel"):
        assert len({norm((FIXTURES / v / f"{name}.out").read_text()) for v in VERSIONS}) == 1, name


def test_throttle_configs_as_kafka_configs_prints_them():
    for v in VERSIONS:
        parsed = RT.parse_configs((FIXTURES / v / "throttles_broker4.out").read_text())
        assert parsed == {"broker 4": {"follower.replication.throttled.rate": "1000000",
                                       "leader.replication.throttled.rate": "1000000"}}


# -- outputs the driver must not read as an answer -----------------------------------------------------------


def _text(v: str, name: str) -> str:
    return (FIXTURES / v / f"{name}.out").read_text()


@pytest.mark.parametrize("v", VERSIONS)
def test_broken_outputs_are_refused_not_guessed(v):
    started = _text(v, "execute_throttle")
    with pytest.raises(ValueError, match="not ta-1"):  # the tool started another partition
        RT.parse_execute(started, "", 0, "ta", 1)
    cut = started.split('"replicas"')[0]  # the rollback JSON cut short
    with pytest.raises(ValueError, match="rollback JSON"):
        RT.parse_execute(cut, "", 0, "ta", 0)
    with pytest.raises(ValueError, match="no answer"):  # a clean exit without the line that says it started
        RT.parse_execute(started.replace("Successfully started", "Started"), "", 0, "ta", 0)
    verified = _text(v, "verify_1").replace("is completed.", "is complete.")
    with pytest.raises(ValueError, match="no state of ta-0"):
        RT.parse_verify(verified, "", 0, "ta", 0)
    with pytest.raises(ValueError, match="no state of tb-0"):  # the file's partition is not the one asked
        RT.parse_verify(_text(v, "verify_1"), "", 0, "tb", 0)
    with pytest.raises(ValueError, match="no answer"):
        RT.parse_cancel('Exception in thread "main" java.lang.NoClassDefFoundError: joptsimple/OptionSpec\n',
                        "", 1, "tc", 0)
    # usage errors go to stderr: none of the tool's answers
    with pytest.raises(ValueError, match="no answer"):
        RT.parse_execute("", "Command must include exactly one action\n", 1, "ta", 0)


def test_a_variant_reading_the_throttle_lines_anchored_is_caught(monkeypatch):
    """--cancel prints "None of the specified partition moves are active." without a newline, so the throttle
    line starts mid-line: a variant anchored at line starts reads the cancel's throttles as kept."""
    def anchored(stdout: str, exit_code: int) -> bool:
        return exit_code == 0 and bool(re.search(r"^Clearing broker-level throttles", stdout, re.MULTILINE))
    case = {"action": "cancel", "exit_code": 0, "topic": "tc", "partition": 0}
    assert _parse("4.4.0", "cancel_in_flight", case)["throttles_cleared"] is True
    monkeypatch.setattr(RT, "_throttles_cleared", anchored)
    assert _parse("4.4.0", "cancel_in_flight", case)["throttles_cleared"] is not True


def test_kafka_messages_name_their_exception():
    assert RT.kafka_error_class("The manual partition assignment includes broker 9, but no such broker is "
                                "registered.") == "InvalidReplicaAssignmentException"
    assert RT.kafka_error_class("No partition reassignment is in progress.") == \
        "NoReassignmentInProgressException"
    assert RT.kafka_error_class("A partition reassignment is in progress.") == \
        "ReassignmentInProgressException"
    assert RT.kafka_error_class("Replica assignment has brokers that are not alive. Replica list: [4], live "
                                "broker list: [1, 2, 3]") == "InvalidReplicaAssignmentException"
    assert RT.kafka_error_class("Unable to find partition tb:5.") == "UnknownTopicOrPartitionException"
    assert RT.kafka_error_class("Something Kafka never said") == "unrecognized"


def test_a_kafka_refusal_of_the_request_is_read_from_its_message():
    """Kafka's per-partition refusal as executeAssignment prints it (`Error reassigning partition(s):` then
    `<tp>: <message>`; the format of 3.9.2's and 4.4.0's source), here with the ZooKeeper controller's
    message."""
    out = _text("4.4.0", "execute_rf_change_disallowed").replace(
        "The replication factor is changed from 3 to 4", "A partition reassignment is in progress.")
    got = RT.parse_execute(out, "", 1, "tb", 0)
    assert (got["error_class"], got["sent"], got["refused_by_tool"]) == \
        ("ReassignmentInProgressException", True, False)
    assert got["rollback"]["partitions"][0]["replicas"] == [1, 2, 3]


# -- the plan ------------------------------------------------------------------------------------------------


def test_plan_json_is_the_tools_format(tmp_path):
    path = RT.write_plan(tmp_path, "t.x-1", 3, [4, 1, 2])
    assert path.parent == tmp_path
    assert json.loads(path.read_text()) == {"version": 1, "partitions": [
        {"topic": "t.x-1", "partition": 3, "replicas": [4, 1, 2], "log_dirs": ["any", "any", "any"]}]}
    assert json.loads(RT.plan_json("t", 0, []))["partitions"][0]["log_dirs"] == []
    for bad in (("", 0, [1]), ("t", -1, [1]), ("t", True, [1]), ("t", 0, [1, "2"]), ("t", 0, "1,2")):
        with pytest.raises(ValueError):
            RT.plan_json(*bad)


# -- running: a tool that hangs, or cannot start -----------------------------------------------------------


def _fake_cluster(tmp_path: Path, argv: list[str]):
    return SimpleNamespace(directory=tmp_path, spec=SimpleNamespace(version="4.4.0"), bootstrap="127.0.0.1:1",
                           tool_argv=lambda main, args: list(argv))


def test_a_tool_that_does_not_end_is_killed_with_its_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pid_file}; echo started; wait"
    cluster = _fake_cluster(tmp_path, ["sh", "-c", script])
    with pytest.raises(ClusterError,
                       match=r"Kafka 4\.4\.0: .*did not end within 1 s \(killed\)[\s\S]*started"):
        RT.execute(cluster, "t", 0, [1, 2, 3], timeout_s=1)
    child = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # the tool's own child is gone too: no orphan
        for _ in range(50):  # reaped by its parent's group kill; a zombie only briefly
            os.kill(child, 0)
            time.sleep(0.1)


def test_a_tool_that_cannot_start_names_the_release_and_its_output(tmp_path):
    script = "echo 'Error: Could not find or load main class org.apache.kafka.tools.reassign.X' >&2; exit 1"
    cluster = _fake_cluster(tmp_path, ["sh", "-c", script])
    with pytest.raises(ClusterError, match=r"Kafka 4\.4\.0: the reassignment tool \(--verify\) did not run "
                                           r"\(exit 1\)[\s\S]*Could not find or load main class"):
        RT.verify(cluster, "t", 0, [1, 2, 3])
    cluster = _fake_cluster(tmp_path, [str(tmp_path / "no-such-java")])
    with pytest.raises(ClusterError, match="could not start"):
        RT.cancel(cluster, "t", 0)


def test_the_admin_timeout_goes_to_the_tool_as_its_command_config(tmp_path):
    seen = {}

    def argv(main, args):
        seen["args"] = args
        return [sys.executable, "-c", ("print('Status of partition reassignment:\\n"
                                      "Reassignment of partition t-0 is still in progress.')")]
    cluster = SimpleNamespace(directory=tmp_path, spec=SimpleNamespace(version="3.9.2"), bootstrap="b:1",
                              tool_argv=argv)
    assert RT.verify(cluster, "t", 0, [1, 2], api_timeout_ms=8000)["state"] == "in_progress"
    config = Path(seen["args"][seen["args"].index("--command-config") + 1]).read_text()
    assert "default.api.timeout.ms=8000" in config and "request.timeout.ms=8000" in config
    with pytest.raises(ValueError, match="api_timeout_ms"):
        RT.verify(cluster, "t", 0, [1, 2], api_timeout_ms=10)
