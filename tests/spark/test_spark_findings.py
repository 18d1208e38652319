"""The Spark engine classifies violations exactly as the embedded one: same findings, same unexpected.

Classification happens in the driver (checker/check/run.py rewrites each property with findings
into its unexpected part and one occurrence property per finding), so both engines see the
same properties; this checks it on a profile with many findings and on a planted bug.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.check.run import VIOLATED, check_model
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.reference.kip455 import Kip455Profile

pytestmark = pytest.mark.spark


class Kip455CancelKeepsAdding(Kip455Profile):
    """Broken on purpose: a cancel forgets AR and keeps every replica (not a declared finding)."""

    def cancel_partition(self, state, topic, index):
        part = state.partition(topic, index)
        return self.put(state, topic, index, replace(part, adding=(), removing=())), 0, None


def _verdicts(result):
    return {n: (v.status, v.length, {f: (x.length, x.expected) for f, x in v.findings.items()})
            for n, v in result.properties.items()}


@pytest.mark.parametrize("planted", [False, True], ids=["kip455", "kip455-planted"])
def test_spark_and_embedded_classify_alike(sc, tmp_path, planted):
    from kreassign.checker.spark.engine import spark_explorer

    factory = (lambda _p, b: ReassignmentModel(Kip455CancelKeepsAdding(), b)) if planted else \
        (lambda p, b: ReassignmentModel(p, b))
    bounds = DEFAULT_SUITE["kip455"]
    embedded = check_model("kip455", bounds, factory=factory, out_dir=str(tmp_path / "e"),
                           minimize_counterexamples=False)
    spark = check_model("kip455", bounds, factory=factory, out_dir=str(tmp_path / "s"),
                        explorer=spark_explorer(), engine="spark", minimize_counterexamples=False)
    assert _verdicts(spark) == _verdicts(embedded)
    if planted:
        assert spark.properties["cancel_restores_original_replicas"].status == VIOLATED
