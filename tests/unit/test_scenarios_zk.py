"""Scenarios in ZooKeeper mode (issue 24; docs/scenarios.md, "ZooKeeper mode"), no JVM: walks drawn from the zk
model (the controller's steps and the ISR expansions settled), the same seed giving the same JSON, every walk
replaying on the model, the mapping of each action kind, the file's mode rules, and the runner against a
stand-in cluster whose answers and znodes follow the model — with a planted difference in a znode caught."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.scenarios import mapping
from kreassign.checker.scenarios.format import ScenarioError, dumps, scenario_from_json
from kreassign.checker.scenarios.generate import random_walk, shortest_path
from kreassign.spec import actions as A

from tests.unit.scenario_fakes import ModelAdmin

BOUNDS = Bounds(brokers=4, rf=3, reassigns=2, cancels=1, failures=1, failovers=1)
SMALL = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=2, failovers=1)
FAULTS = ("kill", "stop", "failover")


def walk(seed: int, bounds: Bounds = BOUNDS, length: int = 7):
    return random_walk(bounds, seed, length, mode="zk", faults=FAULTS)


def test_a_zk_walk_names_its_mode_profile_and_release_and_the_same_seed_gives_the_same_json():
    s = walk(3)
    data = s.to_json()
    assert (data["mode"], data["profile"], data["kafka_version"]) == ("zk", "zk", "3.9.2")
    assert data["cluster"]["controllers"] == 1  # the ZooKeeper server
    assert dumps(walk(3)) == dumps(s) and dumps(walk(4)) != dumps(s)


@pytest.mark.parametrize("bounds", [BOUNDS, SMALL], ids=["4-brokers-rf3", "3-brokers-rf2-2-failures"])
def test_every_zk_walk_replays_on_the_model_and_ends_with_every_broker_back(bounds):
    for seed in range(12):
        s = walk(seed, bounds)
        expected = mapping.replay_on_model(scenario_from_json(json.loads(dumps(s))))
        assert len(expected) == len(s.steps)
        last = expected[-1].state.cluster
        assert all(b.active for b in last.brokers)
        zk = last.zk
        assert zk.active and not zk.pending  # settled: the controller has no step left to run


def test_settling_runs_the_controllers_steps_of_a_reassignment_to_its_end():
    model = mapping.make_model(BOUNDS, "zk")
    s0 = mapping.settle(model, model.init_states()[0])[0]
    nxt = model.step(s0, A.Reassign("t", 0, (2, 3, 4)))[0]
    assert nxt.cluster.zk.pending  # the request queued step U
    settled, taken = mapping.settle(model, nxt)
    p = settled.cluster.partition("t", 0)
    assert (p.replicas, sorted(p.isr), p.leader, p.adding, p.removing) == ((2, 3, 4), [2, 3, 4], 2, (), ())
    assert taken.count("ControllerStep(t-0)") >= 8 and "LeaderExpandIsr(t-0 +4)" in taken
    assert not settled.cluster.zk.pending and not settled.cluster.zk.being_reassigned


def test_each_driven_zk_action_maps_to_a_real_step_and_back():
    cases = [(A.Reassign("t", 0, (2, 3, 4)), "reassign"), (A.Cancel("t", 0), "cancel"),
             (A.BrokerFail(2), "kill"), (A.BrokerRecover(2), "restart"),
             (A.ControllerFailover(), "reelect_controller")]
    for action, do in cases:
        step = mapping.real_step(action, "topic", mode="zk")
        assert step.do == do and mapping.model_action(step) == action
    assert mapping.real_step(A.BrokerFail(2), "topic", clean_shutdown=True, mode="zk").do == "stop"
    assert mapping.real_step(A.ControllerFailover(), "topic").do == "kill_controller"  # kraft
    model = mapping.make_model(BOUNDS, "zk")
    assert mapping.cluster_own(model) == (A.ControllerStep, A.LeaderExpandIsr)
    assert mapping.cluster_own(mapping.make_model(BOUNDS)) == (A.LeaderExpandIsr,)


def test_walks_reach_every_kind_of_step():
    kinds = {st.do for seed in range(20) for st in walk(seed).steps}
    assert {"reassign", "cancel", "kill", "stop", "restart", "reelect_controller"} <= kinds


def test_zk_expectations_name_the_znodes_the_model_determines():
    s = walk(3)
    step = next(st for st in s.steps if st.do == "reassign")
    z = step.expect["znodes"]
    assert set(z) == {"partitions", "reassign_partitions", "brokers"}
    assert set(z["partitions"]["0"]) == {"replicas", "adding", "removing", "leader", "isr"}
    assert z["reassign_partitions"] == []  # the API route never writes /admin/reassign_partitions


def test_a_shortest_path_in_zk_mode():
    s = shortest_path(BOUNDS, "reassigning", mode="zk")
    assert [st.do for st in s.steps][:2] == ["kill", "reassign"] and s.profile == "zk"
    mapping.replay_on_model(s)
    with pytest.raises(ValueError, match="no reachable state"):  # zk refuses a dead target: never in flight
        shortest_path(BOUNDS, "reassigning_with_failed_target", mode="zk")


@pytest.mark.parametrize("change,field", [
    (lambda d: d.update(profile="kraft"), "profile"),
    (lambda d: d.update(kafka_version="4.4.0"), "kafka_version"),
    (lambda d: d["cluster"].update(controllers=3), "cluster.controllers"),
    (lambda d: d["steps"][0].update({"do": "kill_controller"}) or d["steps"][0].pop("broker", None), "steps[0].do"),
])
def test_a_zk_file_that_breaks_the_modes_rules_is_named(change, field):
    data = walk(3).to_json()
    change(data)
    with pytest.raises(ScenarioError, match=r"^" + field.replace("[", r"\[").replace("]", r"\]") + ": "):
        scenario_from_json(data)


def test_a_kraft_file_may_not_reelect_a_controller():
    data = random_walk(BOUNDS, 19, 6, faults=FAULTS).to_json()
    data["steps"][0] = {"do": "reelect_controller", "waits": [], "model": [], "expect": None}
    with pytest.raises(ScenarioError, match=r"^steps\[0\]\.do: reelect_controller is a step of zk mode"):
        scenario_from_json(data)


# -- the runner, against a stand-in ZooKeeper-mode cluster that behaves as the model does (no JVM) ----------

class _ZkAdmin(ModelAdmin):
    """The Admin client and ZooKeeper answered from the zk model's settled state; `leave_entry` plants a
    controller that writes an API request into /admin/reassign_partitions (only the legacy route does)."""

    def __init__(self, model, leave_entry=False):
        super().__init__(model)
        self.leave_entry, self.entries = leave_entry, []
        self.controller, self.epoch = 1, 1

    def create_topic(self, name, assignment, configs):
        self.topic = name

    def alter_reassignments(self, changes):
        [reply] = super().alter_reassignments(changes)
        [(topic, p, target)] = changes
        if self.leave_entry and target is not None and reply["error_class"] is None:
            self.entries = [{"topic": topic, "partition": p, "replicas": list(target)}]
        return [reply]

    def describe_cluster(self, timeout_s=10.0):
        return {"controller": self.controller, "brokers": [{"id": b} for b in self.broker_ids()]}

    def znodes(self, connect, paths, timeout_s=10.0):
        out = {}
        c = self.state.cluster
        for path in paths:
            if path == "/controller":
                out[path] = {"exists": True, "data": json.dumps({"brokerid": self.controller})}
            elif path == "/controller_epoch":
                out[path] = {"exists": True, "data": str(self.epoch)}
            elif path == "/brokers/ids":
                out[path] = {"exists": True, "data": None, "children": [str(b) for b in self.broker_ids()]}
            elif path.startswith("/brokers/ids/"):
                out[path] = {"exists": int(path.rsplit("/", 1)[1]) in self.broker_ids()}
            elif path == f"/brokers/topics/{self.topic}":
                ps = c.topic("t").partitions
                adding = {str(i): list(p.adding) for i, p in enumerate(ps) if p.reassigning}
                doc = {"partitions": {str(i): list(p.replicas) for i, p in enumerate(ps)},
                       "adding_replicas": adding,
                       "removing_replicas": {str(i): list(p.removing) for i, p in enumerate(ps) if p.reassigning}}
                out[path] = {"exists": True, "data": json.dumps(doc)}
            elif path.endswith("/state"):
                p = c.topic("t").partitions[int(path.split("/")[-2])]
                out[path] = {"exists": True, "version": p.partition_epoch, "data": json.dumps(
                    {"leader": p.leader, "isr": list(p.isr), "leader_epoch": p.leader_epoch})}
            elif path == "/admin/reassign_partitions" and self.entries:
                out[path] = {"exists": True, "data": json.dumps({"version": 1, "partitions": self.entries})}
            else:
                out[path] = {"exists": False}
        return out

    def delete_znode(self, connect, path, timeout_s=10.0):
        assert path == "/controller"
        self.apply(A.ControllerFailover())
        live = self.broker_ids()
        self.controller = live[(live.index(self.controller) + 1) % len(live)] if self.controller in live else live[0]
        self.epoch += 1


class _ZkCluster:
    controllers = ()
    brokers = (1, 2, 3, 4)

    def __init__(self, model, **kw):
        from kreassign.checker.cluster import ClusterSpec
        from kreassign.checker.scenarios.run import ZK_BROKER_CONFIG

        self.spec = ClusterSpec(version="3.9.2", mode="zk", brokers=4, broker_config=ZK_BROKER_CONFIG)
        self.admin = _ZkAdmin(model, **kw)
        self.nodes = [SimpleNamespace(name=f"broker-{b}", role="broker", state="running") for b in (1, 2, 3, 4)]

    def address(self, node):
        return "127.0.0.1:2181"

    def wait_for(self, what, check, timeout_s, nodes=None):
        from kreassign.checker.cluster import ClusterError

        missing = check()
        if missing is not None:
            raise ClusterError(f"{what} did not happen within {timeout_s:.0f} s: {missing}")

    def kill(self, node):
        assert node != self.admin.controller, "a broker failure must not hit the controller broker"
        self.admin.apply(A.BrokerFail(node))

    stop = kill

    def restart(self, node):
        self.admin.apply(A.BrokerRecover(node))


def _rich_walk():
    """A walk that reassigns, re-elects and fails the broker that is the stand-in's first controller (1)."""
    for seed in range(200):
        s = walk(seed)
        dos = [st.do for st in s.steps]
        if {"reassign", "reelect_controller"} <= set(dos) and any(
                st.do in ("kill", "stop") and st.broker == 1 for st in s.steps):
            return s
    raise AssertionError("no such walk")


def test_the_zk_runner_sees_no_divergence_where_the_cluster_does_what_the_model_does():
    from kreassign.checker.scenarios.run import run_scenario

    s = _rich_walk()
    result = run_scenario(_ZkCluster(mapping.model_for(s)), s, settle_s=0.1)
    assert result.ok and result.divergences == [], result.divergences
    znode_steps = [st for st in result.steps if "znodes" in st["observed"]]
    assert len(znode_steps) == len(s.steps)
    moved = [st for st in result.steps if "controller_moved_off" in st]
    assert moved and moved[0]["controller_moved_off"]["reelections"] >= 1


def test_a_znode_that_differs_from_the_model_is_a_state_divergence():
    from kreassign.checker.scenarios.run import run_scenario

    s = _rich_walk()
    result = run_scenario(_ZkCluster(mapping.model_for(s), leave_entry=True), s, settle_s=0.1)
    fields = {d["field"] for d in result.divergences if d["kind"] == "state"}
    assert fields == {"znode reassign_partitions"} and not result.ok


def test_a_zk_scenario_refuses_a_cluster_that_balances_leaders_by_itself():
    from kreassign.checker.cluster import ClusterError, ClusterSpec
    from kreassign.checker.scenarios.run import run_scenario

    s = _rich_walk()
    cluster = _ZkCluster(mapping.model_for(s))
    cluster.spec = ClusterSpec(version="3.9.2", mode="zk", brokers=4)
    with pytest.raises(ClusterError, match="auto.leader.rebalance.enable=false"):
        run_scenario(cluster, s, settle_s=0.1)


def test_seeds_spread_over_the_failures():
    brokers = {st.broker for seed in range(20) for st in walk(seed).steps if st.do in ("kill", "stop")}
    assert brokers == {1, 2, 3, 4}  # every broker is failed by some walk


@pytest.fixture(autouse=True)
def _tool_steps_through_the_stand_in(monkeypatch):
    from tests.unit.scenario_fakes import tool_through_admin

    tool_through_admin(monkeypatch)


# -- pauses in ZooKeeper mode: the controller moved off the broker to be frozen, and the leader's AlterPartition
#    channel taken off it (run.py, docs/scenarios.md "Pauses") --

CHANNEL_LINE = ("[2026-11-27 19:53:33,048] INFO [zk-broker-{l}-to-controller-alter-partition-channel-manager]: Recorded "
                "new ZK controller, from now on will use node 127.0.0.1:30829 (id: {c} rack: null) "
                "(kafka.server.NodeToControllerRequestThread)\n")


def test_the_alter_partition_channels_controller_is_read_from_the_brokers_log():
    from kreassign.checker.scenarios.run import alter_partition_controller

    log = CHANNEL_LINE.format(l=1, c=1) + CHANNEL_LINE.format(l=1, c=4) + CHANNEL_LINE.format(l=2, c=3)
    assert alter_partition_controller(log, 1) == 4 and alter_partition_controller(log, 2) == 3
    assert alter_partition_controller(log, 3) is None


def _pause_walk():
    from kreassign.checker.scenarios.generate import actions_of, from_actions, random_walk

    for seed in range(200):  # the walk's first pause, then its resume (from_actions adds it)
        s = random_walk(BOUNDS, seed, 3, mode="zk", faults=("pause",))
        if s.steps[0].do == "pause":
            return from_actions(s, actions_of(s)[:1], topic=s.topic)
    raise AssertionError("no walk that starts with a pause")


class _PausingCluster(_ZkCluster):
    """The stand-in with pauses (the model's LeaderShrinkIsr, as the throttle holds it) and brokers' server logs
    naming the controller each leader's AlterPartition channel sends to; `channel` maps a leader to it."""

    def __init__(self, model, controller, channel, **kw):
        from kreassign.checker.cluster import ClusterSpec
        from kreassign.checker.scenarios.pauses import PAUSE_BROKER_CONFIG, PAUSE_SESSION_TIMEOUT_MS
        from kreassign.checker.scenarios.run import ZK_BROKER_CONFIG

        super().__init__(model, **kw)
        self.spec = ClusterSpec(version="3.9.2", mode="zk", brokers=4, session_timeout_ms=PAUSE_SESSION_TIMEOUT_MS,
                                broker_config=ZK_BROKER_CONFIG + PAUSE_BROKER_CONFIG)
        self.admin.controller, self.channel, self.probes = controller, dict(channel), []
        admin = self.admin
        create, reassign, describe = admin.create_topic, admin.alter_reassignments, admin.describe_topics

        def create_topic(name, assignment, configs):
            if name.startswith("kreassign-probe-"):
                self.probes.append(("create", name, assignment[0]))
            else:
                create(name, assignment, configs)

        def alter_reassignments(changes):
            [(topic, p, target)] = changes
            if topic.startswith("kreassign-probe-"):  # the leader's expansion: answered NOT_CONTROLLER, resent
                self.probes.append(("reassign", topic, target))
                self.channel[target[0]] = admin.controller
                return [{"topic": topic, "partition": p, "error_class": None}]
            return reassign(changes)

        def describe_topics(names):
            if names[0].startswith("kreassign-probe-"):
                target = next(x[2] for x in reversed(self.probes) if x[0] == "reassign")
                return {names[0]: {"partitions": [{"partition": 0, "isr": list(target)}]}}
            return describe(names)

        admin.create_topic, admin.alter_reassignments, admin.describe_topics = create_topic, alter_reassignments, \
            describe_topics
        admin.delete_topics = lambda names: self.probes.append(("delete", names[0], None))

    def logs(self, node, name="server"):
        assert name == "server"
        return CHANNEL_LINE.format(l=node, c=self.channel[node]) if node in self.channel else ""


@pytest.fixture
def stand_in_pauses(monkeypatch):
    from kreassign.checker.scenarios.pauses import Pauses

    def pause(self, partition, broker):
        assert broker != self.cluster.admin.controller, "the frozen broker must not be the controller"
        leader = self.cluster.admin.state.cluster.partition("t", partition).leader
        assert self.cluster.channel.get(leader) != broker, "the leader would send its shrink to the frozen broker"
        self.held.add((partition, broker))
        admin = self.cluster.admin  # held: not settled (settling would take the follower back)
        admin.state = admin.model.step(admin.state, A.LeaderShrinkIsr("t", partition, broker))[0]

    def resume(self, partition, broker):
        self.held.discard((partition, broker))
        self.cluster.admin.apply(A.LeaderExpandIsr("t", partition, broker))

    monkeypatch.setattr(Pauses, "pause", pause)
    monkeypatch.setattr(Pauses, "resume", resume)
    monkeypatch.setattr(Pauses, "release_all", lambda self: self.held.clear())


def _paused(s):
    return s.steps[0].broker, mapping.replay_on_model(s)[0]


def test_a_pause_of_the_controller_broker_moves_the_controller_and_the_leaders_channel_off_it(stand_in_pauses):
    from kreassign.checker.scenarios.run import run_scenario

    s = _pause_walk()
    frozen = s.steps[0].broker
    leader = 1 if frozen != 1 else 2
    cluster = _PausingCluster(mapping.model_for(s), controller=frozen, channel={leader: frozen})
    result = run_scenario(cluster, s, settle_s=0.1)
    assert result.ok, result.divergences
    first = result.steps[0]
    assert first["controller_moved_off"]["broker"] == frozen and first["controller_moved_off"]["reelections"] >= 1
    assert first["alter_partition_channel"]["was"] == frozen and first["alter_partition_channel"]["now"] != frozen
    assert [p[0] for p in cluster.probes] == ["create", "reassign", "delete"]
    assert all("controller_moved_off" not in st and "alter_partition_channel" not in st for st in result.steps[1:])


def test_a_pause_of_a_former_controller_still_cached_by_the_leader_refreshes_only_the_channel(stand_in_pauses):
    from kreassign.checker.scenarios.run import run_scenario

    s = _pause_walk()
    frozen = s.steps[0].broker
    leader = 1 if frozen != 1 else 2
    other = next(b for b in (1, 2, 3, 4) if b not in (frozen, leader))
    cluster = _PausingCluster(mapping.model_for(s), controller=other, channel={leader: frozen})
    result = run_scenario(cluster, s, settle_s=0.1)
    assert result.ok and "controller_moved_off" not in result.steps[0]
    assert result.steps[0]["alter_partition_channel"]["now"] == other


def test_a_pause_whose_leader_sends_elsewhere_touches_nothing(stand_in_pauses):
    from kreassign.checker.scenarios.run import run_scenario

    s = _pause_walk()
    frozen = s.steps[0].broker
    leader = 1 if frozen != 1 else 2
    other = next(b for b in (1, 2, 3, 4) if b not in (frozen, leader))
    cluster = _PausingCluster(mapping.model_for(s), controller=other, channel={leader: other})
    result = run_scenario(cluster, s, settle_s=0.1)
    assert result.ok and not cluster.probes and "alter_partition_channel" not in result.steps[0]


def test_without_the_remedy_the_stand_in_refuses_the_pause(stand_in_pauses, monkeypatch):
    # the broken variant: run.py without `_alter_partition_channel_off` freezes the broker the leader sends to
    from kreassign.checker.scenarios import run

    monkeypatch.setattr(run, "_alter_partition_channel_off", lambda *a, **k: None)
    s = _pause_walk()
    frozen = s.steps[0].broker
    leader = 1 if frozen != 1 else 2
    cluster = _PausingCluster(mapping.model_for(s), controller=frozen, channel={leader: frozen})
    with pytest.raises(AssertionError, match="send its shrink to the frozen broker"):
        run.run_scenario(cluster, s, settle_s=0.1)
