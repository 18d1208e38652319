"""The mutation quota as clients meet it (issue 26, item 5): the throttle time a client waits out before
it retries, and how each controller type accounts for `validateOnly` requests. Pure functions; time is
an argument in integer ms; arithmetic exact (Fraction), Java's Math.round where Kafka rounds.

One sensor, either Kafka's `TokenBucket` (KIP-599 as merged: KAFKA-10162, PR #9114, Kafka 2.7+) or the
windowed `Rate` the KIP was first implemented with (KAFKA-10163, PR #8933: "except the changes of the
Rate implementation", the Rate measured like every other client quota, throttle time from
`QuotaUtils.throttleTime`); reference/quota.py and reference/quota_rate.py hold the sensors themselves.

- strict (new clients: CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+): Kafka 3.9.2
  `StrictControllerMutationQuota.record`: `checkQuotas(now)` then `record(permits, now, false)` under
  `quotaSensor synchronized`; a violation answers 89 THROTTLING_QUOTA_EXCEEDED with the throttle of
  the violation (`ControllerMutationQuotaManager.throttleTimeMs`: Math.round(−tokens / rate × 1000));
- permissive (old clients): `PermissiveControllerMutationQuota.record`: `record(permits, now, true)`
  (Sensor.record records, then checks): never rejected, the throttle of the violation mutes the channel;
- validateOnly: ZooKeeper (`ZkAdminManager.createTopics` / `createPartitions`, 3.9.2: `if (validateOnly)
  ... else { controllerMutationQuota.record(...)`) neither checks nor records; KRaft
  (`ReplicationControlManager.createTopic` / `createPartitions` call `context.applyPartitionChangeQuota`
  before `QuorumController` drops the records of a validate-only request: `ControllerResult.atomicOf
  (emptyList, data)`, `result.withoutRecords()`; KAFKA-14351, 3.5+, unchanged in 4.0.2) checks and records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import quota as ref
from . import quota_rate

TOKEN_BUCKET, RATE = "token_bucket", "rate"

# -- the throttle time of a token bucket violation (strategies; a test replaces them) -------------------

BucketThrottle = Callable[[Fraction, ref.QuotaConfig], int]


def kafka_throttle_ms(tokens: Fraction, config: ref.QuotaConfig) -> int:
    """ControllerMutationQuotaManager.throttleTimeMs (3.9.2): Math.round(−tokens / rate × 1000)."""
    return ref.throttle_time_ms(tokens, config.rate)


def throttle_in_seconds(tokens: Fraction, config: ref.QuotaConfig) -> int:
    """Broken on purpose: the wait in seconds, answered as if it were ms (no × 1000)."""
    return ref.java_round(-Fraction(tokens) / config.rate)


def throttle_until_full(tokens: Fraction, config: ref.QuotaConfig) -> int:
    """Broken on purpose: the wait until the bucket holds its whole burst again, not until it is back at 0."""
    return ref.java_round((ref.burst(config) - Fraction(tokens)) / config.rate * 1000)


BUCKET_THROTTLES: dict[str, BucketThrottle] = {
    "kafka": kafka_throttle_ms, "seconds": throttle_in_seconds, "until_full": throttle_until_full}


# -- one sensor, either kind ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sensor:
    """The principal's quota sensor: its kind, and the bucket or the Rate's samples (None: never used)."""

    kind: str
    bucket: ref.TokenBucket | None = None
    rate: quota_rate.RateSensor | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """One request's outcome: admitted (else 89), the sensor after it, the throttle_time_ms it carries."""

    admitted: bool
    sensor: Sensor
    throttle_ms: int


def check(sensor: Sensor, config: ref.QuotaConfig, now_ms: int,
          throttle: BucketThrottle = kafka_throttle_ms) -> tuple[bool, int, Sensor]:
    """Sensor.checkQuotas(now): (within the quota?, the violation's throttle time or 0, the sensor as the
    check leaves it: a bucket refilled to now, a Rate purged)."""
    if sensor.kind == RATE:
        ok, t, r = quota_rate.check(sensor.rate, config, now_ms)
        return ok, t, Sensor(RATE, rate=r)
    tokens, b = ref.measure(sensor.bucket, config, now_ms)
    assert b is not None
    if tokens < 0:  # TokenBucket's bound is a lower one: a violation iff the tokens are below 0
        return False, throttle(Fraction(tokens), config), Sensor(TOKEN_BUCKET, bucket=b)
    return True, 0, Sensor(TOKEN_BUCKET, bucket=b)


def record(sensor: Sensor, config: ref.QuotaConfig, n: int, now_ms: int) -> Sensor:
    """Sensor.record(n, now, false): the mutations are added (the bucket drained, the Rate's sample grown)."""
    if sensor.kind == RATE:
        return Sensor(RATE, rate=quota_rate.record(sensor.rate, config, n, now_ms))
    return Sensor(TOKEN_BUCKET, bucket=ref.record(sensor.bucket, config, n, now_ms))


def strict(sensor: Sensor, config: ref.QuotaConfig | None, n: int, now_ms: int,
           throttle: BucketThrottle = kafka_throttle_ms) -> Answer:
    """StrictControllerMutationQuota.record: check, then record; a violation rejects with its throttle.
    Without a quota (UnboundedControllerMutationQuota) everything is admitted and nothing recorded."""
    if config is None:
        return Answer(True, sensor, 0)
    ok, t, checked = check(sensor, config, now_ms, throttle)
    if not ok:
        return Answer(False, checked, t)
    return Answer(True, record(checked, config, n, now_ms), 0)


def permissive(sensor: Sensor, config: ref.QuotaConfig | None, n: int, now_ms: int,
               throttle: BucketThrottle = kafka_throttle_ms) -> Answer:
    """PermissiveControllerMutationQuota.record: Sensor.record(n, now, checkQuotas = true) records, then
    checks; never rejected; a violation's throttle mutes the channel."""
    if config is None:
        return Answer(True, sensor, 0)
    recorded = record(sensor, config, n, now_ms)
    ok, t, checked = check(recorded, config, now_ms, throttle)
    return Answer(True, checked, 0 if ok else t)


def within_quota(sensor: Sensor, config: ref.QuotaConfig | None, now_ms: int) -> bool:
    """Would a strict request sent at `now_ms` (nothing recorded meanwhile) pass the check?"""
    return config is None or check(sensor, config, now_ms)[0]


def measured(sensor: Sensor, config: ref.QuotaConfig | None, now_ms: int) -> Any:
    """What the sensor measures at `now_ms` (bucket: tokens; Rate: mutations/s); None without a quota."""
    if config is None:
        return None
    if sensor.kind == RATE:
        return quota_rate.measure(sensor.rate, config, now_ms)[0]
    return ref.measure(sensor.bucket, config, now_ms)[0]


# -- validateOnly: what each controller type does with the quota -----------------------------------------


@dataclass(frozen=True, slots=True)
class ValidateOnlyAccounting:
    """Does a validateOnly request meet the quota check, and is it recorded?"""

    name: str
    checked: bool
    recorded: bool


#: ZkAdminManager 3.9.2: `if (validateOnly) CreatePartitionsMetadata(...) else { controllerMutationQuota.record }`
ZK_SKIPS = ValidateOnlyAccounting("zk", checked=False, recorded=False)
#: ReplicationControlManager.createTopic/createPartitions apply the quota; QuorumController then drops the records
KRAFT_CHECKS_AND_RECORDS = ValidateOnlyAccounting("kraft", checked=True, recorded=True)
#: neither controller: checked like the request, never recorded (keeps both validate-only properties)
CHECK_ONLY = ValidateOnlyAccounting("check_only", checked=True, recorded=False)
VALIDATE_ONLY_ACCOUNTING = {a.name: a for a in (ZK_SKIPS, KRAFT_CHECKS_AND_RECORDS, CHECK_ONLY)}


def controller_accounting(controller: str) -> ValidateOnlyAccounting:
    """The validateOnly accounting of a controller type ("kraft" or "zk"). twin: reference.quota.mutation_counts,
    which counts validateOnly under KRaft and not under ZooKeeper (tests/unit/test_quota_retry.py compares them)."""
    if controller == ref.ZK:
        return ZK_SKIPS
    if controller == ref.KRAFT:
        return KRAFT_CHECKS_AND_RECORDS
    raise ValueError(f"controller: expected one of {', '.join(ref.CONTROLLERS)}, got {controller!r}")


def validate_only(sensor: Sensor, config: ref.QuotaConfig | None, n: int, now_ms: int,
                  accounting: ValidateOnlyAccounting, throttle: BucketThrottle = kafka_throttle_ms) -> Answer:
    """A strict validateOnly request of n mutations under `accounting`."""
    if config is None or not accounting.checked:
        return Answer(True, sensor, 0)
    ok, t, checked = check(sensor, config, now_ms, throttle)
    if not ok:
        return Answer(False, checked, t)
    return Answer(True, record(checked, config, n, now_ms) if accounting.recorded else checked, 0)


__all__ = [
    "BUCKET_THROTTLES",
    "CHECK_ONLY",
    "KRAFT_CHECKS_AND_RECORDS",
    "RATE",
    "TOKEN_BUCKET",
    "VALIDATE_ONLY_ACCOUNTING",
    "ZK_SKIPS",
    "Answer",
    "Sensor",
    "ValidateOnlyAccounting",
    "check",
    "controller_accounting",
    "kafka_throttle_ms",
    "measured",
    "permissive",
    "record",
    "strict",
    "throttle_in_seconds",
    "throttle_until_full",
    "validate_only",
    "within_quota",
]
