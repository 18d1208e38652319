"""One lockstep check of the kraft profile against Kafka (the helper the tests under tests/kafka share)."""

from __future__ import annotations

from typing import Any

from kreassign.checker.check.run import check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.oracle.kafka_lockstep import kafka_factory


def run_lockstep(spec: str, bounds: Bounds, *, impl: Any = None, out_dir: str | None = None, minimize: bool = False,
                 liveness: bool = True):
    """(CheckResult, LockstepStats) of `check_model("kraft", bounds)` in lockstep with the Kafka of `spec`."""
    factory = kafka_factory(spec, impl=impl)
    try:
        result = check_model("kraft", bounds, factory=factory, out_dir=out_dir, minimize_counterexamples=minimize,
                             liveness_check=liveness)
    finally:
        factory.close()
    return result, factory.stats
