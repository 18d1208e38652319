"""What Kafka promises the clients of the mutation quota (issue 26, item 5): the throttle time a client is
told to wait, and validateOnly requests. The properties judge ghosts the model records on the edge that
leads to a state (`ClientGhost`), computed by asking the reference (reference/quota_retry.py); this module
re-encodes no quota rule.

Sources: KIP-599 ("The `throttle_time_ms` field is used to inform the client about how long it has been
throttled"; the response schemas: "The duration in milliseconds for which the request was throttled due to
a quota violation"), Kafka 3.9.2 ControllerMutationQuotaManager.throttleTimeMs ("the amount of time needed
to bring the TokenBucket within quota assuming that no new metrics are recorded"), KafkaAdminClient /
NetworkClient (a client waits the throttle time on its connection, KIP-219, then retries the topics that
got THROTTLING_QUOTA_EXCEEDED); CreateTopicsRequest.validateOnly ("If true, check that the topics can be
created as specified, but don't create anything", KIP-108), ZkAdminManager and ReplicationControlManager.
"""

from __future__ import annotations

from dataclasses import dataclass

from .properties import Property

RETRY_AFTER_THROTTLE_TIME_ADMITTED = "retry_after_throttle_time_admitted"
THROTTLE_TIME_NOT_TOO_LONG = "throttle_time_not_too_long"
VALIDATE_ONLY_NEVER_CONSUMES_QUOTA = "validate_only_never_consumes_quota"
VALIDATE_ONLY_ANSWERS_LIKE_THE_REQUEST = "validate_only_answers_like_the_request"

RETRY_PROPERTIES = (RETRY_AFTER_THROTTLE_TIME_ADMITTED, THROTTLE_TIME_NOT_TOO_LONG)
VALIDATE_ONLY_PROPERTIES = (VALIDATE_ONLY_NEVER_CONSUMES_QUOTA, VALIDATE_ONLY_ANSWERS_LIKE_THE_REQUEST)

TOKEN_BUCKET_PROFILE, RATE_PROFILE = "kip599-handlers", "kip599-handlers-rate"


@dataclass(frozen=True, slots=True)
class ClientGhost:
    """What the last edge did, as the client properties see it (every field is reset by every edge).

    - `retry`: (mutations, strict?, throttle_ms) of the request the last response throttled, which the
      client may retry after waiting exactly throttle_ms (None: nothing to retry);
    - `retried`: on a retry edge, (the quota was no longer violated at the retry instant, the throttle
      time a violation would have given at that instant: 0 when within);
    - `early_within`: on an edge that gave a throttle t > 0, the quota would already have been within at
      t − 1 ms (nothing recorded meanwhile);
    - `validate_only`: on a validateOnly edge, (answered 89, the same request without validateOnly would have
      been answered 89, the sensor measures differently afterwards).
    """

    retry: tuple[int, bool, int] | None = None
    retried: tuple[bool, int] | None = None
    early_within: bool = False
    validate_only: tuple[bool, bool, bool] | None = None

    def to_json(self) -> dict:
        return {"retry": None if self.retry is None else list(self.retry),
                "retried": None if self.retried is None else list(self.retried),
                "early_within": self.early_within,
                "validate_only": None if self.validate_only is None else list(self.validate_only)}

    @staticmethod
    def from_json(data: object) -> ClientGhost:
        """Decode; ValueError names the field."""
        if not isinstance(data, dict):
            raise ValueError(f"client: expected an object, got {data!r}")
        unknown = sorted(set(data) - {"retry", "retried", "early_within", "validate_only"})
        if unknown:
            raise ValueError(f"client.{unknown[0]}: unknown field")

        def tup(key: str, types: tuple[type, ...]):
            v = data.get(key)
            if v is None:
                return None
            if not isinstance(v, list) or len(v) != len(types) or not all(
                    isinstance(x, t) and (t is bool or not isinstance(x, bool)) for x, t in zip(v, types)):
                raise ValueError(f"client.{key}: expected [{', '.join(t.__name__ for t in types)}], got {v!r}")
            return tuple(v)

        early = data.get("early_within", False)
        if not isinstance(early, bool):
            raise ValueError(f"client.early_within: expected true or false, got {early!r}")
        return ClientGhost(tup("retry", (int, bool, int)), tup("retried", (bool, int)), early,
                           tup("validate_only", (bool, bool, bool)))


def _ghost(s: object) -> ClientGhost:
    g = getattr(s, "client", None)
    return g if isinstance(g, ClientGhost) else ClientGhost()


def retry_after_throttle_time_admitted(s: object) -> bool:
    """A client that waits exactly the throttle time it was given and sends the same request again, with no
    mutation in between, finds the quota no longer violated (a strict retry is admitted)."""
    r = _ghost(s).retried
    return r is None or r[0]


def throttle_time_not_too_long(s: object) -> bool:
    """The throttle time is the least wait: 1 ms before it ends the quota is still violated (nothing
    recorded meanwhile), so a client is never held back longer than the quota requires."""
    return not _ghost(s).early_within


def validate_only_never_consumes_quota(s: object) -> bool:
    """A validateOnly request ("don't create anything") leaves the quota's sensor as it found it."""
    v = _ghost(s).validate_only
    return v is None or not v[2]


def validate_only_answers_like_the_request(s: object) -> bool:
    """A validateOnly request gets 89 THROTTLING_QUOTA_EXCEEDED exactly when the same request without
    validateOnly would (a dry run that answers what the real run would)."""
    v = _ghost(s).validate_only
    return v is None or v[0] == v[1]


def retry_properties() -> tuple[Property, ...]:
    src = ("KIP-599 'throttle_time_ms ... how long it has been throttled'; Kafka 3.9.2 "
           "ControllerMutationQuotaManager.throttleTimeMs, StrictControllerMutationQuota.record; "
           "clients Rate/SampledStat and QuotaUtils.throttleTime (the Rate, KAFKA-10163 PR #8933); "
           "KafkaAdminClient retries the throttled topics after the throttle time (KIP-219, KIP-599)")
    return (
        Property.always(RETRY_AFTER_THROTTLE_TIME_ADMITTED, retry_after_throttle_time_admitted,
                        description=retry_after_throttle_time_admitted.__doc__, source=src,
                        promised_by=()),  # both break it: spec/findings.py
        Property.always(THROTTLE_TIME_NOT_TOO_LONG, throttle_time_not_too_long,
                        description=throttle_time_not_too_long.__doc__, source=src,
                        promised_by=(TOKEN_BUCKET_PROFILE,)),  # the Rate breaks it: spec/findings.py
    )


def validate_only_properties() -> tuple[Property, ...]:
    src = ("CreateTopicsRequest/CreatePartitionsRequest validateOnly (KIP-108, KIP-195); KIP-599; Kafka 3.9.2 "
           "ZkAdminManager.createTopics/createPartitions; ReplicationControlManager.createTopic/createPartitions "
           "and QuorumController (3.9.2, 4.0.2; KAFKA-14351)")
    return (
        Property.always(VALIDATE_ONLY_NEVER_CONSUMES_QUOTA, validate_only_never_consumes_quota,
                        description=validate_only_never_consumes_quota.__doc__, source=src,
                        promised_by=()),  # KRaft breaks it: spec/findings.py
        Property.always(VALIDATE_ONLY_ANSWERS_LIKE_THE_REQUEST, validate_only_answers_like_the_request,
                        description=validate_only_answers_like_the_request.__doc__, source=src,
                        promised_by=()),  # ZooKeeper breaks it: spec/findings.py
    )


# -- signatures of the real profiles' findings (spec/findings.py declares them) ----------------------------


def retry_rejected_by_rounding(s: object) -> bool:
    """The retry came Math.round's fraction of a ms too early: still violated, and the violation then is worth
    less than half a ms, so its own throttle time rounds to 0."""
    r = _ghost(s).retried
    return r is not None and not r[0] and r[1] == 0


def retry_rejected_by_rate_window(s: object) -> bool:
    """The Rate's throttle time assumes its window grows by the wait, but Rate.windowSize was raised to
    samples − 1 whole windows that had not elapsed: the wait only fills that floor, and the retry is
    still over the quota, with a throttle time of its own (> 0)."""
    r = _ghost(s).retried
    return r is not None and not r[0] and r[1] > 0


def throttle_outlasts_sample_expiry(s: object) -> bool:
    """The Rate's samples expire (purgeObsoleteSamples) before the throttle time ends: the quota is within
    sooner than the client was told."""
    return _ghost(s).early_within


def validate_only_consumed(s: object) -> bool:
    """A validateOnly request was checked and recorded like a real one (KRaft applies the quota before it
    drops the records)."""
    v = _ghost(s).validate_only
    return v is not None and v[2]


def validate_only_skips_quota(s: object) -> bool:
    """A validateOnly request was answered without the quota check while the real request would get 89
    (ZooKeeper checks and records the quota only when it writes)."""
    v = _ghost(s).validate_only
    return v is not None and not v[0] and v[1]


__all__ = ["RETRY_AFTER_THROTTLE_TIME_ADMITTED", "RETRY_PROPERTIES", "THROTTLE_TIME_NOT_TOO_LONG",
           "VALIDATE_ONLY_ANSWERS_LIKE_THE_REQUEST", "VALIDATE_ONLY_NEVER_CONSUMES_QUOTA", "VALIDATE_ONLY_PROPERTIES",
           "ClientGhost", "retry_properties", "validate_only_properties"]
