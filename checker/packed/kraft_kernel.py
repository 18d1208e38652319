"""The kraft profiles' local step for the packed engine, without the reference's plumbing.

`PackedReassignment.compute` asks the reference model for the successors of one local
situation (one partition and its ghost, in a cluster of given brokers): it builds a
ClusterState and a ModelState, sends each action through the profile's dispatch as an
AlterPartitionReassignments request or an AlterPartition, renames the epochs, rebuilds
the ghosts, and evaluates every property on ModelState values. On one partition almost
every situation is new, so that plumbing, not Kafka's rules, is what a search pays for.

This kernel answers the same question for `kraft` and `kraft-3.7` by calling the profile's
own rule methods directly — `change_reassignment` (validation, planning, the change),
`cancel_reassignment` (the revert), `partition_change` (PartitionChangeBuilder) — on the
partition and a light view of the brokers, and by evaluating each property and finding
signature as spec/ defines it on one partition (spec/per_partition.py: the definition the
cluster-wide predicate is derived from, looked up on the predicate itself, so a property a
test replaces goes through the reference). What it writes a second time is only the
plumbing around the rules, each piece named in checker/packed/kernel_scope.py `RESTATED`
with a `# twin` comment at both ends: the enabled actions of one partition, AlterPartition's
validation of an ISR change, the broker fence / unfence loops, the ghost update, and the
partition's part of an edge. That is a second encoding, so it is tied to the reference as
the architecture asks:

- tests/unit/test_kraft_kernel.py compares `compute` with the reference's on every local
  situation, budget group and action of small configurations (both profiles, unclean
  topics, the pre-3.6 epoch bump, RF 1 to 3, two partitions), and shows a broken kernel
  caught;
- while a search runs, every `CHECK_EVERY`-th situation is also computed by the reference
  and compared (`KernelMismatch`, exit 3, names the situation and the restated rules);
- it is used only inside `KERNEL_SCOPE` (checker/packed/kernel_scope.py): the configurations
  it was compared on.

`check --no-kernel` (`EngineOptions(kernel=False)`, checker/config/engine_options.py, which
`PackedReassignment(kernel=False)` receives) switches it off.
"""

from __future__ import annotations

from typing import Any

from kreassign.checker.packed.kernel_scope import kernel_refusal
from kreassign.reference.enabled_actions import admin_requests
from kreassign.reference.kraft import ReassignmentError
from kreassign.spec import actions as A
from kreassign.spec.messages import NONE
from kreassign.spec.per_partition import PartitionEdge, partition_form
from kreassign.spec.reassign_properties import Ending, Ghost
from kreassign.spec.state import NO_LEADER, Partition, ordered_minus, replace

from kreassign.errors import InfraError

#: every CHECK_EVERY-th local situation the kernel answers is recomputed by the reference and compared
#: (a spot check costs what ~20 kernel answers cost: 1 in 1024 adds ~2% to a run)
CHECK_EVERY = 1024

IDLE = Ghost()
#: a PartitionEdge from its fields' tuple without NamedTuple's Python-level __new__ (one per edge: it counts)
_new_edge = tuple.__new__


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


class KraftKernel:
    """`compute` of PackedReassignment for the kraft profiles (see the module's docstring)."""

    def __init__(self, packed: Any):
        self.packed = packed
        model = packed.local_model
        self.profile = model.profile
        self.topic = packed.topic_template
        self.topic_name = self.topic.name
        self.election = self.profile.topic_election(_Brokers((), self.topic), self.topic_name)
        self.isr_changes = model.bounds.isr_changes
        space = model.space
        self.admin = admin_requests(space)  # the reference's own enumeration of the admin's requests
        ids = [b.id for b in packed.envs[0]]
        # the properties and signatures as spec/ defines them on one partition, with the bits packed.compute
        # gives them: (form, mask, is a signature) — a signature's bit says it does *not* match
        self.state_checks = ([(partition_form(pred), mask, False) for pred, mask in packed.always_checks]
                             + [(partition_form(sig), mask, True) for sig, mask in packed.state_sig_bits])
        self.edge_checks = ([(partition_form(pred), mask, False) for pred, mask in packed.edge_checks]
                            + [(partition_form(sig), mask, True) for sig, mask in packed.edge_sig_bits])
        self.goal_checks = [(p.per_partition, 1 << k, False) for k, p in enumerate(packed.goals)]
        self.sometimes_checks = [(p.per_partition, 1 << k, False) for k, p in enumerate(packed.sometimes)]
        self._state = [(form.at, mask, sig) for form, mask, sig in self.state_checks]  # (compute's loop)
        self._goals = [(form.at, mask) for form, mask, _ in self.goal_checks]
        self._sometimes = [(form.at, mask) for form, mask, _ in self.sometimes_checks]
        self.edge_bits = 0  # outside a predicate's scope: the property holds, the signature does not match
        for _, mask, _ in self.edge_checks:
            self.edge_bits |= mask
        self._asked: tuple[dict, dict] = ({}, {})  # [ended?][kind] -> `asked`'s answer

        def entry(a: Any, rule: Any) -> tuple:
            """(action, its code (interned up front: answers carry it), its rule, 1 for a Reassign / 2 for a
            Cancel / 0, its kind's name, the edge checks in scope on its edges: (ending nothing, ending a
            reassignment))"""
            request = 1 if type(a) is A.Reassign else 2 if type(a) is A.Cancel else 0
            name = type(a).__name__
            in_scope = (self.asked(name, False), self.asked(name, True))
            return a, packed.intern_action(a), rule, request, name, in_scope

        self.failover = entry(A.ControllerFailover(), self._failover)
        self.expand = {b: entry(A.LeaderExpandIsr(self.topic_name, 0, b), self._expand) for b in ids}
        self.shrink = {b: entry(A.LeaderShrinkIsr(self.topic_name, 0, b), self._shrink) for b in ids}
        self.fail = {b: entry(A.BrokerFail(b), self._fail) for b in ids}
        self.recover = {b: entry(A.BrokerRecover(b), self._recover) for b in ids}
        self.n_admin = len(self.admin)
        self.reassigns = [(k, entry(a, self._reassign)) for k, a in enumerate(self.admin) if type(a) is A.Reassign]
        self.cancels = [(k, entry(a, self._cancel)) for k, a in enumerate(self.admin) if type(a) is A.Cancel]
        # (kernel_refusal saw the admin's requests are Reassigns, then Cancels: ranks are their positions)
        self.check_every = CHECK_EVERY
        self._views: dict[int, _Brokers] = {}
        self._moved: dict[tuple[int, int, bool], tuple[Any, _Brokers]] = {}  # (env, broker, active) -> after
        self._locals: dict[tuple, int] = {}  # (replicas, isr, leader, adding, removing, ghost) -> local id
        self.answered = 0

    @classmethod
    def build(cls, packed: Any) -> KraftKernel | None:
        """The kernel for `packed`, or None where it was not compared (kernel_scope.kernel_refusal says why);
        `PackedReassignment(kernel=False)` does not ask (--no-kernel)."""
        if kernel_refusal(packed) is not None:
            return None
        return cls(packed)

    def asked(self, kind: str, ended: bool) -> tuple[list, list]:
        """The edge checks whose scope covers a step of `kind` (ending a reassignment or not): (the properties',
        the signatures') definitions with their bits."""
        found = self._asked[ended].get(kind)
        if found is None:
            checks = [(form.at, mask, sig) for form, mask, sig in self.edge_checks if form.scope.covers(kind, ended)]
            found = self._asked[ended][kind] = ([(at, mask) for at, mask, sig in checks if not sig],
                                                [(at, mask) for at, mask, sig in checks if sig])
        return found

    # -- brokers ---------------------------------------------------------------------------------------
    def _view(self, env: int) -> _Brokers:
        v = self._views.get(env)
        if v is None:
            v = self._views[env] = _Brokers(self.packed.envs[env], self.topic)
        return v

    def brokers_after(self, env: int, broker: int, active: bool) -> tuple[Any, _Brokers]:
        """The brokers of `env` after `broker` is fenced (active=False) / unfenced: (their env id if interned,
        else the tuple; their view). The vector kernel asks it too."""
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
        # twin of reference/kraft.py KraftProfile.alter_partition
        leader = p.leader
        if leader not in view.registered:
            return None
        members = set(new_isr)
        # Replicas.validateIsr (no duplicates, no negative ids, replicas only), the leader in it, all active
        if len(members) != len(new_isr) or not members.issubset(p.replicas) or (members and min(members) < 0):
            return None
        if leader not in members or not members <= view.active:
            return None
        return self.profile.partition_change(view, p, self.topic_name, isr=new_isr, election=self.election)

    def _expand(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        return self._isr_change(view, p, p.isr + (a.broker,)), NONE, env, view

    def _shrink(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        b = a.broker
        return self._isr_change(view, p, tuple([r for r in p.isr if r != b])), NONE, env, view

    def _fail(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        """handleBrokerFenced: fence; a change for the partition if the broker is in its ISR."""
        # twin of reference/kraft.py KraftProfile.broker_fail
        b = a.broker
        if b not in view.active:
            return None, NONE, env, view
        after, aview = self.brokers_after(env, b, False)
        rec = None
        if b in p.isr:
            isr = tuple([r for r in p.isr if r != b])
            rec = self.profile.partition_change(aview, p, self.topic_name, isr=isr, election=self.election)
        return rec, NONE, after, aview

    def _recover(self, a: Any, view: _Brokers, env: int, p: Partition) -> tuple:
        """handleBrokerUnfenced: unfence; elect a leader if the partition has none."""
        # twin of reference/kraft.py KraftProfile.broker_recover
        b = a.broker
        if b in view.active or b not in view.registered:
            return None, NONE, env, view
        after, aview = self.brokers_after(env, b, True)
        rec = (self.profile.partition_change(aview, p, self.topic_name, election=self.election)
               if p.leader == NO_LEADER else None)
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
        # twin of reference/enabled_actions.py default_enabled_actions
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
        all_bits, new_edge = self.edge_bits, _new_edge
        kept = (p.replicas, p.isr, p.leader, p.adding, p.removing, p.elr, p.last_known_elr)
        original = g.original
        for rank, (a, code_id, rule, request, name, in_scope) in self.enabled(group, p, view):
            rec, code, env_after, view_after = rule(a, view, env, p)
            if rec:
                get = rec.get
                q = (get("replicas", p.replicas), get("isr", p.isr), get("leader", p.leader),
                     get("adding", p.adding), get("removing", p.removing), get("elr", p.elr),
                     get("last_known_elr", p.last_known_elr))
                bumped = "leader" in rec
            else:
                rec, q, bumped = None, kept, False
            # the ghost (kraft: requests take effect at once)
            # twin of checker/models/reassign.py ReassignmentModel._intent
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
                ending = Ending(0, "cancelled" if g2.cancelled else "completed", g2.original, g2.requested)
                g2 = IDLE
            # the properties and signatures on this partition's part of the edge, where their scope covers it
            # twin of spec/per_partition.py partition_edges (epochs renamed to 0: a record's bumps the steps)
            ok = all_bits
            props, sigs = in_scope[ending is not None]
            if props or sigs:
                changed = rec is not None  # (bools for the epoch steps: True is 1)
                e = new_edge(PartitionEdge, (p, q[0], q[1], q[2], bumped, changed, name, code, changed, ending,
                                             view_after.active))
                for at, mask in props:
                    if not at(e):  # a property that fails
                        ok &= ~mask
                for at, mask in sigs:
                    if at(e):  # a signature that matches
                        ok &= ~mask
            if rec is None and g2 is g:
                new: Any = local
            else:
                key = (*q, g2)
                new = locals_.get(key)
                if new is None:
                    # twin of checker/models/reassign.py normalize_epochs (a partition after at epochs 0)
                    new = (Partition(q[0], q[1], q[2], q[3], q[4], elr=q[5], last_known_elr=q[6]), g2)
                    known = packed.local_ids.get(new)
                    if known is not None:
                        locals_[key] = new = known
            out.append((rank, code_id, new, env_after, ok))
        bits = None
        if group == 0:
            inv = goal = some = 0
            for at, mask, sig in self._state:
                if (not at(p, g)) == sig:  # a property that holds, a signature that does not match
                    inv |= mask
            for at, mask in self._goals:
                if at(p, g):
                    goal |= mask
            for at, mask in self._sometimes:
                if at(p, g):
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


__all__ = ["CHECK_EVERY", "IDLE", "KernelMismatch", "KraftKernel", "same_answers"]
