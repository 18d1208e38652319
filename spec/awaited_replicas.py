"""Liveness in each release's own words (issue 26, item 6): what a reassignment waits on, per release.

`reassignment_completes_when_targets_live` (spec/fairness.py) holds every profile to one promise: once the
target replicas are live, the move ends. The releases do not all make that promise: each release's
completion rule names the replicas it waits on, and they differ —

- **every target replica** in the ISR: the ZooKeeper controller (`KafkaController.isReassignmentComplete`,
  `areReplicasInIsr(targetReplicas)`, 3.9.2), KIP-236's draft, and KRaft 3.8 – 4.2 (KAFKA-15665,
  `PartitionChangeBuilder.completeReassignmentIfNeeded`: every target replica in the target ISR);
- **every adding replica** in the target ISR: KRaft 3.7 (before KAFKA-15665) and KIP-455 as written (AR only
  shrinks as replicas join the ISR; `complete` runs when AR is empty);
- **every adding replica, and every target replica when the replication factor shrinks**: KRaft 4.3 and
  newer (KAFKA-19975, apache/kafka#21114, `PartitionReassignmentReplicas.maybeCompleteReassignment`).

`reassignment_completes_once_awaited_in_sync` states each in its release's words: *in every fair run in which,
from some point on, the replicas the release's rule waits on are live and in the target ISR (ISR − removing) and
the partition has a leader, the reassignment ends.* Brokers may stay down for good (recoveries are not fair,
spec/fairness.py): a release that also waits on a replica its rule does not name — a removed replica, a
retained one where the rule names only the adding ones — fails it with a lasso; a release that waits on what it
says passes, whatever it says.

The rules here are the *words*; the reference's completion rules (reference/kraft_change.py `CompletionRule`s,
the zk/kip455/kip236 profiles' completion steps) are the *deeds*. tests/unit/test_awaited_replicas.py ties
them: on every small partition the reference's kraft rules complete exactly when these words say the awaited
replicas are in sync, and each release's words pass their own deeds and catch the others' where those wait
on more.
"""

from __future__ import annotations

from typing import Any

from kreassign.spec.fairness import Fairness, nothing_in_flight
from kreassign.spec.properties import Property
from kreassign.spec.reassign_properties import ALL, ModelState
from kreassign.spec.state import NO_LEADER, Partition, ordered_minus

#: the words: which replicas a release's completion rule waits on
TARGET = "target"  # every target replica (replicas − removing)
ADDING = "adding"  # every adding replica
ADDING_OR_ALL_IF_SHRINKING = "adding, all targets if shrinking"  # every adding; all targets when |AR| < |RR|
WORDS = (TARGET, ADDING, ADDING_OR_ALL_IF_SHRINKING)

PROPERTY = "reassignment_completes_once_awaited_in_sync"


def words_of(profile: str, kafka_version: str | None = None) -> str:
    """The completion rule's words of a profile (for `kraft`, of its Kafka release)."""
    if profile == "kraft":
        from kreassign.spec import kafka_releases

        return ADDING_OR_ALL_IF_SHRINKING if kafka_releases.release(kafka_version or kafka_releases.NEWEST).since(
            "4.3") else TARGET
    if profile in ("kraft-3.7", "kip455"):
        return ADDING
    if profile in ("zk", "kip236"):
        return TARGET
    raise ValueError(f"no completion rule is stated for profile {profile!r}")


def awaited(words: str, replicas: tuple[int, ...], adding: tuple[int, ...],
            removing: tuple[int, ...]) -> frozenset[int]:
    """The replicas a reassignment with these lists waits on, in `words`."""
    target = ordered_minus(replicas, removing)
    if words == TARGET:
        return frozenset(target)
    if words == ADDING:
        return frozenset(adding)
    if words == ADDING_OR_ALL_IF_SHRINKING:
        return frozenset(adding) | (frozenset(target) if len(adding) < len(removing) else frozenset())
    raise ValueError(f"unknown completion words {words!r}")


def awaited_in_sync(words: str, replicas: tuple[int, ...], isr: tuple[int, ...], adding: tuple[int, ...],
                    removing: tuple[int, ...]) -> bool:
    """The awaited replicas are all in the target ISR (ISR − removing), which is not empty."""
    target_isr = set(ordered_minus(isr, removing))
    return bool(target_isr) and bool(ordered_minus(replicas, removing)) and awaited(
        words, replicas, adding, removing) <= target_isr


def _partition_awaits_in_sync(words: str, ms: ModelState, p: Partition, g: Any) -> bool:
    if p.leader == NO_LEADER:
        return False
    if not p.reassigning:
        # zk: the request waits for the controller's step U, which writes the lists; until then the
        # target (the cancel's: the original) is what it waits on
        target = g.requested if g.requested is not None else g.original
        wanted: frozenset[int] = frozenset(target)
        in_sync = wanted <= set(p.isr)
    else:
        wanted = awaited(words, p.replicas, p.adding, p.removing)
        in_sync = awaited_in_sync(words, p.replicas, p.isr, p.adding, p.removing)
    return in_sync and all(ms.cluster.is_active(b) for b in wanted)


def awaited_in_sync_and_led(words: str):
    """The standing condition: every in-flight reassignment's awaited replicas live and in sync, with a leader."""

    def condition(ms: ModelState) -> bool:
        return all(g.original is None or _partition_awaits_in_sync(words, ms, p, g)
                   for (_, _, p), g in zip(ms.cluster.partitions(), ms.ghosts))

    return condition


def awaited_property(words: str) -> Property:
    """`reassignment_completes_once_awaited_in_sync` in `words` (checked with `fair = true`)."""
    return Property.eventually(
        PROPERTY, nothing_in_flight,
        description="In every fair run in which, from some point on, the replicas the release's completion rule "
        f"waits on ({words}) are live and in the target ISR and the partition has a leader, the reassignment ends: "
        "it waits on nothing its own rule does not name.",
        source="KafkaController.isReassignmentComplete (3.9.2); PartitionChangeBuilder.completeReassignmentIfNeeded "
        "(KAFKA-15665, 3.8); PartitionReassignmentReplicas.maybeCompleteReassignment (KAFKA-19975, 4.3); KIP-455",
        promised_by=ALL,
        extra={"fairness": Fairness(awaited_in_sync_and_led(words)), "words": words},
    )


__all__ = ["ADDING", "ADDING_OR_ALL_IF_SHRINKING", "PROPERTY", "TARGET", "WORDS", "awaited", "awaited_in_sync",
           "awaited_in_sync_and_led", "awaited_property", "words_of"]
