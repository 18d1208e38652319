"""The controller mutation quota reference (reference/quota.py), rule by rule, with our own numbers."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kreassign.checker.models.quota import build_request
from kreassign.reference import quota as q
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
    TOPIC_ALREADY_EXISTS,
    UNKNOWN_TOPIC_OR_PARTITION,
    CreatableTopic,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    Principal,
    QuotaEntity,
    RequestShape,
    is_strict,
)

ALICE = Principal("alice", "app")
BOB = Principal("bob", "tool")


def create(*sizes: int, version: int = 7, validate_only: bool = False) -> CreateTopicsRequest:
    return CreateTopicsRequest(
        tuple(CreatableTopic(f"t{i}", n) for i, n in enumerate(sizes)),
        validate_only=validate_only,
        version=version,
    )


ALICE_USER = QuotaEntity("alice", None)


def manager(rate: int | Fraction | None = 2, entity: QuotaEntity = ALICE_USER) -> q.QuotaManagerState:
    """A quota manager with Kafka's default window (11 × 1 s): rate 2 gives a burst of 22."""
    s = q.QuotaManagerState()
    return s if rate is None else q.set_quota(s, entity, rate)


def tokens(state: q.QuotaManagerState, principal: Principal, now_ms: int) -> Fraction | float:
    key, cfg = q.resolve_quota(state, principal)
    return q.measure(state.bucket(key), cfg, now_ms)[0]


def errors(outcome: q.QuotaOutcome) -> list[int]:
    assert outcome.response is not None
    return [r.error_code for r in outcome.response.results]


# -- token bucket -------------------------------------------------------------------------


class TestTokenBucket:
    def test_burst_is_samples_times_window_times_rate(self):
        assert q.QuotaConfig(5).burst == 55  # Kafka's defaults: 11 windows of 1 s
        assert q.QuotaConfig(Fraction(1, 2), samples=4, window_ms=500).burst == 1
        assert q.burst(q.QuotaConfig(3, samples=2, window_ms=250)) == Fraction(3, 2)

    def test_full_on_first_use(self):
        cfg = q.QuotaConfig(2)
        assert q.refill(None, cfg, 123_456) == q.TokenBucket(22, 123_456)
        assert q.measure(None, cfg, 7)[0] == 22

    def test_refill_adds_rate_times_elapsed_and_caps_at_burst(self):
        cfg = q.QuotaConfig(2)
        assert q.refill(q.TokenBucket(-3, 1000), cfg, 2500) == q.TokenBucket(0, 2500)
        assert q.refill(q.TokenBucket(-3, 1000), cfg, 1001).tokens == Fraction(-2998, 1000)
        assert q.refill(q.TokenBucket(20, 0), cfg, 5000) == q.TokenBucket(22, 5000)

    def test_refill_is_exact_for_any_rational_rate(self):
        cfg = q.QuotaConfig(Fraction(1, 3))
        b = q.refill(q.TokenBucket(-1, 0), cfg, 1)
        assert b.tokens == Fraction(-1) + Fraction(1, 3000)

    def test_record_refills_then_subtracts_and_may_go_far_below_zero(self):
        cfg = q.QuotaConfig(2)
        assert q.record(q.TokenBucket(1, 0), cfg, 30, 500) == q.TokenBucket(-28, 500)

    def test_record_caps_at_burst_also_for_negative_values(self):
        cfg = q.QuotaConfig(2)
        assert q.record(q.TokenBucket(21, 0), cfg, -5, 0) == q.TokenBucket(22, 0)
        assert q.record(q.TokenBucket(10, 0), cfg, -5, 0) == q.TokenBucket(15, 0)

    def test_unbounded_without_quota(self):
        b = q.TokenBucket(-4, 10)
        assert q.measure(b, None, 20) == (math.inf, b)
        assert q.record(b, None, 1000, 20) is b
        assert q.record(None, None, 1000, 20) is None

    def test_time_before_last_update_is_refused(self):
        with pytest.raises(ValueError, match="now_ms"):
            q.refill(q.TokenBucket(0, 100), q.QuotaConfig(1), 99)

    @pytest.mark.parametrize(
        "kwargs, field",
        [
            ({"rate": -1}, "rate"),
            ({"rate": 0}, "rate"),
            ({"rate": 0.5}, "rate"),
            ({"rate": True}, "rate"),
            ({"rate": "2"}, "rate"),
            ({"rate": 1, "samples": 0}, "samples"),
            ({"rate": 1, "window_ms": 1.5}, "window_ms"),
        ],
    )
    def test_bad_config_names_the_field(self, kwargs, field):
        with pytest.raises(ValueError, match=f"^{field}:"):
            q.QuotaConfig(**kwargs)

    def test_float_rate_error_suggests_fraction(self):
        with pytest.raises(ValueError, match=r"Fraction\('0.1'\)"):
            q.QuotaConfig(0.1)

    def test_bad_values_name_the_field(self):
        with pytest.raises(ValueError, match="^value:"):
            q.record(None, q.QuotaConfig(1), "3", 0)
        with pytest.raises(ValueError, match="^now_ms:"):
            q.refill(None, q.QuotaConfig(1), 1.5)
        with pytest.raises(ValueError, match="^tokens:"):
            q.TokenBucket(0.5, 0)


rates = st.fractions(min_value=Fraction(1, 50), max_value=100, max_denominator=50)
token_values = st.fractions(min_value=-200, max_value=200, max_denominator=20)
times = st.integers(0, 100_000)


@given(rates, st.integers(1, 11), token_values, times, times, times)
def test_refill_is_monotone_in_time_and_composes(rate, samples, k, t0, d1, d2):
    cfg = q.QuotaConfig(rate, samples)
    b = q.TokenBucket(min(k, cfg.burst), t0)
    once = q.refill(b, cfg, t0 + d1 + d2)
    twice = q.refill(q.refill(b, cfg, t0 + d1), cfg, t0 + d1 + d2)
    assert q.refill(b, cfg, t0 + d1).tokens <= once.tokens <= cfg.burst
    assert twice == once  # refilling in two steps is refilling once: the model's eager refill is exact


@given(rates, token_values, st.integers(-100, 100), times)
def test_record_never_exceeds_burst_and_subtracts_exactly_below_it(rate, k, v, t):
    cfg = q.QuotaConfig(rate)
    b = q.record(q.TokenBucket(k, 0), cfg, v, t)
    assert b is not None and b.tokens <= cfg.burst
    refilled = q.refill(q.TokenBucket(k, 0), cfg, t).tokens
    assert b.tokens == min(cfg.burst, refilled - v)


@given(st.fractions(min_value=-500, max_value=-Fraction(1, 1000), max_denominator=1000), rates)
def test_throttle_is_positive_when_tokens_are_negative_and_covers_the_deficit_within_half_a_ms(k, rate):
    t = q.throttle_time_ms(k, rate)
    assert t >= 0
    exact = -k / rate * 1000
    assert abs(t - exact) <= Fraction(1, 2)


# -- throttle time -------------------------------------------------------------------------


class TestThrottle:
    def test_throttle_is_deficit_over_rate_rounded_like_java(self):
        assert q.throttle_time_ms(Fraction(-6), Fraction(2)) == 3000
        assert q.throttle_time_ms(Fraction(-1), Fraction(3)) == 333  # 333.33 rounds down
        assert q.throttle_time_ms(Fraction(-2), Fraction(3)) == 667  # 666.67 rounds up
        assert q.throttle_time_ms(Fraction(-1), Fraction(2000)) == 1  # 0.5 rounds half up (Math.round)
        assert q.throttle_time_ms(Fraction(-3), Fraction(2000)) == 2  # 1.5 -> 2
        assert q.throttle_time_ms(Fraction(-5), Fraction(2000)) == 3  # 2.5 -> 3 (Python's round gives 2)

    def test_decay_subtracts_elapsed_time_and_stops_at_zero(self):
        assert q.decayed_throttle_ms(1000, 500, 800) == 700
        assert q.decayed_throttle_ms(1000, 500, 1500) == 0
        assert q.decayed_throttle_ms(1000, 500, 9000) == 0

    def test_response_throttle_is_the_larger_quota_and_mutes_when_positive(self):
        assert q.response_throttle_ms(300, 1200) == 1200
        assert q.response_throttle_ms(1800, 0) == 1800
        assert q.channel_muted(1) and not q.channel_muted(0)


# -- strict admission ------------------------------------------------------------------------


class TestStrict:
    def test_one_topic_may_overdraw_the_bucket_and_gets_no_throttle(self):
        out = q.handle_request(manager(2), ALICE, create(30), 0)
        assert errors(out) == [NONE]
        assert out.throttle_time_ms == 0 and not out.channel_muted
        assert tokens(out.state, ALICE, 0) == -8  # 22 - 30: far below zero

    def test_negative_tokens_reject_with_89_record_nothing_and_throttle_from_the_deficit(self):
        s = q.handle_request(manager(2), ALICE, create(30), 0).state
        out = q.handle_request(s, ALICE, create(1), 1000)  # refilled: -8 + 2 = -6
        assert errors(out) == [THROTTLING_QUOTA_EXCEEDED]
        assert out.response.results[0].error_message == "The throttling quota has been exceeded."
        assert tokens(out.state, ALICE, 1000) == -6  # nothing recorded
        assert out.throttle_time_ms == 3000 and out.channel_muted  # 6 / 2 per s

    def test_zero_tokens_is_not_a_violation(self):
        s = q.handle_request(manager(2), ALICE, create(22), 0).state
        out = q.handle_request(s, ALICE, create(5), 0)
        assert errors(out) == [NONE]
        assert tokens(out.state, ALICE, 0) == -5

    def test_topics_are_admitted_in_order_and_once_negative_the_rest_is_rejected(self):
        out = q.handle_request(manager(2), ALICE, create(20, 5, 1, 1), 0)
        # 22 -> 2 (admit 20) -> -3 (admit 5: 2 >= 0) -> reject 1 -> reject 1
        assert errors(out) == [NONE, NONE, THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED]
        assert tokens(out.state, ALICE, 0) == -3
        assert out.throttle_time_ms == 1500

    def test_throttle_decays_until_the_response_and_the_request_quota_can_dominate(self):
        s = q.handle_request(manager(2), ALICE, create(30), 0).state
        late = q.handle_request(s, ALICE, create(1), 1000, response_ms=2200)  # waited 1200 ms in purgatory
        assert late.throttle_time_ms == 1800
        gone = q.handle_request(s, ALICE, create(1), 1000, response_ms=5000)
        assert gone.throttle_time_ms == 0 and not gone.channel_muted
        req = q.handle_request(s, ALICE, create(1), 1000, request_throttle_ms=4000)
        assert req.throttle_time_ms == 4000

    def test_waiting_the_throttle_time_brings_tokens_back_to_zero(self):
        s = q.handle_request(manager(2), ALICE, create(30), 0).state
        out = q.handle_request(s, ALICE, create(1), 1000)
        retry = q.handle_request(out.state, ALICE, create(1), 1000 + out.throttle_time_ms)
        assert errors(retry) == [NONE]


class TestPermissive:
    def test_old_versions_record_first_never_reject_and_throttle_from_the_deficit(self):
        out = q.handle_request(manager(2), ALICE, create(30, version=5), 0)
        assert errors(out) == [NONE]
        assert out.throttle_time_ms == 4000 and out.channel_muted  # -8 / 2 per s
        again = q.handle_request(out.state, ALICE, create(5, version=5), 0)
        assert errors(again) == [NONE]
        assert tokens(again.state, ALICE, 0) == -13
        assert again.throttle_time_ms == 6500

    def test_throttle_is_the_last_topics_deficit(self):
        out = q.handle_request(manager(2), ALICE, create(23, 1, version=5), 0)
        assert errors(out) == [NONE, NONE]
        assert out.throttle_time_ms == 1000  # -2 after both topics

    def test_no_throttle_while_tokens_stay_non_negative(self):
        out = q.handle_request(manager(2), ALICE, create(22, version=5), 0)
        assert out.throttle_time_ms == 0 and not out.channel_muted


@pytest.mark.parametrize("api, since", [(CREATE_TOPICS, 6), (DELETE_TOPICS, 5), (CREATE_PARTITIONS, 3)])
def test_version_decides_strict_or_permissive(api, since):
    assert is_strict(api, since) and not is_strict(api, since - 1)
    overdrawn = q.handle_request(manager(2), ALICE, create(30), 0).state  # -8
    for version, expected in ((since - 1, NONE), (since, THROTTLING_QUOTA_EXCEEDED)):
        shape = RequestShape(api, version, (1,))
        request, metadata = build_request(shape)
        out = q.handle_request(overdrawn, ALICE, request, 0, metadata=metadata)
        assert errors(out) == [expected], (api, version)


# -- principals, unbounded, quota changes ------------------------------------------------------


class TestPrincipals:
    def test_principal_without_quota_is_unbounded_and_records_nothing(self):
        s = manager(2)
        out = q.handle_request(s, BOB, create(1000), 0)
        assert errors(out) == [NONE] and out.throttle_time_ms == 0
        assert out.state == s
        assert tokens(out.state, BOB, 0) == math.inf

    def test_user_quota_is_shared_by_the_users_clients(self):
        s = q.handle_request(manager(2), Principal("alice", "a"), create(30), 0).state
        out = q.handle_request(s, Principal("alice", "b"), create(1), 0)
        assert errors(out) == [THROTTLING_QUOTA_EXCEEDED]

    def test_user_and_client_quota_takes_precedence_over_user_quota(self):
        s = q.set_quota(manager(2), QuotaEntity("alice", "batch"), 1)
        assert q.resolve_quota(s, Principal("alice", "batch")) == (("alice", "batch"), q.QuotaConfig(1))
        assert q.resolve_quota(s, Principal("alice", "web")) == (("alice", ""), q.QuotaConfig(2))

    def test_default_user_gives_every_user_its_own_bucket(self):
        s = manager(2, QuotaEntity(DEFAULT_ENTITY, None))
        s = q.handle_request(s, Principal("carol", "x"), create(30), 0).state
        assert errors(q.handle_request(s, Principal("carol", "y"), create(1), 0)) == [
            THROTTLING_QUOTA_EXCEEDED
        ]
        assert errors(q.handle_request(s, Principal("dave", "y"), create(1), 0)) == [NONE]

    def test_client_id_quota(self):
        s = q.set_quota(q.QuotaManagerState(), QuotaEntity(None, "tool"), 3)
        assert q.resolve_quota(s, BOB) == (("", "tool"), q.QuotaConfig(3))
        assert q.resolve_quota(s, ALICE) == (("", ""), None)

    def test_bad_principal_and_entity_are_refused(self):
        with pytest.raises(ValueError, match="^principal:"):
            q.resolve_quota(manager(), "alice")
        with pytest.raises(ValueError, match="^entity:"):
            QuotaEntity()
        with pytest.raises(ValueError, match="^entity:"):
            q.set_quota(manager(), ("alice", None), 1)
        with pytest.raises(ValueError, match="^rate:"):
            q.set_quota(manager(), QuotaEntity("alice"), -2)


class TestQuotaChanges:
    def test_lowering_the_quota_caps_at_the_new_burst_and_refills_at_the_new_rate(self):
        s = q.handle_request(manager(2), ALICE, create(1), 0).state  # 21 of 22
        s = q.set_quota(s, QuotaEntity("alice", None), 1)  # burst 11
        assert tokens(s, ALICE, 0) == 11
        s = q.handle_request(s, ALICE, create(11), 0).state  # 0
        s = q.handle_request(s, ALICE, create(3), 0).state  # -3
        assert tokens(s, ALICE, 2000) == -1  # 2 s at 1/s

    def test_raising_the_quota_refills_the_time_since_the_last_update_at_the_new_rate(self):
        s = q.handle_request(manager(1), ALICE, create(11), 0).state  # 0 of 11
        s = q.set_quota(s, QuotaEntity("alice", None), 10)  # at t = 1000; the bucket is not touched
        assert tokens(s, ALICE, 2000) == 20  # 2 s at 10/s: the whole elapsed time at the new rate

    def test_the_check_uses_the_new_quota_at_once(self):
        s = q.handle_request(manager(1), ALICE, create(13), 0).state  # -2
        assert errors(q.handle_request(s, ALICE, create(1), 100)) == [THROTTLING_QUOTA_EXCEEDED]
        s2 = q.set_quota(s, QuotaEntity("alice", None), 40)
        out = q.handle_request(s2, ALICE, create(1), 100)  # -2 + 40 * 0.1 = 2
        assert errors(out) == [NONE]

    def test_removing_the_quota_makes_the_principal_unbounded_and_setting_it_again_resumes_the_bucket(self):
        s = q.handle_request(manager(1), ALICE, create(15), 0).state  # -4
        removed = q.set_quota(s, QuotaEntity("alice", None), None)
        out = q.handle_request(removed, ALICE, create(100), 1000)
        assert errors(out) == [NONE] and out.throttle_time_ms == 0 and out.state == removed
        back = q.set_quota(out.state, QuotaEntity("alice", None), 1)
        assert tokens(back, ALICE, 1000) == -3  # the old bucket, refilled 1 s


# -- the draft rule (seed 002) ---------------------------------------------------------------------


class TestDraft:
    def test_admitted_only_if_tokens_cover_the_topic(self):
        out = q.handle_request(manager(2), ALICE, create(10, 13, 2), 0, rule=q.KIP599_DRAFT)
        # 22 -> 12; 13 > 12 rejected; 2 <= 12 admitted (a later, smaller topic gets in)
        assert errors(out) == [NONE, THROTTLING_QUOTA_EXCEEDED, NONE]
        assert tokens(out.state, ALICE, 0) == 10

    def test_throttle_is_the_smallest_wait_until_a_rejected_topic_fits(self):
        s = q.handle_request(manager(2), ALICE, create(10), 0, rule=q.KIP599_DRAFT).state  # 12
        out = q.handle_request(s, ALICE, create(13, 15), 0, rule=q.KIP599_DRAFT)
        assert errors(out) == [THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED]
        assert out.throttle_time_ms == 500  # min((13-12)/2, (15-12)/2) s

    def test_a_topic_larger_than_the_burst_is_never_admitted(self):
        s, now = manager(2), 0
        for _ in range(5):
            out = q.handle_request(s, ALICE, create(30), now, rule=q.KIP599_DRAFT)
            assert errors(out) == [THROTTLING_QUOTA_EXCEEDED]
            s, now = out.state, now + out.throttle_time_ms  # the client waits what it was told
        assert errors(q.handle_request(s, ALICE, create(30), now)) == [NONE]  # kip599 admits it

    def test_old_clients_are_permissive_in_the_draft_too(self):
        out = q.handle_request(manager(2), ALICE, create(30, version=5), 0, rule=q.KIP599_DRAFT)
        assert errors(out) == [NONE] and out.throttle_time_ms == 4000

    def test_rule_by_name(self):
        assert q.rule("kip599") is q.KIP599 and q.rule("kip599-draft") is q.KIP599_DRAFT
        with pytest.raises(ValueError, match="^profile:"):
            q.rule("kraft")


# -- what each request type counts ---------------------------------------------------------------


class TestCounting:
    def test_create_topics_counts_partitions_or_assignments_or_the_broker_default(self):
        req = CreateTopicsRequest(
            (
                CreatableTopic("a", 4),
                CreatableTopic("b", -1),
                CreatableTopic("c", -1, assignments=((1, 2), (2, 3))),
            )
        )
        assert [c.count for c in q.mutation_counts(req, default_partitions=3)] == [4, 3, 2]
        out = q.handle_request(manager(2), ALICE, req, 0, default_partitions=3)
        assert out.counted == (4, 3, 2) and tokens(out.state, ALICE, 0) == 13

    def test_create_topics_validation_errors_are_not_counted(self):
        req = CreateTopicsRequest(
            (
                CreatableTopic("dup", 1),
                CreatableTopic("dup", 1),
                CreatableTopic("old", 5),
                CreatableTopic("zero", 0),
                CreatableTopic("both", 2, assignments=((1,),)),
            )
        )
        out = q.handle_request(manager(2), ALICE, req, 0, metadata={"old": 3})
        assert errors(out) == [
            INVALID_REQUEST,
            INVALID_REQUEST,
            TOPIC_ALREADY_EXISTS,
            INVALID_PARTITIONS,
            INVALID_REQUEST,
        ]
        assert out.counted == (None,) * 5
        assert out.state == manager(2)  # first use did not even create the bucket

    def test_delete_topics_counts_the_current_partitions(self):
        req = DeleteTopicsRequest(("big", "gone"), version=5)
        out = q.handle_request(manager(2), ALICE, req, 0, metadata={"big": 7})
        assert errors(out) == [NONE, UNKNOWN_TOPIC_OR_PARTITION]
        assert out.counted == (7, None) and tokens(out.state, ALICE, 0) == 15

    def test_create_partitions_counts_the_partitions_added(self):
        req = CreatePartitionsRequest(
            (
                CreatePartitionsTopic("a", 5),
                CreatePartitionsTopic("b", 3),
                CreatePartitionsTopic("c", 2),
                CreatePartitionsTopic("x", 9),
            )
        )
        out = q.handle_request(manager(2), ALICE, req, 0, metadata={"a": 3, "b": 3, "c": 3})
        assert errors(out) == [NONE, INVALID_PARTITIONS, INVALID_PARTITIONS, UNKNOWN_TOPIC_OR_PARTITION]
        assert out.counted == (2, None, None, None) and tokens(out.state, ALICE, 0) == 20
        assert out.response.results[1].error_message == "Topic already has 3 partitions."

    def test_alter_partition_reassignments_is_counted_by_nothing(self):
        req = AlterPartitionReassignmentsRequest.single("t", 0, (1, 2, 3))
        assert q.mutation_counts(req) == ()
        s = q.handle_request(manager(2), ALICE, create(30), 0).state
        out = q.handle_request(s, ALICE, req, 0)
        assert out.state == s and out.response is None and out.throttle_time_ms == 0

    def test_validate_only_is_counted_by_kraft_not_by_zookeeper(self):
        req = create(30, validate_only=True)
        kraft = q.handle_request(manager(2), ALICE, req, 0, controller="kraft")
        zk = q.handle_request(manager(2), ALICE, req, 0, controller="zk")
        assert kraft.counted == (30,) and tokens(kraft.state, ALICE, 0) == -8
        assert zk.counted == (None,) and zk.state == manager(2)
        # KRaft can even throttle a validateOnly request; ZooKeeper never does
        again = create(1, validate_only=True)
        assert errors(q.handle_request(kraft.state, ALICE, again, 0, controller="kraft")) == [
            THROTTLING_QUOTA_EXCEEDED
        ]
        assert errors(q.handle_request(kraft.state, ALICE, again, 0, controller="zk")) == [NONE]
        cp = CreatePartitionsRequest((CreatePartitionsTopic("a", 4),), validate_only=True)
        assert q.mutation_counts(cp, {"a": 1}, controller="zk")[0].count is None
        assert q.mutation_counts(cp, {"a": 1}, controller="kraft")[0].count == 3

    def test_bad_requests_name_the_field(self):
        with pytest.raises(ValueError, match="^version:"):
            create(1, version=8)
        with pytest.raises(ValueError, match="^version:"):
            DeleteTopicsRequest(("a",), version=-1)
        with pytest.raises(ValueError, match="^request:"):
            q.mutation_counts("CreateTopics")
        with pytest.raises(ValueError, match="^metadata"):
            q.mutation_counts(create(1), {"a": 0})
        with pytest.raises(ValueError, match="^controller:"):
            q.mutation_counts(create(1), controller="raft")
        with pytest.raises(ValueError, match="^topics\\[\\].num_partitions:"):
            CreatableTopic("a", "3")
        with pytest.raises(ValueError, match="^response_ms:"):
            q.handle_request(manager(), ALICE, create(1), 10, response_ms=5)

    def test_handling_is_pure(self):
        s = manager(2)
        a = q.handle_request(s, ALICE, create(30, 1), 0)
        b = q.handle_request(s, ALICE, create(30, 1), 0)
        assert a == b and s == manager(2)
