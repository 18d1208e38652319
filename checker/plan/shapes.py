"""One partition's move as a shape: its brokers renamed 1..k in increasing id order.

Partitions with the same shape get the same verdict, so a plan of hundreds of
partitions costs one check per shape. The renaming keeps the order of broker ids
because some profiles compare ids (KRaft sorts adding and removing replicas by id,
checker/models/symmetry.py): an order-preserving renaming commutes with every
profile's rules, any renaming would not. With overrides, one spare broker (k+1,
outside the move) is added so that an override has somewhere else to go; without
them a spare could only fail, which changes nothing for this partition, so it is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from kreassign.spec.state import NO_LEADER


@dataclass(frozen=True)
class Shape:
    """A partition's move in renamed ids; equal shapes get equal verdicts."""

    current: tuple[int, ...]
    target: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int  # NO_LEADER when the partition has none
    down: tuple[int, ...]  # involved brokers that are not live
    unclean: bool
    min_isr: int
    brokers: int  # involved + spare

    def label(self) -> str:
        return f"{list(self.current)}->{list(self.target)}"


@dataclass(frozen=True)
class PartitionMove:
    """A partition of the plan with the real ids and the state it starts from."""

    topic: str
    partition: int
    current: tuple[int, ...]
    target: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    down: tuple[int, ...] = ()
    unclean: bool = False
    min_isr: int = 1
    log_dirs: tuple[str, ...] | None = None  # of the current assignment, kept in the rollback
    in_flight: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # (adding, removing) from --describe

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


def shape_of(move: PartitionMove, spare: int = 0, any_order: bool = False) -> tuple[Shape, dict[int, int]]:
    """The shape and the map shape id -> real id (spares map to -1, -2, ...).

    `any_order`: for profiles whose rules never compare ids (checker/models/symmetry.py's
    SYMMETRIC_PROFILES) any renaming is sound, and naming brokers by first appearance in
    current, target, ISR, leader, down is a canonical form: two moves get the same shape iff a
    renaming maps one onto the other.
    """
    involved = set(move.current) | set(move.target) | set(move.isr) | set(move.down)
    if move.leader != NO_LEADER:
        involved.add(move.leader)
    if any_order:
        seq = [*move.current, *move.target, *move.isr, move.leader, *sorted(move.down)]
        order = list(dict.fromkeys(b for b in seq if b in involved))
    else:
        order = sorted(involved)
    to_shape = {b: k for k, b in enumerate(order, 1)}
    back = {k: b for b, k in to_shape.items()}
    for s in range(spare):
        back[len(order) + 1 + s] = -(s + 1)

    def m(ids):
        return tuple(to_shape[b] for b in ids)

    shape = Shape(m(move.current), m(move.target), m(move.isr),
                  to_shape[move.leader] if move.leader != NO_LEADER else NO_LEADER,
                  tuple(sorted(m(move.down))), move.unclean, move.min_isr, len(order) + spare)
    return shape, back
