"""The violations each profile is known to have, each shown by a curated counterexample.

A known violation is a finding about Kafka (or a KIP's text), not a bug in kreassign:
the checker reports it as "known-violation" and does not fail the run. Each entry
names the replayable trace in counterexamples/ that shows it (the tests replay every
one), and docs/findings.md explains each. A violation not listed here fails
`kreassign check`. Regenerate the traces with `python counterexamples/curate.py`.
"""

from __future__ import annotations

KNOWN: dict[str, dict[str, str]] = {
    "kip236": {
        "adding_removing_disjoint": "counterexamples/kip236__adding_removing_disjoint.json",
        "completion_reaches_target": "counterexamples/kip236__completion_reaches_target.json",
        "isr_in_replicas": "counterexamples/kip236__isr_in_replicas.json",
        "original_in_replicas": "counterexamples/kip236__original_in_replicas.json",
        "reassignment_can_finish": "counterexamples/kip236__reassignment_can_finish.json",
        "replication_factor_bounded": "counterexamples/kip236__replication_factor_bounded.json",
    },
    "kip455": {
        "cancel_restores_original_order": "counterexamples/kip455__cancel_restores_original_order.json",
        "cancel_restores_original_replicas": "counterexamples/kip455__cancel_restores_original_replicas.json",
        "completion_reaches_target": "counterexamples/kip455__completion_reaches_target.json",
        "isr_in_replicas": "counterexamples/kip455__isr_in_replicas.json",
        "replication_factor_bounded": "counterexamples/kip455__replication_factor_bounded.json",
        "replication_factor_restored": "counterexamples/kip455__replication_factor_restored.json",
    },
    "kip599-draft": {
        "admitted_within_interval": "counterexamples/kip599-draft__admitted_within_interval.json",
        "large_topic_eventually_admitted": "counterexamples/kip599-draft__large_topic_eventually_admitted.json",
        "retry_after_throttle_admitted": "counterexamples/kip599-draft__retry_after_throttle_admitted.json",
    },
    "kip599": {
        "admitted_within_interval": "counterexamples/kip599__admitted_within_interval.json",
        "retry_after_throttle_admitted": "counterexamples/kip599__retry_after_throttle_admitted.json",
    },
    "kraft-3.7": {
        "adding_removing_disjoint": "counterexamples/kraft-3.7__adding_removing_disjoint.json",
        "cancel_restores_original_order": "counterexamples/kraft-3.7__cancel_restores_original_order.json",
        "cancel_restores_original_replicas": "counterexamples/kraft-3.7__cancel_restores_original_replicas.json",
        "completion_reaches_target": "counterexamples/kraft-3.7__completion_reaches_target.json",
        "reassignment_can_finish": "counterexamples/kraft-3.7__reassignment_can_finish.json",
        "replication_factor_bounded": "counterexamples/kraft-3.7__replication_factor_bounded.json",
        "replication_factor_restored": "counterexamples/kraft-3.7__replication_factor_restored.json",
    },
    "kraft": {
        "adding_removing_disjoint": "counterexamples/kraft__adding_removing_disjoint.json",
        "cancel_restores_original_order": "counterexamples/kraft__cancel_restores_original_order.json",
        "cancel_restores_original_replicas": "counterexamples/kraft__cancel_restores_original_replicas.json",
        "replication_factor_bounded": "counterexamples/kraft__replication_factor_bounded.json",
        "replication_factor_restored": "counterexamples/kraft__replication_factor_restored.json",
    },
    "zk": {
        "admin_action_keeps_a_leader": "counterexamples/zk__admin_action_keeps_a_leader.json",
        "cancel_restores_original_order": "counterexamples/zk__cancel_restores_original_order.json",
        "isr_in_replicas": "counterexamples/zk__isr_in_replicas.json",
        "reassignment_can_finish": "counterexamples/zk__reassignment_can_finish.json",
    },
}


def known_violation(profile: str, prop: str) -> str | None:
    """The counterexample file declaring `prop` broken under `profile`, or None."""
    return KNOWN.get(profile, {}).get(prop)
