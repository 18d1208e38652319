"""Reassignment properties over one partition, and the cluster-wide predicates derived from them.

Every reassignment property is a conjunction over partitions and every finding signature a
disjunction: a state satisfies a property when each partition (with its ghost) does, an edge when
each partition's part of the edge does, and a signature matches when some partition matches. So
each is defined once, over one partition (spec/reassign_properties.py, spec/findings.py), and the
predicate the engines ask of a whole state or edge is derived from that definition here
(`every_partition`, `any_partition`, `every_edge`, `any_edge`). The derived predicate carries its
definition as `per_partition` (a `PartitionForm`): the packed engine's kraft kernels
(checker/packed/) evaluate the same definition on the one partition they tabulate, and the vector
kernel the array form written next to it, over the view spec/partition_masks.py declares.
tests/unit/test_partition_properties.py shows each derived predicate equal to its definition on
every state and edge of small configurations, and each array form equal to its definition.

A transition predicate speaks about the edges in its `EdgeScope` (every edge, the steps of some
actions, the partitions a reassignment ended on): elsewhere a property holds and a signature does
not match, in the derived predicate and in the kernels alike, so neither asks it there.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from types import CodeType
from typing import Any, NamedTuple

from kreassign.spec.messages import NONE
from kreassign.spec.state import ClusterState, Partition


class PartitionEdge(NamedTuple):
    """One partition's part of an edge: what a per-partition transition predicate reads."""

    before: Partition  # the partition before the step (the explorer's: epochs renamed)
    replicas: tuple[int, ...]  # the replicas after the step
    isr: tuple[int, ...]  # the ISR after the step
    leader: int  # the leader after the step (or NO_LEADER)
    # after − before, in the frame the step was applied in (the un-renamed successor, `Transition.after`)
    leader_epoch_step: int
    partition_epoch_step: int
    kind: str  # the action's class name ("Reassign", "LeaderShrinkIsr", ...)
    code: int  # the response's error code for the partition the action names (NONE: none, or no request)
    changed: bool  # the partition changed in that frame (KRaft: exactly when a change record was written)
    ending: Any  # the reassignment that ended on this partition (an `Ending`), or None
    active: Container[int]  # the active brokers after the step


class EdgeScope(NamedTuple):
    """The edges a per-partition transition predicate speaks about; elsewhere a property holds and a
    signature does not match."""

    kinds: frozenset[str] | None = None  # only the steps of these actions (None: every step)
    ended: bool = False  # only the partitions a reassignment ended on

    def covers(self, kind: str, ended: bool) -> bool:
        return (self.kinds is None or kind in self.kinds) and (ended or not self.ended)


EVERY_EDGE = EdgeScope()
ENDINGS = EdgeScope(ended=True)


class PartitionForm(NamedTuple):
    """A predicate's definition on one partition, with its array form (None: none) and, for a transition
    predicate, its scope (None for a state predicate)."""

    at: Callable[..., bool]  # state: at(partition, ghost); transition: at(PartitionEdge)
    masks: Callable[[Any], Any] | None = None  # at over spec/partition_masks.py's view, row by row
    scope: EdgeScope | None = None
    written_for: CodeType | None = None  # the body of `at` the array form was written next to
    #: a transition property's clause on the whole edge, clause(prev, label, nxt): what no partition's view
    #: shows (None: none). A kernel on one partition may drop it only where it cannot fail there.
    clause: Callable[[Any, Any, Any], bool] | None = None

    def array_form(self) -> Callable[[Any], Any] | None:
        """`masks`, unless the body of `at` is no longer the one it was written for (replaced at run time, as
        a planted change does): then None, and the per-partition definition answers instead. A body edited
        in the source is tied to its array form by tests/unit/test_partition_properties.py."""
        return self.masks if self.masks is not None and self.at.__code__ is self.written_for else None


def partition_form(predicate: Any) -> PartitionForm | None:
    """The per-partition definition a cluster-wide predicate was derived from (None: it has none)."""
    return getattr(predicate, "per_partition", None)


def _derived(fn: Any, at: Callable[..., bool], masks: Any, scope: EdgeScope | None,
             clause: Any = None) -> Any:
    """`fn` named after `at` without its `_at`, with at's docstring and its PartitionForm: a module-level
    name of that module, so it pickles by reference."""
    fn.__name__ = fn.__qualname__ = at.__name__.removesuffix("_at")
    fn.__module__, fn.__doc__ = at.__module__, at.__doc__
    fn.per_partition = PartitionForm(at, masks, scope, at.__code__, clause)
    return fn


# -- states ------------------------------------------------------------------------------------------


def every_partition(at: Callable[[Partition, Any], bool], masks: Any = None) -> Callable[[Any], bool]:
    """The state property that holds when `at(partition, ghost)` holds for every partition."""

    def holds(ms: Any) -> bool:
        for (_, _, p), g in zip(ms.cluster.partitions(), ms.ghosts):
            if not at(p, g):
                return False
        return True

    return _derived(holds, at, masks, None)


def any_partition(at: Callable[[Partition, Any], bool], masks: Any = None) -> Callable[[Any], bool]:
    """The state signature that matches when `at(partition, ghost)` matches some partition."""

    def matches(ms: Any) -> bool:
        for (_, _, p), g in zip(ms.cluster.partitions(), ms.ghosts):
            if at(p, g):
                return True
        return False

    return _derived(matches, at, masks, None)


# -- edges -------------------------------------------------------------------------------------------


class _Active:
    """The active brokers of a cluster, as a container (built for every edge: no set made up front)."""

    __slots__ = ("cluster",)

    def __init__(self, cluster: ClusterState):
        self.cluster = cluster

    def __contains__(self, broker: object) -> bool:
        return self.cluster.is_active(broker)  # type: ignore[arg-type]


def request_code(action: Any, response: Any) -> int:
    """The error code `response` gives for the partition `action` names (NONE when it gives none)."""
    partition_error = getattr(response, "partition_error", None)
    if partition_error is None:
        return NONE
    try:
        return partition_error(action.topic, action.partition)[0]
    except (AttributeError, KeyError):
        return NONE


def partition_edges(prev: Any, label: Any, nxt: Any, scope: EdgeScope = EVERY_EDGE) -> tuple[PartitionEdge, ...]:
    """The partitions' parts of the edge (prev, label, nxt) that `scope` speaks about, in partition order.

    The successor's replicas, ISR and leader are read from the un-renamed successor (`Transition.after`;
    the renaming changes epochs only), whose epochs are in the frame the step was applied in, so an
    epoch step is Kafka's; without it (a bare action) from `nxt`.
    """
    if scope.kinds is not None and type(getattr(label, "action", label)).__name__ not in scope.kinds:
        return ()
    if scope.ended:
        if not getattr(label, "endings", ()):  # most edges end nothing (asked on every edge)
            return ()
        return tuple(e for e in _edges(prev, label, nxt) if e.ending is not None)
    return _edges(prev, label, nxt)


#: the last edge's parts, (prev, label, nxt, parts): every transition property of an edge asks in turn
_LAST: tuple = (None, None, None, ())
_new = tuple.__new__  # a PartitionEdge without NamedTuple's Python-level __new__ (one per partition and edge)


def _edges(prev: Any, label: Any, nxt: Any) -> tuple[PartitionEdge, ...]:
    """Every partition's part of the edge (prev, label, nxt), made once per edge."""
    # twin: checker/packed/kraft_kernel.py KraftKernel.compute
    # twin: checker/packed/kraft_vector.py EdgeView
    global _LAST
    last = _LAST  # (one read: another thread's edge replaces it whole)
    if last[1] is label and last[0] is prev and last[2] is nxt:
        return last[3]
    action = getattr(label, "action", label)
    kind = type(action).__name__
    endings = getattr(label, "endings", ())
    after = getattr(label, "after", None) or nxt.cluster
    before = [p for t in prev.cluster.topics for p in t.partitions]  # ClusterState.partitions() order
    later = [q for t in after.topics for q in t.partitions]
    ended = {e.index: e for e in endings} if endings else {}
    code = request_code(action, getattr(label, "response", None))
    active = _Active(nxt.cluster)
    parts = tuple(_new(PartitionEdge, (p, q.replicas, q.isr, q.leader, q.leader_epoch - p.leader_epoch,
                                       q.partition_epoch - p.partition_epoch, kind, code, q is not p and q != p,
                                       ended.get(k), active))
                  for k, (p, q) in enumerate(zip(before, later)))
    _LAST = (prev, label, nxt, parts)
    return parts


def every_edge(at: Callable[[PartitionEdge], bool], scope: EdgeScope = EVERY_EDGE, masks: Any = None,
               clause: Callable[[Any, Any, Any], bool] | None = None) -> Callable[[Any, Any, Any], bool]:
    """The transition property that holds when `at(edge)` holds for every partition's part of the edge in
    `scope` (partition_edges, written out: asked on every edge), and `clause(prev, label, nxt)` (what a
    partition's view cannot see) holds too."""
    kinds, ended = scope.kinds, scope.ended

    def holds(prev: Any, label: Any, nxt: Any) -> bool:
        if ((kinds is None or type(getattr(label, "action", label)).__name__ in kinds)
                and (not ended or getattr(label, "endings", ()))):
            for e in _edges(prev, label, nxt):
                if not (ended and e.ending is None or at(e)):
                    return False
        return clause is None or clause(prev, label, nxt)

    return _derived(holds, at, masks, scope, clause)


def any_edge(at: Callable[[PartitionEdge], bool], scope: EdgeScope = EVERY_EDGE,
             masks: Any = None) -> Callable[[Any, Any, Any], bool]:
    """The transition signature that matches when `at(edge)` matches some partition's part of the edge in
    `scope` (partition_edges, written out)."""
    kinds, ended = scope.kinds, scope.ended

    def matches(prev: Any, label: Any, nxt: Any) -> bool:
        if ((kinds is None or type(getattr(label, "action", label)).__name__ in kinds)
                and (not ended or getattr(label, "endings", ()))):
            for e in _edges(prev, label, nxt):
                if not (ended and e.ending is None) and at(e):
                    return True
        return False

    return _derived(matches, at, masks, scope)


__all__ = ["ENDINGS", "EVERY_EDGE", "EdgeScope", "PartitionEdge", "PartitionForm", "any_edge",
           "any_partition", "every_edge", "every_partition", "partition_edges", "partition_form",
           "request_code"]
