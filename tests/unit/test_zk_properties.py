"""Properties of the `zk` profile over every interleaving of small configurations (exhaustive search, epochs
abstracted away) and over random action sequences (hypothesis). Properties zk keeps are asserted; the ones
it breaks are pinned as findings with the shortest scenario breadth-first search finds."""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from kreassign.reference import profile
from kreassign.reference import zk_controller as C
from kreassign.reference.profile_base import ActionSpace
from kreassign.spec import actions as A
from kreassign.spec.state import NO_LEADER, ClusterState, make_cluster

P = profile("zk")
T = "t"

# config A: 3 brokers, one partition on [0], targets [1,2] and [2]; everything that can happen
SPACE_A = ActionSpace(
    targets=((T, 0, (1, 2)), (T, 0, (2,))),
    failures=True,
    failover=True,
    elections=("PREFERRED", "UNCLEAN"),
    znode=True,
)
# config B: 4 brokers, one partition on [0,1], targets [2,3] and [0,2]
SPACE_B = replace(SPACE_A, targets=((T, 0, (2, 3)), (T, 0, (0, 2))))


def init(brokers, assignments, **kw) -> ClusterState:
    return P.initial_state(make_cluster(brokers, assignments, **kw))


def abstract(s: ClusterState) -> ClusterState:
    """The state without its epochs: no rule of the model reads an epoch's value (the enumerated ISR
    changes use the current ones), so states equal up to epochs have the same futures."""
    topics = tuple(
        replace(t, partitions=tuple(replace(p, leader_epoch=0, partition_epoch=0) for p in t.partitions))
        for t in s.topics
    )
    return replace(s, topics=topics, zk=replace(s.zk, epoch=0))


def explore(s0: ClusterState, space: ActionSpace):
    """Every reachable state (one concrete representative per abstract state) and every edge from them."""
    seen = {abstract(s0)}
    queue = deque([s0])
    edges = []
    while queue:
        s = queue.popleft()
        for a in P.enabled_actions(s, space):
            t = P.apply(s, a).state
            edges.append((s, a, t))
            k = abstract(t)
            if k not in seen:
                seen.add(k)
                queue.append(t)
    return seen, edges


def shortest(s0: ClusterState, space: ActionSpace, bad):
    """The shortest action sequence from s0 to an edge (s, a, t) with bad(s, a, t), or None."""
    seen = {abstract(s0)}
    queue = deque([(s0, ())])
    while queue:
        s, path = queue.popleft()
        for a in P.enabled_actions(s, space):
            t = P.apply(s, a).state
            if bad(s, a, t):
                return path + (a,), t
            k = abstract(t)
            if k not in seen:
                seen.add(k)
                queue.append((t, path + (a,)))
    return None


# -- the properties ---------------------------------------------------------------------------------


def idle(s: ClusterState) -> bool:
    return not s.zk.pending


def state_invariants(s: ClusterState) -> list[str]:
    """The invariants zk keeps; returns the names of those that fail."""
    failed = []
    zk = s.zk
    for t, i, p in s.partitions():
        if not (p.leader == NO_LEADER or p.leader in p.isr):
            failed.append("leader_in_isr")
        if not p.isr:
            failed.append("isr_non_empty")
        if len(set(p.replicas)) != len(p.replicas) or not set(p.adding) | set(p.removing) <= set(p.replicas):
            failed.append("assignment_well_formed")
        if set(p.adding) & set(p.removing):
            failed.append("adding_removing_disjoint")
        if idle(s) and zk.active:
            if C.memory_of(zk, t, i) != C.zk_assignment(p):
                failed.append("idle_memory_equals_zookeeper")
            if (C.being_reassigned_target(zk, t, i) is not None) != p.reassigning:
                failed.append("idle_being_reassigned_iff_reassigning_in_zookeeper")
            if C.being_reassigned_target(zk, t, i) not in (None, p.target):
                failed.append("idle_being_reassigned_target_is_zookeepers")
            z = C.znode_target(zk, t, i)
            if z is not None and C.being_reassigned_target(zk, t, i) != z:
                failed.append("idle_znode_entries_are_running")
    return failed


def epochs_never_go_back(s: ClusterState, t: ClusterState) -> bool:
    if t.zk.epoch < s.zk.epoch:
        return False
    return all(
        q.leader_epoch >= p.leader_epoch and q.partition_epoch >= p.partition_epoch
        for (_, _, p), (_, _, q) in zip(s.partitions(), t.partitions())
    )


def isr_outside_replicas(s, a, t) -> bool:
    return any(not set(p.isr) <= set(p.replicas) for _, _, p in t.partitions())


def idle_without_leader_but_live_isr(s, a, t) -> bool:
    """The controller is idle, a partition has no leader, and an assigned in-sync replica is live."""
    return idle(t) and any(
        q.leader == NO_LEADER and any(t.is_active(b) and b in q.replicas for b in q.isr) for _, _, q in t.partitions()
    )


# -- exhaustive ---------------------------------------------------------------------------------------


def test_exhaustive_config_a_keeps_the_invariants_and_the_epochs():
    seen, edges = explore(init(3, {T: [[0]]}), SPACE_A)
    # pinned like Stateright's examples: any semantic drift shows up as a count change
    assert len(seen) == 2772
    for s, a, t in edges:
        assert state_invariants(t) == [], (str(a), t)
        assert epochs_never_go_back(s, t), (str(a), s, t)


def test_exhaustive_config_b_keeps_the_invariants_and_the_epochs():
    seen, edges = explore(init(4, {T: [[0, 1]]}), SPACE_B)
    assert len(seen) == 10261
    for s, a, t in edges:
        assert state_invariants(t) == [], (str(a), t)
        assert epochs_never_go_back(s, t), (str(a), s, t)


def test_exhaustive_without_failures_or_elections_isr_stays_within_replicas():
    space = replace(SPACE_A, failures=False, elections=())
    seen, edges = explore(init(3, {T: [[0]]}), space)
    assert len(seen) > 100
    assert not any(isr_outside_replicas(*e) or idle_without_leader_but_live_isr(*e) for e in edges)


# -- findings -----------------------------------------------------------------------------------------


def test_finding_isr_not_within_replicas_shortest_scenario():
    """isr ⊆ replicas (seed 004) breaks under zk: stopping a replica that is the last ISR member keeps it in
    the ISR (removeReplicasFromIsr never empties it) while step U takes it out of the replicas."""
    found = shortest(init(3, {T: [[0]]}), SPACE_A, isr_outside_replicas)
    assert found is not None
    path, end = found
    assert [str(a) for a in path] == [
        "Reassign(t-0 -> [1,2])",
        "ControllerStep(t-0)",  # U
        "ControllerStep(t-0)",  # A1
        "ControllerStep(t-0)",  # A2
        "LeaderExpandIsr(t-0 +1)",
        "BrokerFail(0)",  # 1 is elected (first live in-sync replica of [1,2,0]), ISR [1]
        "Reassign(t-0 -> [2])",
        "ControllerStep(t-0)",  # U stops 1: the last ISR member stays, the leader goes
    ]
    p = end.partition(T, 0)
    assert (p.replicas, p.isr, p.leader) == ((2, 0), (1,), NO_LEADER)
    # without broker failures it takes a preferred election and a shrink (the cancel of test_zk.py)
    found = shortest(init(3, {T: [[0]]}), replace(SPACE_A, failures=False), isr_outside_replicas)
    assert found is not None and len(found[0]) == 9
    assert [str(a) for a in found[0]][5:7] == ["ElectLeaders(t-0, PREFERRED)", "LeaderShrinkIsr(t-0 -0)"]


def test_finding_cancel_leaves_isr_outside_replicas_in_config_b():
    found = shortest(init(4, {T: [[0, 1]]}), SPACE_B, isr_outside_replicas)
    assert found is not None
    path, end = found
    assert len(path) == 9 and isinstance(path[-2], A.Cancel)
    p = end.partition(T, 0)
    assert (p.replicas, p.isr, p.leader) == ((0, 1), (2,), NO_LEADER)


def test_finding_idle_controller_leaves_a_live_isr_without_leader():
    """Step U stops a leading adding replica (leader → -1) and phase A elects nobody; the partition stays
    leaderless, with a live assigned in-sync replica, until a broker change or a failover."""
    found = shortest(init(3, {T: [[0]]}), SPACE_A, idle_without_leader_but_live_isr)
    assert found is not None
    path, end = found
    assert [str(a) for a in path] == [
        "Reassign(t-0 -> [1,2])", "ControllerStep(t-0)", "ControllerStep(t-0)", "ControllerStep(t-0)",
        "LeaderExpandIsr(t-0 +1)", "ElectLeaders(t-0, PREFERRED)",
        "Reassign(t-0 -> [2])", "ControllerStep(t-0)", "ControllerStep(t-0)", "ControllerStep(t-0)",
    ]
    p = end.partition(T, 0)
    assert (p.replicas, p.isr, p.leader) == ((2, 0), (0,), NO_LEADER)
    # no admin action fixes it; a failover does
    assert P.apply(end, A.ControllerFailover()).state.partition(T, 0).leader == 0


# -- random action sequences -----------------------------------------------------------------------------


def walk(s: ClusterState, space: ActionSpace, choices: list[int]):
    for c in choices:
        enabled = P.enabled_actions(s, space)
        if not enabled:
            return
        a = enabled[c % len(enabled)]
        t = P.apply(s, a).state
        yield s, a, t
        s = t


SPACE_2P = ActionSpace(
    targets=((T, 0, (2, 3)), (T, 0, (0, 2)), (T, 1, (0,)), (T, 1, (3, 1))),
    failures=True,
    failover=True,
    elections=("PREFERRED", "UNCLEAN"),
    znode=True,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60))
def test_random_walks_keep_the_invariants_and_epochs(choices):
    s = init(4, {T: [[0, 1], [1, 2]]}, unclean=[T])
    for prev, a, nxt in walk(s, SPACE_2P, choices):
        assert epochs_never_go_back(prev, nxt), str(a)
        assert state_invariants(nxt) == [], str(a)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60))
def test_random_walks_with_logs_keep_committed_records_without_unclean_elections(choices):
    """Clean elections, reassignments and cancels never lose a record at or below a high watermark."""
    s = init(4, {T: [[0, 1]]}, replication_layer=True)
    space = replace(SPACE_2P, targets=SPACE_2P.targets[:2], elections=("PREFERRED",), replication=True)
    for prev, a, nxt in walk(s, space, choices):
        assert epochs_never_go_back(prev, nxt), str(a)
        for _, _, p in nxt.partitions():
            if p.leader != NO_LEADER:
                assert p.log.log_of(p.leader)[: len(p.log.committed)] == p.log.committed, str(a)
