"""What must hold of the logs brokers host (issue 14, item 1), checked with `broker_replicas = true`.

Sources: seed 004 (a broker hosts a replica of each partition assigned to it; a follower joins the
ISR once it has caught up, which needs a log to fetch into); Kafka 3.8 ReplicaManager.applyDelta
(a broker deletes the log of a partition it is no longer a replica of); KAFKA-16120 and KAFKA-13972
(stray partitions left by StopReplica requests that did not delete), KAFKA-14616 (stray logs in
KRaft).
"""

from __future__ import annotations

from kreassign.spec.fairness import Fairness
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState


def _hosted(cluster) -> set:
    return set(cluster.hosted or ())


def isr_joiner_was_told(prev: ModelState, action, nxt: ModelState) -> bool:
    """A replica joins the ISR only after its broker was told it is a replica (it hosts the log)."""
    if prev.cluster.hosted is None:
        return True
    after = getattr(action, "after", None) or nxt.cluster
    hosted = _hosted(prev.cluster)
    for (t, i, p), (_, _, q) in zip(prev.cluster.partitions(), after.partitions()):
        if any((b, t, i) not in hosted for b in set(q.isr) - set(p.isr)):
            return False
    return True


def no_in_sync_log_deleted(prev: ModelState, action, nxt: ModelState) -> bool:
    """No step deletes the log of a replica that is in the partition's ISR (above all the last live one)."""
    if prev.cluster.hosted is None:
        return True
    after = getattr(action, "after", None) or nxt.cluster
    for b, t, i in _hosted(prev.cluster) - _hosted(after):
        p = after.partition(t, i)
        if p is not None and b in p.isr:
            return False
    return True


def no_strays(ms: ModelState) -> bool:
    """Goal: no broker hosts a log for a partition it is not a replica of."""
    c = ms.cluster
    for b, t, i in c.hosted or ():
        p = c.partition(t, i)
        if p is None or b not in p.replicas:
            return False
    return True


def all_brokers_live(ms: ModelState) -> bool:
    return all(b.active for b in ms.cluster.brokers if b.registered)


BROKER_REPLICA_PROPERTIES: tuple[Property, ...] = (
    Property.transition("isr_joiner_was_told", isr_joiner_was_told, description=isr_joiner_was_told.__doc__,
                        source="seed 004; ReplicaManager.applyDelta (a follower's log is created from the metadata)",
                        promised_by=ALL),
    Property.transition("no_in_sync_log_deleted", no_in_sync_log_deleted, description=no_in_sync_log_deleted.__doc__,
                        source="ReplicaManager.applyDelta / StopReplica(delete=true)", promised_by=ALL),
    Property.eventually(
        "no_stray_replicas", no_strays,
        description="In every fair run in which every broker is eventually live for good, eventually no broker "
        "hosts a log for a partition it is not a replica of (brokers act on the metadata they replay).",
        source="KAFKA-16120, KAFKA-13972, KAFKA-14616", promised_by=ALL,
        extra={"fairness": Fairness(all_brokers_live)},
    ),
)

__all__ = ["BROKER_REPLICA_PROPERTIES", "isr_joiner_was_told", "no_in_sync_log_deleted", "no_strays"]
