"""The ZooKeeper controller's reassignment machinery, one step at a time (`zk` profile).

Kafka's KafkaController (2.4 – 3.9) as pure functions over ClusterState:
onPartitionReassignment split into the steps U, A1, A2, B1 … B7 of
KAFKA-SEMANTICS.md (B8, UpdateMetadata, is folded into B7), the controller
context ("memory") against ZooKeeper (the Partition fields), controller start-up and
failover (onControllerFailover, initializePartitionReassignments), onBrokerFailure and
onBrokerStartup.

Two views of one partition's assignment: the Partition fields are what ZooKeeper
holds (`/brokers/topics/T` and the partition state znode); `ZkController.memory` is
the controller context. U writes ZooKeeper then memory; B2 writes memory; B6 writes
ZooKeeper. A failover loses memory, `being_reassigned` and `pending` and rebuilds them
from ZooKeeper and `/admin/reassign_partitions` (`admin_znode`), read through the znodes as
Kafka encodes them (`zk_znodes`). With bounds zk_versions, `leadership` is the cached
leader/ISR with its zkVersion, leaders write ISR changes to ZooKeeper themselves and the
controller catches up at the ISR change notification (pending step "N").

With bounds broker_replicas, the steps also queue the LeaderAndIsr and StopReplica requests Kafka
sends to brokers (`zk_requests`: per-broker FIFO queues, brokers act on them later); without it
brokers see the controller's writes at once.

What is left out: the replica and partition state machines' own states (a partition
without a live leader is treated as OfflinePartition everywhere, see docs/zk-profile.md),
UpdateMetadata requests, controlled shutdown, topic deletion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from kreassign.spec.state import NO_LEADER, ClusterState, Partition, ZkController, distinct, ordered_minus

from . import zk_requests as R
from . import zk_znodes as Z
from .steps import Plan
from .zk_elections import offline_election, reassign_election, remove_replica_from_isr, write_leader_and_isr

# -- assignments (kafka.controller.ReplicaAssignment) -------------------------------------------

EMPTY = Plan((), (), ())


def origin_of(a: Plan) -> tuple[int, ...]:
    """ReplicaAssignment.originReplicas = replicas − adding."""
    return ordered_minus(a.replicas, a.adding)


def target_of(a: Plan) -> tuple[int, ...]:
    """ReplicaAssignment.targetReplicas = replicas − removing."""
    return ordered_minus(a.replicas, a.removing)


def is_reassigning(a: Plan) -> bool:
    """ReplicaAssignment.isBeingReassigned: adding or removing is non-empty."""
    return bool(a.adding) or bool(a.removing)


def reassign_to(current: Plan, target: Iterable[int]) -> Plan:
    """ReplicaAssignment.reassignTo: always from the origin, so a new target forgets the previous one.

    full = distinct(target ++ origin); adding = full − origin (full's order);
    removing = origin − target (= full − target, origin's order). Reassigning to the
    origin gives a plain assignment (adding = removing = []).
    """
    target = tuple(target)
    origin = origin_of(current)
    full = distinct(target + origin)
    return Plan(full, ordered_minus(full, origin), ordered_minus(origin, target))


def plain(replicas: Iterable[int]) -> Plan:
    return Plan(tuple(replicas), (), ())


def zk_assignment(part: Partition) -> Plan:
    """The assignment as persisted in ZooKeeper (the Partition fields)."""
    return Plan(part.replicas, part.adding, part.removing)


def reassignment_complete(assignment: Plan, part: Partition) -> bool:
    """KafkaController.isReassignmentComplete: not reassigning, or target ⊆ ISR read from ZooKeeper."""
    return not is_reassigning(assignment) or set(target_of(assignment)) <= set(part.isr)


# -- the controller's own fields ------------------------------------------------------------------


def memory_of(zk: ZkController, topic: str, partition: int) -> Plan | None:
    """controllerContext.partitionFullReplicaAssignment, or None for a partition the controller does not know."""
    for t, p, replicas, adding, removing in zk.memory:
        if t == topic and p == partition:
            return Plan(replicas, adding, removing)
    return None


def with_memory(zk: ZkController, topic: str, partition: int, a: Plan) -> ZkController:
    rows = [row for row in zk.memory if (row[0], row[1]) != (topic, partition)]
    rows.append((topic, partition, a.replicas, a.adding, a.removing))
    return replace(zk, memory=tuple(sorted(rows, key=lambda r: (r[0], r[1]))))


def _get(rows: tuple[tuple[str, int, tuple[int, ...]], ...], topic: str, partition: int) -> tuple[int, ...] | None:
    for t, p, replicas in rows:
        if t == topic and p == partition:
            return replicas
    return None


def _put(rows: tuple, topic: str, partition: int, replicas: tuple[int, ...]) -> tuple:
    out = [r for r in rows if (r[0], r[1]) != (topic, partition)] + [(topic, partition, tuple(replicas))]
    return tuple(sorted(out, key=lambda r: (r[0], r[1])))


def _drop(rows: tuple, topic: str, partition: int) -> tuple:
    return tuple(r for r in rows if (r[0], r[1]) != (topic, partition))


def being_reassigned_target(zk: ZkController, topic: str, partition: int) -> tuple[int, ...] | None:
    return _get(zk.being_reassigned, topic, partition)


def znode_target(zk: ZkController, topic: str, partition: int) -> tuple[int, ...] | None:
    return _get(zk.admin_znode, topic, partition)


def with_being_reassigned(zk: ZkController, topic: str, partition: int, target: tuple[int, ...]) -> ZkController:
    return replace(zk, being_reassigned=_put(zk.being_reassigned, topic, partition, target))


def without_znode_entries(zk: ZkController, keep: Callable[[str, int, tuple[int, ...]], bool]) -> ZkController:
    """maybeRemoveFromZkReassignment: rewrite /admin/reassign_partitions keeping the entries `keep` accepts."""
    return replace(zk, admin_znode=tuple(e for e in zk.admin_znode if keep(*e)))


def next_step(zk: ZkController, topic: str, partition: int) -> str | None:
    for t, p, step in zk.pending:
        if t == topic and p == partition:
            return step
    return None


def schedule(zk: ZkController, topic: str, partition: int, target: tuple[int, ...]) -> ZkController:
    """Record the reassignment's target and queue onPartitionReassignment (its first step, U).

    A partition already queued restarts at U at the end of the queue (the profile drains the
    queue before handling a new controller event, so this only happens within one event). A
    queued ISR change notification ("N", zk_versions) is another event and stays queued.
    """
    zk = with_being_reassigned(zk, topic, partition, target)
    pending = tuple(e for e in zk.pending if (e[0], e[1]) != (topic, partition) or e[2] == NOTIFICATION)
    return replace(zk, pending=pending + ((topic, partition, "U"),))


def _set_step(zk: ZkController, topic: str, partition: int, step: str | None) -> ZkController:
    """Replace (or, with None, drop) the partition's first queued entry: the one that just ran."""
    out, done = [], False
    for e in zk.pending:
        if not done and (e[0], e[1]) == (topic, partition):
            done = True
            if step is not None:
                out.append((topic, partition, step))
        else:
            out.append(e)
    return replace(zk, pending=tuple(out))


# -- the cached leader and ISR (bounds: zk_versions) ---------------------------------------------

NOTIFICATION = "N"
"""The pending entry of an ISR change notification: a leader wrote the ISR to ZooKeeper itself."""


def cached_leadership(zk: ZkController, topic: str, partition: int, part: Partition) -> tuple[int, tuple[int, ...], int]:
    """controllerContext.partitionLeadershipInfo: (leader, ISR, zkVersion). Without the cache (zk_versions
    off) the controller's view is ZooKeeper's itself."""
    for t, p, leader, isr, behind in zk.leadership or ():
        if (t, p) == (topic, partition):
            return leader, isr, part.partition_epoch - behind
    return part.leader, part.isr, part.partition_epoch


def _cache_row(topic: str, partition: int, part: Partition) -> tuple[str, int, int, tuple[int, ...], int]:
    return topic, partition, part.leader, part.isr, 0


def refresh_cache(state: ClusterState, which: Iterable[tuple[str, int]]) -> ClusterState:
    """updateLeaderAndIsrCache / putPartitionLeadershipInfo: the cache takes ZooKeeper's leader, ISR and
    zkVersion for these partitions (after the controller wrote them, or read them back)."""
    zk = state.zk
    if zk is None or zk.leadership is None:
        return state
    which = set(which)
    if not which:
        return state
    rows = {(r[0], r[1]): r for r in zk.leadership}
    for t, i, part in state.partitions():
        if (t, i) in which:
            rows[(t, i)] = _cache_row(t, i, part)
    return replace(state, zk=replace(zk, leadership=tuple(rows[k] for k in sorted(rows))))


def with_leadership_cache(state: ClusterState) -> ClusterState:
    """Switch the cache on (bounds: zk_versions): filled from ZooKeeper, as at controller start-up."""
    zk = state.zk
    if zk is None:
        raise ValueError("zk_versions: the state has no zk controller")
    rows = tuple(_cache_row(t, i, p) for t, i, p in state.partitions())
    return replace(state, zk=replace(zk, leadership=rows))


def stale_versions_coincide(state: ClusterState) -> ClusterState:
    """The explorer's renaming of cached zkVersions (checker/models/reassign.normalize_epochs): every cached
    version older than ZooKeeper's becomes one behind. What the controller does with a cached version is
    compare it with ZooKeeper's (a conditional write) or with a leader's, which in an explored run is
    ZooKeeper's too, so how far behind never matters; leaders' ISR writes would otherwise make it grow
    without bound while a notification waits."""
    zk = state.zk
    if zk is None or not zk.leadership or all(r[4] <= 1 for r in zk.leadership):
        return state
    rows = tuple((t, p, ld, isr, min(behind, 1)) for t, p, ld, isr, behind in zk.leadership)
    return replace(state, zk=replace(zk, leadership=rows))


def conditional_update(part: Partition, expected_version: int, leader: int, isr: tuple[int, ...],
                       new_leader_epoch: bool) -> Partition | None:
    """KafkaZkClient.updateLeaderAndIsr for one partition: a setData conditional on the zkVersion. A stale
    expected version is Code.BADVERSION (None: nothing written); otherwise the znode's version moves on
    (and the leader epoch, if the writer bumped it)."""
    if expected_version != part.partition_epoch:
        return None
    return replace(part, leader=leader, isr=tuple(isr), partition_epoch=part.partition_epoch + 1,
                   leader_epoch=part.leader_epoch + (1 if new_leader_epoch else 0))


def leader_writes_isr(state: ClusterState, topic: str, partition: int, isr: tuple[int, ...]) -> ClusterState:
    """A leader on inter.broker.protocol.version < 2.7 (ZkAlterPartitionManager.submit) writes its new ISR to
    the partition state znode itself, conditional on its zkVersion, then notifies the controller through
    /isr_change_notification; the controller's cache lags until it processes that notification ("N",
    queued once per partition, as the broker batches its isrChangeSet). Brokers see the controller's
    writes at once in the model, so the leader's zkVersion is ZooKeeper's and the write succeeds."""
    zk, part = state.zk, state.partition(topic, partition)
    assert zk is not None and zk.leadership is not None and part is not None
    written = conditional_update(part, part.partition_epoch, part.leader, isr, new_leader_epoch=False)
    assert written is not None
    rows = tuple((t, p, ld, cached, behind + 1) if (t, p) == (topic, partition) else (t, p, ld, cached, behind)
                 for t, p, ld, cached, behind in zk.leadership)
    pending = zk.pending
    if (topic, partition, NOTIFICATION) not in pending:
        pending += ((topic, partition, NOTIFICATION),)
    state = state.with_partition(topic, partition, written)
    return replace(state, zk=replace(zk, leadership=rows, pending=pending))


def step_n(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """processIsrChangeNotification: updateLeaderAndIsrCache for the partition, then, if it is being
    reassigned, maybeCompleteReassignment (U queued if target ⊆ ZooKeeper's ISR)."""
    zk = state.zk
    assert zk is not None
    state = refresh_cache(replace(state, zk=_set_step(zk, topic, partition, None)), [(topic, partition)])
    return maybe_complete_reassignment(state, topic, partition)


# -- partitions ---------------------------------------------------------------------------------


def delete_replica_log(part: Partition, broker: int) -> Partition:
    """StopReplica(delete = true): the replica's log is gone (replication layer only)."""
    if part.log is None:
        return part
    logs = tuple((b, log) for b, log in part.log.logs if b != broker)
    if logs == part.log.logs:
        return part
    return replace(part, log=replace(part.log, logs=logs))


def stop_replicas(part: Partition, replicas: Iterable[int]) -> Partition:
    """stopRemovedReplicasOfReassignedPartition: each replica goes OfflineReplica (ISR removal), then is deleted."""
    replicas = tuple(replicas)
    for r in replicas:
        part = remove_replica_from_isr(part, r)
    for r in replicas:
        part = delete_replica_log(part, r)
    return part


def has_live_leader(state: ClusterState, part: Partition) -> bool:
    return part.leader != NO_LEADER and state.is_active(part.leader)


def elect_offline_partitions(state: ClusterState) -> ClusterState:
    """triggerOnlinePartitionStateChange: every partition without a live leader gets an offline election.

    The assignment is the controller's (memory) full replica list; the election is
    unclean only if the topic has unclean.leader.election.enable. No candidate → nothing
    is written.
    """
    zk = state.zk
    assert zk is not None
    for t in state.topics:
        for i, part in enumerate(t.partitions):
            if has_live_leader(state, part):
                continue
            mem = memory_of(zk, t.name, i)
            if mem is None or not mem.replicas:
                continue
            result = offline_election(state, mem.replicas, part, t.unclean_leader_election)
            if result is not None:
                state = state.with_partition(t.name, i, write_leader_and_isr(part, *result))
                state = R.send_leader_and_isr(state, t.name, i, mem.replicas)  # to the live replicas
    return state


# -- onPartitionReassignment, one step per function --------------------------------------------


def _parts(state: ClusterState, topic: str, partition: int) -> tuple[ZkController, Partition, Plan]:
    zk = state.zk
    part = state.partition(topic, partition)
    assert zk is not None and part is not None
    mem = memory_of(zk, topic, partition)
    if mem is None:
        raise ValueError(f"{topic}-{partition}: not in the controller context")
    return zk, part, mem


def step_u(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """U (updateCurrentReassignment): if the new assignment differs, write ZK, then memory; stop the
    unneeded replicas (old adding replicas no longer wanted: OfflineReplica, then deleted). Then decide
    phase A or B on the ISR read from ZooKeeper.

    The new assignment is memory.reassignTo(target); when memory already reassigns to exactly this
    target (a resumption: ISR change, broker start-up, failover, resubmission) it is memory as is.
    """
    zk, part, mem = _parts(state, topic, partition)
    target = being_reassigned_target(zk, topic, partition)
    if target is None:
        raise ValueError(f"{topic}-{partition}: step U without a recorded reassignment")
    new = mem if is_reassigning(mem) and target_of(mem) == target else reassign_to(mem, target)
    unneeded = ordered_minus(mem.replicas, new.replicas) if new != mem else ()
    if new != mem:
        part = replace(part, replicas=new.replicas, adding=new.adding, removing=new.removing)  # U1: ZooKeeper
        zk = with_memory(zk, topic, partition, new)  # U2: memory
        part = stop_replicas(part, unneeded)
    zk = _set_step(zk, topic, partition, "B1" if reassignment_complete(new, part) else "A1")
    state = replace(state.with_partition(topic, partition, part), zk=zk)
    return _requests_of_stopping(state, topic, partition, unneeded, new.replicas) if unneeded else state


def _requests_of_stopping(state: ClusterState, topic: str, partition: int, stopped: tuple[int, ...],
                          assignment: tuple[int, ...]) -> ClusterState:
    """The requests of stopRemovedReplicasOfReassignedPartition (broker_replicas): OfflineReplica sends the
    partition's other replicas a LeaderAndIsr and the stopped ones StopReplica(delete = false);
    ReplicaDeletionStarted sends them StopReplica(delete = true)."""
    state = R.send_leader_and_isr(state, topic, partition, ordered_minus(assignment, stopped))
    state = R.send_stop_replica(state, topic, partition, stopped, delete=False)
    return R.send_stop_replica(state, topic, partition, stopped, delete=True)


def step_a1(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """A1: leader_epoch + 1 (updateLeaderEpochAndSendRequest), leader and ISR unchanged; LeaderAndIsr to RS."""
    zk, part, mem = _parts(state, topic, partition)
    part = write_leader_and_isr(part, part.leader, part.isr)
    state = replace(state.with_partition(topic, partition, part), zk=_set_step(zk, topic, partition, "A2"))
    return R.send_leader_and_isr(state, topic, partition, origin_of(mem) + mem.adding)  # ORS + TRS


def step_a2(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """A2: adding replicas become NewReplica and start replicating (no modelled field); the run ends.
    NewReplica sends each adding replica that does not lead a LeaderAndIsr (isNew)."""
    zk, part, mem = _parts(state, topic, partition)
    state = replace(state, zk=_set_step(zk, topic, partition, None))
    return R.send_leader_and_isr(state, topic, partition, [b for b in mem.adding if b != part.leader])


def step_b1(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """B1: adding replicas become OnlineReplica (no modelled field)."""
    zk = state.zk
    assert zk is not None
    return replace(state, zk=_set_step(zk, topic, partition, "B2"))


def step_b2(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """B2: memory replicas = target, adding = removing = [] (ZooKeeper keeps the full list until B6)."""
    zk, _, mem = _parts(state, topic, partition)
    zk = with_memory(zk, topic, partition, plain(target_of(mem)))
    return replace(state, zk=_set_step(zk, topic, partition, "B3"))


def step_b3(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """B3 (moveReassignedPartitionLeaderIfRequired): leader not in target or not live → reassign election
    (first live in-sync target replica; no unclean fallback; none → nothing written); else leader_epoch + 1."""
    zk, part, mem = _parts(state, topic, partition)
    target = mem.replicas  # memory is the plain target since B2
    written = True
    if part.leader not in target or not state.is_active(part.leader):
        result = reassign_election(state, target, part)
        written = result is not None
        if result is not None:
            part = write_leader_and_isr(part, *result)
    else:
        part = write_leader_and_isr(part, part.leader, part.isr)
    state = replace(state.with_partition(topic, partition, part), zk=_set_step(zk, topic, partition, "B4"))
    return R.send_leader_and_isr(state, topic, partition, target) if written else state  # to TRS only


def step_b4(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """B4: each removing replica (ZooKeeper's list, origin order) goes OfflineReplica: removed from the ISR."""
    zk, part, mem = _parts(state, topic, partition)
    removing = part.removing
    for r in removing:
        part = remove_replica_from_isr(part, r)
    state = replace(state.with_partition(topic, partition, part), zk=_set_step(zk, topic, partition, "B5"))
    if not removing:
        return state
    state = R.send_leader_and_isr(state, topic, partition, ordered_minus(mem.replicas, removing))
    return R.send_stop_replica(state, topic, partition, removing, delete=False)


def step_b5(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """B5: removing replicas are deleted (StopReplica delete = true): their logs go (replication layer)."""
    zk, part, _ = _parts(state, topic, partition)
    for r in part.removing:
        part = delete_replica_log(part, r)
    state = replace(state.with_partition(topic, partition, part), zk=_set_step(zk, topic, partition, "B6"))
    return R.send_stop_replica(state, topic, partition, part.removing, delete=True)


def step_b6(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """B6: ZooKeeper replicas = target (memory), adding = removing = []."""
    zk, part, mem = _parts(state, topic, partition)
    part = replace(part, replicas=mem.replicas, adding=(), removing=())
    return replace(state.with_partition(topic, partition, part), zk=_set_step(zk, topic, partition, "B7"))


def step_b7(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """B7 (removePartitionFromReassigningPartitions) + B8: drop the partition from partitionsBeingReassigned
    and its /admin/reassign_partitions entry if that entry's replicas equal the completed ones; the run ends.
    B8 (UpdateMetadata) has no modelled effect and is folded in here."""
    zk, _, mem = _parts(state, topic, partition)
    zk = without_znode_entries(zk, lambda t, p, r: not ((t, p) == (topic, partition) and r == mem.replicas))
    zk = replace(zk, being_reassigned=_drop(zk.being_reassigned, topic, partition))
    return replace(state, zk=_set_step(zk, topic, partition, None))


STEPS: dict[str, Callable[[ClusterState, str, int], ClusterState]] = {
    "U": step_u,
    "A1": step_a1,
    "A2": step_a2,
    "B1": step_b1,
    "B2": step_b2,
    "B3": step_b3,
    "B4": step_b4,
    "B5": step_b5,
    "B6": step_b6,
    "B7": step_b7,
    NOTIFICATION: step_n,
}
"""The step names that can appear in ZkController.pending, and what runs them."""


def run_step(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """Run the next pending step of one partition (no pending work → the state unchanged)."""
    zk = state.zk
    assert zk is not None
    step = next_step(zk, topic, partition)
    if step is None:
        return state
    return STEPS[step](state, topic, partition)


def drain(state: ClusterState) -> ClusterState:
    """Finish the controller's current event: run every pending step, in queue order.

    Kafka's controller is single-threaded: an event (API request, ISR change, broker
    change, ...) that arrives while onPartitionReassignment runs is handled after it.
    """
    zk = state.zk
    while zk is not None and zk.active and zk.pending:
        t, p, _ = zk.pending[0]
        state = run_step(state, t, p)
        zk = state.zk
    return state


def maybe_complete_reassignment(state: ClusterState, topic: str, partition: int) -> ClusterState:
    """After a successful ISR change: if the partition is being reassigned and its reassignment is
    complete (target ⊆ ISR in ZooKeeper), run onPartitionReassignment again (KafkaController
    maybeCompleteReassignment, checked after the AlterPartition response)."""
    zk = state.zk
    assert zk is not None
    if being_reassigned_target(zk, topic, partition) is None:
        return state
    mem = memory_of(zk, topic, partition)
    part = state.partition(topic, partition)
    if mem is None or part is None or not reassignment_complete(mem, part):
        return state
    return replace(state, zk=schedule(zk, topic, partition, target_of(mem)))


# -- broker changes --------------------------------------------------------------------------------


def broker_failure(state: ClusterState, broker: int) -> ClusterState:
    """The broker's session expires; onBrokerFailure: elect leaders for partitions without a live leader
    (offline election, unclean only if the topic allows it), then the dead broker's replicas (in the
    controller's assignment) go OfflineReplica (ISR removal)."""
    b = state.broker(broker)
    assert b is not None
    state = R.broker_gone(state.with_broker(replace(b, active=False)), broker)  # removeBroker: its queue goes
    zk = state.zk
    if zk is None or not zk.active:
        return state  # nobody reacts until a controller is elected
    state = elect_offline_partitions(state)
    for t, i, part in list(state.partitions()):
        mem = memory_of(zk, t, i)
        if mem is not None and broker in mem.replicas:
            new = remove_replica_from_isr(part, broker)
            if new is not part:
                state = state.with_partition(t, i, new)
            state = R.send_leader_and_isr(state, t, i, ordered_minus(mem.replicas, (broker,)))  # OfflineReplica
    return state


def broker_startup(state: ClusterState, broker: int) -> ClusterState:
    """The broker registers again; onBrokerStartup: its replicas go OnlineReplica (no modelled field),
    partitions without a live leader get an offline election, and every reassignment whose target holds
    the broker runs onPartitionReassignment again (maybeResumeReassignments)."""
    b = state.broker(broker)
    assert b is not None
    state = state.with_broker(replace(b, registered=True, active=True))
    zk = state.zk
    if zk is None or not zk.active:
        return state
    for t, i, _ in list(state.partitions()):  # its replicas go OnlineReplica: a LeaderAndIsr each
        mem = memory_of(zk, t, i)
        if mem is not None and broker in mem.replicas:
            state = R.send_leader_and_isr(state, t, i, (broker,))
    state = elect_offline_partitions(state)
    zk = state.zk
    assert zk is not None
    for t, p, _ in zk.being_reassigned:
        mem = memory_of(zk, t, p)
        if mem is not None and broker in target_of(mem):
            zk = schedule(zk, t, p, target_of(mem))
    return replace(state, zk=zk)


# -- controller start-up and failover ------------------------------------------------------------


def controller_startup(state: ClusterState, epoch: int) -> ClusterState:
    """onControllerFailover of a newly elected controller with controller epoch `epoch`.

    1. initializeControllerContext: memory = ZooKeeper's assignment of every partition.
    2. replica state machine start-up: replicas on dead brokers go OfflineReplica (ISR removal,
       broker ids ascending).
    3. partition state machine start-up: partitions without a live leader get an offline election.
    4. initializePartitionReassignments: the /admin/reassign_partitions entries first (they take
       precedence over an API reassignment of the same partition), then every partition that is
       reassigning in ZooKeeper; each gets onPartitionReassignment (queued, step U first).
    """
    old = state.zk
    # what ZooKeeper holds, encoded as Kafka writes it and decoded as the new controller reads it
    view = Z.read_zookeeper(Z.zookeeper_content(state))
    memory = tuple((t, i, a.replicas, a.adding, a.removing) for (t, i), a in sorted(view.assignments.items()))
    leadership = None
    if old is not None and old.leadership is not None:  # updateLeaderAndIsrCache
        leadership = tuple((t, i, s.leader, s.isr, 0) for (t, i), s in sorted(view.states.items()))
    zk = ZkController(active=True, epoch=epoch, memory=memory, admin_znode=view.reassignments, leadership=leadership,
                      controller_id=None if old is None else old.controller_id)  # zk_events: who, set by the caller
    state = replace(state, zk=zk)
    for t, i, part in list(state.partitions()):
        new = part
        for b in sorted(set(part.replicas)):
            if not state.is_active(b):
                new = remove_replica_from_isr(new, b)
        if new is not part:
            state = state.with_partition(t, i, new)
    state = elect_offline_partitions(state)
    for t, i, _ in list(state.partitions()):  # replica state machine start-up: every live replica is told
        state = R.send_leader_and_isr(state, t, i, (memory_of(state.zk, t, i) or EMPTY).replicas)
    zk = state.zk
    assert zk is not None
    # processZkPartitionReassignment: entries for partitions that do not exist fail and leave the znode
    missing = {(t, p) for t, p, _ in zk.admin_znode if not (memory_of(zk, t, p) or EMPTY).replicas}
    zk = without_znode_entries(zk, lambda t, p, r: (t, p) not in missing)
    for t, p, target in zk.admin_znode:
        zk = schedule(zk, t, p, target)
    for (t, i), a in sorted(view.assignments.items()):  # reassigning in the topic znodes, as read
        if is_reassigning(a) and being_reassigned_target(zk, t, i) is None:
            zk = schedule(zk, t, i, target_of(a))
    # the start-up's own writes (ISR removals, elections) put what they wrote into the cache
    return refresh_cache(replace(state, zk=zk), [(t, i) for t, i, _ in state.partitions()])


def controller_failover(state: ClusterState) -> ClusterState:
    """The active controller dies and another is elected at once: memory, partitionsBeingReassigned and
    the pending steps are lost; the new controller (epoch + 1) starts up from ZooKeeper. With no active
    controller (a hand-built state), this is the election alone."""
    zk = state.zk
    epoch = zk.epoch if zk is not None else 0
    return controller_startup(R.controller_gone(state), epoch + 1)  # the old controller's queues are gone
