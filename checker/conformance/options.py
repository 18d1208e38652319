"""What a conformance campaign runs: the release and mode, how many scenarios from which seed, the faults they
may inject, their length and the model's bounds (a few shapes, taken in turn), minimization's budget."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kreassign.checker.config.bounds import Bounds
from kreassign.checker.scenarios.generate import FAULTS

MODES = ("kraft", "zk")
#: the model's bounds the scenarios are drawn at, taken in turn (with the campaign's broker count): a
#: reassignment with a failure and a controller failover; a smaller replication factor with two failures; and
#: min.insync.replicas=2 with two failures (ELR on 4.x, leaderless partitions, overrides with an empty ISR)
SHAPES = (
    {"rf": 3, "reassigns": 2, "cancels": 1, "failures": 1, "failovers": 1},
    {"rf": 2, "reassigns": 2, "cancels": 1, "failures": 2, "failovers": 1},
    {"rf": 3, "reassigns": 2, "cancels": 1, "failures": 2, "failovers": 1, "min_insync": 2},
)


@dataclass(frozen=True)
class ConformanceOptions:
    kafka_version: str
    mode: str = "kraft"
    scenarios: int = 20
    seed: int = 0
    faults: tuple[str, ...] = FAULTS
    brokers: int = 4
    length: int = 7  # driven actions per scenario (restarts and resumes at the end come on top)
    minimize_runs: int = 6  # scenario runs minimization may spend per divergent scenario (0: none)
    settle_s: float = 15.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode: kraft or zk, not {self.mode!r}")
        unknown = sorted(set(self.faults) - set(FAULTS))
        if unknown:
            raise ValueError(f"faults: unknown fault {unknown[0]!r} (known: {', '.join(FAULTS)})")
        if not 3 <= self.brokers <= 6:
            raise ValueError(f"brokers: 3 to 6, not {self.brokers}")
        if not 1 <= self.scenarios <= 100_000:
            raise ValueError(f"scenarios: 1 to 100000, not {self.scenarios}")
        if not 1 <= self.length <= 50:
            raise ValueError(f"length: 1 to 50 actions, not {self.length}")
        if self.minimize_runs < 0:
            raise ValueError(f"minimize_runs: 0 or more, not {self.minimize_runs}")

    def bounds(self, index: int) -> Bounds:
        """The bounds of the index-th scenario (SHAPES in turn), at this campaign's release."""
        shape = SHAPES[index % len(SHAPES)]
        bounds = Bounds(brokers=self.brokers, **shape)
        # the zk profile is one controller for 2.4 - 3.9: its bounds name no release
        return bounds if self.mode == "zk" else replace(bounds, kafka_version=self.kafka_version)


__all__ = ["MODES", "SHAPES", "ConformanceOptions"]
