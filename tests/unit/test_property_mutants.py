"""Every property can fail where it is checked: per (property, profile), a planted bug breaks it.

Each mutant is the real profile with one corruption of the state its steps produce (the
`corrupt(before, action, step)` functions below), explored at the default-suite bounds. The
property must then be reported *unexpected*: caught, and not mistaken for one of the
profile's declared findings (spec/findings.py). A property that no mutant can break would
be vacuous (as `epochs_monotone` was before it compared real epochs).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from types import MethodType

import pytest
from kreassign.checker.check.run import explore_classified
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.models.reassign import ReassignmentModel, in_flight
from kreassign.reference import profile as real_profile
from kreassign.reference.steps import Step
from kreassign.spec.messages import AlterPartitionReassignmentsResponse
from kreassign.spec.properties import EVENTUALLY
from kreassign.spec.reassign_properties import ALL, PROPERTIES
from kreassign.spec.state import NO_LEADER

TOPIC = "t"


def _with(cluster, **changes):
    return cluster.with_partition(TOPIC, 0, replace(cluster.partition(TOPIC, 0), **changes))


def _name(action) -> str:
    return type(action).__name__


def _ends(before, after) -> bool:
    """The step ends the partition's reassignment (as the model sees it: zk's controller steps included)."""
    return in_flight(before, TOPIC, 0) and not in_flight(after, TOPIC, 0)


# -- corruptions: (cluster before, action, step) -> corrupted cluster or None (leave the step alone) ----


def drop_target_replica(before, action, step):
    """A target replica being added is missing from the replica list."""
    q = step.state.partition(TOPIC, 0)
    if q.adding and q.adding[0] in q.replicas:
        return _with(step.state, replicas=tuple(b for b in q.replicas if b != q.adding[0]))
    return None


def drop_original_replica(before, action, step):
    """An original replica (being removed) is deleted while the reassignment is in flight."""
    q = step.state.partition(TOPIC, 0)
    if q.removing and q.removing[0] in q.replicas and len(q.replicas) > 1:
        return _with(step.state, replicas=tuple(b for b in q.replicas if b != q.removing[0]))
    return None


def adding_also_removing(before, action, step):
    """A replica of the requested target is both adding and removing."""
    q = step.state.partition(TOPIC, 0)
    if q.adding and q.adding[0] not in q.removing:
        return _with(step.state, removing=q.removing + q.adding[:1])
    return None


def adding_replica_in_isr_not_assigned(before, action, step):
    """An adding replica is in the ISR but not in the replica list."""
    q = step.state.partition(TOPIC, 0)
    if q.adding and q.adding[0] in q.replicas:
        b = q.adding[0]
        return _with(step.state, replicas=tuple(r for r in q.replicas if r != b),
                     isr=q.isr if b in q.isr else q.isr + (b,))
    return None


def leader_outside_isr(before, action, step):
    """After an ISR shrink, the shrunk-out replica stays leader."""
    if _name(action) == "LeaderShrinkIsr":
        q = step.state.partition(TOPIC, 0)
        return _with(step.state, leader=action.broker) if q.leader != NO_LEADER else None
    return None


def empty_isr(before, action, step):
    """An ISR shrink writes an empty ISR."""
    if _name(action) == "LeaderShrinkIsr":
        return _with(step.state, isr=())
    return None


def duplicate_replica(before, action, step):
    """A new reassignment lists a replica twice (one replica more than original ∪ target)."""
    q = step.state.partition(TOPIC, 0)
    if q.reassigning and len(set(q.replicas)) == len(q.replicas):
        return _with(step.state, replicas=q.replicas + q.replicas[-1:])
    return None


def epochs_reset_on_expand(before, action, step):
    """An ISR expansion resets both epochs to 0 (the issue's example)."""
    if _name(action) == "LeaderExpandIsr":
        return _with(step.state, leader_epoch=0, partition_epoch=0)
    return None


def completion_keeps_a_removed_replica(before, action, step):
    """The step that ends a reassignment leaves one broker too many assigned."""
    if _ends(before, step.state):
        q = step.state.partition(TOPIC, 0)
        extra = [b.id for b in step.state.brokers if b.id not in q.replicas]
        if extra:
            return _with(step.state, replicas=q.replicas + (extra[0],))
    return None


def ending_drops_a_replica(before, action, step):
    """The step that ends a reassignment drops one replica of its result (an original one after a cancel)."""
    if _ends(before, step.state):
        q = step.state.partition(TOPIC, 0)
        if len(q.replicas) > 1:
            return _with(step.state, replicas=q.replicas[:-1], isr=tuple(b for b in q.isr if b in q.replicas[:-1])
                         or q.isr[:1], leader=q.leader if q.leader in q.replicas[:-1] else q.replicas[0])
    return None


def ending_reverses_the_original_order(before, action, step):
    """A revert that would restore the original list in order reverses it instead."""
    if _ends(before, step.state):
        p, q = before.partition(TOPIC, 0), step.state.partition(TOPIC, 0)
        if q.replicas == p.origin and len(q.replicas) > 1:
            return _with(step.state, replicas=q.replicas[::-1])
    return None


def request_drops_the_leader(before, action, step):
    """An accepted reassignment request leaves the partition leaderless."""
    if _name(action) in ("Reassign", "ZnodeReassign") and step.state != before:
        return _with(step.state, leader=NO_LEADER)
    return None


def rejected_cancel_bumps_epoch(before, action, step):
    """A cancel answered with an error still bumps the partition epoch."""
    if _name(action) != "Cancel":
        return None
    response = step.response
    code = (response.partition_error(TOPIC, 0)[0] if isinstance(response, AlterPartitionReassignmentsResponse)
            else getattr(response, "error_code", 0))
    if code != 0:
        q = step.state.partition(TOPIC, 0)
        return _with(step.state, partition_epoch=q.partition_epoch + 1)
    return None


def never_ends(before, action, step):
    """A step that would end a reassignment does nothing instead: it can never finish."""
    return before if _ends(before, step.state) else None


def leader_loses_committed_records(before, action, step):
    """The leader's log is truncated below the high watermark (with clean elections only)."""
    q = step.state.partition(TOPIC, 0)
    if q.log is not None and q.log.committed and q.leader != NO_LEADER and q.log.log_of(q.leader):
        return _with(step.state, log=q.log.with_log(q.leader, ()))
    return None


#: property -> the corruption that breaks it
MUTANTS = {
    "target_in_replicas": drop_target_replica,
    "original_in_replicas": drop_original_replica,
    "adding_removing_disjoint": adding_also_removing,
    "isr_in_replicas": adding_replica_in_isr_not_assigned,
    "leader_in_isr": leader_outside_isr,
    "isr_non_empty": empty_isr,
    "replication_factor_bounded": duplicate_replica,
    "epochs_monotone": epochs_reset_on_expand,
    "completion_reaches_target": completion_keeps_a_removed_replica,
    "cancel_restores_original_replicas": ending_drops_a_replica,
    "cancel_restores_original_order": ending_reverses_the_original_order,
    "replication_factor_restored": ending_drops_a_replica,
    "admin_action_keeps_a_leader": request_drops_the_leader,
    "cancel_rejected_cleanly": rejected_cancel_bumps_epoch,
    "reassignment_can_finish": never_ends,
    "reassignment_can_finish_in_sync": never_ends,
}


def planted(profile_name: str, corrupt):
    """The real profile whose every step goes through `corrupt`."""
    prof = copy.copy(real_profile(profile_name))
    apply = prof.apply

    def mutated(self, state, action):
        step = apply(state, action)
        bad = corrupt(state, action, step)
        return step if bad is None else Step(bad, step.response)

    prof.apply = MethodType(mutated, prof)
    return prof


CHECKED = [p.name for p in PROPERTIES if p.name != "committed_records_kept"]  # that one needs the log layer
#: the graph properties explore the whole state graph of each mutant: slow (CI still runs them)
PARAMS = [pytest.param(p.name, marks=pytest.mark.slow) if p.kind == EVENTUALLY else p.name
          for p in PROPERTIES if p.name in CHECKED]


def test_every_checked_property_has_a_mutant():
    assert set(MUTANTS) == set(CHECKED)


@pytest.mark.parametrize("profile", ALL)
def test_planted_data_loss_is_caught_where_the_log_layer_is_checked(profile):
    """committed_records_kept is checked with the replication layer: a clean run that loses a record."""
    bounds = replace(DEFAULT_SUITE[profile], replication=True, log_length=1, failures=0, cancels=0, reassigns=1)
    model = ReassignmentModel(planted(profile, leader_loses_committed_records), bounds)
    _, classified = explore_classified(model, profile, keep_graph=False, only="committed_records_kept",
                                       findings=False)
    assert classified["committed_records_kept"].unexpected is not None


@pytest.mark.parametrize("profile", ALL)
@pytest.mark.parametrize("prop", PARAMS)
def test_planted_bug_is_caught_as_unexpected(profile, prop):
    model = ReassignmentModel(planted(profile, MUTANTS[prop]), DEFAULT_SUITE[profile])
    graph = next(p for p in model.properties() if p.name == prop).kind == EVENTUALLY
    _, classified = explore_classified(model, profile, keep_graph=graph, only=prop, findings=False)
    assert classified[prop].unexpected is not None, f"{profile}: the planted bug for {prop} is not caught"
