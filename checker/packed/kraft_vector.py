"""The kraft kernel's answers for many local situations at once, in numpy.

`KraftKernel` (checker/packed/kraft_kernel.py) answers one local situation at a time, in
Python: ~6 µs per action. `VectorKernel` answers the budget groups 0-3 of the packed
table — ISR changes and unfencing, Reassign, Cancel, fencing — for a whole batch of
situations with array operations, on partitions encoded as

    replicas, ISR:       int64 [n, 6], broker ids in order, 0 after the end
    adding, removing:    bit masks (KRaft's plan sorts them by id, so a mask keeps them whole)
    leader:              id or -1;  the ghost: an index into the ghosts met so far

and interns each new (partition, ghost) by a 63-bit code of those fields. It writes a
third time what the scalar kernel writes a second — the enabled actions and their ranks,
validateManualPartitionAssignment and the plan (PartitionReassignmentReplicas), the
revert (PartitionReassignmentRevert), AlterPartition's validation, the fence / unfence
loops, `kraft_change.build_change` with `apply_record` (`partition_change`), the ghost
update — each named in checker/packed/kernel_scope.py `RESTATED`, with a `# twin` comment
at both ends. The properties and finding signatures it does not restate: it evaluates the
array form spec/ writes next to each per-partition definition (spec/per_partition.py) over
the views spec/partition_masks.py declares (`StateView`, `EdgeView` here), one form per
property for every kind of edge, asked only on the edges its scope covers. It answers only
where it was compared and hands the rest back to the scalar kernel, situation by situation:

- outside `KERNEL_SCOPE` (kernel_scope.vector_refusal: ELR, more than 6 brokers or ids
  beyond 1..6, a property or signature without an array form): no vector kernel;
- a partition it cannot encode (adding / removing not sorted, epochs or a log), a
  reassignment that ends with its ghost unchanged or cancelled on an ISR change or a broker
  step, an original it cannot encode, more than 4,096 ghosts: declined; ControllerFailover
  (group 4) is the scalar kernel's;
- tests/unit/test_kraft_vector.py compares every situation it answers with the scalar kernel
  and the reference on the kernel's configurations and catches planted bugs;
- the packed table spot-checks its rows against the reference as it does the scalar kernel's.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
from kreassign.checker.packed import kernel_scope
from kreassign.checker.packed.kernel_scope import KERNEL_SCOPE, vector_refusal
from kreassign.checker.packed.kraft_kernel import IDLE
from kreassign.reference.kraft_change import (
    adding_in_isr_all_targets_if_shrinking,
    adding_replicas_in_isr,
    all_target_replicas_in_isr,
)
from kreassign.spec import actions as A
from kreassign.spec.messages import INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS, NONE
from kreassign.spec.reassign_properties import Ghost
from kreassign.spec.state import NO_LEADER, Partition

MAX_BROKERS = KERNEL_SCOPE.vector_max_brokers  # 3-bit slots: replicas and ISR of 6 brokers, with the leader,
# masks and ghost, fit 63 bits
GHOST_BITS = 12
POP = np.array([i.bit_count() for i in range(1 << (MAX_BROKERS + 1))], dtype=np.int64)  # popcount of a mask
EXPAND, SHRINK, FAIL, RECOVER = range(4)
KINDS = ("LeaderExpandIsr", "LeaderShrinkIsr", "BrokerFail", "BrokerRecover")  # their actions' class names
VECTOR_GROUPS = KERNEL_SCOPE.vector_groups  # the budget groups it answers: all but ControllerFailover


def _mask(slots: np.ndarray) -> np.ndarray:
    return np.bitwise_or.reduce(np.where(slots > 0, np.left_shift(1, slots), 0), axis=1)


def _bit(masks: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Is broker `ids` in `masks` (elementwise; ids <= 0 are in no mask)."""
    return (ids > 0) & ((masks >> np.maximum(ids, 0)) & 1).astype(bool)


def _keep(slots: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The slots of each row where `keep`, moved to the front in order (zeros after them)."""
    out = np.zeros_like(slots)
    rows, cols = np.nonzero(keep)
    out[rows, (np.cumsum(keep, axis=1) - 1)[rows, cols]] = slots[rows, cols]
    return out


def _minus(slots: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """ordered_minus on each row: the slots not in the row's `drop` mask, in order."""
    return _keep(slots, (slots > 0) & (((drop[:, None] >> slots) & 1) == 0))


def _compact(slots: np.ndarray) -> np.ndarray:
    """The non-zero slots of each row first, in order."""
    return _keep(slots, slots > 0)


def _first(slots: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found?, the first id of each row whose slot is `ok`)."""
    found = ok.any(axis=1)
    at = np.argmax(ok, axis=1)
    return found, np.where(found, slots[np.arange(len(slots)), at], NO_LEADER)


class VectorKernel:
    """Budget groups 0-3 of the kraft kernel (ISR changes and unfence, Reassign, Cancel, fence), batch by batch."""

    def __init__(self, kernel: Any):
        self.kernel = kernel
        self.packed = packed = kernel.packed
        self.groups = kernel_scope.KERNEL_SCOPE.vector_groups  # the others: every situation declined
        self.S = MAX_BROKERS
        profile = kernel.profile
        self.unclean = kernel.election == A.UNCLEAN
        self.bump_on_shrink = profile.bump_leader_epoch_on_isr_shrink
        # the completion rule's twin (reference/kraft_change.py): which of the three the profile uses
        # twin of reference/kraft_change.py all_target_replicas_in_isr, adding_replicas_in_isr,
        # adding_in_isr_all_targets_if_shrinking
        rule = profile.completion_rule
        if rule is all_target_replicas_in_isr:
            self.completion = "all-targets"
        elif rule is adding_replicas_in_isr:
            self.completion = "adding"
        elif rule is adding_in_isr_all_targets_if_shrinking:
            self.completion = "adding-all-targets-if-shrinking"
        else:
            raise ValueError("unknown completion rule")
        ids = [b.id for b in packed.envs[0]]
        self.B = max(ids)
        # the codes and families of the actions, by broker id
        self.code = np.full((4, self.B + 1), -1, dtype=np.int64)
        for kind, table in ((EXPAND, kernel.expand), (SHRINK, kernel.shrink), (FAIL, kernel.fail),
                            (RECOVER, kernel.recover)):
            for b, entry in table.items():
                self.code[kind, b] = entry[1]
        # per local id, grown by `sync`
        n = 0
        self.R = np.zeros((n, self.S), dtype=np.int64)
        self.I = np.zeros((n, self.S), dtype=np.int64)
        self.L = np.zeros(n, dtype=np.int64)
        self.AR = np.zeros(n, dtype=np.int64)
        self.RR = np.zeros(n, dtype=np.int64)
        self.G = np.zeros(n, dtype=np.int64)
        self.encodable = np.zeros(n, dtype=bool)
        self.synced = 0
        self.ghosts: list[Any] = []
        self.ghost_ids: dict[Any, int] = {}
        self.g_orig = np.zeros(0, dtype=bool)  # has an original (a reassignment in flight)
        self.g_cancelled = np.zeros(0, dtype=bool)
        self.g_req = np.zeros(0, dtype=bool)  # has a requested target
        self.g_req_m = np.zeros(0, dtype=np.int64)
        self.g_req_len = np.zeros(0, dtype=np.int64)
        self.g_orig_len = np.zeros(0, dtype=np.int64)
        self.idle = self._ghost(IDLE)
        # the properties and signatures: the array forms of spec/'s per-partition definitions (vector_refusal
        # saw each has one), with the bits the scalar kernel gives them; the edge checks grouped by scope
        self.state_checks = [(form.array_form(), mask, sig) for form, mask, sig in kernel.state_checks]
        self.goal_checks = [(form.array_form(), mask) for form, mask, _ in kernel.goal_checks]
        self.sometimes_checks = [(form.array_form(), mask) for form, mask, _ in kernel.sometimes_checks]
        by_scope: dict[Any, list] = {}
        for form, mask, sig in kernel.edge_checks:
            by_scope.setdefault(form.scope, []).append((form.array_form(), mask, sig))
        self.edge_checks = list(by_scope.items())
        # the admin's targets (Reassign, group 1) as slots, masks, lengths, and whether each is encodable
        targets = [e[0].replicas for _, e in kernel.reassigns]
        self.target_tuples = [tuple(x) for x in targets]
        slots = [self._slots(x) for x in targets]
        self.targets = (np.array([x or [0] * self.S for x in slots], dtype=np.int64).reshape(len(targets), self.S),
                        np.array([sum(1 << b for b in x if 0 < b <= self.B) for x in targets], dtype=np.int64),
                        np.array([len(x) for x in targets], dtype=np.int64),
                        np.array([x is not None and len(set(t)) == len(t) and len(t) > 0 for x, t in zip(slots, targets)],
                                 dtype=bool))
        self.target_ranks = np.array([k for k, _ in kernel.reassigns], dtype=np.int64)
        self.target_codes = np.array([e[1] for _, e in kernel.reassigns], dtype=np.int64)
        self.all_ids = np.arange(1, self.S + 1, dtype=np.int64) * (np.arange(1, self.S + 1) <= self.B)
        self.reassigns_encodable = bool(self.targets[3].all())  # else group 1 is the scalar kernel's
        self.one_cancel = len(kernel.cancels) == 1  # else group 2 is the scalar kernel's
        # packed code of each local -> local id, sorted by code
        self.codes_sorted = np.zeros(0, dtype=np.int64)
        self.ids_sorted = np.zeros(0, dtype=np.int64)
        # per env id: active / registered masks, and the envs after fencing / unfencing each broker
        self.env_active = np.zeros(0, dtype=np.int64)
        self.env_registered = np.zeros(0, dtype=np.int64)
        self.env_pos = np.zeros((0, self.B + 1), dtype=np.int64)  # position among registered brokers
        self.env_after = np.zeros((0, 2, self.B + 1), dtype=np.int64)  # [env, fail/recover, b] -> env id
        self.envs_synced = 0

    @classmethod
    def build(cls, kernel: Any) -> VectorKernel | None:
        """The vector kernel for the scalar `kernel`'s model, or None outside its scope
        (kernel_scope.vector_refusal says why): then the scalar kernel answers every group."""
        if vector_refusal(kernel) is not None:
            return None
        return cls(kernel)

    # -- encoding --------------------------------------------------------------------------------------
    def _ghost(self, g: Any) -> int:
        i = self.ghost_ids.get(g)
        if i is None:
            i = self.ghost_ids[g] = len(self.ghosts)
            self.ghosts.append(g)
        return i

    def _slots(self, ids: tuple[int, ...]) -> list[int] | None:
        if len(ids) > self.S or any(not 1 <= b <= self.B for b in ids):
            return None
        return list(ids) + [0] * (self.S - len(ids))

    def sync(self) -> None:
        """Encode the locals and brokers interned since the last batch."""
        packed = self.packed
        n0, n = self.synced, len(packed.locals)
        if n > n0:
            rows = []
            for part, ghost in packed.locals[n0:n]:
                r, i = self._slots(part.replicas), self._slots(part.isr)
                # twin of checker/models/reassign.py normalize_epochs (epochs 0: none encoded)
                ok = (r is not None and i is not None and part.log is None and part.original is None
                      and not part.leader_epoch and not part.partition_epoch
                      and list(part.adding) == sorted(set(part.adding)) and list(part.removing) == sorted(set(part.removing))
                      and all(1 <= b <= self.B for b in part.adding + part.removing)
                      and (part.leader == NO_LEADER or 1 <= part.leader <= self.B))
                gid = self._ghost(ghost)
                if gid >= 1 << GHOST_BITS:
                    ok = False
                rows.append((r or [0] * self.S, i or [0] * self.S, part.leader,
                             sum(1 << b for b in part.adding) if ok else 0,
                             sum(1 << b for b in part.removing) if ok else 0, gid, ok))
            R, I, L, AR, RR, G, ok = (np.array(x, dtype=np.int64) for x in zip(*rows))
            self._append(R.reshape(-1, self.S), I.reshape(-1, self.S), L, AR, RR, G, ok.astype(bool))
        self._sync_ghosts()
        m0, m = self.envs_synced, len(packed.envs)
        if m > m0:
            act, reg, pos = [], [], []
            for brokers in packed.envs[m0:m]:
                act.append(sum(1 << b.id for b in brokers if b.registered and b.active))
                reg.append(sum(1 << b.id for b in brokers if b.registered))
                p = [-1] * (self.B + 1)
                for k, b in enumerate(b for b in brokers if b.registered):
                    p[b.id] = k
                pos.append(p)
            self.env_active = np.concatenate([self.env_active, np.array(act, dtype=np.int64)])
            self.env_registered = np.concatenate([self.env_registered, np.array(reg, dtype=np.int64)])
            self.env_pos = np.concatenate([self.env_pos, np.array(pos, dtype=np.int64)])
            after = np.full((m - m0, 2, self.B + 1), -1, dtype=np.int64)
            self.env_after = np.concatenate([self.env_after, after])
            self.envs_synced = m

    def _append(self, R, I, L, AR, RR, G, ok) -> None:
        """Add the encodings of the next locals (ids `synced`, `synced + 1`, ...) and their codes."""
        self.R = np.concatenate([self.R, R])
        self.I = np.concatenate([self.I, I])
        self.L = np.concatenate([self.L, L])
        self.AR = np.concatenate([self.AR, AR])
        self.RR = np.concatenate([self.RR, RR])
        self.G = np.concatenate([self.G, G])
        self.encodable = np.concatenate([self.encodable, ok])
        ids = np.arange(self.synced, self.synced + len(L))[ok]
        codes = self._code(R[ok], I[ok], L[ok], AR[ok], RR[ok], G[ok])
        allc = np.concatenate([self.codes_sorted, codes])
        alli = np.concatenate([self.ids_sorted, ids])
        order = np.argsort(allc, kind="stable")
        self.codes_sorted, self.ids_sorted = allc[order], alli[order]
        self.synced += len(L)

    def _sync_ghosts(self) -> None:
        """The ghost tables, when ghosts were met since the last time."""
        gs = self.ghosts
        if len(gs) == len(self.g_orig):
            return
        self.g_orig = np.array([g.original is not None for g in gs], dtype=bool)
        self.g_cancelled = np.array([bool(g.cancelled) for g in gs], dtype=bool)
        self.g_req = np.array([g.requested is not None for g in gs], dtype=bool)
        self.g_req_m = np.array([sum(1 << b for b in g.requested or ()) for g in gs], dtype=np.int64)
        self.g_req_len = np.array([len(g.requested or ()) for g in gs], dtype=np.int64)
        self.g_orig_len = np.array([len(g.original or ()) for g in gs], dtype=np.int64)
        self.g_orig_m = np.array([sum(1 << b for b in g.original or ()) for g in gs], dtype=np.int64)
        slots = [self._slots(g.original or ()) for g in gs]
        self.g_orig_ok = np.array([x is not None for x in slots], dtype=bool)
        self.g_orig_slots = np.array([x or [0] * self.S for x in slots], dtype=np.int64).reshape(len(gs), self.S)

    def _env_after(self, env: int, b: int, active: bool) -> int:
        """The env id of `env` with broker b fenced (active=False) / unfenced, interned on first use."""
        got = self.env_after[env, int(active), b]
        if got < 0:
            after, _ = self.kernel.brokers_after(env, b, active)
            got = after if type(after) is int else self.packed.intern_env(after)
            self.sync()
            self.env_after[env, int(active), b] = got
        return int(got)

    def _code(self, R, I, L, AR, RR, G) -> np.ndarray:
        code = np.zeros(len(R), dtype=np.int64)
        for k in range(self.S):
            code = (code << 3) | R[:, k]
        for k in range(self.S):
            code = (code << 3) | I[:, k]
        code = (code << 3) | (L + 1)
        code = (code << self.S) | (AR >> 1)
        code = (code << self.S) | (RR >> 1)
        return (code << GHOST_BITS) | G

    # -- one batch -------------------------------------------------------------------------------------
    def tabulate(self, group: int, locs: np.ndarray, envs: np.ndarray) -> dict[str, Any]:
        """The answers of one budget group in VECTOR_GROUPS for the situations (locs[k], envs[k]) it can
        answer: {"done": which k, "sit", "rank", "code", "new", "env", "ok", "global": one entry per answer
        (sit: its k), "bits": (inv, goal, some) per k (group 0)}; the other situations are the caller's.
        Groups 0 and 3 here; 1 `_tabulate_reassign`, 2 `_tabulate_cancel`."""
        self.sync()
        S, B = self.S, self.B
        locs = np.asarray(locs, dtype=np.int64)
        envs = np.asarray(envs, dtype=np.int64)
        if group not in self.groups:
            empty = np.zeros(0, dtype=np.int64)
            out = {"done": np.zeros(len(locs), dtype=bool), "sit": empty, "rank": empty, "code": empty,
                   "new": empty, "env": empty, "ok": empty, "global": np.zeros(0, dtype=bool)}
            if group == 0:
                out["bits"] = (empty, empty, empty)
            return out
        if group == 2:
            return self._tabulate_cancel(locs, envs)
        if group == 1:
            return self._tabulate_reassign(locs, envs)
        # twin of reference/enabled_actions.py default_enabled_actions (one partition's ISR changes, brokers)
        R, I, L = self.R[locs], self.I[locs], self.L[locs]
        Rm, Im = _mask(R), _mask(I)
        AR, RR = self.AR[locs], self.RR[locs]
        active, registered = self.env_active[envs], self.env_registered[envs]
        bs = np.arange(1, B + 1)
        in_r = ((Rm[:, None] >> bs) & 1).astype(bool)
        in_i = ((Im[:, None] >> bs) & 1).astype(bool)
        act = ((active[:, None] >> bs) & 1).astype(bool)
        reg = ((registered[:, None] >> bs) & 1).astype(bool)
        led = L != NO_LEADER
        isr_on = self.kernel.isr_changes
        expand = isr_on & led[:, None] & in_r & ~in_i & act
        shrink = isr_on & led[:, None] & in_i & (bs[None, :] != L[:, None])
        n_admin = self.kernel.n_admin
        n_exp, n_shr = expand.sum(1), shrink.sum(1)
        first = n_admin + n_exp + n_shr
        pos = self.env_pos[envs][:, 1:]
        if group == 0:
            recover = reg & ~act
            kinds = [(EXPAND, expand, n_admin + np.cumsum(expand, 1) - 1),
                     (SHRINK, shrink, n_admin + n_exp[:, None] + np.cumsum(shrink, 1) - 1),
                     (RECOVER, recover, first[:, None] + pos)]
        else:
            kinds = [(FAIL, reg & act, first[:, None] + pos)]
        sit, kind, broker, rank = [], [], [], []
        for k, on, ranks in kinds:
            s, j = np.nonzero(on)
            sit.append(s)
            kind.append(np.full(len(s), k, dtype=np.int64))
            broker.append(j + 1)
            rank.append(ranks[s, j])
        sit, kind, broker, rank = (np.concatenate(x) for x in (sit, kind, broker, rank))
        order = np.lexsort((rank, sit))
        sit, kind, broker, rank = sit[order], kind[order], broker[order], rank[order]
        # each answer: the partition before, the brokers after, the ISR target
        pR, pI, pL, pRm, pIm, pAR, pRR = R[sit], I[sit], L[sit], Rm[sit], Im[sit], AR[sit], RR[sit]
        bit = np.left_shift(1, broker)
        fence, unfence = kind == FAIL, kind == RECOVER
        act_after = np.where(fence, active[sit] & ~bit, np.where(unfence, active[sit] | bit, active[sit]))
        target = pI.copy()
        grow = kind == EXPAND
        target[grow, np.minimum((pI[grow] > 0).sum(1), S - 1)] = broker[grow]  # ISR + (b,)
        drop = (kind == SHRINK) | fence
        target[drop] = _minus(pI[drop], bit[drop])
        tm = _mask(target)
        tlen = (target > 0).sum(1)
        # AlterPartition's validation (ISR changes), the fence / unfence conditions
        # twin of reference/kraft.py KraftProfile.alter_partition, .broker_fail, .broker_recover
        isr_change = grow | (kind == SHRINK)
        valid = (_bit(registered[sit], pL) & (POP[tm] == tlen) & ((tm & ~pRm) == 0)
                 & _bit(tm, pL) & ((tm & ~act_after) == 0))
        changes = np.where(isr_change, valid, np.where(fence, _bit(pIm, broker), pL == NO_LEADER))
        qR, qI, qL, qAR, qRR, rec, bumped = self.partition_change(pR, pI, pL, pAR, pRR, pR, target, pAR, pRR,
                                                                  act_after)
        rec &= changes
        bumped &= rec
        qR, qI, qL = np.where(rec[:, None], qR, pR), np.where(rec[:, None], qI, pI), np.where(rec, qL, pL)
        qAR, qRR = np.where(rec, qAR, pAR), np.where(rec, qRR, pRR)
        # a reassignment in flight that stops being one ends on the edge (its ghost goes idle): a completion
        # is answered here, a cancelled one's ending goes back to the scalar kernel with its situation
        # twin of checker/models/reassign.py ReassignmentModel._intent (no request: the ghost kept till it ends)
        gid = self.G[locs][sit]
        ends = self.g_orig[gid] & ((qAR | qRR) == 0)
        refuse = ~self.encodable[locs]
        refuse[sit[ends & (self.g_cancelled[gid] | ~self.g_orig_ok[gid])]] = True
        keep_ans = ~refuse[sit]
        k = np.flatnonzero(keep_ans)
        g = gid[k]
        ok = self._edge_bits(EdgeView(
            KINDS, kind[k], pR[k], pI[k], pL[k], pAR[k], qR[k], qI[k], qL[k], bumped[k].astype(np.int64),
            rec[k].astype(np.int64), np.full(len(k), NONE, dtype=np.int64), rec[k], act_after[k], ends[k],
            self.g_cancelled[g], self.g_orig_slots[g], self.g_req[g], self.g_req_m[g], self.g_req_len[g]))
        # the next local: the same one, or looked up / interned by its code
        new = locs[sit].copy()
        new_gid = np.where(ends, self.idle, gid)
        chg = (rec | ends) & keep_ans
        if chg.any():
            codes = self._code(qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
            new[chg] = self._intern(codes, qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
        env_after = envs[sit].copy()
        for k, active_flag in ((FAIL, False), (RECOVER, True)):
            sel = np.flatnonzero((kind == k) & keep_ans)
            if len(sel):
                e_sel, b_sel = envs[sit[sel]], broker[sel]
                for e, b in np.unique(np.stack([e_sel, b_sel], 1), axis=0).tolist():
                    self._env_after(e, b, active_flag)
                env_after[sel] = self.env_after[e_sel, int(active_flag), b_sel]
        out = {"done": ~refuse, "sit": sit[keep_ans], "rank": rank[keep_ans],
               "code": self.code[kind[keep_ans], broker[keep_ans]], "new": new[keep_ans],
               "env": env_after[keep_ans], "ok": ok,
               "global": (kind[keep_ans] == FAIL) | (kind[keep_ans] == RECOVER)}
        if group == 0:
            out["bits"] = self._state_bits(locs)
        return out

    def _tabulate_reassign(self, locs: np.ndarray, envs: np.ndarray) -> dict[str, Any]:
        """Budget group 1, every Reassign of each situation: changePartitionReassignment (validation, the
        plan — target ++ removing, adding and removing sorted, an empty list keeping the old one — and
        the change with an ONLINE election), the ghost (Ghost(original, target)), the ending."""
        # twin of reference/kraft.py KraftProfile.change_reassignment
        S = self.S
        T, Tm, Tlen, _ = self.targets
        nt, n_sit = len(T), len(locs)
        sit = np.repeat(np.arange(n_sit), nt)
        t = np.tile(np.arange(nt), n_sit)
        l = locs[sit]
        pR, pI, pL, pAR, pRR = self.R[l], self.I[l], self.L[l], self.AR[l], self.RR[l]
        pRm = _mask(pR)
        active = self.env_active[envs][sit]
        gid = self.G[l]
        tR, tm = T[t], Tm[t]
        # validateManualPartitionAssignment: every id registered, none twice (an error changes nothing)
        accepted = (tm & ~self.env_registered[envs][sit]) == 0  # (a target with a repeated id: declined above)
        # PartitionReassignmentReplicas: replicas = target ++ removing (sorted), adding = target − current
        removing, adding = pRm & ~tm, tm & ~pRm
        plan = _compact(np.concatenate([tR, _minus(np.broadcast_to(self.all_ids, tR.shape), ~removing)], axis=1))[:, :S]
        ar, rr = np.where(adding != 0, adding, pAR), np.where(removing != 0, removing, pRR)
        qR, qI, qL, qAR, qRR, rec, bumped = self.partition_change(pR, pI, pL, pAR, pRR, plan, pI, ar, rr,
                                                                  active, False)
        rec &= accepted
        bumped &= rec
        qR, qI, qL = np.where(rec[:, None], qR, pR), np.where(rec[:, None], qI, pI), np.where(rec, qL, pL)
        qAR, qRR = np.where(rec, qAR, pAR), np.where(rec, qRR, pRR)
        # the ghost: the original (kept, or the current replicas − adding) and this target; unless an idle
        # partition was "reassigned" to its own replicas
        # twin of checker/models/reassign.py ReassignmentModel._intent (an accepted Reassign)
        has_orig = self.g_orig[gid]
        still = (qAR | qRR) != 0
        idle_no_op = ~has_orig & ~still & (_mask(qR) == pRm)
        takes = accepted & ~idle_no_op
        ends = takes & ~still
        # declined: an unchanged ghost whose reassignment ends (the scalar kernel's case), an original that
        # is empty or not encodable
        refuse_ans = ((~takes & has_orig & ~still) | (takes & ~has_orig & (_mask(_minus(pR, pAR)) == 0))
                      | (takes & has_orig & ~self.g_orig_ok[gid]))
        new_gid = gid.copy()
        at = np.flatnonzero(takes)
        if len(at):
            orig = np.where(has_orig[at, None], self.g_orig_slots[gid[at]], _minus(pR[at], pAR[at]))
            key = self._slot_code(orig) * (nt + 1) + t[at]
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            gids = np.array([self._ghost(Ghost(tuple(int(b) for b in orig[j] if b), self.target_tuples[t[at][j]],
                                               False)) for j in first.tolist()], dtype=np.int64)
            new_gid[at] = gids[inverse]
        new_gid = np.where(ends, self.idle, new_gid)
        refuse_ans |= new_gid >= 1 << GHOST_BITS
        refuse_ans |= not self.reassigns_encodable
        refuse = ~self.encodable[locs]
        refuse[sit[refuse_ans]] = True
        keep_ans = ~refuse[sit]
        k = np.flatnonzero(keep_ans)
        n_k = len(k)
        original = np.where(has_orig[k, None], self.g_orig_slots[gid[k]], _minus(pR[k], pAR[k]))
        ok = self._edge_bits(EdgeView(
            ("Reassign",), np.zeros(n_k, dtype=np.int64), pR[k], pI[k], pL[k], pAR[k], qR[k], qI[k], qL[k],
            bumped[k].astype(np.int64), rec[k].astype(np.int64),
            np.where(accepted[k], NONE, INVALID_REPLICA_ASSIGNMENT), rec[k], active[k], ends[k],
            np.zeros(n_k, dtype=bool), original, np.ones(n_k, dtype=bool), tm[k], Tlen[t[k]]))
        new = l.copy()
        chg = (rec | (new_gid != gid)) & keep_ans
        if chg.any():
            codes = self._code(qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
            new[chg] = self._intern(codes, qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
        return {"done": ~refuse, "sit": sit[k], "rank": self.target_ranks[t[k]],
                "code": self.target_codes[t[k]], "new": new[k], "env": envs[sit[k]],
                "ok": ok, "global": np.zeros(n_k, dtype=bool)}

    def _slot_code(self, slots: np.ndarray) -> np.ndarray:
        code = np.zeros(len(slots), dtype=np.int64)
        for k in range(self.S):
            code = (code << 3) | slots[:, k]
        return code

    def _tabulate_cancel(self, locs: np.ndarray, envs: np.ndarray) -> dict[str, Any]:
        """Budget group 2, the Cancel of each situation: cancelPartitionReassignment (85 when idle; the
        revert R − AR, ISR − AR; an empty ISR reverts to the first replica, refused unless the topic is
        unclean), the change, the ghost and the ending. What it declines: the situation is the caller's."""
        # twin of reference/kraft.py KraftProfile.cancel_reassignment
        pR, pI, pL, pAR, pRR = self.R[locs], self.I[locs], self.L[locs], self.AR[locs], self.RR[locs]
        active = self.env_active[envs]
        gid = self.G[locs]
        zero = np.zeros(len(locs), dtype=np.int64)
        moving = (pAR | pRR) != 0
        r, i = _minus(pR, pAR), _minus(pI, pAR)
        empty = _mask(i) == 0
        i[empty] = 0
        i[empty, 0] = r[empty, 0]
        refused = empty & (not self.unclean)
        accepted = moving & ~refused
        code = np.where(~moving, NO_REASSIGNMENT_IN_PROGRESS, np.where(refused, INVALID_REPLICA_ASSIGNMENT, NONE))
        qR, qI, qL, qAR, qRR, rec, bumped = self.partition_change(pR, pI, pL, pAR, pRR, r, i, zero, zero,
                                                                  active)
        rec &= accepted
        bumped &= rec
        qR, qI, qL = np.where(rec[:, None], qR, pR), np.where(rec[:, None], qI, pI), np.where(rec, qL, pL)
        qAR, qRR = np.where(rec, qAR, pAR), np.where(rec, qRR, pRR)
        # the ghost: an accepted cancel of a reassignment in flight ends it once nothing is moving
        # twin of checker/models/reassign.py ReassignmentModel._intent (an accepted Cancel)
        has_orig = self.g_orig[gid]
        ends = accepted & has_orig & ((qAR | qRR) == 0)
        refuse = (~self.encodable[locs] | (accepted & has_orig & ~ends) | (moving & (_mask(r) == 0))
                  | (ends & ~self.g_orig_ok[gid]) | (not self.one_cancel))
        k = np.flatnonzero(~refuse)
        n_k = len(k)
        g = gid[k]
        ok = self._edge_bits(EdgeView(
            ("Cancel",), np.zeros(n_k, dtype=np.int64), pR[k], pI[k], pL[k], pAR[k], qR[k], qI[k], qL[k],
            bumped[k].astype(np.int64), rec[k].astype(np.int64), code[k], rec[k], active[k], ends[k],
            np.ones(n_k, dtype=bool), self.g_orig_slots[g], np.zeros(n_k, dtype=bool), zero[k], zero[k]))
        new = locs.copy()
        chg = (rec | ends) & ~refuse
        if chg.any():
            new_gid = np.where(ends, self.idle, gid)
            codes = self._code(qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
            new[chg] = self._intern(codes, qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
        rank, entry = self.kernel.cancels[0]
        return {"done": ~refuse, "sit": k, "rank": np.full(n_k, rank, dtype=np.int64),
                "code": np.full(n_k, entry[1], dtype=np.int64), "new": new[k], "env": envs[k],
                "ok": ok, "global": np.zeros(n_k, dtype=bool)}

    def partition_change(self, pR, pI, pL, pAR, pRR, r, i, ar, rr, act_after,
                         unclean_election: bool | None = None) -> tuple:
        """kraft_change.build_change + apply_record for each row: the partition (pR, pI, pL, pAR, pRR) with
        the targets (r, i, ar, rr), brokers `act_after` active, the topic's election. Returns the fields
        after, whether a record is written, and whether it bumps the leader epoch (sets the leader)."""
        # twin of reference/kraft_change.py build_change (with complete_if_needed, elect, apply_record)
        # completeReassignmentIfNeeded on the targets
        r, i = r.copy(), i.copy()
        moving = (ar | rr) != 0
        nr = np.where((rr != 0)[:, None], _minus(r, rr), r)
        ni = np.where((rr != 0)[:, None], _minus(i, rr), i)
        nrm, nim = _mask(nr), _mask(ni)
        if self.completion == "all-targets":  # kraft_change.all_target_replicas_in_isr
            rule = (nrm & ~nim) == 0
        elif self.completion == "adding":  # kraft_change.adding_replicas_in_isr
            rule = (ar & ~nim) == 0
        else:  # kraft_change.adding_in_isr_all_targets_if_shrinking (KAFKA-19975)
            rule = ((ar & ~nim) == 0) & ((POP[ar] >= POP[rr]) | ((nrm & ~nim) == 0))
        done = moving & (nim != 0) & (nrm != 0) & rule
        r[done], i[done] = nr[done], ni[done]
        ar, rr = np.where(done, 0, ar), np.where(done, 0, rr)
        rm, im = _mask(r), _mask(i)
        pRm, pIm = _mask(pR), _mask(pI)
        # electLeader (ONLINE, or UNCLEAN for an unclean topic) over the targets, brokers after
        ok_ids = im & act_after
        keep = (pL != NO_LEADER) & _bit(ok_ids, pL)
        found, first_ok = _first(r, _bit(ok_ids[:, None], r))
        leader = np.where(keep, pL, np.where(found, first_ok, NO_LEADER))
        unclean = np.zeros(len(pL), dtype=bool)
        if self.unclean if unclean_election is None else unclean_election:
            f2, first_live = _first(r, _bit(act_after[:, None], r))
            unclean = ~keep & ~found & f2
            leader = np.where(unclean, first_live, leader)
        # the record
        changed = leader != pL
        rec_leader = changed.copy()
        isr_unclean = changed & unclean  # an unclean election writes the ISR (leader,)
        rec_leader |= (pRm & ~rm) != 0  # replicas removed: an epoch bump without a leader change
        isr_w = isr_unclean | ((im != 0) & (i != pI).any(1))
        unclean_isr = np.zeros_like(i)
        unclean_isr[:, 0] = leader
        new_i = np.where(isr_unclean[:, None], unclean_isr, np.where(isr_w[:, None], i, pI))
        if self.bump_on_shrink:
            rec_leader |= isr_w & ((pIm & ~_mask(new_i)) != 0)
        rep_w = (rm != 0) & (r != pR).any(1)
        rec = rec_leader | isr_w | rep_w | (rr != pRR) | (ar != pAR)
        qR = np.where((rec & rep_w)[:, None], r, pR)
        qI = np.where(rec[:, None], new_i, pI)  # new_i is pI where the record writes no ISR
        qL = np.where(rec, leader, pL)
        qAR, qRR = np.where(rec, ar, pAR), np.where(rec, rr, pRR)
        return qR, qI, qL, qAR, qRR, rec, rec & rec_leader

    def _intern(self, codes, qR, qI, qL, qAR, qRR, gid) -> np.ndarray:
        """Local ids of these (partition, ghost) codes, interning the new ones (one Partition each)."""
        uniq, inverse = np.unique(codes, return_inverse=True)
        ids = np.full(len(uniq), -1, dtype=np.int64)
        if len(self.codes_sorted):
            at = np.minimum(np.searchsorted(self.codes_sorted, uniq), len(self.codes_sorted) - 1)
            known = self.codes_sorted[at] == uniq
            ids[known] = self.ids_sorted[at[known]]
        missing = np.flatnonzero(ids < 0)
        if len(missing):
            first = np.zeros(len(uniq), dtype=np.int64)
            first[inverse[::-1]] = np.arange(len(codes))[::-1]  # an answer of each unique code
            bs = range(1, self.B + 1)
            start = len(self.packed.locals)
            for u in missing.tolist():
                j = first[u]
                part = Partition(tuple(int(b) for b in qR[j] if b), tuple(int(b) for b in qI[j] if b), int(qL[j]),
                                 tuple(b for b in bs if qAR[j] >> b & 1), tuple(b for b in bs if qRR[j] >> b & 1))
                ids[u] = self.packed.intern_local(part, self.ghosts[int(gid[j])])
            rows = first[missing]
            if self.synced == start and (ids[missing] == np.arange(start, start + len(missing))).all():
                # all new, in order: their encodings are the rows they were made from
                self._append(qR[rows], qI[rows], qL[rows], qAR[rows], qRR[rows], gid[rows],
                             np.ones(len(rows), dtype=bool))
            self.sync()
        return ids[inverse]

    def _state_bits(self, locs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(inv, goal, some) of each local: the state checks' array forms over a StateView."""
        view = StateView.of(self, locs)
        inv = np.zeros(len(locs), dtype=np.int64)
        goal = np.zeros(len(locs), dtype=np.int64)
        some = np.zeros(len(locs), dtype=np.int64)
        for fn, mask, sig in self.state_checks:  # a signature's bit: it does not match
            inv |= np.where(fn(view) != sig, mask, 0)
        for fn, mask in self.goal_checks:
            goal |= np.where(fn(view), mask, 0)
        for fn, mask in self.sometimes_checks:
            some |= np.where(fn(view), mask, 0)
        return inv, goal, some

    def _edge_bits(self, view: EdgeView) -> np.ndarray:
        """The edge bits of each row, as KraftKernel.compute sets them: every property holds and no signature
        matches outside a check's scope; inside, the array form says."""
        n = len(view.leader)
        ok = np.full(n, self.kernel.edge_bits, dtype=np.int64)
        for scope, checks in self.edge_checks:
            inside = np.ones(n, dtype=bool) if scope.kinds is None else view.kind_in(scope.kinds)
            if scope.ended:
                inside &= view.ended
            rows = np.flatnonzero(inside)
            if not len(rows):
                continue
            sub = view if len(rows) == n else view.take(rows)
            wrong = np.zeros(len(rows), dtype=np.int64)
            for fn, mask, sig in checks:  # a property that fails, a signature that matches
                wrong |= np.where(fn(sub) == sig, mask, 0)
            ok[rows] &= ~wrong
        return ok

    def rows(self, group: int, out: dict[str, Any], k: int) -> tuple[list, tuple | None]:
        """Situation k's answer in `KraftKernel.compute`'s form (for the spot checks and the tests)."""
        sel = np.flatnonzero(out["sit"] == k)
        rows = [(int(out["rank"][j]), int(out["code"][j]), int(out["new"][j]), int(out["env"][j]), int(out["ok"][j]))
                for j in sel]
        bits = tuple(int(x[k]) for x in out["bits"]) if group == 0 else None
        return rows, bits


class _Helpers:
    """spec/partition_masks.py's helpers, on the vector kernel's masks and slots."""

    @staticmethod
    def count(masks: np.ndarray) -> np.ndarray:
        return POP[masks]

    @staticmethod
    def has(masks: np.ndarray, ids: np.ndarray) -> np.ndarray:
        return _bit(masks, ids)

    @staticmethod
    def minus(slots: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return _minus(slots, masks)


class StateView(_Helpers):
    """spec/partition_masks.StateMasks for a batch of partitions with their ghosts: replica and ISR slots, the
    leader, adding / removing masks, and per ghost whether it has an original / requested target and their
    masks."""

    def __init__(self, R: np.ndarray, I: np.ndarray, L: np.ndarray, AR: np.ndarray, RR: np.ndarray,
                 has_original: np.ndarray, original: np.ndarray, has_requested: np.ndarray,
                 requested: np.ndarray):
        self.replicas, self.replica_count, self.isr, self.leader = _mask(R), (R > 0).sum(1), _mask(I), L
        self.adding, self.removing = AR, RR
        self.reassigning = (AR | RR) != 0
        # no ELR: vector_refusal declines it (the partitions it encodes have none)
        self.elr, self.last_known_leader = np.zeros(len(L), dtype=np.int64), np.zeros(len(L), dtype=bool)
        self.has_original, self.original = has_original, original
        self.has_requested, self.requested = has_requested, requested

    @classmethod
    def of(cls, vk: VectorKernel, locs: np.ndarray) -> StateView:
        """The view of the vector kernel's locals `locs`."""
        G = vk.G[locs]
        return cls(vk.R[locs], vk.I[locs], vk.L[locs], vk.AR[locs], vk.RR[locs], vk.g_orig[G], vk.g_orig_m[G],
                   vk.g_req[G], vk.g_req_m[G])


class EdgeView(_Helpers):
    """spec/partition_masks.EdgeMasks for a batch of answers (one partition's part of an edge each); the
    masks and counts of its slots are made when a form first reads them."""

    # twin of spec/per_partition.py partition_edges: what each field of a partition's part of an edge holds
    BASE = ("kind", "before_replicas", "before_isr", "before_leader", "before_adding", "replicas", "isr",
            "leader", "leader_epoch_step", "partition_epoch_step", "code", "changed", "active", "ended",
            "ended_cancelled", "ending_original", "ending_has_requested", "ending_requested_mask",
            "ending_requested_count")

    def __init__(self, kind_names: tuple[str, ...], *base: np.ndarray):
        self.kind_names = kind_names  # `kind` indexes it
        for name, value in zip(self.BASE, base, strict=True):
            setattr(self, name, value)

    def take(self, rows: np.ndarray) -> EdgeView:
        """The view of some rows."""
        return EdgeView(self.kind_names, *(getattr(self, name)[rows] for name in self.BASE))

    def kind_in(self, kinds: Any) -> np.ndarray:
        return np.isin(self.kind, [k for k, name in enumerate(self.kind_names) if name in kinds])

    @cached_property
    def before_replicas_mask(self) -> np.ndarray:
        return _mask(self.before_replicas)

    @cached_property
    def replicas_mask(self) -> np.ndarray:
        return _mask(self.replicas)

    @cached_property
    def replica_count(self) -> np.ndarray:
        return (self.replicas > 0).sum(1)

    @cached_property
    def isr_mask(self) -> np.ndarray:
        return _mask(self.isr)

    @cached_property
    def ending_original_mask(self) -> np.ndarray:
        return _mask(self.ending_original)

    @cached_property
    def ending_original_count(self) -> np.ndarray:
        return (self.ending_original > 0).sum(1)
