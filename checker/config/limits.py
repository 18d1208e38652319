"""Bounded runs: refuse absurd bounds before exploring, stop cleanly at --max-states / --max-memory.

`estimate(bounds)` is a coarse upper estimate of the reachable states of a reassignment
model, computed from the bounds alone (nothing is enumerated, so `--brokers 10000` costs
nothing to judge). Per partition, a state is at most: the replicas it settled on (the
initial list or one target) x the target in flight (or none) x an ISR (a subset of at
most 2*rf replicas) x a leader (one of them or none); the partitions multiply; so do the
sets of failed brokers (at most `failures` at once) and the remaining request budgets,
and with the replication layer each replica's log end and the high watermark. On the
default suite it overestimates by 13-48x (about 68,000x on its 2-partition run); what matters is that it is finite, cheap and
grows like the real count, so that a typo like `--brokers 10000` is refused in a
millisecond with the bound to lower, instead of allocating until the machine dies.

`RunLimits` turns --max-states / --max-memory into the engine's `max_states` and `watch`
hook (checker/explore/bfs.py); a search they stop is reported incomplete, never "holds".
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from kreassign.errors import UsageError

#: estimates above this are refused unless --force (about 10 TB in the object store)
REFUSE_ABOVE = 10**13

#: rough memory per stored state in the embedded object store (state, dict entry, parent, action)
BYTES_PER_STATE = 600


def _log10_comb(n: int, k: int) -> float:
    if k < 0 or k > n:
        return float("-inf")
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(10)


def _log10_sum(logs: list[float]) -> float:
    top = max(logs)
    return top + math.log10(sum(10 ** (x - top) for x in logs))


def _log10_targets(bounds) -> float:
    if bounds.targets == "all":
        return _log10_comb(bounds.brokers, bounds.rf)
    if bounds.targets == "permutations":
        return (math.lgamma(bounds.brokers + 1) - math.lgamma(bounds.brokers - bounds.rf + 1)) / math.log(10)
    return math.log10(max(len(bounds.targets), 1))


def factors(bounds) -> dict[str, float]:
    """log10 of the estimate's factors, keyed by what to lower to shrink each (floats: bounds
    like --brokers 1000000 --rf 500000 must not build million-digit integers)."""
    targets = _log10_targets(bounds)
    targets_plus_one = targets + math.log10(1 + 10**-targets) if targets < 300 else targets
    width = 2 * bounds.rf  # replicas while a reassignment is in flight: original + adding
    per_partition = 2 * targets_plus_one + width * math.log10(2) + math.log10(width + 1)
    if bounds.replication:
        per_partition += (width + 1) * math.log10(bounds.log_length + 1)
    budgets = sum(math.log10(x + 1) for x in (bounds.reassigns, bounds.cancels, bounds.failovers, bounds.failures))
    failed = _log10_sum([_log10_comb(bounds.brokers, k) for k in range(min(bounds.failures, bounds.brokers, 64) + 1)])
    return {"brokers": per_partition * bounds.partitions, "failures": failed, "budgets": budgets}


def log10_estimate(bounds) -> float:
    """log10 of a coarse upper estimate of the states of a reassignment model at `bounds`."""
    return sum(factors(bounds).values())


def estimate(bounds) -> float:
    """A coarse upper estimate of the states (a float: inf beyond 1e308); see the module doc."""
    x = log10_estimate(bounds)
    return 10**x if x < 308 else math.inf


def approx(log10_n: float) -> str:
    """A count given by its log10, for a message: 12,345 or ~1.2e+40."""
    if log10_n < 9:
        return f"{round(10 ** log10_n):,}"
    exponent = math.floor(log10_n)
    return f"~{10 ** (log10_n - exponent):.1f}e+{exponent}"


def _culprit(bounds) -> str:
    """The bound whose lowering shrinks the estimate most, as the flag to name."""
    if bounds.partitions > 1:
        return "--partitions"
    f = factors(bounds)
    biggest = max(f, key=lambda k: f[k])
    if biggest == "brokers":
        if bounds.replication and bounds.log_length > 1:
            return "--log-length or --brokers"
        return "--brokers (or --rf)" if bounds.targets == "all" else "--brokers or --targets"
    if biggest == "failures":
        return "--failures"
    return "--reassigns, --cancels, --failures or --failovers"


def refuse_absurd(profile: str, bounds, *, force: bool, limit: float = REFUSE_ABOVE) -> float:
    """The estimate; a UsageError naming the size and the bound to lower when it exceeds `limit`."""
    n = log10_estimate(bounds)
    if n > math.log10(limit) and not force:
        gb = n + math.log10(BYTES_PER_STATE / 1e9)
        raise UsageError(
            f"{profile}: these bounds allow up to {approx(n)} states (about {approx(gb)} GB to explore; "
            f"refused above {approx(math.log10(limit))}): lower {_culprit(bounds)}, or pass --force to try "
            f"anyway (with --max-states/--max-memory to stop it cleanly)")
    return estimate(bounds)


# -- --max-memory -------------------------------------------------------------------------------

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
          "t": 1 << 40, "tb": 1 << 40, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def parse_size(text: str, flag: str = "--max-memory") -> int:
    """'512M', '4G', '1.5GB', '1000000' -> bytes (binary units); a UsageError names the flag."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text or "")
    if not m or m.group(2).lower() not in _UNITS or len(m.group(1)) > 30:
        raise UsageError(f"{flag}: expected a size like 512M or 4G, got {text[:40]!r}")
    size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size <= 0:
        raise UsageError(f"{flag}: must be positive, got {text[:40]!r}")
    return size


def rss_bytes() -> int:
    """This process's resident memory now (Linux /proc), else its peak (getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource  # not on Windows; there the peak is all we can get cheaply

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def human_bytes(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


@dataclass
class RunLimits:
    """--max-states and --max-memory for one run, as the engine's `max_states` and `watch`."""

    max_states: int | None = None
    max_memory: int | None = None  # bytes of resident memory

    def __post_init__(self) -> None:
        if self.max_states is not None and self.max_states < 1:
            raise UsageError(f"--max-states: must be at least 1, got {self.max_states}")

    def watch(self, states: int) -> str | None:
        """Called by the engine between chunks: a reason to stop, or None."""
        if self.max_memory is not None:
            used = rss_bytes()
            if used > self.max_memory:
                return f"max-memory: {human_bytes(used)} in use, limit {human_bytes(self.max_memory)}"
        return None

    def engine_options(self) -> dict:
        """Keyword arguments for an explorer with bfs.explore's signature."""
        options: dict = {}
        if self.max_states is not None:
            options["max_states"] = self.max_states
        if self.max_memory is not None:
            options["watch"] = self.watch
        return options


__all__ = ["BYTES_PER_STATE", "REFUSE_ABOVE", "RunLimits", "approx", "estimate", "factors", "log10_estimate",
           "parse_size", "refuse_absurd", "rss_bytes"]
