"""The view the array forms of the per-partition properties read: many partitions at once, as bit masks.

A per-partition property or signature (spec/per_partition.py) may carry an *array form*: the same
predicate over a batch of rows, written with `&`, `|`, `~`, `==` on arrays and the helpers below,
so that spec/ needs no numpy. A row is one partition with its ghost (`StateMasks`), or one
partition's part of an edge (`EdgeMasks`). The packed engine's vector kernel
(checker/packed/kraft_vector.py) implements both views for the partitions it encodes; these
classes only declare what each field means.

Conventions: a *mask* is an int array with bit b set for broker b (`1 << b`); *slots* are an int
array [rows, width] holding a list's broker ids in order, 0 after its end (the view's broker ids
start at 1); a *leader* is an id or NO_LEADER (-1); flags are bool arrays. Lists the view keeps as
masks (adding, removing, the ELR) are the ones KRaft keeps sorted by id, so a mask loses nothing;
a partition with a log or with epochs is never in a view (the vector kernel does not encode it).
"""

from __future__ import annotations

from typing import Any, Protocol


class _Helpers(Protocol):
    def count(self, masks: Any) -> Any:
        """The number of brokers in each mask."""

    def has(self, masks: Any, ids: Any) -> Any:
        """Is broker `ids` in `masks`, row by row (NO_LEADER is in no mask)."""

    def minus(self, slots: Any, masks: Any) -> Any:
        """ordered_minus row by row: the slots whose broker is not in the row's mask, in order."""


class StateMasks(_Helpers, Protocol):
    """One row per partition with its ghost."""

    replicas: Any  # mask of the replicas
    replica_count: Any  # len(replicas)
    isr: Any  # mask of the ISR
    leader: Any  # the leader
    adding: Any  # mask of the adding replicas
    removing: Any  # mask of the removing replicas
    reassigning: Any  # flag: adding or removing non-empty (Partition.reassigning)
    elr: Any  # mask of the eligible leader replicas (KIP-966; 0 with ELR off)
    last_known_leader: Any  # flag: last_known_elr names a broker (ELR on)
    has_original: Any  # flag: ghost.original is not None (a reassignment in flight)
    original: Any  # mask of ghost.original (0 when None)
    has_requested: Any  # flag: ghost.requested is not None
    requested: Any  # mask of ghost.requested (0 when None)


class EdgeMasks(_Helpers, Protocol):
    """One row per partition's part of an edge (spec/per_partition.PartitionEdge)."""

    before_replicas: Any  # slots of the replicas before
    before_replicas_mask: Any  # mask of the replicas before
    before_isr: Any  # slots of the ISR before
    before_leader: Any  # the leader before
    before_adding: Any  # mask of the adding replicas before
    replicas: Any  # slots of the replicas after
    replicas_mask: Any  # mask of the replicas after
    replica_count: Any  # len(replicas after)
    isr: Any  # slots of the ISR after
    isr_mask: Any  # mask of the ISR after
    leader: Any  # the leader after
    leader_epoch_step: Any  # PartitionEdge.leader_epoch_step
    partition_epoch_step: Any  # PartitionEdge.partition_epoch_step
    code: Any  # PartitionEdge.code
    changed: Any  # flag: PartitionEdge.changed
    active: Any  # mask of the active brokers after
    # the reassignment that ended on the row (PartitionEdge.ending); meaningful where `ended`
    ended: Any  # flag: a reassignment ended on this partition
    ended_cancelled: Any  # flag: its kind is "cancelled" (else "completed")
    ending_original: Any  # slots of its original
    ending_original_mask: Any  # mask of its original
    ending_original_count: Any  # len(original)
    ending_has_requested: Any  # flag: its requested target is not None
    ending_requested_mask: Any  # mask of its requested target (0 when None)
    ending_requested_count: Any  # len(requested) (0 when None)

    def kind_in(self, kinds: Any) -> Any:
        """Flag: the row's action kind (PartitionEdge.kind) is one of `kinds`."""


#: the fields each view declares (tests/unit/test_partition_properties.py checks the vector kernel's views)
STATE_FIELDS = tuple(StateMasks.__annotations__)
EDGE_FIELDS = tuple(EdgeMasks.__annotations__)

__all__ = ["EDGE_FIELDS", "STATE_FIELDS", "EdgeMasks", "StateMasks"]
