"""Reassignment JSON exactly as kafka-reassign-partitions.sh prints it.

`formatAsReassignmentJson` (Scala core/.../admin/ReassignPartitionsCommand.scala since
2.6.0, KAFKA-8820; Java tools/.../reassign/ReassignPartitionsCommand.java since 3.5):
entries sorted by topic (Java String.compareTo: UTF-16 code units), then partition;
keys version, partitions, and per entry topic, partition, replicas, log_dirs, with
"any" for a replica without a directory; compact Jackson output (no spaces, non-ASCII
unescaped). Up to 2.5 the entries came in Scala Map order (unspecified), so only the
2.6+ order can be reproduced. The rollback text is `currentPartitionReplicaAssignmentToString`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from kreassign.reference.reassign_json import (
    ANY_LOG_DIR,
    ReassignJsonError,
    ReassignmentEntry,
    ReassignmentPlanJson,
    plan_to_json_data,
)

ROLLBACK_HEADER = "Current partition replica assignment"
ROLLBACK_FOOTER = "Save this to use as the --reassignment-json-file option during rollback"


def _java_key(entry: ReassignmentEntry) -> tuple[tuple[int, ...], int]:
    """Kafka's compareTopicPartitions: String.compareTo compares UTF-16 code units."""
    units = entry.topic.encode("utf-16-be")
    return tuple(int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)), entry.partition


def kafka_order(entries: Sequence[ReassignmentEntry]) -> tuple[ReassignmentEntry, ...]:
    """Sorted as Kafka 2.6+ sorts, every entry with log_dirs (kept when given, else "any")."""
    out = []
    for e in entries:
        dirs = e.log_dirs if e.log_dirs is not None else (ANY_LOG_DIR,) * len(e.replicas)
        out.append(ReassignmentEntry(e.topic, e.partition, e.replicas, dirs, e.original_replicas))
    return tuple(sorted(out, key=_java_key))


def format_as_kafka(plan: ReassignmentPlanJson) -> str:
    """The text formatAsReassignmentJson would print for these entries."""
    data = plan_to_json_data(ReassignmentPlanJson(kafka_order(plan.entries)))
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def rollback_entries(plan: ReassignmentPlanJson, current: ReassignmentPlanJson,
                     current_file: str = "current") -> ReassignmentPlanJson:
    """The current entries of the plan's partitions (log dirs kept), in Kafka's order."""
    by_key: Mapping[tuple[str, int], ReassignmentEntry] = {(e.topic, e.partition): e for e in current.entries}
    out = []
    for i, e in enumerate(plan.entries):
        cur = by_key.get((e.topic, e.partition))
        if cur is None:
            raise ReassignJsonError(f"partitions[{i}]",
                                    f"{e.topic}-{e.partition} is not in {current_file}")
        out.append(ReassignmentEntry(cur.topic, cur.partition, cur.replicas, cur.log_dirs))
    return ReassignmentPlanJson(kafka_order(out))


def rollback_message(rollback: ReassignmentPlanJson) -> str:
    """The whole message `--execute` prints (String.format with %n = "\\n" on Linux)."""
    return f"{ROLLBACK_HEADER}\n\n{format_as_kafka(rollback)}\n\n{ROLLBACK_FOOTER}"
