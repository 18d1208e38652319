"""`kreassign conformance` without a JVM: campaigns run against a stand-in cluster that does what the model
does (scenario_fakes.py) — every scenario agrees; with a planted difference (a cancel answered wrongly) the
campaign diverges, minimizes, and says so in JSON, JUnit and HTML; the flags are checked before anything runs."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pytest
from kreassign.checker.conformance import campaign as C
from kreassign.checker.conformance import options as O
from kreassign.checker.conformance.options import ConformanceOptions
from kreassign.checker.conformance.outputs import html_report, junit_xml
from kreassign.checker.scenarios import mapping

from kreassign.cli import main
from tests.unit.scenario_fakes import ModelAdmin, ModelCluster, tool_through_admin


@pytest.fixture(autouse=True)
def _tool_steps_through_the_stand_in(monkeypatch):
    tool_through_admin(monkeypatch)


NO_PAUSE = ("kill", "stop", "failover")  # the stand-in has no throttles to hold a follower with


class CampaignAdmin(ModelAdmin):
    def create_topic(self, name, assignment, configs):  # every scenario starts from the model's initial state
        super().create_topic(name, assignment, configs)
        self.state = mapping.settle(self.model, self.model.init_states()[0])[0]

    def delete_topics(self, names):
        self.deleted = [*getattr(self, "deleted", []), *names]


class CampaignCluster(ModelCluster):
    bootstrap = "127.0.0.1:1"

    def __init__(self, model, **kw):
        super().__init__(model)
        self.admin = CampaignAdmin(model, **kw)
        self.closed = False

    def describe(self):
        return "stand-in"

    def wait_until_ready(self):
        pass

    def close(self):
        self.closed = True


@pytest.fixture
def one_shape(monkeypatch):
    """Every scenario at the first shape (the stand-in's model is one model)."""
    monkeypatch.setattr(O, "SHAPES", O.SHAPES[:1])


def _campaign(n=4, wrong_cancel=False, **kw):
    options = ConformanceOptions("4.4.0", scenarios=n, seed=10, faults=NO_PAUSE, **kw)
    model = mapping.make_model(options.bounds(0))
    started = []

    def start(spec):
        assert spec.version == "4.4.0" and spec.brokers == 4 and spec.broker_config == ()
        started.append(CampaignCluster(model, wrong_cancel=wrong_cancel))
        return started[-1]

    lines = []
    result = C.Campaign(options, log=lines.append, start=start).run()
    return result, started, lines


def test_options_name_the_bad_field():
    for kw, what in [({"mode": "mesh"}, "mode"), ({"faults": ("kill", "flood")}, "faults"), ({"brokers": 2}, "brokers"),
                     ({"scenarios": 0}, "scenarios"), ({"length": 0}, "length"), ({"minimize_runs": -1}, "minimize")]:
        with pytest.raises(ValueError, match=what):
            ConformanceOptions("4.4.0", **kw)
    o = ConformanceOptions("3.9.2", mode="zk")
    assert o.bounds(0).kafka_version == "" and ConformanceOptions("4.4.0").bounds(2).min_insync == 2


def test_draws_are_deterministic_and_exercise_every_fault():
    o = ConformanceOptions("4.4.0", scenarios=8, seed=3)
    a = [C.draw(o, i).to_json() for i in range(8)]
    assert a == [C.draw(o, i).to_json() for i in range(8)]
    assert len({s["cluster"]["topic"] for s in a}) == 8  # a topic of its own each
    kinds = {st["do"] for s in a for st in s["steps"]}
    assert kinds >= {"kill", "stop", "kill_controller", "pause", "resume", "restart", "reassign"}
    assert C.cluster_spec(o).broker_config and C.cluster_spec(o).session_timeout_ms >= 12000
    assert C.cluster_spec(ConformanceOptions("4.4.0", faults=NO_PAUSE)).broker_config == ()


def test_a_campaign_on_a_cluster_that_does_what_the_model_does_agrees(one_shape):
    result, started, lines = _campaign()
    t = result.totals()
    assert t["scenarios"] == 4 and t["agree"] == 4 and t["diverge"] == 0 and result.exit_code == 0
    assert len(started) == 1 and started[0].closed  # one cluster for every scenario, closed at the end
    assert started[0].admin.deleted == [f"conformance-{s}" for s in range(10, 14)]
    assert sum(t["faults"].values()) > 0 and set(t["faults"]) <= {"kill", "stop", "failover"}
    assert [ln for ln in lines if ln.startswith("conformance: [")][-1].startswith("conformance: [4/4] conformance-13")


def test_a_planted_difference_diverges_is_minimized_and_reported_everywhere(one_shape):
    result, _, _ = _campaign(n=6, wrong_cancel=True)
    bad = [o for o in result.outcomes if o.verdict == "diverges"]
    assert bad and result.exit_code == 1
    assert all(any(st.do == "cancel" for st in o.scenario.steps) for o in bad)
    m = bad[0].minimized
    assert m is not None and m.runs >= 1 and m.divergences
    assert len(m.scenario.steps) <= len(bad[0].scenario.steps)
    assert any(st.do == "cancel" for st in m.scenario.steps)  # what diverges survives minimization
    data = json.loads(json.dumps(result.to_json()))
    assert data["totals"]["diverge"] == len(bad) and data["scenarios"][bad[0].index]["scenario"]["steps"]
    suite = ET.fromstring(junit_xml(result)).find("testsuite")
    assert suite.get("tests") == "6" and suite.get("failures") == str(len(bad))
    assert suite.find("testcase/failure").get("type") == "response"
    html = html_report(result)
    assert "diverges" in html and "Minimized" in html and bad[0].scenario.topic in html


def test_the_command_checks_its_flags_before_starting_anything(capsys, tmp_path):
    cases = [
        (["--faults", "kill,flood"], "--faults: unknown fault 'flood'"),
        (["--mode", "zk", "--kafka-version", "4.4.0"], "ZooKeeper mode ends with Kafka 3.9"),
        (["--brokers", "9"], "--brokers: 3 to 6"),
        (["--scenarios", "x"], "--scenarios: expected an integer"),
        (["--junit", str(tmp_path / "no" / "x.xml")], "--junit .*: no such directory"),
        (["--html", str(tmp_path)], "--html .*: is a directory"),
        (["--replay", str(tmp_path / "none.json")], "none.json: no such file"),
    ]
    import re

    for argv, what in cases:
        assert main(["conformance", *argv]) == 2
        assert re.search(what, capsys.readouterr().err)


def test_the_command_runs_a_campaign_and_writes_every_output(monkeypatch, one_shape, tmp_path, capsys):
    options = ConformanceOptions("4.4.0", faults=NO_PAUSE)
    model = mapping.make_model(options.bounds(0))
    monkeypatch.setattr(C, "start_cluster", lambda spec: CampaignCluster(model, wrong_cancel=True))
    from kreassign.checker.cli import conformance as cli_conformance

    assert len(cli_conformance.checks_for("kraft")) == 2 and len(cli_conformance.checks_for("zk")) == 2
    monkeypatch.setattr(cli_conformance, "checks_for", lambda mode: ())  # no logs to dump on a stand-in
    out = tmp_path / "runs"
    code = main(["conformance", "--scenarios", "3", "--seed", "19", "--faults", "kill,stop,failover",
                 "--minimize-runs", "2", "--out", str(out), "--json", "--junit", str(tmp_path / "c.xml"),
                 "--html", str(tmp_path / "c.html")])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == (1 if data["totals"]["diverge"] else 0)
    assert "conformance: 3 scenarios on Kafka 4.4.0 (kraft)" in captured.err
    assert (out / "conformance-19.scenario.json").is_file() and (out / "conformance-19.result.json").is_file()
    assert (tmp_path / "c.xml").read_text().startswith("<?xml") and "<html" in (tmp_path / "c.html").read_text()
    # a scenario file from --out replays (the same verdict)
    code2 = main(["conformance", "--replay", str(out / "conformance-19.scenario.json"), "--minimize-runs", "0"])
    assert code2 == (1 if data["scenarios"][0]["verdict"] == "diverges" else 0)


def test_an_extra_check_that_objects_makes_its_scenario_diverge(one_shape):
    options = ConformanceOptions("4.4.0", scenarios=3, seed=10, faults=NO_PAUSE, minimize_runs=0)
    model = mapping.make_model(options.bounds(0))

    def planted(cluster, scenario, run):  # a metadata log check that rejects one scenario's records
        if scenario.topic == "conformance-11":
            return [{"kind": "metadata_log", "step": 0, "what": "record 7 is no step of the profile"}]
        return []

    result = C.Campaign(options, checks=(planted,), start=lambda spec: CampaignCluster(model)).run()
    assert [o.verdict for o in result.outcomes] == ["agrees", "diverges", "agrees"] and result.exit_code == 1
    assert result.totals()["divergences_by_kind"] == {"metadata_log": 1}


class LogDirsCluster:
    """A cluster whose brokers report the given partition logs (DescribeLogDirs)."""

    brokers = (1, 2, 3, 4)

    def __init__(self, holders):
        from types import SimpleNamespace

        self.admin = SimpleNamespace(log_dirs=lambda brokers: {
            b: {"replicas": [{"topic": "t9", "partition": 0, "size": 0, "future": False}] if b in holders else []}
            for b in brokers})


def test_stray_and_missing_logs_on_disk_are_divergences():
    from kreassign.checker.scenarios.log_dirs import check_log_dirs

    scenario = C.draw(ConformanceOptions("4.4.0", faults=NO_PAUSE), 0)
    expected = {"partitions": {"0": {"replicas": [2, 3, 4]}}}
    from dataclasses import replace

    scenario = replace(scenario, topic="t9")
    assert check_log_dirs(LogDirsCluster({2, 3, 4}), scenario, expected, timeout_s=0) == []
    [stray] = check_log_dirs(LogDirsCluster({1, 2, 3, 4}), scenario, expected, timeout_s=0)
    assert stray["kind"] == "log_dirs" and "stray on [1]" in stray["what"]
    [missing] = check_log_dirs(LogDirsCluster({2, 3}), scenario, expected, timeout_s=0)
    assert "missing on [4]" in missing["what"] and missing["observed"] == [2, 3]
    assert check_log_dirs(LogDirsCluster({1}), scenario, None, timeout_s=0) == []  # an end the model leaves open


def _zk_stray_scenario():
    """The smoke tier's conformance-2408 (3.9.2, zk): broker 3 stopped, t-0 reassigned to [1,3,4] then [1,2,4]
    (3 removed while down), 3 restarted."""
    from kreassign.checker.scenarios.generate import from_actions, random_walk
    from kreassign.spec import actions as A

    base = random_walk(ConformanceOptions("3.9.2", mode="zk").bounds(0), 1, 1, mode="zk",
                       faults=("stop",), topic="z")
    return from_actions(base, [(A.BrokerFail(3), True, "admin"), (A.Reassign("t", 0, (1, 3, 4)), False, "admin"),
                               (A.Reassign("t", 0, (1, 2, 4)), False, "admin")], topic="z")


def test_a_declared_kafka_bug_explains_its_divergence_and_nothing_else():
    from dataclasses import replace

    from kreassign.checker.conformance.known_bugs import known_bug_of

    s = _zk_stray_scenario()
    assert [st.do for st in s.steps] == ["stop", "reassign", "reassign", "restart"]
    stray = {"kind": "log_dirs", "step": 3, "partition": 0, "expected": [1, 2, 4], "observed": [1, 2, 3, 4]}
    assert known_bug_of(s, stray).kafka_issue == "KAFKA-7362"
    # not excused: a missing log, a stray on a broker that never went down, the same in KRaft
    assert known_bug_of(s, {**stray, "observed": [1, 2]}) is None
    assert known_bug_of(s, {**stray, "expected": [1, 3, 4], "observed": [1, 2, 3, 4]}) is None
    assert known_bug_of(replace(s, mode="kraft"), stray) is None
    assert known_bug_of(s, {**stray, "kind": "state"}) is None
    # in a campaign's result: the scenario is "known", the campaign passes, JUnit skips it naming the issue
    known = [{**stray, "what": "stray on [3]", "kafka_issue": "KAFKA-7362", "known_bug": "zk-stray-log"}]
    result = C.CampaignResult(ConformanceOptions("3.9.2", mode="zk"),
                              [C.ScenarioOutcome(0, s, [], 1.0, known=known)], seconds=1.0)
    assert result.outcomes[0].verdict == "known" and result.exit_code == 0
    assert result.totals()["known_kafka_bugs"] == {"KAFKA-7362": 1}
    assert "KAFKA-7362" in ET.fromstring(junit_xml(result)).find("testsuite/testcase/skipped").get("message")


def test_a_broker_that_does_not_answer_about_its_disk_is_the_cluster_s_problem_not_a_verdict():
    from types import SimpleNamespace

    from kreassign.checker.cluster import ClusterError
    from kreassign.checker.scenarios.log_dirs import check_log_dirs

    silent = SimpleNamespace(brokers=(1, 2), admin=SimpleNamespace(log_dirs=lambda brokers: {
        1: {"replicas": []}, 2: {"error_class": "TimeoutException", "error": "x"}}))
    scenario = C.draw(ConformanceOptions("4.4.0", faults=NO_PAUSE), 0)
    with pytest.raises(ClusterError, match="broker-2 did not answer DescribeLogDirs"):
        check_log_dirs(silent, scenario, {"partitions": {"0": {"replicas": [1]}}}, timeout_s=0)
