"""The controller mutation quota as an explorable transition system (profiles `kip599`, `kip599-draft`).

One principal (user "alice", quota set at the user level, so all its clients share one
bucket) under the rule of a profile. Actions, in this order in every state:

- `QuotaTick(ms)` for each ms of `config.ticks`: time passes;
- `ClientSendMutation(shape)` for each of `config.shapes`: a request arrives (at any time: the
  principal may use several connections, and Kafka mutes only the one that was throttled),
  as long as the measured tokens are at least `config.token_floor` (the environment's bound:
  without it old clients could overdraw the bucket for ever at one instant);
- `ClientRetryAfterThrottle()` when the last strict request had topics rejected: the client
  waits exactly the throttle time it was given, then sends the rejected topics again;
- `AdminAlterClientQuota(rate)` for each of `config.quota_changes` other than the rate in force
  (`None` removes the quota).

Every request goes through `kreassign.reference.quota.handle_request`; this module only keeps
the state canonical. Times are ages relative to now (the rules do not depend on the clock's
origin), so the state space is finite without a horizon; a bucket that every possible rate
would already have refilled to its burst is stored as `tokens=None` ("full"), which is exact
because refill is capped (min(burst, ...)); when the quota can only ever have one rate, the
bucket is refilled at every step (min(B, min(B, K + a) + b) = min(B, K + a + b)), which is
exact too. Tokens are exact Fractions. Every state is expanded (no boundary), so graph
properties see the whole graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from kreassign.checker.explore.protocol import Model
from kreassign.reference import quota as ref
from kreassign.spec import quota as spec_quota
from kreassign.spec.properties import Property
from kreassign.spec.quota import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    THROTTLING_QUOTA_EXCEEDED,
    AdminAlterClientQuota,
    ClientRetryAfterThrottle,
    ClientSendMutation,
    CreatableTopic,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    Principal,
    QuotaAction,
    QuotaEntity,
    QuotaModelState,
    QuotaTick,
    RequestShape,
    check_rate,
    quota_properties,
)

QUOTA_PROFILES = tuple(ref.RULES)  # ("kip599", "kip599-draft")

STRICT_SHAPES = (
    RequestShape(CREATE_TOPICS, 7, (1,)),
    RequestShape(CREATE_TOPICS, 7, (3,)),
    RequestShape(CREATE_TOPICS, 7, (1, 1)),
)
DEFAULT_SHAPES = STRICT_SHAPES + (RequestShape(CREATE_TOPICS, 5, (1,)),)


@dataclass(frozen=True)
class QuotaModelConfig:
    """The bounds of a quota model: the quota, time steps, request shapes, quota changes."""

    profile: str = "kip599"
    rate: Fraction = Fraction(1)  # controller_mutation_rate in force at the start (mutations/s)
    samples: int = 2  # controller.quota.window.num (Kafka: 11; 2 keeps the burst small)
    window_ms: int = 1000  # controller.quota.window.size.seconds × 1000
    ticks: tuple[int, ...] = (500, 1000)  # the steps by which time may pass, ms
    shapes: tuple[RequestShape, ...] = DEFAULT_SHAPES
    quota_changes: tuple[Fraction | None, ...] = ()  # rates an admin may set; None = remove the quota
    controller: str = ref.KRAFT  # who counts validateOnly
    max_interval_ms: int = 1000  # longest interval the admitted_within_interval ghost remembers
    # requests are sent only while the measured tokens are >= token_floor (strict requests never take
    # the tokens below -(largest topic) anyway); default: -(the largest request's mutations)
    token_floor: Fraction | None = None

    @property
    def burst(self) -> Fraction:
        return ref.burst(ref.QuotaConfig(self.rate, self.samples, self.window_ms))

    def __post_init__(self) -> None:
        if self.profile not in ref.RULES:
            raise ValueError(
                f"profile: unknown quota profile {self.profile!r}; known: {', '.join(ref.RULES)}"
            )
        object.__setattr__(self, "rate", check_rate(self.rate, "rate"))
        ref.QuotaConfig(self.rate, self.samples, self.window_ms)  # validates samples, window_ms
        if not isinstance(self.ticks, tuple) or not self.ticks:
            raise ValueError(f"ticks: expected a non-empty tuple of positive ints, got {self.ticks!r}")
        for i, t in enumerate(self.ticks):
            if isinstance(t, bool) or not isinstance(t, int) or t <= 0:
                raise ValueError(f"ticks[{i}]: expected a positive int (ms), got {t!r}")
        if not isinstance(self.shapes, tuple) or not self.shapes:
            raise ValueError(f"shapes: expected a non-empty tuple of RequestShape, got {self.shapes!r}")
        for i, s in enumerate(self.shapes):
            if not isinstance(s, RequestShape):
                raise ValueError(f"shapes[{i}]: expected a RequestShape, got {s!r}")
        if not isinstance(self.quota_changes, tuple):
            raise ValueError(f"quota_changes: expected a tuple, got {self.quota_changes!r}")
        object.__setattr__(
            self,
            "quota_changes",
            tuple(
                None if r is None else check_rate(r, f"quota_changes[{i}]")
                for i, r in enumerate(self.quota_changes)
            ),
        )
        if self.controller not in ref.CONTROLLERS:
            raise ValueError(
                f"controller: expected one of {', '.join(ref.CONTROLLERS)}, got {self.controller!r}"
            )
        if (
            isinstance(self.max_interval_ms, bool)
            or not isinstance(self.max_interval_ms, int)
            or self.max_interval_ms < 0
        ):
            raise ValueError(f"max_interval_ms: expected an int >= 0, got {self.max_interval_ms!r}")
        if self.token_floor is None:
            object.__setattr__(self, "token_floor", Fraction(-max(sum(s.sizes) for s in self.shapes)))
        elif isinstance(self.token_floor, bool) or not isinstance(self.token_floor, int | Fraction):
            raise ValueError(f"token_floor: expected an int or Fraction, got {self.token_floor!r}")
        else:
            object.__setattr__(self, "token_floor", Fraction(self.token_floor))

    def describe(self) -> dict[str, Any]:
        """The configuration as JSON data (`config_from_mapping` reads it back; `burst` is derived)."""
        fmt = spec_quota.number_to_json
        return {
            "profile": self.profile,
            "rate": fmt(self.rate),
            "samples": self.samples,
            "window_ms": self.window_ms,
            "burst": fmt(ref.burst(ref.QuotaConfig(self.rate, self.samples, self.window_ms))),
            "ticks": list(self.ticks),
            "shapes": [spec_quota.shape_to_json(s) for s in self.shapes],
            "quota_changes": [fmt(r) for r in self.quota_changes],
            "controller": self.controller,
            "max_interval_ms": self.max_interval_ms,
            "token_floor": fmt(self.token_floor),
        }


def config_from_mapping(data: Any, profile: str | None = None) -> QuotaModelConfig:
    """A QuotaModelConfig from `describe()`-shaped JSON data (a trace's bounds); ValueError names the field.

    `burst` and `rule`, derived values that `describe()` adds, are checked, not read.
    """
    if not isinstance(data, dict):
        raise ValueError(f"bounds: expected an object, got {data!r}")
    fields = {
        "profile",
        "rate",
        "samples",
        "window_ms",
        "ticks",
        "shapes",
        "quota_changes",
        "controller",
        "max_interval_ms",
        "token_floor",
    }
    unknown = set(data) - fields - {"burst", "rule"}
    if unknown:
        raise ValueError(f"bounds.{sorted(unknown)[0]}: unknown field")
    kw: dict[str, Any] = {}
    if profile is not None:
        kw["profile"] = profile
    for key in ("profile", "samples", "window_ms", "controller", "max_interval_ms"):
        if key in data and key not in kw:
            kw[key] = data[key]
    if "rate" in data:
        kw["rate"] = spec_quota.number_from_json(data["rate"], "bounds.rate", nullable=False)
    if "token_floor" in data:
        kw["token_floor"] = spec_quota.number_from_json(data["token_floor"], "bounds.token_floor")
    for key in ("ticks", "shapes", "quota_changes"):
        if key in data and not isinstance(data[key], list):
            raise ValueError(f"bounds.{key}: expected a list, got {data[key]!r}")
    if "ticks" in data:
        kw["ticks"] = tuple(data["ticks"])
    if "shapes" in data:
        kw["shapes"] = tuple(
            spec_quota.shape_from_json(v, f"bounds.shapes[{i}]") for i, v in enumerate(data["shapes"])
        )
    if "quota_changes" in data:
        kw["quota_changes"] = tuple(
            spec_quota.number_from_json(v, f"bounds.quota_changes[{i}]")
            for i, v in enumerate(data["quota_changes"])
        )
    try:
        cfg = QuotaModelConfig(**kw)
    except ValueError as e:
        raise ValueError(f"bounds.{e}") from None
    if "burst" in data and spec_quota.number_to_json(cfg.burst) != data["burst"]:
        raise ValueError(
            f"bounds.burst: {data['burst']!r} does not match samples x window x rate = {cfg.burst}"
        )
    if "rule" in data and data["rule"] != cfg.profile:
        raise ValueError(
            f"bounds.rule: {data['rule']!r} is not a profile's rule (a mutant cannot be rebuilt)"
        )
    return cfg


#: named bounded configurations (profile kip599; use `dataclasses.replace(cfg, profile=...)`)
QUOTA_CONFIGS: dict[str, QuotaModelConfig] = {
    # burst 2, strict [1], [3], [1,1] and permissive [1]
    "small": QuotaModelConfig(),
    # the same without the old client, and intervals up to 2 s
    "strict-only": QuotaModelConfig(shapes=STRICT_SHAPES, max_interval_ms=2000),
    # one-topic requests at 3 mutations/s: 1000/3 ms does not round exactly
    "rounding": QuotaModelConfig(
        rate=Fraction(3),
        samples=1,
        ticks=(1000,),
        shapes=(RequestShape(CREATE_TOPICS, 7, (1,)), RequestShape(CREATE_TOPICS, 7, (4,))),
    ),
    # the small strict config with an admin raising, removing and restoring the quota
    "quota-change": QuotaModelConfig(
        shapes=STRICT_SHAPES, ticks=(1000,), quota_changes=(Fraction(1), Fraction(2), None)
    ),
}


def build_request(shape: RequestShape) -> tuple[Any, dict[str, int]]:
    """A Kafka request whose topics t0, t1, ... count exactly `shape.sizes`, with the metadata
    (existing topics and their partition counts) that makes every topic valid."""
    names = [f"t{i}" for i in range(len(shape.sizes))]
    if shape.api == CREATE_TOPICS:
        topics = tuple(CreatableTopic(n, num_partitions=k) for n, k in zip(names, shape.sizes, strict=True))
        return CreateTopicsRequest(topics, validate_only=shape.validate_only, version=shape.version), {}
    if shape.api == DELETE_TOPICS:
        return DeleteTopicsRequest(tuple(names), version=shape.version), dict(
            zip(names, shape.sizes, strict=True)
        )
    if shape.api == CREATE_PARTITIONS:
        topics = tuple(CreatePartitionsTopic(n, 1 + k) for n, k in zip(names, shape.sizes, strict=True))
        return (
            CreatePartitionsRequest(topics, validate_only=shape.validate_only, version=shape.version),
            {n: 1 for n in names},
        )
    raise ValueError(
        f"shape.api: not a mutation request: {shape.api!r}"
    )  # pragma: no cover - RequestShape checks


class QuotaModel(Model[QuotaModelState, QuotaAction]):
    """The mutation quota of one principal as a Model (init_states / actions / next_state / properties)."""

    PRINCIPAL = Principal("alice", "app")
    ENTITY = QuotaEntity("alice", None)
    KEY: ref.SensorKey = ("alice", "")

    def __init__(self, config: QuotaModelConfig | None = None, *, rule: ref.AdmissionRule | None = None):
        self.config = config if config is not None else QuotaModelConfig()
        self.rule = rule if rule is not None else ref.rule(self.config.profile)
        self.name = self.config.profile if rule is None else f"{self.config.profile}+{rule.name}"
        rates = {self.config.rate} | {r for r in self.config.quota_changes if r is not None}
        self._configs = tuple(self._quota_config(r) for r in sorted(rates))
        props = quota_properties(burst_of=self.burst_of, measure=self.measure)
        if not self.has_large_topic():  # without a topic larger than a burst the liveness goal is moot
            props = tuple(p for p in props if p.name != spec_quota.LARGE_TOPIC_EVENTUALLY_ADMITTED)
        self._properties = props
        # memo tables: the reference is pure, so its answers can be kept
        self._bucket_cache: dict[tuple[Fraction, int], tuple[Fraction | None, int]] = {}
        self._send_cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._measure_cache: dict[tuple[Any, ...], Fraction | float] = {}

    # -- helpers on the reference ------------------------------------------------------
    def _quota_config(self, rate: Fraction) -> ref.QuotaConfig:
        return ref.QuotaConfig(rate, self.config.samples, self.config.window_ms)

    def has_large_topic(self) -> bool:
        """True iff some strict shape has a topic larger than the burst of some rate the quota can take."""
        largest = max((max(s.sizes) for s in self.config.shapes if s.strict), default=0)
        return any(largest > ref.burst(c) for c in self._configs)

    def burst_of(self, rate: Fraction) -> Fraction:
        """The burst of a rate under this configuration (reference.quota.burst)."""
        return ref.burst(self._quota_config(rate))

    @staticmethod
    def _bucket(state: QuotaModelState) -> ref.TokenBucket | None:
        # relative time: now = 0, so the last update was `since_update_ms` ago
        return None if state.tokens is None else ref.TokenBucket(state.tokens, -state.since_update_ms)

    def measure(self, state: QuotaModelState, after_ms: int = 0) -> Fraction | float:
        """The tokens the quota check would see `after_ms` from now (TokenBucket.measure); +inf unbounded."""
        if state.rate is None:
            return float("inf")
        key = (state.rate, state.tokens, state.since_update_ms, after_ms)
        hit = self._measure_cache.get(key)
        if hit is None:
            cfg = self._quota_config(state.rate)
            hit = ref.measure(self._bucket(state), cfg, after_ms, refill=self.rule.refill)[0]
            self._measure_cache[key] = hit
        return hit

    def _canonical(self, state: QuotaModelState) -> QuotaModelState:
        """The canonical form of the bucket part of a state (memoized; see `_canonical_bucket`)."""
        if state.tokens is None:
            return state
        tokens, since = self._canonical_bucket(state.tokens, state.since_update_ms)
        if tokens == state.tokens and since == state.since_update_ms:
            return state
        return replace(state, tokens=tokens, since_update_ms=since)

    def _canonical_bucket(self, tokens: Fraction, since: int) -> tuple[Fraction | None, int]:
        """Two exact reductions of a lazy bucket (tokens, ms since its last update):

        - if every rate the quota can take would refill it to its burst, it behaves as a fresh
          bucket: (None, 0) — exact because refill is capped at the burst;
        - if the quota can only ever have one rate, refilling now is the same as refilling later
          (min(B, min(B, K + a) + b) = min(B, K + a + b)): (refilled tokens, 0).
        """
        key = (tokens, since)
        hit = self._bucket_cache.get(key)
        if hit is None:
            b = ref.TokenBucket(tokens, -since)
            if all(self.rule.refill(b, c, 0).tokens == ref.burst(c) for c in self._configs):
                hit = (None, 0)
            elif len(self._configs) == 1 and since:
                hit = (self.rule.refill(b, self._configs[0], 0).tokens, 0)
            else:
                hit = key
            self._bucket_cache[key] = hit
        return hit

    # -- the protocol ------------------------------------------------------------------
    def init_states(self) -> Sequence[QuotaModelState]:
        return (QuotaModelState(rate=self.config.rate, tokens=None),)

    def actions(self, state: QuotaModelState) -> Sequence[QuotaAction]:
        out: list[QuotaAction] = [QuotaTick(ms) for ms in self.config.ticks]
        if self.measure(state) >= self.config.token_floor:
            out += [ClientSendMutation(s) for s in self.config.shapes]
        if state.retry is not None:
            out.append(ClientRetryAfterThrottle())
        out += [AdminAlterClientQuota(r) for r in self.config.quota_changes if r != state.rate]
        return out

    def next_state(self, state: QuotaModelState, action: QuotaAction) -> QuotaModelState | None:
        if isinstance(action, QuotaTick):
            return self._tick(state, action.ms)
        if isinstance(action, ClientSendMutation):
            if self.measure(state) < self.config.token_floor:
                return None
            return self._send(state, action.shape)
        if isinstance(action, ClientRetryAfterThrottle):
            if state.retry is None:
                return None
            return self._send(self._tick(state, state.retry_in_ms), state.retry)
        if isinstance(action, AdminAlterClientQuota):
            if action.rate == state.rate:
                return None
            return self._canonical(
                replace(state, rate=action.rate, window=(), retry=None, retry_in_ms=0, rejected=0)
            )
        raise ValueError(f"action: not a quota action: {action!r}")

    def properties(self) -> Sequence[Property]:
        return self._properties

    # -- transitions -------------------------------------------------------------------
    def _tick(self, state: QuotaModelState, ms: int) -> QuotaModelState:
        keep_retry = state.retry is not None and state.retry_in_ms - ms >= 0
        return self._canonical(
            replace(
                state,
                since_update_ms=0 if state.tokens is None else state.since_update_ms + ms,
                mute_ms=self.rule.decay(state.mute_ms, 0, ms),
                rejected=0,
                window=tuple(
                    (age + ms, n, big)
                    for age, n, big in state.window
                    if age + ms <= self.config.max_interval_ms
                ),
                retry=state.retry if keep_retry else None,
                retry_in_ms=state.retry_in_ms - ms if keep_retry else 0,
                now_ms=state.now_ms + ms,
            )
        )

    def _admit(self, state: QuotaModelState, shape: RequestShape) -> tuple[Any, ...]:
        """Ask the reference to handle `shape` against the state's quota and bucket (memoized):
        (new tokens, new since_update_ms, error codes, counted per topic, throttle_time_ms)."""
        key = (state.rate, state.tokens, state.since_update_ms, shape)
        hit = self._send_cache.get(key)
        if hit is None:
            request, metadata = build_request(shape)
            mgr = ref.QuotaManagerState(
                quotas=() if state.rate is None else ((self.ENTITY, state.rate),),
                buckets=() if state.tokens is None else ((self.KEY, self._bucket(state)),),
                samples=self.config.samples,
                window_ms=self.config.window_ms,
            )
            out = ref.handle_request(
                mgr,
                self.PRINCIPAL,
                request,
                0,
                metadata=metadata,
                controller=self.config.controller,
                rule=self.rule,
            )
            assert out.response is not None
            bucket = out.state.bucket(self.KEY)
            hit = (
                None if bucket is None else bucket.tokens,
                0 if bucket is None else -bucket.last_update_ms,
                tuple(r.error_code for r in out.response.results),
                out.counted,
                out.response.throttle_time_ms,
            )
            self._send_cache[key] = hit
        return hit

    def _send(self, state: QuotaModelState, shape: RequestShape) -> QuotaModelState:
        tokens, since, errors, counted, throttle = self._admit(state, shape)
        rejected = [n for n, e in zip(shape.sizes, errors, strict=True) if e == THROTTLING_QUOTA_EXCEEDED]
        admitted = [
            n for n, e, c in zip(shape.sizes, errors, counted, strict=True) if e == 0 and c is not None
        ]
        window = state.window
        large = state.large_admitted
        if state.rate is not None and admitted:
            if window and window[0][0] == 0:
                _, n0, big0 = window[0]
                window = ((0, n0 + sum(admitted), max(big0, *admitted)),) + window[1:]
            else:
                window = ((0, sum(admitted), max(admitted)),) + window
            large = large or (shape.strict and max(admitted) > self.burst_of(state.rate))
        retry = replace(shape, sizes=tuple(rejected)) if (shape.strict and rejected) else None
        return self._canonical(
            replace(
                state,
                tokens=tokens,
                since_update_ms=since,
                mute_ms=throttle,
                rejected=len(rejected),
                window=window,
                retry=retry,
                retry_in_ms=throttle if retry is not None else 0,
                large_admitted=large,
            )
        )

    # -- presentation and JSON -----------------------------------------------------------
    def format_action(self, action: QuotaAction) -> str:
        return str(action)

    def state_to_json(self, state: QuotaModelState) -> Any:
        return spec_quota.state_to_json(state)

    def state_from_json(self, data: Any) -> QuotaModelState:
        return spec_quota.state_from_json(data)

    def action_to_json(self, action: QuotaAction) -> Any:
        return spec_quota.action_to_json(action)

    def action_from_json(self, data: Any) -> QuotaAction:
        return spec_quota.action_from_json(data)

    def describe(self) -> dict[str, Any]:
        d = self.config.describe()
        d["rule"] = self.rule.name
        return d


def quota_model(profile: str = "kip599", size: str = "small", **overrides: Any) -> QuotaModel:
    """The quota model of a profile on a named configuration (QUOTA_CONFIGS), with field overrides."""
    if size not in QUOTA_CONFIGS:
        raise ValueError(f"size: unknown quota configuration {size!r}; known: {', '.join(QUOTA_CONFIGS)}")
    if "shapes" in overrides and "token_floor" not in overrides:
        overrides["token_floor"] = None  # recomputed from the new shapes
    return QuotaModel(replace(QUOTA_CONFIGS[size], profile=profile, **overrides))


def default_quota_bounds(profile: str) -> Any:
    """The configuration `kreassign check` runs for a quota profile: "small" (the handlers profiles:
    their own default, checker/models/quota_handlers.py)."""
    from kreassign.checker.models import quota_handlers

    if profile in quota_handlers.HANDLERS_PROFILES:
        return quota_handlers.default_config(profile)
    return replace(QUOTA_CONFIGS["small"], profile=profile)


def quota_bounds_for_check(profile: str, config_path: str | None) -> Any:
    """What `kreassign check` explores for a quota profile: kip599 / kip599-draft their "small"
    configuration (they take no bounds; None here), a handlers profile its default under the
    `[quota_handlers]` table of the TOML file, if any. A bad table is a ConfigError naming the field."""
    from kreassign.checker.config.bounds import ConfigError
    from kreassign.checker.models import quota_handlers

    if profile not in quota_handlers.HANDLERS_PROFILES:
        return None
    if config_path is None:
        return quota_handlers.default_config(profile)
    import tomllib

    try:
        with open(config_path, "rb") as f:
            table = tomllib.load(f).get("quota_handlers", {})
        return quota_handlers.config_from_mapping(table, profile, where=f"{config_path}: quota_handlers",
                                                  variants=False, base=quota_handlers.default_config(profile))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as e:  # load_config reported it already
        raise ConfigError(f"{config_path}: cannot read: {e}") from None
    except ValueError as e:
        raise ConfigError(str(e)) from None


def quota_model_from_bounds(profile: str, bounds: Any) -> Any:
    """The quota model of `profile` from a QuotaModelConfig, a configuration name (QUOTA_CONFIGS),
    or a trace's bounds (the `describe()` mapping); for a handlers profile the QuotaHandlersModel
    from a HandlersConfig or its `describe()` mapping."""
    from kreassign.checker.models import quota_handlers

    if profile in quota_handlers.HANDLERS_PROFILES:
        if not isinstance(bounds, quota_handlers.HandlersConfig):
            bounds = quota_handlers.config_from_mapping(bounds, profile)
        elif bounds.profile != profile:
            raise ValueError(f"bounds.sensor: {bounds.sensor!r} is not the sensor of profile {profile}")
        return quota_handlers.QuotaHandlersModel(bounds)
    if isinstance(bounds, QuotaModelConfig):
        return QuotaModel(replace(bounds, profile=profile))
    if isinstance(bounds, str):
        return quota_model(profile, bounds)
    return QuotaModel(config_from_mapping(bounds, profile))
