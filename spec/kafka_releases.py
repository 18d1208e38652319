"""The Kafka releases the kraft profile follows, and what each release accepts (issue 22, docs/kafka.md).

One row per minor: its newest patch release on Maven Central, the `metadata.version` levels it
accepts (MetadataVersion.VERSIONS from the oldest level the release still supports up to its
latest production level: `MetadataVersion.MINIMUM_BOOTSTRAP_VERSION` in 3.9, `MINIMUM_VERSION`
from 4.0, which dropped the levels before 3.3-IV3: KAFKA-18601), and whether a cluster
newly formatted by it gets eligible leader replicas (KIP-966) by default
(`Feature.ELIGIBLE_LEADER_REPLICAS_VERSION.defaultLevel(LATEST_PRODUCTION)`, 1 from 4.1 on).

Read from each release's jars; `tests/kafka/test_releases.py` asks every release's own
MetadataVersion and Feature classes (through the adapter's `version` op) and compares them with
this table.
"""

from __future__ import annotations

from dataclasses import dataclass

#: every level that any supported release knows, in Kafka's order (MetadataVersion's declaration order)
_LEVELS = (
    "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2",
    "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4",
    "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3", "4.1-IV0", "4.1-IV1",
    "4.2-IV0", "4.2-IV1", "4.3-IV0", "4.4-IV0", "4.4-IV1", "4.4-IV2",
)


def level_index(level: str) -> int:
    """The level's position in Kafka's order; a ValueError for a level no supported release knows."""
    try:
        return _LEVELS.index(level)
    except ValueError:
        raise ValueError(f"unknown metadata.version {level!r}") from None


def level_name(feature_level: int) -> str | None:
    """The metadata.version a FeatureLevelRecord's featureLevel names (MetadataVersion.featureLevel(): 3.3-IV0
    is 4, one more per level in _LEVELS' order); None for a level no supported release knows."""
    index = feature_level - 4
    return _LEVELS[index] if 0 <= index < len(_LEVELS) else None


def before(level: str, other: str) -> bool:
    """`level` is older than `other` (MetadataVersion.isLessThan)."""
    return level_index(level) < level_index(other)


@dataclass(frozen=True)
class KafkaRelease:
    version: str  # the newest patch release of its minor
    oldest_level: str  # the oldest metadata.version it accepts
    latest_production: str  # its default metadata.version for a new cluster
    elr_default: bool  # a new cluster (at latest_production) has eligible.leader.replicas.version = 1

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])

    def since(self, minor: str) -> bool:
        """This release is `minor` (e.g. "4.3") or newer: the rules that changed in `minor` apply."""
        return tuple(int(x) for x in self.minor.split(".")) >= tuple(int(x) for x in minor.split("."))

    @property
    def metadata_versions(self) -> tuple[str, ...]:
        return _LEVELS[level_index(self.oldest_level):level_index(self.latest_production) + 1]


RELEASES: tuple[KafkaRelease, ...] = (
    KafkaRelease("3.9.2", "3.3-IV0", "3.9-IV0", False),
    KafkaRelease("4.0.2", "3.3-IV3", "4.0-IV3", False),
    KafkaRelease("4.1.2", "3.3-IV3", "4.1-IV1", True),
    KafkaRelease("4.2.2", "3.3-IV3", "4.2-IV1", True),
    KafkaRelease("4.3.1", "3.3-IV3", "4.3-IV0", True),
    KafkaRelease("4.4.0", "3.3-IV3", "4.4-IV2", True),
)
NEWEST = RELEASES[-1].version


def elr_possible(version: str, level: str) -> bool:
    """eligible.leader.replicas.version 1 can be set: Kafka 4.0 or newer (a finalized feature, KAFKA-18062)
    at metadata.version 4.0-IV1 or newer (EligibleLeaderReplicasVersion.ELRV_1's dependency). 3.9 has ELR
    only at its unstable 4.0-IV0 level, which no release of the matrix accepts."""
    return release(version).since("4.0") and not before(level, "4.0-IV1")


def elr_default(version: str, level: str) -> bool:
    """What `kafka-storage format` gives a new cluster: Feature.defaultLevel(level) is 1 from 4.1-IV0 on
    (ELRV_1's bootstrap metadata.version), in the releases that default to it (4.1 and newer)."""
    return release(version).elr_default and not before(level, "4.1-IV0")


def parse_version(text: str) -> str:
    """A released version X.Y.Z of a supported minor; a ValueError saying why not (callers name the flag)."""
    import re

    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", text.strip())
    if m is None:
        raise ValueError(f"{text!r} is not a Kafka release (expected X.Y.Z, e.g. {NEWEST}; supported: "
                         f"{', '.join(r.version for r in RELEASES)})")
    minor = f"{int(m.group(1))}.{int(m.group(2))}"
    if not any(r.minor == minor for r in RELEASES):
        raise ValueError(f"Kafka {text.strip()} is not supported (supported minors: "
                         f"{', '.join(r.minor for r in RELEASES)}; newest patch of each: "
                         f"{', '.join(r.version for r in RELEASES)})")
    return text.strip()


def release(version: str) -> KafkaRelease:
    """The row of `version`'s minor (any patch release of a supported minor); a ValueError otherwise."""
    minor = ".".join(version.split(".")[:2])
    for r in RELEASES:
        if r.minor == minor:
            return r
    raise ValueError(f"Kafka {version} is not a supported release (supported: {', '.join(r.version for r in RELEASES)})")


__all__ = ["NEWEST", "RELEASES", "KafkaRelease", "before", "elr_default", "elr_possible", "level_index", "level_name", "parse_version", "release"]
