"""The mutation quota as clients meet it (issue 26, item 5): clients that wait out the throttle time and retry,
and validateOnly requests under each controller type (reference/quota_retry.py, the `[quota_handlers]` keys
retry / permissive_sizes / validate_only_sizes / controller of checker/models/quota_handlers.py, the
properties of spec/quota_client_properties.py).

- the reference: the token bucket's throttle time is the exact wait up to Math.round; the windowed Rate's is
  not (its window floor, its expiring samples), on the strict and on the permissive path; the validateOnly
  accounting is the twin of reference.quota.mutation_counts;
- Kafka's token bucket keeps both retry properties at rate 1 (the rounding finding needs a rate that does not
  divide 1000 ms); the check-only accounting keeps both validateOnly properties;
- each property's broken variant is caught with its pinned shortest counterexample; each real finding occurs
  at its `at` table; the keys are off by default and a bad key or value exits 2 naming it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction as F

import pytest
from kreassign.checker.check.run import KNOWN, check_model, explore_classified
from kreassign.checker.models import quota_handlers as qh
from kreassign.checker.traces.format import read_trace
from kreassign.checker.traces.replay import replay
from kreassign.reference import quota as ref
from kreassign.reference import quota_retry as qr
from kreassign.spec import findings as FND
from kreassign.spec import quota_client_properties as qc
from kreassign.spec.quota import (
    CreatableTopic,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
    CreateTopicsRequest,
)
from test_exit_codes import run

from kreassign.errors import OK, USAGE

TB, RATE = "kip599-handlers", "kip599-handlers-rate"


def _table(**table):
    return {"handlers": 1, "quota_changes": [], **table}


def make(profile: str, **table) -> qh.QuotaHandlersModel:
    """The quota-handlers model of `profile` at a `[quota_handlers]`-shaped table (one handler, no quota change)."""
    return qh.QuotaHandlersModel(qh.config_from_mapping(_table(**table), profile))


def _text(profile: str, table: dict) -> str:
    return f"--profile {profile} [quota_handlers] " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in
                                                               _table(**table).items())


def _violation(model, prop):
    """(action texts, unexpected?) of the shortest violation of `prop`."""
    _, classified = explore_classified(model, model.config.profile, keep_graph=False, only=prop)
    c = classified[prop]
    found = c.unexpected or next(iter(c.findings.values()), None)
    assert found is not None, f"{prop} holds"
    path, _ = found
    return [str(a) for _, a in path[1:]], c.unexpected is not None


# -- the reference ------------------------------------------------------------------------------------------


def _cfg(rate=1, samples=2):
    return ref.QuotaConfig(F(rate), samples, 1000)


def test_token_bucket_throttle_is_the_exact_wait_up_to_math_round():
    cfg = _cfg()
    s = qr.strict(qr.Sensor(qr.TOKEN_BUCKET), cfg, 3, 0)  # burst 2 -> -1
    rejected = qr.strict(s.sensor, cfg, 1, 0)
    assert (s.admitted, rejected.admitted, rejected.throttle_ms) == (True, False, 1000)
    assert not qr.within_quota(rejected.sensor, cfg, 999) and qr.within_quota(rejected.sensor, cfg, 1000)
    cfg3 = _cfg(rate=3, samples=1)  # burst 3; -1 token is 333.3 ms of refill
    s = qr.strict(qr.Sensor(qr.TOKEN_BUCKET), cfg3, 4, 0)
    rejected = qr.strict(s.sensor, cfg3, 1, 0)
    assert rejected.throttle_ms == 333
    again = qr.strict(rejected.sensor, cfg3, 1, 333)  # still -1/1000: rejected, and its throttle rounds to 0
    assert (again.admitted, again.throttle_ms, again.sensor.bucket.tokens) == (False, 0, F(-1, 1000))


def test_the_rates_throttle_is_too_short_under_its_window_floor_and_too_long_past_sample_expiry():
    cfg = _cfg()
    s = qr.Sensor(qr.RATE)
    for _ in range(2):
        s = qr.strict(s, cfg, 1, 0).sensor
    rejected = qr.strict(s, cfg, 1, 0)  # 2 in a window floored to 1 s: 2/s > 1/s, wait (2 - 1) / 1 x 1000
    assert (rejected.admitted, rejected.throttle_ms) == (False, 1000)
    assert not qr.within_quota(rejected.sensor, cfg, 1000)  # elapsed 1 s = the floor: still 2/s
    s = qr.strict(qr.strict(qr.Sensor(qr.RATE), cfg, 1, 0).sensor, cfg, 3, 0).sensor
    rejected = qr.strict(s, cfg, 1, 0)  # 4/s: told 3000 ms
    assert rejected.throttle_ms == 3000
    assert qr.within_quota(rejected.sensor, cfg, 2000)  # the sample expires 2 x 1 s after its last event


def test_the_permissive_path_waits_out_its_mute_under_the_bucket_but_not_under_the_rate():
    cfg = _cfg()
    old = qr.permissive(qr.Sensor(qr.TOKEN_BUCKET), cfg, 3, 0)  # recorded, never rejected: -1 -> 1000 ms
    assert (old.admitted, old.throttle_ms) == (True, 1000)
    assert qr.within_quota(old.sensor, cfg, 1000) and not qr.within_quota(old.sensor, cfg, 999)
    old = qr.permissive(qr.Sensor(qr.RATE), cfg, 2, 0)
    assert (old.admitted, old.throttle_ms) == (True, 1000)
    assert not qr.within_quota(old.sensor, cfg, 1000)


@pytest.mark.parametrize("controller", ["kraft", "zk"])
def test_validate_only_accounting_is_the_twin_of_mutation_counts(controller):
    acc = qr.controller_accounting(controller)
    for request, meta in ((CreateTopicsRequest((CreatableTopic("t", 2),), validate_only=True), {}),
                          (CreatePartitionsRequest((CreatePartitionsTopic("t", 3),), validate_only=True), {"t": 1})):
        counted = ref.mutation_counts(request, meta, controller=controller)[0].count
        assert acc.recorded == acc.checked == (counted is not None)
    with pytest.raises(ValueError, match="controller"):
        qr.controller_accounting("x")


# -- Kafka's rules and their broken variants in the model ----------------------------------------------------


def test_kafkas_token_bucket_keeps_both_retry_properties_at_rate_one():
    model = make(TB, retry=True, permissive_sizes=[1], sizes=[1, 3], horizon_ms=2000)
    _, classified = explore_classified(model, TB, keep_graph=False)
    for name in qc.RETRY_PROPERTIES:
        assert classified[name].unexpected is None and not classified[name].findings, name


@pytest.mark.parametrize("profile", [TB, RATE])
def test_the_check_only_accounting_keeps_both_validate_only_properties(profile):
    model = make(profile, validate_only_sizes=[1], validate_only_accounting="check_only", horizon_ms=1000)
    _, classified = explore_classified(model, profile, keep_graph=False)
    for name in qc.VALIDATE_ONLY_PROPERTIES:
        assert classified[name].unexpected is None and not classified[name].findings, name


#: (property, variant, profile, table, shortest counterexample, reported unexpected?)
BROKEN = [
    (qc.RETRY_AFTER_THROTTLE_TIME_ADMITTED, "token bucket throttle in seconds, not ms", TB,
     {"retry": True, "horizon_ms": 1, "throttle": "seconds"},
     ["Send(handler 0, 3 mutations)", "Send(handler 0, 1 mutations)", "RetryAfterThrottle()"], True),
    (qc.THROTTLE_TIME_NOT_TOO_LONG, "token bucket throttle until the bucket is full again", TB,
     {"retry": True, "horizon_ms": 0, "throttle": "until_full"},
     ["Send(handler 0, 3 mutations)", "Send(handler 0, 1 mutations)"], True),
    # the two controllers are each other's broken variant: their violations are the declared findings
    (qc.VALIDATE_ONLY_NEVER_CONSUMES_QUOTA, "zk with KRaft's validateOnly accounting (check and record)", TB,
     {"validate_only_sizes": [1], "horizon_ms": 0, "controller": "zk", "validate_only_accounting": "kraft"},
     ["SendValidateOnly(1 mutations)"], False),
    (qc.VALIDATE_ONLY_ANSWERS_LIKE_THE_REQUEST, "kraft with ZooKeeper's validateOnly accounting (skip the quota)",
     TB, {"validate_only_sizes": [1], "horizon_ms": 0, "validate_only_accounting": "zk"},
     ["Send(handler 0, 3 mutations)", "SendValidateOnly(1 mutations)"], False),
]


@pytest.mark.parametrize("prop,variant,profile,table,actions,unexpected", BROKEN, ids=[b[1] for b in BROKEN])
def test_a_broken_variant_is_caught_with_its_shortest_counterexample(prop, variant, profile, table, actions,
                                                                     unexpected):
    assert _violation(make(profile, **table), prop) == (actions, unexpected)
    kafka = {k: v for k, v in table.items() if k not in ("throttle", "validate_only_accounting")}
    _, classified = explore_classified(make(profile, **kafka), profile, keep_graph=False, only=prop)
    assert classified[prop].unexpected is None and not classified[prop].findings  # Kafka's own rule keeps it


#: the declared findings of the client properties (spec/findings.py): (profile, finding)
REAL = [(p, f) for f in FND.FINDINGS for p in f.profiles if "quota_handlers" in f.at]


def test_every_client_property_is_promised_or_has_findings_per_profile():
    assert {f.name for _, f in REAL} == {"throttle_rounded_down", "rate_window_outlasts_throttle",
                                        "samples_expire_before_throttle_ends", "kraft_validate_only_consumes_quota",
                                        "zk_validate_only_skips_quota"}
    for prop in qc.retry_properties() + qc.validate_only_properties():
        for profile in (TB, RATE):
            assert prop.promised(profile) != bool(FND.findings_for(profile, prop.name)), (profile, prop.name)


@pytest.mark.parametrize("profile,finding", REAL, ids=[f"{p}::{f.name}" for p, f in REAL])
def test_each_real_finding_occurs_at_its_table_and_its_trace_replays(profile, finding):
    cfg = qh.config_from_mapping(dict(finding.at["quota_handlers"]), profile)
    result = check_model(profile, cfg, factory=lambda p, b: qh.QuotaHandlersModel(b), model_kind="quota")
    v = result.properties[finding.property]
    assert v.status == KNOWN and finding.name in v.findings and result.unexpected == []
    trace = read_trace(finding.trace_file(profile))
    assert replay(trace).reproduces and trace.description.startswith(finding.name)


# -- off by default, the table, the traces -------------------------------------------------------------------


@pytest.mark.parametrize("profile", [TB, RATE])
def test_the_keys_are_off_by_default(profile):
    cfg = qh.default_config(profile)
    assert not cfg.clients and not set(qh.CLIENT_DEFAULTS) & set(cfg.describe())
    model = qh.QuotaHandlersModel(cfg)
    assert model.init_states()[0].client is None and "client" not in model.state_to_json(model.init_states()[0])
    assert not {p.name for p in model.properties()} & set(qc.RETRY_PROPERTIES + qc.VALIDATE_ONLY_PROPERTIES)


def test_check_and_fuzz_read_the_keys_and_name_a_bad_one(capsys, tmp_path):
    good = tmp_path / "c.toml"
    good.write_text('[quota_handlers]\nretry = true\nhandlers = 1\nhorizon_ms = 1000\nquota_changes = []\n'
                    'permissive_sizes = [1]\nvalidate_only_sizes = [1]\ncontroller = "zk"\n')
    code, out, _ = run(["check", "--json", "--out", str(tmp_path / "o"), "--profile", RATE, "--config", str(good)],
                       capsys)
    props = json.loads(out)["results"][0]["properties"]
    assert code == OK and {n: props[n]["status"] for n in (qc.RETRY_PROPERTIES + qc.VALIDATE_ONLY_PROPERTIES)} == {
        qc.RETRY_AFTER_THROTTLE_TIME_ADMITTED: KNOWN, qc.THROTTLE_TIME_NOT_TOO_LONG: KNOWN,
        qc.VALIDATE_ONLY_NEVER_CONSUMES_QUOTA: "holds", qc.VALIDATE_ONLY_ANSWERS_LIKE_THE_REQUEST: KNOWN}
    code, out, _ = run(["fuzz", "--profile", TB, "--config", str(good), "--examples", "10", "--seed", "1",
                        "--no-exhaustive"], capsys)
    assert code == OK and qc.RETRY_AFTER_THROTTLE_TIME_ADMITTED in out
    for line, field in (("retri = true", "quota_handlers.retri"), ('controller = "x"', "quota_handlers.controller"),
                        ("permissive_sizes = [0]", "quota_handlers.permissive_sizes[0]"),
                        ('throttle = "seconds"', "quota_handlers.throttle")):  # a variant, not a user's bound
        bad = tmp_path / "b.toml"
        bad.write_text(f"[quota_handlers]\n{line}\n")
        for cmd in ("check", "fuzz"):
            code, _, err = run([cmd, "--profile", TB, "--config", str(bad)], capsys)
            assert code == USAGE and f"b.toml: {field}" in err and len(err.strip().splitlines()) == 1, (cmd, err)


def test_bad_variant_values_name_the_field():
    for table, field in (({"throttle": "x"}, "bounds.throttle"), ({"validate_only_accounting": "x"},
                                                                    "bounds.validate_only_accounting"),
                         ({"retry": 1}, "bounds.retry"), ({"retry": True, "atomic": False}, "bounds.retry")):
        with pytest.raises(ValueError, match=field.replace(".", r"\.")):
            qh.config_from_mapping(table, TB)
    with pytest.raises(ValueError, match=r"bounds\.throttle"):
        qh.config_from_mapping({"throttle": "seconds"}, RATE)  # the Rate has its own throttle


def test_states_actions_and_the_ghost_round_trip_through_json():
    model = make(RATE, retry=True, permissive_sizes=[1], validate_only_sizes=[1], horizon_ms=1000)
    seen = 0
    frontier = list(model.init_states())
    visited = set(frontier)
    while frontier and seen < 300:
        s = frontier.pop()
        seen += 1
        assert model.state_from_json(json.loads(json.dumps(model.state_to_json(s)))) == s
        for a, n in model.successors(s):
            assert model.action_from_json(json.loads(json.dumps(model.action_to_json(a)))) == a
            if n not in visited:
                visited.add(n)
                frontier.append(n)
    with pytest.raises(ValueError, match=r"client\.retried"):
        qc.ClientGhost.from_json({"retried": [1, 2]})
    with pytest.raises(ValueError, match=r"action\.n"):
        model.action_from_json({"type": "SendOld", "n": 0})


# -- for bench/issue26_capabilities.py: one row per broken variant and per real finding ----------------------

BENCH_ROWS = [
    (prop, variant, "quota", _text(profile, table), (lambda p=profile, t=table: make(p, **t)))
    for prop, variant, profile, table, _, _ in BROKEN
] + [
    (f.property, f"real {p}: {f.name}", "quota", _text(p, {k: v for k, v in f.at["quota_handlers"].items()}),
     (lambda p=p, t=dict(f.at["quota_handlers"]): qh.QuotaHandlersModel(qh.config_from_mapping(t, p))))
    for p, f in REAL
]


def test_bench_rows_build_their_models():
    for prop, _, kind, text, make_model in BENCH_ROWS:
        model = make_model()
        assert kind == "quota" and text.startswith("--profile") and prop in {p.name for p in model.properties()}


def test_the_default_model_keeps_its_shape():
    # the client ghost is None and the default configuration's transitions are Kafka's (atomic check-then-record)
    model = qh.QuotaHandlersModel(replace(qh.default_config(TB), handlers=1, quota_changes=()))
    s = model.init_states()[0]
    assert [str(a) for a in model.actions(s)] == ["Tick(500ms)", "Tick(1000ms)", "Send(handler 0, 1 mutations)",
                                                  "Send(handler 0, 3 mutations)"]
