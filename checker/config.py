"""Bounds of a reassignment model: what the explorer may do, as data (TOML file or CLI flags).

A TOML config holds one `[bounds]` table (and optionally `[profiles]`):

    [bounds]
    brokers = 4            # broker ids 1..brokers
    partitions = 1         # partitions of topic "t"
    rf = 2                 # replication factor of the initial assignment
    initial = [[1, 2]]     # initial replicas per partition (default: 1..rf for each)
    targets = "all"        # "all" RF-subsets (ascending ids), "permutations" (every order of
                           # every RF-subset), or a list like [[3, 4], [1, 3]]
    reassigns = 1          # Reassign requests (including overrides) the admin may send
    cancels = 1            # Cancel requests
    failures = 0           # BrokerFail actions (recoveries are free)
    failovers = 0          # controller failovers
    isr_changes = true     # leaders may shrink / expand the ISR
    elections = []         # ElectLeaders types to try: "PREFERRED", "UNCLEAN"
    unclean = false        # the topic's unclean.leader.election.enable
    replication = false    # the replication layer (logs, high watermark)
    log_length = 1         # records a leader may append
    znode = false          # zk/kip236: the legacy /admin/reassign_partitions route

Every key is checked: an unknown key, a wrong type or an out-of-range value is an
error that names the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields
from itertools import combinations, permutations
from typing import Any


class ConfigError(ValueError):
    """A bad bound; the message names the key."""


@dataclass(frozen=True)
class Bounds:
    brokers: int = 3
    partitions: int = 1
    rf: int = 2
    initial: tuple[tuple[int, ...], ...] | None = None
    targets: str | tuple[tuple[int, ...], ...] = "all"
    reassigns: int = 1
    cancels: int = 1
    failures: int = 0
    failovers: int = 0
    isr_changes: bool = True
    elections: tuple[str, ...] = ()
    unclean: bool = False
    replication: bool = False
    log_length: int = 1
    znode: bool = False

    def __post_init__(self) -> None:
        for name in ("brokers", "partitions", "rf"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: must be at least 1, got {getattr(self, name)}")
        for name in ("reassigns", "cancels", "failures", "failovers", "log_length"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name}: must not be negative, got {getattr(self, name)}")
        if self.rf > self.brokers:
            raise ConfigError(f"rf: {self.rf} is larger than the number of brokers ({self.brokers})")
        for e in self.elections:
            if e not in ("PREFERRED", "UNCLEAN"):
                raise ConfigError(f"elections: unknown election type {e!r} (PREFERRED or UNCLEAN)")
        ids = set(self.broker_ids)
        for key, lists in (("initial", self.initial or ()), ("targets", () if isinstance(self.targets, str) else self.targets)):
            for k, replicas in enumerate(lists):
                if not replicas:
                    raise ConfigError(f"{key}[{k}]: empty replica list")
                if len(set(replicas)) != len(replicas):
                    raise ConfigError(f"{key}[{k}]: duplicate broker ids in {list(replicas)}")
                for b in replicas:
                    if b not in ids:
                        raise ConfigError(f"{key}[{k}]: broker {b} is not one of 1..{self.brokers}")
        if isinstance(self.targets, str) and self.targets not in ("all", "permutations"):
            raise ConfigError(f"targets: expected \"all\", \"permutations\" or a list of replica lists, got {self.targets!r}")
        if self.initial is not None and len(self.initial) != self.partitions:
            raise ConfigError(f"initial: {len(self.initial)} replica lists for {self.partitions} partitions")

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(range(1, self.brokers + 1))

    def initial_assignment(self) -> list[list[int]]:
        if self.initial is not None:
            return [list(r) for r in self.initial]
        return [list(range(1, self.rf + 1)) for _ in range(self.partitions)]

    def target_lists(self) -> tuple[tuple[int, ...], ...]:
        if self.targets == "all":
            return tuple(combinations(self.broker_ids, self.rf))
        if self.targets == "permutations":
            return tuple(permutations(self.broker_ids, self.rf))
        return tuple(tuple(t) for t in self.targets)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: (list(map(list, v)) if k in ("initial", "targets") and isinstance(v, tuple) else v) for k, v in d.items()}


_TYPES = {f.name: f.type for f in fields(Bounds)}


def bounds_from_mapping(data: dict[str, Any], base: Bounds | None = None, where: str = "bounds") -> Bounds:
    """Build Bounds from a mapping (TOML table or JSON), checking every key and type."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table")
    values = asdict(base or Bounds())
    for key, v in data.items():
        if key not in values:
            raise ConfigError(f"{where}.{key}: unknown key (known: {', '.join(values)})")
        default = getattr(Bounds(), key)
        if isinstance(default, bool):
            if not isinstance(v, bool):
                raise ConfigError(f"{where}.{key}: expected true or false, got {v!r}")
        elif isinstance(default, int):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{where}.{key}: expected an integer, got {v!r}")
        elif key in ("initial", "targets"):
            if (key == "targets" and v in ("all", "permutations")) or (key == "initial" and v is None):
                pass
            elif not isinstance(v, list) or not all(
                isinstance(r, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in r) for r in v
            ):
                raise ConfigError(f"{where}.{key}: expected a list of lists of broker ids, got {v!r}")
            else:
                v = tuple(tuple(r) for r in v)
        elif key == "elections":
            if not isinstance(v, list) or not all(isinstance(e, str) for e in v):
                raise ConfigError(f"{where}.{key}: expected a list of strings, got {v!r}")
            v = tuple(v)
        values[key] = v
    try:
        return Bounds(**values)
    except ConfigError as e:
        raise ConfigError(f"{where}.{e}") from None


def load_config(path: str) -> tuple[Bounds, list[str] | None]:
    """Read a TOML config: ([bounds] as Bounds, [profiles].names or None)."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    for key in data:
        if key not in ("bounds", "profiles"):
            raise ConfigError(f"{path}: unknown table [{key}] (expected [bounds] and [profiles])")
    bounds = bounds_from_mapping(data.get("bounds", {}), where=f"{path}: bounds")
    names = None
    if "profiles" in data:
        names = data["profiles"].get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"{path}: profiles.names: expected a list of profile names")
    return bounds, names
