"""The reassignment model: a profile of the reference plus bounds, as an explorable Model.

Nothing here knows a Kafka rule. The profile lists the enabled actions of an
ActionSpace and applies them; this module only spends the budget (how many requests,
cancels, failures, failovers the admin and the environment may use), keeps the ghost
variables (what the admin asked for) from each action and its response, and labels
each edge with the reassignments that ended on it, for the transition properties.
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import copy
from operator import is_not
from typing import Any

from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.explore.protocol import Model
from kreassign.reference import ActionSpace, Profile, broker_view, profile
from kreassign.reference.actors import ActorRules
from kreassign.reference.broker_isr import LeaderIsrManager, with_broker_isr
from kreassign.reference.broker_replicas import BrokerReplicaManager, with_broker_replicas
from kreassign.reference.capabilities import CAPABILITY_ACTIONS, Capabilities
from kreassign.reference.throttles import ReassignTool
from kreassign.reference.topic_changes import RfRule, partition_zero_replicas, topic_deletion_actions
from kreassign.reference.zk_controller import stale_versions_coincide, with_leadership_cache
from kreassign.reference.zk_events import controller_identity_actions, reset_context, with_controller_identity
from kreassign.reference.zk_znode_batch import znode_batch_actions
from kreassign.spec import actions as A
from kreassign.spec.actor_properties import actor_properties
from kreassign.spec.broker_isr_properties import BROKER_ISR_PROPERTIES
from kreassign.spec.broker_replica_properties import BROKER_REPLICA_PROPERTIES
from kreassign.spec.broker_view_properties import Reporters, broker_view_properties
from kreassign.spec.codec import DecodeError, decode_action, from_json, state_from_json, to_json
from kreassign.spec.awaited_replicas import awaited_property, words_of
from kreassign.spec.fairness import FAIR_PROPERTIES
from kreassign.spec.kraft_properties import KRAFT_CONTROLLER_PROPERTIES
from kreassign.spec.messages import NONE, AlterPartitionReassignmentsResponse
from kreassign.spec.reassign_properties import PROPERTIES, Ending, Ghost, ModelState, Transition
from kreassign.spec.state import ActorMemory, ClusterState, make_cluster, replace
from kreassign.spec.throttle_properties import THROTTLE_PROPERTIES
from kreassign.spec.topic_change_properties import (
    LEADER_BALANCE_PROPERTIES,
    TOPIC_CHANGE_PROPERTIES,
    topic_deletion_properties,
)
from kreassign.spec.zk_event_properties import zk_event_properties
from kreassign.spec.zk_memory_properties import zk_memory_properties
from kreassign.spec.zk_request_properties import ZK_REQUEST_PROPERTIES
from kreassign.spec.znode_batch_properties import ZNODE_BATCH_LIVENESS, ZNODE_BATCH_PROPERTIES

TOPIC = "t"
REASSIGNS, CANCELS, FAILURES, FAILOVERS, CREATES = range(5)  # CREATES: only with bounds.create_partitions


def in_flight(cluster: ClusterState, topic: str, index: int) -> bool:
    """Is a reassignment of this partition still in progress anywhere in the controller's state?"""
    p = cluster.partition(topic, index)
    if p.reassigning:
        return True
    zk = cluster.zk
    if zk is not None:
        if any((t, i) == (topic, index) for t, i, *_ in zk.being_reassigned + zk.admin_znode + zk.pending):
            return True
        for t, i, replicas, adding, removing in zk.memory:
            if (t, i) == (topic, index) and (adding or removing):
                return True
    k = cluster.kip236
    if k is not None and any((t, i) == (topic, index) for t, i, _ in k.extra):
        return True
    return False


def normalize_epochs(cluster: ClusterState) -> ClusterState:
    """The explorer's view of a cluster: epochs renamed so that equal clusters up to epochs coincide.

    Epochs grow without bound (every ISR change bumps the partition epoch), so an
    explorer that kept them would never finish. The reference only compares an epoch
    with the partition's current one, and a record's epoch with other records' epochs
    for equality and order, so an order-preserving renaming is sound: partition epochs
    become 0, and leader epochs the rank of the current epoch among those the
    partition's logs mention. Edge-local properties (epochs never go back) see the
    un-renamed successor through `Transition.after`.
    """
    # twin: checker/packed/kraft_kernel.py KraftKernel.compute
    # twin: checker/packed/kraft_vector.py VectorKernel.sync
    cluster = stale_versions_coincide(cluster)  # zk_versions: the cache's zkVersions, renamed likewise
    changed = False
    topics = list(cluster.topics)
    for k, t in enumerate(topics):
        parts = tuple(map(_normalize_partition, t.partitions))
        if any(map(is_not, parts, t.partitions)):  # _normalize_partition returns a kept partition itself
            topics[k] = replace(t, partitions=parts)
            changed = True
    return replace(cluster, topics=tuple(topics)) if changed else cluster


def _normalize_partition(p):
    if p.log is None:
        if p.leader_epoch == 0 and p.partition_epoch == 0:
            return p
        return replace(p, leader_epoch=0, partition_epoch=0)
    used = {e for _, log in p.log.logs for e in log} | set(p.log.committed) | {p.leader_epoch}
    rank = {e: r for r, e in enumerate(sorted(used))}
    if all(rank[e] == e for e in used) and p.partition_epoch == 0:
        return p
    log = replace(
        p.log,
        logs=tuple((b, tuple(rank[e] for e in entries)) for b, entries in p.log.logs),
        committed=tuple(rank[e] for e in p.log.committed),
    )
    return replace(p, leader_epoch=rank[p.leader_epoch], partition_epoch=0, log=log)


#: the budget slot each kind of action spends (a subclass spends its base's)
SPENDS = (
    (REASSIGNS, (A.Reassign, A.ZnodeReassign, A.ToolExecute, A.ZnodeReassignBatch)),
    (CANCELS, (A.Cancel, A.CancelTopic, A.CancelAll, A.ToolCancel, A.ZnodeDelete)),
    (FAILURES, (A.BrokerFail,)),
    (FAILOVERS, (A.ControllerFailover, A.ControllerResign)),
    (CREATES, (A.CreatePartitions,)),
)
#: the admin's requests: the only actions whose answer changes a ghost (non-deferred profiles)
REQUESTS = (A.Reassign, A.ZnodeReassign, A.ToolExecute, A.Cancel, A.ToolCancel, A.CancelAll, A.CancelTopic)
_SLOT_OF_TYPE: dict[type, int | None] = {}


def budget_slot(action: Any) -> int | None:
    """The budget slot `action` spends (None: it spends nothing); looked up by type, the explorer asks often."""
    kind = type(action)
    try:
        return _SLOT_OF_TYPE[kind]
    except KeyError:
        slot = _SLOT_OF_TYPE[kind] = next((s for s, kinds in SPENDS if issubclass(kind, kinds)), None)
        return slot


def _accepted(response: Any, topic: str, index: int) -> bool:
    if isinstance(response, AlterPartitionReassignmentsResponse):
        try:
            return response.partition_error(topic, index)[0] == NONE
        except KeyError:
            return False
    return getattr(response, "error_code", NONE) == NONE


def follows_a_release(p: Profile) -> bool:
    """The kraft profile (or a variant of it, e.g. a planted bug) follows a Kafka release; kraft-3.7 does not."""
    from kreassign.reference.kraft import Kraft37Profile, KraftProfile

    return isinstance(p, KraftProfile) and not isinstance(p, Kraft37Profile)


def for_release(p: Profile, b: Bounds, *, given: bool) -> Profile:
    """The profile at the bounds' Kafka release and ELR setting (kafka_version, elr). A profile object
    handed in (`given`, e.g. at a metadata.version or a planted bug) must already be at them."""
    if not (b.kafka_version or b.elr):
        return p
    from kreassign.reference.kraft import Kraft37Profile, KraftProfile

    if not isinstance(p, KraftProfile) or isinstance(p, Kraft37Profile):
        key = "kafka_version" if b.kafka_version else "elr"
        raise ConfigError(f"{key}: applies to the kraft profile only, not {p.name!r}")
    version = b.kafka_version or p.kafka_version
    elr = None if not b.elr else b.elr == "on"
    if version == p.kafka_version and (elr is None or elr == p.elr):
        return p
    if given:
        raise ConfigError(f"kafka_version / elr: the bounds ask for Kafka {version} (ELR {b.elr or 'default'}), "
                          f"the profile given follows Kafka {p.kafka_version} (ELR {'on' if p.elr else 'off'})")
    try:
        return KraftProfile(kafka_version=version, elr=elr, controller_actions=p.controller_actions)
    except ValueError as e:
        raise ConfigError(f"{'elr' if b.elr else 'kafka_version'}: {e}") from None


def check_broker_isr(profile_name: str, b: Bounds) -> None:
    """broker_isr (reference/broker_isr.py) is modelled for the kraft profiles and zk, without the capabilities
    that change the ISR or the partitions behind the leaders' back."""
    if profile_name not in ("kraft", "kraft-3.7", "zk"):
        raise ConfigError(f"broker_isr: modelled for kraft, kraft-3.7 and zk, not {profile_name!r}")
    clashing = [k for k in ("zk_versions", "delete_topic", "create_partitions", "throttles", "znode_batch")
                if getattr(b, k, False)]
    if clashing:  # zk_versions: leaders write the ISR to ZooKeeper themselves (IBP < 2.7), not AlterPartition
        raise ConfigError(f"broker_isr: not modelled together with {', '.join(clashing)}")


class ReassignmentModel(Model[ModelState, Transition]):
    """Profile + bounds as a transition system over ModelState."""

    def __init__(self, profile_name: str | Profile = "kraft", bounds: Bounds | None = None, *,
                 tool: ReassignTool | None = None, reporters: Reporters | None = None,
                 rf_rule: RfRule = partition_zero_replicas, replicas: BrokerReplicaManager | None = None,
                 balance_skips_reassigning: bool = False, isr: LeaderIsrManager | None = None,
                 actors: ActorRules | None = None):
        # a Profile object may be passed directly, e.g. a deliberately broken variant in a test;
        # so may the reassignment tool (bounds.throttles) and the broker view (bounds.broker_view)
        self.tool = tool or ReassignTool()
        self.reporters = reporters or broker_view.under_replicated_reporters
        self.rf_rule = rf_rule  # CreatePartitions' replication factor (Kafka's: partition 0's replicas)
        self.replicas = replicas or BrokerReplicaManager()  # brokers' logs (bounds.broker_replicas)
        self.balance_skips_reassigning = balance_skips_reassigning  # Kafka < 3.4 (KAFKA-10149)
        # the one dispatch of the capability actions, shared with the oracle and trace validation
        self.capabilities = Capabilities(self.tool, rf_rule, self.replicas, balance_skips_reassigning,
                                         isr=isr or LeaderIsrManager(),  # isr: the leaders' (bounds.broker_isr)
                                         actors=actors or ActorRules())  # bounds.actors (reference/actors.py)
        self.profile = profile(profile_name) if isinstance(profile_name, str) else profile_name
        self.profile_name = self.profile.name
        self.bounds = bounds or Bounds()
        self.name = profile_name
        b = self.bounds
        self.profile = for_release(self.profile, b, given=not isinstance(profile_name, str))
        if b.kraft_actions:  # the KRaft controller's own actions (reference/kraft.py, docs/kafka.md)
            if not hasattr(self.profile, "controller_actions"):
                raise ConfigError(f"kraft_actions: apply to the kraft profiles only, not {self.profile_name!r}")
            self.profile = copy(self.profile)  # profile() hands out one shared instance
            self.profile.controller_actions = b.kraft_actions
        if b.zk_versions and self.profile.name != "zk":
            raise ConfigError(f"zk_versions: applies to the zk profile only, not {self.profile_name!r}")
        if b.zk_events and self.profile.name != "zk":
            raise ConfigError(f"zk_events: applies to the zk profile only, not {self.profile_name!r}")
        if b.znode_batch and self.profile.name != "zk":  # kip236 keeps no /admin/reassign_partitions content
            raise ConfigError(f"znode_batch: applies to the zk profile only, not {self.profile_name!r}")
        if b.broker_isr:  # reference/broker_isr.py
            check_broker_isr(self.profile.name, b)
        targets = tuple((TOPIC, i, t) for i in range(b.partitions) for t in b.target_lists())
        self.space = ActionSpace(
            targets=targets,
            reassign=not b.throttles,  # with throttles the admin goes through the tool (ToolExecute ...)
            cancel=not b.throttles,
            isr_changes=b.isr_changes and not b.broker_isr,  # broker_isr: the leaders' own ISR maintenance
            failures=True,
            failover=not b.zk_events,  # zk_events: ControllerResign, then ControllerElect(b), in its place
            elections=b.elections,
            replication=b.replication or b.broker_isr,
            log_length=b.log_length,
            znode=b.znode,
        )
        if b.create_partitions:
            self.init_states()  # refuses profiles CreatePartitions is not modelled for, before any search
        if b.delete_topic:
            if self.profile_name not in ("kraft", "kraft-3.7", "zk"):
                raise ConfigError(f"delete_topic: modelled for kraft, kraft-3.7 and zk, not {self.profile_name!r}")
            if b.create_partitions or b.throttles or b.broker_replicas:
                raise ConfigError("delete_topic: not modelled together with create_partitions, throttles "
                                  "or broker_replicas")

    # -- Model protocol --------------------------------------------------------------------------
    def init_states(self) -> Sequence[ModelState]:
        b = self.bounds
        cluster = make_cluster(
            b.broker_ids,
            {TOPIC: b.initial_assignment()},
            unclean=[TOPIC] if b.unclean else [],
            replication_layer=b.replication or b.broker_isr,
        )
        if b.min_insync != 1:  # the topic's min.insync.replicas (ELR's bound)
            cluster = replace(cluster, topics=tuple(replace(t, min_insync_replicas=b.min_insync) for t in cluster.topics))
        cluster = self.profile.initial_state(cluster)
        if b.zk_versions:  # the controller's cached leader/ISR (reference/zk_controller.py)
            cluster = with_leadership_cache(cluster)
        if b.zk_events:  # the controller's identity (reference/zk_events.py)
            cluster = with_controller_identity(cluster)
        if b.broker_replicas:
            cluster = with_broker_replicas(cluster)  # zk: with the controller's requests in flight
        if b.broker_isr:
            cluster = with_broker_isr(cluster)  # the leaders' ISR maintenance (after broker_replicas: fetchers)
        if b.actors:  # what the tools and automation beside the controller remember (reference/actors.py)
            cluster = replace(cluster, actors=ActorMemory())
        ghosts = tuple(Ghost() for _ in cluster.partitions())
        budget = (b.reassigns, b.cancels, b.failures, b.failovers)
        if b.create_partitions:
            if cluster.zk is not None or cluster.kip236 is not None:
                raise ConfigError(f"create_partitions: not modelled for profile {self.profile_name} "
                                  "(its controller keeps per-partition state)")
            budget += (b.create_partitions,)
        return [ModelState(cluster, ghosts, budget)]

    def actions(self, state: ModelState) -> Sequence[Any]:
        out = []
        check_fetch = self.bounds.broker_replicas
        budget = state.budget
        for a in self.profile.enabled_actions(state.cluster, self.space) + self._extra_actions(state):
            if check_fetch and isinstance(a, A.LeaderExpandIsr) and not self.replicas.can_fetch(
                    state.cluster, a.topic, a.partition, a.broker):
                continue  # a follower without the partition's log cannot fetch, so cannot join the ISR
            if self.bounds.broker_isr and isinstance(a, A.FollowerFetch):
                continue  # broker_isr: the followers' fetchers fetch (ReplicaFetch)
            slot = budget_slot(a)
            if slot is None or budget[slot] > 0:
                out.append(a)
        return out

    def _extra_actions(self, state: ModelState) -> list[Any]:
        """Actions of the issue-14 capabilities the bounds switch on (none by default)."""
        out: list[Any] = []
        if self.bounds.throttles:
            operators = "second-operator" in self.bounds.actors  # then --execute / --verify run tagged (actors)
            out += [] if operators else [A.ToolExecute(t, i, r) for t, i, r in self.space.targets]
            parts = sorted({(t, i) for t, i, _ in self.space.targets})
            out += [A.ToolCancel(t, i) for t, i in parts]
            out += [] if operators else [A.ToolVerify(t, i) for t, i in parts]
        if self.bounds.create_partitions:
            out.append(A.CreatePartitions(TOPIC, len(state.cluster.topic(TOPIC).partitions) + 1))
        if self.bounds.broker_replicas:
            out += [A.BrokerReplay(b.id) for b in state.cluster.brokers
                    if b.registered and b.active and self.replicas.replay_changes(state.cluster, b.id)]
        if self.bounds.leader_balance and self.apply(state.cluster, A.AutoLeaderBalance()).state != state.cluster:
            out.append(A.AutoLeaderBalance())  # offered when the periodic task would change something
        if self.bounds.delete_topic:
            out += topic_deletion_actions(state.cluster, (TOPIC,))
        if self.bounds.znode_batch:
            out += znode_batch_actions(state.cluster, self.space.targets)
        if self.bounds.zk_events:
            out += controller_identity_actions(state.cluster)
        if self.bounds.broker_isr:
            out += self.capabilities.isr.enabled(state.cluster)
        if self.bounds.actors:
            parts = sorted({(t, i) for t, i, _ in self.space.targets})
            out += self.capabilities.actors.offered(state.cluster, self.bounds.actors, self.space.targets, parts,
                                                    self.bounds.broker_ids)
        return out

    def apply(self, cluster: ClusterState, action: Any):
        """The reference's step for one action: the profile's, or a capability's (reference/capabilities.py)."""
        if isinstance(action, CAPABILITY_ACTIONS) or cluster.broker_isr is not None:
            return self.capabilities.apply(self.profile, cluster, action)
        return self.profile.apply(cluster, action)

    def next_state(self, state: ModelState, action: Any) -> ModelState | None:
        return self.step(state, action)[0]

    def step(self, state: ModelState, action: Any) -> tuple[ModelState, Transition]:
        """Apply one action: the new model state and the labelled transition."""
        result = self.apply(state.cluster, action)
        budget = state.budget
        slot = budget_slot(action)
        if slot is not None:
            budget = budget[:slot] + (budget[slot] - 1,) + budget[slot + 1 :]
        ghosts, endings = self.ghosts_after(state, action, result.state, result.response)
        added = result.state.partition_count() - len(ghosts)
        if added > 0:  # CreatePartitions: the new partitions start idle
            ghosts += (Ghost(),) * added
        after = normalize_epochs(result.state)
        return ModelState(after, ghosts, budget), Transition(action, result.response, endings, result.state)

    def successors(self, state: ModelState):
        for a in self.actions(state):
            nxt, label = self.step(state, a)
            yield label, nxt

    def properties(self):
        props = list(PROPERTIES)
        if not (self.bounds.replication or self.bounds.broker_isr):
            props = [p for p in props if p.name != "committed_records_kept"]
        if self.bounds.broker_view:
            props += broker_view_properties(self.reporters)
        if self.bounds.throttles:
            props += THROTTLE_PROPERTIES
        if self.bounds.fair:
            props += FAIR_PROPERTIES
            props.append(awaited_property(self.completion_words()))  # each release in its own words
        if self.bounds.create_partitions:
            props += TOPIC_CHANGE_PROPERTIES
        if self.bounds.broker_replicas:
            props += BROKER_REPLICA_PROPERTIES
            if self.init_states()[0].cluster.requests is not None:  # zk: the controller's requests in flight
                props += ZK_REQUEST_PROPERTIES
        if self.bounds.leader_balance:
            props += LEADER_BALANCE_PROPERTIES
        if self.bounds.broker_isr:
            props += BROKER_ISR_PROPERTIES
        if self.bounds.zk_versions:
            props += zk_memory_properties(lambda c: self.apply(c, A.ControllerFailover()).state)
        if self.bounds.kraft_actions:
            props += KRAFT_CONTROLLER_PROPERTIES
        if self.bounds.delete_topic:
            props += topic_deletion_properties(deferred=self.profile.deferred_requests)
        if self.bounds.znode_batch:
            props += ZNODE_BATCH_PROPERTIES
            if self.bounds.fair:
                props.append(ZNODE_BATCH_LIVENESS)
        if self.bounds.zk_events:
            props += zk_event_properties(self._elect_from_zookeeper)
        if self.bounds.actors:
            props += actor_properties(self.bounds.actors)
        return props

    def _elect_from_zookeeper(self, cluster: ClusterState, broker: int) -> ClusterState:
        """zk_events: the model's own election of `broker` on the cluster stripped of the controller's context."""
        forgotten = replace(cluster, zk=reset_context(cluster.zk))
        return self.apply(forgotten, A.ControllerElect(broker)).state

    def completion_words(self) -> str:
        """The words of the profile's completion rule (spec/awaited_replicas.py); a variant of a profile (a planted
        bug) is held to the words of the profile it varies."""
        from kreassign.reference.kraft import Kraft37Profile

        if follows_a_release(self.profile):
            return words_of("kraft", self.profile.kafka_version)
        if isinstance(self.profile, Kraft37Profile):
            return words_of("kraft-3.7")
        return words_of(self.profile.name)

    # -- ghosts --------------------------------------------------------------------------------------
    def ghosts_after(self, state: ModelState, action: Any, after: ClusterState, response: Any):
        """The ghosts after `action` (the admin's intent, spec/reassign_properties.Ghost) and the reassignments it
        ended; the differential models and the oracle server ask it of an implementation's step too."""
        ghosts = list(state.ghosts)
        endings = []
        if len(state.ghosts) > after.partition_count():  # DeleteTopic: those partitions and their ghosts go
            return tuple(g for (t, i, _), g in zip(state.cluster.partitions(), ghosts)
                         if after.partition(t, i) is not None), ()
        for idx, (t, i, before) in enumerate(state.cluster.partitions()):
            g = self._intent(ghosts[idx], state.cluster, action, response, after, t, i, before)
            if g.original is not None and not in_flight(after, t, i):
                endings.append(Ending(idx, "cancelled" if g.cancelled else "completed", g.original, g.requested))
                g = Ghost()
            ghosts[idx] = g
        return tuple(ghosts), tuple(endings)

    def _intent(self, g: Ghost, cluster: ClusterState, action: Any, response: Any, after: ClusterState,
                t: str, i: int, before) -> Ghost:
        """The admin's intent for one partition after this action (the ghost variables)."""
        # twin: checker/packed/kraft_kernel.py KraftKernel.compute
        # twin: checker/packed/kraft_vector.py VectorKernel.tabulate, _tabulate_reassign, _tabulate_cancel
        if not self.profile.deferred_requests and not isinstance(action, REQUESTS):
            return g  # only a request's answer changes the intent (the common case, checked first)
        names_it = (getattr(action, "topic", None), getattr(action, "partition", None)) == (t, i)
        if self.profile.deferred_requests:
            # zk: the request takes effect when the controller runs step U for the partition
            zk = cluster.zk
            starts_u = isinstance(action, A.ControllerStep) and names_it and (t, i, "U") in zk.pending
            target = next((r for tt, ii, r in zk.being_reassigned if (tt, ii) == (t, i)), None)
            if not starts_u or target is None:
                return g
            original = g.original if g.original is not None else before.origin
            if set(target) == set(original):  # reassignTo(origin): zk's cancel
                return Ghost(original, None, True) if g.original is not None else g
            return Ghost(original, tuple(target), False)
        if names_it and isinstance(action, (A.Reassign, A.ZnodeReassign, A.ToolExecute)) and _accepted(response, t, i):
            idle_no_op = (
                g.original is None
                and not in_flight(after, t, i)
                and set(after.partition(t, i).replicas) == set(before.replicas)
            )
            if idle_no_op:  # reassigning an idle partition to its own replicas (any order) moves nothing
                return g
            original = g.original if g.original is not None else before.origin
            return Ghost(original, tuple(action.replicas), False)
        cancels_it = (
            (names_it and isinstance(action, (A.Cancel, A.ToolCancel)))
            or isinstance(action, A.CancelAll)
            or (isinstance(action, A.CancelTopic) and action.topic == t)
        )
        if cancels_it and g.original is not None and _accepted(response, t, i):
            return g._replace(requested=None, cancelled=True)
        return g

    # -- serialization ------------------------------------------------------------------------------
    def state_to_json(self, state: ModelState) -> Any:
        return {
            "cluster": to_json(state.cluster),
            "ghosts": [to_json(list(g)) for g in state.ghosts],
            "budget": list(state.budget),
        }

    def state_from_json(self, data: Any) -> ModelState:
        try:
            cluster = state_from_json(data["cluster"])
        except DecodeError as e:  # the path from the model state's own root
            raise DecodeError(f"cluster.{e.path}" if e.path else "cluster", e.message) from None
        ghosts = tuple(
            Ghost(tuple(g[0]) if g[0] is not None else None, tuple(g[1]) if g[1] is not None else None, bool(g[2]))
            for g in data["ghosts"]
        )
        return ModelState(cluster, ghosts, tuple(data["budget"]))

    def action_to_json(self, action: Any) -> Any:
        return to_json(getattr(action, "action", action))

    def action_from_json(self, data: Any) -> Any:
        return decode_action(data)

    def annotate_path(self, path) -> list[dict[str, Any]]:
        """The real Kafka state of each step (epochs as Kafka would have them, not renamed)."""
        cluster = path[0][0].cluster
        out = [{"kafka_state": to_json(cluster)}]
        for _, label in path[1:]:
            cluster = self.apply(cluster, getattr(label, "action", label)).state
            out.append({"kafka_state": to_json(cluster)})
        return out

    def describe(self) -> dict[str, Any]:
        out = {"profile": self.profile_name, **self.bounds.to_json()}
        if follows_a_release(self.profile):
            # the release and ELR the rules followed, so that a trace replays under them whatever the default
            out["kafka_version"] = self.profile.kafka_version
            out["elr"] = "on" if self.profile.elr else "off"
        return out


__all__ = ["ReassignmentModel", "from_json", "in_flight"]
