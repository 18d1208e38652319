"""Properties as values (in the spirit of Stateright's `Property::always`).

A property has a stable snake_case name, a kind, a predicate, the source it comes
from and the profiles that promise it. Kinds:

- ``always``: a state invariant, `predicate(state) -> bool`, checked on every reachable state;
- ``transition``: `predicate(prev, action, next) -> bool`, checked on every explored edge;
- ``eventually``: a graph property checked on the state graph by the liveness checker,
  `predicate(state) -> bool` marks the goal states that must stay reachable;
- ``sometimes``: `predicate(state) -> bool` must hold in at least one reachable state
  (an example, so that no property passes vacuously).
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
    promised_by: tuple[str, ...] = ()  # profiles that promise it ('*' = all)
    # extra data a graph property needs (e.g. a fairness predicate), engine-specific
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

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
