"""Which rules a live cluster follows: the profile (KRaft or the ZooKeeper controller), the Kafka release and
its ELR setting, read from what the cluster says about itself.

- KRaft: the brokers' *supported* metadata.version range ends at their software's latest production level
  (BrokerFeatures / `MetadataVersion.latestProduction()`), which names the release (spec/kafka_releases.py:
  each minor has its own latest level); the *finalized* metadata.version can be older (an upgrade not yet
  finalized), which does not change the controller's code, only its features. ELR is on when
  `eligible.leader.replicas.version` is finalized at 1 or more (KIP-966).
- ZooKeeper mode (no finalized metadata.version): the `zk` profile, which follows the ZooKeeper controller
  of Kafka 3.9 (docs/zk-profile.md); the brokers' `inter.broker.protocol.version` names the release.
`--kafka-version` overrides what is read (kraft only).
"""

from __future__ import annotations

from dataclasses import dataclass

from kreassign.spec import kafka_releases as K

from .snapshot import Snapshot


@dataclass(frozen=True)
class Rules:
    profile: str  # "kraft" or "zk"
    kafka_version: str  # kraft: the release whose controller the model follows ("" for zk)
    elr: str  # "on" / "off" (kraft), "" for zk
    said: str  # how it was decided, for the reader
    release: str  # the release as the cluster names it ("4.4", "3.9", or "unknown")


def _release_of_level(level: str) -> K.KafkaRelease | None:
    return next((r for r in K.RELEASES if r.latest_production == level), None)


def rules_of(snapshot: Snapshot, kafka_version: str | None = None) -> Rules:
    if snapshot.mode == "zk":
        ibp = {c.get("inter.broker.protocol.version") for c in snapshot.broker_configs.values()} - {None}
        named = min(ibp).split("-")[0] if len(ibp) == 1 else "unknown"
        said = (f"ZooKeeper mode (inter.broker.protocol.version {', '.join(sorted(ibp)) or 'not readable'}): "
                "the zk profile, which follows Kafka 3.9's ZooKeeper controller")
        return Rules("zk", "", "", said, named)
    level = K.level_name(snapshot.finalized["metadata.version"]) or f"level {snapshot.finalized['metadata.version']}"
    elr = "on" if snapshot.finalized.get("eligible.leader.replicas.version", 0) >= 1 else "off"
    supported = snapshot.supported.get("metadata.version", {}).get("max")
    top = K.level_name(supported) if supported is not None else None
    row = _release_of_level(top) if top else None
    if kafka_version:
        return Rules("kraft", kafka_version, elr, f"Kafka {kafka_version} as --kafka-version says (the cluster is at "
                     f"metadata.version {level}, ELR {elr})", ".".join(kafka_version.split(".")[:2]))
    if row is not None:
        said = (f"Kafka {row.minor} (its brokers support metadata.version up to {top}; finalized {level}; "
                f"ELR {elr}): the rules of {row.version}")
        return Rules("kraft", row.version, elr, said, row.minor)
    newest = K.RELEASES[-1]
    if supported is not None and (top is None or K.before(newest.latest_production, top)):
        said = (f"a Kafka newer than any kreassign knows (metadata.version up to {top or f'level {supported}'}): "
                f"checked under {newest.version}'s rules; --kafka-version names another")
        return Rules("kraft", newest.version, elr, said, "unknown")
    # an unstable or unknown top level: fall back on the finalized level's minor
    minor = level.split("-")[0]
    row = next((r for r in K.RELEASES if r.minor == minor), newest)
    said = (f"Kafka {row.minor} or newer (finalized metadata.version {level}; the brokers' supported range "
            f"does not name a release): the rules of {row.version}; --kafka-version names another")
    return Rules("kraft", row.version, elr, said, "unknown")


__all__ = ["Rules", "rules_of"]
