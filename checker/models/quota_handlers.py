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

The quota as clients meet it (issue 26; off by default; reference/quota_retry.py): with `retry` a client
given a throttle time waits exactly that long and sends the same request again (`RetryAfterThrottle`);
`permissive_sizes` adds old clients (`SendOld`, permissive), `validate_only_sizes` validateOnly CreateTopics
(`SendValidateOnly`) accounted as `controller` ("kraft" or "zk") does; their properties are
spec/quota_client_properties.py's, judged on the `client` ghost.

As profiles of `kreassign check` (docs/quota.md): `kip599-handlers` (the token bucket) and
`kip599-handlers-rate` (the Rate sensor), at `DEFAULT_CHECK_CONFIG` or a TOML `[quota_handlers]`
table (`config_from_mapping`, which also reads a trace's bounds back for `show` / `replay`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from kreassign.checker.explore.protocol import Model
from kreassign.reference import quota as ref
from kreassign.reference import quota_rate
from kreassign.reference import quota_retry as qr
from kreassign.spec import quota_client_properties as qc
from kreassign.spec.properties import Property
from kreassign.spec.quota import check_rate, number_from_json, number_to_json

TOKEN_BUCKET, RATE = "token_bucket", "rate"

#: the `kreassign check` profiles of this model, and the sensor each measures with
HANDLERS_PROFILES = {"kip599-handlers": TOKEN_BUCKET, "kip599-handlers-rate": RATE}

REMOVE = "remove"  # a quota change that removes the quota (TOML has no null; JSON may use either)

#: no configuration may exceed these (larger ones are typos; the state space grows with each)
MAX_HANDLERS, MAX_CHOICES, MAX_TIME_STEPS = 8, 8, 200


def _positive_int(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    return v


def _int_tuple(v: Any, name: str) -> tuple[int, ...]:
    if not isinstance(v, tuple | list) or not v or len(v) > MAX_CHOICES:
        raise ValueError(f"{name}: expected a list of 1 to {MAX_CHOICES} positive integers, got {v!r}")
    return tuple(_positive_int(x, f"{name}[{i}]") for i, x in enumerate(v))


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
    # -- the quota as clients meet it (issue 26; off by default; reference/quota_retry.py) --
    retry: bool = False  # a throttled client waits exactly throttle_time_ms, then sends the same request again
    permissive_sizes: tuple[int, ...] = ()  # old clients' requests (permissive: recorded, never rejected)
    validate_only_sizes: tuple[int, ...] = ()  # strict validateOnly CreateTopics of these many partitions
    controller: str = ref.KRAFT  # whose validateOnly accounting: "kraft" or "zk"
    throttle: str = "kafka"  # the token bucket's throttle time (broken variants: "seconds", "until_full")
    validate_only_accounting: str | None = None  # None: the controller's (a variant: "check_only")

    def __post_init__(self) -> None:
        """Every field checked; a ValueError names the first bad one (`kreassign check` exits 2)."""
        if self.sensor not in (TOKEN_BUCKET, RATE):
            raise ValueError(f"sensor: expected {TOKEN_BUCKET!r} or {RATE!r}, got {self.sensor!r}")
        if self.rate is not None:
            object.__setattr__(self, "rate", check_rate(self.rate, "rate"))
        ref.QuotaConfig(Fraction(1), self.samples, self.window_ms)  # names samples / window_ms
        object.__setattr__(self, "sizes", _int_tuple(self.sizes, "sizes"))
        object.__setattr__(self, "ticks", _int_tuple(self.ticks, "ticks"))
        if _positive_int(self.handlers, "handlers") > MAX_HANDLERS:
            raise ValueError(f"handlers: at most {MAX_HANDLERS}, got {self.handlers}")
        if isinstance(self.horizon_ms, bool) or not isinstance(self.horizon_ms, int) or self.horizon_ms < 0:
            raise ValueError(f"horizon_ms: expected an integer >= 0, got {self.horizon_ms!r}")
        if self.horizon_ms // min(self.ticks) > MAX_TIME_STEPS:
            raise ValueError(f"horizon_ms: at most {MAX_TIME_STEPS} of the shortest tick ({min(self.ticks)} ms), "
                             f"got {self.horizon_ms}")
        if not isinstance(self.quota_changes, tuple | list) or len(self.quota_changes) > MAX_CHOICES:
            raise ValueError(f"quota_changes: expected a list of at most {MAX_CHOICES} rates, got {self.quota_changes!r}")
        object.__setattr__(self, "quota_changes", tuple(
            None if r is None else check_rate(r, f"quota_changes[{i}]") for i, r in enumerate(self.quota_changes)))
        for name in ("atomic", "follows_quota_changes", "retry"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: expected true or false, got {getattr(self, name)!r}")
        for name in ("permissive_sizes", "validate_only_sizes"):
            v = getattr(self, name)
            object.__setattr__(self, name, () if isinstance(v, tuple | list) and not v else _int_tuple(v, name))
        if self.controller not in ref.CONTROLLERS:
            raise ValueError(f"controller: expected one of {', '.join(ref.CONTROLLERS)}, got {self.controller!r}")
        if self.throttle not in qr.BUCKET_THROTTLES:
            raise ValueError(f"throttle: expected one of {', '.join(qr.BUCKET_THROTTLES)}, got {self.throttle!r}")
        if self.throttle != "kafka" and self.sensor != TOKEN_BUCKET:
            raise ValueError(f"throttle: {self.throttle!r} is a token bucket's throttle; the Rate has its own")
        if self.validate_only_accounting is not None and self.validate_only_accounting not in qr.VALIDATE_ONLY_ACCOUNTING:
            raise ValueError(f"validate_only_accounting: expected one of {', '.join(qr.VALIDATE_ONLY_ACCOUNTING)}, "
                             f"got {self.validate_only_accounting!r}")
        if self.clients and not self.atomic:
            raise ValueError("retry: the client capabilities (retry, permissive_sizes, validate_only_sizes) need "
                             "atomic = true")

    @property
    def clients(self) -> bool:
        """Is a client capability on (retry, old clients, validateOnly requests)?"""
        return self.retry or bool(self.permissive_sizes) or bool(self.validate_only_sizes)

    @property
    def accounting(self) -> qr.ValidateOnlyAccounting:
        """How validateOnly requests meet the quota: the controller's, or the variant's."""
        if self.validate_only_accounting is not None:
            return qr.VALIDATE_ONLY_ACCOUNTING[self.validate_only_accounting]
        return qr.controller_accounting(self.controller)

    @property
    def profile(self) -> str:
        return next(p for p, sensor in HANDLERS_PROFILES.items() if sensor == self.sensor)

    def describe(self) -> dict[str, Any]:
        """The configuration as JSON data; `config_from_mapping` reads it back."""
        return {"rate": number_to_json(self.rate), "samples": self.samples, "window_ms": self.window_ms,
                "sizes": list(self.sizes), "handlers": self.handlers, "ticks": list(self.ticks),
                "horizon_ms": self.horizon_ms, "quota_changes": [number_to_json(r) for r in self.quota_changes],
                "sensor": self.sensor, "atomic": self.atomic, "follows_quota_changes": self.follows_quota_changes,
                **self._client_fields()}

    def _client_fields(self) -> dict[str, Any]:
        """The client capabilities' fields that differ from their defaults (so a default config describes as before)."""
        out: dict[str, Any] = {}
        for name, default in CLIENT_DEFAULTS.items():
            v = getattr(self, name)
            if v != default:
                out[name] = list(v) if isinstance(v, tuple) else v
        return out


#: the bounds a user may set (TOML `[quota_handlers]`); a trace's bounds may also name the sensor and
#: the two strategies (so that a broken variant's trace can be rebuilt), a TOML table may not
USER_FIELDS = ("rate", "samples", "window_ms", "sizes", "handlers", "ticks", "horizon_ms", "quota_changes",
               "retry", "permissive_sizes", "validate_only_sizes", "controller")
VARIANT_FIELDS = ("sensor", "atomic", "follows_quota_changes", "throttle", "validate_only_accounting")
#: the client capabilities' fields and their defaults (off)
CLIENT_DEFAULTS: dict[str, Any] = {"retry": False, "permissive_sizes": (), "validate_only_sizes": (),
                                   "controller": ref.KRAFT, "throttle": "kafka", "validate_only_accounting": None}

#: what `kreassign check --profile kip599-handlers[-rate]` explores without a [quota_handlers] table:
#: two handlers, topics of 1 and 3 mutations, half and whole seconds, the quota lowered, raised, removed
DEFAULT_CHECK_CONFIG = HandlersConfig(sizes=(1, 3), ticks=(500, 1000),
                                      quota_changes=(Fraction(1, 2), Fraction(2), None))


def default_config(profile: str) -> HandlersConfig:
    """The configuration `kreassign check` runs for a handlers profile."""
    return replace(DEFAULT_CHECK_CONFIG, sensor=_sensor_of(profile))


def _sensor_of(profile: str) -> str:
    if profile not in HANDLERS_PROFILES:
        raise ValueError(f"profile: not a quota-handlers profile {profile!r}; known: {', '.join(HANDLERS_PROFILES)}")
    return HANDLERS_PROFILES[profile]


def config_from_mapping(data: Any, profile: str, *, where: str = "bounds", variants: bool = True,
                        base: HandlersConfig | None = None) -> HandlersConfig:
    """A HandlersConfig of `profile` from describe()-shaped data over `base` (default: the check's default);
    ValueError names the field as `<where>.<field>`. With `variants=False` (a user's TOML table) the
    sensor and the strategies cannot be set: the profile chooses the sensor, Kafka the strategies."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a table/object, got {data!r}")
    allowed = USER_FIELDS + (VARIANT_FIELDS if variants else ())
    unknown = sorted(k for k in data if k not in allowed)
    if unknown:
        raise ValueError(f"{where}.{unknown[0]}: unknown field (known: {', '.join(allowed)})")
    sensor = _sensor_of(profile)
    if data.get("sensor", sensor) != sensor:
        raise ValueError(f"{where}.sensor: {data['sensor']!r} is not the sensor of profile {profile} ({sensor!r})")
    kw: dict[str, Any] = {k: v for k, v in data.items() if k not in ("rate", "quota_changes")}
    kw["sensor"] = sensor
    try:
        if "rate" in data:
            kw["rate"] = number_from_json(data["rate"], "rate")
        if "quota_changes" in data:
            if not isinstance(data["quota_changes"], list):
                raise ValueError(f"quota_changes: expected a list, got {data['quota_changes']!r}")
            kw["quota_changes"] = tuple(None if r == REMOVE else number_from_json(r, f"quota_changes[{i}]")
                                        for i, r in enumerate(data["quota_changes"]))
        return replace(base or DEFAULT_CHECK_CONFIG, **kw)
    except ValueError as e:
        raise ValueError(f"{where}.{e}") from None


@dataclass(frozen=True, slots=True)
class HState:
    now_ms: int
    rate: Fraction | None  # the quota in force (None: no quota)
    sensor_rate: Fraction | None  # the rate the sensor's MetricConfig holds (None: no sensor yet)
    bucket: ref.TokenBucket | None = None
    sensor: quota_rate.RateSensor | None = None
    pending: tuple[int | None, ...] = ()  # per handler: the topic it checked and has yet to record
    throttled_unquoted: bool = False  # ghost: the last admission was throttled with no quota in force
    client: qc.ClientGhost | None = None  # ghost of the client capabilities (None when they are off)


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
class RetryAfterThrottle:
    """The throttled client waits exactly the throttle_time_ms it was given (its connection is throttled,
    KIP-219) and sends the same request again."""

    def __str__(self) -> str:
        return "RetryAfterThrottle()"


@dataclass(frozen=True, slots=True)
class SendOld:
    """An old client (CreateTopics v5) creates a topic of n partitions: permissive."""

    n: int

    def __str__(self) -> str:
        return f"SendOld({self.n} mutations)"


@dataclass(frozen=True, slots=True)
class SendValidateOnly:
    """A new client sends CreateTopics v7 validateOnly for a topic of n partitions."""

    n: int

    def __str__(self) -> str:
        return f"SendValidateOnly({self.n} mutations)"


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
        return [HState(0, self.config.rate, None, pending=(None,) * self.config.handlers,
                       client=qc.ClientGhost() if self.config.clients else None)]

    def actions(self, s: HState) -> Sequence[Any]:
        out: list[Any] = [Tick(ms) for ms in self.config.ticks if s.now_ms + ms <= self.config.horizon_ms]
        for h, p in enumerate(s.pending):
            if p is None:
                out += [Send(h, n) for n in self.config.sizes]
            else:
                out.append(Record(h))
        out += [AlterQuota(r) for r in self.config.quota_changes if r != s.rate]
        if self.config.clients:
            # an old client sends while its quota is not violated (after a violation its channel is muted: it
            # comes back through RetryAfterThrottle); this also bounds the overdraft to one request
            if self.config.permissive_sizes and qr.within_quota(self._sensor(s), self._config(s), s.now_ms):
                out += [SendOld(n) for n in self.config.permissive_sizes]
            out += [SendValidateOnly(n) for n in self.config.validate_only_sizes]
            retry = s.client.retry if s.client is not None else None
            if self.config.retry and retry is not None and s.now_ms + retry[2] <= self.config.horizon_ms:
                out.append(RetryAfterThrottle())
        return out

    def next_state(self, s: HState, a: Any) -> HState | None:
        if a not in self.actions(s):  # e.g. a hand-edited trace: a Record with nothing checked
            return None
        return self._next(s, a)

    def successors(self, s: HState):
        for a in self.actions(s):  # enabled by construction: no need to ask again
            n = self._next(s, a)
            if n is not None:
                yield a, n

    def _next(self, s: HState, a: Any) -> HState | None:
        s = replace(s, throttled_unquoted=False)
        if self.config.clients:
            return self._client_next(s, a)
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

    # -- the quota as clients meet it (reference/quota_retry.py) ---------------------------------------
    def _sensor(self, s: HState) -> qr.Sensor:
        return qr.Sensor(qr.RATE if self.config.sensor == RATE else qr.TOKEN_BUCKET, s.bucket, s.sensor)

    def _with_sensor(self, s: HState, sensor: qr.Sensor, cfg: ref.QuotaConfig | None, recorded: bool) -> HState:
        rate = (s.sensor_rate or cfg.rate) if (recorded and cfg is not None) else s.sensor_rate
        return replace(s, bucket=sensor.bucket, sensor=sensor.rate, sensor_rate=rate)

    def _answer(self, s: HState, n: int, strict: bool, ghost: qc.ClientGhost) -> HState:
        """Send n mutations now (strict or permissive) through the reference; the retry ghost follows the answer."""
        cfg = self._config(s)
        throttle = qr.BUCKET_THROTTLES[self.config.throttle]
        send = qr.strict if strict else qr.permissive
        ans = send(self._sensor(s), cfg, n, s.now_ms, throttle)
        nxt = self._with_sensor(s, ans.sensor, cfg, recorded=ans.admitted and cfg is not None)
        throttled = not ans.admitted or ans.throttle_ms > 0
        early = ans.throttle_ms > 0 and qr.within_quota(ans.sensor, cfg, s.now_ms + ans.throttle_ms - 1)
        return replace(nxt, throttled_unquoted=not ans.admitted and s.rate is None,
                       client=replace(ghost, retry=(n, strict, ans.throttle_ms) if throttled else None,
                                      early_within=early))

    def _client_next(self, s: HState, a: Any) -> HState | None:
        """The transitions with the client capabilities on (Kafka's atomic check-then-record only)."""
        prev = s.client or qc.ClientGhost()
        s = replace(s, client=qc.ClientGhost())
        if isinstance(a, Tick):
            return replace(s, now_ms=s.now_ms + a.ms)
        if isinstance(a, AlterQuota):
            return replace(s, rate=a.rate, sensor_rate=a.rate if self.config.follows_quota_changes else s.sensor_rate)
        if isinstance(a, Send):
            return self._answer(s, a.n, True, qc.ClientGhost())
        if isinstance(a, SendOld):
            return self._answer(s, a.n, False, qc.ClientGhost())
        if isinstance(a, RetryAfterThrottle):
            if prev.retry is None:
                return None
            n, strict, wait = prev.retry
            s = replace(s, now_ms=s.now_ms + wait)
            cfg = self._config(s)
            ok, t, _ = (True, 0, None) if cfg is None else qr.check(
                self._sensor(s), cfg, s.now_ms, qr.BUCKET_THROTTLES[self.config.throttle])
            return self._answer(s, n, strict, qc.ClientGhost(retried=(ok, t)))
        if isinstance(a, SendValidateOnly):
            cfg = self._config(s)
            throttle = qr.BUCKET_THROTTLES[self.config.throttle]
            before = self._sensor(s)
            ans = qr.validate_only(before, cfg, a.n, s.now_ms, self.config.accounting, throttle)
            real = qr.strict(before, cfg, a.n, s.now_ms, throttle)
            consumed = qr.measured(before, cfg, s.now_ms) != qr.measured(ans.sensor, cfg, s.now_ms)
            recorded = ans.admitted and self.config.accounting.recorded and cfg is not None
            nxt = self._with_sensor(s, ans.sensor, cfg, recorded=recorded)
            return replace(nxt, client=qc.ClientGhost(validate_only=(not ans.admitted, not real.admitted, consumed)))
        raise ValueError(f"not a quota-handlers action: {a!r}")

    def properties(self) -> Sequence[Property]:
        return self._kafka_properties() + self._client_properties()

    def _client_properties(self) -> tuple[Property, ...]:
        """The client capabilities' properties (spec/quota_client_properties.py), when they are on."""
        out: tuple[Property, ...] = ()
        if self.config.retry or self.config.permissive_sizes:
            out += qc.retry_properties()
        if self.config.validate_only_sizes:
            out += qc.validate_only_properties()
        return out

    def _kafka_properties(self) -> tuple[Property, ...]:
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

        def rate_admission_uses_quota_in_force(prev: HState, a: Any, nxt: HState) -> bool:
            """A request is admitted iff the Rate, measured now, is within the quota in force
            (Sensor.checkQuotas against the sensor's MetricConfig, which a quota change rewrites)."""
            if not isinstance(a, Send) or prev.rate is None:
                return True
            ok = quota_rate.check(prev.sensor, ref.QuotaConfig(prev.rate, self.config.samples, self.config.window_ms),
                                  prev.now_ms)[0]
            return ok == self._admitted(prev, a, nxt)

        src = "Kafka 3.8 ControllerMutationQuotaManager (StrictControllerMutationQuota.record, updateQuotaMetricConfigs)"
        promised = (self.config.profile,)
        unquoted = Property.always("unquoted_never_throttled", unquoted_never_throttled,
                                   description=unquoted_never_throttled.__doc__,
                                   source=src + "; UnboundedControllerMutationQuota", promised_by=promised)
        if self.config.sensor == RATE:  # the two bucket properties speak of tokens, which a Rate has not
            return (
                Property.transition("rate_admission_uses_quota_in_force", rate_admission_uses_quota_in_force,
                                    description=rate_admission_uses_quota_in_force.__doc__,
                                    source="Kafka Sensor.checkQuotas, Rate.measure; " + src, promised_by=promised),
                unquoted,
            )
        return (
            Property.always("overdraft_bounded_with_concurrent_handlers", overdraft_bounded_with_concurrent_handlers,
                            description=overdraft_bounded_with_concurrent_handlers.__doc__, source=src,
                            promised_by=promised),
            Property.transition("next_admission_uses_quota_in_force", next_admission_uses_quota_in_force,
                                description=next_admission_uses_quota_in_force.__doc__, source=src,
                                promised_by=promised),
            unquoted,
        )

    def _admitted(self, prev: HState, a: Send, nxt: HState) -> bool:
        """Did `a` pass the check? Non-atomic: the handler now holds its topic; atomic: the Rate gained
        an event over the sensor as the check purged it."""
        if nxt.pending[a.handler] is not None and prev.pending[a.handler] is None:
            return True
        events = lambda r: 0 if r is None else sum(x.event_count for x in r.samples)
        purged = None if prev.sensor is None else quota_rate.purge(prev.sensor, self._any_config(), prev.now_ms)
        return events(nxt.sensor) > events(purged)

    def _any_config(self) -> ref.QuotaConfig:
        return ref.QuotaConfig(Fraction(1), self.config.samples, self.config.window_ms)  # purging ignores the rate

    def describe(self) -> dict[str, Any]:
        return {"profile": self.config.profile, **self.config.describe()}

    # -- traces (JSON); the sensor's own columns only, so that `show` lists what changes ---------
    def state_to_json(self, s: HState) -> Any:
        out: dict[str, Any] = {"now_ms": s.now_ms, "rate": number_to_json(s.rate),
                               "sensor_rate": number_to_json(s.sensor_rate)}
        if self.config.sensor == RATE:
            out["samples"] = None if s.sensor is None else [
                [x.start_ms, x.last_event_ms, number_to_json(x.value), x.event_count] for x in s.sensor.samples]
            out["current_sample"] = None if s.sensor is None else s.sensor.current
        else:
            out["tokens"] = None if s.bucket is None else number_to_json(s.bucket.tokens)
            out["bucket_updated_ms"] = None if s.bucket is None else s.bucket.last_update_ms
        out = {**out, "pending": list(s.pending), "throttled_unquoted": s.throttled_unquoted}
        if s.client is not None:
            out["client"] = s.client.to_json()
        return out

    def state_from_json(self, data: Any) -> HState:
        if not isinstance(data, dict):
            raise ValueError(f"state: expected an object, got {data!r}")
        bucket = sensor = None
        if self.config.sensor == RATE:
            if data["samples"] is not None:
                sensor = quota_rate.RateSensor(tuple(
                    quota_rate.Sample(int(a), int(b), number_from_json(v, "samples.value", nullable=False), int(c))
                    for a, b, v, c in data["samples"]), int(data["current_sample"]))
        elif data["tokens"] is not None:
            bucket = ref.TokenBucket(number_from_json(data["tokens"], "tokens", nullable=False),
                                     int(data["bucket_updated_ms"]))
        pending = tuple(None if p is None else int(p) for p in data["pending"])
        if len(pending) != self.config.handlers:
            raise ValueError(f"pending: expected one entry per handler ({self.config.handlers}), got {len(pending)}")
        client = qc.ClientGhost.from_json(data["client"]) if data.get("client") is not None else None
        return HState(int(data["now_ms"]), number_from_json(data["rate"], "rate"),
                      number_from_json(data["sensor_rate"], "sensor_rate"), bucket, sensor, pending,
                      bool(data["throttled_unquoted"]), client)

    def action_to_json(self, a: Any) -> Any:
        if isinstance(a, Tick):
            return {"type": "Tick", "ms": a.ms}
        if isinstance(a, Send):
            return {"type": "Send", "handler": a.handler, "n": a.n}
        if isinstance(a, Record):
            return {"type": "Record", "handler": a.handler}
        if isinstance(a, RetryAfterThrottle):
            return {"type": "RetryAfterThrottle"}
        if isinstance(a, SendOld | SendValidateOnly):
            return {"type": type(a).__name__, "n": a.n}
        return {"type": "AlterQuota", "rate": number_to_json(a.rate)}

    def action_from_json(self, data: Any) -> Any:
        if not isinstance(data, dict) or "type" not in data:
            raise ValueError(f"action: expected an object with a type, got {data!r}")
        kind = data["type"]
        if kind == "Tick":
            return Tick(int(data["ms"]))
        if kind == "Send":
            return Send(int(data["handler"]), int(data["n"]))
        if kind == "Record":
            return Record(int(data["handler"]))
        if kind == "AlterQuota":
            return AlterQuota(number_from_json(data["rate"], "action.rate"))
        if kind == "RetryAfterThrottle":
            return RetryAfterThrottle()
        if kind in ("SendOld", "SendValidateOnly"):
            n = data.get("n")
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"action.n: expected a positive integer, got {n!r}")
            return SendOld(n) if kind == "SendOld" else SendValidateOnly(n)
        raise ValueError(f"action.type: not a quota-handlers action: {kind!r}")


__all__ = [
    "DEFAULT_CHECK_CONFIG",
    "HANDLERS_PROFILES",
    "RATE",
    "TOKEN_BUCKET",
    "AlterQuota",
    "HState",
    "HandlersConfig",
    "QuotaHandlersModel",
    "Record",
    "RetryAfterThrottle",
    "Send",
    "SendOld",
    "SendValidateOnly",
    "Tick",
    "config_from_mapping",
    "default_config",
]
