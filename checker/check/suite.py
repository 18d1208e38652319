"""The default suite: the bounds each profile is checked at when no bounds are given.

`kreassign check` with no arguments runs every profile here; `fuzz`, the curated
counterexamples and the benchmarks start from the same bounds.
"""

from __future__ import annotations

from kreassign.checker.config.bounds import Bounds

#: the default suite: small bounds per profile, well under a minute in all on 2 cores
DEFAULT_SUITE: dict[str, Bounds] = {
    "kraft": Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1),
    "kraft-3.7": Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1),
    "zk": Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, failovers=1),
    "kip455": Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1),
    "kip236": Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1),
}

#: and a configuration of a realistic shape, run after the others when `check` is given no profile and
#: no bounds: kraft with two partitions at RF 3 (222,460 states; seconds on the packed path)
LARGER_SUITE: tuple[tuple[str, Bounds], ...] = (
    ("kraft", Bounds(brokers=4, partitions=2, rf=3, reassigns=2, cancels=1, failures=1)),
)


def suite_label(profile: str, bounds: dict) -> str:
    """A suite column's name: the profile, and its shape when it is not the profile's default bounds."""
    default = DEFAULT_SUITE.get(profile)
    if default is None or all(bounds.get(k) == getattr(default, k) for k in ("brokers", "partitions", "rf")):
        return profile
    return f"{profile} ({bounds.get('partitions')}p rf{bounds.get('rf')} b{bounds.get('brokers')})"


def _quota_bounds(profile: str):
    from kreassign.checker.models.quota import default_quota_bounds  # numpy-free, but only needed here

    return default_quota_bounds(profile)


#: the quota profiles of the default suite, with their (own) default configuration; the handlers
#: profiles (concurrent handlers and quota changes, models/quota_handlers.py) take ~0.1 s each
QUOTA_SUITE = {p: (lambda p=p: _quota_bounds(p))
               for p in ("kip599", "kip599-draft", "kip599-handlers", "kip599-handlers-rate")}

