"""`kreassign plan` knows Kafka's durability rules (checker/plan/durability.py): a target with fewer
replicas than min.insync.replicas, as many as it, a replication factor change, and a move that removes
every replica in sync now; each a named finding in the text, --json and HTML outputs, a risk (exit 1)
when the move brings it about, a note when the partition is so before the move too."""

from __future__ import annotations

import json

import pytest
from kreassign.checker.plan import durability, run
from kreassign.checker.plan.check import NOTE, RISK
from kreassign.checker.plan.durability import (
    LAST_ISR_REMOVED,
    RF_AT_MIN_ISR,
    RF_BELOW_MIN_ISR,
    RF_CHANGES,
    durability_findings,
)
from kreassign.checker.plan.formats import Describe, parse_plan
from kreassign.checker.plan.run import load_moves
from kreassign.checker.plan.shapes import PartitionMove
from kreassign.checker.plan.text import ADVICE

from kreassign.cli import main


def files(tmp_path, current, target, *, isr=None, min_isr=2, leader=None):
    """The three files an operator holds: the plan, the current assignment and --describe's text (Kafka's formats)."""
    isr = current if isr is None else isr
    leader = current[0] if leader is None else leader
    ids = ",".join(map(str, current))
    (tmp_path / "plan.json").write_text(json.dumps(
        {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": target}]}))
    (tmp_path / "current.json").write_text(json.dumps(
        {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": current}]}))
    configs = f"min.insync.replicas={min_isr},cleanup.policy=delete" if min_isr is not None else ""
    (tmp_path / "describe.txt").write_text(
        f"Topic: orders\tTopicId: 7bS0fJ8xQ2u1c5m0YH9k3w\tPartitionCount: 1\tReplicationFactor: {len(current)}\t"
        f"Configs: {configs}\n"
        f"\tTopic: orders\tPartition: 0\tLeader: {leader}\tReplicas: {ids}\tIsr: {','.join(map(str, isr))}\t"
        "Elr: N/A\tLastKnownElr: N/A\n")
    return [str(tmp_path / "plan.json"), "--current", str(tmp_path / "current.json"),
            "--describe", str(tmp_path / "describe.txt"), "--jobs", "1"]


def plan(capsys, argv):
    code = main(["plan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def durable(data) -> dict[str, str]:
    """property -> severity of the durability findings of the plan's only partition."""
    (p,) = data["partitions"]
    return {f["property"]: f["severity"] for f in p["findings"] if f["property"] in durability.RULES}


def move(current, target, isr=None, min_isr=2, unclean=False):
    return PartitionMove("orders", 0, tuple(current), tuple(target), tuple(current if isr is None else isr),
                         current[0], (), unclean, min_isr)


def rules(m, profile="kraft") -> dict[str, str]:
    return {f.property: f.severity for f in durability_findings(m, profile)}


# -- the case, through the real CLI ---------------------------------------------------------


def test_moving_rf3_to_a_single_replica_under_min_insync_2_is_a_risk(capsys, tmp_path):
    argv = files(tmp_path, [1, 2, 3], [4])
    code, out, _ = plan(capsys, [*argv, "--json"])
    data = json.loads(out)
    (p,) = data["partitions"]
    assert code == 1 and p["verdict"] == RISK and p["min_isr"] == 2
    assert durable(data) == {RF_BELOW_MIN_ISR: RISK, RF_CHANGES: NOTE, LAST_ISR_REMOVED: RISK}
    below = next(f for f in p["findings"] if f["property"] == RF_BELOW_MIN_ISR)
    assert "the target has 1 replica, fewer than min.insync.replicas=2" in below["summary"]
    assert "KAFKA-15583" in below["summary"] and "give the target at least 2 replicas" in below["summary"]
    assert below["trace"] is None and below["failure_sets"] == []
    assert any(RF_BELOW_MIN_ISR in r for r in data["risks"])

    code, out, _ = plan(capsys, argv)  # the text: a risk line, and what to do instead
    assert code == 1
    risks = out[out.index("Risks ("):out.index("What to do:")]
    assert "orders-0: the target has 1 replica, fewer than min.insync.replicas=2" in risks
    assert f"  {RF_BELOW_MIN_ISR}: {ADVICE[RF_BELOW_MIN_ISR]}" in out
    assert f"  {LAST_ISR_REMOVED}: {ADVICE[LAST_ISR_REMOVED]}" in out

    page = tmp_path / "plan.html"
    assert plan(capsys, [*argv, "--html", str(page)])[0] == 1
    html = page.read_text()
    assert "RISK: " in html and "fewer than min.insync.replicas=2" in html and RF_BELOW_MIN_ISR in html


def test_the_detection_depends_on_the_rule(capsys, tmp_path, monkeypatch):
    """Without the durability rules the same plan is 'ok', exit 0 (what issue 29 found): the risk above is
    the rule's, not something the model finds anyway."""
    argv = files(tmp_path, [1, 2, 3], [4])
    monkeypatch.setattr(run, "durability_findings", lambda move, profile: [])
    code, out, _ = plan(capsys, [*argv, "--json"])
    data = json.loads(out)
    assert code == 0 and data["partitions"][0]["verdict"] == "ok" and data["risks"] == []


def test_min_insync_from_the_flag_and_from_the_clusters_configs(capsys, tmp_path):
    argv = files(tmp_path, [1, 2, 3], [4], min_isr=None)  # --describe shows no min.insync.replicas: 1
    code, out, _ = plan(capsys, [*argv, "--json"])
    assert RF_BELOW_MIN_ISR not in durable(json.loads(out))
    code, out, _ = plan(capsys, [*argv, "--json", "--min-isr", "2"])
    assert code == 1 and durable(json.loads(out))[RF_BELOW_MIN_ISR] == RISK
    # --bootstrap-server: checker/status/plan_inputs.py hands the cluster's topic configs over as a Describe
    p = parse_plan('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4]}]}', "p.json")
    current = parse_plan('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2,3]}]}', "c")
    (m,) = load_moves(p, "p.json", current, "c", Describe({"orders": {"min.insync.replicas": "2"}}, {}), "host:9092")
    assert rules(m)[RF_BELOW_MIN_ISR] == RISK


# -- each rule, and where it does not apply --------------------------------------------------------


def test_target_below_min_insync():
    assert rules(move([1, 2, 3], [4, 5], min_isr=3))[RF_BELOW_MIN_ISR] == RISK
    assert RF_BELOW_MIN_ISR not in rules(move([1, 2, 3], [4, 5], min_isr=2))
    assert RF_BELOW_MIN_ISR not in rules(move([1, 2, 3], [2, 3, 4], min_isr=3))
    # a partition below min.insync.replicas already: the move does not bring it about, a note
    assert rules(move([1], [2], min_isr=2))[RF_BELOW_MIN_ISR] == NOTE


def test_below_min_insync_says_what_the_brokers_release_does():
    m = move([1, 2, 3], [4])
    (kraft,) = [f.summary for f in durability_findings(m, "kraft") if f.property == RF_BELOW_MIN_ISR]
    (zk,) = [f.summary for f in durability_findings(m, "zk") if f.property == RF_BELOW_MIN_ISR]
    # KRaft's releases (3.9 on) cap the minimum at the replica count; ZooKeeper mode may run older brokers
    assert "acknowledged by 1 replica only" in kraft and "before 3.7" not in kraft
    assert "acknowledged by 1 replica only" in zk and "before 3.7 every acks=all produce fails" in zk


def test_target_at_min_insync():
    f = {x.property: x for x in durability_findings(move([1, 2, 3], [4, 5], min_isr=2), "kraft")}
    assert f[RF_AT_MIN_ISR].severity == RISK and "NOT_ENOUGH_REPLICAS" in f[RF_AT_MIN_ISR].summary
    assert "give the target 3 replicas" in f[RF_AT_MIN_ISR].summary
    assert rules(move([1, 2, 3], [3], min_isr=1))[RF_AT_MIN_ISR] == RISK  # one replica, min 1: offline on a failure
    assert RF_AT_MIN_ISR not in rules(move([1, 2, 3], [2, 3, 4], min_isr=2))
    assert RF_AT_MIN_ISR not in rules(move([1, 2, 3], [4], min_isr=2))  # below it: the other rule
    at = durability_findings(move([4, 5], [5, 6], min_isr=2), "kraft")  # RF 2 = min 2 before the move too
    assert [(f.property, f.severity) for f in at] == [(RF_AT_MIN_ISR, NOTE)] and "before the move too" in at[0].summary


def test_replication_factor_changes_are_notes():
    shrink = {f.property: f for f in durability_findings(move([1, 2, 3], [1, 2], min_isr=1), "kraft")}
    assert shrink[RF_CHANGES].severity == NOTE and "shrinks the replication factor from 3 to 2" in shrink[RF_CHANGES].summary
    grow = {f.property: f for f in durability_findings(move([1, 2], [1, 2, 3], min_isr=1), "kraft")}
    assert grow[RF_CHANGES].severity == NOTE and "grows the replication factor from 2 to 3" in grow[RF_CHANGES].summary
    assert RF_CHANGES not in rules(move([1, 2, 3], [4, 5, 6], min_isr=1))


def test_removing_every_in_sync_replica():
    f = {x.property: x for x in durability_findings(move([1, 2, 3], [4, 5, 6], min_isr=1), "kraft")}
    assert f[LAST_ISR_REMOVED].severity == RISK and "every replica in sync now (1,2,3)" in f[LAST_ISR_REMOVED].summary
    assert "safe only once those have caught up" in f[LAST_ISR_REMOVED].summary
    # a lagging follower kept is no help: the in-sync ones (1, 2) all go
    lagging = durability_findings(move([1, 2, 3], [3, 4, 5], isr=[1, 2], min_isr=1), "kraft")
    assert [(x.property, x.severity) for x in lagging] == [(LAST_ISR_REMOVED, RISK)]
    assert "(1,2)" in lagging[0].summary
    assert LAST_ISR_REMOVED not in rules(move([1, 2, 3], [3, 4, 5], min_isr=1))  # 3 is in sync and stays
    assert "unclean" in durability_findings(move([1, 2], [3, 4], min_isr=1, unclean=True), "kraft")[0].summary


def test_a_plain_move_has_none():
    assert durability_findings(move([1, 2, 3], [2, 3, 4], min_isr=2), "kraft") == []


@pytest.mark.parametrize("rule", durability.RULES)
def test_every_rule_has_advice(rule):
    assert ADVICE[rule] == durability.ADVICE[rule]
