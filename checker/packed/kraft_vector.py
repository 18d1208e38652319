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
loops, `kraft_change.build_change` with `apply_record` (`_build`), the ghost update, and the
properties and signatures of each kind of edge — so it answers only where it was compared
and hands the rest back to the scalar kernel, situation by situation:

- a partition it cannot encode (more than 6 brokers or ids beyond 1..6, adding / removing
  not sorted, epochs or a log), a reassignment that ends with its ghost unchanged, an
  original it cannot encode, more than 4,096 ghosts: declined;
- any property or signature predicate it does not implement for an edge kind: that kind's
  group (or the endings) declined; ControllerFailover (group 4) is the scalar kernel's;
- tests/unit/test_kraft_vector.py compares every situation it answers with the scalar kernel
  and the reference on the kernel's configurations and catches planted bugs;
- the packed table spot-checks its rows against the reference as it does the scalar kernel's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from kreassign.checker.packed import kraft_kernel as K
from kreassign.reference.kraft_change import (
    adding_in_isr_all_targets_if_shrinking,
    adding_replicas_in_isr,
    all_target_replicas_in_isr,
)
from kreassign.spec import actions as A
from kreassign.spec.messages import INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS, NONE
from kreassign.spec.state import NO_LEADER, Partition

MAX_BROKERS = 6  # 3-bit slots: replicas and ISR of 6 brokers, with the leader, masks and ghost, fit 63 bits
GHOST_BITS = 12
POP = np.array([i.bit_count() for i in range(1 << (MAX_BROKERS + 1))], dtype=np.int64)  # popcount of a mask
EXPAND, SHRINK, FAIL, RECOVER = range(4)
VECTOR_GROUPS = (0, 1, 2, 3)  # the budget groups it answers: all but ControllerFailover


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
        self.S = MAX_BROKERS
        profile = kernel.profile
        self.unclean = kernel.election == A.UNCLEAN
        self.bump_on_shrink = profile.bump_leader_epoch_on_isr_shrink
        # the completion rule's twin (reference/kraft_change.py): which of the three the profile uses
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
        self.idle = self._ghost(K.IDLE)
        # the edge predicates on an edge that completes a reassignment, if it computes them all
        preds = [pred for pred, _ in kernel.edges + kernel.edge_sigs]
        self.ending = VENDING if all(p in VENDING for p in preds) else None
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
        self.reassign_preds = ([(VREASSIGN[p], mask, False) for p, mask in kernel.edges]
                               + [(VREASSIGN[p], mask, True) for p, mask in kernel.edge_sigs]
                               if all(p in VREASSIGN for p in preds) and self.targets[3].all() else None)
        # ... and on a Cancel edge: (function, mask, True for a signature: its bit means "does not match")
        if len(kernel.cancels) == 1 and all(p in VCANCEL for p in preds):
            self.cancel_preds = ([(VCANCEL[p], mask, False) for p, mask in kernel.edges]
                                 + [(VCANCEL[p], mask, True) for p, mask in kernel.edge_sigs])
        else:
            self.cancel_preds = None
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
        packed = kernel.packed
        if kernel.profile.elr:  # its numpy builder has no ELR (KIP-966): the scalar kernel answers
            return None
        ids = [b.id for b in packed.envs[0]]
        if ids != list(range(1, len(ids) + 1)) or len(ids) > MAX_BROKERS:
            return None
        # the edge predicates of a plain edge: constant, or epochs_monotone (the only one it computes)
        if any(pred is not K._epochs_monotone for pred, _ in kernel.plain[1]):
            return None
        if any(pred not in VSTATE for pred, _ in kernel.always + kernel.state_sigs + kernel.goals + kernel.sometimes):
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
            after, _ = self.kernel._with(env, b, active)
            got = after if type(after) is int else self.packed._env(after)
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
        if group == 2:
            return self._tabulate_cancel(locs, envs)
        if group == 1:
            return self._tabulate_reassign(locs, envs)
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
        n = len(sit)
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
        isr_change = grow | (kind == SHRINK)
        valid = (_bit(registered[sit], pL) & (POP[tm] == tlen) & ((tm & ~pRm) == 0)
                 & _bit(tm, pL) & ((tm & ~act_after) == 0))
        changes = np.where(isr_change, valid, np.where(fence, _bit(pIm, broker), pL == NO_LEADER))
        qR, qI, qL, qAR, qRR, rec, monotone = self._build(pR, pI, pL, pAR, pRR, pR, target, pAR, pRR, act_after)
        rec &= changes
        qR, qI, qL = np.where(rec[:, None], qR, pR), np.where(rec[:, None], qI, pI), np.where(rec, qL, pL)
        qAR, qRR = np.where(rec, qAR, pAR), np.where(rec, qRR, pRR)
        monotone |= ~changes
        # a reassignment in flight that stops being one ends on the edge (its ghost goes idle): a completion
        # is answered here, a cancelled one's ending goes back to the scalar kernel with its situation
        gid = self.G[locs][sit]
        ends = self.g_orig[gid] & ((qAR | qRR) == 0)
        refuse = ~self.encodable[locs]
        refuse[sit[ends & (self.g_cancelled[gid] | (self.ending is None))]] = True
        keep_ans = ~refuse[sit]
        plain_bits, ask = self.kernel.plain
        ok = np.full(n, plain_bits, dtype=np.int64)
        for _, mask in ask:  # epochs_monotone (build refuses any other)
            ok |= np.where(monotone, mask, 0)
        done_ends = np.flatnonzero(ends & keep_ans)
        if len(done_ends):
            c = _EdgeContext(self, done_ends, qR, qI, pAR, gid, monotone)
            bits = np.zeros(len(done_ends), dtype=np.int64)
            for pred, mask in self.kernel.edges:
                bits |= np.where(self.ending[pred](c), mask, 0)
            for pred, mask in self.kernel.edge_sigs:
                bits |= np.where(self.ending[pred](c), 0, mask)
            ok[done_ends] = bits
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
               "env": env_after[keep_ans], "ok": ok[keep_ans], "global": (kind[keep_ans] == FAIL) | (kind[keep_ans] == RECOVER)}
        if group == 0:
            out["bits"] = self._state_bits(locs)
        return out

    def _tabulate_reassign(self, locs: np.ndarray, envs: np.ndarray) -> dict[str, Any]:
        """Budget group 1, every Reassign of each situation: changePartitionReassignment (validation, the
        plan — target ++ removing, adding and removing sorted, an empty list keeping the old one — and
        the change with an ONLINE election), the ghost (Ghost(original, target)), the ending."""
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
        qR, qI, qL, qAR, qRR, rec, monotone = self._build(pR, pI, pL, pAR, pRR, plan, pI, ar, rr, active, False)
        rec &= accepted
        qR, qI, qL = np.where(rec[:, None], qR, pR), np.where(rec[:, None], qI, pI), np.where(rec, qL, pL)
        qAR, qRR = np.where(rec, qAR, pAR), np.where(rec, qRR, pRR)
        monotone |= ~accepted
        # the ghost: the original (kept, or the current replicas − adding) and this target; unless an idle
        # partition was "reassigned" to its own replicas
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
            gids = np.array([self._ghost(K.Ghost(tuple(int(b) for b in orig[j] if b), self.target_tuples[t[at][j]],
                                                 False)) for j in first.tolist()], dtype=np.int64)
            new_gid[at] = gids[inverse]
        new_gid = np.where(ends, self.idle, new_gid)
        refuse_ans |= new_gid >= 1 << GHOST_BITS
        refuse_ans |= self.reassign_preds is None
        refuse = ~self.encodable[locs]
        refuse[sit[refuse_ans]] = True
        keep_ans = ~refuse[sit]
        c = _ReassignContext(pL, pAR, qR, qI, qL, active, ends, tm, Tlen[t], monotone)
        ok = np.zeros(len(sit), dtype=np.int64)
        if self.reassign_preds is not None:
            for fn, mask, sig in self.reassign_preds:
                ok |= np.where(fn(c) != sig, mask, 0)
        new = l.copy()
        chg = (rec | (new_gid != gid)) & keep_ans
        if chg.any():
            codes = self._code(qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
            new[chg] = self._intern(codes, qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
        keep = np.flatnonzero(keep_ans)
        return {"done": ~refuse, "sit": sit[keep], "rank": self.target_ranks[t[keep]],
                "code": self.target_codes[t[keep]], "new": new[keep], "env": envs[sit[keep]],
                "ok": ok[keep], "global": np.zeros(len(keep), dtype=bool)}

    def _slot_code(self, slots: np.ndarray) -> np.ndarray:
        code = np.zeros(len(slots), dtype=np.int64)
        for k in range(self.S):
            code = (code << 3) | slots[:, k]
        return code

    def _tabulate_cancel(self, locs: np.ndarray, envs: np.ndarray) -> dict[str, Any]:
        """Budget group 2, the Cancel of each situation: cancelPartitionReassignment (85 when idle; the
        revert R − AR, ISR − AR; an empty ISR reverts to the first replica, refused unless the topic is
        unclean), the change, the ghost and the ending. What it declines: the situation is the caller's."""
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
        qR, qI, qL, qAR, qRR, rec, monotone = self._build(pR, pI, pL, pAR, pRR, r, i, zero, zero, active)
        rec &= accepted
        qR, qI, qL = np.where(rec[:, None], qR, pR), np.where(rec[:, None], qI, pI), np.where(rec, qL, pL)
        qAR, qRR = np.where(rec, qAR, pAR), np.where(rec, qRR, pRR)
        monotone |= ~accepted
        # the ghost: an accepted cancel of a reassignment in flight ends it once nothing is moving
        has_orig = self.g_orig[gid]
        ends = accepted & has_orig & ((qAR | qRR) == 0)
        refuse = (~self.encodable[locs] | (accepted & has_orig & ~ends) | (moving & (_mask(r) == 0))
                  | (ends & ~self.g_orig_ok[gid]) | (self.cancel_preds is None))
        c = _CancelContext(self, gid, pR, pL, pAR, qR, qI, qL, active, ends, code, rec, monotone)
        ok = np.zeros(len(locs), dtype=np.int64)
        if self.cancel_preds is not None:
            for fn, mask, sig in self.cancel_preds:
                ok |= np.where(fn(c) != sig, mask, 0)
        new = locs.copy()
        chg = (rec | ends) & ~refuse
        if chg.any():
            new_gid = np.where(ends, self.idle, gid)
            codes = self._code(qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
            new[chg] = self._intern(codes, qR[chg], qI[chg], qL[chg], qAR[chg], qRR[chg], new_gid[chg])
        keep = np.flatnonzero(~refuse)
        rank, entry = self.kernel.cancels[0]
        return {"done": ~refuse, "sit": keep, "rank": np.full(len(keep), rank, dtype=np.int64),
                "code": np.full(len(keep), entry[1], dtype=np.int64), "new": new[keep], "env": envs[keep],
                "ok": ok[keep], "global": np.zeros(len(keep), dtype=bool)}

    def _build(self, pR, pI, pL, pAR, pRR, r, i, ar, rr, act_after, unclean_election: bool | None = None) -> tuple:
        """kraft_change.build_change + apply_record for each row: the partition (pR, pI, pL, pAR, pRR) with
        the targets (r, i, ar, rr), brokers `act_after` active, the topic's election. Returns the fields
        after, whether a record is written, and epochs_monotone on the edge."""
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
        # epochs_monotone: every leader / ISR change writes a record, every leader change bumps the epoch
        bumped = rec & rec_leader
        monotone = ~((((qL != pL) | (qI != pI).any(1)) & ~rec) | ((qL != pL) & ~bumped))
        return qR, qI, qL, qAR, qRR, rec, monotone

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
                ids[u] = self.packed._local(part, self.ghosts[int(gid[j])])
            rows = first[missing]
            if self.synced == start and (ids[missing] == np.arange(start, start + len(missing))).all():
                # all new, in order: their encodings are the rows they were made from
                self._append(qR[rows], qI[rows], qL[rows], qAR[rows], qRR[rows], gid[rows],
                             np.ones(len(rows), dtype=bool))
            self.sync()
        return ids[inverse]

    def _state_bits(self, locs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ctx = _StateContext(self, locs)
        kernel = self.kernel
        inv = np.zeros(len(locs), dtype=np.int64)
        goal = np.zeros(len(locs), dtype=np.int64)
        some = np.zeros(len(locs), dtype=np.int64)
        for pred, mask in kernel.always:
            inv |= np.where(VSTATE[pred](ctx), mask, 0)
        for pred, mask in kernel.state_sigs:
            inv |= np.where(VSTATE[pred](ctx), 0, mask)
        for pred, mask in kernel.goals:
            goal |= np.where(VSTATE[pred](ctx), mask, 0)
        for pred, mask in kernel.sometimes:
            some |= np.where(VSTATE[pred](ctx), mask, 0)
        return inv, goal, some

    def rows(self, group: int, out: dict[str, Any], k: int) -> tuple[list, tuple | None]:
        """Situation k's answer in `KraftKernel.compute`'s form (for the spot checks and the tests)."""
        sel = np.flatnonzero(out["sit"] == k)
        rows = [(int(out["rank"][j]), int(out["code"][j]), int(out["new"][j]), int(out["env"][j]), int(out["ok"][j]))
                for j in sel]
        bits = tuple(int(x[k]) for x in out["bits"]) if group == 0 else None
        return rows, bits


class _EdgeContext:
    """What the edge predicates read on the edges `at` (answers) that complete a reassignment."""

    def __init__(self, vk: VectorKernel, at: np.ndarray, qR, qI, pAR, gid, monotone):
        g = gid[at]
        self.qRm, self.qIm = _mask(qR[at]), _mask(qI[at])
        self.qRlen = (qR[at] > 0).sum(1)
        self.pAR = pAR[at]
        self.has_req, self.req_m, self.req_len = vk.g_req[g], vk.g_req_m[g], vk.g_req_len[g]
        self.orig_len = vk.g_orig_len[g]
        self.monotone = monotone[at]
        self.n = len(at)


# on an edge that completes a reassignment (not a request; the ghost not cancelled): kind "completed"
def _e_epochs_monotone(c):
    return c.monotone


def _e_completion_reaches_target(c):
    return ~c.has_req | ((c.qRm == c.req_m) & ((c.req_m & ~c.qIm) == 0))


def _e_true(c):
    return np.ones(c.n, dtype=bool)


def _e_false(c):
    return np.zeros(c.n, dtype=bool)


def _e_replication_factor_restored(c):
    return c.qRlen == np.where(c.has_req, c.req_len, c.orig_len)


def _e_completes_with_non_adding_target_out_of_isr(c):
    missing = c.req_m & ~c.qIm
    return (c.qRm == c.req_m) & (missing != 0) & ((missing & c.pAR) == 0)


VENDING = {
    K._epochs_monotone: _e_epochs_monotone,
    K._completion_reaches_target: _e_completion_reaches_target,
    K._cancel_restores_original_replicas: _e_true,  # a completion, not a cancel
    K._cancel_restores_original_order: _e_true,
    K._replication_factor_restored: _e_replication_factor_restored,
    K._admin_action_keeps_a_leader: _e_true,  # not an admin request
    K._cancel_rejected_cleanly: _e_true,  # not a Cancel
    K._cancel_keeps_non_adding_replicas: _e_false,
    K._cancel_keeps_merged_order: _e_false,
    K._completes_with_non_adding_target_out_of_isr: _e_completes_with_non_adding_target_out_of_isr,
}


class _ReassignContext:
    """What the edge predicates read on Reassign edges (one per situation and target)."""

    def __init__(self, pL, pAR, qR, qI, qL, active, ends, tm, tlen, monotone):
        self.pL, self.pAR = pL, pAR
        self.qRm, self.qIm, self.qL, self.qRlen = _mask(qR), _mask(qI), qL, (qR > 0).sum(1)
        self.active, self.ends, self.tm, self.tlen, self.monotone = active, ends, tm, tlen, monotone


def _r_completion_reaches_target(c):
    return ~c.ends | ((c.qRm == c.tm) & ((c.tm & ~c.qIm) == 0))


def _r_replication_factor_restored(c):
    return ~c.ends | (c.qRlen == c.tlen)


def _r_completes_with_non_adding_target_out_of_isr(c):
    missing = c.tm & ~c.qIm
    return c.ends & (c.qRm == c.tm) & (missing != 0) & ((missing & c.pAR) == 0)


VREASSIGN = {
    K._epochs_monotone: lambda c: c.monotone,
    K._completion_reaches_target: _r_completion_reaches_target,
    K._cancel_restores_original_replicas: lambda c: np.ones(len(c.pL), dtype=bool),  # a completion, if anything
    K._cancel_restores_original_order: lambda c: np.ones(len(c.pL), dtype=bool),
    K._replication_factor_restored: _r_replication_factor_restored,
    K._admin_action_keeps_a_leader: lambda c: ~((c.qL == NO_LEADER) & (c.pL != NO_LEADER)
                                                & ((c.qIm & c.qRm & c.active) != 0)),
    K._cancel_rejected_cleanly: lambda c: np.ones(len(c.pL), dtype=bool),  # not a Cancel
    K._cancel_keeps_non_adding_replicas: lambda c: np.zeros(len(c.pL), dtype=bool),
    K._cancel_keeps_merged_order: lambda c: np.zeros(len(c.pL), dtype=bool),
    K._completes_with_non_adding_target_out_of_isr: _r_completes_with_non_adding_target_out_of_isr,
}


class _CancelContext:
    """What the edge predicates read on Cancel edges (one per situation)."""

    def __init__(self, vk: VectorKernel, gid, pR, pL, pAR, qR, qI, qL, active, ends, code, rec, monotone):
        self.pR, self.pRm, self.pL, self.pAR = pR, _mask(pR), pL, pAR
        self.qR, self.qRm, self.qIm, self.qL = qR, _mask(qR), _mask(qI), qL
        self.qRlen = (qR > 0).sum(1)
        self.active, self.ends, self.code, self.rec, self.monotone = active, ends, code, rec, monotone
        self.orig_m, self.orig_len, self.orig = vk.g_orig_m[gid], vk.g_orig_len[gid], vk.g_orig_slots[gid]


def _c_cancel_restores_original_replicas(c):
    return ~c.ends | (c.qRm == c.orig_m)


def _c_cancel_restores_original_order(c):
    return ~c.ends | (c.qR == c.orig).all(1)


def _c_replication_factor_restored(c):
    return ~c.ends | (c.qRlen == c.orig_len)  # a cancel: the original's replication factor


def _c_admin_action_keeps_a_leader(c):
    return ~((c.qL == NO_LEADER) & (c.pL != NO_LEADER) & ((c.qIm & c.qRm & c.active) != 0))


def _c_cancel_rejected_cleanly(c):
    return (c.code == NONE) | ~c.rec


def _c_cancel_keeps_non_adding_replicas(c):
    extra = c.qRm & ~c.orig_m
    return c.ends & ((c.orig_m & ~c.qRm) == 0) & (extra != 0) & ((extra & c.pAR) == 0)


def _c_cancel_keeps_merged_order(c):
    merged = _minus(c.pR, c.pRm & ~c.orig_m)
    return c.ends & (c.qRm == c.orig_m) & (c.qR != c.orig).any(1) & (c.qR == merged).all(1)


VCANCEL = {
    K._epochs_monotone: lambda c: c.monotone,
    K._completion_reaches_target: lambda c: np.ones(len(c.pL), dtype=bool),  # a cancel completes nothing
    K._cancel_restores_original_replicas: _c_cancel_restores_original_replicas,
    K._cancel_restores_original_order: _c_cancel_restores_original_order,
    K._replication_factor_restored: _c_replication_factor_restored,
    K._admin_action_keeps_a_leader: _c_admin_action_keeps_a_leader,
    K._cancel_rejected_cleanly: _c_cancel_rejected_cleanly,
    K._cancel_keeps_non_adding_replicas: _c_cancel_keeps_non_adding_replicas,
    K._cancel_keeps_merged_order: _c_cancel_keeps_merged_order,
    K._completes_with_non_adding_target_out_of_isr: lambda c: np.zeros(len(c.pL), dtype=bool),
}


class _StateContext:
    """The fields the state predicates read, for a batch of local ids (masks; ghosts by id)."""

    def __init__(self, vk: VectorKernel, locs: np.ndarray):
        self.R, self.I, self.L = vk.R[locs], vk.I[locs], vk.L[locs]
        self.Rm, self.Im = _mask(self.R), _mask(self.I)
        self.AR, self.RR = vk.AR[locs], vk.RR[locs]
        ghosts = [vk.ghosts[g] for g in vk.G[locs].tolist()]
        self.has_orig = np.array([g.original is not None for g in ghosts], dtype=bool)
        self.has_req = np.array([g.requested is not None for g in ghosts], dtype=bool)
        self.orig_m = np.array([sum(1 << b for b in g.original or ()) for g in ghosts], dtype=np.int64)
        self.req_m = np.array([sum(1 << b for b in g.requested or ()) for g in ghosts], dtype=np.int64)
        self.moving = (self.AR | self.RR) != 0
        self.rlen = (self.R > 0).sum(1)


def _v_target_in_replicas(c):
    return ~c.has_req | ~c.moving | ((c.req_m & ~c.Rm) == 0)


def _v_original_in_replicas(c):
    return ~c.has_orig | ~c.moving | ((c.orig_m & ~c.Rm) == 0)


def _v_adding_removing_disjoint(c):
    return (c.AR & c.RR) == 0


def _v_isr_in_replicas(c):
    return (c.Im & ~c.Rm) == 0


def _v_leader_in_isr(c):
    return (c.L == NO_LEADER) | _bit(c.Im, c.L)


def _v_isr_non_empty(c):
    # twin of spec/reassign_properties.isr_non_empty without its ELR clause: ELR never reaches this kernel
    # (VectorKernel.build declines it), so partitions here have no ELR and no last known leader
    return c.Im != 0


def _v_replication_factor_bounded(c):
    return ~(c.has_orig & c.has_req & c.moving) | (c.rlen <= POP[c.orig_m | c.req_m])


def _v_committed_records_kept(c):
    return np.ones(len(c.L), dtype=bool)


def _v_reassignment_finished(c):
    return ~c.has_orig


def _v_stale_adding_replica(c):
    both = c.AR & c.RR
    return (both != 0) & c.has_orig & ((both & (c.orig_m | c.req_m)) == 0)


def _v_override_keeps_earlier_target(c):
    extra = c.Rm & ~c.orig_m & ~c.req_m
    return c.has_orig & c.has_req & (extra != 0) & ((extra & ~c.RR) == 0)


def _v_stuck_on_stale_adding(c):
    return (c.AR & c.RR) != 0


def _vstate() -> dict[Any, Any]:
    return {
        K._target_in_replicas: _v_target_in_replicas,
        K._original_in_replicas: _v_original_in_replicas,
        K._adding_removing_disjoint: _v_adding_removing_disjoint,
        K._isr_in_replicas: _v_isr_in_replicas,
        K._leader_in_isr: _v_leader_in_isr,
        K._isr_non_empty: _v_isr_non_empty,
        K._replication_factor_bounded: _v_replication_factor_bounded,
        K._committed_records_kept: _v_committed_records_kept,
        K._reassignment_finished: _v_reassignment_finished,
        K._stale_adding_replica: _v_stale_adding_replica,
        K._override_keeps_earlier_target: _v_override_keeps_earlier_target,
        K._stuck_on_stale_adding: _v_stuck_on_stale_adding,
    }


VSTATE = _vstate()
