"""Kafka's admin messages as values: AlterPartitionReassignments and ListPartitionReassignments.

Shaped like Kafka's JSON message schemas (KIP-455, seed 000): topics → partitions →
replicas, where `replicas=None` cancels that partition's reassignment. Error codes are
Kafka's numeric codes (org.apache.kafka.common.protocol.Errors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

# Kafka error codes used by the model.
NONE = 0
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
NOT_ENOUGH_REPLICAS = 19
INVALID_REQUEST = 42
POLICY_VIOLATION = 44
REASSIGNMENT_IN_PROGRESS = 60
OPERATION_NOT_ATTEMPTED = 55
UNKNOWN_TOPIC_OR_PARTITION = 3
REQUEST_TIMED_OUT = 7
INVALID_REPLICA_ASSIGNMENT = 39
NOT_CONTROLLER = 41
FENCED_LEADER_EPOCH = 74
NO_REASSIGNMENT_IN_PROGRESS = 85
THROTTLING_QUOTA_EXCEEDED = 89
NEW_LEADER_ELECTED = 108
INVALID_UPDATE_VERSION = 95
INELIGIBLE_REPLICA = 107
ELECTION_NOT_NEEDED = 84
PREFERRED_LEADER_NOT_AVAILABLE = 80
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
UNSUPPORTED_VERSION = 35
INVALID_REPLICATION_FACTOR = 38

ERROR_NAMES = {
    NONE: "NONE",
    LEADER_NOT_AVAILABLE: "LEADER_NOT_AVAILABLE",
    NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_OR_FOLLOWER",
    NOT_ENOUGH_REPLICAS: "NOT_ENOUGH_REPLICAS",
    INVALID_REQUEST: "INVALID_REQUEST",
    POLICY_VIOLATION: "POLICY_VIOLATION",
    REASSIGNMENT_IN_PROGRESS: "REASSIGNMENT_IN_PROGRESS",
    OPERATION_NOT_ATTEMPTED: "OPERATION_NOT_ATTEMPTED",
    UNKNOWN_TOPIC_OR_PARTITION: "UNKNOWN_TOPIC_OR_PARTITION",
    REQUEST_TIMED_OUT: "REQUEST_TIMED_OUT",
    INVALID_REPLICA_ASSIGNMENT: "INVALID_REPLICA_ASSIGNMENT",
    NOT_CONTROLLER: "NOT_CONTROLLER",
    FENCED_LEADER_EPOCH: "FENCED_LEADER_EPOCH",
    NO_REASSIGNMENT_IN_PROGRESS: "NO_REASSIGNMENT_IN_PROGRESS",
    THROTTLING_QUOTA_EXCEEDED: "THROTTLING_QUOTA_EXCEEDED",
    NEW_LEADER_ELECTED: "NEW_LEADER_ELECTED",
    INVALID_UPDATE_VERSION: "INVALID_UPDATE_VERSION",
    INELIGIBLE_REPLICA: "INELIGIBLE_REPLICA",
    ELECTION_NOT_NEEDED: "ELECTION_NOT_NEEDED",
    PREFERRED_LEADER_NOT_AVAILABLE: "PREFERRED_LEADER_NOT_AVAILABLE",
    ELIGIBLE_LEADERS_NOT_AVAILABLE: "ELIGIBLE_LEADERS_NOT_AVAILABLE",
    UNSUPPORTED_VERSION: "UNSUPPORTED_VERSION",
    INVALID_REPLICATION_FACTOR: "INVALID_REPLICATION_FACTOR",
}


@dataclass(frozen=True, slots=True)
class ReassignablePartition:
    partition_index: int
    replicas: tuple[int, ...] | None  # None = cancel this partition's reassignment


@dataclass(frozen=True, slots=True)
class ReassignableTopic:
    name: str
    # None = cancel every pending reassignment of this topic (KIP-455's schema; not in KRaft's)
    partitions: tuple[ReassignablePartition, ...] | None


@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsRequest:
    # None = cancel all pending reassignments (KIP-455's schema; not part of the shipped one)
    topics: tuple[ReassignableTopic, ...] | None
    timeout_ms: int = 60000
    # v1 (Kafka 4.1, KIP-860): false refuses a target whose size differs from the current target's
    allow_replication_factor_change: bool = True

    #: added after the JSON form was fixed: omitted from JSON at their default (older files stay identical)
    OPTIONAL_JSON_FIELDS: ClassVar[tuple[str, ...]] = ("allow_replication_factor_change",)

    @staticmethod
    def single(topic: str, partition: int, replicas: tuple[int, ...] | None) -> AlterPartitionReassignmentsRequest:
        return AlterPartitionReassignmentsRequest(
            topics=(ReassignableTopic(topic, (ReassignablePartition(partition, replicas),)),)
        )


@dataclass(frozen=True, slots=True)
class ReassignablePartitionResponse:
    partition_index: int
    error_code: int = NONE
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class ReassignableTopicResponse:
    name: str
    partitions: tuple[ReassignablePartitionResponse, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsResponse:
    error_code: int = NONE  # top-level (e.g. 41 NOT_CONTROLLER); then `responses` is empty
    error_message: str | None = None
    responses: tuple[ReassignableTopicResponse, ...] = ()
    throttle_time_ms: int = 0
    allow_replication_factor_change: bool = True  # v1 (Kafka 4.1, KIP-860): the request's option, echoed

    OPTIONAL_JSON_FIELDS: ClassVar[tuple[str, ...]] = ("allow_replication_factor_change",)

    def partition_error(self, topic: str, partition: int) -> tuple[int, str | None]:
        """The (code, message) for one partition, or the top-level error if there is one."""
        if self.error_code != NONE:
            return self.error_code, self.error_message
        for t in self.responses:
            if t.name == topic:
                for p in t.partitions:
                    if p.partition_index == partition:
                        return p.error_code, p.error_message
        raise KeyError(f"{topic}-{partition} not in response")


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsTopics:
    name: str
    partition_indexes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsRequest:
    topics: tuple[ListPartitionReassignmentsTopics, ...] | None = None  # None = list everything
    timeout_ms: int = 60000


@dataclass(frozen=True, slots=True)
class OngoingPartitionReassignment:
    partition_index: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class OngoingTopicReassignment:
    name: str
    partitions: tuple[OngoingPartitionReassignment, ...]


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsResponse:
    error_code: int = NONE
    error_message: str | None = None
    topics: tuple[OngoingTopicReassignment, ...] = ()
    throttle_time_ms: int = 0


@dataclass(frozen=True, slots=True)
class Ack:
    """The response of an action that is not an admin request: an error code and message."""

    error_code: int = NONE
    error_message: str | None = None
