"""The `zk` profile (ZooKeeper-based KafkaController) as a z3 transition relation over broker sets.

Beside the partition as ZooKeeper holds it (`R`, `AR`, `RR`, `I`, `LD`, epochs), the
controller's memory of the assignment (`MR`, `MAR`, `MRR`), partitionsBeingReassigned
(`BR`/`hBR`: the target recorded for the partition) and the next step of
onPartitionReassignment (`PS`: U, A1, A2, B1 … B7, or none) — reference/zk_controller.py,
one ControllerStep per step. While a step is pending only the steps and a failover are
enabled (the controller handles one event at a time, reference/zk.py). The legacy
/admin/reassign_partitions route is not encoded (the explorer's bounds: znode = false), so
that znode stays empty; the controller is always active (a failover elects the next one
at once).

Order: OfflineReplica of several replicas keeps the last ISR member processed — any member
here, except at controller start-up, where dead replicas go offline in ascending broker id
order, so the member kept is the highest id (encoded exactly); elections take any valid
candidate where the reference takes the first in assignment order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3
from kreassign.checker.z3.encoding import BOOL, ENUM, SET, Field, Vars, mask, onehot, subset
from kreassign.checker.z3.reassign import (
    CANCEL,
    EXPAND,
    FAIL,
    FAILOVER,
    REASSIGN,
    RECOVER,
    SHRINK,
    STEP,
    Branch,
    ClassicEncoding,
    reassigning,
)

NONE, U, A1, A2, B1, B2, B3, B4, B5, B6, B7 = range(11)
STEP_NAMES = {U: "U", A1: "A1", A2: "A2", B1: "B1", B2: "B2", B3: "B3", B4: "B4", B5: "B5", B6: "B6", B7: "B7"}
STEP_OF = {v: k for k, v in STEP_NAMES.items()}


class ZkEncoding(ClassicEncoding):
    """KafkaController with ZooKeeper, step by step (reference/zk.py, zk_controller.py)."""

    profile = "zk"
    EXTRA = (Field("MR", SET), Field("MAR", SET), Field("MRR", SET), Field("BR", SET), Field("hBR", BOOL),
             Field("PS", ENUM))
    SINGLETON_ISR_KINDS = (STEP,)
    REORDER_EPOCHS = ()

    def ps(self, k: int) -> z3.BitVecRef:
        return z3.BitVecVal(k, 5)

    def init_extra(self, s: Vars) -> z3.BoolRef:
        return z3.And(s.MR == s.R, s.MAR == 0, s.MRR == 0, s.BR == 0, z3.Not(s.hBR), s.PS == self.ps(NONE))

    def project_extra(self, cluster, part) -> dict[str, Any]:
        zk = cluster.zk
        if zk is None or not zk.active or zk.admin_znode:
            raise ValueError("the zk encoding needs an active controller and an empty /admin/reassign_partitions")
        mem = next(((r, ad, rm) for t, i, r, ad, rm in zk.memory if (t, i) == ("t", 0)), ((), (), ()))
        target = next((r for t, i, r in zk.being_reassigned if (t, i) == ("t", 0)), None)
        step = next((st for t, i, st in zk.pending if (t, i) == ("t", 0)), None)
        return {"MR": mask(mem[0]), "MAR": mask(mem[1]), "MRR": mask(mem[2]), "BR": mask(target or ()),
                "hBR": target is not None, "PS": NONE if step is None else STEP_OF[step]}

    def inflight(self, t: Vars) -> z3.BoolRef:
        """reassign_model.in_flight: ZooKeeper, partitionsBeingReassigned, pending steps or memory."""
        return z3.Or(reassigning(t), t.hBR, t.PS != self.ps(NONE), t.MAR != 0, t.MRR != 0)

    # -- ghosts: the request takes effect at step U (Profile.deferred_requests) ----------------------------
    def ghosts(self, s: Vars, a: Vars, post: Vars, acc: z3.BoolRef) -> tuple[dict, dict]:
        starts_u = z3.And(a.k == STEP, s.PS == self.ps(U), s.hBR)
        original = z3.If(s.hO, s.O, s.R & ~s.AR)
        back = s.BR == original  # reassignTo(origin): zk's cancel
        upd = z3.And(starts_u, z3.Or(z3.Not(back), s.hO))
        o1 = z3.If(upd, original, s.O)
        ho1 = z3.Or(upd, s.hO)
        q1 = z3.If(upd, z3.If(back, self.zero, s.BR), s.Q)
        hq1 = z3.If(upd, z3.Not(back), s.hQ)
        c1 = z3.If(upd, back, s.c)
        return self.settle_ghost(self.inflight(post), acc, o1, ho1, q1, hq1, c1)

    # -- helpers --------------------------------------------------------------------------------------------
    def schedule(self, p: dict, target) -> dict:
        """Record the target in partitionsBeingReassigned and queue step U."""
        return {**p, "BR": target, "hBR": z3.BoolVal(True), "PS": self.ps(U)}

    def maybe_complete(self, p: dict) -> dict:
        """maybeCompleteReassignment after an ISR change: rerun onPartitionReassignment if complete."""
        mem_moving = z3.Or(p["MAR"] != 0, p["MRR"] != 0)
        target = p["MR"] & ~p["MRR"]
        complete = z3.Or(z3.Not(mem_moving), subset(target, p["I"]))
        return self.ite(z3.And(p["hBR"], complete), self.schedule(p, target), p)

    def elect_offline(self, p: dict, L, unclean, tag: str, cons: list) -> dict:
        """elect_offline_partitions: without a live leader, an offline election over the memory's replicas."""
        live_leader = z3.And(p["LD"] != 0, p["LD"] & L != 0)
        found, leader, isr = self.offline_election(p, L, p["MR"], unclean, tag, cons)
        return self.ite(z3.And(z3.Not(live_leader), found), self.write_leader_and_isr(p, leader, isr), p)

    def highest(self, x, tag: str, cons: list):
        """The highest broker id of x (0 if empty), exactly."""
        h = z3.BitVec(f"{tag}.highest", self.n)
        cons.append(z3.If(x != 0, z3.And(onehot(h), subset(h, x), x & ~((h << 1) - 1) == 0), h == 0))
        return h

    # -- the relation ---------------------------------------------------------------------------------------
    def branches(self, s: Vars, a: Vars, tag: str) -> list[Branch]:
        P = self.part(s)
        idle = s.PS == self.ps(NONE)
        out = []
        origin = s.MR & ~s.MAR
        mem_moving = z3.Or(s.MAR != 0, s.MRR != 0)
        # AlterPartitionReassignments: validate the adding replicas (live), record, queue U
        ok = subset(a.tgt & ~origin, s.L)
        out.append(Branch(REASSIGN, z3.And(idle, self.target_ok(s, a.tgt)), self.ite(ok, self.schedule(P, a.tgt), P),
                          ok))
        # Cancel = reassignTo(origin) when the memory is reassigning, else 85
        out.append(Branch(CANCEL, idle, self.ite(mem_moving, self.schedule(P, origin), P), mem_moving))
        # ISR changes from the leader (AlterPartition), then the completion check
        for kind, new_isr, guard in (
            (EXPAND, s.I | a.b, subset(a.b, s.R & ~s.I & s.L)),
            (SHRINK, s.I & ~a.b, subset(a.b, s.I & ~s.LD)),
        ):
            ok = z3.And(new_isr != 0, subset(s.LD, new_isr), subset(new_isr, s.MR), subset(new_isr, s.L))
            written = self.maybe_complete(self.leader_isr_write(P, new_isr))
            out.append(Branch(kind, z3.And(idle, s.LD != 0, guard), self.ite(ok, written, P)))
        # BrokerFail: elect where no live leader, then OfflineReplica if it is in the memory's replicas
        cons: list = []
        L2 = s.L & ~a.b
        p1 = self.elect_offline(P, L2, s.unc, f"{tag}.fail", cons)
        p2 = self.ite(s.MR & a.b != 0, self.remove_replica(p1, a.b), p1)
        out.append(Branch(FAIL, z3.And(idle, subset(a.b, s.L)), {**p2, "L": L2}, cons=cons))
        # BrokerRecover: elect where no live leader, resume a reassignment whose target holds it
        cons = []
        L2 = s.L | a.b
        p1 = self.elect_offline(P, L2, s.unc, f"{tag}.recover", cons)
        target = s.MR & ~s.MRR
        p2 = self.ite(z3.And(s.hBR, target & a.b != 0), self.schedule(p1, target), p1)
        out.append(Branch(RECOVER, z3.And(idle, a.b & s.L == 0), {**p2, "L": L2}, cons=cons))
        out.append(Branch(FAILOVER, z3.BoolVal(True), *self.failover(s, P, tag)))
        out.append(Branch(STEP, z3.Not(idle), *self.step(s, P, tag)))
        return out

    def failover(self, s: Vars, P: dict, tag: str) -> tuple[dict, z3.BoolRef, list]:
        """controller_startup: memory from ZooKeeper, dead replicas offline (ascending ids), offline
        elections, then every partition reassigning in ZooKeeper is resumed at U."""
        cons: list = []
        p = {**P, "MR": s.R, "MAR": s.AR, "MRR": s.RR, "BR": self.zero, "hBR": z3.BoolVal(False),
             "PS": self.ps(NONE)}
        dead = s.R & ~s.L
        hit = p["I"] & dead
        kept = self.highest(hit, f"{tag}.startup", cons)
        isr = z3.If(subset(p["I"], dead), kept, p["I"] & ~dead)
        leader = z3.If(z3.And(p["LD"] != 0, subset(p["LD"], hit)), self.zero, p["LD"])
        offline = {**p, "I": isr, "LD": leader}
        if self.epochs:
            from kreassign.checker.z3.encoding import popcount_int

            k = popcount_int(hit)
            offline = self.bump(offline, le=k, pe=k)
        p = self.ite(hit != 0, offline, p)
        p = self.elect_offline(p, s.L, s.unc, f"{tag}.startup", cons)
        p = self.ite(reassigning(s), self.schedule(p, s.R & ~s.RR), p)
        return p, z3.BoolVal(False), cons

    def step(self, s: Vars, P: dict, tag: str) -> tuple[dict, z3.BoolRef, list]:
        """The next step of onPartitionReassignment (zk_controller.STEPS)."""
        cons: list = []
        ps = s.PS
        # U: the new assignment (memory as is when it already reassigns to this target)
        origin = s.MR & ~s.MAR
        tgt = s.BR
        same = z3.And(z3.Or(s.MAR != 0, s.MRR != 0), s.MR & ~s.MRR == tgt)
        n_r = z3.If(same, s.MR, tgt | origin)
        n_ar = z3.If(same, s.MAR, tgt & ~origin)
        n_rr = z3.If(same, s.MRR, origin & ~tgt)
        changed = z3.Or(n_r != s.MR, n_ar != s.MAR, n_rr != s.MRR)
        written = {**P, "R": n_r, "AR": n_ar, "RR": n_rr, "MR": n_r, "MAR": n_ar, "MRR": n_rr}
        stopped = self.remove_replicas(written, s.MR & ~n_r, f"{tag}.u", cons)
        pu = self.ite(changed, stopped, P)
        complete = z3.Or(z3.And(n_ar == 0, n_rr == 0), subset(n_r & ~n_rr, pu["I"]))
        pu = {**pu, "PS": z3.If(complete, self.ps(B1), self.ps(A1))}
        # A1: leader epoch + 1; A2: the run ends; B1: nothing modelled
        pa1 = {**self.write_leader_and_isr(P, s.LD, s.I), "PS": self.ps(A2)}
        pa2 = {**P, "PS": self.ps(NONE)}
        pb1 = {**P, "PS": self.ps(B2)}
        # B2: memory = the plain target
        pb2 = {**P, "MR": s.MR & ~s.MRR, "MAR": self.zero, "MRR": self.zero, "PS": self.ps(B3)}
        # B3: move the leader into the target if needed (reassign election, no unclean), else bump
        target = s.MR
        found, elected = self.reassign_election(P, s.L, target, f"{tag}.b3", cons)
        move = z3.Or(s.LD & target == 0, s.LD & s.L == 0)
        pb3 = self.ite(move, self.ite(found, self.write_leader_and_isr(P, elected, s.I), P),
                       self.write_leader_and_isr(P, s.LD, s.I))
        pb3 = {**pb3, "PS": self.ps(B4)}
        # B4: the removing replicas go OfflineReplica; B5: deleted (logs only)
        pb4 = {**self.remove_replicas(P, s.RR, f"{tag}.b4", cons), "PS": self.ps(B5)}
        pb5 = {**P, "PS": self.ps(B6)}
        # B6: ZooKeeper = the memory's (plain) target; B7: the reassignment is forgotten, the run ends
        pb6 = {**P, "R": s.MR, "AR": self.zero, "RR": self.zero, "PS": self.ps(B7)}
        pb7 = {**P, "BR": self.zero, "hBR": z3.BoolVal(False), "PS": self.ps(NONE)}
        post = pb7
        for k, pk in ((B6, pb6), (B5, pb5), (B4, pb4), (B3, pb3), (B2, pb2), (B1, pb1), (A2, pa2), (A1, pa1),
                      (U, pu)):
            post = self.ite(ps == self.ps(k), pk, post)
        guard = z3.Or(ps != self.ps(U), s.hBR)  # U needs a recorded target
        cons.append(guard)
        return post, z3.BoolVal(False), cons

    def lemmas(self) -> dict[str, Callable[[Vars], z3.BoolRef]]:
        lem = super().lemmas()
        for name in ("ghost iff reassigning", "ghost only while reassigning", "original = replicas − adding",
                     "requested = replicas − removing", "replicas = original ∪ requested",
                     "adding = requested − original", "removing = original − requested"):
            lem.pop(name, None)
        ps = lambda s, *ks: z3.Or([s.PS == self.ps(k) for k in ks])
        lem.update({
            "step in range": lambda s: z3.ULE(s.PS, self.ps(B7)),
            "memory = zookeeper when idle or in phase A": lambda s: z3.Implies(
                ps(s, NONE, U, A1, A2, B1), z3.And(s.MR == s.R, s.MAR == s.AR, s.MRR == s.RR)),
            "memory plain target in B3–B7": lambda s: z3.Implies(
                ps(s, B3, B4, B5, B6, B7), z3.And(s.MAR == 0, s.MRR == 0)),
            "memory target = zookeeper target in B3–B6": lambda s: z3.Implies(
                ps(s, B3, B4, B5, B6), z3.And(s.MR == s.R & ~s.RR, s.RR & s.R == s.RR)),
            "zookeeper plain after B6": lambda s: z3.Implies(ps(s, B7), z3.And(s.R == s.MR, s.AR == 0, s.RR == 0)),
            "memory target in B2": lambda s: z3.Implies(ps(s, B2), z3.And(s.MR == s.R, s.MAR == s.AR,
                                                                         s.MRR == s.RR)),
            "recorded target while stepping": lambda s: z3.Implies(z3.Not(ps(s, NONE)), s.hBR),
            "recorded target = memory target after U": lambda s: z3.Implies(
                ps(s, A1, A2, B1, B2), z3.And(s.hBR, s.BR == s.MR & ~s.MRR)),
            "recorded target = memory after B2": lambda s: z3.Implies(ps(s, B3, B4, B5, B6, B7), s.BR == s.MR),
            "recorded target non-empty": lambda s: z3.Implies(s.hBR, s.BR != 0),
            "absent target is 0": lambda s: z3.Implies(z3.Not(s.hBR), s.BR == 0),
            "complete in phase B": lambda s: z3.Implies(ps(s, B1, B2), subset(s.R & ~s.RR, s.I)),
            "memory adding ⊆ memory replicas": lambda s: subset(s.MAR, s.MR),
            "memory removing ⊆ memory replicas": lambda s: subset(s.MRR, s.MR),
            "memory adding ∩ removing = ∅": lambda s: s.MAR & s.MRR == 0,
            "memory origin non-empty": lambda s: s.MR & ~s.MAR != 0,
            "memory target non-empty": lambda s: s.MR & ~s.MRR != 0,
            "memory registered": lambda s: subset(s.MR, s.U),
            "target registered": lambda s: subset(s.BR, s.U),
            "zk adding = target − origin": lambda s: z3.Implies(reassigning(s), s.AR & s.RR == 0),
            "ghost while in flight": lambda s: z3.Implies(z3.Or(reassigning(s), s.MAR != 0, s.MRR != 0), s.hO),
            "ghost original = zookeeper origin": lambda s: z3.Implies(
                z3.And(s.hO, z3.Or(reassigning(s), ps(s, B2, B3, B4, B5, B6, B7))), s.O == s.R & ~s.AR),
            "ghost requested = recorded target": lambda s: z3.Implies(
                z3.And(s.hQ, z3.Not(ps(s, NONE, U))), s.Q == s.BR),
            "ghost requested = zookeeper target": lambda s: z3.Implies(z3.And(s.hQ, reassigning(s)),
                                                                       s.Q == s.R & ~s.RR),
            "cancelled: target = original": lambda s: z3.Implies(
                z3.And(s.c, z3.Not(ps(s, NONE, U))), s.BR == s.O),
            "cancelled ghost has no requested": lambda s: z3.Implies(s.c, z3.Not(s.hQ)),
            "idle means no ghost": lambda s: z3.Implies(z3.Not(self.inflight(s)), z3.Not(s.hO)),
            "ghost only in flight": lambda s: z3.Implies(s.hO, self.inflight(s)),
            "requested or cancelled": lambda s: z3.Implies(s.hO, z3.Or(s.hQ, s.c)),
            # the reassignment's life: ZooKeeper reassigning from the original until B6 (a completion)
            # or back at the original from step U on (a cancel)
            "zookeeper origin = original": lambda s: z3.Implies(
                z3.And(s.hO, z3.Or(ps(s, NONE, U, A1, A2), z3.And(z3.Not(s.c), ps(s, B1, B2, B3, B4, B5, B6)))),
                z3.And(reassigning(s), s.O == s.R & ~s.AR)),
            "cancelled: zookeeper back at the original": lambda s: z3.Implies(
                z3.And(s.hO, s.c, ps(s, B1, B2, B3, B4, B5, B6, B7)), z3.And(s.R == s.O, s.AR == 0, s.RR == 0)),
            "completed: zookeeper at the target": lambda s: z3.Implies(
                z3.And(s.hO, z3.Not(s.c), ps(s, B7)), z3.And(s.hQ, s.R == s.Q, s.AR == 0, s.RR == 0)),
            "isr outside the replicas only alone": lambda s: z3.Implies(s.I & ~s.R != 0, onehot(s.I)),
            "removing replicas out of the isr after B4": lambda s: z3.Implies(
                ps(s, B5, B6), z3.Or(s.I & s.RR == 0, onehot(s.I))),
            "cancelled only in phase B": lambda s: z3.Implies(s.c, z3.And(s.hO, ps(s, B1, B2, B3, B4, B5, B6, B7))),
            "in flight: replicas = original ∪ requested": lambda s: z3.Implies(
                z3.And(s.hQ, reassigning(s)), s.R == s.O | s.Q),
            "target in sync in phase B": lambda s: z3.Implies(
                z3.And(s.hQ, z3.Not(s.c), ps(s, B1, B2, B3, B4, B5, B6, B7)), subset(s.Q, s.I)),
        })
        return lem



__all__ = ["STEP_NAMES", "ZkEncoding"]
