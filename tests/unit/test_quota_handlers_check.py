"""`kreassign check --profile kip599-handlers[-rate]`: the quota under concurrent request handlers and
quota changes (checker/models/quota_handlers.py) as checkable profiles.

Kafka's rules hold at the default configuration (pinned counts); each broken strategy is reported
unexpected (exit 1) with its shortest counterexample, whose trace replays and renders; a bad
`[quota_handlers]` table, or a trace with bad bounds, is a one-line error naming the field (exit 2).
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction as F
from pathlib import Path

import pytest
from kreassign.checker.check.suite import QUOTA_SUITE
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models import quota_handlers as qh
from kreassign.checker.models.registry import QUOTA, build_model, model_kind
from test_exit_codes import run  # main(argv) -> (exit code, stdout, stderr), never a traceback

from kreassign.errors import FINDING, OK, USAGE

PROFILES = ("kip599-handlers", "kip599-handlers-rate")


def check(argv, capsys, tmp_path):
    code, out, err = run(["check", "--json", "--out", str(tmp_path / "out"), *argv], capsys)
    return code, json.loads(out) if out.strip() else None, err


def test_kafka_holds_in_both_profiles_at_the_default_configuration(capsys, tmp_path):
    argv = [a for p in PROFILES for a in ("--profile", p)]
    code, out, _ = check(argv, capsys, tmp_path)
    assert code == OK
    counts = {r["profile"]: (r["states"], r["transitions"], r["depth"]) for r in out["results"]}
    assert counts == {"kip599-handlers": (741, 5277, 11), "kip599-handlers-rate": (1167, 7890, 12)}
    for r in out["results"]:
        assert r["complete"] and {v["status"] for v in r["properties"].values()} == {"holds"}
    assert set(out["results"][0]["properties"]) == {"overdraft_bounded_with_concurrent_handlers",
                                                    "next_admission_uses_quota_in_force", "unquoted_never_throttled"}
    assert set(out["results"][1]["properties"]) == {"rate_admission_uses_quota_in_force", "unquoted_never_throttled"}


def test_both_profiles_are_quota_profiles_of_the_default_suite():
    for p in PROFILES:
        assert model_kind(p) == QUOTA and p in QUOTA_SUITE
        model = build_model(QUOTA, p, QUOTA_SUITE[p]())
        assert model.describe()["profile"] == p
        assert all(prop.promised_by == (p,) for prop in model.properties())


#: broken on purpose: (strategy, profile) -> {property: shortest counterexample}
BROKEN = {
    # the check and the record not under `quotaSensor synchronized`: two handlers overdraw the bucket
    ("atomic", "kip599-handlers"): {"overdraft_bounded_with_concurrent_handlers": [
        "Send(handler 0, 3 mutations)", "Send(handler 1, 3 mutations)", "Record(handler 0)", "Record(handler 1)"]},
    # the sensor's MetricConfig not rewritten on a quota change (no updateQuotaMetricConfigs)
    ("follows_quota_changes", "kip599-handlers"): {
        "next_admission_uses_quota_in_force": [
            "AlterQuota(2)", "Send(handler 0, 1 mutations)", "AlterQuota(1/2)", "Send(handler 0, 1 mutations)"],
        "unquoted_never_throttled": [
            "Send(handler 0, 3 mutations)", "AlterQuota(remove)", "Send(handler 0, 1 mutations)"]},
    ("follows_quota_changes", "kip599-handlers-rate"): {
        "rate_admission_uses_quota_in_force": [
            "Send(handler 0, 1 mutations)", "AlterQuota(1/2)", "Send(handler 0, 1 mutations)"],
        "unquoted_never_throttled": [
            "Send(handler 0, 3 mutations)", "AlterQuota(remove)", "Send(handler 0, 1 mutations)"]},
}


@pytest.mark.parametrize("strategy,profile", list(BROKEN))
def test_a_broken_strategy_is_unexpected_and_its_trace_replays_and_renders(strategy, profile, capsys, tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(qh, "DEFAULT_CHECK_CONFIG", replace(qh.DEFAULT_CHECK_CONFIG, **{strategy: False}))
    code, out, _ = check(["--profile", profile], capsys, tmp_path)
    assert code == FINDING
    props = out["results"][0]["properties"]
    assert sorted(n for n, v in props.items() if v["status"] == "violated") == sorted(BROKEN[strategy, profile])
    for name, actions in BROKEN[strategy, profile].items():
        v = props[name]
        assert v["length"] == len(actions)
        trace = json.loads(Path(v["counterexample"]).read_text())
        assert [s["action_text"] for s in trace["steps"]] == actions
        assert trace["model"] == QUOTA and trace["profile"] == profile and trace["bounds"][strategy] is False
        code, text, _ = run(["replay", v["counterexample"]], capsys)
        assert code == OK and f"reproduces: {profile} violates {name}" in text
        code, text, _ = run(["show", v["counterexample"]], capsys)
        assert code == OK and actions[-1] in text and ("tokens" in text or "samples" in text)


def test_the_trace_of_kafkas_rules_does_not_reproduce_a_broken_variants_trace(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(qh, "DEFAULT_CHECK_CONFIG", replace(qh.DEFAULT_CHECK_CONFIG, atomic=False))
    _, out, _ = check(["--profile", "kip599-handlers"], capsys, tmp_path)
    path = out["results"][0]["properties"]["overdraft_bounded_with_concurrent_handlers"]["counterexample"]
    trace = json.loads(Path(path).read_text())
    trace["bounds"]["atomic"] = True  # Kafka's lock: Send records at once, there is no Record to replay
    (tmp_path / "kafka.json").write_text(json.dumps(trace))
    code, text, _ = run(["replay", str(tmp_path / "kafka.json")], capsys)
    assert code == FINDING and "does not reproduce: step 1" in text and "tokens" in text
    trace["steps"] = trace["steps"][2:]  # a Record with nothing checked
    (tmp_path / "kafka.json").write_text(json.dumps(trace))
    code, text, _ = run(["replay", str(tmp_path / "kafka.json")], capsys)
    assert code == FINDING and "Record(handler 0) is not enabled" in text


TABLE_ERRORS = [
    ("sizes = [0]", "quota_handlers.sizes[0]"),
    ('rate = 0.5', "quota_handlers.rate"),
    ('quota_changes = ["1/0"]', "quota_handlers.quota_changes[0]"),
    ("handlers = 99", "quota_handlers.handlers"),
    ("horizon_ms = 100000000", "quota_handlers.horizon_ms"),
    ("samples = 0", "quota_handlers.samples"),
    ("atomic = false", "quota_handlers.atomic"),  # a strategy is the profile's, not a bound
    ("brokers = 3", "quota_handlers.brokers"),
]


@pytest.mark.parametrize("line,field", TABLE_ERRORS, ids=[f for _, f in TABLE_ERRORS])
def test_a_bad_quota_handlers_table_exits_2_naming_the_field(line, field, capsys, tmp_path):
    cfg = tmp_path / "h.toml"
    cfg.write_text(f"[quota_handlers]\n{line}\n")
    code, out, err = check(["--profile", "kip599-handlers", "--config", str(cfg)], capsys, tmp_path)
    assert code == USAGE and out is None
    assert len(err.strip().splitlines()) == 1 and f"h.toml: {field}" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_table_sets_the_bounds_and_remove_removes_the_quota(capsys, tmp_path):
    cfg = tmp_path / "h.toml"
    cfg.write_text('[quota_handlers]\nrate = "1/2"\nsizes = [2]\nhandlers = 3\nquota_changes = [1, "remove"]\n'
                   '[profiles]\nnames = ["kip599-handlers-rate"]\n')
    code, out, _ = check(["--config", str(cfg)], capsys, tmp_path)
    assert code == OK
    bounds = out["results"][0]["bounds"]
    assert (bounds["rate"], bounds["sizes"], bounds["handlers"], bounds["quota_changes"]) == ("1/2", [2], 3, [1, None])
    assert bounds["sensor"] == "rate"


def test_a_trace_with_bad_bounds_exits_2_naming_the_field(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(qh, "DEFAULT_CHECK_CONFIG", replace(qh.DEFAULT_CHECK_CONFIG, atomic=False))
    _, out, _ = check(["--profile", "kip599-handlers"], capsys, tmp_path)
    path = out["results"][0]["properties"]["overdraft_bounded_with_concurrent_handlers"]["counterexample"]
    for edit, field in ((lambda t: t["bounds"].update(sizes=[0]), "bounds.sizes[0]"),
                        (lambda t: t["bounds"].update(sensor="rate"), "bounds.sensor"),
                        (lambda t: t["steps"][0]["state"].pop("tokens"), "tokens")):
        trace = json.loads(Path(path).read_text())
        edit(trace)
        (tmp_path / "bad.json").write_text(json.dumps(trace))
        for command in ("replay", "show"):
            code, _, err = run([command, str(tmp_path / "bad.json")], capsys)
            assert code == USAGE and len(err.strip().splitlines()) == 1 and field in err, (command, err)


@pytest.mark.parametrize("profile", PROFILES)
def test_states_and_actions_round_trip_through_json(profile):
    model = qh.QuotaHandlersModel(replace(qh.default_config(profile), atomic=False, quota_changes=(F(2), None)))
    graph = explore(model, keep_graph=True).graph
    for s in graph.states:
        assert model.state_from_json(json.loads(json.dumps(model.state_to_json(s)))) == s
        for a in model.actions(s):
            assert model.action_from_json(json.loads(json.dumps(model.action_to_json(a)))) == a
        # the engines' successors (no enabledness check) are actions + next_state (which checks it)
        assert list(model.successors(s)) == [(a, n) for a in model.actions(s)
                                             if (n := model.next_state(s, a)) is not None]
