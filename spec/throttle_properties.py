"""What must hold of the replication throttles the reassignment tool manages (issue 14, item 5).

Checked when the bounds say `throttles = true`: the admin then moves replicas only through
`kafka-reassign-partitions.sh --execute --additional --throttle`, cancels with `--cancel`, and
runs `--verify` periodically, as the tool tells its user to ("You must run --verify
periodically, until the reassignment completes, to ensure the throttle is removed").

Sources: KIP-73 (replication quotas: leader/follower throttled replicas), the tool's help
text and Kafka 3.8 ReassignPartitionsCommand.java (throttles are set by --execute and removed
by --verify once nothing is moving).
"""

from __future__ import annotations

from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState
from kreassign.spec.state import ReplicationThrottles

_NONE = ReplicationThrottles()


def moving_replicas_throttled(ms: ModelState) -> bool:
    """While a move is in flight, its original replicas are leader-throttled, its requested new
    replicas that are not yet in the ISR are follower-throttled, and every one of those brokers
    has its throttle rates set: no throttle is removed while a throttled move is still running."""
    th = ms.cluster.throttles or _NONE
    leader, follower, rates = set(th.leader), set(th.follower), set(th.brokers)
    for (t, i, p), g in zip(ms.cluster.partitions(), ms.ghosts):
        if g.original is None or g.requested is None or not p.reassigning:
            continue
        for b in g.original:
            if (t, i, b) not in leader or b not in rates:
                return False
        for b in set(g.requested) - set(g.original):
            if b not in p.isr and ((t, i, b) not in follower or b not in rates):
                return False
    return True


def throttles_cleared(ms: ModelState) -> bool:
    """Goal of the liveness check: nothing is moving and no throttle is left behind."""
    th = ms.cluster.throttles
    return all(g.original is None for g in ms.ghosts) and (th is None or th.empty)


THROTTLE_PROPERTIES: tuple[Property, ...] = (
    Property.always("moving_replicas_throttled", moving_replicas_throttled,
                    description=moving_replicas_throttled.__doc__,
                    source="KIP-73; Kafka 3.8 ReassignPartitionsCommand (calculateLeaderThrottles, "
                    "calculateFollowerThrottles, verifyAssignment)", promised_by=ALL),
    Property.eventually("throttles_eventually_cleared", throttles_cleared,
                        description="From every reachable state, with --verify run periodically, a state where "
                        "nothing moves and no throttle is left stays reachable (throttles are removed once the "
                        "moves that set them finish).",
                        source="kafka-reassign-partitions.sh --verify; ReassignPartitionsCommand.clearAllThrottles",
                        promised_by=tuple(p for p in ALL if p != "kraft") + ("kraft<4.3",)),
)

__all__ = ["THROTTLE_PROPERTIES", "moving_replicas_throttled", "throttles_cleared"]
