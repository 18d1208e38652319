"""Regenerate the curated counterexamples: `python counterexamples/curate.py`.

Runs the default suite with minimization and no known violations declared, and writes
the minimized trace of every violation it finds into this folder as
`<profile>__<property>.json`. spec/known_violations.py declares which of them are known
findings (docs/findings.md explains each); the tests replay every file listed there and
check that the default suite reports nothing else. Run it after changing the reference
or the default bounds, then review the diff of this folder.
"""

from __future__ import annotations

import os
import sys

from kreassign.checker.check.run import VIOLATED, check_model, find_violations
from kreassign.checker.models.suite import DEFAULT_SUITE, QUOTA_SUITE
from kreassign.checker.models.bounds import Bounds
from kreassign.checker.models.registry import build_model, model_kind
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import trace_from_path, write_trace
from kreassign.spec import known_violations

HERE = os.path.dirname(os.path.abspath(__file__))

#: named scenarios beyond the default suite: (file, profile, property, bounds); not minimized,
#: so that the action the finding is about stays in the trace
SCENARIOS = [
    # the default suite's shortest zk trace reassigns back to the origin (zk's cancel is exactly
    # that); this one uses the Cancel request itself
    ("zk__cancel_leaves_partition_leaderless.json", "zk", "admin_action_keeps_a_leader",
     Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)),
]


def main() -> int:
    known_violations.KNOWN.clear()
    names = list(DEFAULT_SUITE) + list(QUOTA_SUITE)
    for profile in names:
        kind = model_kind(profile)
        bounds = DEFAULT_SUITE.get(profile) or QUOTA_SUITE[profile]()
        result = check_model(profile, bounds, factory=lambda p, b, k=kind: build_model(k, p, b), model_kind=kind,
                             out_dir=HERE)
        for name, verdict in result.properties.items():
            if verdict.status == VIOLATED:
                print(f"{profile:13} {name:36} {verdict.length:3} steps  {os.path.relpath(verdict.counterexample)}")
    for file, profile, prop, bounds in SCENARIOS:
        result = check_model(profile, bounds, out_dir=None, minimize_counterexamples=False)
        model = ReassignmentModel(profile, bounds)
        _, found = find_violations(model, keep_graph=False)
        path, loop = found[prop]
        target = os.path.join(HERE, file)
        write_trace(trace_from_path(model, "reassignment", prop, "transition", path, loop_start=loop), target)
        assert result.properties[prop].status != "holds"
        print(f"{profile:13} {prop:36} {len(path) - 1:3} steps  {os.path.relpath(target)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
