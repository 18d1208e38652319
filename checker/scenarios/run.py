"""A scenario replayed on a running cluster (docs/scenarios.md): the topic created with its initial replicas,
each step done through the cluster (Kafka's Admin client, signals to the JVMs), each wait asked as a condition
with its timeout, and after each step what the cluster reports, compared with what the reference says:

- the Admin answer to a request (accepted, or refused with which error) against the reference's answer to the
  same request on the model's state: a different code is a divergence of kind "response";
- the topic's state (replicas, ISR, leader, adding, removing, ELR) and the live brokers against the model's
  settled state, asked again until they agree or the step's settling time passes (metadata reaches brokers a
  moment apart): a state that never agrees is a divergence of kind "state".

A wait that times out ends the run: ScenarioWaitError (a ClusterError, exit 3) naming the step, the condition
and the tail of the implicated nodes' logs, with the result so far in `.result`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.cluster import AdminRequestError, Cluster, ClusterError
from kreassign.checker.config.bounds import bounds_from_mapping
from kreassign.spec.actions import ControllerFailover

from kreassign.outputs import write_text_atomically

from . import reassign_tool, znodes
from .conditions import check_of, observe
from .format import Scenario
from .mapping import EXCEPTION_CODES, code_name, expectation, model_for, replay_on_model, settle
from .pauses import Pauses, pause_ready

RESULT_FORMAT = "kreassign-scenario-result"
SETTLE_S = 15.0  # how long the state is asked again until it agrees with the model's, after the waits


class ScenarioWaitError(ClusterError):
    """A wait of a scenario did not hold within its timeout (exit 3); `.result` holds the run so far."""

    def __init__(self, message: str, result: RunResult):
        super().__init__(message)
        self.result = result


@dataclass
class RunResult:
    kafka_version: str
    topic: str
    seed: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    divergences: list[dict[str, Any]] = field(default_factory=list)
    waits_met: int = 0
    waits_total: int = 0
    failed: str | None = None
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed is None and not self.divergences and self.waits_met == self.waits_total

    def to_json(self) -> dict[str, Any]:
        return {"format": RESULT_FORMAT, "format_version": 1, "kafka_version": self.kafka_version,
                "topic": self.topic, "seed": self.seed, "ok": self.ok, "failed": self.failed,
                "waits_met": self.waits_met, "waits_total": self.waits_total, "divergences": self.divergences,
                "elapsed_s": round(self.elapsed_s, 2), "steps": self.steps}

    def write(self, path: str) -> None:
        write_text_atomically(path, json.dumps(self.to_json(), indent=1) + "\n")


def admin_code(reply: dict[str, Any]) -> int | None:
    """An Admin client's per-partition answer as Kafka's error code (0: accepted; -1: an exception the table
    does not know, named in the result)."""
    if reply.get("error_class") is None:
        return 0
    return EXCEPTION_CODES.get(reply["error_class"], -1)


def _check_cluster(cluster: Cluster, scenario: Scenario) -> None:
    spec = cluster.spec
    if spec.mode != scenario.mode or spec.version != scenario.kafka_version or spec.brokers != scenario.brokers:
        raise ClusterError(f"the scenario needs Kafka {scenario.kafka_version} ({scenario.mode}, "
                           f"{scenario.brokers} brokers), the cluster is {spec.describe()}")
    down = [n.name for n in cluster.nodes if n.role in ("broker", "controller") and n.state != "running"]
    if down:
        raise ClusterError(f"a scenario starts on a whole cluster; not running: {', '.join(down)}")
    missing = pause_ready(spec)
    if any(s.do == "pause" for s in scenario.steps) and missing:
        raise ClusterError(f"the scenario pauses followers: start its cluster with {', '.join(missing)}")


def restore(cluster: Cluster) -> None:
    """Start every controller and broker that is not running (after a scenario that ended early)."""
    for n in cluster.nodes:
        if n.role in ("controller", "broker") and n.state != "running":
            cluster.restart(n.name)


def run_scenario(cluster: Cluster, scenario: Scenario, *, result_path: str | None = None,
                 settle_s: float = SETTLE_S, log: Any = None, delete_topic: bool = False) -> RunResult:
    """Replay `scenario` on `cluster` (its own topic, which must not exist yet); the result, also written to
    `result_path` if given. The model's side is computed first (replay_on_model): a scenario the model refuses
    is a ScenarioError before anything touches the cluster. Throttles a pause set are removed however the run
    ends; `delete_topic` deletes the topic after a run whose every wait held (a cluster shared by many)."""
    expected = replay_on_model(scenario)
    _check_cluster(cluster, scenario)
    if scenario.mode == "zk":
        _check_zk_cluster(cluster)
    topic = scenario.topic
    result = RunResult(scenario.kafka_version, topic, scenario.seed,
                       waits_total=sum(len(s.waits) for s in scenario.steps))
    started = time.monotonic()
    say = log or (lambda _m: None)
    b = bounds_from_mapping(scenario.bounds)
    configs = {"min.insync.replicas": str(b.min_insync),
               "unclean.leader.election.enable": "true" if b.unclean else "false"}
    cluster.admin.create_topic(topic, assignment={p: list(r) for p, r in scenario.initial.items()},
                               configs=configs)
    in_sync = {p: len(r) for p, r in scenario.initial.items()}
    for p, n in in_sync.items():
        cluster.wait_for(f"{topic}-{p} created and in sync", _isr_at_least(cluster, topic, p, n), 60)
    pauses = Pauses(cluster, topic)
    try:
        for k, (step, exp) in enumerate(zip(scenario.steps, expected)):
            say(f"scenario {topic}: step {k}: {step.describe()}")
            record: dict[str, Any] = {"index": k, "step": step.describe(), "model": list(exp.model)}
            t0 = time.monotonic()
            if scenario.mode == "zk" and step.do in ("kill", "stop", "pause"):
                before = expected[k - 1].state if k else None
                result.divergences += _controller_off(cluster, scenario, step, before, k, record,
                                                      frozenset(pauses.held))
            if scenario.mode == "zk" and step.do == "pause":
                _alter_partition_channel_off(cluster, step, record)
            reply = _do(cluster, step, pauses)
            if reply is not None:
                code = admin_code(reply)
                record["response"] = {"error_class": reply.get("error_class"), "error": reply.get("error"),
                                      "code": code, "expected": code_name(exp.code)}
                if code != exp.code:
                    result.divergences.append({
                        "step": k, "kind": "response", "action": step.describe(),
                        "expected": code_name(exp.code),
                        "observed": reply.get("error_class") or "NONE",
                        "what": f"the reference answers {code_name(exp.code)}, Kafka answered "
                                f"{reply.get('error_class') or 'NONE'}"})
            waits = []
            for w in step.waits:
                w0 = time.monotonic()
                try:
                    cluster.wait_for(f"step {k} ({step.describe()}): {w.describe()}", check_of(cluster, topic, w),
                                     w.timeout_s)
                except ClusterError as e:
                    result.failed = f"step {k}: {w.describe()} did not hold within {w.timeout_s:.0f} s"
                    record["waits"] = waits + [{"until": w.describe(), "met": False}]
                    result.steps.append(record)
                    result.elapsed_s = time.monotonic() - started
                    if result_path:
                        result.write(result_path)
                    raise ScenarioWaitError(str(e), result) from None
                waits.append({"until": w.describe(), "met": True, "seconds": round(time.monotonic() - w0, 2)})
                result.waits_met += 1
            record["waits"] = waits
            observed = _settled_observation(cluster, topic, exp.expect, settle_s)
            record["observed"] = observed
            record["expected"] = exp.expect
            if exp.expect is not None:
                for what in _differences(exp.expect, observed):
                    result.divergences.append({"step": k, "kind": "state", "action": step.describe(), **what})
            record["seconds"] = round(time.monotonic() - t0, 2)
            result.steps.append(record)
    finally:
        result.elapsed_s = time.monotonic() - started
        if pauses.touched and all(n.state == "running" for n in cluster.nodes if n.role == "broker"):
            pauses.release_all()
    if delete_topic:
        cluster.admin.delete_topics([topic])
    if result_path:
        result.write(result_path)
    return result


def _isr_at_least(cluster: Cluster, topic: str, p: int, n: int):
    def check() -> str | None:
        parts = cluster.admin.describe_topics([topic])[topic]["partitions"]
        isr = next((q["isr"] for q in parts if q["partition"] == p), [])
        return None if len(isr) >= n else f"ISR {isr}"
    return check


def _do(cluster: Cluster, step: Any, pauses: Pauses) -> dict[str, Any] | None:
    """Perform one step; the Admin client's per-partition answer for a request."""
    if step.do in ("reassign", "cancel") and step.via == "tool":  # Kafka's kafka-reassign-partitions.sh
        if step.do == "reassign":
            return reassign_tool.execute(cluster, step.topic, step.partition, list(step.target))
        # a cancel keeps the throttles: a pause of this scenario may hold a follower with them
        return reassign_tool.cancel(cluster, step.topic, step.partition, preserve_throttles=True)
    if step.do in ("reassign", "cancel"):
        target = list(step.target) if step.do == "reassign" else None
        try:
            return cluster.admin.alter_reassignments([(step.topic, step.partition, target)])[0]
        except AdminRequestError as e:  # the whole request refused
            return {"error_class": e.error_class, "error": e.message}
    if step.do == "kill":
        cluster.kill(step.broker)
    elif step.do == "stop":
        cluster.stop(step.broker)
    elif step.do == "restart":
        cluster.restart(step.broker)
    elif step.do == "kill_controller":
        active = cluster.active_controller()
        cluster.kill(active)
        cluster.restart(active)
    elif step.do == "reelect_controller":  # zk: /controller deleted, every broker re-elects
        znodes.reelect_controller(cluster)
    elif step.do == "pause":
        pauses.pause(step.partition, step.broker)
    elif step.do == "resume":
        pauses.resume(step.partition, step.broker)
    return None


#: zk: what a ZooKeeper-mode scenario's cluster must set: Kafka 3.9.2's controller runs its automatic preferred
#: leader election 5 s after every election of a controller (KafkaController.onControllerFailover,
#: scheduleAutoLeaderRebalanceTask(delay = 5)), which the model at these bounds does not take (AutoLeaderBalance
#: is a capability of its own): seen moving a leader back to a cancelled reassignment's new preferred replica
ZK_BROKER_CONFIG = (("auto.leader.rebalance.enable", "false"),)


def _check_zk_cluster(cluster: Cluster) -> None:
    missing = [f"{k}={v}" for k, v in ZK_BROKER_CONFIG if (k, v) not in cluster.spec.broker_config]
    if missing:
        raise ClusterError(f"a ZooKeeper-mode scenario needs its cluster started with the broker settings "
                           f"{', '.join(missing)} (run.ZK_BROKER_CONFIG)")


def _controller_off(cluster: Cluster, scenario: Scenario, step: Any, before: Any, k: int,
                    record: dict[str, Any], held: frozenset = frozenset()) -> list[dict[str, Any]]:
    """zk: before a broker fails or is paused, move the controller off it (re-elections, `znodes.move_controller_off`), so
    that Kafka runs onBrokerFailure as the model's BrokerFail does; before a pause, move it off the broker to be
    frozen, whose leader's ISR shrink a frozen controller could not commit (AlterPartition goes to the controller,
    KIP-497; KafkaController.processAlterPartition runs in the controller's event thread). Each re-election is a ControllerFailover the
    scenario does not name: sound only where the model's failover changes nothing the step compares, which is
    checked here (a divergence of kind "unmodelled" otherwise)."""
    moves = znodes.move_controller_off(cluster, step.broker)
    if not moves:
        return []
    record["controller_moved_off"] = {"broker": step.broker, "reelections": moves}
    model = model_for(scenario)
    state = before if before is not None else settle(model, model.init_states()[0])[0]
    if state is None:
        return []
    same = expectation(state, None)
    for _ in range(moves):  # settled as the run is: a paused follower stays held
        state = settle(model, model.step(state, ControllerFailover())[0], held)[0]
        if state is None:
            break
    after = expectation(state, None) if state is not None else None
    if after is not None and _differences(same, _observed_like(after)) == []:
        return []
    return [{"step": k, "kind": "unmodelled", "action": step.describe(),
             "what": f"broker {step.broker} was the controller: moved off it by {moves} re-election(s), which the "
                     "model's state here does not leave unchanged", "expected": same, "observed": after}]


#: zk: a broker's AlterPartition channel names the controller it sends to, once resolved from its metadata cache
#: (NodeToControllerRequestThread.doWork, 3.9.2, INFO): `[zk-broker-1-to-controller-alter-partition-channel-manager]:
#: Recorded new ZK controller, from now on will use node 127.0.0.1:30829 (id: 4 rack: null)`
CHANNEL_CONTROLLER = re.compile(r"\[zk-broker-(?P<b>\d+)-to-controller-alter-partition-channel-manager\]:? Recorded new "
                                r"ZK controller, from now on will use node \S+ \(id: (?P<c>-?\d+)")


def alter_partition_controller(server_log: str, broker: int) -> int | None:
    """The controller `broker`'s AlterPartition channel sends to, from its server.log (the last node it recorded;
    None: none recorded)."""
    found = None
    for m in CHANNEL_CONTROLLER.finditer(server_log):
        if int(m.group("b")) == broker:
            found = int(m.group("c"))
    return found


def _alter_partition_channel_off(cluster: Cluster, step: Any, record: dict[str, Any],
                                 timeout_s: float = 60.0) -> None:
    """zk, before a pause: make sure the partition's leader does not send its ISR shrink to the broker about to be
    frozen. The leader's AlterPartition (KIP-497) goes to the controller its channel has cached, and Kafka 3.9.2
    drops that cache only on a disconnect or a NOT_CONTROLLER answer (NodeToControllerRequestThread.handleResponse;
    doWork resolves a new one from the metadata cache only while none is cached): after the controller moved (a
    `reelect_controller` step, `_controller_off`), a leader may still send to the old controller broker. Frozen,
    that broker neither answers nor disconnects, and the shrink waits for controller.socket.timeout.ms (30 s) —
    longer than a pause may freeze it (seen: conformance-2403 and -2419 of the 3.9.2 smoke tier). The remedy is
    an AlterPartition that the old controller, still running, refuses: a probe topic of one partition on the leader
    alone, reassigned to the leader and another live broker, whose ISR expansion the leader sends (answered
    NOT_CONTROLLER, resent to the controller, committed); then the probe is deleted. The probe is another topic:
    the scenario's partition, and the model's state, are untouched (its controller log lines are left out,
    zk_logs.scenario_lines)."""
    admin = cluster.admin
    partitions = admin.describe_topics([step.topic])[step.topic]["partitions"]
    leader = next(q["leader"] for q in partitions if q["partition"] == step.partition)
    if leader is None:
        return
    cached = alter_partition_controller(cluster.logs(leader, "server"), leader)
    if cached != step.broker:
        return
    others = [b for b in admin.broker_ids() if b not in (leader, step.broker)]
    record["alter_partition_channel"] = {"leader": leader, "was": cached}
    if not others:
        record["alter_partition_channel"]["left"] = "no live broker for a probe"
        return
    probe = f"kreassign-probe-{step.topic}"
    admin.create_topic(probe, assignment={0: [leader]}, configs={"min.insync.replicas": "1"})

    def refreshed() -> str | None:
        now = alter_partition_controller(cluster.logs(leader, "server"), leader)
        isr = admin.describe_topics([probe])[probe]["partitions"][0]["isr"]
        if now in (None, step.broker) or others[0] not in isr:
            return f"broker-{leader}'s AlterPartition channel still on broker {now} (probe ISR {isr})"
        return None

    try:
        admin.alter_reassignments([(probe, 0, [leader, others[0]])])
        cluster.wait_for(f"broker-{leader}'s AlterPartition channel off broker {step.broker}", refreshed, timeout_s)
        record["alter_partition_channel"]["now"] = alter_partition_controller(cluster.logs(leader, "server"), leader)
    finally:
        admin.delete_topics([probe])


def _observed_like(expect: dict[str, Any]) -> dict[str, Any]:
    """An expectation in the shape of an observation (for comparing two model states with `_differences`)."""
    return {**expect, "brokers": sorted(expect["brokers"])}


def _differences(expect: dict[str, Any], observed: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    if "znodes" in expect:  # zk: what ZooKeeper holds, where the model determines it
        out += _znode_differences(expect["znodes"], observed.get("znodes") or {})
    if sorted(expect["brokers"]) != observed["brokers"]:
        out.append({"field": "brokers", "expected": sorted(expect["brokers"]), "observed": observed["brokers"]})
    for p, e in expect["partitions"].items():
        o = observed["partitions"].get(p)
        if o is None:
            out.append({"field": f"partition {p}", "expected": e, "observed": None})
            continue
        for key, v in e.items():
            if o.get(key) != v:
                out.append({"field": f"partition {p} {key}", "expected": v, "observed": o.get(key)})
    return out


def _znode_differences(expect: dict[str, Any], observed: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key in ("reassign_partitions", "brokers"):
        if expect[key] != observed.get(key):
            out.append({"field": f"znode {key}", "expected": expect[key], "observed": observed.get(key)})
    for p, e in expect["partitions"].items():
        o = (observed.get("partitions") or {}).get(p) or {}
        for key, v in e.items():
            if o.get(key) != v:
                out.append({"field": f"znode partition {p} {key}", "expected": v, "observed": o.get(key)})
    return out


def _settled_observation(cluster: Cluster, topic: str, expect: dict[str, Any] | None,
                         settle_s: float) -> dict[str, Any]:
    """Observe until the observation agrees with `expect` or `settle_s` passes; the last observation."""
    deadline = time.monotonic() + settle_s
    while True:
        try:
            observed = observe(cluster, topic)
        except AdminRequestError as e:
            observed = {"partitions": {}, "brokers": [], "controller": None, "error": str(e)}
        if expect is None or not _differences(expect, observed) or time.monotonic() > deadline:
            return observed
        time.sleep(0.2)


__all__ = ["RESULT_FORMAT", "ZK_BROKER_CONFIG", "RunResult", "ScenarioWaitError", "admin_code", "restore", "run_scenario"]
