"""Kafka's controller mutation quota (KIP-599) as pure functions; time is an argument in integer ms.

Mirrors `ControllerMutationQuotaManager` (one sensor with a `TokenBucket` per principal),
`StrictControllerMutationQuota` (new clients: check, then record), `PermissiveControllerMutationQuota`
(old clients: record, never reject) and `UnboundedControllerMutationQuota` (no quota), as
KAFKA-SEMANTICS.md "Controller mutation quota (KIP-599)" gives them, plus the draft rule
of seed 002 ("admitted iff K >= N") as profile `kip599-draft`.

Arithmetic is exact: tokens and rates are `fractions.Fraction`, so `rate * ms / 1000` is
never rounded; the one rounding Kafka does (the throttle time, `Math.round`) is done
exactly as Java does it (half up). Nothing here mutates its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from kreassign.spec.messages import AlterPartitionReassignmentsRequest
from kreassign.spec.quota import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DEFAULT_ENTITY,
    DELETE_TOPICS,
    INVALID_PARTITIONS,
    INVALID_REQUEST,
    NONE,
    THROTTLING_QUOTA_EXCEEDED,
    THROTTLING_QUOTA_EXCEEDED_MESSAGE,
    TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_OR_PARTITION,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    MutationResponse,
    Principal,
    QuotaEntity,
    TopicResult,
    check_rate,
    is_strict,
)

DEFAULT_SAMPLES = 11  # controller.quota.window.num
DEFAULT_WINDOW_MS = 1000  # controller.quota.window.size.seconds = 1
KRAFT = "kraft"
ZK = "zk"
CONTROLLERS = (KRAFT, ZK)


def _check_ms(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: expected an integer number of ms, got {type(value).__name__} {value!r}")
    return value


def _check_count(value: object, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | Fraction):
        raise ValueError(f"{name}: expected an int or Fraction, got {type(value).__name__} {value!r}")
    return Fraction(value)


# -- the token bucket (org.apache.kafka.common.metrics.stats.TokenBucket) -----------------


@dataclass(frozen=True, slots=True)
class QuotaConfig:
    """A sensor's MetricConfig for the quota: the bound (rate, mutations/s), samples and window."""

    rate: Fraction
    samples: int = DEFAULT_SAMPLES
    window_ms: int = DEFAULT_WINDOW_MS

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", check_rate(self.rate, "rate"))
        for name in ("samples", "window_ms"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{name}: expected an integer, got {type(v).__name__} {v!r}")
            if v < 1:
                raise ValueError(f"{name}: must be >= 1, got {v}")

    @property
    def burst(self) -> Fraction:
        return burst(self)


def burst(config: QuotaConfig) -> Fraction:
    """The bucket's capacity: samples × window × rate (KAFKA-SEMANTICS.md; defaults give 11 × rate)."""
    return config.samples * Fraction(config.window_ms, 1000) * config.rate


@dataclass(frozen=True, slots=True)
class TokenBucket:
    """TokenBucket's two fields: tokens (may be negative) and lastUpdateMs."""

    tokens: Fraction
    last_update_ms: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokens", _check_count(self.tokens, "tokens"))
        _check_ms(self.last_update_ms, "last_update_ms")


def refill(bucket: TokenBucket | None, config: QuotaConfig, now_ms: int) -> TokenBucket:
    """TokenBucket.refill: tokens = min(burst, tokens + rate × (now − last)/1000), last = now.

    A bucket never used (None) is full: Kafka's starts at tokens 0, lastUpdateMs 0, and the
    first refill over the whole epoch fills it.
    """
    _check_ms(now_ms, "now_ms")
    if bucket is None:
        return TokenBucket(burst(config), now_ms)
    elapsed = now_ms - bucket.last_update_ms
    if elapsed < 0:
        raise ValueError(f"now_ms: {now_ms} is before the bucket's last update {bucket.last_update_ms}")
    return TokenBucket(min(burst(config), bucket.tokens + config.rate * elapsed / 1000), now_ms)


def record(
    bucket: TokenBucket | None,
    config: QuotaConfig | None,
    value: int | Fraction,
    now_ms: int,
    *,
    refill: Callable[[TokenBucket | None, QuotaConfig, int], TokenBucket] = refill,
) -> TokenBucket | None:
    """TokenBucket.record: refill, then tokens = min(burst, tokens − value) (a negative value adds, capped).

    Without a quota (config None) nothing is recorded (TokenBucket returns at once).
    """
    v = _check_count(value, "value")
    if config is None:
        return bucket
    b = refill(bucket, config, now_ms)
    return TokenBucket(min(burst(config), b.tokens - v), now_ms)


def measure(
    bucket: TokenBucket | None,
    config: QuotaConfig | None,
    now_ms: int,
    *,
    refill: Callable[[TokenBucket | None, QuotaConfig, int], TokenBucket] = refill,
) -> tuple[Fraction | float, TokenBucket | None]:
    """TokenBucket.measure: refill to now and return (tokens, refilled bucket); +inf without a quota."""
    if config is None:
        _check_ms(now_ms, "now_ms")
        return math.inf, bucket
    b = refill(bucket, config, now_ms)
    return b.tokens, b


# -- throttle time -----------------------------------------------------------------------


def java_round(x: Fraction) -> int:
    """Java's Math.round on an exact value: floor(x + 1/2) (halves round up)."""
    return math.floor(x + Fraction(1, 2))


def throttle_time_ms(tokens: Fraction, rate: Fraction) -> int:
    """ControllerMutationQuotaManager.throttleTimeMs: Math.round(−tokens / rate × 1000) (tokens < 0)."""
    return java_round(-Fraction(tokens) / Fraction(rate) * 1000)


def decayed_throttle_ms(throttle_ms: int, recorded_ms: int, now_ms: int) -> int:
    """AbstractControllerMutationQuota.throttleTime: max(0, throttle − (now − recordedAt))."""
    return max(0, throttle_ms - (now_ms - recorded_ms))


def response_throttle_ms(mutation_throttle_ms: int, request_throttle_ms: int = 0) -> int:
    """sendResponseMaybeThrottleWithControllerQuota: the larger of the two quotas' throttles."""
    return max(mutation_throttle_ms, request_throttle_ms)


def channel_muted(throttle_ms: int) -> bool:
    """The channel is muted for the throttle time when it is > 0 (KIP-599, as for the request quota)."""
    return throttle_ms > 0


# -- per-topic admission strategies --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicDecision:
    """What one topic's mutations did to the bucket: admitted or not, and a throttle if one was set."""

    admitted: bool
    bucket: TokenBucket
    throttle_ms: int | None = None  # None: this topic set no throttle


BucketRefill = Callable[[TokenBucket | None, QuotaConfig, int], TokenBucket]
TopicRule = Callable[..., TopicDecision]


def strict_check_then_record(
    bucket: TokenBucket | None, config: QuotaConfig, n: int, now_ms: int, *, refill: BucketRefill = refill
) -> TopicDecision:
    """StrictControllerMutationQuota.record: checkQuotas (tokens < 0 → 89, nothing recorded,
    throttle from the deficit), else record all n (tokens may go far below 0)."""
    tokens, b = measure(bucket, config, now_ms, refill=refill)
    if tokens < 0:
        return TopicDecision(False, b, throttle_time_ms(tokens, config.rate))
    return TopicDecision(True, record(b, config, n, now_ms, refill=refill))


def draft_admit_if_enough(
    bucket: TokenBucket | None, config: QuotaConfig, n: int, now_ms: int, *, refill: BucketRefill = refill
) -> TopicDecision:
    """Seed 002's draft: "a partition mutation with N partitions is admitted iff K >= N, and updates
    K = K − N"; a rejected one must wait until K reaches N: (N − K) / R seconds (the seed's
    "R × (−K + N)" read with the dimensions right), rounded like Kafka's throttle."""
    tokens, b = measure(bucket, config, now_ms, refill=refill)
    if tokens >= n:
        return TopicDecision(True, record(b, config, n, now_ms, refill=refill))
    return TopicDecision(False, b, java_round((n - tokens) / config.rate * 1000))


def permissive_record(
    bucket: TokenBucket | None, config: QuotaConfig, n: int, now_ms: int, *, refill: BucketRefill = refill
) -> TopicDecision:
    """PermissiveControllerMutationQuota.record: record first, never reject; if tokens < 0
    afterwards, the throttle is set from the deficit."""
    b = record(bucket, config, n, now_ms, refill=refill)
    assert b is not None
    return TopicDecision(True, b, throttle_time_ms(b.tokens, config.rate) if b.tokens < 0 else None)


def last_throttle(throttles: Sequence[int]) -> int:
    """Kafka: each violation overwrites lastThrottleTimeMs, so the response carries the last one."""
    return throttles[-1]


def min_throttle(throttles: Sequence[int]) -> int:
    """Seed 002: "min(<throttle time of each rejected topics in the request>)"."""
    return min(throttles)


@dataclass(frozen=True, slots=True)
class AdmissionRule:
    """One profile's quota rules as named strategy functions (mutants replace one field)."""

    name: str
    strict_topic: TopicRule
    permissive_topic: TopicRule
    combine_throttles: Callable[[Sequence[int]], int]
    decay: Callable[[int, int, int], int] = decayed_throttle_ms
    refill: BucketRefill = refill


KIP599 = AdmissionRule("kip599", strict_check_then_record, permissive_record, last_throttle)
KIP599_DRAFT = AdmissionRule("kip599-draft", draft_admit_if_enough, permissive_record, min_throttle)
RULES: dict[str, AdmissionRule] = {r.name: r for r in (KIP599, KIP599_DRAFT)}


def rule(name: str) -> AdmissionRule:
    """The admission rule of quota profile `name` ("kip599" or "kip599-draft")."""
    if name not in RULES:
        raise ValueError(f"profile: unknown quota profile {name!r}; known: {', '.join(RULES)}")
    return RULES[name]


@dataclass(frozen=True, slots=True)
class Admission:
    """The outcome of admitting one request's topics against one bucket."""

    bucket: TokenBucket | None
    admitted: tuple[bool, ...]  # per topic; True also for topics that were not counted
    throttle_ms: int  # the mutation throttle recorded at `now_ms` (0 if none was set)


def admit(
    bucket: TokenBucket | None,
    config: QuotaConfig | None,
    counts: Sequence[int | None],
    now_ms: int,
    *,
    strict: bool,
    rule: AdmissionRule = KIP599,
) -> Admission:
    """Admit a request's topics in order. `counts[i]` is the topic's partition mutations, or None
    when the topic is not counted (validation error, ZooKeeper validateOnly). Without a quota
    (config None) everything is admitted and nothing recorded (UnboundedControllerMutationQuota)."""
    _check_ms(now_ms, "now_ms")
    if config is None:
        return Admission(bucket, tuple(True for _ in counts), 0)
    topic_rule = rule.strict_topic if strict else rule.permissive_topic
    admitted: list[bool] = []
    throttles: list[int] = []
    for i, n in enumerate(counts):
        if n is None:
            admitted.append(True)
            continue
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"counts[{i}]: expected a non-negative int, got {n!r}")
        d = topic_rule(bucket, config, n, now_ms, refill=rule.refill)
        bucket = d.bucket
        admitted.append(d.admitted)
        if d.throttle_ms is not None:
            throttles.append(d.throttle_ms)
    return Admission(bucket, tuple(admitted), rule.combine_throttles(throttles) if throttles else 0)


# -- ControllerMutationQuotaManager: quotas per principal -------------------------------------

SensorKey = tuple[str, str]  # the sensor's metric tags (user, client-id); "" = not part of the key


@dataclass(frozen=True, slots=True)
class QuotaManagerState:
    """The quota manager's state: quota entities and rates, and one bucket per sensor key.

    Buckets persist when a quota changes or is removed (Kafka keeps the sensor; only the
    MetricConfig's bound changes), so the next admission refills, caps and checks with
    the new value.
    """

    quotas: tuple[tuple[QuotaEntity, Fraction], ...] = ()  # sorted by entity (users, then client-only)
    buckets: tuple[tuple[SensorKey, TokenBucket], ...] = ()  # sorted by key
    samples: int = DEFAULT_SAMPLES
    window_ms: int = DEFAULT_WINDOW_MS

    def __post_init__(self) -> None:
        QuotaConfig(1, self.samples, self.window_ms)  # validates samples and window_ms

    def bucket(self, key: SensorKey) -> TokenBucket | None:
        return dict(self.buckets).get(key)


def _entity_order(e: QuotaEntity) -> tuple[bool, str, bool, str]:
    return (e.user is None, e.user or "", e.client_id is None, e.client_id or "")


def set_quota(
    state: QuotaManagerState, entity: QuotaEntity, rate: int | Fraction | None
) -> QuotaManagerState:
    """AlterClientQuotas on controller_mutation_rate: set (rate) or remove (None) an entity's quota."""
    if not isinstance(entity, QuotaEntity):
        raise ValueError(f"entity: expected a QuotaEntity, got {entity!r}")
    quotas = dict(state.quotas)
    if rate is None:
        quotas.pop(entity, None)
    else:
        quotas[entity] = check_rate(rate, "rate")
    return replace(state, quotas=tuple(sorted(quotas.items(), key=lambda kv: _entity_order(kv[0]))))


def resolve_quota(state: QuotaManagerState, principal: Principal) -> tuple[SensorKey, QuotaConfig | None]:
    """The quota that applies to a principal and the key of the sensor it records in.

    Kafka's precedence (docs "Quotas"; ClientQuotaManager's DefaultQuotaCallback), first match wins:
    user+client, user+<default> client, user, <default> user+client, <default>+<default>,
    <default> user, client, <default> client. A user-level quota is shared by all the user's
    clients (key (user, "")); a default entity gives each principal its own bucket.
    No match: no quota, unbounded.
    """
    if not isinstance(principal, Principal):
        raise ValueError(f"principal: expected a Principal, got {principal!r}")
    u, c, d = principal.user, principal.client_id, DEFAULT_ENTITY
    quotas = dict(state.quotas)
    levels = (
        (QuotaEntity(u, c), (u, c)),
        (QuotaEntity(u, d), (u, c)),
        (QuotaEntity(u, None), (u, "")),
        (QuotaEntity(d, c), (u, c)),
        (QuotaEntity(d, d), (u, c)),
        (QuotaEntity(d, None), (u, "")),
        (QuotaEntity(None, c), ("", c)),
        (QuotaEntity(None, d), ("", c)),
    )
    for entity, key in levels:
        if entity in quotas:
            return key, QuotaConfig(quotas[entity], state.samples, state.window_ms)
    return ("", ""), None


def _with_bucket(state: QuotaManagerState, key: SensorKey, bucket: TokenBucket | None) -> QuotaManagerState:
    if bucket is None:
        return state
    buckets = dict(state.buckets)
    buckets[key] = bucket
    return replace(state, buckets=tuple(sorted(buckets.items())))


# -- what each request counts ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Counted:
    """One topic before the quota: its mutations (None = not counted) or a validation error."""

    name: str
    count: int | None
    error_code: int = NONE
    error_message: str | None = None


def _duplicates(names: Sequence[str]) -> set[str]:
    seen: set[str] = set()
    dups: set[str] = set()
    for n in names:
        (dups if n in seen else seen).add(n)
    return dups


def _check_controller(controller: str) -> None:
    if controller not in CONTROLLERS:
        raise ValueError(f"controller: expected one of {', '.join(CONTROLLERS)}, got {controller!r}")


def mutation_counts(
    request: object,
    metadata: Mapping[str, int] | None = None,
    *,
    controller: str = KRAFT,
    default_partitions: int = 1,
) -> tuple[Counted, ...]:
    """The partition mutations each topic of a request counts, in request order.

    CreateTopics: the topic's partitions (len(assignments), or num_partitions, -1 = the
    broker's num.partitions); DeleteTopics: the topic's current partition count (metadata);
    CreatePartitions: count − current. validateOnly is counted by KRaft (the quota is applied
    before the records are discarded) and not by ZooKeeper (ZkAdminManager records only when it
    writes). Topics failing validation are not counted. AlterPartitionReassignments counts nothing.
    """
    _check_controller(controller)
    meta = dict(metadata or {})
    for name, n in meta.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"metadata[{name!r}]: expected a partition count >= 1, got {n!r}")
    if isinstance(request, AlterPartitionReassignmentsRequest):
        return ()
    if isinstance(request, CreateTopicsRequest):
        dups = _duplicates([t.name for t in request.topics])
        out = []
        for t in request.topics:
            if t.name in dups:
                out.append(Counted(t.name, None, INVALID_REQUEST, "Duplicate topic name."))
            elif t.name in meta:
                out.append(Counted(t.name, None, TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists."))
            elif t.assignments and t.num_partitions != -1:
                out.append(
                    Counted(
                        t.name,
                        None,
                        INVALID_REQUEST,
                        "Both numPartitions or replicationFactor and replicasAssignments were set. "
                        "Both cannot be used at the same time.",
                    )
                )
            else:
                n = (
                    len(t.assignments)
                    if t.assignments
                    else (default_partitions if t.num_partitions == -1 else t.num_partitions)
                )
                if n <= 0:
                    out.append(
                        Counted(
                            t.name, None, INVALID_PARTITIONS, "Number of partitions must be larger than 0."
                        )
                    )
                else:
                    counted = None if (request.validate_only and controller == ZK) else n
                    out.append(Counted(t.name, counted))
        return tuple(out)
    if isinstance(request, DeleteTopicsRequest):
        dups = _duplicates(request.topic_names)
        out = []
        for name in request.topic_names:
            if name in dups:
                out.append(Counted(name, None, INVALID_REQUEST, "Duplicate topic name."))
            elif name not in meta:
                out.append(
                    Counted(
                        name,
                        None,
                        UNKNOWN_TOPIC_OR_PARTITION,
                        "This server does not host this topic-partition.",
                    )
                )
            else:
                out.append(Counted(name, meta[name]))
        return tuple(out)
    if isinstance(request, CreatePartitionsRequest):
        dups = _duplicates([t.name for t in request.topics])
        out = []
        for t in request.topics:
            if t.name in dups:
                out.append(Counted(t.name, None, INVALID_REQUEST, "Duplicate topic name."))
            elif t.name not in meta:
                out.append(
                    Counted(
                        t.name,
                        None,
                        UNKNOWN_TOPIC_OR_PARTITION,
                        "This server does not host this topic-partition.",
                    )
                )
            elif t.count <= meta[t.name]:
                current = meta[t.name]
                msg = (
                    f"Topic already has {current} partitions."
                    if t.count == current
                    else f"Topic currently has {current} partitions, which is higher than the requested "
                    f"{t.count}."
                )
                out.append(Counted(t.name, None, INVALID_PARTITIONS, msg))
            else:
                added = t.count - meta[t.name]
                out.append(Counted(t.name, None if (request.validate_only and controller == ZK) else added))
        return tuple(out)
    raise ValueError(f"request: not a request the quota knows: {type(request).__name__}")


_API = {
    CreateTopicsRequest: CREATE_TOPICS,
    DeleteTopicsRequest: DELETE_TOPICS,
    CreatePartitionsRequest: CREATE_PARTITIONS,
}


@dataclass(frozen=True, slots=True)
class QuotaOutcome:
    """The result of handling one request: the new state, Kafka's response, the mutations counted
    per topic (None = not counted), and whether the channel is muted."""

    state: QuotaManagerState
    response: MutationResponse | None  # None for AlterPartitionReassignments (not the quota's to answer)
    counted: tuple[int | None, ...]
    channel_muted: bool = False

    @property
    def throttle_time_ms(self) -> int:
        return 0 if self.response is None else self.response.throttle_time_ms


def handle_request(
    state: QuotaManagerState,
    principal: Principal,
    request: object,
    now_ms: int,
    *,
    metadata: Mapping[str, int] | None = None,
    controller: str = KRAFT,
    rule: AdmissionRule = KIP599,
    response_ms: int | None = None,
    request_throttle_ms: int = 0,
    default_partitions: int = 1,
) -> QuotaOutcome:
    """Handle a CreateTopics / DeleteTopics / CreatePartitions request under the mutation quota.

    The version decides strict or permissive; topics are admitted in request order; the
    response's throttle is the mutation throttle decayed to `response_ms` (default: now;
    later if the request waited in the purgatory), maxed with the request quota's throttle.
    AlterPartitionReassignments is counted by nothing: state unchanged, no response.
    """
    _check_ms(now_ms, "now_ms")
    response_at = now_ms if response_ms is None else _check_ms(response_ms, "response_ms")
    if response_at < now_ms:
        raise ValueError(f"response_ms: {response_at} is before now_ms {now_ms}")
    if _check_ms(request_throttle_ms, "request_throttle_ms") < 0:
        raise ValueError(f"request_throttle_ms: must be >= 0, got {request_throttle_ms}")
    topics = mutation_counts(request, metadata, controller=controller, default_partitions=default_partitions)
    if isinstance(request, AlterPartitionReassignmentsRequest):
        return QuotaOutcome(state, None, ())
    api = _API[type(request)]
    key, config = resolve_quota(state, principal)
    counts = [t.count for t in topics]
    adm = admit(state.bucket(key), config, counts, now_ms, strict=is_strict(api, request.version), rule=rule)
    results = []
    for t, ok in zip(topics, adm.admitted, strict=True):
        if t.error_code != NONE:
            results.append(TopicResult(t.name, t.error_code, t.error_message))
        elif ok:
            results.append(TopicResult(t.name))
        else:
            results.append(TopicResult(t.name, THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE))
    throttle = response_throttle_ms(rule.decay(adm.throttle_ms, now_ms, response_at), request_throttle_ms)
    new_state = _with_bucket(state, key, adm.bucket) if config is not None else state
    return QuotaOutcome(
        new_state,
        MutationResponse(api, tuple(results), throttle),
        tuple(None if t.error_code != NONE else t.count for t in topics),
        channel_muted(throttle),
    )
