"""`kip455`: partition reassignment exactly as the KIP-455 seed text describes it (seed 000).

Partition fields, in the seed's names: R = `replicas`, I = `isr`, AR = `adding`
(addingReplicas), RR = `removing` (retiringReplicas). The rules:

1. Request (target T, partition not reassigning): AR = T − R, RR = R − T, R = RR ++ T; the
   controller sends LeaderAndIsr (leader epoch + 1). A new request during an ongoing one
   first cancels it (rule 4), then starts anew from the updated R.
2. ISR change: each member of AR that is in I leaves AR, as part of the same step as the
   ISR write that put it there (the controller picks the change up) — `pick_up`.
3. Controller steps (ControllerStep, derived from the fields, so nothing else is stored):
   `complete` when AR = [] and RR ≠ []: R = R − RR, RR = [] (LeaderAndIsr, leader epoch + 1);
   `retire` when the leader is not in R or I holds replicas outside R: the leader moves to
   the first live target replica in the ISR and the ISR shrinks to I ∩ R.
4. Cancel: R = R − AR, AR = RR = [] (LeaderAndIsr, leader epoch + 1); replicas that joined I
   stay, so the replication factor may exceed the configured one.
5. Cancellation granularity: partition (Replicas = null), topic (`cancel_topic`), all (`cancel_all`).

Readings of the seed (docs/kip-profiles.md): the second worked example prints `RR: []`,
which contradicts rule 1; we read RR = [1, 2]. The seed's line
"R: [1,4,3,2], I: [1,2,3,4], AR: [4]" is the leader's ISR write before the controller
picks it up; here the two are one step (`leader_isr_write` then `pick_up`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.messages import NONE
from kreassign.spec.state import NO_LEADER, ClusterState, Partition, ordered_minus

from . import zk_elections
from .enabled_actions import get_partition
from .steps import ActionSpace, Plan, Step
from .zk_era_controller import (
    Outcome,
    ZkEraControllerProfile,
    bump_leader_epoch,
    drop_stale_logs,
    leader_isr_write,
)

COMPLETE = "complete"
RETIRE = "retire"


def plan(current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
    """Rule 1: AR = T − R, RR = R − T, R = RR ++ T (removing replicas first, matching both seed traces)."""
    removing = ordered_minus(current, target)
    return Plan(replicas=removing + tuple(target), adding=ordered_minus(target, current), removing=removing)


def start(part: Partition, target: tuple[int, ...]) -> Partition:
    """Start a reassignment of a partition that is not reassigning (rule 1); unchanged if nothing moves."""
    p = plan(part.replicas, target)
    if p.replicas == part.replicas and not p.adding and not p.removing:
        return part
    return bump_leader_epoch(replace(part, replicas=p.replicas, adding=p.adding, removing=p.removing))


def cancel(part: Partition) -> Partition:
    """Rule 4: R = R − AR, AR = RR = []; replicas already in the ISR stay."""
    return bump_leader_epoch(replace(part, replicas=ordered_minus(part.replicas, part.adding), adding=(), removing=()))


def pick_up(part: Partition) -> Partition:
    """Rule 2: the controller removes every AR member that is in the ISR from AR."""
    if not set(part.adding) & set(part.isr):
        return part
    return replace(part, adding=ordered_minus(part.adding, part.isr))


def complete(part: Partition) -> Partition:
    """Rule 3, `complete`: AR is empty, so all of RR leaves R in one step. Leader and ISR are not touched."""
    return bump_leader_epoch(replace(part, replicas=ordered_minus(part.replicas, part.removing), removing=()))


def retire(state: ClusterState, part: Partition) -> Partition:
    """Rule 3, `retire`: "1 retires and 4 starts leading. 4 shrinks the ISR".

    A leader outside R is replaced by the first replica of R that is live and in the
    ISR (ZK's reassign election; none → no leader). The ISR shrinks to I ∩ R, unless that
    is empty: then it is kept, as ZK keeps the last ISR member.
    """
    leader = part.leader
    if leader != NO_LEADER and leader not in part.replicas:
        elected = zk_elections.reassign_election(state, part.replicas, part)
        leader = elected[0] if elected is not None else NO_LEADER
    isr = tuple(b for b in part.isr if b in part.replicas) or part.isr
    if leader == part.leader and isr == part.isr:
        return part
    return zk_elections.write_leader_and_isr(part, leader, isr)


class Kip455Profile(ZkEraControllerProfile):
    """The KIP-455 seed's algorithm (iteratively shrinking AR; cancel = R − AR)."""

    name = "kip455"
    description = "KIP-455 as proposed: R = RR ++ target, AR shrinks as replicas join the ISR, cancel = R − AR"

    def plan(self, current: tuple[int, ...], target: tuple[int, ...]) -> Plan:
        return plan(current, target)

    def settle(self, part: Partition) -> Partition:
        return drop_stale_logs(pick_up(part))

    # -- admin --------------------------------------------------------------------------------------
    def reassign_partition(self, state: ClusterState, topic: str, index: int, target: tuple[int, ...]) -> Outcome:
        part = state.partition(topic, index)
        if part.reassigning:
            part = cancel(part)
        return self.put(state, topic, index, start(part, target)), NONE, None

    def cancel_partition(self, state: ClusterState, topic: str, index: int) -> Outcome:
        return self.put(state, topic, index, cancel(state.partition(topic, index))), NONE, None

    def cancel_all(self, state: ClusterState) -> Step:
        """Cancel every pending reassignment (KIP-455 `Topics: null`); responds per cancelled partition."""
        return self.cancel_every(state, [(t, i) for t, i, p in state.partitions() if p.reassigning])

    # -- controller ---------------------------------------------------------------------------------
    def pending_step(self, state: ClusterState, topic: str, index: int) -> str | None:
        part = get_partition(state, topic, index)
        if not part.adding and part.removing:
            return COMPLETE
        if retire(state, part) is not part:
            return RETIRE
        return None

    def run_step(self, state: ClusterState, topic: str, index: int, step: str) -> ClusterState:
        part = state.partition(topic, index)
        new = complete(part) if step == COMPLETE else retire(state, part)
        return self.put(state, topic, index, new)

    def extra_actions(self, state: ClusterState, space: ActionSpace) -> list[Any]:
        out = super().extra_actions(state, space)
        if space.cancel_all:
            out.append(A.CancelAll())
        return out


__all__ = ["COMPLETE", "RETIRE", "Kip455Profile", "cancel", "complete", "leader_isr_write", "pick_up", "plan",
           "retire", "start"]
