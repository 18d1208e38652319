"""`kip236`: reassignment with rollback, as the KIP-236 seed describes it (seed 001).

The seed merges two proposals, both for the ZooKeeper controller (pre-KIP-455 algorithm:
replicas = target ∪ original while reassigning, complete when the whole target is in the
ISR). This profile keeps both, told apart by the *route* a reassignment came through:

- legacy route (`ZnodeReassign`: /admin/reassign_partitions, /admin/reassign_partitions_extra):
  `original_replicas` is recorded at submission; an extra reassignment for a partition
  already reassigning first rolls the pending one back, then starts the new one.
- requests route (`Reassign` / AlterPartitionReassignments: /admin/reassignment_requests):
  a change of an in-flight reassignment re-initiates it after dropping replicas by the
  seed's rule (`drop_replicas`), keeping `len(original)` replicas.

Partition fields: `original` = OAR (recorded, in its order), `replicas` = the assigned list
(target first, then the kept current replicas), `removing` = replicas − target, `adding` =
replicas − original (an intermediate replica kept by the drop rule is in both).

Rollback (`rollback`, the seed's 7 steps, one step here): replicas := OAR in its order; a
leader outside OAR is replaced from OAR ∩ ISR (else the leader epoch is bumped);
replicas − OAR leave the ISR (OfflineReplica) and are deleted; the route is forgotten.
The cancel marker (`CancelAll`) rolls back every pending reassignment and, while it
exists, no reassignment is accepted. Completion (`ControllerStep`, when the target is in
the ISR) is the ZK controller's: replicas := target, reassign election if the leader is
not a live target replica (else leader epoch + 1), removed replicas leave the ISR.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.messages import NONE, UNKNOWN_TOPIC_OR_PARTITION, Ack, AlterPartitionReassignmentsResponse
from kreassign.spec.state import NO_LEADER, ClusterState, Kip236Admin, distinct, ordered_minus

from . import zk_elections
from .enabled_actions import get_partition
from .steps import ActionSpace, Plan, Step
from .zk_era_controller import (
    NOT_ENOUGH_REPLICAS,
    POLICY_VIOLATION,
    REASSIGNMENT_IN_PROGRESS,
    Outcome,
    ZkEraControllerProfile,
    bump_leader_epoch,
    msg_unknown_partition,
    msg_unknown_topic,
    remove_replicas,
    validate_target,
)

LEGACY = "legacy"  # /admin/reassign_partitions (+ _extra)
REQUESTS = "requests"  # /admin/reassignment_requests -> /admin/reassignments/$topic/$partition
COMPLETE = "complete"


def drop_replicas(
    assigned: tuple[int, ...],
    isr: tuple[int, ...],
    leader: int,
    top: int,
    *,
    literal_seed_slice: bool = False,
) -> tuple[int, ...]:
    """The seed's drop set when a reassignment changes in flight.

    osr = assigned − isr; existing = distinct([leader] ++ isr ++ osr) (no leader: omitted);
    drop = assigned − the first `top` of existing. The seed writes `existing[0:top-1]`; we
    read it as the first `top` entries (the intent is to keep the original replication
    factor). `literal_seed_slice=True` gives the exclusive-slice reading, which keeps one
    replica fewer (docs/kip-profiles.md).
    """
    osr = ordered_minus(assigned, isr)
    existing = distinct(((leader,) if leader != NO_LEADER else ()) + tuple(isr) + osr)
    keep = existing[: max(top - 1, 0)] if literal_seed_slice else existing[:top]
    return ordered_minus(assigned, keep)


def plan(current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
    """The ZK-era start: replicas = distinct(target ++ current), adding = target − current, removing = current − target."""
    full = distinct(tuple(target) + tuple(current))
    return Plan(replicas=full, adding=ordered_minus(full, current), removing=ordered_minus(full, target))


def msg_cancel_marker(topic: str, partition: int) -> str:
    return (
        f"Reassignment of {topic}-{partition} rejected: /admin/reassign_cancel exists "
        "(remove it with --remove-cancel first)."
    )


def msg_other_route(topic: str, partition: int, route: str) -> str:
    return (
        f"WARN: ignoring the reassignment of {topic}-{partition}: it is already being reassigned "
        f"through the {route} route."
    )


def msg_below_min_isr(topic: str, partition: int, top: int, min_isr: int) -> str:
    return (
        f"WARN: ignoring the reassignment of {topic}-{partition}: it keeps top = len(original_replicas) = {top} "
        f"replicas, fewer than min.insync.replicas = {min_isr}."
    )


class Kip236Profile(ZkEraControllerProfile):
    """The KIP-236 seed: original replicas kept, cancel = rollback to them in their original order."""

    name = "kip236"
    description = "KIP-236 as proposed: original_replicas, rollback, cancel marker, extra reassignments, drop rule"

    def __init__(self, min_insync_replicas: int = 1):
        #: the modelled min.insync.replicas (one value for every topic); the drop rule's `top` must reach it
        self.min_insync_replicas = min_insync_replicas

    def initial_state(self, cluster: ClusterState) -> ClusterState:
        return cluster if cluster.kip236 is not None else replace(cluster, kip236=Kip236Admin())

    def plan(self, current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
        return plan(current, target)

    # -- the admin znodes -------------------------------------------------------------------------
    @staticmethod
    def admin(state: ClusterState) -> Kip236Admin:
        return state.kip236 if state.kip236 is not None else Kip236Admin()

    def route(self, state: ClusterState, topic: str, index: int) -> str | None:
        for t, i, r in self.admin(state).routes:
            if (t, i) == (topic, index):
                return r
        return None

    def with_route(self, state: ClusterState, topic: str, index: int, route: str | None) -> ClusterState:
        admin = self.admin(state)
        routes = [r for r in admin.routes if (r[0], r[1]) != (topic, index)]
        if route is not None:
            routes.append((topic, index, route))
        routes_t = tuple(sorted(routes))
        if routes_t == admin.routes:
            return state
        return replace(state, kip236=replace(admin, routes=routes_t))

    # -- rules --------------------------------------------------------------------------------------
    def rollback(self, state: ClusterState, topic: str, index: int) -> ClusterState:
        """The seed's cancellation steps 1–7 for one partition, as one step (docs: why one)."""
        part = state.partition(topic, index)
        original = part.original if part.original is not None else part.origin
        removed = ordered_minus(part.replicas, original)  # RAR − OAR (+ intermediates kept by the drop rule)
        part = replace(part, replicas=original, adding=(), removing=(), original=None)  # 1, 5
        elected = None
        if part.leader not in original:  # 2
            elected = zk_elections.reassign_election(state, original, part)
        part = zk_elections.write_leader_and_isr(part, *elected) if elected is not None else bump_leader_epoch(part)
        part = remove_replicas(part, removed)  # 3, 4 (the log goes with the replica: settle)
        state = self.put(state, topic, index, part)
        return self.with_route(state, topic, index, None)  # 6 (7: brokers see writes at once)

    def begin(
        self, state: ClusterState, topic: str, index: int, original: tuple[int, ...], target: tuple[int, ...], route: str
    ) -> ClusterState:
        """(Re-)initiate: replicas = distinct(target ++ current); a target that adds and removes nothing
        relative to `original` is a plain reassignment, done at once."""
        part = state.partition(topic, index)
        full = distinct(tuple(target) + part.replicas)
        adding = ordered_minus(full, original)
        removing = ordered_minus(full, target)
        if not adding and not removing:
            new = replace(part, replicas=tuple(target), adding=(), removing=(), original=None)
            route_after = None
        else:
            new = replace(part, replicas=full, adding=adding, removing=removing, original=original)
            route_after = route
        if new != part:
            new = bump_leader_epoch(new)
        state = self.put(state, topic, index, new)
        return self.with_route(state, topic, index, route_after)

    def submit(self, state: ClusterState, topic: str, index: int, target: tuple[int, ...], route: str) -> Outcome:
        """A validated submission through `route`: marker, other route, min.insync.replicas, then start."""
        if self.admin(state).cancel_marker:
            return state, POLICY_VIOLATION, msg_cancel_marker(topic, index)
        part = state.partition(topic, index)
        if part.reassigning:
            current = self.route(state, topic, index) or route
            if current != route:
                return state, REASSIGNMENT_IN_PROGRESS, msg_other_route(topic, index, current)
            original = part.original if part.original is not None else part.origin
        else:
            original = part.replicas
        top = len(original)
        if top < self.min_insync_replicas:
            return state, NOT_ENOUGH_REPLICAS, msg_below_min_isr(topic, index, top, self.min_insync_replicas)
        if part.reassigning and route == LEGACY:
            state = self.rollback(state, topic, index)  # extra reassignment: roll back first
        elif part.reassigning:
            drop = drop_replicas(part.replicas, part.isr, part.leader, top)
            if drop:
                part = replace(remove_replicas(part, drop), replicas=ordered_minus(part.replicas, drop))
                state = self.put(state, topic, index, part)
        return self.begin(state, topic, index, original, target, route), NONE, None

    # -- admin operations ---------------------------------------------------------------------------
    def reassign_partition(self, state: ClusterState, topic: str, index: int, target: tuple[int, ...]) -> Outcome:
        return self.submit(state, topic, index, target, REQUESTS)

    def cancel_partition(self, state: ClusterState, topic: str, index: int) -> Outcome:
        return self.rollback(state, topic, index), NONE, None

    def znode_reassign(self, state: ClusterState, topic: str, partition: int, replicas: tuple[int, ...]) -> Step:
        """The legacy tool writes /admin/reassign_partitions (or _extra when it is non-empty); the
        controller's watch handles it in the same step."""
        if state.topic(topic) is None:
            return Step(state, Ack(UNKNOWN_TOPIC_OR_PARTITION, msg_unknown_topic(topic)))
        if state.partition(topic, partition) is None:
            return Step(state, Ack(UNKNOWN_TOPIC_OR_PARTITION, msg_unknown_partition(topic, partition)))
        replicas = tuple(replicas)
        bad = validate_target(state, topic, partition, replicas)
        if bad is not None:
            return Step(state, Ack(*bad))
        state, code, msg = self.submit(state, topic, partition, replicas, LEGACY)
        return Step(state, Ack(code, msg))

    def cancel_all(self, state: ClusterState) -> Step:
        """Create /admin/reassign_cancel: roll back every pending reassignment (both routes)."""
        admin = self.admin(state)
        if admin.cancel_marker:
            return Step(state, AlterPartitionReassignmentsResponse(error_message="/admin/reassign_cancel already exists."))
        state = replace(state, kip236=replace(admin, cancel_marker=True))
        return self.cancel_every(state, [(t, i) for t, i, p in state.partitions() if p.reassigning])

    def remove_cancel_marker(self, state: ClusterState) -> Step:
        admin = self.admin(state)
        if not admin.cancel_marker:
            return Step(state, Ack(NONE, "/admin/reassign_cancel does not exist."))
        return Step(replace(state, kip236=replace(admin, cancel_marker=False)), Ack())

    # -- controller ---------------------------------------------------------------------------------
    def rebuild(self, state: ClusterState) -> list[tuple[str, int, tuple[int, ...], str]]:
        """The in-flight reassignments a new controller loads, in the seed's order.

        1. /admin/reassignments (requests route); 2. /admin/reassignment_requests children
        (never left pending in this model); 3. /admin/reassign_partitions (legacy route), then
        the _extra entries, each only if no context of the other route exists for the partition.
        """
        contexts: dict[tuple[str, int], tuple[tuple[int, ...], str]] = {}
        for want in (REQUESTS, LEGACY):
            for t, i, p in state.partitions():
                route = self.route(state, t, i)
                if p.reassigning and (route or REQUESTS) == want:
                    contexts.setdefault((t, i), (p.target, want))
        for t, i, replicas in self.admin(state).extra:
            if contexts.get((t, i), (None, LEGACY))[1] == LEGACY:
                contexts[(t, i)] = (tuple(replicas), LEGACY)
        return [(t, i, target, route) for (t, i), (target, route) in contexts.items()]

    def controller_failover(self, state: ClusterState) -> Step:
        """Rebuild from the persisted nodes. The partitions' fields are already the in-flight
        reassignments, so only unprocessed /admin/reassign_partitions_extra entries (a state
        given from outside) change anything: each is submitted through the legacy route."""
        admin = self.admin(state)
        if not admin.extra:
            return Step(state, Ack())
        state = replace(state, kip236=replace(admin, extra=()))
        notes = []
        for t, i, replicas in admin.extra:
            if state.partition(t, i) is None:
                notes.append(f"{t}-{i}: unknown partition")
                continue
            state, code, msg = self.submit(state, t, i, tuple(replicas), LEGACY)
            if code != NONE:
                notes.append(msg)
        return Step(state, Ack(NONE, " ".join(notes) or None))

    def pending_step(self, state: ClusterState, topic: str, index: int) -> str | None:
        part = get_partition(state, topic, index)
        if part.reassigning and set(part.target) <= set(part.isr):
            return COMPLETE
        return None

    def run_step(self, state: ClusterState, topic: str, index: int, step: str) -> ClusterState:
        """Completion, the ZK controller's phase B as one step."""
        part = state.partition(topic, index)
        target = part.target
        removed = ordered_minus(part.replicas, target)
        part = replace(part, replicas=target, adding=(), removing=(), original=None)
        if part.leader not in target or not state.is_active(part.leader):
            elected = zk_elections.reassign_election(state, target, part)
            if elected is not None:
                part = zk_elections.write_leader_and_isr(part, *elected)
        else:
            part = bump_leader_epoch(part)
        part = remove_replicas(part, removed)
        state = self.put(state, topic, index, part)
        return self.with_route(state, topic, index, None)

    # -- enumeration --------------------------------------------------------------------------------
    def supports_znode(self) -> bool:
        return True

    def extra_actions(self, state: ClusterState, space: ActionSpace) -> list[Any]:
        out = super().extra_actions(state, space)
        if space.cancel_all:
            out.append(A.RemoveCancelMarker() if self.admin(state).cancel_marker else A.CancelAll())
        return out


__all__ = ["COMPLETE", "LEGACY", "REQUESTS", "Kip236Profile", "drop_replicas", "plan"]
