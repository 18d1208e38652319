"""Counterexample minimization: smaller bounds, never a longer trace.

The engine's path is a shortest one at the requested bounds. Minimization then lowers
one bound at a time (fewer partitions, brokers, failovers, failures, cancels, requests,
CreatePartitions requests, records) and keeps the smaller configuration only if the same
violation is still found there with a path no longer than the current one. Behaviours
only shrink with the bounds, so a path found at smaller bounds is never shorter: in effect
the bounds shrink while the path keeps its length, and the trace handed back is as short
as the shortest one at the requested bounds. The replication factor is never lowered (a
different RF is a different configuration, not a smaller one), and no capability is
switched off: without throttles the admin sends plain requests instead of the tool's, and
without the brokers' logs followers fetch sooner — other behaviours, not fewer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.explore.bfs import Path

#: the bounds minimization may lower, in the order it tries them
SHRINKABLE = ("partitions", "brokers", "failovers", "failures", "cancels", "reassigns", "create_partitions",
              "log_length")

Found = tuple[Path, "int | None"]  # (path, loop start of a lasso or None)


def minimize(bounds: Bounds, found: Found, search: Callable[[Bounds], Found | None]) -> tuple[Bounds, Found]:
    """Greedily lower each bound while `search(candidate)` still finds the violation with a path no
    longer than the current one; return the smallest bounds and their path."""
    best_bounds, best = bounds, found
    for key in SHRINKABLE:
        while getattr(best_bounds, key) > 0:
            try:
                candidate = replace(best_bounds, **{key: getattr(best_bounds, key) - 1})
            except ConfigError:  # e.g. fewer brokers than the replication factor
                break
            again = search(candidate)
            if again is None or len(again[0]) > len(best[0]):
                break
            best_bounds, best = candidate, again
    return best_bounds, best


def bounds_json(bounds: Any) -> dict[str, Any] | None:
    """Bounds as the JSON of a trace file or of `--json` (None for a model without Bounds)."""
    return json.loads(json.dumps(bounds.to_json())) if isinstance(bounds, Bounds) else None  # tuples as lists
