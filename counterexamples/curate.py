"""Regenerate the curated counterexamples: `python counterexamples/curate.py [FINDING ...]`.

For every finding of every profile (spec/findings.py) it explores the finding's own
smallest bounds (`Finding.at`), takes the shortest occurrence of that finding (a
violation its signature matches) and writes it as `trace_file(profile, finding)`:
`<profile>__<property>__<finding>.json`. It fails if a finding does not occur at its
bounds. The tests replay every file here and check that each declared finding still
occurs; docs/findings.md explains each. Run it after changing the reference or a
signature, then review the diff of this folder.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from kreassign.checker.check.run import explore_classified
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.implementations.kafka.releases import version_key
from kreassign.checker.models.quota import QUOTA_CONFIGS, QuotaModel
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.traces.format import trace_from_path, write_trace
from kreassign.spec import kafka_releases
from kreassign.spec.findings import FINDINGS, Finding, trace_file
from kreassign.spec.properties import EVENTUALLY

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: named scenarios beyond the findings' shortest traces: (file, profile, property, bounds); the
#: shortest zk trace reassigns back to the origin (zk's cancel is exactly that), this one uses the
#: Cancel request itself
SCENARIOS = [
    ("zk__cancel_leaves_partition_leaderless.json", "zk", "admin_action_keeps_a_leader",
     Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)),
]


def model_at(profile: str, finding: Finding):
    """The model a finding is curated at: its `at` bounds (the quota profiles: a named configuration; the
    quota-handlers profiles: their `[quota_handlers]` table, checker/models/quota_handlers.py)."""
    if "quota_handlers" in finding.at:
        from kreassign.checker.models import quota_handlers

        return "quota", quota_handlers.QuotaHandlersModel(
            quota_handlers.config_from_mapping(dict(finding.at["quota_handlers"]), profile))
    if "config" in finding.at:
        return "quota", QuotaModel(replace(QUOTA_CONFIGS[finding.at["config"]], profile=profile))
    bounds = Bounds(**finding.at)
    if profile == "kraft" and finding.releases is not None:  # the newest release that has it
        bounds = replace(bounds, kafka_version=max((r.version for r in kafka_releases.RELEASES
                                                    if r.minor in finding.releases), key=version_key))
    return "reassignment", ReassignmentModel(profile, bounds)


def curate(profile: str, finding: Finding) -> tuple[str, int]:
    """Write the finding's shortest occurrence at its bounds; (file, steps)."""
    kind, model = model_at(profile, finding)
    prop = next(p for p in model.properties() if p.name == finding.property)
    _, classified = explore_classified(model, profile, keep_graph=prop.kind == EVENTUALLY)
    occurrence = classified[prop.name].findings.get(finding.name)
    if occurrence is None:
        raise SystemExit(f"{profile}: finding {finding.name} of {prop.name} does not occur at {dict(finding.at)}")
    path, loop = occurrence
    trace = trace_from_path(model, kind, prop.name, prop.kind, path, loop_start=loop,
                            description=f"{finding.name}: {finding.summary}")
    target = os.path.join(ROOT, trace_file(profile, finding))
    write_trace(trace, target)
    return target, len(path) - 1


def main(argv: list[str] | None = None) -> int:
    only = set(sys.argv[1:] if argv is None else argv)  # finding names to regenerate (default: every one)
    for finding in FINDINGS:
        if only and finding.name not in only:
            continue
        for profile in finding.profiles:
            target, steps = curate(profile, finding)
            print(f"{profile:13} {finding.property:36} {finding.name:36} {steps:3} steps  {os.path.relpath(target)}")
    for file, profile, prop_name, bounds in SCENARIOS if not only else ():
        model = ReassignmentModel(profile, bounds)
        _, classified = explore_classified(model, "", keep_graph=False, only=prop_name)
        path, loop = classified[prop_name].unexpected
        target = os.path.join(HERE, file)
        write_trace(trace_from_path(model, "reassignment", prop_name, "transition", path, loop_start=loop), target)
        print(f"{profile:13} {prop_name:36} {'(scenario)':36} {len(path) - 1:3} steps  {os.path.relpath(target)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
