"""Model actions and real steps, both ways, and what the model expects of each step (docs/scenarios.md).

The admin's requests and the failures are actions on the cluster: Reassign → `reassign`, Cancel → `cancel`,
BrokerFail → `kill` (SIGKILL) or `stop` (a clean shutdown), BrokerRecover → `restart`, ControllerFailover →
`kill_controller` (SIGKILL of the active controller, then started again), LeaderShrinkIsr → `pause` (the follower's
fetches of the partition throttled while records are produced, until its leader drops it from the ISR).
LeaderExpandIsr is the cluster's own doing (a live follower catching up): after every action the model *settles*
— takes the ISR expansions until none is enabled — and the step waits for what they lead to. A paused follower is
*held*: settling does not take its expansion until a `resume` step (the throttle removed) releases it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kreassign.checker.config.bounds import Bounds, bounds_from_mapping
from kreassign.checker.models.reassign import TOPIC, ReassignmentModel
from kreassign.spec import actions as A
from kreassign.spec.messages import ERROR_NAMES, NONE, AlterPartitionReassignmentsResponse
from kreassign.spec.reassign_properties import ModelState

from .format import Scenario, ScenarioError, Step, Wait

#: the model's actions that are the cluster's own doing: taken while settling, never driven
CLUSTER_OWN = (A.LeaderExpandIsr,)
#: zk: the controller's own steps too (the phases of onPartitionReassignment, ControllerStep), run by the
#: controller after the request, the ISR change or the broker change that queued them
CLUSTER_OWN_ZK = (A.ControllerStep, A.LeaderExpandIsr)
#: the cluster's mode -> the model's profile scenarios of that mode are drawn from and compared with
PROFILE_OF_MODE = {"kraft": "kraft", "zk": "zk"}
#: why pauses are drawn only at min.insync.replicas=1: with ELR (KIP-966) the high watermark stops while the ISR
#: is smaller than min.insync.replicas, a follower then counts as in sync for its fetcher
#: (PartitionFetchState.isReplicaInSync: its lag to the high watermark is 0) and the throttle that holds it no
#: longer applies: it would catch up where the model holds it (seen on 4.4.0, scenario conformance-102, seed 102)
PAUSES_NEED = "with min.insync.replicas above 1 a throttle cannot keep a paused follower behind (docs/scenarios.md)"
DRIVEN = (A.Reassign, A.Cancel, A.BrokerFail, A.BrokerRecover, A.ControllerFailover, A.LeaderShrinkIsr)
#: a held follower: (partition, broker) whose catching up a `pause` step prevents until its `resume`
Held = frozenset[tuple[int, int]]

#: default wait timeouts (s): the cluster's session timeout is 6 s; a JVM start takes up to ~15 s on 2 cores
TIMEOUTS = {"reassignment_done": 30.0, "reassignment_listed": 30.0, "isr_size": 30.0, "broker_fenced": 30.0,
            "broker_registered": 60.0, "controller_active": 60.0}

#: Kafka's exception classes (the Admin client's) and the error codes the reference answers with
EXCEPTION_CODES = {
    "NoReassignmentInProgressException": 85,
    "InvalidReplicaAssignmentException": 39,
    "UnknownTopicOrPartitionException": 3,
    "InvalidReplicationFactorException": 38,
    "ReassignmentInProgressException": 60,
    "InvalidRequestException": 42,
    "NotControllerException": 41,
    "TimeoutException": 7,
    "PolicyViolationException": 44,
}


def model_for(scenario: Scenario) -> ReassignmentModel:
    bounds = bounds_from_mapping(scenario.bounds)
    return ReassignmentModel(scenario.profile, bounds)


def make_model(bounds: Bounds, profile: str = "kraft") -> ReassignmentModel:
    return ReassignmentModel(profile, bounds)


def cluster_own(model: ReassignmentModel) -> tuple[type, ...]:
    """The model's actions that are the cluster's own doing under the model's profile."""
    return CLUSTER_OWN_ZK if model.profile_name == "zk" else CLUSTER_OWN


def own_steps(model: ReassignmentModel, state: ModelState, held: Held = frozenset()) -> list[Any]:
    """The cluster's own steps enabled in `state`: its ISR expansions, but not those of a held follower."""
    return [a for a in model.actions(state) if isinstance(a, cluster_own(model))
            and not (isinstance(a, A.LeaderExpandIsr) and (a.partition, a.broker) in held)]


def settle(model: ReassignmentModel, state: ModelState,
           held: Held = frozenset()) -> tuple[ModelState | None, tuple[str, ...]]:
    """Take the cluster's own steps (ISR expansions, a held follower's excepted) until none is enabled: (the
    settled state, the actions taken in the model's order), or (None, ...) when different orders end in
    different states (not determined)."""
    taken: list[str] = []
    ends: set[Any] = set()
    first: ModelState | None = None
    frontier, seen = [state], {state}
    while frontier:
        s = frontier.pop()
        nexts = [(a, model.step(s, a)[0]) for a in own_steps(model, s, held)]
        if not nexts:
            ends.add(s)
            continue
        for a, n in nexts:
            if n not in seen:
                seen.add(n)
                frontier.append(n)
    s = state
    while True:  # the canonical order: always the first enabled expansion
        a = next(iter(own_steps(model, s, held)), None)
        if a is None:
            first = s
            break
        taken.append(str(a))
        s = model.step(s, a)[0]
    return (first if len(ends) == 1 else None), tuple(taken)


def response_code(response: Any, partition: int) -> int | None:
    """The reference's error code for one partition of an AlterPartitionReassignments answer (None: not a
    request)."""
    if isinstance(response, AlterPartitionReassignmentsResponse):
        if response.error_code != NONE:
            return response.error_code
        return response.partition_error(TOPIC, partition)[0]
    return None


def code_name(code: int | None) -> str | None:
    return None if code is None else ERROR_NAMES.get(code, str(code))


def expectation(state: ModelState, response_code_: int | None) -> dict[str, Any]:
    """What a step is expected to show: per partition replicas, isr (a set: sorted), leader, adding, removing,
    elr (sorted); the brokers registered and unfenced; the reference's answer to the step's request."""
    c = state.cluster
    parts = {}
    for p_index, p in enumerate(c.topic(TOPIC).partitions):
        parts[str(p_index)] = {"replicas": list(p.replicas), "isr": sorted(p.isr),
                               "leader": p.leader if p.leader >= 0 else None, "adding": sorted(p.adding),
                               "removing": sorted(p.removing), "elr": sorted(p.elr)}
    out: dict[str, Any] = {"partitions": parts, "brokers": [b.id for b in c.brokers if b.registered and b.active]}
    if c.zk is not None:
        out["znodes"] = znode_expectation(state)
    if response_code_ is not None:
        out["error"] = code_name(response_code_)
    return out


def znode_expectation(state: ModelState) -> dict[str, Any]:
    """zk: what ZooKeeper holds as the model has it (docs/zk-profile.md, "Two views"): per partition the topic
    znode's replicas, adding and removing (in Kafka's order) and the state znode's leader (-1: none) and ISR
    (sorted); the topic's /admin/reassign_partitions entries; the registered brokers (/brokers/ids)."""
    c = state.cluster
    zk = c.zk
    assert zk is not None
    parts = {str(i): {"replicas": list(p.replicas), "adding": list(p.adding), "removing": list(p.removing),
                      "leader": p.leader, "isr": sorted(p.isr)}
             for i, p in enumerate(c.topic(TOPIC).partitions)}
    entries = [{"partition": i, "replicas": list(r)} for t, i, r in zk.admin_znode if t == TOPIC]
    return {"partitions": parts, "reassign_partitions": entries,
            "brokers": [b.id for b in c.brokers if b.registered and b.active]}


def model_action(step: Step) -> Any:
    if step.do == "reassign":
        return A.Reassign(TOPIC, step.partition, tuple(step.target))
    if step.do == "cancel":
        return A.Cancel(TOPIC, step.partition)
    if step.do in ("kill", "stop"):
        return A.BrokerFail(step.broker)
    if step.do == "restart":
        return A.BrokerRecover(step.broker)
    if step.do in ("kill_controller", "reelect_controller"):
        return A.ControllerFailover()
    if step.do == "pause":
        return A.LeaderShrinkIsr(TOPIC, step.partition, step.broker)
    raise ScenarioError(f"no model action for a {step.do} step")


def held_after(step: Step, held: Held) -> Held:
    """The held followers after `step`: a pause holds its follower, a resume releases it."""
    if step.do == "pause":
        return held | {(step.partition, step.broker)}
    if step.do == "resume":
        return held - {(step.partition, step.broker)}
    return held


def real_step(action: Any, topic: str, clean_shutdown: bool = False, mode: str = "kraft") -> Step:
    """The real action for a driven model action (no waits yet); `clean_shutdown` picks `stop` for BrokerFail."""
    if isinstance(action, A.Reassign):
        return Step("reassign", topic=topic, partition=action.partition, target=tuple(action.replicas))
    if isinstance(action, A.Cancel):
        return Step("cancel", topic=topic, partition=action.partition)
    if isinstance(action, A.BrokerFail):
        return Step("stop" if clean_shutdown else "kill", broker=action.broker)
    if isinstance(action, A.BrokerRecover):
        return Step("restart", broker=action.broker)
    if isinstance(action, A.ControllerFailover):
        # zk: the model's failover alone (no broker dies) is /controller deleted: every broker re-elects
        return Step("reelect_controller" if mode == "zk" else "kill_controller")
    if isinstance(action, A.LeaderShrinkIsr):
        return Step("pause", topic=topic, partition=action.partition, broker=action.broker)
    raise ValueError(f"{action} is not an action on the cluster (driven: "
                     f"{', '.join(k.__name__ for k in DRIVEN)})")


def waits_for(step: Step, before: ModelState, after: ModelState | None) -> tuple[Wait, ...]:
    """The conditions that say the cluster has done, by itself, what the model's settled state says."""
    out: list[Wait] = []
    if step.do in ("kill", "stop"):
        out.append(Wait("broker_fenced", TIMEOUTS["broker_fenced"], broker=step.broker))
    elif step.do == "restart":
        out.append(Wait("broker_registered", TIMEOUTS["broker_registered"], broker=step.broker))
    elif step.do in ("kill_controller", "reelect_controller"):
        out.append(Wait("controller_active", TIMEOUTS["controller_active"]))
    if after is None:
        return tuple(out)
    for index, p in enumerate(after.cluster.topic(TOPIC).partitions):
        kind = "reassignment_listed" if p.reassigning else "reassignment_done"
        out.append(Wait(kind, TIMEOUTS[kind], partition=index))
        out.append(Wait("isr_size", TIMEOUTS["isr_size"], partition=index, at_least=len(p.isr),
                        at_most=len(p.isr)))
    return tuple(out)


@dataclass(frozen=True)
class Expected:
    """The model's side of one step: the state it settles in (None: not determined), the reference's error
    code for a request, and the model actions taken."""

    state: ModelState | None
    code: int | None
    model: tuple[str, ...]
    expect: dict[str, Any] | None


def replay_on_model(scenario: Scenario) -> list[Expected]:
    """Each step's action on the model, from its initial state, settled after each; a step the model does not
    enable (a restart of a broker that has not failed, a request beyond the bounds) is a ScenarioError naming
    it, and so is an `expect` in the file that is not what the reference says now."""
    model = model_for(scenario)
    state: ModelState | None = settle(model, model.init_states()[0])[0]
    held: Held = frozenset()
    out = []
    for k, step in enumerate(scenario.steps):
        if state is None:
            out.append(Expected(None, None, (), None))
            continue
        if step.do == "pause" and model.bounds.min_insync > 1:
            raise ScenarioError(f"steps[{k}]: {step.describe()}: a pause needs min_insync 1 (the bounds say "
                                f"{model.bounds.min_insync}): {PAUSES_NEED}")
        if step.do == "resume":
            if (step.partition, step.broker) not in held:
                raise ScenarioError(f"steps[{k}]: {step.describe()}: broker {step.broker} is not paused on "
                                    f"partition {step.partition} here")
            nxt, code, done = state, None, ()
        else:
            action = model_action(step)
            if action not in model.actions(state):
                raise ScenarioError(f"steps[{k}]: {action} is not enabled in the model here "
                                    f"({step.describe()}; the bounds or the earlier steps do not allow it)")
            nxt, label = model.step(state, action)
            code = response_code(label.response, step.partition) if step.do in ("reassign", "cancel") else None
            done = (str(action),)
        held = held_after(step, held)
        settled, taken = settle(model, nxt, held)
        exp = expectation(settled, code) if settled is not None else None
        if step.expect is not None and exp is not None and step.expect != exp:
            raise ScenarioError(f"steps[{k}].expect: the file says {step.expect}, the reference says {exp} "
                                "(drawn from another version of the model?)")
        out.append(Expected(settled, code, (*done, *taken), exp))
        state = settled
    return out


__all__ = ["CLUSTER_OWN", "CLUSTER_OWN_ZK", "DRIVEN", "EXCEPTION_CODES", "PROFILE_OF_MODE", "TIMEOUTS", "Expected",
           "Held", "cluster_own", "code_name", "expectation", "held_after", "make_model", "model_action", "model_for",
           "own_steps", "real_step", "replay_on_model", "response_code", "settle", "waits_for", "znode_expectation"]
