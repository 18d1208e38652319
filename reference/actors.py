"""Tools and automation acting beside the controller (issue 26, item 4; bounds: actors).

Each actor is a client of the cluster: it reads through the profile's ListPartitionReassignments
and acts through the profile's AlterPartitionReassignments or the throttle configs, so it runs
unchanged over every profile. What makes it interesting is the time between its reads and its
writes: Kafka's requests carry no precondition (AlterPartitionReassignments has no "expected
target", IncrementalAlterConfigs no expected value; KIP-455), so an actor acts on what it read,
whatever happened since.

- `rebalancer` (Cruise Control's Executor, a rebalancing script): `RebalancerRead` lists the
  reassignments in progress (ListPartitionReassignments + DescribeTopics); `RebalancerMove` /
  `RebalancerCancel` later send AlterPartitionReassignments decided from that read: move only what
  it saw not moving (Cruise Control refuses to start while reassignments it did not start are in
  progress: Executor's ongoing-reassignment check), cancel only what it saw moving (its
  stop_proposal_execution cancels the reassignments it knows of).
- `auto-throttler` (Cruise Control's ReplicationThrottleHelper, cruise-control#1511; an operator's
  script): `AutoThrottlerRead` caches the throttles the moves it lists need, `AutoThrottlerWrite`
  writes that cache back as the throttled-replica lists and broker rates.
- `second-operator`: two operators run kafka-reassign-partitions.sh. `--execute` is one step (the
  tool's `ReassignTool.execute`); `--verify` is two requests with time in between, as in Kafka 3.9.2
  / 4.0.2 tools ReassignPartitionsCommand.verifyAssignment: findPartitionReassignmentStates lists
  the reassignments (`OperatorVerify`), then, if none is in progress, clearAllThrottles
  (`OperatorClear`).
- `bad-plans`: a plan naming a partition or a broker that does not exist, sent through the tool
  (`BadPlanExecute`: executeAssignment validates before it sets a throttle: verifyBrokerIds →
  "Unknown broker id N" (AdminCommandFailedException), then getReplicaAssignmentForPartitions →
  UnknownTopicOrPartitionException "Unable to find partition: t-1") or straight to the controller
  (`BadPlanAlter`: KRaft ReplicationControlManager answers UNKNOWN_TOPIC_OR_PARTITION /
  INVALID_REPLICA_ASSIGNMENT "... no such broker is registered"; the ZooKeeper controller
  UNKNOWN_TOPIC_OR_PARTITION / INVALID_REPLICA_ASSIGNMENT "Replica assignment has brokers that are not
  alive"; both already in the profiles).

The decisions are replaceable strategies (`Rebalancer.acts`, `AutoThrottler.written`,
`Operators.may_clear`, `BadPlans.checks`), so that a test can plant a broken actor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import ActorMemory, ClusterState, ReplicationThrottles, ordered_minus

from .profile_base import Profile
from .steps import ActionNotSupported, Step
from .throttles import ReassignTool, current_moves, set_throttles

#: the actors `bounds.actors` may name, and the ones that manage throttles (they need `throttles = true`)
ACTOR_NAMES = ("rebalancer", "auto-throttler", "second-operator", "bad-plans")
THROTTLE_ACTORS = ("auto-throttler", "second-operator")
#: the two operators of `second-operator`
OPERATORS = (1, 2)

Snapshot = tuple[tuple[str, int, tuple[int, ...]], ...]


def memory(state: ClusterState) -> ActorMemory:
    return state.actors or ActorMemory()


def _remember(state: ClusterState, **changes: Any) -> ClusterState:
    return replace(state, actors=replace(memory(state), **changes))


def listed_targets(profile: Profile, state: ClusterState) -> Snapshot:
    """ListPartitionReassignments as a client reads it: (topic, partition, target) of each reassignment
    in progress, the target being replicas − removing (Admin PartitionReassignment)."""
    out = [(t.name, r.partition_index, ordered_minus(tuple(r.replicas), tuple(r.removing_replicas)))
           for t in profile.list_partition_reassignments(state).topics for r in t.partitions]
    return tuple(sorted(out))


# -- rebalancer --------------------------------------------------------------------------------------------


def _saw_moving(snapshot: Snapshot, topic: str, partition: int) -> bool:
    return any((t, i) == (topic, partition) for t, i, _ in snapshot)


@dataclass(frozen=True)
class Rebalancer:
    """A rebalancer that reads, then acts on what it read."""

    def acts(self, snapshot: Snapshot, moves: Sequence[tuple[str, int, tuple[int, ...]]],
             partitions: Sequence[tuple[str, int]]) -> list[Any]:
        """The requests it may send from `snapshot`: a move of each partition it saw not moving (Cruise
        Control's Executor does not start on partitions with a reassignment in progress), a cancel of
        each it saw moving."""
        out: list[Any] = [A.RebalancerMove(t, i, r) for t, i, r in moves if not _saw_moving(snapshot, t, i)]
        out += [A.RebalancerCancel(t, i) for t, i in partitions if _saw_moving(snapshot, t, i)]
        return out

    def apply(self, profile: Profile, state: ClusterState, action: Any) -> Step:
        if isinstance(action, A.RebalancerRead):
            return Step(_remember(state, snapshot=listed_targets(profile, state)), M.Ack())
        snapshot = memory(state).snapshot
        if snapshot is None:
            raise ActionNotSupported("the rebalancer acts on what it read: RebalancerRead first")
        moves = [(action.topic, action.partition, action.replicas)] if isinstance(action, A.RebalancerMove) else []
        if action not in self.acts(snapshot, moves, [(action.topic, action.partition)]):
            raise ActionNotSupported(f"the rebalancer does not send {action} from what it read: {list(snapshot)}")
        if isinstance(action, A.RebalancerMove):  # sent as read: no precondition in the request (KIP-455)
            return profile.apply(state, A.Reassign(action.topic, action.partition, action.replicas))
        return profile.apply(state, A.Cancel(action.topic, action.partition))


# -- auto-throttler ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AutoThrottler:
    """An external auto-throttler with its own cache of throttled replicas and rates."""

    def cached(self, profile: Profile, state: ClusterState) -> ReplicationThrottles:
        """Its cache: the throttles the reassignments it lists need (sources leader-, adding replicas
        follower-throttled, their brokers rated), computed as the tool computes them."""
        return set_throttles(None, current_moves(profile, state))

    def written(self, cache: ReplicationThrottles, live: ReplicationThrottles | None) -> ReplicationThrottles | None:
        """What it writes back: its cache, as the whole truth (it clears the entries and the broker rates its
        cache does not hold: cruise-control#1511, rates removed from brokers with reassignments in progress)."""
        return None if cache.empty else cache

    def apply(self, profile: Profile, state: ClusterState, action: Any) -> Step:
        if isinstance(action, A.AutoThrottlerRead):
            return Step(_remember(state, cache=self.cached(profile, state)), M.Ack())
        cache = memory(state).cache
        if cache is None:
            raise ActionNotSupported("the auto-throttler writes its cache: AutoThrottlerRead first")
        written = self.written(cache, state.throttles)
        return Step(_remember(replace(state, throttles=written), written=written or ReplicationThrottles()), M.Ack())


# -- two operators -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operators:
    """Two operators running kafka-reassign-partitions.sh --execute and --verify on overlapping plans."""

    def may_clear(self, listed_ongoing: bool) -> bool:
        """verifyAssignment: clearAllThrottles only when its listing showed no reassignment in progress
        (`partsOngoing = !currentReassignments.isEmpty()`, Kafka 3.9.2 / 4.0.2 tools)."""
        return not listed_ongoing

    def entry(self, state: ClusterState, operator: int) -> tuple[int, bool, bool] | None:
        return next((e for e in memory(state).verifies if e[0] == operator), None)

    def apply(self, profile: Profile, state: ClusterState, action: Any, tool: ReassignTool) -> Step:
        if isinstance(action, A.OperatorExecute):
            return tool.execute(profile, state, action.topic, action.partition, action.replicas)
        others = tuple(e for e in memory(state).verifies if e[0] != action.operator)
        if isinstance(action, A.OperatorVerify):  # findPartitionReassignmentStates: ListPartitionReassignments
            ongoing = bool(profile.list_partition_reassignments(state).topics)
            done = not self.may_clear(ongoing)  # nothing to clear: the run ends with its report
            return Step(_remember(state, verifies=tuple(sorted(others + ((action.operator, ongoing, done),)))),
                        M.Ack())
        e = self.entry(state, action.operator)
        if e is None or e[2]:
            raise ActionNotSupported(f"operator #{action.operator} has no --verify listing to act on")
        cleared = replace(state, throttles=tool.clear(state.throttles, {action.topic}))  # clearAllThrottles
        return Step(_remember(cleared, verifies=tuple(sorted(others + ((action.operator, e[1], True),)))), M.Ack())


# -- bad plans ---------------------------------------------------------------------------------------------


def unknown_broker(profile: Profile, state: ClusterState, action: Any) -> M.Ack | None:
    """verifyBrokerIds: every broker of the plan must be among describeCluster's nodes (the live brokers)."""
    unknown = [b for b in action.replicas if not state.is_active(b)]
    if unknown:
        return M.Ack(M.INVALID_REPLICA_ASSIGNMENT, f"Unknown broker id {unknown[0]}")
    return None


def unknown_partition(profile: Profile, state: ClusterState, action: Any) -> M.Ack | None:
    """getReplicaAssignmentForPartitions: every partition of the plan must be described."""
    if state.partition(action.topic, action.partition) is None:
        return M.Ack(M.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition: {action.topic}-{action.partition}")
    return None


Check = Callable[[Profile, ClusterState, Any], "M.Ack | None"]


@dataclass(frozen=True)
class BadPlans:
    """Plans naming partitions or brokers that do not exist, through the tool or straight to the controller."""

    #: executeAssignment's checks before it sets a throttle, in Kafka's order (3.9.2 / 4.0.2)
    checks: tuple[Check, ...] = (unknown_broker, unknown_partition)

    def apply(self, profile: Profile, state: ClusterState, action: Any, tool: ReassignTool) -> Step:
        if isinstance(action, A.BadPlanAlter):
            return profile.apply(state, A.Reassign(action.topic, action.partition, action.replicas))
        for check in self.checks:
            refusal = check(profile, state, action)
            if refusal is not None:
                return Step(state, refusal)
        return tool.execute(profile, state, action.topic, action.partition, action.replicas)


def bad_plans(state: ClusterState, plan: tuple[str, int, tuple[int, ...]],
              broker_ids: Sequence[int]) -> list[tuple[str, int, tuple[int, ...]]]:
    """Two bad versions of a good `plan`: its last broker replaced by an id no broker has, and its partition
    replaced by one past the topic's last."""
    topic, partition, replicas = plan
    count = len(state.topic(topic).partitions)
    return [(topic, partition, replicas[:-1] + (max(broker_ids) + 1,)), (topic, count, replicas)]


# -- all of them -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActorRules:
    """The actors' rules, each replaceable by a test."""

    rebalancer: Rebalancer = field(default_factory=Rebalancer)
    throttler: AutoThrottler = field(default_factory=AutoThrottler)
    operators: Operators = field(default_factory=Operators)
    bad_plans: BadPlans = field(default_factory=BadPlans)

    def apply(self, profile: Profile, state: ClusterState, action: Any, tool: ReassignTool) -> Step:
        if isinstance(action, (A.RebalancerRead, A.RebalancerMove, A.RebalancerCancel)):
            return self.rebalancer.apply(profile, state, action)
        if isinstance(action, (A.AutoThrottlerRead, A.AutoThrottlerWrite)):
            return self.throttler.apply(profile, state, action)
        if isinstance(action, (A.OperatorExecute, A.OperatorVerify, A.OperatorClear)):
            return self.operators.apply(profile, state, action, tool)
        if isinstance(action, (A.BadPlanExecute, A.BadPlanAlter)):
            return self.bad_plans.apply(profile, state, action, tool)
        raise TypeError(f"not an actor's action: {action!r}")

    def offered(self, state: ClusterState, names: Sequence[str], moves: Sequence[tuple[str, int, tuple[int, ...]]],
                partitions: Sequence[tuple[str, int]], broker_ids: Sequence[int]) -> list[Any]:
        """The actions the actors named in `names` may take in `state` (the model's budget limits their
        requests like the admin's)."""
        mem = memory(state)
        plans = sorted({t: (t, i) for t, i in sorted(partitions, reverse=True)}.values())  # one per topic
        writes: list[Any] = []  # config writes only: no request to the controller
        if "auto-throttler" in names and mem.cache is not None \
                and self.throttler.written(mem.cache, state.throttles) != state.throttles:
            writes.append(A.AutoThrottlerWrite())
        if "second-operator" in names:
            for op in OPERATORS:
                e = self.operators.entry(state, op)
                if e is not None and not e[2]:
                    writes += [A.OperatorClear(t, i, op) for t, i in plans]  # only the topic matters to --verify
        if state.zk is not None and state.zk.active and state.zk.pending:
            # zk: the controller handles one event at a time; a ListPartitionReassignments or an
            # AlterPartitionReassignments waits until the run of onPartitionReassignment in progress returns
            # (the admin's requests wait the same way: reference/zk.py enabled_actions)
            return writes
        out: list[Any] = []
        if "rebalancer" in names:
            out.append(A.RebalancerRead())
            if mem.snapshot is not None:
                out += self.rebalancer.acts(mem.snapshot, moves, partitions)
        if "auto-throttler" in names:
            out.append(A.AutoThrottlerRead())
        if "second-operator" in names:
            for op in OPERATORS:
                e = self.operators.entry(state, op)
                if e is None or e[2]:  # an operator runs one tool at a time: not while its --verify runs
                    out += [A.OperatorExecute(t, i, r, op) for t, i, r in moves]
                    out += [A.OperatorVerify(t, i, op) for t, i in plans]
        if "bad-plans" in names:
            for t, i, r in bad_plans(state, moves[0], broker_ids):
                out += [A.BadPlanExecute(t, i, r), A.BadPlanAlter(t, i, r)]
        return out + writes


__all__ = ["ACTOR_NAMES", "OPERATORS", "THROTTLE_ACTORS", "ActorRules", "AutoThrottler", "BadPlans", "Operators",
           "Rebalancer", "bad_plans", "listed_targets", "memory", "unknown_broker", "unknown_partition"]
