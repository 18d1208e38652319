"""The replication throttles (KIP-73) of a live cluster against the moves in flight.

The configs are read into the model's own `ReplicationThrottles` (spec/state.py) and the moves into a
`ClusterState`, so that both questions are the reference's and the spec's:

- **left behind**: a throttled replica ("partition:broker" in a topic's leader/follower list) that is not a
  source (leader list) or destination (follower list) of a move in flight, and a broker rate on a broker that
  is no source or destination of any; moves are `reference/throttles.py` `current_moves` (the tool's
  calculateCurrentMoveMap: sources = replicas − adding, destinations = adding). `--verify` clears them once no
  reassignment is in flight (`clearAllThrottles`).
- **missing**: when some move in flight has a throttled replica (the operator throttles the moves), a move in
  flight for which the spec's `moving_replicas_throttled` (spec/throttle_properties.py) fails; what it lacks
  is then named. Moves started without any throttle are a choice, not a gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.reference import profile
from kreassign.reference.throttles import current_moves
from kreassign.spec.reassign_properties import Ghost, ModelState
from kreassign.spec.state import NO_LEADER, Broker, ClusterState, Partition, ReplicationThrottles, Topic
from kreassign.spec.throttle_properties import moving_replicas_throttled

from .snapshot import Snapshot

LEADER_LIST, FOLLOWER_LIST = "leader.replication.throttled.replicas", "follower.replication.throttled.replicas"
RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
         "replica.alter.log.dirs.io.max.bytes.per.second")
UNLIMITED = str(2**63 - 1)  # a rate's default (Long.MAX_VALUE): no throttle


@dataclass
class ThrottleReport:
    in_use: bool
    left_behind: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"in_use": self.in_use, "left_behind": self.left_behind, "missing": self.missing}


def _entries(value: str | None, topic: str, partitions: dict[int, tuple[int, ...]]) -> tuple[set, bool]:
    """A throttled-replicas list as (topic, partition, broker) entries, and whether it is the wildcard `*`
    (every replica of the topic: LogConfig's ThrottledReplicasListValidator)."""
    value = (value or "").strip()
    if value == "*":
        return {(topic, p, b) for p, replicas in partitions.items() for b in replicas}, True
    out = set()
    for item in value.split(","):
        if ":" in item:
            p, b = item.split(":", 1)
            if p.strip().isdigit() and b.strip().isdigit():
                out.add((topic, int(p), int(b)))
    return out, False


def cluster_of(snapshot: Snapshot, topics: set[str]) -> tuple[ClusterState, tuple[Ghost, ...]]:
    """The topics' partitions as the model's ClusterState (indices are positions: Kafka's partitions are
    0..n-1), with the admin's intent of each move as its ghost (original = replicas − adding, requested =
    replicas − removing)."""
    by_topic: dict[str, list] = {}
    for p in snapshot.partitions:
        if p.topic in topics:
            by_topic.setdefault(p.topic, []).append(p)
    built, ghosts, brokers = [], [], set(snapshot.brokers)
    for name in sorted(by_topic):
        parts = sorted(by_topic[name], key=lambda p: p.partition)
        built.append(Topic(name, tuple(Partition(p.replicas, p.isr, NO_LEADER if p.leader is None else p.leader,
                                                 p.adding, p.removing) for p in parts)))
        for p in parts:
            brokers |= set(p.replicas)
            ghosts.append(Ghost(p.original, p.target) if p.reassigning else Ghost())
    live = snapshot.live
    cluster = ClusterState(brokers=tuple(Broker(b, active=b in live) for b in sorted(brokers)), topics=tuple(built))
    return cluster, tuple(ghosts)


def throttles_of(snapshot: Snapshot) -> ReplicationThrottles:
    leader, follower = set(), set()
    for topic, configs in snapshot.topic_configs.items():
        partitions = {p.partition: p.replicas for p in snapshot.partitions if p.topic == topic}
        leader |= _entries(configs.get(LEADER_LIST), topic, partitions)[0]
        follower |= _entries(configs.get(FOLLOWER_LIST), topic, partitions)[0]
    rates = {b for b, c in snapshot.broker_configs.items() if any(c.get(k) not in (None, "", UNLIMITED) for k in RATES)}
    return ReplicationThrottles(tuple(sorted(leader)), tuple(sorted(follower)), tuple(sorted(rates)))


def check_throttles(snapshot: Snapshot) -> ThrottleReport:
    throttles = throttles_of(snapshot)
    report = ThrottleReport(in_use=not throttles.empty)
    if throttles.empty:
        return report
    moving_now = {(p.topic, p.partition) for p in snapshot.partitions if p.reassigning}
    # the operator throttles the moves in flight when one of them has a throttled replica; rates and lists
    # left by earlier moves alone say nothing about how the current ones were started
    throttling_moves = any((t, i) in moving_now for t, i, _ in throttles.leader + throttles.follower)
    topics = {p.topic for p in snapshot.partitions if p.reassigning} | {e[0] for e in throttles.leader + throttles.follower}
    cluster, ghosts = cluster_of(snapshot, topics)
    # ListPartitionReassignments over the partition records: the kraft profile's listing reads exactly the
    # adding and removing the cluster reported (the zk profile's would read its controller's memory)
    moves = current_moves(profile("kraft"), cluster)
    sources = {(t, i, b) for (t, i), (src, _) in moves.items() for b in src}
    destinations = {(t, i, b) for (t, i), (_, dst) in moves.items() for b in dst}
    moving_brokers = {b for src, dst in moves.values() for b in src | dst}
    moving_topics = {t for t, _ in moves}
    for topic, configs in sorted(snapshot.topic_configs.items()):
        partitions = {p.partition: p.replicas for p in snapshot.partitions if p.topic == topic}
        for key, wanted in ((LEADER_LIST, sources), (FOLLOWER_LIST, destinations)):
            entries, wildcard = _entries(configs.get(key), topic, partitions)
            if wildcard:
                if topic not in moving_topics:
                    report.left_behind.append({"topic": topic, "config": key, "replicas": "*"})
                continue
            stale = sorted(entries - wanted)
            if stale:
                report.left_behind.append({"topic": topic, "config": key,
                                           "replicas": [f"{p}:{b}" for _, p, b in stale]})
    for b in throttles.brokers:
        if b not in moving_brokers:
            report.left_behind.append({"broker": b, "configs": sorted(
                k for k in RATES if snapshot.broker_configs.get(b, {}).get(k) not in (None, "", UNLIMITED))})
    if not throttling_moves:
        return report
    idle = tuple(Ghost() for _ in ghosts)
    for k, ((t, i, p), g) in enumerate(zip(cluster.partitions(), ghosts)):
        if g.original is None:
            continue
        alone = idle[:k] + (g,) + idle[k + 1:]
        if moving_replicas_throttled(ModelState(replace(cluster, throttles=throttles), alone, ())):
            continue
        lacks = [f"leader throttle on {b}" for b in g.original if (t, i, b) not in throttles.leader]
        lacks += [f"follower throttle on {b}" for b in sorted(set(g.requested) - set(g.original))
                  if b not in p.isr and (t, i, b) not in throttles.follower]
        new = {b for b in set(g.requested) - set(g.original) if b not in p.isr}
        lacks += [f"rate on broker {b}" for b in sorted(set(g.original) | new) if b not in throttles.brokers]
        report.missing.append({"partition": f"{t}-{i}", "lacks": lacks})
    return report


__all__ = ["ThrottleReport", "check_throttles", "cluster_of", "throttles_of"]
