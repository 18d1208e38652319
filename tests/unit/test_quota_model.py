"""The quota transition system (checker/models/quota.py): protocol, exactness, and every property's verdict.

Verdicts are pinned per profile and configuration, with the shortest scenario the BFS
finds (tests/unit/quota_helpers.py); a property that holds on both profiles is shown to
fail on a deliberately broken rule, so that none of them passes vacuously.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kreassign.checker.explore.protocol import Model
from kreassign.checker.models.quota import (
    QUOTA_CONFIGS,
    QuotaModel,
    QuotaModelConfig,
    build_request,
    config_from_mapping,
    default_quota_bounds,
    quota_model,
    quota_model_from_bounds,
)
from kreassign.reference import quota as q
from kreassign.spec.quota import (
    ADMITTED_WITHIN_INTERVAL,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    LARGE_TOPIC_EVENTUALLY_ADMITTED,
    PERMISSIVE_NEVER_REJECTS,
    RETRY_AFTER_THROTTLE_ADMITTED,
    SOMETIMES_OVERDRAWN,
    SOMETIMES_THROTTLED,
    STRICT_OVERDRAFT_BOUNDED,
    THROTTLE_NEVER_NEGATIVE,
    THROTTLING_QUOTA_EXCEEDED,
    TOKENS_WITHIN_BURST,
    AdminAlterClientQuota,
    ClientRetryAfterThrottle,
    ClientSendMutation,
    QuotaModelState,
    QuotaTick,
    RequestShape,
    action_from_json,
    state_from_json,
)

try:  # tests/unit is not a package: pytest puts this folder on sys.path
    from .quota_helpers import explore
except ImportError:
    from quota_helpers import explore

PROFILES = ("kip599", "kip599-draft")
ALL_PROPERTIES = (
    TOKENS_WITHIN_BURST,
    STRICT_OVERDRAFT_BOUNDED,
    ADMITTED_WITHIN_INTERVAL,
    PERMISSIVE_NEVER_REJECTS,
    THROTTLE_NEVER_NEGATIVE,
    RETRY_AFTER_THROTTLE_ADMITTED,
    LARGE_TOPIC_EVENTUALLY_ADMITTED,
    SOMETIMES_THROTTLED,
    SOMETIMES_OVERDRAWN,
)

S1 = ClientSendMutation(RequestShape(CREATE_TOPICS, 7, (1,)))
S3 = ClientSendMutation(RequestShape(CREATE_TOPICS, 7, (3,)))
S4 = ClientSendMutation(RequestShape(CREATE_TOPICS, 7, (4,)))
S11 = ClientSendMutation(RequestShape(CREATE_TOPICS, 7, (1, 1)))
P1 = ClientSendMutation(RequestShape(CREATE_TOPICS, 5, (1,)))
RETRY = ClientRetryAfterThrottle()

_cache: dict[tuple[str, str], object] = {}


def explored(profile: str, size: str):
    """Full exploration of a named configuration, shared by the tests of this module."""
    if (profile, size) not in _cache:
        _cache[profile, size] = explore(quota_model(profile, size))
    return _cache[profile, size]


def replay(model: QuotaModel, actions) -> list[QuotaModelState]:
    """The states along a path of actions from the initial state; each action must be enabled."""
    states = [model.init_states()[0]]
    for a in actions:
        assert a in model.actions(states[-1]), a
        nxt = model.next_state(states[-1], a)
        assert nxt is not None
        states.append(nxt)
    return states


# -- the protocol ------------------------------------------------------------------------------


class TestProtocol:
    def test_is_a_model_with_deterministic_action_order(self):
        m = quota_model("kip599", "quota-change")
        assert isinstance(m, Model)
        init = m.init_states()
        assert init == (QuotaModelState(rate=Fraction(1), tokens=None),)
        acts = m.actions(init[0])
        assert [str(a) for a in acts] == [
            "QuotaTick(1000ms)",
            "ClientSendMutation(CreateTopics v7 [1])",
            "ClientSendMutation(CreateTopics v7 [3])",
            "ClientSendMutation(CreateTopics v7 [1,1])",
            "AdminAlterClientQuota(2)",
            "AdminAlterClientQuota(remove)",
        ]
        assert acts == quota_model("kip599", "quota-change").actions(init[0])

    def test_retry_is_enabled_only_after_a_strict_rejection(self):
        m = quota_model("kip599", "small")
        s = replay(m, [S3, S1])[-1]
        assert s.rejected == 1 and s.retry == RequestShape(CREATE_TOPICS, 7, (1,)) and s.retry_in_ms == 1000
        assert RETRY in m.actions(s)
        assert RETRY not in m.actions(m.init_states()[0])
        assert m.next_state(m.init_states()[0], RETRY) is None
        # waiting longer than the throttle, or anything else happening, withdraws it
        assert RETRY in m.actions(m.next_state(s, QuotaTick(500)))
        assert RETRY in m.actions(m.next_state(s, QuotaTick(1000)))
        assert RETRY not in m.actions(m.next_state(m.next_state(s, QuotaTick(1000)), QuotaTick(500)))
        assert RETRY not in m.actions(m.next_state(s, P1))

    def test_states_are_hashable_values_and_the_clock_is_not_part_of_them(self):
        m = quota_model("kip599", "small")
        a = m.next_state(m.init_states()[0], QuotaTick(500))
        assert a == m.init_states()[0] and hash(a) == hash(m.init_states()[0])
        assert a.now_ms == 500
        assert len({a, m.init_states()[0]}) == 1

    def test_every_reachable_state_and_action_round_trips_through_json(self):
        m = quota_model("kip599", "small")
        res = explored("kip599", "small")
        for s in res.parents:
            data = json.loads(json.dumps(m.state_to_json(s)))
            back = m.state_from_json(data)
            assert back == s and back.now_ms == s.now_ms
            for a in m.actions(s):
                assert m.action_from_json(json.loads(json.dumps(m.action_to_json(a)))) == a
        assert m.action_to_json(AdminAlterClientQuota(Fraction(3, 2))) == {
            "type": "AdminAlterClientQuota",
            "rate": "3/2",
        }

    @pytest.mark.parametrize(
        "data, field",
        [
            ({"type": "QuotaTick", "ms": -1}, "action.ms"),
            ({"type": "Nope"}, "action.type"),
            ({"type": "AdminAlterClientQuota", "rate": 0.5}, "action.rate"),
            ({"type": "AdminAlterClientQuota"}, "action.rate"),
            (
                {"type": "ClientSendMutation", "shape": {"api": "CreateTopics", "version": 9, "sizes": [1]}},
                "action.shape.version",
            ),
            (
                {"type": "ClientSendMutation", "shape": {"api": "CreateTopics", "version": 7, "sizes": [0]}},
                "action.shape.sizes",
            ),
        ],
    )
    def test_bad_action_json_names_the_field(self, data, field):
        with pytest.raises(ValueError, match=f"^{field}"):
            action_from_json(data)

    @pytest.mark.parametrize(
        "data, field",
        [
            ({"tokens": 1}, "state.rate"),
            ({"rate": "x", "tokens": 1}, "state.rate"),
            ({"rate": -1, "tokens": 1}, "state.rate"),
            ({"rate": 1, "tokens": 1, "window": [[0, 1]]}, "state.window"),
            ({"rate": 1, "tokens": 1, "since_update_ms": -5}, "state.since_update_ms"),
            ({"rate": 1, "tokens": 1, "extra": 1}, "state.extra"),
        ],
    )
    def test_bad_state_json_names_the_field(self, data, field):
        with pytest.raises(ValueError, match=f"^{field}"):
            state_from_json(data)

    @pytest.mark.parametrize(
        "kwargs, field",
        [
            ({"profile": "kraft"}, "profile"),
            ({"rate": -1}, "rate"),
            ({"rate": 1.5}, "rate"),
            ({"ticks": ()}, "ticks"),
            ({"ticks": (0,)}, "ticks"),
            ({"shapes": ((1,),)}, "shapes"),
            ({"quota_changes": (0,)}, "quota_changes"),
            ({"controller": "raft"}, "controller"),
            ({"samples": 0}, "samples"),
            ({"token_floor": 0.5}, "token_floor"),
        ],
    )
    def test_bad_config_names_the_field(self, kwargs, field):
        with pytest.raises(ValueError, match=f"^{field}"):
            QuotaModelConfig(**kwargs)
        with pytest.raises(ValueError, match="^size:"):
            quota_model("kip599", "huge")

    def test_describe_round_trips_as_trace_bounds(self):
        m = quota_model("kip599-draft", "rounding")
        d = json.loads(json.dumps(m.describe()))
        assert d["profile"] == "kip599-draft" and d["rule"] == "kip599-draft"
        assert d["burst"] == 3 and d["rate"] == 3
        assert d["shapes"][1] == {"api": "CreateTopics", "version": 7, "sizes": [4], "validate_only": False}
        bounds = {k: v for k, v in d.items() if k != "profile"}  # what a trace file keeps
        assert quota_model_from_bounds("kip599-draft", bounds).config == m.config
        for size, cfg in QUOTA_CONFIGS.items():
            assert config_from_mapping(json.loads(json.dumps(cfg.describe()))) == cfg
            assert quota_model_from_bounds("kip599", size).config == cfg
        assert (
            quota_model_from_bounds("kip599-draft", default_quota_bounds("kip599")).config.profile
            == "kip599-draft"
        )
        assert default_quota_bounds("kip599-draft") == replace(QUOTA_CONFIGS["small"], profile="kip599-draft")

    @pytest.mark.parametrize(
        "data, field",
        [
            ([], "bounds"),
            ({"rate": 0}, "bounds.rate"),
            ({"ticks": 5}, "bounds.ticks"),
            ({"shapes": [{"api": "X", "version": 1, "sizes": [1]}]}, "bounds.shapes[0]"),
            ({"quota_changes": ["a"]}, "bounds.quota_changes[0]"),
            ({"horizon": 3}, "bounds.horizon"),
            ({"rate": 1, "burst": 5}, "bounds.burst"),
            ({"rule": "uncapped-refill"}, "bounds.rule"),
            ({"samples": -1}, "bounds.samples"),
        ],
    )
    def test_bad_bounds_name_the_field(self, data, field):
        with pytest.raises(ValueError, match=f"^{re.escape(field)}"):
            config_from_mapping(data)

    def test_requests_stop_below_the_token_floor(self):
        m = QuotaModel(QuotaModelConfig(shapes=(RequestShape(CREATE_TOPICS, 5, (2,)),), token_floor=-1))
        s = m.init_states()[0]
        s = m.next_state(s, m.actions(s)[-1])  # 0
        s = m.next_state(s, m.actions(s)[-1])  # -2: below the floor
        assert m.measure(s) == -2
        assert m.actions(s) == [QuotaTick(500), QuotaTick(1000)]
        assert m.next_state(s, ClientSendMutation(RequestShape(CREATE_TOPICS, 5, (2,)))) is None
        assert len(m.actions(m.next_state(s, QuotaTick(1000)))) == 3  # -1 again: may send


class TestShapes:
    """The model builds Kafka requests from shapes; each request type counts the shape's sizes."""

    @pytest.mark.parametrize(
        "api, version",
        [
            (CREATE_TOPICS, 7),
            (DELETE_TOPICS, 6),
            (CREATE_PARTITIONS, 3),
            (CREATE_TOPICS, 5),
            (DELETE_TOPICS, 4),
            (CREATE_PARTITIONS, 2),
        ],
    )
    def test_each_request_type_counts_the_shape(self, api, version):
        shape = RequestShape(api, version, (2, 1))
        request, metadata = build_request(shape)
        assert [c.count for c in q.mutation_counts(request, metadata)] == [2, 1]
        m = QuotaModel(QuotaModelConfig(shapes=(shape,)))
        s = m.next_state(m.init_states()[0], ClientSendMutation(shape))
        assert m.measure(s) == -1  # burst 2, then 2 + 1 recorded (strict: 2 admitted at 2, 1 at 0)

    def test_validate_only_counts_under_kraft_only(self):
        shape = RequestShape(CREATE_TOPICS, 7, (3,), validate_only=True)
        for controller, tokens in (("kraft", -1), ("zk", 2)):
            m = QuotaModel(QuotaModelConfig(shapes=(shape,), controller=controller))
            assert m.measure(m.next_state(m.init_states()[0], ClientSendMutation(shape))) == tokens


# -- the canonical form is exact: compare with the reference run in absolute time ---------------


class RawRun:
    """The reference driven directly, in absolute time, with no canonical form."""

    def __init__(self, m: QuotaModel):
        self.m = m
        self.mgr = q.set_quota(
            q.QuotaManagerState(samples=m.config.samples, window_ms=m.config.window_ms),
            m.ENTITY,
            m.config.rate,
        )
        self.now = 0
        self.retry: tuple[RequestShape, int] | None = None  # (rejected topics, due time)
        self.rejected = 0
        self.mute_until = 0

    def step(self, action) -> None:
        self.rejected = 0
        if isinstance(action, QuotaTick):
            self.now += action.ms
            if self.retry is not None and self.now > self.retry[1]:
                self.retry = None
        elif isinstance(action, AdminAlterClientQuota):
            self.mgr = q.set_quota(self.mgr, self.m.ENTITY, action.rate)
            self.retry = None
        else:
            if isinstance(action, ClientRetryAfterThrottle):
                shape, self.now = self.retry
            else:
                shape = action.shape
            request, metadata = build_request(shape)
            out = q.handle_request(
                self.mgr,
                self.m.PRINCIPAL,
                request,
                self.now,
                metadata=metadata,
                controller=self.m.config.controller,
                rule=self.m.rule,
            )
            self.mgr = out.state
            rejected = tuple(
                n
                for n, r in zip(shape.sizes, out.response.results, strict=True)
                if r.error_code == THROTTLING_QUOTA_EXCEEDED
            )
            self.rejected = len(rejected)
            self.mute_until = self.now + out.throttle_time_ms
            self.retry = (
                (replace(shape, sizes=rejected), self.now + out.throttle_time_ms)
                if (shape.strict and rejected)
                else None
            )

    def tokens(self):
        key, cfg = q.resolve_quota(self.mgr, self.m.PRINCIPAL)
        return q.measure(self.mgr.bucket(key), cfg, self.now)[0]


@pytest.mark.parametrize("size", ["small", "quota-change", "rounding"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_canonical_model_agrees_with_the_reference_in_absolute_time(size, data):
    m = quota_model("kip599", size)
    raw = RawRun(m)
    s = m.init_states()[0]
    for _ in range(data.draw(st.integers(1, 14))):
        acts = m.actions(s)
        a = acts[data.draw(st.integers(0, len(acts) - 1))]
        s = m.next_state(s, a)
        raw.step(a)
        assert s.now_ms == raw.now
        assert m.measure(s) == raw.tokens()
        assert s.rejected == raw.rejected
        assert s.mute_ms == max(0, raw.mute_until - raw.now)
        assert (RETRY in m.actions(s)) == (raw.retry is not None)
        # the lazy bucket is refilled with the rate in force: check a later measure too
        assert (
            m.measure(s, 700)
            == q.measure(raw.mgr.bucket(m.KEY), q.resolve_quota(raw.mgr, m.PRINCIPAL)[1], raw.now + 700)[0]
        )


# -- verdicts ---------------------------------------------------------------------------------------

HOLDS = None  # marker: the property holds (no counterexample)

# (profile, configuration) -> property -> shortest counterexample (list of actions) or HOLDS.
# `sometimes` properties list their shortest *example* instead, or [] when none exists.
VERDICTS = {
    ("kip599", "small"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: [
            S1,
            S11,
            P1,
        ],  # 1 + 2 strict (tight: 3 = 2 + 0 + 1), then an old client's 1
        PERMISSIVE_NEVER_REJECTS: HOLDS,
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        RETRY_AFTER_THROTTLE_ADMITTED: [
            S3,
            S11,
            RETRY,
        ],  # after 1 s tokens are 0: the first 1 gets in, not the second
        LARGE_TOPIC_EVENTUALLY_ADMITTED: HOLDS,
    },
    ("kip599-draft", "small"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: [S11, P1, P1],
        PERMISSIVE_NEVER_REJECTS: HOLDS,
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        RETRY_AFTER_THROTTLE_ADMITTED: [S3, RETRY],  # 3 > burst 2: waits (3-2)/1 s, still 2 tokens
        LARGE_TOPIC_EVENTUALLY_ADMITTED: [],  # from the initial state no path ever admits the 3
    },
    ("kip599", "strict-only"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: HOLDS,
        PERMISSIVE_NEVER_REJECTS: HOLDS,  # no old client in this configuration
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        RETRY_AFTER_THROTTLE_ADMITTED: [S3, S11, RETRY],
        LARGE_TOPIC_EVENTUALLY_ADMITTED: HOLDS,
    },
    ("kip599-draft", "strict-only"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: HOLDS,
        PERMISSIVE_NEVER_REJECTS: HOLDS,  # no old client in this configuration
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        RETRY_AFTER_THROTTLE_ADMITTED: [S3, RETRY],
        LARGE_TOPIC_EVENTUALLY_ADMITTED: [],
    },
    ("kip599", "rounding"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: HOLDS,
        PERMISSIVE_NEVER_REJECTS: HOLDS,  # no old client in this configuration
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        # 3 - 4 = -1; the 1 is told round(1/3 s) = 333 ms; after 333 ms tokens are -0.001
        RETRY_AFTER_THROTTLE_ADMITTED: [S4, S1, RETRY],
        LARGE_TOPIC_EVENTUALLY_ADMITTED: HOLDS,
    },
    ("kip599-draft", "rounding"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: HOLDS,
        PERMISSIVE_NEVER_REJECTS: HOLDS,  # no old client in this configuration
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        RETRY_AFTER_THROTTLE_ADMITTED: [S4, RETRY],
        LARGE_TOPIC_EVENTUALLY_ADMITTED: [],
    },
    ("kip599", "quota-change"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: HOLDS,
        PERMISSIVE_NEVER_REJECTS: HOLDS,  # no old client in this configuration
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        RETRY_AFTER_THROTTLE_ADMITTED: [S3, S11, RETRY],
        LARGE_TOPIC_EVENTUALLY_ADMITTED: HOLDS,
    },
    ("kip599-draft", "quota-change"): {
        TOKENS_WITHIN_BURST: HOLDS,
        STRICT_OVERDRAFT_BOUNDED: HOLDS,
        ADMITTED_WITHIN_INTERVAL: HOLDS,
        PERMISSIVE_NEVER_REJECTS: HOLDS,  # no old client in this configuration
        THROTTLE_NEVER_NEGATIVE: HOLDS,
        RETRY_AFTER_THROTTLE_ADMITTED: [S3, RETRY],
        LARGE_TOPIC_EVENTUALLY_ADMITTED: [],
    },
}

# (profile, configuration) -> (states, edges): pinned so that any drift in the semantics shows
COUNTS = {
    ("kip599", "small"): (3792, 23777),
    ("kip599-draft", "small"): (1639, 10412),
    ("kip599", "strict-only"): (3490, 20030),
    ("kip599-draft", "strict-only"): (301, 1734),
    ("kip599", "rounding"): (593, 2127),
    ("kip599-draft", "rounding"): (51, 185),
}


@pytest.mark.parametrize("profile, size", sorted(VERDICTS))
def test_verdicts(profile, size):
    res = explored(profile, size)
    assert res.complete
    for name, expected in VERDICTS[profile, size].items():
        if expected is HOLDS:
            assert res.holds(name), (name, [str(a) for a in res.violations.get(name, [])])
        else:
            assert not res.holds(name), name
            assert res.violations[name] == expected, (name, [str(a) for a in res.violations[name]])
    # every property the configuration checks has a pinned verdict
    checked = {p.name for p in quota_model(profile, size).properties()} - {
        SOMETIMES_THROTTLED,
        SOMETIMES_OVERDRAWN,
    }
    assert checked == set(VERDICTS[profile, size])


@pytest.mark.parametrize("profile, size", sorted(COUNTS))
def test_state_counts_are_pinned(profile, size):
    res = explored(profile, size)
    assert (res.states, res.edges) == COUNTS[profile, size]


@pytest.mark.parametrize("profile, size", sorted(VERDICTS))
def test_sometimes_examples(profile, size):
    res = explored(profile, size)
    assert res.examples[SOMETIMES_THROTTLED] in ([S3, S1], [S3], [S4, S1], [S4])
    if profile == "kip599":
        assert res.examples[SOMETIMES_OVERDRAWN] in ([S3], [S4])
    elif size == "small":  # the draft overdraws only through an old client
        assert res.examples[SOMETIMES_OVERDRAWN] == [S11, P1]
    else:  # the draft's strict rule never takes tokens below zero
        assert SOMETIMES_OVERDRAWN not in res.examples


def test_counterexamples_replay_to_a_violation():
    m = quota_model("kip599", "rounding")
    states = replay(m, [S4, S1, RETRY])
    assert [float(m.measure(s)) for s in states] == [3.0, -1.0, -1.0, -0.001]
    assert states[2].retry_in_ms == 333 and states[3].rejected == 1
    prop = {p.name: p for p in m.properties()}[RETRY_AFTER_THROTTLE_ADMITTED]
    assert not prop.predicate(states[2], RETRY, states[3])

    m = quota_model("kip599", "small")
    states = replay(m, [S1, S11, P1])
    assert states[-1].window == ((0, 4, 1),)
    assert not {p.name: p for p in m.properties()}[ADMITTED_WITHIN_INTERVAL].predicate(states[-1])


def test_retry_holds_for_one_topic_requests_when_the_wait_is_exact():
    """Rate 1/s: -K/R*1000 is a whole number of ms, so one-topic retries always get in (kip599);
    the draft still starves the topic larger than the burst, and only that one."""
    shapes = (RequestShape(CREATE_TOPICS, 7, (1,)), RequestShape(CREATE_TOPICS, 7, (4,)))
    res = explore(quota_model("kip599", "rounding", rate=Fraction(1), shapes=shapes))
    assert res.complete and not res.violations
    res = explore(
        quota_model("kip599-draft", "small", shapes=shapes[:1] + (RequestShape(CREATE_TOPICS, 7, (2,)),))
    )
    assert res.holds(RETRY_AFTER_THROTTLE_ADMITTED)
    assert LARGE_TOPIC_EVENTUALLY_ADMITTED not in {
        p.name for p in quota_model("kip599", "small", shapes=shapes[:1]).properties()
    }


def test_the_draft_starves_for_ever():
    """The lasso behind the draft's liveness verdict: wait what you are told, retry, forever."""
    m = quota_model("kip599-draft", "small")
    s = m.next_state(m.init_states()[0], S3)
    seen = []
    for _ in range(4):
        assert s.rejected == 1 and not s.large_admitted
        seen.append(s)
        s = m.next_state(s, RETRY)
    assert len(set(seen)) == 1  # the same state again: a cycle that never admits the topic


# -- deliberately broken rules: each property that holds above can fail ----------------------------


def _refill_uncapped(bucket, cfg, now_ms):
    if bucket is None:
        return q.TokenBucket(q.burst(cfg), now_ms)
    return q.TokenBucket(bucket.tokens + cfg.rate * (now_ms - bucket.last_update_ms) / 1000, now_ms)


def _record_then_check(bucket, cfg, n, now_ms, *, refill=q.refill):
    b = q.record(bucket, cfg, n, now_ms, refill=refill)
    if b.tokens < 0:  # Sensor.record(checkQuotas=true) used for strict clients: recorded even when rejected
        return q.TopicDecision(False, b, q.throttle_time_ms(b.tokens, cfg.rate))
    return q.TopicDecision(True, b)


MUTANTS = {
    # refill forgets min(burst, ...)
    TOKENS_WITHIN_BURST: (
        replace(q.KIP599, name="uncapped-refill", refill=_refill_uncapped),
        [S1, QuotaTick(500), QuotaTick(1000)],
    ),
    # strict records before it checks
    STRICT_OVERDRAFT_BOUNDED: (
        replace(q.KIP599, name="record-then-check", strict_topic=_record_then_check),
        [S3, S1],
    ),
    # old clients treated as new ones
    PERMISSIVE_NEVER_REJECTS: (
        replace(q.KIP599, name="strict-old-clients", permissive_topic=q.strict_check_then_record),
        [S3, P1],
    ),
    # throttleTime without max(0, ...)
    THROTTLE_NEVER_NEGATIVE: (
        replace(q.KIP599, name="unclamped-decay", decay=lambda t, rec, now: t - (now - rec)),
        [QuotaTick(500)],
    ),
    # new clients never rejected
    ADMITTED_WITHIN_INTERVAL: (
        replace(q.KIP599, name="strict-never-rejects", strict_topic=q.permissive_record),
        [S3, S3],
    ),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_broken_rules_are_caught_with_the_shortest_scenario(name):
    rule, path = MUTANTS[name]
    m = QuotaModel(QUOTA_CONFIGS["small"], rule=rule)
    res = explore(m, stop_when=name, max_depth=10)
    assert res.violations.get(name) == path, [str(a) for a in res.violations.get(name, [])]
    assert explored("kip599", "small").holds(name) or name == ADMITTED_WITHIN_INTERVAL
    assert explored("kip599", "strict-only").holds(name)
