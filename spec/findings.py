"""Findings: the named, documented ways a profile's algorithm breaks a property.

A profile *promises* the properties its algorithm keeps at every bound (`promises`); for
every other property it checks, it declares findings. A finding names the property it
breaks, the profiles that break it that way, and a **signature**: a predicate over the
counterexample that recognises this finding and nothing else. `kreassign check` reports
a violation as this finding only when the signature matches it; every other violation,
including a new way of breaking a property that has findings, is unexpected.

Signatures are pure predicates over the violation itself, in the property's own terms:

- ``always`` property: `signature(state)`, the violating state (the ghosts say what the
  admin asked for, so a state carries the history a signature needs);
- ``transition`` property: `signature(prev, label, next)`, the violating edge;
- ``eventually`` property: `signature(state)` over stuck states (states from which no goal
  is reachable): a finding explains the stuck states it recognises and every stuck state
  that drifts into one of them through environment edges alone (a partition may be doomed
  a few controller steps before it shows).

The signatures the packed engine's kraft kernels ask (KRaft's) are each defined once, on one
partition, and the signature over a whole state or edge is derived from that definition
(spec/per_partition.py), which the kernels evaluate instead.

Each finding also names the smallest bounds it occurs at (`at`, see `expected_at` in
checker/check/run.py): at every bounds that dominate them the check expects it, and fails
when it no longer occurs. Its curated trace is `trace_file(profile, finding)`, found at
those bounds by `python counterexamples/curate.py` and replayed by the tests;
docs/findings.md explains each finding and its signature.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kreassign.spec import actor_properties as AP
from kreassign.spec import quota as Q
from kreassign.spec import quota_client_properties as QC
from kreassign.spec.per_partition import ENDINGS, PartitionEdge, any_edge, any_partition
from kreassign.spec.reassign_properties import ALL, PROPERTIES, Ghost, ModelState, Transition
from kreassign.spec.state import NO_LEADER, Partition, ordered_minus
from kreassign.spec.zk_memory_properties import resumed_not_recorded

#: bound keys along which behaviours only grow (more brokers, more budget): a finding found at
#: `at` is expected at every bounds at least as large on these keys and equal on the others
MONOTONE_BOUNDS = ("brokers", "partitions", "reassigns", "cancels", "failures", "failovers")


@dataclass(frozen=True)
class Finding:
    name: str  # snake_case, unique among the findings of its property
    property: str
    profiles: tuple[str, ...]
    signature: Callable[..., bool] = field(compare=False)
    summary: str  # one sentence: what the algorithm does and why it breaks the property
    at: Mapping[str, Any] = field(default_factory=dict, compare=False)  # smallest bounds it occurs at
    #: the kraft profile's Kafka releases (minors, e.g. "4.3") where it occurs; None: every release. A release
    #: not named does not have it: there the same violation is unexpected (spec/kafka_releases.py)
    releases: tuple[str, ...] | None = field(default=None, compare=False)

    def trace_file(self, profile: str) -> str:
        return trace_file(profile, self)

    def occurs_in(self, profile: str, release: str | None) -> bool:
        """Is this finding declared for `profile` at the Kafka `release` (X.Y.Z; None: the newest)?"""
        if profile not in self.profiles:
            return False
        if self.releases is None or profile != "kraft":
            return True
        from kreassign.spec import kafka_releases

        return kafka_releases.release(release or kafka_releases.NEWEST).minor in self.releases


def trace_file(profile: str, finding: Finding) -> str:
    """The curated counterexample of `finding` under `profile`, relative to the repository root."""
    return f"counterexamples/{profile}__{finding.property}__{finding.name}.json"


# -- helpers over states and edges ---------------------------------------------------------------


def _parts(ms: ModelState) -> Iterator[tuple[Partition, Any]]:
    for (_, _, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        yield p, g


def _action_name(label: Any) -> str:
    return type(getattr(label, "action", label)).__name__


# -- KRaft (kraft, kraft-3.7) ----------------------------------------------------------------------
# Each is defined on one partition (`<name>_at`: with its ghost, or its part of an edge, a
# spec/per_partition.PartitionEdge) with its array form (spec/partition_masks.py); the signature over a
# whole state or edge is derived: it matches when some partition does (spec/per_partition.py).


def stale_adding_replica_at(p: Partition, g: Ghost) -> bool:
    """An override back towards the original kept the previous `adding` list: a replica of an earlier
    target, neither original nor requested, is both adding and removing."""
    both = set(p.adding) & set(p.removing)
    return bool(both) and g.original is not None and not both & (set(g.original) | set(g.requested or ()))


def _stale_adding_replica_masks(m):
    both = m.adding & m.removing
    return (both != 0) & m.has_original & ((both & (m.original | m.requested)) == 0)


stale_adding_replica = any_partition(stale_adding_replica_at, _stale_adding_replica_masks)


def override_keeps_earlier_target_at(p: Partition, g: Ghost) -> bool:
    """An override planned from the current replica list: the replicas beyond original ∪ requested are
    an earlier target's, kept as *removing* replicas until the reassignment ends."""
    if g.original is None or g.requested is None:
        return False
    extra = set(p.replicas) - set(g.original) - set(g.requested)
    return bool(extra) and extra <= set(p.removing)


def _override_keeps_earlier_target_masks(m):
    extra = m.replicas & ~m.original & ~m.requested
    return m.has_original & m.has_requested & (extra != 0) & ((extra & ~m.removing) == 0)


override_keeps_earlier_target = any_partition(override_keeps_earlier_target_at,
                                              _override_keeps_earlier_target_masks)


def cancel_keeps_non_adding_replicas_at(e: PartitionEdge) -> bool:
    """A cancel reverted to `R − AR`: replicas an earlier step added that are no longer in AR (KRaft: an
    override re-planned them; KIP-455: they joined the ISR) stay, on top of the whole original."""
    if e.ending.kind != "cancelled":
        return False
    original = set(e.ending.original)
    extra = set(e.replicas) - original
    return original <= set(e.replicas) and bool(extra) and not extra & set(e.before.adding)


def _cancel_keeps_non_adding_replicas_masks(m):
    extra = m.replicas_mask & ~m.ending_original_mask
    return (m.ended_cancelled & ((m.ending_original_mask & ~m.replicas_mask) == 0) & (extra != 0)
            & ((extra & m.before_adding) == 0))


cancel_keeps_non_adding_replicas = any_edge(cancel_keeps_non_adding_replicas_at, ENDINGS,
                                            _cancel_keeps_non_adding_replicas_masks)


def cancel_keeps_merged_order_at(e: PartitionEdge) -> bool:
    """A cancel restored the original replica set, in the merged (current) order rather than the original one."""
    if e.ending.kind != "cancelled":
        return False
    original, before = e.ending.original, e.before.replicas
    return (set(e.replicas) == set(original) and e.replicas != original
            and e.replicas == ordered_minus(before, set(before) - set(original)))


def _cancel_keeps_merged_order_masks(m):
    merged = m.minus(m.before_replicas, m.before_replicas_mask & ~m.ending_original_mask)
    return (m.ended_cancelled & (m.replicas_mask == m.ending_original_mask)
            & (m.replicas != m.ending_original).any(1) & (m.replicas == merged).all(1))


cancel_keeps_merged_order = any_edge(cancel_keeps_merged_order_at, ENDINGS, _cancel_keeps_merged_order_masks)


def completes_with_non_adding_target_out_of_isr_at(e: PartitionEdge) -> bool:
    """Completion waited only for the replicas in the adding list: it landed on the target with a
    target replica that was not adding (retained, or already left AR) outside the ISR."""
    if e.ending.kind != "completed":
        return False
    requested = set(e.ending.requested or ())
    missing = requested - set(e.isr)
    return set(e.replicas) == requested and bool(missing) and not missing & set(e.before.adding)


def _completes_with_non_adding_target_out_of_isr_masks(m):
    missing = m.ending_requested_mask & ~m.isr_mask
    return (~m.ended_cancelled & (m.replicas_mask == m.ending_requested_mask) & (missing != 0)
            & ((missing & m.before_adding) == 0))


completes_with_non_adding_target_out_of_isr = any_edge(
    completes_with_non_adding_target_out_of_isr_at, ENDINGS,
    _completes_with_non_adding_target_out_of_isr_masks)


def growing_override_drops_requested_at(e: PartitionEdge) -> bool:
    """An override to a superset of the current replicas planned no additions or removals, so KRaft kept the
    previous request's lists: the completion removed an original replica the override asked to keep."""
    if e.ending.kind != "completed":
        return False
    requested = set(e.ending.requested or ())
    missing = requested - set(e.replicas)
    return bool(missing) and set(e.replicas) < requested and missing <= set(e.ending.original)


def _growing_override_drops_requested_masks(m):
    missing = m.ending_requested_mask & ~m.replicas_mask
    return (~m.ended_cancelled & (missing != 0) & ((m.replicas_mask & ~m.ending_requested_mask) == 0)
            & ((missing & ~m.ending_original_mask) == 0))


growing_override_drops_requested = any_edge(growing_override_drops_requested_at, ENDINGS,
                                            _growing_override_drops_requested_masks)


def stuck_on_stale_adding_at(p: Partition, g: Ghost) -> bool:
    """Completion waits for every adding replica to be in `ISR − removing`, which a replica both adding
    and removing never is: stuck for good."""
    return bool(set(p.adding) & set(p.removing))


def _stuck_on_stale_adding_masks(m):
    return (m.adding & m.removing) != 0


stuck_on_stale_adding = any_partition(stuck_on_stale_adding_at, _stuck_on_stale_adding_masks)


# -- ZooKeeper controller (zk) ---------------------------------------------------------------------


def offline_leader_left_leaderless(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """Step U of a reassignment back to the origin (zk's cancel) took the leader, a replica no longer
    needed, offline: the partition lost its leader although an origin replica is live and in sync."""
    if _action_name(label) != "ControllerStep":
        return False
    for (_, _, p), (_, _, q) in zip(prev.cluster.partitions(), nxt.cluster.partitions()):
        if p.leader != NO_LEADER and q.leader == NO_LEADER and p.leader not in q.replicas:
            return True
    return False


def leaderless_with_foreign_isr(ms: ModelState) -> bool:
    """OfflineReplica kept the last ISR member: the ISR is a single broker that is no longer a replica,
    and the partition has no leader."""
    return any(p.leader == NO_LEADER and len(p.isr) == 1 and p.isr[0] not in p.replicas for p, _ in _parts(ms))


def stuck_leaderless(ms: ModelState) -> bool:
    """Stuck without a leader: only an admin's election could elect one (a cancel or step U took the
    leader away), so no replica can join the ISR and the reassignment cannot complete."""
    return any(p.leader == NO_LEADER for p, _ in _parts(ms))


# -- KIP-455 as written (kip455) -------------------------------------------------------------------


def removed_replicas_still_in_isr(ms: ModelState) -> bool:
    """Completion removed RR from R in one step while the ISR still lists them: brokers that are no
    longer replicas, and not part of any reassignment in flight, stay in the ISR until the leader
    shrinks it (possibly after a new reassignment began)."""
    for p, g in _parts(ms):
        stale = set(p.isr) - set(p.replicas)
        if stale and not stale & (set(p.adding) | set(g.requested or ())):
            return True
    return False


# -- KIP-236 (kip236) ------------------------------------------------------------------------------


def drop_rule_drops_original(ms: ModelState) -> bool:
    """The in-flight drop rule (`assigned − existing[:RF]`, existing = leader ++ ISR ++ OSR) deleted an
    original replica that was out of sync while the reassignment is still in flight."""
    for p, g in _parts(ms):
        if g.original is not None and p.reassigning:
            dropped = set(g.original) - set(p.replicas)
            if dropped and not dropped & set(p.isr):
                return True
    return False


def drop_rule_readds_dropped_target(ms: ModelState) -> bool:
    """The drop rule ignores the new target: a requested replica out of sync is dropped and added back,
    while a replica of the previous target is left both adding and removing."""
    for p, g in _parts(ms):
        both = set(p.adding) & set(p.removing)
        if both and g.requested is not None and not both & set(g.requested):
            return True
    return False


# -- every reassignment profile ---------------------------------------------------------------------


def unclean_election_lost_committed(ms: ModelState) -> bool:
    """The leader's log lacks a committed record, and the topic allows unclean leader election: an
    out-of-sync replica was elected (Kafka's documented trade of durability for availability)."""
    for t, _, p in ms.cluster.partitions():
        topic = ms.cluster.topic(t)
        if (p.log is not None and p.leader != NO_LEADER and topic is not None and topic.unclean_leader_election
                and p.log.log_of(p.leader)[: len(p.log.committed)] != p.log.committed):
            return True
    return False


# -- KIP-599 quota (kip599, kip599-draft) ----------------------------------------------------------


def permissive_overdraft(s: Q.QuotaModelState) -> bool:
    """Old clients are admitted permissively whatever the tokens say: the bucket is overdrawn below
    −(the largest topic admitted), deeper than any strict request can take it."""
    if s.rate is None or s.tokens is None or not s.window:
        return False
    return s.tokens < -max(big for _, _, big in s.window)


def retry_partly_admitted(prev: Q.QuotaModelState, action: Any, nxt: Q.QuotaModelState) -> bool:
    """The throttle time is a lower bound: after waiting it, the retried request has its first topics
    admitted (overdrawing the bucket, or using up what refilled) and a later topic rejected."""
    return (isinstance(action, Q.ClientRetryAfterThrottle) and prev.retry is not None
            and 0 < nxt.rejected < len(prev.retry.sizes))


def draft_rejects_topic_above_burst(prev: Q.QuotaModelState, action: Any, nxt: Q.QuotaModelState) -> bool:
    """The draft rule admits a topic only if K ≥ N, and K never exceeds the burst: a retried topic larger
    than the burst is rejected again, entirely, however long it waited."""
    return (isinstance(action, Q.ClientRetryAfterThrottle) and prev.retry is not None
            and nxt.rejected == len(prev.retry.sizes))


def draft_never_admits_large_topic(s: Q.QuotaModelState) -> bool:
    """Under "admitted iff K ≥ N", a topic larger than the burst is never admitted: every state is stuck."""
    return not s.large_admitted


# -- under the off-by-default capabilities (throttles, create_partitions, broker_replicas) ------------


def every_throttle_cleared_mid_move(ms: ModelState) -> bool:
    """clearAllThrottles ran while a move is in flight: no broker has a throttle rate and the moving
    partition's topic has no throttled replica left (a tool that sets too few throttles leaves some)."""
    th = ms.cluster.throttles
    if th is not None and th.brokers:
        return False
    listed = {e[0] for e in (th.leader + th.follower)} if th is not None else set()
    return any(g.original is not None and g.requested is not None and p.reassigning and t not in listed
               for (t, _, p), g in zip(ms.cluster.partitions(), ms.ghosts))


def _unfollowed_new_replicas(ms: ModelState):
    """(topic, index, replica, throttles, partition, ghost) of each requested new replica of a move in
    flight that is out of the ISR and not follower-throttled, while some throttle rate is set."""
    th = ms.cluster.throttles
    if th is None or not th.brokers:
        return
    for (t, i, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        if g.original is None or g.requested is None or not p.reassigning:
            continue
        for b in set(g.requested) - set(g.original) - set(p.isr):
            if (t, i, b) not in th.follower:
                yield t, i, b, th, p, g


def execute_counts_joined_replica_as_source(ms: ModelState) -> bool:
    """The next --execute took a new replica that had joined the ISR (so left KIP-455's adding list) for
    a source: it is leader-throttled, not follower-throttled, and has fallen out of the ISR again."""
    return any((t, i, b) in th.leader and b not in p.adding for t, i, b, th, p, _ in _unfollowed_new_replicas(ms))


def override_throttled_before_step_u(ms: ModelState) -> bool:
    """zk: --execute of an override planned the throttles for the new target while the controller, its
    step U still to run (or resumed from the znode after a failover), moves to the previous one: a new
    replica of that move is in no throttle list, though every original replica is leader-throttled."""
    if ms.cluster.zk is None:
        return False
    return any((t, i, b) not in th.leader and all((t, i, o) in th.leader for o in g.original)
               for t, i, b, th, _, g in _unfollowed_new_replicas(ms))


def created_with_reassigning_replica_count(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """CreatePartitions copied partition 0's full replica list length while partition 0 is reassigned:
    the new partitions have |original ∪ target| replicas, more than replicas − adding."""
    act = getattr(label, "action", label)
    if type(act).__name__ != "CreatePartitions":
        return False
    before, grown = prev.cluster.topic(act.topic), (getattr(label, "after", None) or nxt.cluster).topic(act.topic)
    if before is None or grown is None:
        return False
    p0 = before.partitions[0]
    new = grown.partitions[len(before.partitions):]
    return bool(p0.adding) and bool(new) and all(len(p.replicas) == len(p0.replicas) for p in new)


def _deleted(prev: ModelState, label: Transition, nxt: ModelState):
    """(broker, partition after the edge) of every log the edge deleted."""
    if prev.cluster.hosted is None:
        return
    after = getattr(label, "after", None) or nxt.cluster
    for b, t, i in set(prev.cluster.hosted) - set(after.hosted or ()):
        p = after.partition(t, i)
        if p is not None:
            yield b, p


def last_isr_log_deleted(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """A broker deleted its log of a partition it is no longer a replica of, while it is the partition's
    only ISR member (kept there by OfflineReplica / the rollback)."""
    return any(b not in p.replicas and p.isr == (b,) for b, p in _deleted(prev, label, nxt))


def _untold_strays(ms: ModelState):
    """The in-memory entry (None: none) of each log a live broker hosts for a partition it is not a replica
    of, with no request for that partition queued to it (zk with the controller's requests in flight)."""
    c = ms.cluster
    if c.requests is None:
        return
    known = {k[:3]: k for k in c.requests.known}
    queued = {(b, q.topic, q.partition) for b, queue in c.requests.queues for q in queue}
    for b, t, i in c.hosted or ():
        p = c.partition(t, i)
        if c.is_active(b) and (p is None or b not in p.replicas) and (b, t, i) not in queued:
            yield known.get((b, t, i))


def stray_of_replica_removed_while_offline(ms: ModelState) -> bool:
    """A live broker hosts a stray log it holds no partition for in memory: it was down when the controller
    stopped its replica (StopReplica goes to live brokers only) and nothing tells it after its restart."""
    return any(k is None for k in _untold_strays(ms))


def stray_of_stop_replica_lost_at_failover(ms: ModelState) -> bool:
    """After a controller failover, a live broker still holds in memory a partition it is no longer a replica
    of, and hosts its log: the old controller's queued StopReplica died with it, the new one never resends it."""
    zk = ms.cluster.zk
    return zk is not None and zk.epoch > 1 and any(k is not None for k in _untold_strays(ms))


def removed_replica_log_deleted_in_isr(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """A broker deleted its log of a partition it is no longer a replica of, while the ISR still lists it
    (KIP-455's completion removed it from R but not from the ISR; it may even be the leader's only ISR)."""
    return any(b not in p.replicas and b in p.isr for b, p in _deleted(prev, label, nxt))


# -- the KRaft controller's own actions (bounds: kraft_actions) ---------------------------------------


def fenced_leader_keeps_leadership(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """A broker re-registered (a new incarnation, fenced) before the controller fenced its expired
    session: with ELR off the unclean-shutdown handler writes nothing, so it still leads the partitions
    it led before, while fenced."""
    act = getattr(label, "action", label)
    if type(act).__name__ != "BrokerRestart":
        return False
    after = getattr(label, "after", None) or nxt.cluster
    if after.is_active(act.broker):
        return False
    led_before = {(t, i) for t, i, p in prev.cluster.partitions() if p.leader == act.broker}
    led_after = {(t, i) for t, i, p in after.partitions() if p.leader == act.broker}
    return bool(led_after) and led_after <= led_before


# -- what a zk controller remembers (bounds: zk_versions) ----------------------------------------------


def resumes_zookeepers_stale_target(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """zk: the latest request (an override, or a cancel: a reassignment to the origin) was accepted but its
    step U had not run when the controller died, so ZooKeeper still held the previous reassignment, and
    the new controller resumed that one."""
    zk = prev.cluster.zk
    if zk is None:
        return False
    for t, i, target in resumed_not_recorded(prev, label, nxt):
        part = prev.cluster.partition(t, i)
        if part is not None and part.reassigning and part.target == target and (t, i, "U") in zk.pending:
            return True
    return False


# -- the zk controller's identity and event queue (bounds: zk_events) ---------------------------------


def _with_event_queue(prev: ModelState) -> bool:
    zk = prev.cluster.zk
    return zk is not None and zk.controller_id is not None


def completed_after_isr_shrank_mid_run(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """zk with the event queue: step U decided the reassignment complete on ZooKeeper's ISR, then the leader (another
    process) shrank the ISR before the run ended; the run completes with a target replica out of the ISR."""
    if not _with_event_queue(prev):
        return False
    after = label.after or nxt.cluster
    parts = list(after.partitions())
    return any(e.kind == "completed" and e.requested is not None and set(e.requested) <= set(parts[e.index][2].replicas)
               and not set(e.requested) <= set(parts[e.index][2].isr) for e in label.endings)


def leader_removed_after_isr_shrank_mid_run(prev: ModelState, label: Transition, nxt: ModelState) -> bool:
    """zk with the event queue: after step U decided on ZooKeeper's ISR, the leader shrank the ISR to itself, so B3
    found no target replica to elect and B4 took the leader (a removing replica) offline: no leader, while an
    assigned replica is live and in sync (OfflineReplica elects no one; it keeps the last ISR member)."""
    if not _with_event_queue(prev) or _action_name(label) != "ControllerStep":
        return False
    after = label.after or nxt.cluster
    for (_, _, p), (_, _, q) in zip(prev.cluster.partitions(), after.partitions()):
        if p.leader != NO_LEADER and q.leader == NO_LEADER and p.leader in q.removing:
            return True
    return False


# -- the declarations ------------------------------------------------------------------------------

KRAFT = ("kraft", "kraft-3.7")


def _at(brokers: int = 3, reassigns: int = 1, cancels: int = 0, failures: int = 0, failovers: int = 0) -> dict[str, int]:
    return {"brokers": brokers, "rf": 2, "reassigns": reassigns, "cancels": cancels, "failures": failures,
            "failovers": failovers}


QUOTA_AT = {"config": "small"}  # the quota profiles' default configuration (checker/models/quota.py)
#: the quota as clients meet it (issue 26): the quota-handlers profiles at a [quota_handlers] table
QUOTA_HANDLERS = ("kip599-handlers", "kip599-handlers-rate")


def _handlers_at(**table: Any) -> dict[str, Any]:
    return {"config": "handlers", "quota_handlers": {"handlers": 1, "quota_changes": [], **table}}

FINDINGS: tuple[Finding, ...] = (
    # kraft, kraft-3.7
    Finding("stale_adding_replica", "adding_removing_disjoint", KRAFT, stale_adding_replica,
            "An override back to the original plans no additions, so KRaft keeps the old adding list: a replica "
            "of the first request ends up both adding and removing.", _at(reassigns=2)),
    Finding("override_keeps_earlier_target", "replication_factor_bounded", KRAFT + ("kip455", "kip236"),
            override_keeps_earlier_target,
            "An override plans from the current replica list: an earlier target's replica stays assigned as a "
            "removing replica, above original ∪ target, until the reassignment ends.", _at(reassigns=2)),
    Finding("cancel_keeps_non_adding_replicas", "cancel_restores_original_replicas", KRAFT + ("kip455",),
            cancel_keeps_non_adding_replicas,
            "A cancel reverts to R − AR, keeping replicas an earlier step added that are no longer adding "
            "(KRaft: re-planned by an override; KIP-455: joined the ISR).", _at(brokers=4, reassigns=2, cancels=1)),
    Finding("cancel_keeps_non_adding_replicas", "replication_factor_restored", KRAFT + ("kip455",),
            cancel_keeps_non_adding_replicas,
            "The same cancel leaves more replicas than the original.", _at(brokers=4, reassigns=2, cancels=1)),
    Finding("cancel_keeps_non_adding_replicas", "cancel_restores_original_order", KRAFT + ("kip455",),
            cancel_keeps_non_adding_replicas,
            "The same cancel, seen by the order property: the list is not the original.",
            _at(brokers=4, reassigns=2, cancels=1)),
    Finding("merged_order", "cancel_restores_original_order", KRAFT + ("zk", "kip455"), cancel_keeps_merged_order,
            "A cancel restores the original set in the current merged order: the preferred leader may change.",
            _at(cancels=1)),
    Finding("growing_override_drops_requested", "completion_reaches_target", KRAFT, growing_override_drops_requested,
            "An override to a superset of the current replicas ([1,2] -> [1,3] -> [1,2,3]) plans no additions or "
            "removals, so KRaft keeps the first request's lists and the completion removes the original replica the "
            "override asked to keep.", {**_at(reassigns=2), "targets": ((1, 3), (1, 2, 3))}),
    Finding("growing_override_drops_requested", "replication_factor_restored", KRAFT, growing_override_drops_requested,
            "The same completion leaves fewer replicas than requested.",
            {**_at(reassigns=2), "targets": ((1, 3), (1, 2, 3))}),
    # kraft-3.7, kip455
    # kraft from 4.3 (KAFKA-19975 brought 3.7's completion rule back unless the replication factor shrinks)
    Finding("completion_ignores_non_adding_target", "completion_reaches_target", ("kraft", "kraft-3.7", "kip455"),
            completes_with_non_adding_target_out_of_isr,
            "Completion waits only for the adding replicas: a target replica that is not adding (3.7 and 4.3+: "
            "retained; KIP-455: already left AR) may be out of the ISR when it completes (KAFKA-15665 fixed it in "
            "3.8; KAFKA-19975 brought it back in 4.3 for moves that do not shrink the replication factor).",
            _at(), releases=("4.3", "4.4")),
    Finding("stale_adding_never_completes", "reassignment_can_finish", ("kraft", "kraft-3.7"), stuck_on_stale_adding,
            "3.7, and 4.3+ unless the replication factor shrinks, wait for every adding replica to be in "
            "ISR − removing, which a stale adding-and-removing replica never is.", _at(reassigns=2),
            releases=("4.3", "4.4")),
    Finding("stale_adding_never_completes", "reassignment_can_finish_in_sync", ("kraft", "kraft-3.7"),
            stuck_on_stale_adding,
            "The same reassignment stays stuck even with every target replica live and in sync.", _at(reassigns=2),
            releases=("4.3", "4.4")),
    Finding("stale_adding_never_completes", "reassignment_completes_when_targets_live", ("kraft", "kraft-3.7"),
            stuck_on_stale_adding,
            "Under weak fairness too: with every target replica live and fetching, the stale adding-and-removing "
            "replica never lets the reassignment complete.", {**_at(reassigns=2), "fair": True},
            releases=("4.3", "4.4")),
    Finding("stale_adding_never_completes", "throttles_eventually_cleared", ("kraft",), stuck_on_stale_adding,
            "With kafka-reassign-partitions.sh, the same stuck reassignment never lets --verify clear its "
            "throttles.", {**_at(reassigns=2), "throttles": True}, releases=("4.3", "4.4")),
    # zk
    Finding("cancel_takes_leader_offline", "admin_action_keeps_a_leader", ("zk",), offline_leader_left_leaderless,
            "Step U of reassignTo(origin) takes the unneeded leader offline and leaves the partition leaderless "
            "while an origin replica is live and in sync.", _at(reassigns=2, failures=1)),
    Finding("offline_replica_keeps_last_isr", "isr_in_replicas", ("zk",), leaderless_with_foreign_isr,
            "Taking the last in-sync (non-origin) replica offline keeps it as the ISR: no leader, ISR outside "
            "the replicas.", _at(reassigns=2, failures=1)),
    Finding("leaderless_for_good", "reassignment_can_finish", ("zk", "kip236"), stuck_leaderless,
            "A cancel (or zk's step U) took the leader away and only an admin's election could elect one: "
            "no replica can join the ISR, the reassignment never completes.", _at(reassigns=2, cancels=1, failures=1)),
    # kip455
    Finding("removed_replicas_in_isr", "isr_in_replicas", ("kip455",), removed_replicas_still_in_isr,
            "Completion removes RR from R in one step while the ISR still holds them.", _at()),
    Finding("leaderless_for_good", "reassignment_can_finish", ("kip455",), stuck_leaderless,
            "A removed replica left in the ISR is the only in-sync broker when the leader fails: no replica can "
            "be elected, the next reassignment never completes.", _at(brokers=4, reassigns=2, failures=1)),
    # kip236
    Finding("drop_rule_drops_original", "original_in_replicas", ("kip236",), drop_rule_drops_original,
            "The in-flight drop rule deletes an out-of-sync original replica before the reassignment ends.",
            _at(reassigns=2)),
    Finding("drop_rule_ignores_target", "adding_removing_disjoint", ("kip236",), drop_rule_readds_dropped_target,
            "The drop rule ignores the new target: a previous-target replica is left adding and removing.",
            _at(reassigns=2)),
    Finding("drop_rule_ignores_target", "completion_reaches_target", ("kip236",),
            completes_with_non_adding_target_out_of_isr,
            "The drop rule completes onto the target with a replica it dropped and re-added still out of sync.",
            _at(reassigns=2)),
    Finding("rollback_keeps_last_isr", "isr_in_replicas", ("kip236",), leaderless_with_foreign_isr,
            "A rollback removes the last in-sync replica, which OfflineReplica keeps in the ISR: no leader, ISR "
            "outside the replicas.", _at(cancels=1, failures=1)),
    # every reassignment profile, with the replication layer and unclean election allowed
    Finding("unclean_election_loses_committed", "committed_records_kept", ALL, unclean_election_lost_committed,
            "With unclean.leader.election.enable, an out-of-sync replica may lead: committed records are lost.",
            {**_at(failures=1, cancels=0), "replication": True, "unclean": True}),
    # under the off-by-default capabilities (docs/findings.md, last section)
    Finding("clear_all_throttles_mid_move", "moving_replicas_throttled", KRAFT + ("kip455", "zk", "kip236"),
            every_throttle_cleared_mid_move,
            "`--cancel` of one batch runs clearAllThrottles although another batch is still moving (zk also: "
            "`--verify` before the controller's step U lists the request): every rate is gone.",
            {**_at(brokers=2, cancels=1), "partitions": 2, "rf": 1, "throttles": True}),
    Finding("execute_counts_joined_replica_as_source", "moving_replicas_throttled", ("kip455",),
            execute_counts_joined_replica_as_source,
            "A new replica that joined the ISR leaves KIP-455's adding list; the next --execute counts it as a "
            "source (leader-throttled only), and it may fall out of the ISR again unthrottled as a follower.",
            {**_at(reassigns=2), "throttles": True}),
    Finding("override_throttled_before_step_u", "moving_replicas_throttled", ("zk",), override_throttled_before_step_u,
            "--execute of an override rewrites the topic's throttles for the new target before the controller's "
            "step U applies it: the move still running to the previous target loses its follower throttle.",
            {**_at(reassigns=2), "throttles": True}),
    # tools and automation acting beside the controller (bounds: actors; spec/actor_properties.py)
    Finding("rebalancer_acted_on_stale_read", "rebalancer_acts_on_what_is_there", ALL, AP.rebalancer_acted_on_stale_read,
            "AlterPartitionReassignments carries no precondition: a rebalancer that read a partition idle moves it "
            "over a reassignment started since (zk also: one accepted but not yet listed before step U).",
            {**_at(reassigns=2), "actors": ("rebalancer",)}),
    *(Finding("auto_throttler_wrote_stale_cache", prop, ALL, sig,
              "An auto-throttler writes back the throttles it cached before a move started: the move loses its "
              "throttled replicas and broker rates (cruise-control#1511).",
              {**_at(brokers=2), "rf": 1, "throttles": True, "actors": ("auto-throttler",)})
      for prop, sig in (("actor_writes_keep_moving_throttles", AP.auto_throttler_wrote_stale_cache),
                        ("moving_replicas_throttled", AP.cache_written_without_moving_throttle))),
    *(Finding("verify_cleared_after_listing_nothing", prop, ALL, sig,
              "--verify lists the reassignments and clears every throttle in two requests: another operator's "
              "--execute in between loses its throttles while its move runs.",
              {**_at(brokers=2), "rf": 1, "throttles": True, "actors": ("second-operator",)})
      for prop, sig in (("actor_writes_keep_moving_throttles", AP.verify_cleared_after_listing_nothing),
                        ("moving_replicas_throttled", AP.cleared_by_verify_that_listed_nothing))),
    Finding("created_with_reassigning_replica_count", "created_partitions_get_replication_factor",
            KRAFT + ("kip455",), created_with_reassigning_replica_count,
            "CreatePartitions copies partition 0's replica count, adding and removing replicas included: new "
            "partitions get |original ∪ target| replicas while partition 0 is reassigned.",
            {**_at(brokers=2), "rf": 1, "create_partitions": 1}),
    Finding("last_isr_log_deleted", "no_in_sync_log_deleted", ("zk",), last_isr_log_deleted,
            "Step U of a reassignment back to the origin removes the last ISR member from the replicas but not "
            "from the ISR; StopReplica(delete=true) then deletes the only in-sync copy.",
            {**_at(cancels=1, failures=1), "broker_replicas": True}),
    # zk with the controller's requests in flight (docs/zk-profile.md, "Requests to brokers")
    Finding("last_isr_log_deleted", "last_in_sync_log_kept", ("zk",), last_isr_log_deleted,
            "Step U of a reassignment back to the origin removes the last ISR member from the replicas but not "
            "from the ISR; StopReplica(delete=true) then deletes the only in-sync copy.",
            {**_at(cancels=1, failures=1), "broker_replicas": True}),
    *(Finding(name, prop, ("zk",), sig, summary, {**_at(brokers=2, **extra), "rf": 1, "broker_replicas": True})
      for prop in ("no_strays_once_quiet", "no_stray_replicas")
      for name, sig, summary, extra in (
          ("removed_while_offline", stray_of_replica_removed_while_offline,
           "A replica removed while its broker is down is never sent StopReplica (live brokers only, no retry); "
           "after its restart the broker keeps the log for good.", {"failures": 1}),
          ("stop_replica_lost_at_failover", stray_of_stop_replica_lost_at_failover,
           "The controller fails over after queueing a removed replica's StopReplica: the queue dies with it, "
           "ZooKeeper already says the reassignment is done, and the new controller never sends it.",
           {"failovers": 1}))),
    # zk with the controller's memory checked (docs/zk-profile.md, "What the controller remembers")
    Finding("lost_request_resumes_superseded", "superseded_reassignment_never_resumed", ("zk",),
            resumes_zookeepers_stale_target,
            "The API handler records an override or a cancel only in memory until its step U writes ZooKeeper; "
            "a failover before U loses it and the new controller resumes the reassignment it superseded.",
            {**_at(reassigns=2, failovers=1), "zk_versions": True}),
    Finding("last_isr_log_deleted", "no_in_sync_log_deleted", ("kip236",), last_isr_log_deleted,
            "The rollback removes the last in-sync replica, which OfflineReplica keeps in the ISR; its broker "
            "then deletes the only in-sync copy.", {**_at(cancels=1, failures=1), "broker_replicas": True}),
    Finding("removed_replica_log_deleted", "no_in_sync_log_deleted", ("kip455",), removed_replica_log_deleted_in_isr,
            "Completion removes RR from R while the ISR still lists them; a removed replica's broker deletes "
            "its log while it is in the ISR.", {**_at(), "broker_replicas": True}),
    # zk with the controller's identity and event queue (bounds: zk_events; reference/zk_events.py)
    Finding("isr_shrinks_after_completion_decided", "completion_reaches_target", ("zk",),
            completed_after_isr_shrank_mid_run,
            "Step U decides completion on ZooKeeper's ISR; a leader's own ISR shrink (IBP < 2.7) lands while the "
            "rest of the run waits, its notification queued behind it: the reassignment completes with a target "
            "replica out of the ISR.", {**_at(reassigns=1, failovers=1), "zk_versions": True, "zk_events": True}),
    Finding("isr_shrinks_after_completion_decided", "admin_action_keeps_a_leader", ("zk",),
            leader_removed_after_isr_shrank_mid_run,
            "The same race with every target replica shrunk out: B3 finds no in-sync target to elect, B4 takes the "
            "leader (a removing replica) offline and elects no one; the partition is leaderless (even when a "
            "target replica rejoined the ISR in between).",
            {**_at(reassigns=1, failovers=1), "zk_versions": True, "zk_events": True}),
    # kraft, kraft-3.7 with the controller's own actions (docs/kafka.md)
    Finding("fenced_leader_keeps_leadership", "restart_moves_leadership", KRAFT, fenced_leader_keeps_leadership,
            "A broker that restarts and re-registers before the controller fenced its expired session keeps "
            "leading its partitions while fenced: Kafka 3.9 moves leadership on re-registration only with ELR "
            "(KIP-966), which is off by default; 4.0 handles every re-registration as a fencing (KAFKA-18106).",
            {**_at(brokers=2, reassigns=0), "kraft_actions": ("restart",)}, releases=("3.9",)),
    # kip599, kip599-draft
    Finding("permissive_overdraft", Q.ADMITTED_WITHIN_INTERVAL, Q.KIP599_PROFILES, permissive_overdraft,
            "Old clients are admitted permissively whatever the tokens say, so admissions in an instant exceed "
            "burst + largest topic.", QUOTA_AT),
    Finding("throttle_time_is_a_lower_bound", Q.RETRY_AFTER_THROTTLE_ADMITTED, Q.KIP599_PROFILES,
            retry_partly_admitted,
            "After waiting the throttle time it was given, a retried request has its first topics admitted "
            "and a later one rejected again.", QUOTA_AT),
    Finding("draft_rejects_large_topic", Q.RETRY_AFTER_THROTTLE_ADMITTED, ("kip599-draft",),
            draft_rejects_topic_above_burst,
            "The draft rule (admitted iff K ≥ N) rejects a topic larger than the burst again, however long it "
            "waited.", QUOTA_AT),
    Finding("draft_starves_large_topic", Q.LARGE_TOPIC_EVENTUALLY_ADMITTED, ("kip599-draft",),
            draft_never_admits_large_topic,
            "Under the draft rule a topic larger than the burst is never admitted.", QUOTA_AT),
    # kip599-handlers, kip599-handlers-rate with the client capabilities (issue 26; spec/quota_client_properties.py)
    Finding("throttle_rounded_down", QC.RETRY_AFTER_THROTTLE_TIME_ADMITTED, ("kip599-handlers",),
            QC.retry_rejected_by_rounding,
            "Math.round(-tokens / rate x 1000) rounds the wait down when the rate does not divide 1000 ms: the retry "
            "comes a fraction of a ms early and is rejected again, with a throttle time of 0.",
            _handlers_at(rate=3, ticks=[1000], horizon_ms=1000, retry=True)),
    Finding("rate_window_outlasts_throttle", QC.RETRY_AFTER_THROTTLE_TIME_ADMITTED, ("kip599-handlers-rate",),
            QC.retry_rejected_by_rate_window,
            "The Rate's throttle time ((O - T) / T x W) assumes its window W grows by the wait, but W was raised "
            "to samples - 1 whole windows that had not elapsed: the wait only fills that floor, and the retry "
            "meets the Rate as far over the quota as before.",
            _handlers_at(horizon_ms=1000, retry=True)),
    Finding("samples_expire_before_throttle_ends", QC.THROTTLE_TIME_NOT_TOO_LONG, ("kip599-handlers-rate",),
            QC.throttle_outlasts_sample_expiry,
            "The Rate's samples expire samples x window after their last event, sooner than the throttle time "
            "(which assumes they stay): the quota is within before the client was told it would be.",
            _handlers_at(horizon_ms=1000, retry=True)),
    Finding("kraft_validate_only_consumes_quota", QC.VALIDATE_ONLY_NEVER_CONSUMES_QUOTA, QUOTA_HANDLERS,
            QC.validate_only_consumed,
            "KRaft applies the mutation quota (check and record) before the controller drops a validateOnly "
            "request's records: a dry run uses up the principal's quota.",
            _handlers_at(horizon_ms=0, validate_only_sizes=[1])),
    Finding("zk_validate_only_skips_quota", QC.VALIDATE_ONLY_ANSWERS_LIKE_THE_REQUEST, QUOTA_HANDLERS,
            QC.validate_only_skips_quota,
            "ZkAdminManager records (and so checks) the quota only when it writes: a validateOnly request is "
            "answered success while the same request would get THROTTLING_QUOTA_EXCEEDED.",
            _handlers_at(horizon_ms=0, validate_only_sizes=[1], controller="zk")),
)


def findings_for(profile: str, prop: str | None = None, release: str | None = None) -> tuple[Finding, ...]:
    """The findings `profile` declares (on `prop` only, when given) at the Kafka `release` (kraft: X.Y.Z,
    None = the newest), in declaration order."""
    return tuple(f for f in FINDINGS if f.occurs_in(profile, release) and (prop is None or f.property == prop))


def broken(profile: str, release: str | None = None) -> dict[str, str]:
    """{property: the curated trace of its first finding} for every property `profile` breaks (at `release`)."""
    out: dict[str, str] = {}
    for f in findings_for(profile, release=release):
        out.setdefault(f.property, trace_file(profile, f))
    return out


def promises(profile: str, properties: tuple[Any, ...] | None = None, release: str | None = None) -> tuple[str, ...]:
    """The properties `profile` promises (at `release`): those it checks and declares no finding for."""
    props = PROPERTIES if properties is None else properties
    bad = set(broken(profile, release))
    return tuple(p.name for p in props if p.name not in bad)


def known_violation(profile: str, prop: str, release: str | None = None) -> str | None:
    """The curated trace of a finding of `prop` under `profile`, or None (engines that cannot match a
    signature, like the z3 prover and the fuzzer, use this: "the profile breaks this property")."""
    return broken(profile, release).get(prop)


__all__ = ["ALL", "FINDINGS", "MONOTONE_BOUNDS", "Finding", "broken", "findings_for", "known_violation",
           "promises", "trace_file"]
