"""The later issue-14 capabilities beyond `check`: `--zk-versions`, `--delete-topic`, zk with
`--broker-replicas` (requests in flight) and `--kraft-actions` reach the oracle's `enabled_actions`,
`fuzz`, `replay` and `validate-trace`, and a deliberately wrong implementation of one action of each,
driven by `check --impl module:Class` in lockstep, is caught and replays (docs/adapters.md)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from kreassign.checker.check.run import VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, bounds_from_mapping
from kreassign.checker.implementations.adapters import ReferenceImplementation
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.oracle.server import Oracle
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.validation import SearchLimits, validate_text
from kreassign.reference.capabilities import CAPABILITY_ACTIONS, apply_action
from kreassign.reference.zk_controller import NOTIFICATION
from kreassign.spec import actions as A
from kreassign.spec import findings as F
from kreassign.spec import messages as M
from kreassign.spec.codec import decode_action, state_from_json, to_json
from kreassign.spec.reassign_properties import ModelState
from kreassign.spec.state import make_cluster

from kreassign.cli import main

# -- deliberately wrong implementations, one action of each capability (loaded by `--impl FILE:Class`) ----------


class ZkCacheNotRefreshed(ReferenceImplementation):
    """zk_versions, broken: processing an ISR change notification leaves the controller's cache stale."""

    def apply(self, action):
        before = self._state
        state, response = super().apply(action)
        if isinstance(action, A.ControllerStep) and (action.topic, action.partition, NOTIFICATION) in before.zk.pending:
            state = replace(state, zk=replace(state.zk, leadership=before.zk.leadership))
        self._state = state
        return state, response


class DeletionWaitsForReassignment(ReferenceImplementation):
    """delete_topic under kraft, broken: DeleteTopic is accepted but, like ZooKeeper, waits while a partition
    of the topic is being reassigned (KRaft deletes at once, reassignment and all)."""

    def apply(self, action):
        if isinstance(action, A.DeleteTopic) and any(p.reassigning for p in self._state.topic(action.topic).partitions):
            return self._state, M.Ack()
        return super().apply(action)


class StopReplicaKeepsLog(ReferenceImplementation):
    """zk with broker_replicas, broken: a broker handles StopReplica(delete = true) but keeps the log."""

    def apply(self, action):
        before = self._state
        state, response = super().apply(action)
        if isinstance(action, A.BrokerReplay) and before.hosted is not None:
            state = replace(state, hosted=tuple(sorted(set(before.hosted) | set(state.hosted))))
        self._state = state
        return state, response


class BalanceDoesNothing(ReferenceImplementation):
    """kraft_actions, broken: the controller's BalanceLeaders answers but moves no leader."""

    def apply(self, action):
        if isinstance(action, A.BalanceLeaders):
            return self._state, M.Ack()
        return super().apply(action)


#: capability -> (the wrong implementation, the action it gets wrong, the check flags: small bounds)
WRONG = {
    "zk_versions": (ZkCacheNotRefreshed, "ControllerStep",
                    ["--profile", "zk", "--zk-versions", "--brokers", "3", "--reassigns", "1", "--cancels", "0",
                     "--failures", "0", "--failovers", "0"]),
    "delete_topic": (DeletionWaitsForReassignment, "DeleteTopic",
                     ["--profile", "kraft", "--delete-topic", "--brokers", "3", "--reassigns", "1", "--cancels", "0"]),
    "zk_broker_replicas": (StopReplicaKeepsLog, "BrokerReplay",
                           ["--profile", "zk", "--broker-replicas", "--brokers", "2", "--rf", "1", "--reassigns", "1",
                            "--cancels", "0", "--failures", "0", "--failovers", "0"]),
    "kraft_actions": (BalanceDoesNothing, "BalanceLeaders",
                      ["--profile", "kraft", "--kraft-actions", "balance-leaders", "--brokers", "3", "--reassigns", "1",
                       "--cancels", "0", "--failures", "1"]),
}
REFERENCE = "kreassign.checker.implementations.adapters:ReferenceImplementation"
#: the spec properties each wrong step breaks besides implementation_matches_reference
BROKEN = {"zk_versions": ["controller_cache_agrees_with_zookeeper"], "delete_topic": ["accepted_deletion_takes_effect"],
          "zk_broker_replicas": [], "kraft_actions": ["balance_elects_preferred"]}


def jsonl(trace, states=None, logged=True) -> str:
    """A trace as an observed JSON-lines run (docs/validate-trace.md), real states; actions logged or not."""
    states = states or [s["kafka_state"] for s in trace.steps]
    header = {"initial_state": trace.initial["cluster"], "profile": trace.profile}
    header.update({k: trace.bounds[k] for k in ("kafka_version", "elr") if k in trace.bounds})  # kraft's release
    lines = [json.dumps(header)]
    lines += [json.dumps({"action": s["action"], "state": st} if logged else {"state": st})
              for s, st in zip(trace.steps, states)]
    return "\n".join(lines) + "\n"


def reference_step(trace, k):
    """The reference's real state after step k, from the trace's real state before it."""
    before = trace.steps[k - 1]["kafka_state"] if k > 0 else trace.initial["cluster"]
    prof = ReassignmentModel(trace.profile, bounds_from_mapping(dict(trace.bounds))).profile  # at its release
    return to_json(apply_action(prof, state_from_json(before), decode_action(trace.steps[k]["action"], "action")).state)


@pytest.fixture(scope="module")
def caught(tmp_path_factory):
    """capability -> the mismatch trace file `check --impl FILE:Class` wrote for its wrong implementation."""
    out = {}
    for name, (cls, _, flags) in WRONG.items():
        where = tmp_path_factory.mktemp(name)
        code = main(["check", *flags, "--impl", f"{__file__}:{cls.__name__}", "--out", str(where)])
        assert code == 1, name
        out[name] = str(where / f"{flags[1]}__implementation_matches_reference.json")
    return out


# -- 1. the oracle lists the capability actions the model enables ---------------------------------------------

ALL_BUDGETS = dict(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, failovers=1)  # compared while none is spent
ENABLING = [
    ("kraft", Bounds(**ALL_BUDGETS, throttles=True)),
    ("kraft", Bounds(**ALL_BUDGETS, create_partitions=1, leader_balance=True)),
    ("kraft", Bounds(**ALL_BUDGETS, broker_replicas=True)),
    ("zk", Bounds(**ALL_BUDGETS, broker_replicas=True)),
    ("kraft", Bounds(**ALL_BUDGETS, delete_topic=True)),
    ("zk", Bounds(**ALL_BUDGETS, delete_topic=True)),
    ("zk", Bounds(**ALL_BUDGETS, zk_versions=True)),
    ("kraft", Bounds(**ALL_BUDGETS, kraft_actions=("controlled-shutdown", "restart", "balance-leaders", "elect-unclean"))),
]
KRAFT_CONTROLLER_ACTIONS = (A.BrokerControlledShutdown, A.BrokerRestart, A.BalanceLeaders, A.ElectUncleanLeaders)
CAPABILITY_KEYS = ("throttles", "create_partitions", "broker_replicas", "leader_balance", "delete_topic",
                   "zk_versions", "kraft_actions")


@pytest.mark.parametrize("name, bounds", ENABLING, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ENABLING)])
def test_enabled_actions_are_the_models_with_the_capabilities_on(name, bounds):
    model = ReassignmentModel(name, bounds)
    caps = {k: (list(v) if isinstance(v, tuple) else v) for k in CAPABILITY_KEYS if (v := getattr(bounds, k))}
    space = to_json(replace(model.space, reassign=True, cancel=True))  # the op turns them off with the throttles
    oracle, seen, frontier, compared, kinds = Oracle(name), set(), [model.init_states()[0]], 0, set()
    while frontier and compared < 60:  # the first states of a breadth-first walk
        state = frontier.pop(0)
        if state in seen:
            continue
        seen.add(state)
        got = oracle.handle({"id": 1, "op": "enabled_actions", "state": to_json(state.cluster), "space": space,
                             "capabilities": caps})
        assert got["ok"], got
        want = model.actions(ModelState(state.cluster, state.ghosts, (1,) * len(state.budget)))  # the op spends none
        assert got["result"]["actions"] == [to_json(a) for a in want]
        kinds |= {type(a) for a in want}
        compared += 1
        frontier += [nxt for _, nxt in model.successors(state)]
    assert kinds & set(CAPABILITY_ACTIONS + KRAFT_CONTROLLER_ACTIONS) or bounds.zk_versions, kinds


@pytest.mark.parametrize("name, caps, message", [
    ("kip455", {"delete_topic": True}, "capabilities.delete_topic: modelled for kraft, kraft-3.7 and zk"),
    ("zk", {"kraft_actions": ["restart"]}, "capabilities.kraft_actions: apply to the kraft profiles only"),
    ("kraft", {"kraft_actions": ["reboot"]}, "capabilities.kraft_actions: unknown action"),
    ("kraft", {"zk_versions": True}, "capabilities.zk_versions: applies to the zk profile only"),
    ("zk", {"create_partitions": 1}, "capabilities.create_partitions: not modelled for profile zk"),
    ("kraft", {"throttles": 1}, "capabilities.throttles: expected true or false"),
    ("kraft", {"brokers": 4}, "capabilities.brokers: unknown capability"),
    ("kraft", [], "capabilities: expected an object"),
])
def test_capabilities_a_profile_does_not_model_are_refused_by_name(name, caps, message):
    state = to_json(make_cluster([1, 2, 3], {"t": [[1, 2]]}))
    reply = Oracle().handle({"id": 1, "op": "enabled_actions", "profile": name, "state": state, "capabilities": caps})
    assert reply["error"]["code"] == "invalid_field" and reply["error"]["message"].startswith(message), reply


# -- 2a. fuzz runs with each flag -------------------------------------------------------------------------------

FUZZ = {
    "zk_versions": (["--profile", "zk", "--zk-versions"], "controller_cache_agrees_with_zookeeper"),
    "delete_topic kraft": (["--profile", "kraft", "--delete-topic"], "accepted_deletion_takes_effect"),
    "delete_topic zk": (["--profile", "zk", "--delete-topic"], "reassigning_topic_not_deleted"),
    "zk_broker_replicas": (["--profile", "zk", "--broker-replicas"], "last_in_sync_log_kept"),
    "kraft_actions": (["--profile", "kraft", "--kraft-actions", "controlled-shutdown,restart,balance-leaders,elect-unclean"],
                      "balance_elects_preferred"),
}


@pytest.mark.parametrize("name", list(FUZZ))
def test_fuzz_runs_with_each_flag_and_checks_its_properties(name, tmp_path, capsys):
    flags, prop = FUZZ[name]
    code = main(["fuzz", *flags, "--brokers", "3", "--rf", "2", "--reassigns", "1", "--cancels", "1", "--failures", "1",
                 "--examples", "8", "--steps", "8", "--seed", "1", "--no-exhaustive", "--json", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["unexpected_violations"] == 0
    assert out["properties"][prop]["status"] != "not-checked"


# -- 2b. a wrong implementation of one action of each capability, caught in lockstep ---------------------------


@pytest.mark.parametrize("name", list(WRONG))
def test_check_impl_catches_a_wrong_action_of_each_capability(caught, name):
    trace = read_trace(caught[name])
    last = trace.steps[-1]
    assert last["action"]["type"] == WRONG[name][1] and len(trace.steps) <= 16
    assert last["mismatch"]["diff"]
    # the reference's outcome in the mismatch is in real epochs, as the implementation's kafka_state
    assert last["mismatch"]["reference_state"] == reference_step(trace, len(trace.steps) - 1)
    # the oracle's `check` judges the same step the same way
    before = trace.steps[-2]["kafka_state"] if len(trace.steps) > 1 else trace.initial["cluster"]
    got = Oracle(trace.profile).handle({"id": 1, "op": "check", "state": before, "action": last["action"],
                                        "observed_state": last["kafka_state"]})
    assert got["result"]["verdict"] == "mismatch", got
    # ... and names the capability's property the wrong step breaks, as check did
    assert [v["name"] for v in got["result"]["violated"]] == BROKEN[name]
    right = Oracle(trace.profile).handle({"id": 1, "op": "check", "state": before, "action": last["action"],
                                          "observed_state": reference_step(trace, len(trace.steps) - 1)})
    assert right["result"]["verdict"] == "match", right


@pytest.mark.parametrize("name", list(WRONG))
def test_the_mismatch_replays_on_the_wrong_implementation_only(caught, name, capsys):
    path = caught[name]
    assert main(["replay", path, "--impl", f"{__file__}:{WRONG[name][0].__name__}"]) == 0
    assert main(["replay", path, "--impl", REFERENCE]) == 1
    assert "agrees with the reference on this step" in capsys.readouterr().out
    assert main(["replay", path]) == 1  # nor does the reference alone


@pytest.mark.parametrize("name", list(WRONG))
def test_validate_trace_refuses_the_wrong_step_and_accepts_the_right_one(caught, name, tmp_path, capsys):
    trace = read_trace(caught[name])
    n = len(trace.steps)
    run = tmp_path / "run.jsonl"
    run.write_text(jsonl(trace))
    assert main(["validate-trace", str(run), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["failure"]["line"] == n + 1  # the wrong step's line, the last
    states = [s["kafka_state"] for s in trace.steps[:-1]] + [reference_step(trace, n - 1)]
    run.write_text(jsonl(trace, states))
    assert main(["validate-trace", str(run)]) == 0


# -- 2c. traces `check` writes with each flag replay and validate ------------------------------------------------

REFERENCE_TRACES = {  # a property Kafka breaks under each flag (its finding dropped, so check writes the trace)
    "zk_versions": ("zk", Bounds(brokers=3, rf=2, reassigns=2, cancels=0, failovers=1, zk_versions=True),
                    "superseded_reassignment_never_resumed"),
    "zk_broker_replicas": ("zk", Bounds(brokers=2, rf=1, reassigns=1, cancels=0, failures=1, failovers=0,
                                        broker_replicas=True), "no_stray_replicas"),
    "kraft_actions": ("kraft", Bounds(brokers=2, rf=2, reassigns=0, cancels=0, kraft_actions=("restart",),
                                      kafka_version="3.9.2"), "restart_moves_leadership"),  # Kafka 3.9's finding
}


@pytest.mark.parametrize("name", list(REFERENCE_TRACES))
def test_a_trace_check_writes_replays_and_validates(name, tmp_path, monkeypatch, capsys):
    prof, bounds, prop = REFERENCE_TRACES[name]
    monkeypatch.setattr(F, "FINDINGS", tuple(f for f in F.FINDINGS if f.property != prop))
    v = check_model(prof, bounds, out_dir=str(tmp_path), liveness_check=True).properties[prop]
    assert v.status == VIOLATED
    assert main(["replay", v.counterexample]) == 0
    trace = read_trace(v.counterexample)
    assert validate_text(jsonl(trace), "jsonl").verdict == "VALID"
    unlogged = validate_text(jsonl(trace, logged=False), "jsonl",
                             limits=SearchLimits(kraft_actions=bounds.kraft_actions))
    assert unlogged.verdict == "VALID"


def test_validate_trace_searches_unlogged_kraft_controller_actions_when_asked(caught, tmp_path, capsys):
    trace = read_trace(caught["kraft_actions"])  # Reassign, then BalanceLeaders
    states = [s["kafka_state"] for s in trace.steps[:-1]] + [reference_step(trace, len(trace.steps) - 1)]
    lines = jsonl(trace, states).splitlines()
    lines[-1] = json.dumps({"state": states[-1]})  # the balancing run is not logged
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n")
    assert main(["validate-trace", str(run)]) == 1
    assert main(["validate-trace", str(run), "--kraft-actions", "balance-leaders"]) == 0
    assert main(["validate-trace", str(run), "--kraft-actions", "reboot"]) == 2
    assert main(["validate-trace", str(run), "--kraft-actions", "restart", "--profile", "zk"]) == 2
    err = capsys.readouterr().err
    assert "--kraft-actions: unknown action 'reboot'" in err and "apply to the kraft profiles only" in err


def test_validate_trace_explains_an_unlogged_zk_topic_deletion():
    model = ReassignmentModel("zk", Bounds(brokers=3, rf=2, reassigns=1, cancels=0, delete_topic=True))
    real, acts = [model.init_states()[0].cluster], [A.Reassign("t", 0, (2, 3)), A.DeleteTopic("t")]
    for a in acts:
        real.append(model.apply(real[-1], a).state)
    while real[-1].topics:  # the controller finishes the reassignment, then resumes the deletion
        state = ModelState(real[-1], (), (0, 0, 0, 0))
        acts.append(next(a for a in model.actions(state)
                         if isinstance(a, (A.ControllerStep, A.LeaderExpandIsr, A.ResumeTopicDeletion))))
        real.append(model.apply(real[-1], acts[-1]).state)
    assert isinstance(acts[-1], A.ResumeTopicDeletion) and len(acts) > 6
    lines = [json.dumps({"initial_state": to_json(real[0]), "profile": "zk"})]
    lines += [json.dumps({"action": to_json(a), "state": to_json(s)}) for a, s in zip(acts[:-5], real[1:-5])]
    lines.append(json.dumps({"state": to_json(real[-1])}))  # four controller steps and the deletion unlogged
    result = validate_text("\n".join(lines), "jsonl")
    assert result.verdict == "VALID"
    assert str(result.explanation[-1][1][-1]) == "ResumeTopicDeletion(t)"
