"""Which engine a check runs on: one declared value, chosen once by a call.

`Search()` is the embedded engine: breadth-first search (checker/explore/bfs.py), or the packed
path (checker/packed/) where the model splits per partition and `EngineOptions.fast` allows it.
`Search(engine=f)` runs another engine's search function `f` with the same signature and result
(Spark's, checker/spark/); the packed path is never taken then. `limits` are the run limits every
search is handed (`--max-states`, `--max-memory`), and `last` keeps the last result a search
returned, so that an interrupted or stopped run can say how far it got (checker/cli/check.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.explore.bfs import ExploreResult, explore


@dataclass
class Search:
    engine: Callable[..., ExploreResult] | None = None  # None: the embedded engine
    limits: dict[str, Any] = field(default_factory=dict)  # keyword arguments every search is handed
    last: ExploreResult | None = None  # what the last search returned (None while one runs)
    reporter: Any = None  # the current profile's progress reporter (set by the CLI, read on an interrupt)

    @property
    def embedded(self) -> bool:
        return self.engine is None

    def run(self, search: Callable[..., ExploreResult] | None, model: Any, **kw: Any) -> ExploreResult:
        """Run `search` (None: this value's own engine, or breadth-first search) and remember its result."""
        search = search or self.engine or explore
        self.last = None
        self.last = search(model, **self.limits, **kw)
        return self.last


def as_search(explorer: Search | Callable[..., ExploreResult] | None) -> Search:
    """A `Search` for what a caller passed: a Search as it is, None for the embedded engine, a bare
    search function (a test's Spark explorer) as another engine."""
    if explorer is None or isinstance(explorer, Search):
        return explorer or Search()
    return Search(engine=explorer)


__all__ = ["Search", "as_search"]
