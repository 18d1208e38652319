"""`kreassign status` without a cluster (docs/status.md): where a live partition is in the model, what it waits
on, what a cancel would leave, the throttles, the release read from the features, saved snapshots, the CLI.
The real clusters are in tests/cluster/test_status_cluster.py."""

from __future__ import annotations

import json
import re

import pytest
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.status import locate as L
from kreassign.checker.status.analyze import analyze
from kreassign.checker.status.plan_inputs import plan_inputs, rack_notes
from kreassign.checker.status.release import Rules, rules_of
from kreassign.checker.status.run import run_status
from kreassign.checker.status.snapshot import LivePartition, Snapshot, SnapshotError, snapshot_from_json
from kreassign.checker.status.throttles import check_throttles
from kreassign.reference.reassign_json import ReassignmentEntry, ReassignmentPlanJson
from kreassign.spec import actions as A

from kreassign.cli import main

K44 = Rules("kraft", "4.4.0", "off", "", "4.4")
K44_ELR = Rules("kraft", "4.4.0", "on", "", "4.4")
K39 = Rules("kraft", "3.9.2", "off", "", "3.9")
ZK = Rules("zk", "", "", "", "3.9")

# [1,2] -> [1,3] with broker 3 down: Kafka lists target then removing
DEST_DOWN = LivePartition("a", 0, (1, 3, 2), (1, 2), 1, adding=(3,), removing=(2,), reassigning=True)
# [2,4] -> [4,1] with the retained 4 down, 1 already in sync
RETAINED_DOWN = LivePartition("r", 0, (4, 1, 2), (2, 1), 2, adding=(1,), removing=(2,), reassigning=True)
# [1,2] -> [1,3] -> [1,2] (an override back): 3 both adding and removing
STALE = LivePartition("s", 0, (1, 2, 3), (1, 2), 1, adding=(3,), removing=(3,), reassigning=True)
# [1,2] -> [1,3] with 3, then 1 and 2 down: leaderless, 2 the last in the ISR
LEADERLESS = LivePartition("l", 0, (1, 3, 2), (2,), None, adding=(3,), removing=(2,), reassigning=True)


def analysis(p: LivePartition, live: set[int], rules: Rules, min_isr: int = 1):
    shape, back = L.shape_of(p, live, min_isr, False)
    return analyze(shape, rules), back


def required(a, back) -> list[tuple[str, int]]:
    return [(kind, back[b]) for kind, b in a.finish.required]


@pytest.mark.parametrize("rules", [K44, K39, ZK], ids=["kraft-4.4", "kraft-3.9", "zk"])
def test_destination_down_is_stuck_on_that_broker(rules):
    a, back = analysis(DEST_DOWN, {1, 2}, rules)
    assert a.verdict == "stuck"
    assert required(a, back) == [("back", 3), ("sync", 3)]
    settled = a.cancel.settled.cluster.partition("t", 0)
    assert [back[b] for b in settled.replicas] == [1, 2] and not a.cancel.leaderless_now


def test_retained_replica_out_of_isr_waits_where_the_rule_waits():
    for rules in (K39, ZK):  # every target replica in the ISR
        a, back = analysis(RETAINED_DOWN, {1, 2}, rules)
        assert a.verdict == "stuck" and required(a, back) == [("back", 4), ("sync", 4)]
    # 4.3+ completes a move that keeps its replication factor once the adding replicas are in sync
    # (KAFKA-19975): the state the cluster would show cannot exist there
    a, _ = analysis(RETAINED_DOWN, {1, 2}, K44)
    assert a.verdict == "unexplained"


def test_stale_adding_can_never_finish_on_4_4_and_says_why():
    a, _ = analysis(STALE, {1, 2, 3}, K44)
    assert a.verdict == "never"
    assert [r["finding"] for r in a.finish.reasons] == ["stale_adding_never_completes"]
    assert a.cancel.error is None  # a cancel gets out of it


def test_override_back_to_the_original_is_shown_to_get_stuck_on_4_4():
    a, _ = analysis(DEST_DOWN, {1, 2}, K44)
    assert a.override.then is not None and a.override.then.verdict == "never"


def test_cancel_leaderless_or_refused_by_release_and_elr():
    for rules in (K44, K39, ZK):
        a, _ = analysis(LEADERLESS, {3}, rules)
        assert a.cancel.error is None and a.cancel.leaderless_now, rules
    shape, _ = L.shape_of(LEADERLESS, {3}, 2, False)
    a = analyze(shape, K44_ELR)
    assert a.verdict == "unexplained" or a.cancel.error is not None  # with ELR the ISR never holds a fenced last member


def test_catching_up_is_waiting_not_stuck():
    p = LivePartition("d", 0, (4, 5, 6, 1, 2, 3), (1, 2, 3, 4), 1, adding=(4, 5, 6), removing=(1, 2, 3),
                      reassigning=True)
    a, back = analysis(p, {1, 2, 3, 4, 5, 6}, K44)
    assert a.verdict == "waiting" and required(a, back) == [("sync", 5), ("sync", 6)]


def test_a_broken_kafka_whose_followers_never_join_is_seen_as_never(monkeypatch):
    """The verdicts are the model's: a variant where no replica ever joins the ISR turns stuck into never."""

    class NoCatchUp(ReassignmentModel):
        def actions(self, state):
            return [a for a in super().actions(state) if not isinstance(a, A.LeaderExpandIsr)]

    real = L.model_for

    def broken(*args, **kwargs):
        m = real(*args, **kwargs)
        m.__class__ = NoCatchUp
        return m

    monkeypatch.setattr(L, "model_for", broken)
    a, _ = analysis(DEST_DOWN, {1, 2}, K44)
    assert a.verdict == "never"


def snapshot(parts, *, topic_configs=None, broker_configs=None, fenced=(), finalized=None, supported=33):
    brokers = {b: {"rack": None, "fenced": b in fenced} for b in range(1, 5)}
    return Snapshot("127.0.0.1:9092", "id", "kraft", brokers, True,
                    finalized or {"metadata.version": 33}, {"metadata.version": {"min": 7, "max": supported}},
                    list(parts), topic_configs or {}, broker_configs or {})


def test_throttles_left_behind_and_missing():
    idle = LivePartition("d", 0, (2, 3), (2, 3), 2)
    s = snapshot([DEST_DOWN, idle], topic_configs={"d": {"leader.replication.throttled.replicas": "0:2,0:3",
                                                         "follower.replication.throttled.replicas": "*"},
                                                   "a": {"follower.replication.throttled.replicas": "0:3"}},
                 broker_configs={4: {"follower.replication.throttled.rate": "100"},
                                 2: {"leader.replication.throttled.rate": str(2**63 - 1)}}, fenced=(3,))
    t = check_throttles(s)
    assert t.in_use
    assert {"topic": "d", "config": "leader.replication.throttled.replicas", "replicas": ["0:2", "0:3"]} in t.left_behind
    assert {"topic": "d", "config": "follower.replication.throttled.replicas", "replicas": "*"} in t.left_behind
    assert {"broker": 4, "configs": ["follower.replication.throttled.rate"]} in t.left_behind
    assert not any(e.get("broker") == 2 for e in t.left_behind)  # Long.MAX_VALUE is no throttle
    assert t.missing == [{"partition": "a-0", "lacks": ["leader throttle on 1", "leader throttle on 2",
                                                         "rate on broker 1", "rate on broker 2", "rate on broker 3"]}]
    # throttles left by an earlier move say nothing about how the moves in flight were started
    only_left = snapshot([DEST_DOWN, idle], topic_configs={"d": {"leader.replication.throttled.replicas": "0:2"}},
                         fenced=(3,))
    t = check_throttles(only_left)
    assert t.in_use and t.missing == [] and len(t.left_behind) == 1
    # the tool's throttles on the move itself: nothing missing, nothing left behind
    s = snapshot([DEST_DOWN], topic_configs={"a": {"leader.replication.throttled.replicas": "0:1,0:2",
                                                   "follower.replication.throttled.replicas": "0:3"}},
                 broker_configs={b: {"leader.replication.throttled.rate": "9"} for b in (1, 2, 3)}, fenced=(3,))
    t = check_throttles(s)
    assert (t.left_behind, t.missing) == ([], [])
    assert not check_throttles(snapshot([DEST_DOWN])).in_use


def test_release_read_from_the_features():
    assert rules_of(snapshot([])).kafka_version == "4.4.0"
    assert rules_of(snapshot([], finalized={"metadata.version": 21}, supported=21)).kafka_version == "3.9.2"
    elr = rules_of(snapshot([], finalized={"metadata.version": 33, "eligible.leader.replicas.version": 1}))
    assert elr.elr == "on"
    newer = rules_of(snapshot([], supported=40))
    assert newer.kafka_version == "4.4.0" and "newer than any kreassign knows" in newer.said
    assert rules_of(snapshot([]), "4.2.2").kafka_version == "4.2.2"
    zk = Snapshot("h:1", None, "zk", {}, False, {}, {}, [], {}, {1: {"inter.broker.protocol.version": "3.9-IV0"}})
    assert (rules_of(zk).profile, rules_of(zk).release) == ("zk", "3.9")


def test_run_status_exit_code_and_json_round_trip(tmp_path):
    s = snapshot([DEST_DOWN, STALE], fenced=(3,))
    result = run_status(s, rules_of(s))
    assert result.exit_code == 1 and [p["verdict"] for p in result.partitions] == ["stuck", "never"]
    again = snapshot_from_json(json.loads(json.dumps(result.to_json()["snapshot"])), "x.json")
    assert again.to_json() == s.to_json()
    healthy = snapshot([LivePartition("d", 0, (2, 3), (2, 3), 2)])
    assert run_status(healthy, rules_of(healthy)).exit_code == 0


@pytest.mark.parametrize("data,message", [
    ({"format": "nope"}, "not a kreassign status snapshot"),
    ({"format": "kreassign-status-snapshot", "version": 1, "mode": "kraft", "brokers": {},
      "partitions": [{"topic": "t", "partition": 0, "replicas": [1, "x"], "isr": []}], "topic_configs": {},
      "broker_configs": {}}, "partitions[0].replicas: expected a list of broker ids"),
    ({"format": "kreassign-status-snapshot", "version": 1, "mode": "raft"}, "mode: expected"),
])
def test_bad_snapshot_is_one_line_naming_the_field(data, message):
    with pytest.raises(SnapshotError, match=re.escape(message)):
        snapshot_from_json(data, "s.json")


def test_cli_on_a_saved_snapshot(tmp_path, capsys):
    s = snapshot([DEST_DOWN], fenced=(3,))
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"snapshot": s.to_json()}))
    html = tmp_path / "r.html"
    assert main(["status", "--snapshot", str(path), "--html", str(html)]) == 1
    out = capsys.readouterr().out
    assert "a-0: stuck: waits for broker 3 to come back" in out and "a cancel would leave: replicas [1, 2]" in out
    assert "broker 3 comes back" in html.read_text() and "<script" not in html.read_text()
    assert main(["status", "--snapshot", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["partitions"][0]["verdict"] == "stuck"
    healthy = tmp_path / "h.json"
    healthy.write_text(json.dumps(snapshot([LivePartition("d", 0, (2, 3), (2, 3), 2)]).to_json()))
    assert main(["status", "--snapshot", str(healthy)]) == 0
    assert main(["status", "--snapshot", str(tmp_path / "missing.json")]) == 2
    assert main(["status"]) == 2
    assert main(["status", "--snapshot", str(path), "--bootstrap-server", "h:1"]) == 2
    assert main(["status", "--snapshot", str(path), "--timeout", "0"]) == 2
    err = capsys.readouterr().err
    assert "--bootstrap-server: required" in err and "Traceback" not in err


def test_plan_inputs_from_a_snapshot():
    s = snapshot([DEST_DOWN, LivePartition("d", 0, (2, 3), (2, 3), 2)], fenced=(3,),
                 topic_configs={"d": {"min.insync.replicas": "2"}})
    inputs = plan_inputs(s)
    assert [(e.topic, e.replicas) for e in inputs.current.entries] == [("a", (1, 2)), ("d", (2, 3))]
    assert inputs.describe.partitions[("a", 0)].adding == (3,) and inputs.describe.min_isr("d") == 2
    assert inputs.live == {1, 2, 4}
    plan = ReassignmentPlanJson((ReassignmentEntry("d", 0, (1, 2)), ReassignmentEntry("d", 1, (1, 3))))
    racks = {1: "r1", 2: "r1", 3: "r2", 4: "r2"}
    assert rack_notes(plan, racks) == ["d-0: the target puts 1,2 on rack r1 while 2 racks exist"]
    assert rack_notes(plan, {1: None}) == []


def test_the_readme_shows_what_status_says_of_the_example_snapshot(capsys):
    """README.md's output block is the command's real output (only the analysis time may differ)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert main(["status", "--snapshot", str(root / "examples" / "status-snapshot.json")]) == 1
    now = re.sub(r"analyzed in [\d.]+ s", "analyzed in _ s", capsys.readouterr().out.rstrip())
    readme = re.sub(r"analyzed in [\d.]+ s", "analyzed in _ s", (root / "README.md").read_text())
    assert now in readme


def test_plan_bootstrap_server_flags_that_do_not_go_together(capsys):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    plan, current = str(examples / "plan.json"), str(examples / "current.json")
    assert main(["plan", plan, "--bootstrap-server", "127.0.0.1:1", "--current", current]) == 2
    assert main(["plan", plan, "--bootstrap-server", "127.0.0.1:1", "--live", "1,2"]) == 2
    assert main(["plan", plan, "--current", current, "--command-config", current]) == 2
    err = capsys.readouterr().err
    assert "--current: --bootstrap-server reads it from the cluster" in err
    assert "--command-config: goes with --bootstrap-server" in err and "Traceback" not in err


def test_reading_the_cluster_only_reads():
    """read_cluster asks the Admin client only what its read-only requests answer (and a fenced broker's
    configs are not asked of it: it would only time out)."""
    from kreassign.checker.status.snapshot import read_cluster

    calls = []

    class Recording:
        def describe_cluster(self, **kw):
            calls.append("describe_cluster")
            return {"cluster_id": "c", "fenced_known": True,
                    "brokers": [{"id": 1, "rack": "r1"}, {"id": 2, "rack": None, "fenced": True}]}

        def features_full(self, **kw):
            calls.append("features_full")
            return {"finalized": {"metadata.version": 21}, "supported": {"metadata.version": {"min": 7, "max": 21}}}

        def list_topics(self, **kw):
            calls.append("list_topics")
            return ["t"]

        def describe_topics(self, names, **kw):
            calls.append("describe_topics")
            return {"t": {"partitions": [{"partition": 0, "leader": 1, "replicas": [1, 2], "isr": [1], "elr": [],
                                          "last_known_elr": []}]}}

        def list_reassignments(self, **kw):
            calls.append("list_reassignments")
            return [{"topic": "t", "partition": 0, "replicas": [1, 2], "adding": [2], "removing": []}]

        def describe_configs(self, resources, keys=None, **kw):
            calls.append("describe_configs")
            assert ("broker", "2") not in resources
            return {"topic": {"t": {"min.insync.replicas": "1"}}, "broker": {"1": {}}}

    s = read_cluster(Recording(), "h:1")
    assert set(calls) == {"describe_cluster", "features_full", "list_topics", "describe_topics",
                          "list_reassignments", "describe_configs"}
    assert s.mode == "kraft" and s.live == {1} and s.in_flight()[0].adding == (2,)
    assert rules_of(s).kafka_version == "3.9.2"
