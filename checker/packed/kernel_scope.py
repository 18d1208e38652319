"""What the kraft kernels answer for, declared once, and the rules they restate, named once.

The packed engine tabulates kraft and kraft-3.7 with two kernels (kraft_kernel.py, one situation
at a time; kraft_vector.py, numpy batches) instead of the reference model. Each is a second
encoding, so it may answer only where tests/unit/test_kraft_kernel.py and test_kraft_vector.py
compared it with the reference: `KERNEL_SCOPE` lists what that was, and `kernel_refusal` /
`vector_refusal` are the only places a kernel decides to stand aside (the reference answers, or
the scalar kernel for the vector one). The packed encoding's own limits (partition-locality:
`packable`, PARTITION_LOCAL, UNSPLIT_BOUNDS in reassignment.py) come first: a model beyond them
never reaches a kernel.

The properties and finding signatures are not restated: the scalar kernel evaluates their
per-partition definitions (spec/per_partition.py), the vector kernel the array forms written next
to them. Some KRaft rules are (`RESTATED`): each original in reference/ (or checker/models/reassign.py,
spec/per_partition.py) carries a `# twin:`
comment naming its twins, each twin a `# twin of` comment naming its original, and a run-time
mismatch (`mismatch_message`) names the ones that could have drifted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from kreassign.reference.enabled_actions import admin_requests
from kreassign.reference.kraft import Kraft37Profile, KraftProfile
from kreassign.reference.kraft_change import (
    adding_in_isr_all_targets_if_shrinking,
    adding_replicas_in_isr,
    all_target_replicas_in_isr,
)
from kreassign.spec.per_partition import partition_form
from kreassign.spec.reassign_properties import rejected_cancel_left_the_rest


@dataclass(frozen=True)
class KernelScope:
    """The configurations the kraft kernels were compared with the reference on (each entry is shown to
    matter by tests/unit/test_kraft_kernel.py: a configuration just outside it goes to the reference)."""

    #: the profile classes themselves: a subclass (a variant, a planted bug) is not what was compared
    profile_classes: tuple[type, ...]
    #: the Kafka releases whose kraft rules were compared (spec/kafka_releases.py; kraft-3.7 follows 3.9.2)
    releases: tuple[str, ...]
    #: the completion rules compared (reference/kraft_change.py): a release picks one, kraft-3.7 has its own
    completion_rules: tuple[Any, ...]
    #: eligible leader replicas (KIP-966) on: the scalar kernel only with one of these min.insync.replicas
    #: (with 1 the min ISR is 1 whatever partition 0 holds; above, it depends on a partition a situation
    #: does not see)
    elr_min_insync: tuple[int, ...]
    #: bounds that switch on actions the kernels do not enumerate, beyond what packable refuses first
    #: (UNSPLIT_BOUNDS, and bounds that add properties of their own); the replication layer shows as a log
    bounds_off: tuple[str, ...]
    #: the vector kernel: its budget groups (all but ControllerFailover), at most this many brokers numbered
    #: 1..n (3-bit slots), and no ELR (its numpy builder has none)
    vector_groups: tuple[int, ...]
    vector_max_brokers: int
    vector_elr: bool
    #: the clauses on a whole edge (PartitionForm.clause) the kernels leave out: on one partition of a model
    #: without controller-wide state, where an action that names a partition leaves the brokers alone, each
    #: holds whenever its partition's part does
    clauses: tuple[Any, ...] = ()


KERNEL_SCOPE = KernelScope(
    profile_classes=(KraftProfile, Kraft37Profile),
    releases=("3.9.2", "4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0"),
    completion_rules=(all_target_replicas_in_isr, adding_replicas_in_isr,
                      adding_in_isr_all_targets_if_shrinking),
    elr_min_insync=(1,),
    bounds_off=("elections",),
    vector_groups=(0, 1, 2, 3),
    vector_max_brokers=6,
    vector_elr=False,
    clauses=(rejected_cancel_left_the_rest,),
)


def kernel_refusal(packed: Any, scope: KernelScope | None = None) -> str | None:
    """Why the scalar kernel cannot answer for `packed` (a PackedReassignment), or None: it can (`scope`:
    KERNEL_SCOPE)."""
    scope = scope or KERNEL_SCOPE
    model = packed.local_model
    profile = model.profile
    if type(profile) not in scope.profile_classes:
        return f"profile class {type(profile).__name__}"
    # (the completion rule is a strategy the release picks: an instance attribute, one of those compared)
    patched = sorted(k for k, v in vars(profile).items() if callable(v)
                     and not (k == "completion_rule" and v in scope.completion_rules))
    if patched:  # a copy with its own methods (e.g. a planted bug in `apply`): not the rules compared
        return f"profile methods replaced on the instance: {', '.join(patched)}"
    if profile.completion_rule not in scope.completion_rules:
        return f"completion rule {getattr(profile.completion_rule, '__name__', profile.completion_rule)}"
    if profile.kafka_version not in scope.releases:
        return f"Kafka release {profile.kafka_version}"
    if profile.controller_actions:
        return "the controller's own actions"
    if profile.elr and model.bounds.min_insync not in scope.elr_min_insync:
        return "eligible leader replicas (ELR) with min.insync.replicas above 1"
    for key in scope.bounds_off:
        if getattr(model.bounds, key):
            return f"bound {key}"
    # what the kernels assume of every model packable admits (guards: no bounds reach them otherwise)
    space = model.space
    if not (space.reassign and space.cancel and space.failures and space.failover):
        return "an action space without Reassign, Cancel, broker failures or failovers"
    kinds = [type(a).__name__ for a in admin_requests(space)]
    reassigns = kinds.count("Reassign")
    if kinds != ["Reassign"] * reassigns + ["Cancel"] * (len(kinds) - reassigns):
        return f"admin requests other than Reassigns, then Cancels ({', '.join(dict.fromkeys(kinds))})"
    init = packed.inner.init_states()[0]
    for p in init.cluster.topics[0].partitions:
        if p.log is not None or p.original is not None or p.leader_epoch or p.partition_epoch:
            return "a partition with a log (the replication layer) or renamed epochs"
    c = init.cluster
    if c.throttles is not None or c.hosted is not None or c.requests is not None:
        return "controller-wide state"
    # the properties and signatures: each must have a per-partition definition (spec/per_partition.py)
    for pred, _ in packed.always_checks + packed.state_sig_bits:
        if partition_form(pred) is None:
            return f"state predicate {getattr(pred, '__name__', pred)} has no per-partition form"
    for pred, _ in packed.edge_checks + packed.edge_sig_bits:
        form = partition_form(pred)
        if form is None:
            return f"edge predicate {getattr(pred, '__name__', pred)} has no per-partition form"
        if form.clause is not None and form.clause not in scope.clauses:
            return f"edge predicate {pred.__name__} has a clause on the whole edge ({form.clause.__name__})"
    for prop in packed.goals + packed.sometimes:
        if prop.per_partition is None:
            return f"goal {prop.name} has no per-partition form"
    return None


def vector_refusal(kernel: Any, scope: KernelScope | None = None) -> str | None:
    """Why the vector kernel cannot answer for the scalar `kernel`'s model, or None: it can (for the groups
    in `scope.vector_groups`, situation by situation where it can encode them; `scope`: KERNEL_SCOPE)."""
    scope = scope or KERNEL_SCOPE
    if kernel.profile.elr and not scope.vector_elr:
        return "eligible leader replicas (ELR): the vector kernel's change builder has none"
    ids = [b.id for b in kernel.packed.envs[0]]
    if ids != list(range(1, len(ids) + 1)) or len(ids) > scope.vector_max_brokers:
        return f"brokers {ids}: the vector kernel encodes 1..{scope.vector_max_brokers}"
    for form, _, _ in kernel.state_checks + kernel.goal_checks + kernel.sometimes_checks + kernel.edge_checks:
        if form.array_form() is None:
            return f"{form.at.__name__} has no array form (or its body changed since it was written)"
    return None


class Restated(NamedTuple):
    """A KRaft rule a kernel restates for speed: where it lives, and where the kernels write it again."""

    rule: str
    original: str  # file and name
    twins: tuple[str, ...]  # file and name of each restatement

    def kernels(self) -> set[str]:
        return {"vector" if "kraft_vector.py" in t else "scalar" for t in self.twins}


SCALAR = "checker/packed/kraft_kernel.py"
VECTOR = "checker/packed/kraft_vector.py"

#: every rule the kernels restate (tests/unit/test_partition_properties.py checks the `# twin` comments)
RESTATED = (
    Restated("the enabled actions of one partition, in order",
             "reference/enabled_actions.py default_enabled_actions",
             (f"{SCALAR} KraftKernel.enabled", f"{VECTOR} VectorKernel.tabulate")),
    Restated("AlterPartition's validation of an ISR change",
             "reference/kraft.py KraftProfile.alter_partition",
             (f"{SCALAR} KraftKernel._isr_change", f"{VECTOR} VectorKernel.tabulate")),
    Restated("fencing a broker", "reference/kraft.py KraftProfile.broker_fail",
             (f"{SCALAR} KraftKernel._fail", f"{VECTOR} VectorKernel.tabulate")),
    Restated("unfencing a broker", "reference/kraft.py KraftProfile.broker_recover",
             (f"{SCALAR} KraftKernel._recover", f"{VECTOR} VectorKernel.tabulate")),
    Restated("the admin's intent (the ghost) and the reassignments that end",
             "checker/models/reassign.py ReassignmentModel._intent",
             (f"{SCALAR} KraftKernel.compute", f"{VECTOR} VectorKernel.tabulate",
              f"{VECTOR} VectorKernel._tabulate_reassign", f"{VECTOR} VectorKernel._tabulate_cancel")),
    Restated("epochs renamed to 0", "checker/models/reassign.py normalize_epochs",
             (f"{SCALAR} KraftKernel.compute", f"{VECTOR} VectorKernel.sync")),
    Restated("a partition's part of an edge", "spec/per_partition.py partition_edges",
             (f"{SCALAR} KraftKernel.compute", f"{VECTOR} EdgeView")),
    Restated("validateManualPartitionAssignment and the plan (PartitionReassignmentReplicas)",
             "reference/kraft.py KraftProfile.change_reassignment",
             (f"{VECTOR} VectorKernel._tabulate_reassign",)),
    Restated("the revert of a cancel (PartitionReassignmentRevert)",
             "reference/kraft.py KraftProfile.cancel_reassignment",
             (f"{VECTOR} VectorKernel._tabulate_cancel",)),
    Restated("PartitionChangeBuilder and the completion rules", "reference/kraft_change.py build_change",
             (f"{VECTOR} VectorKernel.partition_change",)),
)


def mismatch_message(packed: Any, who: str, group: int, local: int, env: int, mine: tuple,
                     theirs: tuple) -> str:
    """One line for a kernel that disagrees with the reference on one situation: where, what differs, which
    restated definitions could have drifted (by name and file), and how to run without the kernels."""
    part, ghost = packed.locals[local]
    rows_differ, bits = _differences(packed, mine, theirs)
    suspects = []
    if bits and who == "vector":
        suspects.append("the array form of " + ", ".join(bits))
    if rows_differ or bits:
        rules = [r for r in RESTATED if who in r.kernels()]
        if not rows_differ:  # the successors agree: only what feeds the properties
            rules = [r for r in rules if r.original.startswith("spec/") or "ghost" in r.rule]
        suspects += [f"{r.rule} ({r.original}, restated in "
                     f"{', '.join(t for t in r.twins if _kernel_of(t) == who)})" for r in rules]
    differs = ("the successors" if rows_differ else "the bits of " + ", ".join(b.split(" (")[0] for b in bits)
               if bits else "the answers")
    return (f"the {who} kraft kernel and the reference disagree on {part} with {ghost}, "
            f"brokers {packed.envs[env]}, budget group {group} ({differs} differ); a definition restated for "
            "speed has drifted from its "
            f"original: {'; '.join(suspects) or 'see checker/packed/kernel_scope.py RESTATED'}. "
            "`kreassign check --no-kernel` checks on the reference alone")


def _kernel_of(twin: str) -> str:
    return "vector" if VECTOR in twin else "scalar"


def _differences(packed: Any, mine: tuple, theirs: tuple) -> tuple[bool, list[str]]:
    """(do the successors differ?, the names of the properties / signatures whose bits differ)."""

    def rows(answer):
        return sorted((r, a, n, b) for r, a, n, b, _ in _plain(packed, answer)[0])

    rows_differ = rows(mine) != rows(theirs)
    names: list[str] = []
    if not rows_differ:
        by_rank = {r[0]: r[4] for r in _plain(packed, theirs)[0]}
        wrong = 0
        for r in _plain(packed, mine)[0]:
            wrong |= r[4] ^ by_rank[r[0]]
        names += _names(packed.edge_checks + packed.edge_sig_bits, wrong)
        if mine[1] is not None and theirs[1] is not None:
            names += _names(packed.always_checks + packed.state_sig_bits, mine[1][0] ^ theirs[1][0])
            names += _names([(p.predicate, 1 << k) for k, p in enumerate(packed.goals)],
                            mine[1][1] ^ theirs[1][1])
            names += _names([(p.predicate, 1 << k) for k, p in enumerate(packed.sometimes)],
                            mine[1][2] ^ theirs[1][2])
    return rows_differ, sorted(set(names))


def _names(checks: list, wrong: int) -> list[str]:
    """"name (file)" of each predicate whose bits are in `wrong` (the file its definition is in: spec/...)."""
    out = []
    for pred, mask in checks:
        if wrong & mask:
            module = getattr(pred, "__module__", "") or ""
            where = module.removeprefix("kreassign.").replace(".", "/") + ".py" if module else "?"
            out.append(f"{getattr(pred, '__name__', pred)} ({where})")
    return out


def _plain(packed: Any, answer: tuple) -> tuple[list, Any]:
    rows, bits = answer
    out = []
    for r, a, n, b, ok in rows:
        out.append((r, packed.codes[a] if type(a) is int else a, packed.locals[n] if type(n) is int else n,
                    packed.envs[b] if type(b) is int else b, ok))
    return out, bits


__all__ = ["KERNEL_SCOPE", "RESTATED", "KernelScope", "Restated", "kernel_refusal", "mismatch_message",
           "vector_refusal"]
