"""Issue 26's capabilities: for each property, the smallest bounds at which its broken variant (or a real
profile's finding) is caught, the counterexample's length and the seconds the check took.

    python bench/issue26_capabilities.py
    python bench/issue26_capabilities.py --quick     # one row per capability

The rows come from the tests that pin them (`BENCH_ROWS` of each capability's test module under tests/unit);
this script only times them. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from kreassign.checker.check.run import check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.reassign import ReassignmentModel
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))

#: capability -> the test module whose BENCH_ROWS pin its broken variants and findings
CAPABILITIES = {
    "1 controller identity, event queue (zk_events)": "test_zk_events",
    "2 brokers' ISR maintenance (broker_isr)": "test_broker_isr",
    "3 batch znode, forced cancel (znode_batch)": "test_znode_batch",
    "4 tools as actors (actors)": "test_actors",
    "5 quota as clients meet it": "test_quota_retry",
    "6 liveness in each release's words (fair)": "test_awaited_replicas",
}


def _bounds_text(b: Bounds) -> str:
    d, default = b.to_json(), Bounds().to_json()
    keys = ("brokers", "partitions", "rf", "reassigns", "cancels", "failures", "failovers")
    extra = [f"{k}={d[k]}" for k in d if k not in keys and d[k] != default.get(k) and d[k] not in (None, "")]
    return ", ".join([f"{k}={d[k]}" for k in keys if k in d] + extra)


def reassignment_row(capability, prop, variant, profile, bounds, factory):
    started = time.perf_counter()
    factory = factory or (lambda p, b: ReassignmentModel(p, b))
    result = check_model(profile, bounds, factory=factory, minimize_counterexamples=False)
    v = result.properties[prop]
    return [capability, prop, variant, profile, _bounds_text(bounds), v.status, v.length,
            f"{time.perf_counter() - started:.2f}"]


def quota_row(capability, prop, variant, _quota, config_text, make_model):
    started = time.perf_counter()
    result = explore(make_model())
    v = result.violations.get(prop)
    return [capability, prop, variant, "quota", config_text, "violated" if v else "holds",
            len(v.path) - 1 if v else None, f"{time.perf_counter() - started:.2f}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the first row of each capability")
    args = parser.parse_args(argv)
    rows = []
    for capability, module_name in CAPABILITIES.items():
        bench_rows = importlib.import_module(module_name).BENCH_ROWS
        for row in bench_rows[:1] if args.quick else bench_rows:
            if row[2] == "quota":
                rows.append(quota_row(capability, *row))
            else:
                rows.append(reassignment_row(capability, *row))
    print(tabulate(rows, headers=["capability", "property", "variant", "profile", "bounds", "verdict", "length",
                                  "seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
