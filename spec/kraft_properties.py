"""Properties of the KRaft controller's own actions (spec/actions.py: BrokerControlledShutdown,
BrokerRestart, BalanceLeaders, ElectUncleanLeaders), checked when `--kraft-actions` switches
them on (docs/kafka.md). Each is a transition property about the action it names, so it is
vacuous on every other edge and the default configurations are unaffected.
"""

from __future__ import annotations

from typing import Any

from .actions import BalanceLeaders, BrokerControlledShutdown, BrokerRestart, ElectUncleanLeaders
from .properties import Property
from .state import NO_LEADER


def _action(label: Any) -> Any:
    return getattr(label, "action", label)


def _accepted(label: Any) -> bool:
    return getattr(getattr(label, "response", None), "error_code", 0) == 0


def controlled_shutdown_moves_leadership(prev: Any, label: Any, nxt: Any) -> bool:
    """After a broker's controlled shutdown it leads no partition, is in no ISR it shares with
    another replica, and is no longer active."""
    a = _action(label)
    if not isinstance(a, BrokerControlledShutdown) or not _accepted(label):
        return True
    cluster = nxt.cluster
    if cluster.is_active(a.broker):
        return False
    return all(p.leader != a.broker and (a.broker not in p.isr or len(p.isr) == 1) for _, _, p in cluster.partitions())


def restart_moves_leadership(prev: Any, label: Any, nxt: Any) -> bool:
    """After a broker re-registers following an unclean shutdown (fenced, a new incarnation), it leads
    no partition: a fenced broker cannot serve as leader."""
    a = _action(label)
    if not isinstance(a, BrokerRestart) or not _accepted(label):
        return True
    return all(p.leader != a.broker for _, _, p in nxt.cluster.partitions())


def balance_elects_preferred(prev: Any, label: Any, nxt: Any) -> bool:
    """After the periodic leader balancing, every partition whose preferred replica is active and in
    the ISR is led by it."""
    if not isinstance(_action(label), BalanceLeaders):
        return True
    cluster = nxt.cluster
    return all(p.leader == p.replicas[0] for _, _, p in cluster.partitions()
               if p.replicas and cluster.is_active(p.replicas[0]) and p.replicas[0] in p.isr)


def unclean_election_fills_leaderless(prev: Any, label: Any, nxt: Any) -> bool:
    """After the periodic unclean election, a leaderless partition of a topic that allows unclean
    elections has no active replica left."""
    if not isinstance(_action(label), ElectUncleanLeaders):
        return True
    cluster = nxt.cluster
    for t in cluster.topics:
        if not t.unclean_leader_election:
            continue
        for p in t.partitions:
            if p.leader == NO_LEADER and any(cluster.is_active(b) for b in p.replicas):
                return False
    return True


_KRAFT = ("kraft",)
_SOURCE = "Kafka 3.9 ReplicationControlManager / ClusterControlManager (docs/kafka.md)"

KRAFT_CONTROLLER_PROPERTIES: tuple[Property, ...] = (
    Property.transition("controlled_shutdown_moves_leadership", controlled_shutdown_moves_leadership,
                        description=controlled_shutdown_moves_leadership.__doc__, source=_SOURCE, promised_by=_KRAFT),
    Property.transition("restart_moves_leadership", restart_moves_leadership,
                        description=restart_moves_leadership.__doc__,
                        source="KIP-966 (Kafka 3.9 moves it only with ELR, which is off by default); KAFKA-18106 (4.0)",
                        promised_by=("kraft>=4.0",)),
    Property.transition("balance_elects_preferred", balance_elects_preferred,
                        description=balance_elects_preferred.__doc__, source=_SOURCE, promised_by=_KRAFT),
    Property.transition("unclean_election_fills_leaderless", unclean_election_fills_leaderless,
                        description=unclean_election_fills_leaderless.__doc__, source=_SOURCE, promised_by=_KRAFT),
)

__all__ = ["KRAFT_CONTROLLER_PROPERTIES"]
