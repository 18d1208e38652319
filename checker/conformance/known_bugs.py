"""Kafka bugs a conformance campaign meets, declared once: a divergence one of them explains is reported as that
bug (verdict "known", exit 0), never dropped, and nothing else is excused. Each entry names the Kafka issue, the
releases and mode it holds for, the scenario that showed it, and recognises its divergences precisely.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kreassign.checker.scenarios.format import Scenario


@dataclass(frozen=True)
class KnownBug:
    name: str
    kafka_issue: str
    description: str
    seen_in: str  # the campaign and scenario that showed it
    explains: Callable[[Scenario, dict[str, Any]], bool]


def _removed_while_down(scenario: Scenario, partition: int, broker: int) -> bool:
    """The model's steps removed `broker`'s replica of `partition` while `broker` was down."""
    before = set(scenario.initial.get(partition, ()))
    for step in scenario.steps:
        if step.expect is None:
            return False
        p = step.expect["partitions"].get(str(partition))
        if p is None:
            return False
        now = set(p["replicas"])
        if broker in before and broker not in now and broker not in step.expect["brokers"]:
            return True
        before = now
    return False


def _zk_stray_log(scenario: Scenario, d: dict[str, Any]) -> bool:
    """A stray log and nothing missing, in ZooKeeper mode, on brokers whose replica a reassignment removed while
    they were down."""
    if scenario.mode != "zk" or d.get("kind") != "log_dirs" or "partition" not in d:
        return False
    stray, missing = set(d["observed"]) - set(d["expected"]), set(d["expected"]) - set(d["observed"])
    return bool(stray) and not missing and all(_removed_while_down(scenario, d["partition"], b) for b in stray)


KNOWN_BUGS = (
    KnownBug(
        name="zk-stray-log-after-offline-removal",
        kafka_issue="KAFKA-7362",
        description="ZooKeeper mode (3.9.2 and every release before): a replica removed by a reassignment while its "
        "broker is down keeps its log on that broker's disk for good. The controller's StopReplica (delete) in phase "
        "B (KafkaController.stopRemovedReplicasOfReassignedPartition) cannot reach a broker that is down and is not "
        "sent again, and a ZooKeeper-mode broker never deletes logs it does not host (KRaft brokers do since 3.7: "
        "LogManager stray detection, KAFKA-14616). The model has no disks: its replicas end without the broker.",
        seen_in="kreassign conformance --kafka-version 3.9.2 --mode zk --scenarios 20 --length 3 --seed 2400: "
        "conformance-2408 (broker 3 stopped, t-0 reassigned to [1,3,4] then [1,2,4], 3 restarted: its log of t-0 "
        "stays)",
        explains=_zk_stray_log,
    ),
)


def known_bug_of(scenario: Scenario, divergence: dict[str, Any]) -> KnownBug | None:
    return next((b for b in KNOWN_BUGS if b.explains(scenario, divergence)), None)


__all__ = ["KNOWN_BUGS", "KnownBug", "known_bug_of"]
