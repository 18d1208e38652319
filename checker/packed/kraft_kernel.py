"""The kraft profiles' local step for the packed engine, without the reference's plumbing.

`PackedReassignment.compute` asks the reference model for the successors of one local
situation (one partition and its ghost, in a cluster of given brokers): it builds a
ClusterState and a ModelState, sends each action through the profile's dispatch as an
AlterPartitionReassignments request or an AlterPartition, renames the epochs, rebuilds
the ghosts, and evaluates every property on ModelState values. On one partition almost
every situation is new, so that plumbing, not Kafka's rules, is what a search pays for.

This kernel answers the same question for `kraft` and `kraft-3.7` by calling the profile's
own rule methods directly — `change_reassignment` (validation, planning, the change),
`cancel_reassignment` (the revert), `_build` (PartitionChangeBuilder) — on the partition
and a light view of the brokers. What it writes a second time is only the plumbing
around them: the enabled actions of one partition, AlterPartition's validation of an ISR
change, the broker fence / unfence loops, the ghost update, and the properties and
finding signatures, each on plain tuples. That is a second encoding, so it is tied to the
reference as the architecture asks:

- tests/unit/test_kraft_kernel.py compares `compute` with the reference's on every local
  situation, budget group and action of small configurations (both profiles, unclean
  topics, the pre-3.6 epoch bump, RF 1 to 3, two partitions), and shows a broken kernel
  caught;
- while a search runs, every `CHECK_EVERY`-th situation is also computed by the reference
  and compared (`KernelMismatch`, exit 2, names the situation), so a drift shows in use too;
- it is used only where it was compared: the two profile classes themselves (a variant
  subclass or an instance with a replaced method, e.g. a planted bug, goes through the
  reference), no capability bounds, and
  properties it implements (looked up by the predicate itself, so a property a test
  replaces goes through the reference).

`check --no-kernel` (`EngineOptions(kernel=False)`, checker/config/engine_options.py, which
`PackedReassignment(kernel=False)` receives) switches it off.
"""

from __future__ import annotations

from typing import Any

from kreassign.reference.enabled_actions import admin_requests
from kreassign.reference.kraft import Kraft37Profile, KraftProfile, ReassignmentError
from kreassign.reference.kraft_change import (
    adding_in_isr_all_targets_if_shrinking,
    adding_replicas_in_isr,
    all_target_replicas_in_isr,
)
from kreassign.spec import actions as A
from kreassign.spec import findings as F
from kreassign.spec import reassign_properties as P
from kreassign.spec.messages import NONE
from kreassign.spec.reassign_properties import Ghost
from kreassign.spec.state import NO_LEADER, Partition, ordered_minus, replace

from kreassign.errors import InfraError

#: every CHECK_EVERY-th local situation the kernel answers is recomputed by the reference and compared
#: (a spot check costs what ~20 kernel answers cost: 1 in 1024 adds ~2% to a run)
CHECK_EVERY = 1024

#: bounds the kernel does not model (each switches on actions or state beyond the plain kraft model)
UNMODELLED_BOUNDS = ("replication", "znode", "broker_view", "throttles", "create_partitions", "fair",
                     "broker_replicas", "leader_balance", "zk_versions", "kraft_actions", "delete_topic",
                     "elections")

IDLE = Ghost()
_EMPTY: tuple[int, ...] = ()


class KernelMismatch(InfraError):
    """The kernel and the reference answered one local situation differently: kreassign's own machinery
    failed (exit 3), not the model; `--no-kernel` runs on the reference alone."""


class _Brokers:
    """What the rule methods ask of a ClusterState, for one tuple of brokers (and the topic's config)."""

    __slots__ = ("_name", "_topic", "active", "brokers", "listed", "registered")

    def __init__(self, brokers: tuple[Any, ...], topic: Any):
        self.brokers = brokers
        # the registered brokers in order, as the enumeration lists them: (position, id, active?)
        self.listed = [(k, b.id, b.active) for k, b in enumerate(b for b in brokers if b.registered)]
        self.registered = frozenset(b.id for b in brokers if b.registered)
        self.active = frozenset(b.id for b in brokers if b.registered and b.active)
        self._topic, self._name = topic, topic.name

    def is_registered(self, broker_id: int) -> bool:
        return broker_id in self.registered

    def is_active(self, broker_id: int) -> bool:
        return broker_id in self.active

    def topic(self, name: str) -> Any:
        return self._topic if name == self._name else None


# -- the properties and signatures, on one partition ------------------------------------------------
# state: f(p, g) with p the (normalized) Partition and g its Ghost.
# edge: f(p, kind, code, rec, q, q_leader_epoch_bumped, ending, active_after): p before, q after (its
# fields; epochs: the record's bumps from p's), kind the action's class name, code the admin request's
# error code, rec the change record (or None), ending (kind, original, requested) or None.

def _target_in_replicas(p, g):
    return g.requested is None or not (p.adding or p.removing) or set(g.requested) <= set(p.replicas)


def _original_in_replicas(p, g):
    return g.original is None or not (p.adding or p.removing) or set(g.original) <= set(p.replicas)


def _adding_removing_disjoint(p, g):
    return not set(p.adding) & set(p.removing)


def _isr_in_replicas(p, g):
    return set(p.isr) <= set(p.replicas)


def _leader_in_isr(p, g):
    return p.leader == NO_LEADER or p.leader in p.isr


def _isr_non_empty(p, g):
    # twin of spec/reassign_properties.isr_non_empty
    return len(p.isr) > 0 or (p.leader == NO_LEADER and (bool(p.elr) or any(b != NO_LEADER for b in p.last_known_elr)))


def _replication_factor_bounded(p, g):
    if g.original is not None and g.requested is not None and (p.adding or p.removing):
        return len(p.replicas) <= len(set(g.original) | set(g.requested))
    return True


def _committed_records_kept(p, g):
    return True  # without the replication layer (the kernel's only case) there is no log


def _reassignment_finished(p, g):
    return g.original is None


def _stale_adding_replica(p, g):
    both = set(p.adding) & set(p.removing)
    return bool(both) and g.original is not None and not both & (set(g.original) | set(g.requested or ()))


def _override_keeps_earlier_target(p, g):
    if g.original is None or g.requested is None:
        return False
    extra = set(p.replicas) - set(g.original) - set(g.requested)
    return bool(extra) and extra <= set(p.removing)


def _stuck_on_stale_adding(p, g):
    return bool(set(p.adding) & set(p.removing))


STATE = {
    P.target_in_replicas: _target_in_replicas,
    P.original_in_replicas: _original_in_replicas,
    P.adding_removing_disjoint: _adding_removing_disjoint,
    P.isr_in_replicas: _isr_in_replicas,
    P.leader_in_isr: _leader_in_isr,
    P.isr_non_empty: _isr_non_empty,
    P.replication_factor_bounded: _replication_factor_bounded,
    P.committed_records_kept: _committed_records_kept,
    P.reassignment_finished: _reassignment_finished,
    F.stale_adding_replica: _stale_adding_replica,
    F.override_keeps_earlier_target: _override_keeps_earlier_target,
    F.stuck_on_stale_adding: _stuck_on_stale_adding,
}


def _epochs_monotone(p, kind, code, rec, q, bumped, ending, active):
    # p's epochs are 0 (renamed); the un-renamed successor's are the record's bumps: never back
    moved = rec is not None
    if (q[2], q[1]) != (p.leader, p.isr) and not moved:
        return False
    return not (q[2] != p.leader and not bumped)


def _completion_reaches_target(p, kind, code, rec, q, bumped, ending, active):
    if ending is None or ending[0] != "completed" or ending[2] is None:
        return True
    return set(q[0]) == set(ending[2]) and set(ending[2]) <= set(q[1])


def _cancel_restores_original_replicas(p, kind, code, rec, q, bumped, ending, active):
    return ending is None or ending[0] != "cancelled" or set(q[0]) == set(ending[1])


def _cancel_restores_original_order(p, kind, code, rec, q, bumped, ending, active):
    return ending is None or ending[0] != "cancelled" or q[0] == ending[1]


def _replication_factor_restored(p, kind, code, rec, q, bumped, ending, active):
    if ending is None:
        return True
    intended = ending[1] if ending[0] == "cancelled" or ending[2] is None else ending[2]
    return len(q[0]) == len(intended)


def _admin_action_keeps_a_leader(p, kind, code, rec, q, bumped, ending, active):
    if kind not in P.ADMIN_ACTIONS:
        return True
    if q[2] == NO_LEADER and p.leader != NO_LEADER:
        return not any(b in active for b in q[1] if b in q[0])
    return True


def _cancel_rejected_cleanly(p, kind, code, rec, q, bumped, ending, active):
    return kind != "Cancel" or code == NONE or rec is None


def _cancel_keeps_non_adding_replicas(p, kind, code, rec, q, bumped, ending, active):
    if ending is None or ending[0] != "cancelled":
        return False
    extra = set(q[0]) - set(ending[1])
    return set(ending[1]) <= set(q[0]) and bool(extra) and not extra & set(p.adding)


def _cancel_keeps_merged_order(p, kind, code, rec, q, bumped, ending, active):
    if ending is None or ending[0] != "cancelled":
        return False
    original = ending[1]
    return (set(q[0]) == set(original) and q[0] != original
            and q[0] == ordered_minus(p.replicas, set(p.replicas) - set(original)))


def _completes_with_non_adding_target_out_of_isr(p, kind, code, rec, q, bumped, ending, active):
    if ending is None or ending[0] != "completed":
        return False
    requested = set(ending[2] or ())
    missing = requested - set(q[1])
    return set(q[0]) == requested and bool(missing) and not missing & set(p.adding)


EDGE = {
    P.epochs_monotone: _epochs_monotone,
    P.completion_reaches_target: _completion_reaches_target,
    P.cancel_restores_original_replicas: _cancel_restores_original_replicas,
    P.cancel_restores_original_order: _cancel_restores_original_order,
    P.replication_factor_restored: _replication_factor_restored,
    P.admin_action_keeps_a_leader: _admin_action_keeps_a_leader,
    P.cancel_rejected_cleanly: _cancel_rejected_cleanly,
    F.cancel_keeps_non_adding_replicas: _cancel_keeps_non_adding_replicas,
    F.cancel_keeps_merged_order: _cancel_keeps_merged_order,
    F.completes_with_non_adding_target_out_of_isr: _completes_with_non_adding_target_out_of_isr,
}


#: the edge predicates' values on a *plain* edge (no admin request, no reassignment ending on it), where
#: they hold or match for the same reason whatever the partition: the kernel does not ask them there
PLAIN = {
    _completion_reaches_target: True,
    _cancel_restores_original_replicas: True,
    _cancel_restores_original_order: True,
    _replication_factor_restored: True,
    _admin_action_keeps_a_leader: True,
    _cancel_rejected_cleanly: True,
    _cancel_keeps_non_adding_replicas: False,
    _cancel_keeps_merged_order: False,
    _completes_with_non_adding_target_out_of_isr: False,
}


#: the completion rules of the kraft profiles (reference/kraft_change.py), each compared with the reference
KNOWN_COMPLETION_RULES = (all_target_replicas_in_isr, adding_replicas_in_isr, adding_in_isr_all_targets_if_shrinking)


def _unmodelled(packed: Any) -> str | None:
    """Why the kernel cannot answer for `packed` (None: it can)."""
    model = packed.local_model
    profile = model.profile
    if type(profile) not in (KraftProfile, Kraft37Profile):
        return f"profile class {type(profile).__name__}"
    # (the completion rule is a strategy the release picks, one of the three the kernels are compared on)
    patched = sorted(k for k, v in vars(profile).items() if callable(v)
                     and not (k == "completion_rule" and v in KNOWN_COMPLETION_RULES))
    if patched:  # a copy with its own methods (e.g. a planted bug in `apply`): not the rules compared
        return f"profile methods replaced on the instance: {', '.join(patched)}"
    if profile.controller_actions:
        return "the controller's own actions"
    if profile.elr and model.bounds.min_insync != 1:
        # the min ISR is min(min.insync.replicas, partition 0's replicas): with 1 it is 1 whatever partition 0
        # holds; above, it depends on a partition the kernel does not see (the reference answers)
        return "eligible leader replicas (ELR) with min.insync.replicas above 1"
    for key in UNMODELLED_BOUNDS:
        if getattr(model.bounds, key):
            return f"bound {key}"
    init = packed.inner.init_states()[0]
    for p in init.cluster.topics[0].partitions:
        if p.log is not None or p.original is not None or p.leader_epoch or p.partition_epoch:
            return "a partition with a log or renamed epochs"
    if init.cluster.throttles is not None or init.cluster.hosted is not None or init.cluster.requests is not None:
        return "controller-wide state"
    for pred, _ in packed.always_checks + packed.state_sig_bits:
        if pred not in STATE:
            return f"state predicate {getattr(pred, '__name__', pred)}"
    for pred, _ in packed.edge_checks + packed.edge_sig_bits:
        if pred not in EDGE:
            return f"edge predicate {getattr(pred, '__name__', pred)}"
    for prop in packed.goals + packed.sometimes:
        if prop.predicate not in STATE:
            return f"goal {prop.name}"
    return None


class KraftKernel:
    """`compute` of PackedReassignment for the kraft profiles (see the module's docstring)."""

    def __init__(self, packed: Any):
        self.packed = packed
        model = packed.local_model
        self.profile = model.profile
        self.topic = packed.topic_template
        self.topic_name = self.topic.name
        self.election = self.profile._topic_election(_Brokers((), self.topic), self.topic_name)
        self.isr_changes = model.bounds.isr_changes
        space = model.space
        self.admin = admin_requests(space)  # the reference's own enumeration of the admin's requests
        if not space.reassign or not space.cancel or not space.failures or not space.failover:
            raise ValueError("the kernel models the plain action space only")
        ids = [b.id for b in packed.envs[0]]

        def entry(a: Any, rule: Any) -> tuple:
            """(action, its code (interned up front: answers carry it), its rule, 1 for a Reassign / 2 for a
            Cancel / 0, its kind's name)"""
            request = 1 if type(a) is A.Reassign else 2 if type(a) is A.Cancel else 0
            return a, packed._code(a), rule, request, type(a).__name__

        self.failover = entry(A.ControllerFailover(), self._failover)
        self.expand = {b: entry(A.LeaderExpandIsr(self.topic_name, 0, b), self._expand) for b in ids}
        self.shrink = {b: entry(A.LeaderShrinkIsr(self.topic_name, 0, b), self._shrink) for b in ids}
        self.fail = {b: entry(A.BrokerFail(b), self._fail) for b in ids}
        self.recover = {b: entry(A.BrokerRecover(b), self._recover) for b in ids}
        self.n_admin = len(self.admin)
        self.reassigns = [(k, entry(a, self._reassign)) for k, a in enumerate(self.admin) if type(a) is A.Reassign]
        self.cancels = [(k, entry(a, self._cancel)) for k, a in enumerate(self.admin) if type(a) is A.Cancel]
        if [e[0] for _, e in self.reassigns + self.cancels] != list(self.admin):
            raise ValueError("the kernel expects the admin's requests as Reassigns, then Cancels")
        # the predicates, in the order and with the bits packed.compute gives them
        self.always = [(STATE[pred], mask) for pred, mask in packed.always_checks]
        self.state_sigs = [(STATE[pred], mask) for pred, mask in packed.state_sig_bits]
        self.edges = [(EDGE[pred], mask) for pred, mask in packed.edge_checks]
        self.edge_sigs = [(EDGE[pred], mask) for pred, mask in packed.edge_sig_bits]
        self.goals = [(STATE[p.predicate], 1 << k) for k, p in enumerate(packed.goals)]
        self.sometimes = [(STATE[p.predicate], 1 << k) for k, p in enumerate(packed.sometimes)]
        # on a plain edge: the bits of the predicates constant there, and the predicates still to ask
        fixed, ask = 0, []
        for pred, mask in self.edges:
            if pred not in PLAIN:
                ask.append((pred, mask))
            elif PLAIN[pred]:
                fixed |= mask
        for pred, mask in self.edge_sigs:
            if pred not in PLAIN:
                ask.append((lambda *x, _p=pred: not _p(*x), mask))
            elif not PLAIN[pred]:
                fixed |= mask
        self.plain = (fixed, ask)
        self.check_every = CHECK_EVERY
        self._views: dict[int, _Brokers] = {}
        self._moved: dict[tuple[int, int, bool], tuple[Any, _Brokers]] = {}  # (env, broker, active) -> after
        self._locals: dict[tuple, int] = {}  # (replicas, isr, leader, adding, removing, ghost) -> local id
        self.answered = 0

    @classmethod
    def build(cls, packed: Any) -> KraftKernel | None:
        if _unmodelled(packed) is not None:  # (`PackedReassignment(kernel=False)` does not ask: --no-kernel)
            return None
        return cls(packed)

    # -- brokers ---------------------------------------------------------------------------------------
    def _view(self, env: int) -> _Brokers:
        v = self._views.get(env)
        if v is None:
            v = self._views[env] = _Brokers(self.packed.envs[env], self.topic)
        return v

    def _with(self, env: int, broker: int, active: bool) -> tuple[Any, _Brokers]:
        """The brokers after `broker` is fenced / unfenced: (its env id if interned, else the tuple; the view)."""
        key = (env, broker, active)
        hit = self._moved.get(key)
        if hit is None:
            brokers = tuple(replace(b, active=active) if b.id == broker else b for b in self.packed.envs[env])
            known = self.packed.env_ids.get(brokers)
            hit = (known if known is not None else brokers, _Brokers(brokers, self.topic))
            if known is not None:
                self._moved[key] = hit
        return hit

    # -- one action: (record or None, the admin request's error code, brokers after (id or tuple), their view)
    def _reassign(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        try:
            return self.profile.change_reassignment(view, p, a.replicas, self.topic_name), NONE, env, view
        except ReassignmentError as e:
            return None, e.code, env, view

    def _cancel(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        try:
            return self.profile.cancel_reassignment(view, self.topic_name, 0, p), NONE, env, view
        except ReassignmentError as e:
            return None, e.code, env, view

    def _isr_change(self, view: _Brokers, p: Partition, new_isr: tuple[int, ...]) -> dict | None:
        """ReplicationControlManager.alterPartition from the current leader, at the current epochs: the
        validations that can fail there (an error writes nothing: None), then the change."""
        leader = p.leader
        if leader not in view.registered:
            return None
        members = set(new_isr)
        # Replicas.validateIsr (no duplicates, no negative ids, replicas only), the leader in it, all active
        if len(members) != len(new_isr) or not members.issubset(p.replicas) or (members and min(members) < 0):
            return None
        if leader not in members or not members <= view.active:
            return None
        return self.profile._build(view, p, self.topic_name, isr=new_isr, election=self.election)

    def _expand(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        return self._isr_change(view, p, p.isr + (a.broker,)), NONE, env, view

    def _shrink(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        b = a.broker
        return self._isr_change(view, p, tuple([r for r in p.isr if r != b])), NONE, env, view

    def _fail(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        """handleBrokerFenced: fence; a change for the partition if the broker is in its ISR."""
        b = a.broker
        if b not in view.active:
            return None, NONE, env, view
        after, aview = self._with(env, b, False)
        rec = None
        if b in p.isr:
            rec = self.profile._build(aview, p, self.topic_name, isr=tuple([r for r in p.isr if r != b]),
                                      election=self.election)
        return rec, NONE, after, aview

    def _recover(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        """handleBrokerUnfenced: unfence; elect a leader if the partition has none."""
        b = a.broker
        if b in view.active or b not in view.registered:
            return None, NONE, env, view
        after, aview = self._with(env, b, True)
        rec = self.profile._build(aview, p, self.topic_name, election=self.election) if p.leader == NO_LEADER else None
        return rec, NONE, after, aview

    def _failover(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        return None, NONE, env, view  # the metadata log holds the whole state

    # -- what packed.compute answers -------------------------------------------------------------------
    def _isr_actions(self, p: Partition, view: _Brokers) -> list[tuple]:
        """The leader's ISR changes, as common.default_enabled_actions lists them (expansions, then shrinks)."""
        if not self.isr_changes or p.leader == NO_LEADER:
            return []
        isr, active, expand, shrink = p.isr, view.active, self.expand, self.shrink
        out = [expand[b] for b in sorted(p.replicas) if b not in isr and b in active]
        out += [shrink[b] for b in sorted(isr) if b != p.leader]
        return out

    def enabled(self, group: int, p: Partition, view: _Brokers) -> list[tuple]:
        """(rank, (action, its code, its rule)) of one budget group, the rank being the action's position in
        the order of common.default_enabled_actions for one partition: admin, ISR changes, brokers, failover."""
        if group == 1:
            return self.reassigns
        if group == 2:
            return self.cancels
        isr = self._isr_actions(p, view)
        first = self.n_admin + len(isr)  # where the brokers' actions start
        if group == 0:
            n = self.n_admin
            out = [(n + k, entry) for k, entry in enumerate(isr)]
            recover = self.recover
            out += [(first + k, recover[b]) for k, b, active in view.listed if not active]
            return out
        if group == 3:
            fail = self.fail
            return [(first + k, fail[b]) for k, b, active in view.listed if active]
        return [(first + len(view.listed), self.failover)]

    def compute(self, group: int, local: int, env: int) -> tuple[list, tuple | None]:
        packed = self.packed
        p, g = packed.locals[local]
        view = self._view(env)
        out = []
        locals_ = self._locals
        edges, edge_sigs, (plain_bits, plain_ask) = self.edges, self.edge_sigs, self.plain
        kept = (p.replicas, p.isr, p.leader, p.adding, p.removing, p.elr, p.last_known_elr)
        original = g.original
        for rank, (a, code_id, rule, request, name) in self.enabled(group, p, view):
            rec, code, env_after, view_after = rule(a, view, env, p)
            if rec:
                get = rec.get
                q = (get("replicas", p.replicas), get("isr", p.isr), get("leader", p.leader),
                     get("adding", p.adding), get("removing", p.removing), get("elr", p.elr),
                     get("last_known_elr", p.last_known_elr))
                bumped = "leader" in rec
            else:
                rec, q, bumped = None, kept, False
            # the ghost (ReassignmentModel._intent, kraft: requests take effect at once)
            g2 = g
            if request and code == NONE:
                if request == 1:  # Reassign
                    if original is not None or q[3] or q[4] or set(q[0]) != set(p.replicas):  # not an idle no-op
                        g2 = Ghost(original if original is not None else ordered_minus(p.replicas, p.adding),
                                   a.replicas, False)
                elif original is not None:  # Cancel
                    g2 = g._replace(requested=None, cancelled=True)
            ending = None
            if g2.original is not None and not (q[3] or q[4]):
                ending = ("cancelled" if g2.cancelled else "completed", g2.original, g2.requested)
                g2 = IDLE
            if request or ending is not None:
                active = view_after.active
                ok = 0
                for pred, mask in edges:
                    if pred(p, name, code, rec, q, bumped, ending, active):
                        ok |= mask
                for pred, mask in edge_sigs:
                    if not pred(p, name, code, rec, q, bumped, ending, active):
                        ok |= mask
            else:  # no request, no ending: the predicates PLAIN declares constant there are not asked
                ok = plain_bits
                for pred, mask in plain_ask:
                    if pred(p, name, code, rec, q, bumped, ending, view_after.active):
                        ok |= mask
            if rec is None and g2 is g:
                new: Any = local
            else:
                key = (*q, g2)
                new = locals_.get(key)
                if new is None:
                    new = (Partition(q[0], q[1], q[2], q[3], q[4], elr=q[5], last_known_elr=q[6]), g2)
                    known = packed.local_ids.get(new)
                    if known is not None:
                        locals_[key] = new = known
            out.append((rank, code_id, new, env_after, ok))
        bits = None
        if group == 0:
            inv = goal = some = 0
            for pred, mask in self.always:
                if pred(p, g):
                    inv |= mask
            for pred, mask in self.state_sigs:
                if not pred(p, g):
                    inv |= mask
            for pred, mask in self.goals:
                if pred(p, g):
                    goal |= mask
            for pred, mask in self.sometimes:
                if pred(p, g):
                    some |= mask
            bits = (inv, goal, some)
        self.answered += 1
        return out, bits


def same_answers(packed: Any, mine: tuple[list, tuple | None], theirs: tuple[list, tuple | None]) -> bool:
    """Do two `compute` answers say the same: the same actions at the same ranks, the same (partition,
    ghost) and brokers after, the same property bits (ids and values may differ in form, not in meaning)."""

    def local(x: Any) -> Any:
        return packed.locals[x] if type(x) is int else x

    def env(x: Any) -> Any:
        return packed.envs[x] if type(x) is int else x

    def action(x: Any) -> Any:
        return packed.codes[x] if type(x) is int else x

    def norm(answer):
        rows, bits = answer
        return sorted((r, action(a), local(n), env(b), ok) for r, a, n, b, ok in rows), bits

    return norm(mine) == norm(theirs)


__all__ = ["CHECK_EVERY", "EDGE", "STATE", "KernelMismatch", "KraftKernel", "same_answers"]
