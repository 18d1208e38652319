"""The controller mutation quota (KIP-599, seed 002): requests, model states, actions, properties.

What is modelled: one principal's token bucket of partition mutations (Kafka's
`TokenBucket` inside `ControllerMutationQuotaManager`), the three request types it
throttles (CreateTopics, DeleteTopics, CreatePartitions) shaped like Kafka's
messages, strict (new clients) and permissive (old clients) admission, the throttle
time a response carries and how it decays, and quota changes (AlterClientQuotas).
What `reference/quota.py` does with them is the single source of semantics; this
module only names values and says what must hold.

Left out on purpose: the request quota itself (its throttle is an input, 0 in the
model), the purgatory (a response is sent at the time of the request in the model),
sensor expiry (a bucket lives for ever), several principals in one model (buckets
of different principals never interact), topic existence in the model (each request
shape is built so that every topic is valid; validation errors are unit-tested).

Time is an integer number of milliseconds. Tokens are exact rationals
(`fractions.Fraction`): a rate of r mutations/s refills r*ms/1000 tokens in ms
milliseconds, exactly, whatever r and ms are.

Found by the checker (docs/quota.md has the shortest scenarios):

1. Kafka's rule (`kip599`) keeps the tokens within the burst, never lets a strict request
   take them below -(its largest topic), never rejects an old client, never gives a
   negative throttle, and never starves a topic larger than the burst.
2. Strict admissions in any interval of length D stay within burst + rate*D + the largest
   topic, and reach it exactly; old clients (permissive) break that bound.
3. Waiting the throttle time given does not guarantee the retry: the wait only brings the
   tokens back to 0, which admits one topic of a multi-topic request, and
   round(-K/R*1000) can round the wait down (rate 3/s: 333 ms for 1/3 s).
4. The draft rule (`kip599-draft`, "admitted iff K >= N") starves a topic larger than the
   burst for ever, and its throttle time for it is a lie; it never overdraws for new
   clients.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .properties import Property

# -- protocol facts ---------------------------------------------------------------

CREATE_TOPICS = "CreateTopics"
DELETE_TOPICS = "DeleteTopics"
CREATE_PARTITIONS = "CreatePartitions"
ALTER_PARTITION_REASSIGNMENTS = "AlterPartitionReassignments"

#: first strict version of each request (KIP-599; `newQuotaFor(request, strictSinceVersion)` in KafkaApis)
STRICT_SINCE: dict[str, int] = {CREATE_TOPICS: 6, DELETE_TOPICS: 5, CREATE_PARTITIONS: 3}
#: highest version of each request in Kafka 3.9
MAX_VERSION: dict[str, int] = {CREATE_TOPICS: 7, DELETE_TOPICS: 6, CREATE_PARTITIONS: 3}
MUTATION_APIS = tuple(STRICT_SINCE)

# Kafka error codes (org.apache.kafka.common.protocol.Errors) used by the quota reference.
NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REQUEST = 42
THROTTLING_QUOTA_EXCEEDED = 89
THROTTLING_QUOTA_EXCEEDED_MESSAGE = "The throttling quota has been exceeded."

#: Kafka's name for the default entity in quota configs (ConfigEntityName.Default)
DEFAULT_ENTITY = "<default>"


def check_version(api: str, version: int, field_name: str = "version") -> None:
    """Raise ValueError naming `field_name` unless `version` is a version of `api` Kafka 3.9 knows."""
    if api not in MAX_VERSION:
        raise ValueError(f"api: unknown mutation request {api!r}; known: {', '.join(MUTATION_APIS)}")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"{field_name}: expected an integer, got {type(version).__name__} {version!r}")
    if not 0 <= version <= MAX_VERSION[api]:
        raise ValueError(f"{field_name}: {api} has versions 0..{MAX_VERSION[api]}, got {version}")


def is_strict(api: str, version: int) -> bool:
    """True iff a request of this version is admitted strictly (KIP-599: v6 / v5 / v3 and later)."""
    check_version(api, version)
    return version >= STRICT_SINCE[api]


def check_rate(value: Any, name: str = "rate") -> Fraction:
    """A quota rate as an exact Fraction; ValueError naming `name` unless it is a positive int or Fraction.

    Floats are refused: the model is exact, and 0.1 is not 1/10 in binary.
    """
    if isinstance(value, bool) or not isinstance(value, int | Fraction):
        raise ValueError(
            f"{name}: expected a positive int or fractions.Fraction, got {type(value).__name__} {value!r}"
            + (f" (use Fraction({str(value)!r}) for an exact rate)" if isinstance(value, float) else "")
        )
    if value <= 0:
        raise ValueError(f"{name}: must be > 0, got {value}")
    return Fraction(value)


def _check_int(value: Any, name: str, minimum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: expected an integer, got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")


def _check_str(value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {type(value).__name__} {value!r}")


# -- principals and quota entities ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Principal:
    """Who sends a request: the authenticated user and the request header's client-id."""

    user: str = "ANONYMOUS"
    client_id: str = ""

    def __post_init__(self) -> None:
        _check_str(self.user, "principal.user")
        _check_str(self.client_id, "principal.client_id")


@dataclass(frozen=True, slots=True)
class QuotaEntity:
    """A quota config entity: /config/users/<user>[/clients/<client-id>] or /config/clients/<client-id>.

    `None` leaves that part out; DEFAULT_ENTITY ("<default>") is Kafka's default entity.
    """

    user: str | None = None
    client_id: str | None = None

    def __post_init__(self) -> None:
        if self.user is None and self.client_id is None:
            raise ValueError("entity: needs a user, a client_id or both")
        if self.user is not None:
            _check_str(self.user, "entity.user")
        if self.client_id is not None:
            _check_str(self.client_id, "entity.client_id")


# -- requests and responses (Kafka's message schemas, reduced to what the quota reads) --


@dataclass(frozen=True, slots=True)
class CreatableTopic:
    """CreateTopicsRequest.topics[i]: num_partitions -1 = the broker's num.partitions."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: tuple[tuple[int, ...], ...] = ()  # partition i -> broker ids; then num_partitions must be -1

    def __post_init__(self) -> None:
        _check_str(self.name, "topics[].name")
        _check_int(self.num_partitions, "topics[].num_partitions")
        _check_int(self.replication_factor, "topics[].replication_factor")


@dataclass(frozen=True, slots=True)
class CreateTopicsRequest:
    """CreateTopics (strict from v6)."""

    topics: tuple[CreatableTopic, ...]
    timeout_ms: int = 60000
    validate_only: bool = False
    version: int = 7

    def __post_init__(self) -> None:
        check_version(CREATE_TOPICS, self.version)


@dataclass(frozen=True, slots=True)
class DeleteTopicsRequest:
    """DeleteTopics (strict from v5); topics by name."""

    topic_names: tuple[str, ...]
    timeout_ms: int = 60000
    version: int = 6

    def __post_init__(self) -> None:
        check_version(DELETE_TOPICS, self.version)
        for i, n in enumerate(self.topic_names):
            _check_str(n, f"topic_names[{i}]")


@dataclass(frozen=True, slots=True)
class CreatePartitionsTopic:
    """CreatePartitionsRequest.topics[i]: `count` is the new total number of partitions."""

    name: str
    count: int
    assignments: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self) -> None:
        _check_str(self.name, "topics[].name")
        _check_int(self.count, "topics[].count")


@dataclass(frozen=True, slots=True)
class CreatePartitionsRequest:
    """CreatePartitions (strict from v3)."""

    topics: tuple[CreatePartitionsTopic, ...]
    timeout_ms: int = 60000
    validate_only: bool = False
    version: int = 3

    def __post_init__(self) -> None:
        check_version(CREATE_PARTITIONS, self.version)


MutationRequest = CreateTopicsRequest | DeleteTopicsRequest | CreatePartitionsRequest


@dataclass(frozen=True, slots=True)
class TopicResult:
    """One topic's result (CreatableTopicResult / DeletableTopicResult / CreatePartitionsTopicResult)."""

    name: str
    error_code: int = NONE
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class MutationResponse:
    """CreateTopics / DeleteTopics / CreatePartitions response: per-topic results and throttle_time_ms."""

    api: str
    results: tuple[TopicResult, ...]
    throttle_time_ms: int = 0

    def error(self, name: str) -> int:
        for r in self.results:
            if r.name == name:
                return r.error_code
        raise KeyError(f"{name} not in response")


# -- the transition system's values ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class RequestShape:
    """A request the model may send: its type, version and the partition mutations of each topic.

    The model turns a shape into a Kafka request whose topics count exactly `sizes`
    (CreateTopics: num_partitions; DeleteTopics: the topic's current partition count;
    CreatePartitions: the partitions added).
    """

    api: str
    version: int
    sizes: tuple[int, ...]
    validate_only: bool = False

    def __post_init__(self) -> None:
        check_version(self.api, self.version)
        if not isinstance(self.sizes, tuple) or not self.sizes:
            raise ValueError(f"sizes: expected a non-empty tuple of positive ints, got {self.sizes!r}")
        for i, n in enumerate(self.sizes):
            _check_int(n, f"sizes[{i}]", 1)
        if self.validate_only and self.api == DELETE_TOPICS:
            raise ValueError("validate_only: DeleteTopics has no validateOnly")

    @property
    def strict(self) -> bool:
        return is_strict(self.api, self.version)

    def __str__(self) -> str:
        vo = " validateOnly" if self.validate_only else ""
        return f"{self.api} v{self.version}{vo} [{','.join(map(str, self.sizes))}]"


@dataclass(frozen=True, slots=True)
class QuotaTick:
    """Time passes by `ms` milliseconds."""

    ms: int

    def __str__(self) -> str:
        return f"QuotaTick({self.ms}ms)"


@dataclass(frozen=True, slots=True)
class ClientSendMutation:
    """A client of the principal sends a request of one of the bounded shapes."""

    shape: RequestShape

    def __str__(self) -> str:
        return f"ClientSendMutation({self.shape})"


@dataclass(frozen=True, slots=True)
class ClientRetryAfterThrottle:
    """The client whose strict request was throttled waits exactly the throttle time it was given,
    then sends again the topics that were rejected (what Kafka's admin client retries)."""

    def __str__(self) -> str:
        return "ClientRetryAfterThrottle()"


@dataclass(frozen=True, slots=True)
class AdminAlterClientQuota:
    """An admin sets (`rate`) or removes (`rate=None`) the principal's controller_mutation_rate."""

    rate: Fraction | None

    def __post_init__(self) -> None:
        if self.rate is not None:
            object.__setattr__(self, "rate", check_rate(self.rate, "rate"))

    def __str__(self) -> str:
        return f"AdminAlterClientQuota({'remove' if self.rate is None else format_number(self.rate)})"


QuotaAction = QuotaTick | ClientSendMutation | ClientRetryAfterThrottle | AdminAlterClientQuota


@dataclass(frozen=True, slots=True)
class QuotaModelState:
    """One principal's quota as the model sees it. All times are ages relative to now, so the
    state space is finite without a horizon (the rules are invariant under a shift of time).

    `now_ms` is carried for reading traces and takes no part in equality or hashing.
    """

    rate: Fraction | None  # the quota in force (partition mutations/s); None = no quota: unbounded
    tokens: (
        Fraction | None
    )  # bucket tokens at its last update; None = full whatever the rate (unused or idle long enough)
    since_update_ms: int = 0  # now − the bucket's lastUpdateMs (0 when tokens is None)
    mute_ms: int = 0  # throttle of the last response, decayed to now: the channel is muted while > 0
    rejected: int = 0  # ghost: topics the last request had rejected with 89 (0 after any other action)
    # ghost: (age_ms, mutations admitted at that time, largest topic admitted then), ages ascending,
    # only ages <= the model's max_interval_ms, emptied when the quota changes
    window: tuple[tuple[int, int, int], ...] = ()
    retry: RequestShape | None = None  # ghost: the rejected topics of the last strict request, as retried
    retry_in_ms: int = 0  # ghost: ms left until the throttle given with `retry` has elapsed
    large_admitted: bool = False  # ghost: a strict request had a topic larger than the burst admitted
    now_ms: int = field(default=0, compare=False)  # absolute time, for traces only


# -- JSON ---------------------------------------------------------------------------------


def format_number(x: Fraction | int) -> str:
    """An exact rational as text: "3" or "3/2"."""
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def number_to_json(x: Fraction | None) -> int | str | None:
    if x is None:
        return None
    x = Fraction(x)
    return x.numerator if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def number_from_json(data: Any, name: str, *, nullable: bool = True) -> Fraction | None:
    """Read an int or a "p/q" string as an exact Fraction; ValueError names the field."""
    if data is None and nullable:
        return None
    if isinstance(data, bool) or not isinstance(data, int | str):
        raise ValueError(f'{name}: expected an integer or a "p/q" string, got {data!r}')
    try:
        return Fraction(data)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{name}: not an exact rational: {data!r}") from None


def shape_to_json(shape: RequestShape) -> dict[str, Any]:
    return {
        "api": shape.api,
        "version": shape.version,
        "sizes": list(shape.sizes),
        "validate_only": shape.validate_only,
    }


def shape_from_json(data: Any, name: str = "shape") -> RequestShape:
    if not isinstance(data, dict):
        raise ValueError(f"{name}: expected an object, got {data!r}")
    unknown = set(data) - {"api", "version", "sizes", "validate_only"}
    if unknown:
        raise ValueError(f"{name}.{sorted(unknown)[0]}: unknown field")
    for key in ("api", "version", "sizes"):
        if key not in data:
            raise ValueError(f"{name}.{key}: missing required field")
    if not isinstance(data["sizes"], list):
        raise ValueError(f"{name}.sizes: expected a list, got {data['sizes']!r}")
    vo = data.get("validate_only", False)
    if not isinstance(vo, bool):
        raise ValueError(f"{name}.validate_only: expected true or false, got {vo!r}")
    try:
        return RequestShape(data["api"], data["version"], tuple(data["sizes"]), vo)
    except ValueError as e:
        raise ValueError(f"{name}.{e}") from None


def action_to_json(action: QuotaAction) -> dict[str, Any]:
    if isinstance(action, QuotaTick):
        return {"type": "QuotaTick", "ms": action.ms}
    if isinstance(action, ClientSendMutation):
        return {"type": "ClientSendMutation", "shape": shape_to_json(action.shape)}
    if isinstance(action, ClientRetryAfterThrottle):
        return {"type": "ClientRetryAfterThrottle"}
    if isinstance(action, AdminAlterClientQuota):
        return {"type": "AdminAlterClientQuota", "rate": number_to_json(action.rate)}
    raise ValueError(f"action: not a quota action: {action!r}")


def action_from_json(data: Any) -> QuotaAction:
    if not isinstance(data, dict):
        raise ValueError(f"action: expected an object, got {data!r}")
    kind = data.get("type")
    if kind == "QuotaTick":
        ms = data.get("ms")
        _check_int(ms, "action.ms", 0)
        return QuotaTick(ms)
    if kind == "ClientSendMutation":
        return ClientSendMutation(shape_from_json(data.get("shape"), "action.shape"))
    if kind == "ClientRetryAfterThrottle":
        return ClientRetryAfterThrottle()
    if kind == "AdminAlterClientQuota":
        if "rate" not in data:
            raise ValueError("action.rate: missing required field")
        return AdminAlterClientQuota(number_from_json(data["rate"], "action.rate"))
    raise ValueError(
        f"action.type: unknown quota action {kind!r} "
        "(known: AdminAlterClientQuota, ClientRetryAfterThrottle, ClientSendMutation, QuotaTick)"
    )


_STATE_INT_FIELDS = ("since_update_ms", "mute_ms", "rejected", "retry_in_ms", "now_ms")


def state_to_json(state: QuotaModelState) -> dict[str, Any]:
    return {
        "rate": number_to_json(state.rate),
        "tokens": number_to_json(state.tokens),
        "since_update_ms": state.since_update_ms,
        "mute_ms": state.mute_ms,
        "rejected": state.rejected,
        "window": [list(w) for w in state.window],
        "retry": None if state.retry is None else shape_to_json(state.retry),
        "retry_in_ms": state.retry_in_ms,
        "large_admitted": state.large_admitted,
        "now_ms": state.now_ms,
    }


def state_from_json(data: Any) -> QuotaModelState:
    """Decode a QuotaModelState; ValueError names the offending field."""
    if not isinstance(data, dict):
        raise ValueError(f"state: expected an object, got {data!r}")
    known = {"rate", "tokens", "window", "retry", "large_admitted", *_STATE_INT_FIELDS}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"state.{sorted(unknown)[0]}: unknown field")
    for key in ("rate", "tokens"):
        if key not in data:
            raise ValueError(f"state.{key}: missing required field")
    rate = number_from_json(data["rate"], "state.rate")
    if rate is not None and rate <= 0:
        raise ValueError(f"state.rate: must be > 0, got {data['rate']!r}")
    ints = {}
    for key in _STATE_INT_FIELDS:
        v = data.get(key, 0)
        _check_int(v, f"state.{key}", None if key == "mute_ms" else 0)
        ints[key] = v
    window = data.get("window", [])
    if not isinstance(window, list):
        raise ValueError(f"state.window: expected a list, got {window!r}")
    entries = []
    for i, w in enumerate(window):
        if not isinstance(w, list) or len(w) != 3:
            raise ValueError(f"state.window[{i}]: expected [age_ms, admitted, largest], got {w!r}")
        for j, v in enumerate(w):
            _check_int(v, f"state.window[{i}][{j}]", 0)
        entries.append(tuple(w))
    large = data.get("large_admitted", False)
    if not isinstance(large, bool):
        raise ValueError(f"state.large_admitted: expected true or false, got {large!r}")
    retry = None if data.get("retry") is None else shape_from_json(data["retry"], "state.retry")
    return QuotaModelState(
        rate=rate,
        tokens=number_from_json(data["tokens"], "state.tokens"),
        window=tuple(entries),
        retry=retry,
        large_admitted=large,
        **ints,
    )


# -- properties ---------------------------------------------------------------------------

KIP599_PROFILES = ("kip599", "kip599-draft")

# property names (stable, snake_case); their verdicts per profile are in docs/quota.md
TOKENS_WITHIN_BURST = "tokens_within_burst"
STRICT_OVERDRAFT_BOUNDED = "strict_overdraft_bounded"
ADMITTED_WITHIN_INTERVAL = "admitted_within_interval"
PERMISSIVE_NEVER_REJECTS = "permissive_never_rejects"
THROTTLE_NEVER_NEGATIVE = "throttle_never_negative"
RETRY_AFTER_THROTTLE_ADMITTED = "retry_after_throttle_admitted"
LARGE_TOPIC_EVENTUALLY_ADMITTED = "large_topic_eventually_admitted"
SOMETIMES_THROTTLED = "sometimes_throttled"
SOMETIMES_OVERDRAWN = "sometimes_overdrawn"


def quota_properties(
    *,
    burst_of: Callable[[Fraction], Fraction],
    measure: Callable[[QuotaModelState, int], Fraction | float],
) -> tuple[Property, ...]:
    """The quota properties, given the burst of a rate and the measured tokens of a state after
    waiting `ms` more milliseconds (both from the reference, passed in by the model so that the
    spec does not re-encode the token bucket). Measured tokens are what Kafka's quota check sees
    (TokenBucket.measure: refilled to now with the rate in force); unbounded is +inf.
    """

    def tokens_within_burst(s: QuotaModelState) -> bool:
        return s.rate is None or measure(s, 0) <= burst_of(s.rate)

    def strict_overdraft_bounded(prev: QuotaModelState, a: Any, nxt: QuotaModelState) -> bool:
        if isinstance(a, ClientSendMutation):
            shape, wait = a.shape, 0
        elif isinstance(a, ClientRetryAfterThrottle) and prev.retry is not None:
            shape, wait = prev.retry, prev.retry_in_ms
        else:
            return True
        if not shape.strict or prev.rate is None:
            return True
        return measure(nxt, 0) >= min(measure(prev, wait), -max(shape.sizes))

    def admitted_within_interval(s: QuotaModelState) -> bool:
        if s.rate is None:
            return True
        b = burst_of(s.rate)
        total = largest = 0
        for age, admitted, big in s.window:  # ages ascending: the interval [now - age, now]
            total += admitted
            largest = max(largest, big)
            if total > b + s.rate * age / 1000 + largest:
                return False
        return True

    def permissive_never_rejects(prev: QuotaModelState, a: Any, nxt: QuotaModelState) -> bool:
        return not (isinstance(a, ClientSendMutation) and not a.shape.strict) or nxt.rejected == 0

    def throttle_never_negative(s: QuotaModelState) -> bool:
        return s.mute_ms >= 0 and s.retry_in_ms >= 0

    def retry_after_throttle_admitted(prev: QuotaModelState, a: Any, nxt: QuotaModelState) -> bool:
        return not isinstance(a, ClientRetryAfterThrottle) or nxt.rejected == 0

    def large_admitted(s: QuotaModelState) -> bool:
        return s.large_admitted

    def throttled(s: QuotaModelState) -> bool:
        return s.rejected > 0

    def overdrawn(s: QuotaModelState) -> bool:
        return s.rate is not None and measure(s, 0) < 0

    src = "KIP-599 (seed 002); KAFKA-SEMANTICS.md 'Controller mutation quota'"
    return (
        Property.always(
            TOKENS_WITHIN_BURST,
            tokens_within_burst,
            description="The measured tokens never exceed the burst (samples x window x rate) of the quota "
            "in force.",
            source=src + "; Kafka TokenBucket.refill/record (min(burst, ...))",
            promised_by=KIP599_PROFILES,
        ),
        Property.transition(
            STRICT_OVERDRAFT_BOUNDED,
            strict_overdraft_bounded,
            description="A strict request never takes the tokens below -(its largest topic): it leaves "
            "them where they were or at >= -largest.",
            source=src + "; Kafka StrictControllerMutationQuota.record (check, then record)",
            promised_by=KIP599_PROFILES,
        ),
        Property.always(
            ADMITTED_WITHIN_INTERVAL,
            admitted_within_interval,
            description="In any interval of length D (up to the model's max_interval_ms, with one quota in "
            "force), the mutations admitted are at most burst + rate*D/1000 + the largest topic "
            "admitted in it.",
            source=src + " (rate R and burst B)",
            promised_by=(),  # old clients break it: spec/findings.py
        ),
        Property.transition(
            PERMISSIVE_NEVER_REJECTS,
            permissive_never_rejects,
            description="A request of an old version (permissive) never gets 89 THROTTLING_QUOTA_EXCEEDED.",
            source=src + " 'Handling of old clients'; Kafka PermissiveControllerMutationQuota",
            promised_by=KIP599_PROFILES,
        ),
        Property.always(
            THROTTLE_NEVER_NEGATIVE,
            throttle_never_negative,
            description="The throttle time given to a client, and what is left of it later, is never "
            "negative.",
            source=src + "; Kafka AbstractControllerMutationQuota.throttleTime (max(0, t - elapsed))",
            promised_by=KIP599_PROFILES,
        ),
        Property.transition(
            RETRY_AFTER_THROTTLE_ADMITTED,
            retry_after_throttle_admitted,
            description="A client that waits exactly the throttle time it was given and sends the rejected "
            "topics "
            "again (nothing else happening meanwhile) has them all admitted.",
            source=src + " ('has to wait for ...'); Kafka ControllerMutationQuotaManager.throttleTimeMs",
            promised_by=(),  # a lower bound only: spec/findings.py
        ),
        Property.eventually(
            LARGE_TOPIC_EVENTUALLY_ADMITTED,
            large_admitted,
            description="From every reachable state, a strict request with a topic larger than the burst can "
            "still "
            "be admitted (AG EF): a large topic never starves.",
            source=src
            + " ('allow the number of tokens to become negative to accommodate any number of partitions')",
            promised_by=("kip599",),
        ),
        Property.sometimes(
            SOMETIMES_THROTTLED,
            throttled,
            description="Some strict request gets 89 THROTTLING_QUOTA_EXCEEDED (the quota does something).",
            source=src,
            promised_by=KIP599_PROFILES,
        ),
        Property.sometimes(
            SOMETIMES_OVERDRAWN,
            overdrawn,
            description="The tokens go below zero (the bucket can be overdrawn).",
            source=src,
            promised_by=KIP599_PROFILES,
        ),
    )
