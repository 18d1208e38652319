"""Scenarios drawn from the kraft model, replayed on one real KRaft cluster of the newest release (issue 24,
item 2; docs/scenarios.md): every wait met, no divergence between Kafka's answers and state and the
reference's. One cluster for all: each scenario has its own topic and ends with every broker back."""

from __future__ import annotations

import time

import pytest
from cluster_checks import NEWEST
from kreassign.checker.cluster import ClusterSpec, start_cluster
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.scenarios.generate import random_walk, shortest_path
from kreassign.checker.scenarios.run import restore, run_scenario
from kreassign.spec import actions as A

BOUNDS = Bounds(brokers=4, rf=3, reassigns=2, cancels=1, failures=1, failovers=1)


def _first_walk(wanted, seeds=range(200)):
    """The first seed's walk whose steps have every kind in `wanted` (and an accepted cancel if asked)."""
    for seed in seeds:
        s = random_walk(BOUNDS, seed, 6, kafka_version=NEWEST, faults=("kill", "stop", "failover"),
                        require=(A.Reassign, A.BrokerFail, A.Cancel, A.ControllerFailover))
        kinds = {st.do for st in s.steps}
        accepted_cancel = any(st.do == "cancel" and st.expect["error"] == "NONE" for st in s.steps)
        if wanted <= kinds | ({"accepted_cancel"} if accepted_cancel else set()):
            return s
    raise AssertionError(f"no walk with {wanted} among the seeds")


def scenarios():
    return [
        shortest_path(BOUNDS, "reassigning_with_failed_target", seed=2, kafka_version=NEWEST),
        _first_walk({"kill", "reassign", "cancel", "restart", "kill_controller"}),
        _first_walk({"stop", "accepted_cancel"}),
    ]


@pytest.fixture(scope="module")
def cluster():
    with start_cluster(ClusterSpec(version=NEWEST, mode="kraft", controllers=1, brokers=4)) as c:
        yield c


def test_drawn_scenarios_replay_with_no_divergence(cluster, tmp_path):
    drawn = scenarios()
    kinds = {st.do for s in drawn for st in s.steps}
    assert {"reassign", "cancel", "kill", "stop", "restart", "kill_controller"} <= kinds
    assert len({s.topic for s in drawn}) == len(drawn)
    started = time.monotonic()
    for s in drawn:
        try:
            result = run_scenario(cluster, s, result_path=str(tmp_path / f"{s.topic}.json"))
        finally:
            restore(cluster)
        assert result.divergences == [], (s.topic, result.divergences)
        assert result.waits_met == result.waits_total > 0
        assert result.ok and len(result.steps) == len(s.steps)
        assert all(n.state == "running" for n in cluster.nodes)
    print(f"{len(drawn)} scenarios in {time.monotonic() - started:.1f} s")
