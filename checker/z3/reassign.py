"""The reassignment profiles as z3 transition relations over broker sets (bit-vectors of width N).

One partition (the properties are per partition, and every action changes a partition as a
function of that partition and the brokers' liveness alone, so a run with several
partitions projects onto runs of this one; docs/proofs.md). Its state:

| field | meaning |
|---|---|
| `R`, `AR`, `RR`, `I` | replicas, adding, removing, ISR as sets |
| `L` | the active (KRaft) / live (ZK) brokers; every broker is registered |
| `LD` | the leader, one-hot (0 = no leader) |
| `le`, `pe` | leader and partition epochs (integers) |
| `unc` | the topic's unclean.leader.election.enable (constant) |
| `rf` | the replication factor of the initial assignment and of every requested target (constant) |
| `O`/`hO`, `Q`/`hQ`, `c` | the explorer's ghosts: original, requested target, cancelled |

Profile extras: `kip236` adds the recorded `original_replicas` (`OR`/`hOR`); `zk`
(`checker/z3/zk.py`) adds the controller's memory and pending step. `kraft` follows one Kafka
release (`KraftEncoding.KAFKA_VERSION`, the newest; its completion rule is the one rule of the
encoded state that changed between releases) with eligible leader replicas (KIP-966) off: ELR's
empty ISRs are not encoded, and `profiles.reference_model` is the reference it is tied to.

Actions (`k`): Reassign(`tgt`), Cancel, LeaderExpandIsr(`b`), LeaderShrinkIsr(`b`),
BrokerFail(`b`), BrokerRecover(`b`), ControllerFailover, ControllerStep, ElectLeaders
PREFERRED / UNCLEAN — the explorer's actions at its bounds (`checker/models/reassign.py`),
each guarded exactly as the reference enables it (`Profile.enabled_actions`).

Where the reference follows list order — which broker an election picks ("the first
valid replica"), which replica a revert or ZK's OfflineReplica keeps as the last ISR
member, whether a request only reordering the replica list writes a record — the
encoding lets the choice range over every candidate the order could have put first.
This over-approximates: the reference's successor is always one of the allowed ones
(the differential test checks it on every explored edge, and `allowed` states exactly
which others there are), so an invariant proved here holds for the real behaviour.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import z3
from kreassign.checker.z3.encoding import (
    BOOL,
    COUNT,
    ENUM,
    INT,
    LEADER,
    SET,
    Candidate,
    Encoding,
    Field,
    Vars,
    bind,
    choose,
    fast_and,
    leader_mask,
    lowest,
    mask,
    onehot,
    popcount,
    popcount_int,
    subset,
)
from kreassign.spec import actions as A
from kreassign.spec import kafka_releases
from kreassign.spec.messages import NONE, AlterPartitionReassignmentsResponse

# action kinds
REASSIGN, CANCEL, EXPAND, SHRINK, FAIL, RECOVER, FAILOVER, STEP, ELECT_PREFERRED, ELECT_UNCLEAN = range(10)
KIND_NAMES = {
    REASSIGN: "Reassign",
    CANCEL: "Cancel",
    EXPAND: "LeaderExpandIsr",
    SHRINK: "LeaderShrinkIsr",
    FAIL: "BrokerFail",
    RECOVER: "BrokerRecover",
    FAILOVER: "ControllerFailover",
    STEP: "ControllerStep",
    ELECT_PREFERRED: "ElectLeaders(PREFERRED)",
    ELECT_UNCLEAN: "ElectLeaders(UNCLEAN)",
}
#: the actions `admin_action_keeps_a_leader` is about (spec/reassign_properties.py ADMIN_ACTIONS)
ADMIN_KINDS = (REASSIGN, CANCEL, STEP)

TOPIC = "t"

#: targets of every request: "rf" = the size of the initial assignment (the explorer's
#: Bounds: every target is an rf-subset), "any" = any non-empty set of brokers
TARGET_MODES = ("rf", "any")


def reassigning(v: Vars) -> z3.BoolRef:
    return z3.Or(v.AR != 0, v.RR != 0)


@dataclass
class Branch:
    """One action kind of a transition relation: when it is enabled, what it writes, its choices."""

    kind: int
    guard: z3.BoolRef
    post: dict[str, z3.ExprRef]  # cluster fields written (the others keep their value)
    acc: z3.BoolRef = field(default_factory=lambda: z3.BoolVal(False))  # an admin request was accepted
    cons: list[z3.BoolRef] = field(default_factory=list)  # constraints on the branch's choice variables


class ReassignEncoding(Encoding):
    """Fields, ghosts, properties and projections shared by the reassignment profiles."""

    profile = ""
    CLUSTER: tuple[Field, ...] = (
        Field("R", SET), Field("AR", SET), Field("RR", SET), Field("I", SET), Field("L", SET),
        Field("LD", LEADER), Field("le", INT), Field("pe", INT),
    )
    CONST: tuple[Field, ...] = (Field("unc", BOOL), Field("rf", COUNT), Field("U", SET))
    GHOST: tuple[Field, ...] = (
        Field("O", SET), Field("hO", BOOL), Field("Q", SET), Field("hQ", BOOL), Field("c", BOOL),
    )
    EXTRA: tuple[Field, ...] = ()  # profile-specific state (kip236: original_replicas)
    ACTION = (Field("k", ENUM), Field("tgt", SET), Field("b", SET))
    LABEL = (
        Field("acc", BOOL), Field("e", BOOL), Field("ec", BOOL), Field("eO", SET), Field("eQ", SET),
        Field("ehQ", BOOL),
    )
    #: the action kinds this profile has (the others are never enabled)
    KINDS: tuple[int, ...] = (REASSIGN, CANCEL, EXPAND, SHRINK, FAIL, RECOVER, FAILOVER)

    def __init__(self, n: int, targets: str = "rf", elections: tuple[str, ...] = (), epochs: bool = True,
                 min_brokers: int = 1, exact_rf: bool = False):
        """An encoding at bit-width `n`: the cluster's brokers are the symbolic prefix U = {1…N}
        for every N with `min_brokers` ≤ N ≤ n, so one proof covers every cluster size up to n.

        `epochs=False` leaves the epochs out: no other field depends on them, so the state
        invariants are proved on the pure bit-vector relation (much faster); epoch
        monotonicity and the differential test use the full one. `exact_rf` makes every
        target (and the initial assignment) have exactly `rf` brokers, as the explorer's
        Bounds do (bounded model checking only: cardinalities are slow to reason about)."""
        super().__init__(n)
        if not 1 <= min_brokers <= n:
            raise ValueError(f"min_brokers: must be in 1..{n}, got {min_brokers}")
        self.min_brokers = min_brokers
        self.exact_rf = exact_rf
        if targets not in TARGET_MODES:
            raise ValueError(f"targets: expected one of {', '.join(TARGET_MODES)}, got {targets!r}")
        self.targets = targets
        self.elections = tuple(elections)
        self.epochs = epochs
        if not epochs:
            self.CLUSTER = tuple(f for f in self.CLUSTER if f.kind != INT)
            self.EXTRA = tuple(f for f in self.EXTRA if f.kind != INT)
        self.STATE = self.CLUSTER + self.EXTRA + self.CONST + self.GHOST

    # -- initial states ------------------------------------------------------------------------
    def init(self, s: Vars) -> z3.BoolRef:
        """Any healthy cluster of N brokers (min_brokers ≤ N ≤ width): replicas R ≠ ∅ all in sync, a
        leader among them, every broker active."""
        at_least = z3.Extract(self.min_brokers - 1, self.min_brokers - 1, s.U) == 1
        return z3.And(
            s.U & (s.U + 1) == 0, at_least,  # U = {1…N}
            s.R != 0, subset(s.R, s.U), s.I == s.R, s.AR == 0, s.RR == 0, onehot(s.LD), subset(s.LD, s.R),
            s.L == s.U, *([s.le == 0, s.pe == 0] if self.epochs else []),
            self.init_extra(s), self.ghost_empty(s),
        )

    def init_explorer(self, s: Vars) -> z3.BoolRef:
        """The explorer's initial state (checker/models/reassign.py): brokers 1…width, replicas 1…rf,
        broker 1 leads."""
        low = z3.BitVecVal(1, self.n)
        rf = z3.ZeroExt(self.n - 8, s.rf) if self.n > 8 else z3.Extract(self.n - 1, 0, s.rf)
        return z3.And(self.init(s), s.U == self.full, s.R == (low << rf) - 1, s.LD == low,
                      z3.UGE(s.rf, 1), z3.ULE(s.rf, self.n))

    def init_extra(self, s: Vars) -> z3.BoolRef:
        return z3.BoolVal(True)

    def ghost_empty(self, s: Vars) -> z3.BoolRef:
        return z3.And(s.O == 0, z3.Not(s.hO), s.Q == 0, z3.Not(s.hQ), z3.Not(s.c))

    # -- the relation ---------------------------------------------------------------------------
    def branches(self, s: Vars, a: Vars, tag: str) -> list[Branch]:
        raise NotImplementedError

    def target_ok(self, s: Vars, tgt: z3.BitVecRef) -> z3.BoolRef:
        """A request's target: non-empty registered brokers.

        In "rf" mode, every target has the replication factor of the initial assignment, as
        the explorer's Bounds (RF-subsets) do. The proofs assume only what that implies for
        two targets in a row: the new target neither strictly contains nor is strictly
        contained in the target still in flight (equal sizes); a weaker hypothesis, so the
        proofs cover more than the explorer's space, without cardinality reasoning.
        `exact_rf` (bounded model checking) asks for the size itself.
        """
        ok = [tgt != 0, subset(tgt, s.U)]
        if self.targets == "rf":
            flight = z3.And(s.hQ, reassigning(s))
            ok.append(z3.Not(z3.And(flight, s.Q != tgt, z3.Or(subset(s.Q, tgt), subset(tgt, s.Q)))))
            if self.exact_rf:
                ok.append(popcount(tgt) == s.rf)
        return z3.And(ok)

    def broker_param(self, a: Vars) -> z3.BoolRef:
        return onehot(a.b)

    def inflight(self, t: Vars) -> z3.BoolRef:
        return reassigning(t)

    def trans(self, s: Vars, a: Vars, t: Vars, lab: Vars, tag: str) -> z3.BoolRef:
        branches = [b for b in self.branches(s, a, tag) if b.kind in self.KINDS]
        enabled = z3.Or([z3.And(a.k == b.kind, b.guard, *b.cons) for b in branches])
        post: dict[str, z3.ExprRef] = {}
        written = self.CLUSTER + self.EXTRA
        for f in written:
            expr = s[f.name]
            for b in reversed(branches):
                if f.name in b.post:
                    expr = z3.If(a.k == b.kind, b.post[f.name], expr)
            post[f.name] = expr
        acc = z3.BoolVal(False)
        for b in reversed(branches):
            acc = z3.If(a.k == b.kind, b.acc, acc)
        post_v = Vars(post)
        ghost, labels = self.ghosts(s, a, post_v, acc)
        eqs = [t[f.name] == post[f.name] for f in written]
        eqs += [t[f.name] == s[f.name] for f in self.CONST]
        eqs += [t[name] == v for name, v in ghost.items()]
        eqs += [lab[name] == v for name, v in labels.items()]
        # unused action parameters are 0, so that an action has one encoding
        uses_tgt = z3.Or([a.k == k for k in (REASSIGN,)])
        uses_b = z3.Or([a.k == k for k in (EXPAND, SHRINK, FAIL, RECOVER)])
        params = [z3.If(uses_tgt, z3.BoolVal(True), a.tgt == 0),
                  z3.If(uses_b, z3.And(self.broker_param(a), subset(a.b, s.U)), a.b == 0)]
        return z3.And(enabled, *params, *eqs)

    # -- ghosts (ReassignmentModel._intent / ghosts_after) ----------------------------------------------
    def ghosts(self, s: Vars, a: Vars, post: Vars, acc: z3.BoolRef) -> tuple[dict, dict]:
        """The admin's intent after the action, and the reassignment that ended on the edge."""
        inflight = self.inflight(post)
        is_re = z3.And(a.k == REASSIGN, acc)
        idle_noop = z3.And(z3.Not(s.hO), z3.Not(inflight), post.R == s.R)
        starts = z3.And(is_re, z3.Not(idle_noop))
        cancels = z3.And(a.k == CANCEL, acc, s.hO)
        o1 = z3.If(starts, z3.If(s.hO, s.O, s.R & ~s.AR), s.O)
        ho1 = z3.Or(starts, s.hO)
        q1 = z3.If(starts, a.tgt, z3.If(cancels, self.zero, s.Q))
        hq1 = z3.If(starts, z3.BoolVal(True), z3.If(cancels, z3.BoolVal(False), s.hQ))
        c1 = z3.If(starts, z3.BoolVal(False), z3.If(cancels, z3.BoolVal(True), s.c))
        return self.settle_ghost(inflight, acc, o1, ho1, q1, hq1, c1)

    def settle_ghost(self, inflight, acc, o1, ho1, q1, hq1, c1) -> tuple[dict, dict]:
        end = z3.And(ho1, z3.Not(inflight))
        ghost = {
            "O": z3.If(end, self.zero, o1), "hO": z3.And(ho1, z3.Not(end)),
            "Q": z3.If(end, self.zero, q1), "hQ": z3.And(hq1, z3.Not(end)), "c": z3.And(c1, z3.Not(end)),
        }
        labels = {
            "acc": acc, "e": end, "ec": z3.And(end, c1), "eO": z3.If(end, o1, self.zero),
            "eQ": z3.If(end, q1, self.zero), "ehQ": z3.And(end, hq1),
        }
        return ghost, labels

    # -- properties ------------------------------------------------------------------------------
    def state_properties(self) -> dict[str, Callable[[Vars], z3.BoolRef]]:
        """The set-level state invariants of spec/reassign_properties.py, over symbolic states."""
        return {
            "target_in_replicas": lambda s: z3.Or(z3.Not(s.hQ), z3.Not(reassigning(s)), subset(s.Q, s.R)),
            "original_in_replicas": lambda s: z3.Or(z3.Not(s.hO), z3.Not(reassigning(s)), subset(s.O, s.R)),
            "adding_removing_disjoint": lambda s: s.AR & s.RR == 0,
            "isr_in_replicas": lambda s: subset(s.I, s.R),
            "leader_in_isr": lambda s: subset(s.LD, s.I),
            "isr_non_empty": lambda s: s.I != 0,
            "replication_factor_bounded": lambda s: z3.Or(
                z3.Not(z3.And(s.hO, s.hQ, reassigning(s))), z3.ULE(popcount(s.R), popcount(s.O | s.Q))
            ),
        }

    def edge_properties(self) -> dict[str, Callable[[Vars, Vars, Vars, Vars], z3.BoolRef]]:
        """The set-level transition properties, over a symbolic step (s, action, t, label)."""

        def unchanged(s: Vars, t: Vars) -> z3.BoolRef:
            return z3.And([t[f.name] == s[f.name] for f in self.CLUSTER + self.EXTRA if f.name not in ("le", "pe")])

        out = {
            "epochs_monotone": lambda s, a, t, l: z3.And(t.le >= s.le, t.pe >= s.pe),
            "completion_reaches_target": lambda s, a, t, l: z3.Or(
                z3.Not(z3.And(l.e, z3.Not(l.ec), l.ehQ)), z3.And(t.R == l.eQ, subset(l.eQ, t.I))
            ),
            "cancel_restores_original_replicas": lambda s, a, t, l: z3.Or(z3.Not(z3.And(l.e, l.ec)), t.R == l.eO),
            "replication_factor_restored": lambda s, a, t, l: z3.Or(
                z3.Not(l.e), popcount(t.R) == popcount(z3.If(z3.Or(l.ec, z3.Not(l.ehQ)), l.eO, l.eQ))
            ),
            "admin_action_keeps_a_leader": lambda s, a, t, l: z3.Or(
                z3.Not(z3.Or([a.k == k for k in ADMIN_KINDS])),
                z3.Not(z3.And(t.LD == 0, s.LD != 0)),
                t.I & t.R & t.L == 0,
            ),
            "cancel_rejected_cleanly": lambda s, a, t, l: z3.Or(a.k != CANCEL, l.acc, unchanged(s, t)),
        }
        if not self.epochs:
            del out["epochs_monotone"]
        return out

    def lemmas(self) -> dict[str, Callable[[Vars], z3.BoolRef]]:
        """Auxiliary invariant candidates (Houdini keeps the inductive ones)."""
        lem = {
            "adding ⊆ replicas": lambda s: subset(s.AR, s.R),
            "removing ⊆ replicas": lambda s: subset(s.RR, s.R),
            "leader ∈ replicas": lambda s: subset(s.LD, s.R),
            "leader active": lambda s: subset(s.LD, s.L),
            "leader one-hot": lambda s: z3.Or(s.LD == 0, onehot(s.LD)),
            "isr active unless leaderless": lambda s: z3.Or(subset(s.I, s.L), s.LD == 0),
            "isr active or one member": lambda s: z3.Or(subset(s.I, s.L), onehot(s.I)),
            "ghost iff reassigning": lambda s: s.hO == reassigning(s),
            "ghost only while reassigning": lambda s: z3.Implies(s.hO, reassigning(s)),
            "idle ghost empty": lambda s: z3.Implies(z3.Not(s.hO), self.ghost_empty(s)),
            "requested only with original": lambda s: z3.Implies(s.hQ, s.hO),
            "original only with requested": lambda s: z3.Implies(s.hO, z3.Or(s.hQ, s.c)),
            "original non-empty": lambda s: z3.Implies(s.hO, s.O != 0),
            "no requested when cancelled": lambda s: z3.Implies(s.c, z3.Not(s.hQ)),
            "absent requested is 0": lambda s: z3.Implies(z3.Not(s.hQ), s.Q == 0),
            "never cancelled in flight": lambda s: z3.Not(s.c),
            "requested non-empty": lambda s: z3.Implies(s.hQ, s.Q != 0),
            "origin non-empty": lambda s: s.R & ~s.AR != 0,
            "target non-empty": lambda s: s.R & ~s.RR != 0,
            "original ∩ adding = ∅": lambda s: s.O & s.AR == 0,
            "original = replicas − adding": lambda s: z3.Implies(s.hO, s.O == s.R & ~s.AR),
            "requested = replicas − removing": lambda s: z3.Implies(z3.And(s.hQ, reassigning(s)), s.Q == s.R & ~s.RR),
            "replicas = original ∪ requested": lambda s: z3.Implies(z3.And(s.hQ, reassigning(s)), s.R == s.O | s.Q),
            "adding = requested − original": lambda s: z3.Implies(s.hQ, s.AR == s.Q & ~s.O),
            "removing = original − requested": lambda s: z3.Implies(s.hQ, s.RR == s.O & ~s.Q),
            "removing ⊆ original": lambda s: z3.Implies(s.hO, subset(s.RR, s.O)),
            "adding ∩ isr = ∅ or complete": lambda s: s.AR & s.I == 0,
            "isr ⊆ replicas": lambda s: subset(s.I, s.R),
        }
        lem["brokers are a prefix"] = lambda s: z3.And(s.U & (s.U + 1) == 0, s.U != 0)
        lem["replicas registered"] = lambda s: subset(s.R, s.U)
        lem["active registered"] = lambda s: subset(s.L, s.U)
        lem["original registered"] = lambda s: subset(s.O, s.U)
        lem["requested registered"] = lambda s: subset(s.Q, s.U)
        return lem

    def candidates(self) -> list[Candidate]:
        out = [Candidate(n, p, True) for n, p in self.state_properties().items()]
        names = {c.name for c in out}
        out += [Candidate(n, p) for n, p in self.lemmas().items() if n not in names]
        return out

    # -- concrete states and actions (for the differential test and counterexamples) -------------
    def project_state(self, ms, rf: int, cluster=None) -> dict[str, Any]:
        """A ModelState (optionally with another cluster, e.g. a Transition's un-renamed `after`) as values."""
        cl = cluster if cluster is not None else ms.cluster
        topic = cl.topics[0]
        p = topic.partitions[0]
        g = ms.ghosts[0]
        v = {
            "R": mask(p.replicas), "AR": mask(p.adding), "RR": mask(p.removing), "I": mask(p.isr),
            "L": mask(b.id for b in cl.brokers if b.registered and b.active), "LD": leader_mask(p.leader),
            "le": p.leader_epoch, "pe": p.partition_epoch, "unc": topic.unclean_leader_election, "rf": rf,
            "U": mask(b.id for b in cl.brokers if b.registered),
            "O": mask(g.original or ()), "hO": g.original is not None, "Q": mask(g.requested or ()),
            "hQ": g.requested is not None, "c": g.cancelled,
        }
        v.update(self.project_extra(cl, p))
        return v

    def project_extra(self, cluster, part) -> dict[str, Any]:
        return {}

    def project_action(self, action) -> dict[str, Any] | None:
        """A spec action as (k, tgt, b), or None if the encoding has no such action."""
        act = getattr(action, "action", action)
        if isinstance(act, A.Reassign):
            return {"k": REASSIGN, "tgt": mask(act.replicas), "b": 0}
        if isinstance(act, A.Cancel):
            return {"k": CANCEL, "tgt": 0, "b": 0}
        if isinstance(act, A.LeaderExpandIsr):
            return {"k": EXPAND, "tgt": 0, "b": mask([act.broker])}
        if isinstance(act, A.LeaderShrinkIsr):
            return {"k": SHRINK, "tgt": 0, "b": mask([act.broker])}
        if isinstance(act, A.BrokerFail):
            return {"k": FAIL, "tgt": 0, "b": mask([act.broker])}
        if isinstance(act, A.BrokerRecover):
            return {"k": RECOVER, "tgt": 0, "b": mask([act.broker])}
        if isinstance(act, A.ControllerFailover):
            return {"k": FAILOVER, "tgt": 0, "b": 0}
        if isinstance(act, A.ControllerStep):
            return {"k": STEP, "tgt": 0, "b": 0}
        if isinstance(act, A.ElectLeaders):
            return {"k": ELECT_PREFERRED if act.election == A.PREFERRED else ELECT_UNCLEAN, "tgt": 0, "b": 0}
        return None

    def project_label(self, label) -> dict[str, Any]:
        act = getattr(label, "action", label)
        acc = False
        if isinstance(act, (A.Reassign, A.Cancel)):
            acc = accepted(label.response, act.topic, act.partition)
        out = {"acc": acc, "e": False, "ec": False, "eO": 0, "eQ": 0, "ehQ": False}
        for e in getattr(label, "endings", ()):
            if e.index == 0:
                out.update(e=True, ec=e.kind == "cancelled", eO=mask(e.original), eQ=mask(e.requested or ()),
                           ehQ=e.requested is not None)
        return out

    def concrete_action(self, values: dict[str, Any]):
        """The spec action of action values (targets as ascending broker lists)."""
        from kreassign.checker.z3.encoding import ids

        k = values["k"]
        b = ids(values["b"])[0] if values.get("b") else None
        if k == REASSIGN:
            return A.Reassign(TOPIC, 0, ids(values["tgt"]))
        if k == CANCEL:
            return A.Cancel(TOPIC, 0)
        if k == EXPAND:
            return A.LeaderExpandIsr(TOPIC, 0, b)
        if k == SHRINK:
            return A.LeaderShrinkIsr(TOPIC, 0, b)
        if k == FAIL:
            return A.BrokerFail(b)
        if k == RECOVER:
            return A.BrokerRecover(b)
        if k == FAILOVER:
            return A.ControllerFailover()
        if k == STEP:
            return A.ControllerStep(TOPIC, 0)
        if k == ELECT_PREFERRED:
            return A.ElectLeaders(TOPIC, 0, A.PREFERRED)
        if k == ELECT_UNCLEAN:
            return A.ElectLeaders(TOPIC, 0, A.UNCLEAN)
        raise ValueError(f"unknown action kind {k}")

    # -- the over-approximation, stated precisely ----------------------------------------------------
    #: epochs a request that only reorders the replica list bumps (sets cannot tell it from a no-op)
    REORDER_EPOCHS: tuple[str, ...] = ("pe",)
    #: action kinds where ZK's OfflineReplica of several replicas keeps "the last" ISR member (order)
    SINGLETON_ISR_KINDS: tuple[int, ...] = ()

    def allowed(self, pre: dict, act: dict, ref: dict, t: Vars, lab: Vars) -> z3.BoolRef:
        """The successors of (pre, act) the encoding may have besides the reference's `ref`.

        Every field equals the reference's, except where the reference follows list order:
        - the leader, when the reference elected a new one (not keeping the current leader,
          not ending leaderless): any active member of the new ISR and replicas;
        - the ISR, when the reference wrote a one-member ISR holding its new leader (an
          unclean election or revert): the one member is the chosen leader; and, for the
          kinds in SINGLETON_ISR_KINDS, when the reference kept one member of the old ISR
          (OfflineReplica of several replicas keeps the last one processed): any member;
        - the epochs in REORDER_EPOCHS, for a request: one more or one less (a request that
          only reorders the replica list writes; sets cannot tell).
        """
        n = self.n
        loose = {"LD", "I"} | (set(self.REORDER_EPOCHS) if act["k"] == REASSIGN else set())
        fixed = [f for f in self.STATE if f.name not in loose]
        conds = bind(fixed, t, ref, n) + bind(self.LABEL, lab, ref["label"], n)
        t_ld, t_i = (bind(self.STATE, t, {k: ref[k]}, n)[0] for k in ("LD", "I"))
        new_leader = ref["LD"] != pre["LD"] and ref["LD"] != 0
        if new_leader:
            conds.append(z3.Or(t_ld, z3.And(onehot(t.LD), t.LD != pre["LD"], subset(t.LD, t.I & t.L & t.R))))
        else:
            conds.append(t_ld)
        isr = [t_i]
        if new_leader and ref["I"] == ref["LD"]:
            isr.append(t.I == t.LD)
        one = ref["I"] != 0 and ref["I"] & (ref["I"] - 1) == 0
        if act["k"] in self.SINGLETON_ISR_KINDS and one and ref["I"] & pre["I"]:
            isr.append(z3.And(onehot(t.I), subset(t.I, self.bv(pre["I"]))))
        conds.append(z3.Or(isr))
        for name in self.REORDER_EPOCHS if act["k"] == REASSIGN else ():
            conds.append(z3.Or([t[name] == ref[name] + d for d in (-1, 0, 1)]))
        return fast_and(conds)

    def _val(self, f: Field, v: Any) -> z3.ExprRef:
        from kreassign.checker.z3.encoding import make_val

        return make_val(f, v, self.n)


def accepted(response: Any, topic: str, index: int) -> bool:
    """Was the request for this partition answered without error? (as the explorer's ghosts read it)"""
    if isinstance(response, AlterPartitionReassignmentsResponse):
        try:
            return response.partition_error(topic, index)[0] == NONE
        except KeyError:
            return False
    return getattr(response, "error_code", NONE) == NONE


# -- KRaft -----------------------------------------------------------------------------------------


class KraftEncoding(ReassignEncoding):
    """KRaft (reference/kraft.py, kraft_change.py) at the release `KAFKA_VERSION`, with ELR off (KIP-966's
    eligible leader replicas are not encoded): every change through PartitionChangeBuilder."""

    profile = "kraft"
    #: the release whose rules are encoded (profiles.reference_model gives the reference the same, with ELR
    #: off; profiles.kraft_encoding(version) is the encoding of another release)
    KAFKA_VERSION = kafka_releases.NEWEST

    def completion_rule(self, r1: z3.BitVecRef, i1: z3.BitVecRef, ar: z3.BitVecRef, rr: z3.BitVecRef) -> z3.BoolRef:
        """The release's completion rule (twin of kraft_change's): from 4.3 adding_in_isr_all_targets_if_shrinking
        (AR ⊆ I', and R' ⊆ I' when |AR| < |RR|, KAFKA-19975), before it all_target_replicas_in_isr (R' ⊆ I')."""
        if kafka_releases.release(self.KAFKA_VERSION).since("4.3"):
            return z3.And(subset(ar, i1), z3.Or(z3.UGE(popcount(ar), popcount(rr)), subset(r1, i1)))
        return subset(r1, i1)

    @property
    def KINDS(self) -> tuple[int, ...]:  # type: ignore[override]
        kinds = (REASSIGN, CANCEL, EXPAND, SHRINK, FAIL, RECOVER, FAILOVER)
        if "PREFERRED" in self.elections:
            kinds += (ELECT_PREFERRED,)
        if "UNCLEAN" in self.elections:
            kinds += (ELECT_UNCLEAN,)
        return kinds

    def build(self, s: Vars, tag: str, *, L=None, r=None, i=None, ar=None, rr=None, unclean=None,
              preferred: bool = False, reorder=None) -> tuple[dict, list]:
        """kraft_change.build_change, set-level: complete if needed, elect, write the record, bump epochs.

        `unclean` is a z3 Bool: fall back to an unclean election (UNCLEAN election type).
        """
        L = s.L if L is None else L
        r = s.R if r is None else r
        i = s.I if i is None else i
        ar = s.AR if ar is None else ar
        rr = s.RR if rr is None else rr
        unclean = z3.BoolVal(False) if unclean is None else unclean
        cons = []
        # 1. complete the reassignment if needed
        moving = z3.Or(ar != 0, rr != 0)
        i1 = z3.If(rr != 0, i & ~rr, i)
        r1 = z3.If(rr != 0, r & ~rr, r)
        done = z3.And(moving, i1 != 0, r1 != 0, self.completion_rule(r1, i1, ar, rr))
        r2, i2 = z3.If(done, r1, r), z3.If(done, i1, i)
        ar2, rr2 = z3.If(done, self.zero, ar), z3.If(done, self.zero, rr)
        # 2. elect over the target ISR and replicas; valid = in the ISR and active
        valid = i2 & L
        cur_ok = z3.And(s.LD != 0, subset(s.LD, valid))
        cand = r2 & valid
        ch = z3.BitVec(f"{tag}.elect", self.n)
        if preferred:
            pool = cand | z3.If(cur_ok, s.LD, self.zero)
            cons.append(choose(ch, pool))
            clean = ch
        else:
            cons.append(choose(ch, cand))
            clean = z3.If(cur_ok, s.LD, ch)
        pool_u = r2 & L
        chu = z3.BitVec(f"{tag}.unclean", self.n)
        cons.append(choose(chu, pool_u))
        use_u = z3.And(clean == 0, unclean, pool_u != 0)
        leader = z3.If(use_u, chu, clean)
        # 3.–5. the record
        lch = leader != s.LD
        leader_rec = z3.Or(lch, z3.Not(subset(s.R, r2)))
        isr = z3.If(z3.And(lch, use_u), leader, z3.If(i2 != 0, i2, s.I))
        rep = z3.If(r2 != 0, r2, s.R)
        changed = z3.Or(leader_rec, isr != s.I, rep != s.R, ar2 != s.AR, rr2 != s.RR)
        if reorder is not None:
            changed = z3.Or(changed, reorder)
        post = {"R": rep, "AR": ar2, "RR": rr2, "I": isr, "LD": leader, "L": L}
        if self.epochs:
            post.update(le=s.le + z3.If(leader_rec, 1, 0), pe=s.pe + z3.If(changed, 1, 0))
        return post, cons

    def branches(self, s: Vars, a: Vars, tag: str) -> list[Branch]:
        out = []
        # Reassign: plan(current = R, target), override the non-empty plan lists, build (ONLINE)
        tgt = a.tgt
        rem, add = s.R & ~tgt, tgt & ~s.R
        reorder = z3.Bool(f"{tag}.reorder")
        post, cons = self.build(
            s, f"{tag}.re", r=s.R | tgt, rr=z3.If(rem != 0, rem, s.RR), ar=z3.If(add != 0, add, s.AR),
            reorder=reorder,
        )
        cons.append(z3.Implies(reorder, subset(tgt, s.R)))
        out.append(Branch(REASSIGN, self.target_ok(s, tgt), post, z3.BoolVal(True), cons))
        # Cancel: revert to R − AR, ISR − AR (one replica if that is empty: unclean, refused unless allowed)
        rep = s.R & ~s.AR
        isr0 = s.I & ~s.AR
        first = z3.BitVec(f"{tag}.first", self.n)
        need_u = isr0 == 0
        ok = z3.And(reassigning(s), z3.Or(z3.Not(need_u), s.unc))
        post, cons = self.build(s, f"{tag}.cx", r=rep, i=z3.If(need_u, first, isr0), ar=self.zero, rr=self.zero,
                                unclean=need_u)
        cons.append(choose(first, rep))
        out.append(Branch(CANCEL, z3.BoolVal(True), self._when(ok, post, s), ok, cons))
        # AlterPartition from the leader: expand / shrink by one broker; ineligible → unchanged
        new_isr = s.I | a.b
        ok = z3.And(subset(s.LD, new_isr), subset(new_isr, s.R & s.L))
        post, cons = self.build(s, f"{tag}.ex", i=new_isr, unclean=s.unc)
        out.append(Branch(EXPAND, z3.And(s.LD != 0, subset(a.b, s.R & ~s.I & s.L)), self._when(ok, post, s), cons=cons))
        new_isr = s.I & ~a.b
        ok = z3.And(subset(s.LD, new_isr), subset(new_isr, s.R & s.L))
        post, cons = self.build(s, f"{tag}.sh", i=new_isr, unclean=s.unc)
        out.append(Branch(SHRINK, z3.And(s.LD != 0, subset(a.b, s.I & ~s.LD)), self._when(ok, post, s), cons=cons))
        # BrokerFail: fence, then a change for the partition if the broker is in its ISR
        L2 = s.L & ~a.b
        post, cons = self.build(s, f"{tag}.fa", L=L2, i=s.I & ~a.b, unclean=s.unc)
        in_isr = s.I & a.b != 0
        post = {k: z3.If(in_isr, v, s[k]) if k != "L" else L2 for k, v in post.items()}
        out.append(Branch(FAIL, subset(a.b, s.L), post, cons=cons))
        # BrokerRecover: unfence, then elect if leaderless
        L2 = s.L | a.b
        post, cons = self.build(s, f"{tag}.rc", L=L2, unclean=s.unc)
        post = {k: z3.If(s.LD == 0, v, s[k]) if k != "L" else L2 for k, v in post.items()}
        out.append(Branch(RECOVER, a.b & s.L == 0, post, cons=cons))
        # ControllerFailover: the metadata log holds everything
        out.append(Branch(FAILOVER, z3.BoolVal(True), {}))
        # ElectLeaders
        # PREFERRED is not needed when the leader is replicas[0]: list order, so either may happen
        needed = z3.Bool(f"{tag}.preferred_needed")
        post, cons = self.build(s, f"{tag}.ep", preferred=True)
        out.append(Branch(ELECT_PREFERRED, z3.BoolVal(True), self._when(needed, post, s), cons=cons))
        post, cons = self.build(s, f"{tag}.eu", unclean=z3.BoolVal(True))
        out.append(Branch(ELECT_UNCLEAN, z3.BoolVal(True), self._when(s.LD == 0, post, s), cons=cons))
        return out

    @staticmethod
    def _when(cond: z3.BoolRef, post: dict, s: Vars) -> dict:
        return {k: z3.If(cond, v, s[k]) for k, v in post.items()}


class Kraft37Encoding(KraftEncoding):
    """KRaft 3.7 (before KAFKA-15665): complete when the adding replicas are in the target ISR."""

    profile = "kraft-3.7"
    #: as Kraft37Profile: 3.7 is older than every release of the matrix, the nearest one (3.9) with 3.7's rule
    KAFKA_VERSION = "3.9.2"

    def completion_rule(self, r1, i1, ar, rr):
        """kraft_change.adding_replicas_in_isr: AR ⊆ I'."""
        return subset(ar, i1)


# -- the ZooKeeper-era controllers (reference/zk_elections.py, zk_era_controller.py) ------------------


class ClassicEncoding(ReassignEncoding):
    """What kip455 and kip236 share: ZK mechanics (elections, OfflineReplica), the leader's ISR writes."""

    REORDER_EPOCHS = ("le", "pe")
    KINDS = (REASSIGN, CANCEL, EXPAND, SHRINK, FAIL, RECOVER, FAILOVER, STEP)
    PART = ("R", "AR", "RR", "I", "LD", "le", "pe")

    # partitions as dicts of terms -------------------------------------------------------------------
    def part(self, s: Vars) -> dict:
        return {k: s[k] for k in self.PART + tuple(f.name for f in self.EXTRA) if k in s}

    def ite(self, cond: z3.BoolRef, p: dict, q: dict) -> dict:
        return {k: z3.If(cond, p[k], q[k]) for k in p}

    def bump(self, p: dict, le: Any = 1, pe: Any = 1) -> dict:
        """Epochs + le / + pe (nothing when the encoding has no epochs)."""
        if not self.epochs:
            return dict(p)
        return {**p, "le": p["le"] + le, "pe": p["pe"] + pe}

    def write_leader_and_isr(self, p: dict, leader, isr) -> dict:
        """zk_elections.write_leader_and_isr: every ZK write bumps both epochs."""
        return self.bump({**p, "LD": leader, "I": isr})

    def leader_isr_write(self, p: dict, isr) -> dict:
        """The leader's own ISR write: the znode version only."""
        return self.bump({**p, "I": isr}, le=0)

    def remove_replica(self, p: dict, b) -> dict:
        """OfflineReplica of one replica b (one-hot): leaves the ISR unless it is the last member;
        a leader b becomes -1; a write only if b is in the ISR."""
        in_isr = p["I"] & b != 0
        new = self.write_leader_and_isr(p, z3.If(p["LD"] == b, self.zero, p["LD"]),
                                        z3.If(onehot(p["I"]), p["I"], p["I"] & ~b))
        return self.ite(in_isr, new, p)

    def remove_replicas(self, p: dict, x, tag: str, cons: list) -> dict:
        """OfflineReplica of the replicas x, one after the other, set-level: the ISR loses x, unless that
        would empty it — then one member of the ISR stays (the last processed: list order, so any
        member); a leader in x and in the ISR becomes -1; one write per ISR member in x."""
        hit = p["I"] & x
        keep = z3.BitVec(f"{tag}.kept", self.n)
        cons.append(choose(keep, hit))
        isr = z3.If(subset(p["I"], x), keep, p["I"] & ~x)
        leader = z3.If(z3.And(p["LD"] != 0, subset(p["LD"], hit)), self.zero, p["LD"])
        new = {**p, "I": isr, "LD": leader}
        if self.epochs:
            k = popcount_int(hit)
            new = self.bump(new, le=k, pe=k)
        return self.ite(hit != 0, new, p)

    def offline_election(self, p: dict, L, assignment, unclean, tag: str, cons: list):
        """OfflinePartitionLeaderElection: (found, leader, isr): the first live in-sync replica (any, set-level)
        with the live ISR, else (unclean) the first live replica with itself as the ISR."""
        clean = assignment & L & p["I"]
        dirty = assignment & L
        ch = z3.BitVec(f"{tag}.offline", self.n)
        cons.append(choose(ch, z3.If(clean != 0, clean, z3.If(unclean, dirty, self.zero))))
        found = z3.Or(clean != 0, z3.And(unclean, dirty != 0))
        isr = z3.If(clean != 0, p["I"] & L, ch)
        return found, ch, isr

    def reassign_election(self, p: dict, L, target, tag: str, cons: list):
        """ReassignPartitionLeaderElection: (found, leader): a live in-sync target replica, no unclean fallback."""
        cand = target & L & p["I"]
        ch = z3.BitVec(f"{tag}.reassign", self.n)
        cons.append(choose(ch, cand))
        return cand != 0, ch

    def settle(self, p: dict) -> dict:
        return p

    # the shared actions ------------------------------------------------------------------------------
    def common_branches(self, s: Vars, a: Vars, tag: str) -> list[Branch]:
        P = self.part(s)
        out = []
        # the leader's ISR changes (zk_era_controller.leader_expand_isr / leader_shrink_isr)
        out.append(Branch(EXPAND, z3.And(s.LD != 0, subset(a.b, s.R & ~s.I & s.L)),
                          self.settle(self.leader_isr_write(P, s.I | a.b))))
        out.append(Branch(SHRINK, z3.And(s.LD != 0, subset(a.b, s.I & ~s.LD)),
                          self.settle(self.leader_isr_write(P, s.I & ~a.b))))
        # BrokerFail: an offline election if it led, then OfflineReplica
        cons: list = []
        L2 = s.L & ~a.b
        found, leader, isr = self.offline_election(P, L2, s.R, s.unc, f"{tag}.fail", cons)
        led = s.LD == a.b
        elected = self.ite(found, self.write_leader_and_isr(P, leader, isr),
                           self.ite(s.I & a.b == 0, self.write_leader_and_isr(P, self.zero, s.I), P))
        p1 = self.ite(led, elected, P)
        p2 = self.settle(self.remove_replica(p1, a.b))
        out.append(Branch(FAIL, subset(a.b, s.L), {**p2, "L": L2}, cons=cons))
        # BrokerRecover: an offline election for a leaderless partition
        cons = []
        L2 = s.L | a.b
        found, leader, isr = self.offline_election(P, L2, s.R, s.unc, f"{tag}.recover", cons)
        p1 = self.ite(z3.And(s.LD == 0, found), self.settle(self.write_leader_and_isr(P, leader, isr)), P)
        out.append(Branch(RECOVER, a.b & s.L == 0, {**p1, "L": L2}, cons=cons))
        # ControllerFailover: no memory apart from the persisted fields
        out.append(Branch(FAILOVER, z3.BoolVal(True), {}))
        return out


class Kip455Encoding(ClassicEncoding):
    """KIP-455 as the seed describes it (reference/kip455.py)."""

    profile = "kip455"

    def settle(self, p: dict) -> dict:
        """pick_up: adding replicas in the ISR leave AR."""
        return {**p, "AR": p["AR"] & ~p["I"]}

    def cancel(self, p: dict) -> dict:
        """Rule 4: R = R − AR, AR = RR = [] (LeaderAndIsr)."""
        return self.bump({**p, "R": p["R"] & ~p["AR"], "AR": self.zero, "RR": self.zero})

    def branches(self, s: Vars, a: Vars, tag: str) -> list[Branch]:
        P = self.part(s)
        out = self.common_branches(s, a, tag)
        moving = reassigning(s)
        # Reassign: cancel an ongoing one first, then start (R = RR ++ T); nothing moves: unchanged,
        # unless the list is only reordered (a write)
        p1 = self.ite(moving, self.cancel(P), P)
        rem, add = p1["R"] & ~a.tgt, a.tgt & ~p1["R"]
        reorder = z3.Bool(f"{tag}.reorder")
        still = z3.And(rem == 0, add == 0)
        started = self.bump({**p1, "R": p1["R"] | a.tgt, "AR": add, "RR": rem})
        p2 = self.settle(self.ite(z3.And(still, z3.Not(reorder)), p1, started))
        out.append(Branch(REASSIGN, self.target_ok(s, a.tgt), p2, z3.BoolVal(True), [z3.Implies(reorder, still)]))
        # Cancel
        out.append(Branch(CANCEL, z3.BoolVal(True), self.ite(moving, self.settle(self.cancel(P)), P), moving))
        # ControllerStep: complete (AR = [], RR ≠ []) or retire (leader outside R, or ISR beyond R)
        complete = self.settle(self.bump({**P, "R": s.R & ~s.RR, "RR": self.zero}))
        cons: list = []
        found, elected = self.reassign_election(P, s.L, s.R, f"{tag}.retire", cons)
        leader = z3.If(z3.And(s.LD != 0, s.LD & s.R == 0), z3.If(found, elected, self.zero), s.LD)
        isr = z3.If(s.I & s.R != 0, s.I & s.R, s.I)
        retire_changes = z3.Or(leader != s.LD, isr != s.I)
        retire = self.settle(self.write_leader_and_isr(P, leader, isr))
        is_complete = z3.And(s.AR == 0, s.RR != 0)
        out.append(Branch(STEP, z3.Or(is_complete, retire_changes), self.ite(is_complete, complete, retire),
                          cons=cons))
        return out


class Kip236Encoding(ClassicEncoding):
    """KIP-236 as the seed describes it (reference/kip236.py), on the explorer's requests route.

    `OR`/`hOR` is the recorded original_replicas. The legacy znode route, the cancel marker and
    extra reassignments are not encoded (the explorer's bounds switch them off: znode = false).
    The drop rule keeps the first len(original) of [leader] ++ ISR ++ OSR: the encoding keeps the
    leader, ISR members before the others, and — in `exact_rf` mode (differential test, bounded
    model checking) — exactly min(len(original), |existing|) of them; the proofs leave that count
    free, a weaker relation that contains the exact one.
    """

    profile = "kip236"
    EXTRA = (Field("OR", SET), Field("hOR", BOOL))
    SINGLETON_ISR_KINDS = (REASSIGN, CANCEL, STEP)

    def init_extra(self, s: Vars) -> z3.BoolRef:
        return z3.And(s.OR == 0, z3.Not(s.hOR))

    def project_extra(self, cluster, part) -> dict[str, Any]:
        return {"OR": mask(part.original or ()), "hOR": part.original is not None}

    def lemmas(self) -> dict[str, Callable[[Vars], z3.BoolRef]]:
        lem = super().lemmas()
        lem.update({
            "recorded original iff reassigning": lambda s: s.hOR == reassigning(s),
            "absent recorded original is 0": lambda s: z3.Implies(z3.Not(s.hOR), s.OR == 0),
            "recorded original non-empty": lambda s: z3.Implies(s.hOR, s.OR != 0),
            "recorded original = ghost original": lambda s: z3.Implies(s.hOR, s.OR == s.O),
            "adding = replicas − recorded original": lambda s: z3.Implies(s.hOR, s.AR == s.R & ~s.OR),
            "requested = replicas − removing": lambda s: z3.Implies(z3.And(s.hQ, reassigning(s)), s.Q == s.R & ~s.RR),
            "recorded original registered": lambda s: subset(s.OR, s.U),
        })
        return lem

    def original_of(self, s: Vars):
        """part.original, or part.origin (R − AR) when none was recorded."""
        return z3.If(s.hOR, s.OR, s.R & ~s.AR)

    def branches(self, s: Vars, a: Vars, tag: str) -> list[Branch]:
        P = self.part(s)
        out = self.common_branches(s, a, tag)
        moving = reassigning(s)
        tgt = a.tgt
        # Reassign (submit through the requests route)
        cons: list = []
        orig = z3.If(moving, self.original_of(s), s.R)
        ok = orig != 0  # top = len(original) >= min.insync.replicas (1)
        keep = z3.BitVec(f"{tag}.keep", self.n)
        existing = s.R | s.I | s.LD
        isr_first = s.I & ~s.LD
        osr = s.R & ~s.I & ~s.LD
        cons += [subset(keep, existing), subset(s.LD, keep),
                 z3.Implies(keep & osr != 0, subset(isr_first, keep)), z3.Implies(existing != 0, keep != 0)]
        if self.exact_rf:
            top = popcount(orig)
            size = popcount(existing)
            cons.append(popcount(keep) == z3.If(z3.ULE(top, size), top, size))
        drop = s.R & ~keep
        dropped = self.remove_replicas(P, drop, f"{tag}.drop", cons)
        dropped = {**dropped, "R": s.R & ~drop}
        p1 = self.ite(z3.And(moving, drop != 0), dropped, P)
        full = tgt | p1["R"]
        adding, removing = full & ~orig, full & ~tgt
        plain = z3.And(adding == 0, removing == 0)
        new = {**p1, "R": z3.If(plain, tgt, full), "AR": z3.If(plain, self.zero, adding),
               "RR": z3.If(plain, self.zero, removing), "OR": z3.If(plain, self.zero, orig), "hOR": z3.Not(plain)}
        same = z3.And([new[k] == p1[k] for k in ("R", "AR", "RR", "OR", "hOR")])
        reorder = z3.Bool(f"{tag}.reorder")
        cons.append(z3.Implies(reorder, same))
        p2 = self.ite(z3.And(same, z3.Not(reorder)), p1, self.bump(new))
        out.append(Branch(REASSIGN, self.target_ok(s, tgt), self.ite(ok, p2, P), ok, cons))
        # Cancel = rollback to the recorded original, in one step
        cons = []
        rolled = {**P, "R": orig, "AR": self.zero, "RR": self.zero, "OR": self.zero, "hOR": z3.BoolVal(False)}
        found, elected = self.reassign_election(P, s.L, orig, f"{tag}.rollback", cons)
        outside = s.LD & orig == 0  # includes no leader
        rolled = self.ite(z3.And(outside, found), self.write_leader_and_isr(rolled, elected, s.I), self.bump(rolled))
        rolled = self.remove_replicas(rolled, s.R & ~orig, f"{tag}.rollback", cons)
        out.append(Branch(CANCEL, z3.BoolVal(True), self.ite(moving, rolled, P), moving, cons))
        # ControllerStep: complete when the target is in the ISR (the ZK controller's phase B, one step)
        cons = []
        target = s.R & ~s.RR
        done = {**P, "R": target, "AR": self.zero, "RR": self.zero, "OR": self.zero, "hOR": z3.BoolVal(False)}
        found, elected = self.reassign_election(P, s.L, target, f"{tag}.complete", cons)
        move = z3.Or(s.LD & target == 0, s.LD & s.L == 0)
        done = self.ite(move, self.ite(found, self.write_leader_and_isr(done, elected, s.I), done), self.bump(done))
        done = self.remove_replicas(done, s.R & ~target, f"{tag}.complete", cons)
        out.append(Branch(STEP, z3.And(moving, subset(target, s.I)), done, cons=cons))
        return out


__all__ = [
    "ADMIN_KINDS",
    "CANCEL",
    "ELECT_PREFERRED",
    "ELECT_UNCLEAN",
    "EXPAND",
    "FAIL",
    "FAILOVER",
    "KIND_NAMES",
    "REASSIGN",
    "RECOVER",
    "SHRINK",
    "STEP",
    "TARGET_MODES",
    "Branch",
    "Kraft37Encoding",
    "KraftEncoding",
    "ReassignEncoding",
    "accepted",
    "lowest",
    "popcount_int",
    "reassigning",
]
