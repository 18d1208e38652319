"""The mutation quota under concurrency and change (issue 14, item 6): request handlers sharing one
sensor, and quota changes between their admissions.

Kafka runs several request handler threads; two strict requests of one principal hit the same
sensor. StrictControllerMutationQuota.record checks and records *inside* `quotaSensor
synchronized` (Kafka 3.8 ControllerMutationQuotaManager.scala), so one topic's check-then-record
is atomic. Quotas are resolved per request (`quotaCallback.quotaLimit`; none → the
UnboundedControllerMutationQuota, no sensor at all) and `updateQuotaMetricConfigs` rewrites the
MetricConfig of the sensors that exist when a quota changes, so the next admission refills,
caps and checks with the new value.

The state: absolute time up to `horizon_ms`, the quota in force (`rate`, None = none), the rate
the sensor's MetricConfig holds (`sensor_rate`: the implementation's own copy, equal to `rate`
in Kafka), the sensor (a TokenBucket, or with `sensor = "rate"` the windowed Rate of
reference/quota_rate.py), and per handler the topic it has checked but not yet recorded
(only in the non-atomic variant). Actions: `Tick(ms)`, `Send(handler, n)` (one strict topic of n
mutations), `Record(handler)` (non-atomic only), `AlterQuota(rate)`.

Every rule is the reference's (reference/quota.py, reference/quota_rate.py); the strategies a
test replaces are `atomic` (check and record in one step) and `follows_quota_changes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from kreassign.checker.explore.protocol import Model
from kreassign.reference import quota as ref
from kreassign.reference import quota_rate
from kreassign.spec.properties import Property

TOKEN_BUCKET, RATE = "token_bucket", "rate"


@dataclass(frozen=True)
class HandlersConfig:
    rate: Fraction | None = Fraction(1)  # the quota in force at the start
    samples: int = 2
    window_ms: int = 1000
    sizes: tuple[int, ...] = (3,)  # strict topics a handler may send (mutations each)
    handlers: int = 2
    ticks: tuple[int, ...] = (1000,)
    horizon_ms: int = 2000  # time stops here (the state space is finite)
    quota_changes: tuple[Fraction | None, ...] = ()
    sensor: str = TOKEN_BUCKET
    atomic: bool = True  # Kafka: check and record under `quotaSensor synchronized`
    follows_quota_changes: bool = True  # Kafka: updateQuotaMetricConfigs / per-request resolution

    def __post_init__(self) -> None:
        if self.sensor not in (TOKEN_BUCKET, RATE):
            raise ValueError(f"sensor: expected {TOKEN_BUCKET!r} or {RATE!r}, got {self.sensor!r}")
        if self.handlers < 1 or not self.sizes or not self.ticks:
            raise ValueError("handlers, sizes and ticks: must be non-empty / at least 1")

    def describe(self) -> dict[str, Any]:
        fmt = lambda r: None if r is None else str(r)
        return {"rate": fmt(self.rate), "samples": self.samples, "window_ms": self.window_ms,
                "sizes": list(self.sizes), "handlers": self.handlers, "ticks": list(self.ticks),
                "horizon_ms": self.horizon_ms, "quota_changes": [fmt(r) for r in self.quota_changes],
                "sensor": self.sensor, "atomic": self.atomic, "follows_quota_changes": self.follows_quota_changes}


@dataclass(frozen=True, slots=True)
class HState:
    now_ms: int
    rate: Fraction | None  # the quota in force (None: no quota)
    sensor_rate: Fraction | None  # the rate the sensor's MetricConfig holds (None: no sensor yet)
    bucket: ref.TokenBucket | None = None
    sensor: quota_rate.RateSensor | None = None
    pending: tuple[int | None, ...] = ()  # per handler: the topic it checked and has yet to record
    throttled_unquoted: bool = False  # ghost: the last admission was throttled with no quota in force


@dataclass(frozen=True, slots=True)
class Tick:
    ms: int

    def __str__(self) -> str:
        return f"Tick({self.ms}ms)"


@dataclass(frozen=True, slots=True)
class Send:
    handler: int
    n: int

    def __str__(self) -> str:
        return f"Send(handler {self.handler}, {self.n} mutations)"


@dataclass(frozen=True, slots=True)
class Record:
    handler: int

    def __str__(self) -> str:
        return f"Record(handler {self.handler})"


@dataclass(frozen=True, slots=True)
class AlterQuota:
    rate: Fraction | None

    def __str__(self) -> str:
        return f"AlterQuota({'remove' if self.rate is None else self.rate})"


class QuotaHandlersModel(Model[HState, Any]):
    name = "quota-handlers"

    def __init__(self, config: HandlersConfig | None = None):
        self.config = config or HandlersConfig()

    # -- the sensor, through the reference ---------------------------------------------------
    def _config(self, s: HState) -> ref.QuotaConfig | None:
        rate = s.rate if self.config.follows_quota_changes else (s.sensor_rate if s.sensor_rate is not None else s.rate)
        return None if rate is None else ref.QuotaConfig(rate, self.config.samples, self.config.window_ms)

    def _check(self, s: HState, cfg: ref.QuotaConfig) -> tuple[bool, HState]:
        if self.config.sensor == RATE:
            ok, _, sensor = quota_rate.check(s.sensor, cfg, s.now_ms)
            return ok, replace(s, sensor=sensor)
        tokens, bucket = ref.measure(s.bucket, cfg, s.now_ms)
        return tokens >= 0, replace(s, bucket=bucket)

    def _record(self, s: HState, cfg: ref.QuotaConfig, n: int) -> HState:
        if self.config.sensor == RATE:
            return replace(s, sensor=quota_rate.record(s.sensor, cfg, n, s.now_ms), sensor_rate=s.sensor_rate or cfg.rate)
        return replace(s, bucket=ref.record(s.bucket, cfg, n, s.now_ms), sensor_rate=s.sensor_rate or cfg.rate)

    def measured_tokens(self, s: HState) -> Fraction | float:
        cfg = None if s.rate is None else ref.QuotaConfig(s.rate, self.config.samples, self.config.window_ms)
        return ref.measure(s.bucket, cfg, s.now_ms)[0]

    # -- the protocol --------------------------------------------------------------------------
    def init_states(self) -> Sequence[HState]:
        return [HState(0, self.config.rate, None, pending=(None,) * self.config.handlers)]

    def actions(self, s: HState) -> Sequence[Any]:
        out: list[Any] = [Tick(ms) for ms in self.config.ticks if s.now_ms + ms <= self.config.horizon_ms]
        for h, p in enumerate(s.pending):
            if p is None:
                out += [Send(h, n) for n in self.config.sizes]
            else:
                out.append(Record(h))
        out += [AlterQuota(r) for r in self.config.quota_changes if r != s.rate]
        return out

    def next_state(self, s: HState, a: Any) -> HState | None:
        s = replace(s, throttled_unquoted=False)
        if isinstance(a, Tick):
            return replace(s, now_ms=s.now_ms + a.ms)
        if isinstance(a, AlterQuota):
            # Kafka rewrites the sensor's MetricConfig (updateQuotaMetricConfigs); the broken variant keeps it
            return replace(s, rate=a.rate, sensor_rate=a.rate if self.config.follows_quota_changes else s.sensor_rate)
        if isinstance(a, Send):
            cfg = self._config(s)
            if cfg is None:  # UnboundedControllerMutationQuota: nothing checked, nothing recorded
                return s
            ok, s = self._check(s, cfg)
            if not ok:
                return replace(s, throttled_unquoted=s.rate is None)
            if self.config.atomic:
                return self._record(s, cfg, a.n)
            return replace(s, pending=s.pending[:a.handler] + (a.n,) + s.pending[a.handler + 1:])
        if isinstance(a, Record):
            n = s.pending[a.handler]
            s = replace(s, pending=s.pending[:a.handler] + (None,) + s.pending[a.handler + 1:])
            cfg = self._config(s)
            return s if cfg is None else self._record(s, cfg, n)
        raise ValueError(f"not a quota-handlers action: {a!r}")

    def properties(self) -> Sequence[Property]:
        largest = max(self.config.sizes)
        burst = lambda r: ref.burst(ref.QuotaConfig(r, self.config.samples, self.config.window_ms))

        def overdraft_bounded_with_concurrent_handlers(s: HState) -> bool:
            """However the handlers interleave, the tokens never go below −(the largest topic): a topic
            is only recorded on a bucket that was not overdrawn when it was checked."""
            return self.config.sensor != TOKEN_BUCKET or s.rate is None or self.measured_tokens(s) >= -largest

        def next_admission_uses_quota_in_force(prev: HState, a: Any, nxt: HState) -> bool:
            """The admission right after a quota change refills and caps with the new value: a bucket
            it updates holds at most the new burst."""
            b = nxt.bucket
            if not isinstance(a, (Send, Record)) or nxt.rate is None or b is None or b.last_update_ms != nxt.now_ms:
                return True
            return b.tokens <= burst(nxt.rate)

        def unquoted_never_throttled(s: HState) -> bool:
            """A request while no quota is in force is never throttled."""
            return not s.throttled_unquoted

        src = "Kafka 3.8 ControllerMutationQuotaManager (StrictControllerMutationQuota.record, updateQuotaMetricConfigs)"
        return (
            Property.always("overdraft_bounded_with_concurrent_handlers", overdraft_bounded_with_concurrent_handlers,
                            description=overdraft_bounded_with_concurrent_handlers.__doc__, source=src,
                            promised_by=("kip599",)),
            Property.transition("next_admission_uses_quota_in_force", next_admission_uses_quota_in_force,
                                description=next_admission_uses_quota_in_force.__doc__, source=src,
                                promised_by=("kip599",)),
            Property.always("unquoted_never_throttled", unquoted_never_throttled,
                            description=unquoted_never_throttled.__doc__,
                            source=src + "; UnboundedControllerMutationQuota", promised_by=("kip599",)),
        )

    def describe(self) -> dict[str, Any]:
        return {"profile": "kip599", **self.config.describe()}

    def state_to_json(self, s: HState) -> Any:
        return {"now_ms": s.now_ms, "rate": None if s.rate is None else str(s.rate),
                "sensor_rate": None if s.sensor_rate is None else str(s.sensor_rate),
                "tokens": None if s.bucket is None else str(s.bucket.tokens),
                "pending": list(s.pending), "throttled_unquoted": s.throttled_unquoted}


__all__ = [
    "RATE",
    "TOKEN_BUCKET",
    "AlterQuota",
    "HState",
    "HandlersConfig",
    "QuotaHandlersModel",
    "Record",
    "Send",
    "Tick",
]
