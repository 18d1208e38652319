"""Properties as values (in the spirit of Stateright's `Property::always`).

A property has a stable snake_case name, a kind, a predicate, the source it comes
from and the profiles that promise it. Kinds:

- ``always``: a state invariant, `predicate(state) -> bool`, checked on every reachable state;
- ``transition``: `predicate(prev, action, next) -> bool`, checked on every explored edge;
- ``eventually``: a graph property checked on the state graph by the liveness checker,
  `predicate(state) -> bool` marks the goal states that must stay reachable;
- ``sometimes``: `predicate(state) -> bool` must hold in at least one reachable state
  (an example, so that no property passes vacuously).

A reassignment property's predicate is derived from its definition on one partition
(spec/per_partition.py); `Property.per_partition` gives that definition, which engines that
work one partition at a time (the packed engine's kraft kernels) evaluate instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ALWAYS = "always"
TRANSITION = "transition"
EVENTUALLY = "eventually"
SOMETIMES = "sometimes"


@dataclass(frozen=True)
class Property:
    name: str
    kind: str
    predicate: Callable[..., bool]
    description: str = ""
    source: str = ""  # seed, KIP or Kafka class the guarantee comes from
    # profiles that promise it ('*' = all); an entry may name the kraft releases ("kraft<4.3", "kraft>=4.0":
    # the minors of spec/kafka_releases.py), where a release changed what the profile keeps
    promised_by: tuple[str, ...] = ()
    # extra data a graph property needs (e.g. a fairness predicate), engine-specific
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def per_partition(self) -> Any:
        """The definition on one partition `predicate` is derived from (a spec/per_partition.PartitionForm),
        or None. Read from the predicate itself, so a property whose predicate an engine rewrote (check/run.py
        splits a property by its findings) has none: only the predicate it describes carries it."""
        return getattr(self.predicate, "per_partition", None)

    def promised(self, profile: str, release: str | None = None) -> bool:
        """Does `profile` promise it (kraft: at the Kafka `release`, X.Y.Z; None = the newest)?"""
        for entry in self.promised_by:
            name, op, minor = entry.partition(">=") if ">=" in entry else entry.partition("<")
            if name not in (profile, "*"):
                continue
            if not op:
                return True
            from .kafka_releases import NEWEST
            from .kafka_releases import release as row

            have = tuple(int(x) for x in row(release or NEWEST).minor.split("."))
            bound = tuple(int(x) for x in minor.split("."))
            if (have >= bound) == (op == ">="):
                return True
        return False

    @staticmethod
    def always(name: str, predicate: Callable[[Any], bool], **kw: Any) -> Property:
        return Property(name, ALWAYS, predicate, **kw)

    @staticmethod
    def transition(name: str, predicate: Callable[[Any, Any, Any], bool], **kw: Any) -> Property:
        return Property(name, TRANSITION, predicate, **kw)

    @staticmethod
    def eventually(name: str, predicate: Callable[[Any], bool], **kw: Any) -> Property:
        return Property(name, EVENTUALLY, predicate, **kw)

    @staticmethod
    def sometimes(name: str, predicate: Callable[[Any], bool], **kw: Any) -> Property:
        return Property(name, SOMETIMES, predicate, **kw)
