"""Kafka's own reassignment tool driven against a real cluster (issue 24, item 2; docs/scenarios.md "Kafka's
reassignment tool"): `kafka-reassign-partitions.sh`, i.e. `org.apache.kafka.tools.reassign.
ReassignPartitionsCommand` of the kafka-tools artifact, run as a JVM on the cluster's broker classpath.

    reply = execute(cluster, "t", 0, [2, 3, 4], throttle_bps=1_000_000)  # --execute --additional --throttle
    reply = cancel(cluster, "t", 0)                                       # --cancel
    state = verify(cluster, "t", 0, [2, 3, 4])                            # --verify (clears throttles)

`execute` and `cancel` answer in the shape of the Admin client's per-partition answer that run.py compares
(`{"error_class": None}` or `{"error_class": ..., "error": ...}`), plus what the tool adds: `refused_by_tool`
(it refused locally, before sending AlterPartitionReassignments), `reason` (which local check), `sent`, the
exit code, the tails of stdout and stderr, the rollback JSON `--execute` prints and the throttle it set.

The tool never prints the class of Kafka's per-partition refusals, only `<topic>-<p>: <message>`
(executeAssignment / cancelAssignment, "Error reassigning partition(s):"), so the class is identified from the
controller's message (KAFKA_MESSAGES); a message the table does not know is `error_class: "unrecognized"`.
Refusals the tool throws itself (main's catch of Throwable) print the exception and its stack trace, and the
class is read from there. Sources: kafka-tools 3.9.2 (sources jar) and 4.4.0 (its classes; no sources jar is
published) — the strings parsed below are identical in 3.9.2, 4.0.2 and 4.4.0
(tests/fixtures/reassign_tool/).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kreassign.checker.cluster import Cluster, ClusterError, procs
from kreassign.checker.implementations.kafka import releases
from kreassign.spec import kafka_releases

TOOL_CLASS = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
#: kafka-configs.sh's class, newest first: Scala `kafka.admin.ConfigCommand` in 3.9 and 4.0, the Java one of
#: kafka-tools in 4.4.0 (4.0.2's tools jar has none)
CONFIG_CLASSES = ("org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand")
TAIL_LINES = 20
#: the throttle configs the tool sets and --verify / --cancel clear (ReassignPartitionsCommand
#: BROKER_LEVEL_THROTTLES, TOPIC_LEVEL_THROTTLES)
BROKER_THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                    "replica.alter.log.dirs.io.max.bytes.per.second")
TOPIC_THROTTLES = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")

#: Kafka's per-partition refusals, which the tool prints as messages only, by the message the controller
#: writes: KRaft ReplicationControlManager (validateManualPartitionAssignment, cancelPartitionReassignment,
#: KIP-860's check in 4.1+), the ZooKeeper controller of 3.9 (KafkaController.validateReplicas, ...), and the
#: default messages of org.apache.kafka.common.protocol.Errors when the controller gives none
KAFKA_MESSAGES: tuple[tuple[str, str], ...] = (
    (r"The manual partition assignment includes", "InvalidReplicaAssignmentException"),
    (r"Unable to revert partition assignment", "InvalidReplicaAssignmentException"),
    (r"Replica assignment (is invalid|has brokers that are not alive)", "InvalidReplicaAssignmentException"),
    (r"(Empty replica list specified|Duplicate replica ids|Invalid broker id) in",
     "InvalidReplicaAssignmentException"),
    (r"The replication factor is changed from", "InvalidReplicationFactorException"),
    (r"No partition reassignment is in progress", "NoReassignmentInProgressException"),
    (r"A partition reassignment is in progress", "ReassignmentInProgressException"),
    ((r"(This server does not host this topic-partition|The partition does not exist"
      r"|No such (topic|partition)|Unable to find (a topic named |partition \S+:\d+\.)"
      r"|The topic '.*' does not exist)"),
     "UnknownTopicOrPartitionException"),
    (r"This is not the correct controller", "NotControllerException"),
    (r"(The request timed out|Timed out waiting)", "TimeoutException"),
)

#: the tool's own checks before it sends AlterPartitionReassignments (kafka-tools 3.9.2 and 4.4.0,
#: ReassignPartitionsCommand): (message, reason, the Kafka exception class the reply names when the tool
#: printed none). parsePartitionReassignmentData, parseExecuteAssignmentArgs, executeAssignment's
#: --additional check, verifyBrokerIds (DescribeCluster: in KRaft the unfenced brokers only),
#: getReplicaAssignmentForPartitions / getReplicasForPartitions (KAFKA-16455), cancelAssignment's filter of
#: ListPartitionReassignments
LOCAL_CHECKS: tuple[tuple[str, str, str | None], ...] = (
    (r"Unknown broker id -?\d+", "unknown_broker", None),
    (r"Partition replica lists may not contain duplicate entries", "duplicate_replicas", None),
    (r"Partition replica list cannot be empty", "empty_replicas", None),
    (r"Partition reassignment list cannot be empty", "empty_plan", None),
    (r"Partition reassignment contains duplicate topic partitions", "duplicate_partitions", None),
    (r"Size of replicas list .* is different from size of log dirs list", "log_dirs_size", None),
    (r"Not supported version field value", "plan_version", None),
    (r"Unable to find partition: ", "unknown_partition", None),
    (r"Topic .+ not found\.", "unknown_topic", None),
    (r"Trying to reassign a topic partition .* with 0 replicas", "no_replicas", None),
    (r"Cannot execute because there is an existing partition assignment", "existing_reassignment",
     "ReassignmentInProgressException"),
    (r"None of the specified partition reassignments are active\.", "no_active_reassignment",
     "NoReassignmentInProgressException"),
)
_WRAPPERS = {"ExecutionException", "CompletionException", "RuntimeException"}
_CLASS = re.compile(r"\b((?:[a-z_][\w$]*\.)+([A-Z][\w$]*(?:Exception|Error)))(?=:|\s|$)")
_ROLLBACK_HEAD = "Current partition replica assignment"


class ReassignToolError(ClusterError):
    """The tool did not run as a tool: it could not start, it timed out (and was killed), or it printed
    nothing this driver recognises (exit 3, like any cluster failure)."""


@dataclass(frozen=True)
class ToolRun:
    """One run of the tool: its argv, exit code, output and time."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    seconds: float


# -- plans ------------------------------------------------------------------------------------------------


def plan_json(topic: str, partition: int, replicas: list[int]) -> str:
    """The tool's reassignment JSON (version 1) for one partition, each replica's log dir "any"."""
    if not isinstance(topic, str) or not topic:
        raise ValueError(f"topic: a non-empty name, not {topic!r}")
    if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
        raise ValueError(f"partition: a partition index, not {partition!r}")
    if not isinstance(replicas, (list, tuple)) or not all(
            isinstance(b, int) and not isinstance(b, bool) for b in replicas):
        raise ValueError(f"replicas: a list of broker ids, not {replicas!r}")
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": partition, "replicas": list(replicas),
                                          "log_dirs": ["any"] * len(replicas)}]}
    return json.dumps(plan)


def write_plan(directory: Path, topic: str, partition: int, replicas: list[int]) -> Path:
    """The plan in a new file of `directory`; its path."""
    fd, name = tempfile.mkstemp(prefix="plan-", suffix=".json", dir=directory)
    with open(fd, "w", encoding="utf-8") as f:
        f.write(plan_json(topic, partition, replicas))
    return Path(name)


# -- running ----------------------------------------------------------------------------------------------


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


def _work_dir(cluster: Cluster) -> Path:
    if cluster.directory is None:
        raise ClusterError("the cluster is not started (or is closed)")
    d = cluster.directory / "reassign-tool"
    d.mkdir(exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="run-", dir=d))


def run_tool(cluster: Cluster, main: str, args: list[str], work: Path, timeout_s: float) -> ToolRun:
    """Run `main` of the cluster's release with `args` as a JVM (the cluster's JVM options and marker, its own
    process group); killed, with its group, if it outlives `timeout_s` or the caller is interrupted."""
    argv = cluster.tool_argv(main, args)
    out, err = work / "stdout.txt", work / "stderr.txt"
    began = time.monotonic()
    with open(out, "wb") as o, open(err, "wb") as e:
        try:
            proc = subprocess.Popen(argv, cwd=work, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                    close_fds=True, process_group=0)
        except OSError as ex:
            raise ReassignToolError(f"Kafka {cluster.spec.version}: {main} could not start: {ex}") from None
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        if proc.poll() is None:  # timeout, Ctrl-C, any exception: no JVM outlives the call
            procs.kill_and_reap(proc)
    run = ToolRun(tuple(args), -1 if code is None else code, out.read_text("utf-8", "replace"),
                  err.read_text("utf-8", "replace"), time.monotonic() - began)
    if code is None:
        raise ReassignToolError(f"Kafka {cluster.spec.version}: {main} {' '.join(args[:6])} ... did not end "
                                f"within {timeout_s:.0f} s (killed)" + _tails(run))
    return run


def _tails(run: ToolRun) -> str:
    return (f"\n--- last lines of its stdout ---\n{_tail(run.stdout)}" if run.stdout.strip() else "") + \
        (f"\n--- last lines of its stderr ---\n{_tail(run.stderr)}" if run.stderr.strip() else "")


def _cannot_run(version: str, run: ToolRun, what: str) -> ReassignToolError:
    return ReassignToolError(f"Kafka {version}: the reassignment tool ({what}) did not run (exit "
                             f"{run.exit_code}) or printed nothing this driver recognises" + _tails(run))


def _base_args(cluster: Cluster, plan: Path, api_timeout_ms: int | None) -> list[str]:
    """The connection and the plan; with `api_timeout_ms`, the tool's Admin client gives up on a call after
    that long (default.api.timeout.ms; Kafka's default is 60 s: a broker of the plan that is down makes
    clearing the throttles wait that long, then fail)."""
    args = ["--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", str(plan)]
    if api_timeout_ms is not None:
        if isinstance(api_timeout_ms, bool) or not isinstance(api_timeout_ms, int) or api_timeout_ms < 1000:
            raise ValueError(f"api_timeout_ms: milliseconds (>= 1000), not {api_timeout_ms!r}")
        config = plan.with_name("admin.properties")
        config.write_text(f"default.api.timeout.ms={api_timeout_ms}\n"
                          f"request.timeout.ms={min(api_timeout_ms, 30000)}\n", encoding="utf-8")
        args += ["--command-config", str(config)]
    return args


def execute(cluster: Cluster, topic: str, partition: int, target: list[int], *,
            throttle_bps: int | None = None, allow_rf_change: bool = True, api_timeout_ms: int | None = None,
            timeout_s: float = 90) -> dict[str, Any]:
    """`--execute --additional [--throttle N] [--disallow-replication-factor-change]` of one partition's
    reassignment to `target`; the reply (see parse_execute). --additional: the tool otherwise refuses while
    any reassignment of the cluster runs. `allow_rf_change=False` asks the controller to refuse a change of
    the replication factor (KIP-860, KAFKA-14121: Kafka 4.1 and newer)."""
    work = _work_dir(cluster)
    plan = write_plan(work, topic, partition, target)
    args = _base_args(cluster, plan, api_timeout_ms) + ["--execute", "--additional"]
    if not allow_rf_change:
        if not kafka_releases.release(cluster.spec.version).since("4.1"):
            raise ValueError(f"allow_rf_change=False needs Kafka 4.1 or newer (KIP-860), not "
                             f"{cluster.spec.version}")
        args.append("--disallow-replication-factor-change")
    if throttle_bps is not None:
        if isinstance(throttle_bps, bool) or not isinstance(throttle_bps, int) or throttle_bps < 0:
            raise ValueError(f"throttle_bps: bytes per second (>= 0), not {throttle_bps!r}")
        args += ["--throttle", str(throttle_bps)]
    run = run_tool(cluster, TOOL_CLASS, args, work, timeout_s)
    try:
        return {**parse_execute(run.stdout, run.stderr, run.exit_code, topic, partition), **_run_fields(run)}
    except ValueError:
        raise _cannot_run(cluster.spec.version, run, "--execute") from None


def cancel(cluster: Cluster, topic: str, partition: int, *, preserve_throttles: bool = False,
           api_timeout_ms: int | None = None, timeout_s: float = 90) -> dict[str, Any]:
    """`--cancel` of one partition's reassignment (the plan names the partition; its replicas are not read);
    without `preserve_throttles` the tool also clears every throttle, as --verify does when all is done."""
    work = _work_dir(cluster)
    plan = write_plan(work, topic, partition, [])
    args = _base_args(cluster, plan, api_timeout_ms) + ["--cancel"]
    args += ["--preserve-throttles"] if preserve_throttles else []
    run = run_tool(cluster, TOOL_CLASS, args, work, timeout_s)
    try:
        return {**parse_cancel(run.stdout, run.stderr, run.exit_code, topic, partition), **_run_fields(run)}
    except ValueError:
        raise _cannot_run(cluster.spec.version, run, "--cancel") from None


def verify(cluster: Cluster, topic: str, partition: int, target: list[int], *,
           preserve_throttles: bool = False, api_timeout_ms: int | None = None,
           timeout_s: float = 90) -> dict[str, Any]:
    """`--verify` of one partition against `target`: its state as the tool reports it (see parse_verify)."""
    work = _work_dir(cluster)
    plan = write_plan(work, topic, partition, target)
    args = _base_args(cluster, plan, api_timeout_ms) + ["--verify"]
    args += ["--preserve-throttles"] if preserve_throttles else []
    run = run_tool(cluster, TOOL_CLASS, args, work, timeout_s)
    try:
        return {**parse_verify(run.stdout, run.stderr, run.exit_code, topic, partition), **_run_fields(run)}
    except ValueError:
        raise _cannot_run(cluster.spec.version, run, "--verify") from None


def _run_fields(run: ToolRun) -> dict[str, Any]:
    return {"exit_code": run.exit_code, "stdout_tail": _tail(run.stdout), "stderr_tail": _tail(run.stderr),
            "seconds": round(run.seconds, 2)}


# -- reading the tool's output ----------------------------------------------------------------------------


def kafka_error_class(message: str) -> str:
    """The Kafka exception a controller's per-partition message stands for ("unrecognized" if none)."""
    for pattern, cls in KAFKA_MESSAGES:
        if re.match(pattern, message.strip()):
            return cls
    return "unrecognized"


def _exception_class(text: str) -> str | None:
    """The first exception class in a printed exception that is not a wrapper (ExecutionException, ...)."""
    for m in _CLASS.finditer(text):
        if m.group(2) not in _WRAPPERS:
            return m.group(2)
    return None


def _strip_classes(message: str) -> str:
    """A Throwable's message without the `qualified.Class: ` prefixes its causes' toString() adds."""
    while (m := re.match(r"(?:[a-z_][\w$]*\.)+[A-Z][\w$]*: ", message)):
        message = message[m.end():]
    return message


def _local_check(message: str) -> tuple[str, str | None] | None:
    for pattern, reason, cls in LOCAL_CHECKS:
        if re.search(pattern, message):
            return reason, cls
    return None


def _tool_failure(stdout: str) -> dict[str, Any] | None:
    """main's `catch (Throwable e)`: "Error: <message>" then the stack trace; None if there is none. A local
    check's refusal, or a failure of a call the tool made before sending anything."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Error: "):
            message = _strip_classes(line[len("Error: "):])
            trace = "\n".join(lines[i + 1:i + 40])
            cls = _exception_class(trace) or _exception_class(line)
            local = _local_check(message)
            reply = {"error_class": cls or "unrecognized", "error": message, "sent": False,
                     "refused_by_tool": local is not None}
            if local:
                reply["reason"] = local[0]
            return reply
    return None


def _partition_errors(stdout: str, head: str) -> dict[str, str]:
    """The `<topic>-<p>: <message>` lines under `head` (the tool's TerseException for Kafka's refusals)."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(head):
            out = {}
            for follow in lines[i + 1:]:
                m = re.match(r"(\S+-\d+): (.*)$", follow)
                if not m:
                    break
                out[m.group(1)] = m.group(2)
            return out
    return {}


def _names(listed: str) -> set[str]:
    return {s.strip() for s in listed.split(",") if s.strip()}


def parse_rollback(stdout: str) -> dict[str, Any] | None:
    """The JSON `--execute` prints after "Current partition replica assignment" (the plan that undoes it:
    log dirs "any" up to 4.0, each replica's current directory from 4.2, KAFKA-19582); None if absent."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == _ROLLBACK_HEAD:
            for follow in lines[i + 1:i + 4]:
                if follow.strip().startswith("{"):
                    try:
                        value = json.loads(follow)
                    except json.JSONDecodeError as e:
                        raise ValueError(f"the rollback JSON does not parse: {e}") from None
                    if not isinstance(value, dict) or value.get("version") != 1 \
                            or not isinstance(value.get("partitions"), list):
                        raise ValueError(f"the rollback JSON is not a version 1 plan: {follow[:200]}")
                    return value
            raise ValueError(f"no JSON after {_ROLLBACK_HEAD!r}")
    return None


def parse_execute(stdout: str, stderr: str, exit_code: int, topic: str, partition: int) -> dict[str, Any]:
    """The reply of `--execute` for `topic-partition`; ValueError if the output is none this driver knows."""
    tp = f"{topic}-{partition}"
    rollback = parse_rollback(stdout)
    throttle = re.search(r"^The inter-broker throttle limit was set to (\d+) B/s$", stdout, re.MULTILINE)
    extra = {"rollback": rollback, "throttle_bps": int(throttle.group(1)) if throttle else None}
    started = re.search(r"^Successfully started partition reassignments? for (.*)$", stdout, re.MULTILINE)
    if started and exit_code == 0:
        if tp not in _names(started.group(1)):
            raise ValueError(f"the tool started {started.group(1)!r}, not {tp}")
        return {"error_class": None, "sent": True, "refused_by_tool": False, **extra}
    errors = _partition_errors(stdout, "Error reassigning partition(s):")
    if exit_code != 0 and tp in errors:
        return {"error_class": kafka_error_class(errors[tp]), "error": errors[tp], "sent": True,
                "refused_by_tool": False, **extra}
    if exit_code != 0:
        failure = _tool_failure(stdout)
        if failure is not None:
            return {**failure, **extra}
        terse = _local_check(stdout)
        if terse is not None and terse[1] is not None:  # a TerseException of a local check: a message only
            return {"error_class": terse[1], "error": _first_line_matching(stdout, terse[0]), "sent": False,
                    "refused_by_tool": True, "reason": terse[0], **extra}
    raise ValueError(f"--execute (exit {exit_code}): no answer for {tp} in the tool's output")


def _first_line_matching(stdout: str, reason: str) -> str:
    pattern = next(p for p, r, _ in LOCAL_CHECKS if r == reason)
    return next((ln.strip() for ln in stdout.splitlines() if re.search(pattern, ln)), reason)


def _throttles_cleared(stdout: str, exit_code: int) -> bool:
    # clearAllThrottles prints both lines before its calls, so only a clean exit says they were cleared;
    # --cancel prints "None of the specified partition moves are active." without a newline
    # (System.out.print), so the first line starts mid-line: searched, not anchored
    return exit_code == 0 and "Clearing broker-level throttles on broker" in stdout \
        and "Clearing topic-level throttles on topic" in stdout


def parse_cancel(stdout: str, stderr: str, exit_code: int, topic: str, partition: int) -> dict[str, Any]:
    """The reply of `--cancel` for `topic-partition`; ValueError if the output is none this driver knows.
    The tool cancels only what ListPartitionReassignments lists for the file's partitions (3.9.2: and not a
    reassignment that only adds replicas: its filter lost a negation in the Java rewrite, KAFKA-14595, and
    apache/kafka#20003 restored it, in 4.0.2); otherwise it sends nothing and says none is active,
    which the reply gives as NoReassignmentInProgressException refused by the tool. Clearing the throttles
    comes after and may fail on its own (an unknown topic, a broker down): then its error is the reply's."""
    tp = f"{topic}-{partition}"
    extra = {"throttles_cleared": _throttles_cleared(stdout, exit_code)}
    failure = _tool_failure(stdout) if exit_code != 0 else None
    done = re.search(r"^Successfully cancelled partition reassignments? for: (.*)$", stdout, re.MULTILINE)
    if done and tp in _names(done.group(1)):
        reply = {"error_class": None, "sent": True, "refused_by_tool": False, **extra}
        if failure is not None:  # cancelled, then clearing the throttles failed
            reply["after"] = {"error_class": failure["error_class"], "error": failure["error"]}
        return reply
    if re.search(r"^None of the specified partition reassignments are active\.", stdout, re.MULTILINE):
        if failure is None and exit_code == 0:
            return {"error_class": "NoReassignmentInProgressException",
                    "error": "None of the specified partition reassignments are active.", "sent": False,
                    "refused_by_tool": True, "reason": "no_active_reassignment", **extra}
        if failure is not None:
            return {**failure, "refused_by_tool": True, "reason": "no_active_reassignment", **extra}
    errors = _partition_errors(stdout, "Error cancelling partition reassignment")
    if exit_code != 0 and tp in errors:
        return {"error_class": kafka_error_class(errors[tp]), "error": errors[tp], "sent": True,
                "refused_by_tool": False, **extra}
    if failure is not None:
        return {**failure, **extra}
    raise ValueError(f"--cancel (exit {exit_code}): no answer for {tp} in the tool's output")


def parse_verify(stdout: str, stderr: str, exit_code: int, topic: str, partition: int) -> dict[str, Any]:
    """`--verify`'s state of `topic-partition`: "complete" (no reassignment and the replicas are the target),
    "in_progress" (a reassignment is listed for it), "differs" (none listed and the replicas, in `current`,
    are not the target: cancelled, overridden, or the topic is gone: `current` empty), or "error" (the tool
    failed before it printed a state). `throttles_cleared`: the tool cleared every throttle — it tries when
    no reassignment at all runs in the cluster (not only the file's), and that can fail after the state was
    printed (a broker of the plan down, an unknown topic): then `error_class` and `error` say why.
    ValueError if the output is none this driver knows."""
    tp = re.escape(f"{topic}-{partition}")
    reply: dict[str, Any] = {"throttles_cleared": _throttles_cleared(stdout, exit_code)}
    failure = _tool_failure(stdout) if exit_code != 0 else None
    if failure is not None:
        reply.update(error_class=failure["error_class"], error=failure["error"])
    elif exit_code != 0:
        raise ValueError(f"--verify (exit {exit_code}): no answer in the tool's output")
    if not re.search(r"^Status of partition reassignment:$", stdout, re.MULTILINE):
        if failure is not None:
            return {"state": "error", **reply}
        raise ValueError("--verify: no 'Status of partition reassignment:' in the tool's output")
    if re.search(rf"^Reassignment of partition {tp} is completed\.$", stdout, re.MULTILINE):
        return {"state": "complete", **reply}
    if re.search(rf"^Reassignment of partition {tp} is still in progress\.$", stdout, re.MULTILINE):
        return {"state": "in_progress", **reply}
    m = re.search(rf"^There is no active reassignment of partition {tp}, but replica set is ([\d,]*) rather "
                  rf"than ([\d,]*)\.$", stdout, re.MULTILINE)
    if m:
        return {"state": "differs", "current": [int(b) for b in m.group(1).split(",") if b], **reply}
    raise ValueError(f"--verify: no state of {topic}-{partition} in the tool's output")


# -- throttle configs, read with kafka-configs.sh ---------------------------------------------------------


@cache
def config_class(lib: Path) -> str:
    """kafka-configs.sh's main class in a release's lib directory (whichever jar holds it)."""
    wanted = {c.replace(".", "/") + ".class": c for c in CONFIG_CLASSES}
    found: set[str] = set()
    for jar in sorted(lib.glob("kafka*.jar")):
        try:
            with zipfile.ZipFile(jar) as z:
                found |= {wanted[n] for n in z.namelist() if n in wanted}
        except (OSError, zipfile.BadZipFile):
            continue
    for c in CONFIG_CLASSES:
        if c in found:
            return c
    raise ClusterError(f"no ConfigCommand class in {lib} (looked for {', '.join(CONFIG_CLASSES)})")


def parse_configs(stdout: str) -> dict[str, dict[str, str]]:
    """`kafka-configs.sh --describe` output as {entity: {key: value}} ("Dynamic configs for topic t are:",
    "Dynamic configs for broker 1 are:", then `  key=value sensitive=... synonyms={...}` lines)."""
    out: dict[str, dict[str, str]] = {}
    entity = None
    for line in stdout.splitlines():
        m = re.match(r"^(?:Dynamic )?[Cc]onfigs for (topic|broker) (\S+) are:$", line)
        if m:
            entity = f"{m.group(1)} {m.group(2)}"
            out[entity] = {}
            continue
        m = re.match(r"^\s+([\w.]+)=(.*?) sensitive=", line)
        if m and entity is not None:
            out[entity][m.group(1)] = m.group(2)
    return out


def describe_throttles(cluster: Cluster, topic: str, brokers: list[int], *, timeout_s: float = 60
                       ) -> dict[str, dict[str, str]]:
    """The throttle configs now set on `topic` and on each of `brokers` (absent keys are unset), as
    kafka-configs.sh --describe reports them: {"topic": {...}, "broker 1": {...}, ...}."""
    release = releases.cached(cluster.spec.version, "broker")  # the jars the cluster runs on
    if release is None:
        raise ClusterError(f"Kafka {cluster.spec.version}: the brokers' jars are not fetched")
    main = config_class(release.lib)
    out: dict[str, dict[str, str]] = {}
    runs = [("topics", topic, "topic " + topic)] + [("brokers", str(b), f"broker {b}") for b in brokers]
    for kind, name, key in runs:
        work = _work_dir(cluster)
        run = run_tool(cluster, main, ["--bootstrap-server", cluster.bootstrap, "--describe", "--entity-type",
                                       kind, "--entity-name", name], work, timeout_s)
        parsed = parse_configs(run.stdout)
        if run.exit_code != 0 or key not in parsed:
            raise ReassignToolError(f"Kafka {cluster.spec.version}: {main} --describe {kind} {name} failed "
                                    f"(exit {run.exit_code})" + _tails(run))
        wanted = TOPIC_THROTTLES if kind == "topics" else BROKER_THROTTLES
        out["topic" if kind == "topics" else key] = {k: v for k, v in parsed[key].items() if k in wanted}
    return out


__all__ = ["BROKER_THROTTLES", "CONFIG_CLASSES", "KAFKA_MESSAGES", "LOCAL_CHECKS", "TOOL_CLASS",
           "TOPIC_THROTTLES", "ReassignToolError", "ToolRun", "cancel", "config_class", "describe_throttles",
           "execute", "kafka_error_class", "parse_cancel", "parse_configs", "parse_execute", "parse_rollback",
           "parse_verify", "plan_json", "run_tool", "verify", "write_plan"]
