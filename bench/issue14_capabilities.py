"""Issue 14's capabilities: for each property, the smallest bounds at which its broken variant (or a
real profile's finding) is caught, the counterexample length and the seconds the check took.

    python bench/issue14_capabilities.py
    python bench/issue14_capabilities.py --quick     # without the one slow row (real zk, cancel + StopReplica)

Prints a table; asserts nothing (the tests pin the verdicts and lengths).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from fractions import Fraction as F
from pathlib import Path

from kreassign.checker.check.run import check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.quota_handlers import HandlersConfig, QuotaHandlersModel
from kreassign.checker.models.reassign import ReassignmentModel
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))
from kreassign.reference.topic_changes import partition_zero_replication_factor
from test_broker_replicas import DeletesRemovingReplicasEarly, FetchesUntold, NeverDeletes
from test_broker_view import broken_rf, every_broker_reports
from test_delete_topic import kraft_keeps_reassigning, zk_deletes_at_once, zk_keeps_the_deletion_znode
from test_fairness import WaitsForRemovedReplicas
from test_findings_capabilities import ExecuteForgetsFollowerThrottle
from test_throttles import ClearForgetsBrokerRates
from test_zk_memory import BROKEN as ZK_MEMORY_BROKEN
from test_zk_requests import BROKEN as ZK_REQUESTS_BROKEN

#: --quick: rows marked slow=True are left out (one of them takes minutes)
QUICK = False


def reassign(prop, variant, profile, bounds, factory=None, slow=False, **model_kw):
    if slow and QUICK:
        return None
    started = time.perf_counter()
    prof = model_kw.pop("profile_obj", profile)
    factory = factory or (lambda _p, b: ReassignmentModel(prof, b, **model_kw))
    result = check_model(profile, bounds, factory=factory, minimize_counterexamples=False)
    v = result.properties[prop]
    return [prop, variant, _bounds(bounds), v.status, v.length, f"{time.perf_counter() - started:.3f}"]


def quota(prop, variant, **cfg):
    started = time.perf_counter()
    r = explore(QuotaHandlersModel(HandlersConfig(**cfg)))
    v = r.violations.get(prop)
    return [prop, variant, ", ".join(f"{k}={v}" for k, v in cfg.items()), "violated" if v else "holds",
            len(v.path) - 1 if v else None, f"{time.perf_counter() - started:.3f}"]


def _bounds(b: Bounds) -> str:
    d = b.to_json()
    keys = ("brokers", "partitions", "rf", "reassigns", "cancels", "failures")
    flags = [k for k in ("broker_view", "throttles", "fair", "broker_replicas", "leader_balance", "zk_versions",
                         "delete_topic", "znode") if d.get(k)]
    extra = [f"create_partitions={d['create_partitions']}"] if d.get("create_partitions") else []
    return ", ".join([f"{k}={d[k]}" for k in keys] + flags + extra)


def _deleting(name, bug):
    def factory(_p, b):
        model = ReassignmentModel(name, b)
        model.capabilities = replace(model.capabilities, topic_deletion=bug)
        return model

    return factory


def main(argv: list[str] | None = None) -> None:
    global QUICK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the slow row (minutes; the others: seconds)")
    QUICK = parser.parse_args(argv).quick
    replicas = Bounds(brokers=2, rf=1, reassigns=1, cancels=1, broker_replicas=True)
    rows = [
        reassign("no_stray_replicas", "removed replicas' logs never deleted", "kraft", replicas,
                 replicas=NeverDeletes()),
        reassign("no_in_sync_log_deleted", "removing replica deletes its log early", "kraft", replicas,
                 replicas=DeletesRemovingReplicasEarly()),
        reassign("isr_joiner_was_told", "follower fetches before it is told", "kraft", replicas,
                 replicas=FetchesUntold()),
        reassign("no_in_sync_log_deleted", "real zk (cancel + StopReplica delete)", "zk",
                 Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, broker_replicas=True), slow=True),
        reassign("reassignment_alone_not_under_replicated", "RF counts adding replicas", "kraft",
                 Bounds(brokers=2, rf=1, reassigns=1, cancels=0, broker_view=True), reporters=broken_rf),
        reassign("only_leader_reports_under_replicated", "followers report URP", "kraft",
                 Bounds(brokers=2, rf=2, reassigns=0, cancels=0, broker_view=True), reporters=every_broker_reports),
        reassign("moving_replicas_throttled", "--execute forgets the follower throttle", "kraft",
                 Bounds(brokers=2, partitions=2, rf=1, reassigns=1, cancels=1, throttles=True),
                 tool=ExecuteForgetsFollowerThrottle()),
        reassign("moving_replicas_throttled", "real kraft + tool (--cancel clears all)", "kraft",
                 Bounds(brokers=2, partitions=2, rf=1, reassigns=1, cancels=1, throttles=True)),
        reassign("throttles_eventually_cleared", "clear forgets broker rates", "kraft",
                 Bounds(brokers=2, rf=1, reassigns=1, cancels=0, throttles=True), tool=ClearForgetsBrokerRates()),
        reassign("reassignment_completes_when_targets_live", "completion waits for removed replicas", "kraft",
                 Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, fair=True),
                 profile_obj=WaitsForRemovedReplicas()),
        reassign("reassignment_completes_when_targets_live", "real kraft-3.7", "kraft-3.7",
                 Bounds(brokers=3, rf=2, reassigns=2, cancels=0, fair=True)),
        reassign("created_partitions_get_replication_factor", "real kraft (partition 0's full list)", "kraft",
                 Bounds(brokers=2, rf=1, reassigns=1, cancels=0, create_partitions=1)),
        reassign("created_partitions_get_replication_factor", "broker's RF rule (fixed)", "kraft",
                 Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1, create_partitions=1),
                 rf_rule=partition_zero_replication_factor),
        reassign("preferred_leader_eventually_leads", "balancing skipped during reassignments (< 3.4)", "kraft",
                 Bounds(brokers=3, rf=2, reassigns=1, cancels=0, failures=1, leader_balance=True),
                 balance_skips_reassigning=True),
        *(reassign(prop, broken.__name__, "zk", bounds, factory=lambda _p, b, k=broken: ReassignmentModel(k(), b))
          for prop, broken, bounds, _ in ZK_MEMORY_BROKEN),
        reassign("superseded_reassignment_never_resumed", "real zk (lost override, failover)", "zk",
                 Bounds(brokers=3, rf=2, reassigns=2, cancels=0, failovers=1, zk_versions=True)),
        *(reassign(prop, "zk requests: broken variant", "zk", bounds, factory=factory)
          for prop, factory, bounds, _ in ZK_REQUESTS_BROKEN),
        reassign("no_strays_once_quiet", "real zk (StopReplica never retried)", "zk",
                 Bounds(brokers=2, rf=1, reassigns=1, cancels=1, failures=1, broker_replicas=True)),
        *(reassign(prop, bug.__name__, name, Bounds(brokers=3, rf=2, reassigns=1, cancels=1, delete_topic=True),
                   factory=_deleting(name, bug))
          for name, bug, prop in (("kraft", kraft_keeps_reassigning, "accepted_deletion_takes_effect"),
                                  ("zk", zk_deletes_at_once, "reassigning_topic_not_deleted"),
                                  ("zk", zk_keeps_the_deletion_znode, "no_reassignment_outlives_its_topic"))),
        quota("overdraft_bounded_with_concurrent_handlers", "check and record not under the sensor lock",
              atomic=False),
        quota("next_admission_uses_quota_in_force", "sensor keeps its old MetricConfig", rate=F(2),
              quota_changes=(F(1, 2),), sizes=(1,), handlers=1, follows_quota_changes=False),
        quota("unquoted_never_throttled", "sensor keeps its old MetricConfig", quota_changes=(None,), handlers=1,
              follows_quota_changes=False),
    ]
    left_out = rows.count(None)
    print(tabulate([r for r in rows if r is not None],
                   headers=["property", "variant", "bounds", "verdict", "length", "seconds"]))
    if left_out:
        print(f"--quick: {left_out} slow row(s) left out")


if __name__ == "__main__":
    main()
