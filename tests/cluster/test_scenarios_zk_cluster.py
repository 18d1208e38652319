"""Scenarios drawn from the zk model, replayed on one real ZooKeeper-mode cluster of Kafka 3.9.2 (issue 24;
docs/scenarios.md, "ZooKeeper mode"): every wait met, no divergence between Kafka's answers, its topic state and
its znodes and the reference's, and the controller's own logs of each scenario VALID under the zk profile."""

from __future__ import annotations

import time

import pytest
from cluster_checks import KAFKA_39
from kreassign.checker.cluster import ClusterSpec, start_cluster
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.scenarios.generate import random_walk
from kreassign.checker.scenarios.run import ZK_BROKER_CONFIG, restore, run_scenario
from kreassign.checker.scenarios.zk_logs import validate_zk_logs

BOUNDS = Bounds(brokers=4, rf=3, reassigns=2, cancels=1, failures=1, failovers=1)
#: what the walks must do between them: reassign, cancel, kill, stop (a controlled shutdown), restart and
#: re-elect the controller
WANTED = {"reassign", "cancel", "kill", "stop", "restart", "reelect_controller"}


def scenarios(seeds=range(100)):
    """The first seeds' walks that between them do every kind of WANTED (each chosen walk adds a kind)."""
    chosen, kinds = [], set()
    for seed in seeds:
        s = random_walk(BOUNDS, seed, 7, mode="zk", kafka_version=KAFKA_39, faults=("kill", "stop", "failover"),
                        topic=f"zk-walk-{seed}")
        new = {st.do for st in s.steps} & WANTED - kinds
        if new:
            chosen.append(s)
            kinds |= new
        if kinds == WANTED:
            return chosen
    raise AssertionError(f"no walks with {WANTED - kinds} among the seeds")


@pytest.fixture(scope="module")
def cluster():
    with start_cluster(ClusterSpec(version=KAFKA_39, mode="zk", brokers=4, broker_config=ZK_BROKER_CONFIG)) as c:
        yield c


def test_drawn_zk_scenarios_replay_with_no_divergence_and_valid_controller_logs(cluster, tmp_path):
    drawn = scenarios()
    kinds = {st.do for s in drawn for st in s.steps}
    assert {"reassign", "cancel", "kill", "stop", "restart", "reelect_controller"} <= kinds
    started = time.monotonic()
    for s in drawn:
        try:
            result = run_scenario(cluster, s, result_path=str(tmp_path / f"{s.topic}.json"))
        finally:
            restore(cluster)
        assert result.divergences == [], (s.topic, result.divergences)
        assert result.ok and result.waits_met == result.waits_total > 0
        assert all("znodes" in st["observed"] for st in result.steps)
        assert validate_zk_logs(cluster, s) == [], s.topic
    print(f"\n{len(drawn)} zk scenarios in {time.monotonic() - started:.1f} s")
