"""Replication throttles as `kafka-reassign-partitions.sh` sets and clears them (issue 14, item 5).

Mirrors Kafka 3.8 tools/src/main/java/org/apache/kafka/tools/reassign/ReassignPartitionsCommand.java:

- `--execute --additional --throttle R` (`executeAssignment`): the move map is every ongoing
  reassignment (`calculateCurrentMoveMap`: sources = replicas − adding, destinations = adding)
  plus the proposed ones (`calculateProposedMoveMap`: sources from the ongoing move if any, else
  the partition's current replicas; destinations = target − sources). For each topic of the
  move map the tool SETs `leader.replication.throttled.replicas` to every "partition:source"
  and `follower.replication.throttled.replicas` to every "partition:destination" not a source
  (`calculateLeaderThrottles` / `calculateFollowerThrottles`: the topic's whole list is
  replaced), and SETs the broker rates on every source and destination broker
  (`modifyInterBrokerThrottle`). Only then does it call AlterPartitionReassignments: the
  throttles are set even when the request then fails.
- `--verify` (`verifyAssignment`): if no reassignment is in progress anywhere
  (`listPartitionReassignments()` is empty), `clearAllThrottles`: the rates of every broker and
  the two throttled-replica lists of the JSON's topics.
- `--cancel` (`cancelAssignment`): cancels the JSON's partitions that are listed with
  `adding.isEmpty() || !removing.isEmpty()`, then `clearAllThrottles` — whether or not
  other reassignments are still running.

The tool is a client: its state is the throttle configs (`ClusterState.throttles`); it reads
the cluster through the profile's ListPartitionReassignments and acts through the profile's
AlterPartitionReassignments, so it runs unchanged over every profile. The strategies a test
replaces are `ReassignTool.verify_may_clear` and `ReassignTool.clear`.
"""

from __future__ import annotations

from dataclasses import replace

from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import ClusterState, ReplicationThrottles

from .enabled_actions import get_partition
from .profile_base import Profile
from .steps import Step

Move = tuple[frozenset[int], frozenset[int]]  # (sources, destinations)


def current_moves(profile: Profile, state: ClusterState) -> dict[tuple[str, int], Move]:
    """calculateCurrentMoveMap over the profile's ListPartitionReassignments."""
    moves: dict[tuple[str, int], Move] = {}
    for topic in profile.list_partition_reassignments(state).topics:
        for r in topic.partitions:
            moves[(topic.name, r.partition_index)] = (
                frozenset(r.replicas) - frozenset(r.adding_replicas), frozenset(r.adding_replicas))
    return moves


def proposed_moves(profile: Profile, state: ClusterState,
                   proposed: dict[tuple[str, int], tuple[int, ...]]) -> dict[tuple[str, int], Move]:
    """calculateProposedMoveMap: the ongoing moves, then each proposed partition's move."""
    moves = current_moves(profile, state)
    for (topic, index), target in proposed.items():
        if (topic, index) in moves:
            sources = moves[(topic, index)][0]
        else:
            sources = frozenset(get_partition(state, topic, index).replicas)
        moves[(topic, index)] = (sources, frozenset(target) - sources)
    return moves


def set_throttles(throttles: ReplicationThrottles | None, moves: dict[tuple[str, int], Move]) -> ReplicationThrottles:
    """modifyReassignmentThrottle: replace each moving topic's lists, set the moving brokers' rates."""
    t = throttles or ReplicationThrottles()
    topics = {topic for topic, _ in moves}
    leader = {e for e in t.leader if e[0] not in topics}
    follower = {e for e in t.follower if e[0] not in topics}
    brokers = set(t.brokers)
    for (topic, index), (sources, destinations) in moves.items():
        leader |= {(topic, index, b) for b in sources}
        follower |= {(topic, index, b) for b in destinations if b not in sources}
        brokers |= sources | destinations
    return ReplicationThrottles(tuple(sorted(leader)), tuple(sorted(follower)), tuple(sorted(brokers)))


def clear_all(throttles: ReplicationThrottles | None, topics: set[str]) -> ReplicationThrottles | None:
    """clearAllThrottles: every broker's rates, and the throttled-replica lists of `topics`."""
    if throttles is None:
        return None
    t = ReplicationThrottles(
        tuple(e for e in throttles.leader if e[0] not in topics),
        tuple(e for e in throttles.follower if e[0] not in topics),
        (),
    )
    return None if t.empty else t


class ReassignTool:
    """kafka-reassign-partitions.sh, one partition per JSON file, always with `--additional`."""

    #: clearAllThrottles (a strategy, so that a test can plant a tool that forgets some configs)
    clear = staticmethod(clear_all)

    def verify_may_clear(self, profile: Profile, state: ClusterState, topic: str, partition: int) -> bool:
        """verifyAssignment: clear only when no reassignment is in progress in the whole cluster."""
        return not profile.list_partition_reassignments(state).topics

    def execute(self, profile: Profile, state: ClusterState, topic: str, partition: int,
                replicas: tuple[int, ...]) -> Step:
        moves = proposed_moves(profile, state, {(topic, partition): tuple(replicas)})
        throttled = replace(state, throttles=set_throttles(state.throttles, moves))
        return profile.apply(throttled, A.Reassign(topic, partition, tuple(replicas)))

    def cancel(self, profile: Profile, state: ClusterState, topic: str, partition: int) -> Step:
        listed = [r for t in profile.list_partition_reassignments(state).topics if t.name == topic
                  for r in t.partitions if r.partition_index == partition]
        step = Step(state, M.Ack(M.NO_REASSIGNMENT_IN_PROGRESS, "None of the specified partition reassignments are active."))
        if listed and (not listed[0].adding_replicas or listed[0].removing_replicas):
            step = profile.apply(state, A.Cancel(topic, partition))
        return Step(replace(step.state, throttles=self.clear(step.state.throttles, {topic})), step.response)

    def verify(self, profile: Profile, state: ClusterState, topic: str, partition: int) -> Step:
        if state.throttles is None or not self.verify_may_clear(profile, state, topic, partition):
            return Step(state, M.Ack())
        return Step(replace(state, throttles=self.clear(state.throttles, {topic})), M.Ack())

    def apply(self, profile: Profile, state: ClusterState, action) -> Step:
        """Apply a tool action (ToolExecute / ToolCancel / ToolVerify) over `profile`."""
        if isinstance(action, A.ToolExecute):
            return self.execute(profile, state, action.topic, action.partition, action.replicas)
        if isinstance(action, A.ToolCancel):
            return self.cancel(profile, state, action.topic, action.partition)
        if isinstance(action, A.ToolVerify):
            return self.verify(profile, state, action.topic, action.partition)
        raise TypeError(f"not a reassignment-tool action: {action!r}")


TOOL_ACTIONS = (A.ToolExecute, A.ToolCancel, A.ToolVerify)

__all__ = ["TOOL_ACTIONS", "ReassignTool", "clear_all", "current_moves", "proposed_moves", "set_throttles"]
