"""The default suite: the bounds each profile is checked at when no bounds are given.

`kreassign check` with no arguments runs every profile here; `fuzz`, the curated
counterexamples and the benchmarks start from the same bounds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

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
#: no bounds: kraft with two partitions at RF 3 (110,294 states at Kafka 4.4.0, 222,460 at 3.9.2; seconds on the packed path)
LARGER_SUITE: tuple[tuple[str, Bounds], ...] = (
    ("kraft", Bounds(brokers=4, partitions=2, rf=3, reassigns=2, cancels=1, failures=1)),
)


#: the bound keys a run's name shows when they differ from its profile's default bounds
SHAPE_KEYS = (("partitions", "{}p"), ("rf", "rf{}"), ("brokers", "b{}"))


def _bound(bounds: Any, key: str) -> Any:
    """A bound of a run, from Bounds (a plan) or the dict a result describes its model with."""
    if isinstance(bounds, Mapping):
        return bounds.get(key)
    return getattr(bounds, key, None)


def suite_label(profile: str, bounds: Any) -> str:
    """The name of one of several runs of a profile: the profile, followed by its shape when that is not
    the profile's default bounds, e.g. `kraft-2p-rf3` for kraft with two partitions at RF 3 (only the
    partitions, rf and brokers that differ are named)."""
    default = DEFAULT_SUITE.get(profile)
    if default is None or bounds is None:
        return profile
    parts = []
    for key, form in SHAPE_KEYS:
        have = _bound(bounds, key)
        if have is not None and have != getattr(default, key):
            parts.append(form.format(have))
    return "-".join([profile, *parts])


def _unique(labels: Iterable[str]) -> list[str]:
    """`#2`, `#3`, ... after a label an earlier one already has (`kraft#2`)."""
    names: list[str] = []
    for base in labels:
        label, n = base, 1
        while label in names:
            n += 1
            label = f"{base}#{n}"
        names.append(label)
    return names


def _labels(runs: list[tuple[str, Any]]) -> list[str]:
    """A profile run once is named by the profile alone (its files stay `<profile>__<property>.json`);
    a profile run more than once by its `suite_label`."""
    times = Counter(profile for profile, _ in runs)
    return [profile if times[profile] == 1 else suite_label(profile, bounds) for profile, bounds in runs]


def run_names(runs: Iterable[tuple[str, Any]]) -> list[str]:
    """A unique, readable name for each (profile, bounds) run, in order: the profile when it runs once,
    else its `suite_label` (the default suite's two kraft runs are `kraft` and `kraft-2p-rf3`), and
    `#2`, `#3`, ... after a name an earlier run already has (the same profile twice at one shape).

    The name is what the text table, --json (`name`, next to `profile`), JUnit (suite names and test
    case classnames) and the counterexample files (`<name>__<property>.json`) call a run."""
    return _unique(_labels(list(runs)))


def result_names(results: Iterable[Any]) -> list[str]:
    """The names of finished runs: each result's own (`CheckResult.run`, set by `kreassign check`), or
    the `run_names` of their profiles and bounds for results made without one; unique either way."""
    results = list(results)
    made = _labels([(r.profile, r.bounds) for r in results])
    return _unique(getattr(r, "run", None) or label for r, label in zip(results, made))


def _quota_bounds(profile: str):
    from kreassign.checker.models.quota import default_quota_bounds  # numpy-free, but only needed here

    return default_quota_bounds(profile)


#: the quota profiles of the default suite, with their (own) default configuration; the handlers
#: profiles (concurrent handlers and quota changes, models/quota_handlers.py) take ~0.1 s each
QUOTA_SUITE = {p: (lambda p=p: _quota_bounds(p))
               for p in ("kip599", "kip599-draft", "kip599-handlers", "kip599-handlers-rate")}

