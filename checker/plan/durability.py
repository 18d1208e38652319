"""Kafka's durability rules for one partition's move: plain arithmetic on the plan and the described state.

These are not properties of the reassignment model (nothing is explored): they compare the target's
replica count with the topic's `min.insync.replicas` and the replicas in sync now, per partition, in
real broker ids. Each rule is a finding of `kreassign plan` like the model's (severity, property,
summary), with what to do instead (ADVICE, the "What to do" lines).

What Kafka does with `min.insync.replicas` (the broker, not the controller: the rule is the same in
ZooKeeper and KRaft mode). `kafka.cluster.Partition.appendRecordsToLeader` (kafka_2.13,
core/src/main/scala/kafka/cluster/Partition.scala, read in the 3.9.2 and 4.0.2 sources jars, and in the
4.4.0 jar's bytecode) refuses an acks=all produce while the ISR is too small:

    val minIsr = effectiveMinIsr(leaderLog)
    val inSyncSize = partitionState.isr.size
    if (inSyncSize < minIsr && requiredAcks == -1)
      throw new NotEnoughReplicasException(...)          // NOT_ENOUGH_REPLICAS to the producer

and `checkEnoughReplicasReachOffset` answers NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
it meanwhile. Since Kafka 3.7.0 (KAFKA-15583, apache/kafka#14594) the minimum is capped at the
partition's assigned replica count:

    private def effectiveMinIsr(leaderLog: UnifiedLog): Int =
      leaderLog.config.minInSyncReplicas.min(remoteReplicasMap.size + 1)

(`remoteReplicasMap`: every assigned replica but the leader, adding and removing ones included while a
move is in flight; `leaderLog` is `kafka.log.UnifiedLog` in 3.9 and 4.0 and
`org.apache.kafka.storage.internals.log.UnifiedLog` of kafka-storage in 4.4). So a target with fewer
replicas than min.insync.replicas does not make acks=all fail on 3.7 and later: the writes are
acknowledged by fewer replicas than the topic asks for, which the topic's configuration no longer
shows. Before 3.7 (ZooKeeper mode: the `zk`, `kip455`, `kip236` profiles may face such brokers) the
uncapped `minInSyncReplicas` is compared, and every acks=all produce fails once the move completes.

A reassignment removes the old replicas only once the adding ones are in the ISR (the controller's
completion rule, every profile), so the data outlives a move that replaces every in-sync replica, but
only through the new replicas having caught up: until the move completes, the old replicas hold the
only complete copies.

Severity follows the rest of `plan`: a condition the move brings about is a risk (exit 1); one that
already holds before the move (the current replica count is as low already) is a note, "before the
move too".
"""

from __future__ import annotations

from dataclasses import dataclass

from kreassign.checker.plan.check import NOTE, RISK
from kreassign.checker.plan.shapes import PartitionMove

RF_BELOW_MIN_ISR = "target_rf_below_min_insync_replicas"
RF_AT_MIN_ISR = "target_rf_at_min_insync_replicas"
RF_CHANGES = "replication_factor_changes"
LAST_ISR_REMOVED = "last_in_sync_replica_removed"

RULES = (RF_BELOW_MIN_ISR, RF_AT_MIN_ISR, RF_CHANGES, LAST_ISR_REMOVED)

#: profiles whose brokers are Kafka 3.7 or newer, hence cap min.insync.replicas at the replica count
#: (kraft follows 3.9.2 - 4.4.0, spec/kafka_releases.py; kraft-3.7 is 3.7); the ZooKeeper-mode profiles
#: span releases from before and after 3.7
CAPPED_PROFILES = frozenset({"kraft", "kraft-3.7"})

#: what to do instead, per rule ("What to do" in the text output)
ADVICE = {
    RF_BELOW_MIN_ISR: "give the target at least min.insync.replicas replicas; if fewer copies are intended, lower "
    "the topic's min.insync.replicas first (kafka-configs.sh --alter --entity-type topics --entity-name TOPIC "
    "--add-config min.insync.replicas=N), so that the configuration says what acks=all still promises",
    RF_AT_MIN_ISR: "keep one replica more than min.insync.replicas in the target, so that a broker can fail or "
    "restart (a rolling restart included) without acks=all producers failing; or accept that any broker "
    "of these partitions being down stops acks=all writes",
    RF_CHANGES: "kafka-reassign-partitions.sh --generate keeps the replication factor: if the change is not "
    "intended, give the target as many replicas as the current assignment; if it is, check the result "
    "against min.insync.replicas and throttle the copy (--throttle) when the replication factor grows",
    LAST_ISR_REMOVED: "keep at least one replica that is in sync now in the target (move in two steps, e.g. "
    "[1,2,3] -> [1,4,5], then -> [4,5,6] once --verify says it is done); otherwise do not stop, wipe or "
    "decommission the old brokers before kafka-reassign-partitions.sh --verify reports the move complete "
    "and kafka-topics.sh --describe shows the new replicas in the ISR",
}


@dataclass(frozen=True)
class DurabilityFinding:
    severity: str  # RISK or NOTE
    property: str  # one of RULES
    summary: str  # one line, real broker ids, ending with "[property]" like the model's findings

    def to_json(self) -> dict:
        """The finding as `plan --json` writes every finding (no trace, no failure sets: nothing was explored)."""
        return {"severity": self.severity, "property": self.property, "summary": self.summary, "known": None,
                "finding": None, "failure_sets": [], "existing_failure_sets": [], "trace": None}


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _replicas(n: int) -> str:
    return _n(n, "replica")


def _ids(ids) -> str:
    return ",".join(map(str, ids))


def _below(move: PartitionMove, profile: str) -> str:
    rf, m = len(move.target), move.min_isr
    capped = (f"Kafka 3.7 and later (KAFKA-15583) cap the minimum at the replica count, so acks=all writes are "
              f"acknowledged by {_replicas(rf)} only and min.insync.replicas={m} silently no longer holds")
    refused = "every acks=all produce fails with NOT_ENOUGH_REPLICAS for good (Partition.appendRecordsToLeader)"
    if profile in CAPPED_PROFILES:
        what = capped
    else:
        what = f"{capped}; on brokers before 3.7 {refused}"
    return (f"the target has {_replicas(rf)}, fewer than min.insync.replicas={m}: once the move completes, {what}"
            f"{_before(move, len(move.current) < m)}. Instead: give the target at least {m} replicas")


def _at(move: PartitionMove) -> str:
    rf, m = len(move.target), move.min_isr
    if rf == 1:
        what = ("the target has a single replica (min.insync.replicas=1): once the move completes, its broker "
                "failing or restarting takes the partition offline, and its disk holds the only copy")
    else:
        what = (f"the target has {_replicas(rf)}, as many as min.insync.replicas={m}: once the move completes, any "
                "one of them failing, restarting or falling behind makes acks=all producers fail with "
                "NOT_ENOUGH_REPLICAS")
    return f"{what}{_before(move, len(move.current) <= m)}. Instead: give the target {rf + 1} replicas"


def _before(move: PartitionMove, already: bool) -> str:
    return f" (before the move too: {_replicas(len(move.current))} now)" if already else ""


def _changes(move: PartitionMove) -> str:
    a, b, m = len(move.current), len(move.target), move.min_isr
    if b < a:
        return (f"the move shrinks the replication factor from {a} to {b}: afterwards the partition's data survives "
                f"the loss of {_n(b - 1, 'broker')} instead of {a - 1}, and acks=all writes go on through "
                f"{_n(max(0, b - m), 'broker failure')} instead of {max(0, a - m)}; --generate never does this, "
                "check it is intended")
    return (f"the move grows the replication factor from {a} to {b}: the {_n(b - a, 'extra replica')} copy the "
            "whole log from the leader (throttle it: --throttle); --generate never does this, check it is intended")


def _last_isr(move: PartitionMove, in_sync: list[int]) -> str:
    unclean = (" An unclean election (unclean.leader.election.enable=true) to a new replica that has not caught "
               "up loses records." if move.unclean else "")
    return (f"the move removes every replica in sync now ({_ids(in_sync)}): none of the brokers holding the "
            "partition's data today keeps it. Kafka removes them only once the new replicas have joined the ISR, so "
            "the data is safe only once those have caught up; until then the old replicas hold the only complete "
            f"copies.{unclean} Instead: keep one of {_ids(in_sync)} in the target")


def durability_findings(move: PartitionMove, profile: str) -> list[DurabilityFinding]:
    """The durability rules that apply to this move (real ids), in RULES order."""
    rf_before, rf_after, m = len(move.current), len(move.target), move.min_isr
    out = []
    if rf_after < m:
        out.append(DurabilityFinding(RISK if rf_before >= m else NOTE, RF_BELOW_MIN_ISR,
                                     f"{_below(move, profile)} [{RF_BELOW_MIN_ISR}]"))
    elif rf_after == m:
        out.append(DurabilityFinding(RISK if rf_before > m else NOTE, RF_AT_MIN_ISR,
                                     f"{_at(move)} [{RF_AT_MIN_ISR}]"))
    if rf_after != rf_before:
        out.append(DurabilityFinding(NOTE, RF_CHANGES, f"{_changes(move)} [{RF_CHANGES}]"))
    in_sync = [b for b in move.current if b in move.isr]
    if in_sync and not set(in_sync) & set(move.target):
        out.append(DurabilityFinding(RISK, LAST_ISR_REMOVED, f"{_last_isr(move, in_sync)} [{LAST_ISR_REMOVED}]"))
    return out


__all__ = ["ADVICE", "CAPPED_PROFILES", "LAST_ISR_REMOVED", "RF_AT_MIN_ISR", "RF_BELOW_MIN_ISR", "RF_CHANGES",
           "RULES", "DurabilityFinding", "durability_findings"]
