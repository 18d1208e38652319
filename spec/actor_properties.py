"""What must hold when tools and automation act beside the controller (issue 26, item 4; bounds: actors).

Checked when the bounds name actors (reference/actors.py):

- `refused_plan_changes_nothing` (bad-plans): a plan naming a partition or a broker that does not exist
  is refused, by the tool or by the controller, and changes nothing (no throttle set, no record);
- `rebalancer_acts_on_what_is_there` (rebalancer): a rebalancer moves only partitions with no
  reassignment in progress and cancels only the reassignment it saw;
- `actor_writes_keep_moving_throttles` (auto-throttler, second-operator): a throttle write by an
  actor never removes a throttle a move in progress needs (spec/throttle_properties.py's
  `moving_replicas_throttled`, before and after the write).

Kafka's requests carry no precondition (AlterPartitionReassignments names no expected target,
IncrementalAlterConfigs no expected value), so an actor that acts on an older read breaks the last
two in every profile: those are findings of the real tools (spec/findings.py), each recognised by
the actor having acted consistently with what it read.
"""

from __future__ import annotations

from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.messages import NONE
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState
from kreassign.spec.state import ReplicationThrottles
from kreassign.spec.throttle_properties import moving_replicas_throttled

_NONE = ReplicationThrottles()

Needed = tuple[str, str, int, int]  # ("leader" | "follower" | "rate", topic, partition, broker)


def missing_throttles(ms: ModelState) -> list[Needed]:
    """The throttles the moves in progress need and do not have, one entry per missing config.
    twin: spec/throttle_properties.py moving_replicas_throttled (empty exactly when it holds;
    tests/unit/test_actors.py compares them on every state of small models)."""
    th = ms.cluster.throttles or _NONE
    leader, follower, rates = set(th.leader), set(th.follower), set(th.brokers)
    out: list[Needed] = []
    for (t, i, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        if g.original is None or g.requested is None or not p.reassigning:
            continue
        for b in g.original:
            out += [("leader", t, i, b)] if (t, i, b) not in leader else []
            out += [("rate", t, i, b)] if b not in rates else []
        for b in sorted(set(g.requested) - set(g.original) - set(p.isr)):
            out += [("follower", t, i, b)] if (t, i, b) not in follower else []
            out += [("rate", t, i, b)] if b not in rates else []
    return out


def held_by(throttles: ReplicationThrottles | None, need: Needed) -> bool:
    """Does `throttles` hold the config `need` names?"""
    th = throttles or _NONE
    kind, t, i, b = need
    if kind == "rate":
        return b in th.brokers
    return (t, i, b) in (th.leader if kind == "leader" else th.follower)


def refused(response: Any) -> bool:
    """The request was refused: a top-level error, or an error for a partition it named."""
    if getattr(response, "error_code", NONE) != NONE:
        return True
    return any(r.error_code != NONE for t in (getattr(response, "responses", None) or ()) for r in t.partitions)


def _act(label: Any) -> Any:
    return getattr(label, "action", label)


def refused_plan_changes_nothing(prev: ModelState, label: Any, nxt: ModelState) -> bool:
    """A bad plan that is refused (by the tool's validation or by the controller) leaves the cluster as it
    was: no throttle set, no reassignment started."""
    if not isinstance(_act(label), (A.BadPlanExecute, A.BadPlanAlter)) or not refused(getattr(label, "response", None)):
        return True
    return nxt.cluster == prev.cluster


def _ghost(ms: ModelState, topic: str, partition: int):
    for (t, i, _), g in zip(ms.cluster.partitions(), ms.ghosts):
        if (t, i) == (topic, partition):
            return g
    return None


def _seen_target(ms: ModelState, topic: str, partition: int) -> tuple[int, ...] | None:
    """The target of the reassignment of topic-partition the rebalancer listed when it last read (None: idle)."""
    snapshot = (ms.cluster.actors.snapshot if ms.cluster.actors is not None else None) or ()
    return next((r for t, i, r in snapshot if (t, i) == (topic, partition)), None)


def rebalancer_acts_on_what_is_there(prev: ModelState, label: Any, nxt: ModelState) -> bool:
    """A rebalancer's move that is accepted finds its partition with no reassignment in progress; its cancel
    that is accepted cancels the very reassignment (same target) its read saw."""
    act = _act(label)
    if not isinstance(act, (A.RebalancerMove, A.RebalancerCancel)) or refused(getattr(label, "response", None)):
        return True
    g = _ghost(prev, act.topic, act.partition)
    if g is None:
        return True
    if isinstance(act, A.RebalancerMove):
        return g.original is None
    seen = _seen_target(prev, act.topic, act.partition)
    return g.original is not None and g.requested is not None and seen is not None and set(g.requested) == set(seen)


def actor_writes_keep_moving_throttles(prev: ModelState, label: Any, nxt: ModelState) -> bool:
    """A throttle write by an actor (the auto-throttler's write-back, an operator's clearAllThrottles) never
    removes a throttle that a move in progress needs."""
    if not isinstance(_act(label), (A.AutoThrottlerWrite, A.OperatorClear)):
        return True
    return not moving_replicas_throttled(prev) or moving_replicas_throttled(nxt)


# -- the findings' signatures (spec/findings.py declares them) ----------------------------------------------


def rebalancer_acted_on_stale_read(prev: ModelState, label: Any, nxt: ModelState) -> bool:
    """The rebalancer acted as its read told it to (a move of a partition it saw idle, a cancel of one it saw
    moving), and the cluster had changed since: a reassignment started, was overridden or ended in between."""
    act = _act(label)
    if not isinstance(act, (A.RebalancerMove, A.RebalancerCancel)):
        return False
    seen = _seen_target(prev, act.topic, act.partition)
    return (seen is None) == isinstance(act, A.RebalancerMove)


def auto_throttler_wrote_stale_cache(prev: ModelState, label: Any, nxt: ModelState) -> bool:
    """The auto-throttler wrote back its cache, and every throttle the write took from a move in progress is
    one its cache does not hold: it read before that move started or changed."""
    if not isinstance(_act(label), A.AutoThrottlerWrite) or prev.cluster.actors is None:
        return False
    cache = prev.cluster.actors.cache
    lost = [n for n in missing_throttles(nxt) if held_by(prev.cluster.throttles, n)]
    return bool(lost) and not any(held_by(cache, n) for n in lost)


def verify_cleared_after_listing_nothing(prev: ModelState, label: Any, nxt: ModelState) -> bool:
    """An operator's --verify listed no reassignment in progress, another operator's --execute started one,
    then the first --verify's clearAllThrottles removed its throttles."""
    act = _act(label)
    if not isinstance(act, A.OperatorClear) or prev.cluster.actors is None:
        return False
    return any(e == (act.operator, False, False) for e in prev.cluster.actors.verifies)


def cache_written_without_moving_throttle(ms: ModelState) -> bool:
    """The throttles are still what the auto-throttler last wrote back (its cache then), and that lacks a
    throttle a move in progress needs."""
    actors = ms.cluster.actors
    if actors is None or actors.written is None or (ms.cluster.throttles or _NONE) != actors.written:
        return False
    return bool(missing_throttles(ms))


def cleared_by_verify_that_listed_nothing(ms: ModelState) -> bool:
    """An operator's --verify that listed no reassignment in progress has cleared every throttle of the topic,
    and a move of that topic (started since by the other operator) runs without them."""
    actors = ms.cluster.actors
    if actors is None or not any(not ongoing and cleared for _, ongoing, cleared in actors.verifies):
        return False
    th = ms.cluster.throttles or _NONE
    moving = {t for _, t, _, _ in missing_throttles(ms)}
    return bool(moving) and not th.brokers and not any(e[0] in moving for e in th.leader + th.follower)


_SOURCE = "KIP-455 (AlterPartitionReassignments has no precondition); Kafka 3.9.2 / 4.0.2 tools ReassignPartitionsCommand"


def actor_properties(actors: tuple[str, ...]) -> list[Property]:
    """The properties of the actors `actors` names (bounds.actors)."""
    out: list[Property] = []
    if "bad-plans" in actors:
        out.append(Property.transition(
            "refused_plan_changes_nothing", refused_plan_changes_nothing,
            description=refused_plan_changes_nothing.__doc__,
            source="Kafka 3.9.2 / 4.0.2 tools ReassignPartitionsCommand.executeAssignment (verifyBrokerIds, "
            "getReplicaAssignmentForPartitions before modifyReassignmentThrottle); KRaft ReplicationControlManager"
            ".alterPartitionReassignments, ZooKeeper KafkaController.onApiPartitionReassignment (3.9.2)",
            promised_by=ALL))
    if "rebalancer" in actors:
        out.append(Property.transition(
            "rebalancer_acts_on_what_is_there", rebalancer_acts_on_what_is_there,
            description=rebalancer_acts_on_what_is_there.__doc__,
            source=_SOURCE + "; Cruise Control Executor (no execution while reassignments it did not start are "
            "in progress)", promised_by=()))
    if any(a in actors for a in ("auto-throttler", "second-operator")):
        out.append(Property.transition(
            "actor_writes_keep_moving_throttles", actor_writes_keep_moving_throttles,
            description=actor_writes_keep_moving_throttles.__doc__,
            source=_SOURCE + " (verifyAssignment: clearAllThrottles once nothing is in progress); KIP-73; "
            "cruise-control#1511", promised_by=()))
    return out


__all__ = ["actor_properties", "actor_writes_keep_moving_throttles", "auto_throttler_wrote_stale_cache",
           "cache_written_without_moving_throttle", "cleared_by_verify_that_listed_nothing", "held_by",
           "missing_throttles", "rebalancer_acted_on_stale_read", "rebalancer_acts_on_what_is_there", "refused",
           "refused_plan_changes_nothing", "verify_cleared_after_listing_nothing"]
