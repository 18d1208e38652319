"""Trace validation: is an observed run one that a profile allows, possibly with unlogged steps?

An observed trace is a sequence of observations (`kafka_log.Observation`): full states
and actions from a JSON-lines trace, or the partial states Kafka's own controller and
state-change log lines carry (docs/validate-trace.md). `validate` keeps the set of
*candidate* reference states consistent with everything observed so far and, for each new
observation, searches breadth-first from every candidate through up to `max_unlogged`
unlogged actions — the profile's enabled actions (`Profile.enabled_actions`: admin
requests, ISR changes, broker failures and recoveries, controller steps and failovers),
applied by the reference (`Profile.apply`) — keeping the states that match the
observation on the fields it carries: by default those reached with the fewest unlogged
actions (`SearchLimits.shortest`; every match within the bounds otherwise). A logged
action (JSON lines) is applied exactly once, with no unlogged step before it. Kafka logs
one line per ZooKeeper write where the model bundles several writes in one step (B4's ISR
removals): such lines are matched inside the step (`Validator._substep`). The first observation no candidate can reach is
the first illegal transition; the report names its line, the candidates before it, and
the closest state the search reached with the fields that differ.

A line about one partition is searched on that partition's projection (`Projection`) and every
explanation found is replayed on the whole cluster. A partition's first line may be its
initial state as it is. Verdicts (`ValidationResult.verdict`): VALID, INVALID (a line no run
reaches), INCONCLUSIVE (lines outside the model, or a search limit). KRaft metadata logs are
checked strictly by `kraft_metadata`.

The validator implements no Kafka rule: states come from the reference, and the only
assumptions are stated where they are used — epochs never go back (the spec's
`epochs_monotone`, promised by every profile), used to prune the search; and for Kafka
logs, that the run's epochs are the model's shifted by a constant (the reference only
compares epochs with each other and bumps them), fixed at the first line that carries
each epoch.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from copy import copy
from dataclasses import dataclass, field, replace
from typing import Any

from kreassign.checker.kafka_logs.kraft_metadata_log import (
    MetadataResult,
    check_metadata,
    looks_like_metadata_log,
    metadata_json,
    parse_metadata_log,
    report_metadata,
)
from kreassign.checker.kafka_logs.zk_controller_log import Observation, ParsedLog, parse_log
from kreassign.checker.traces import quota_handlers_trace
from kreassign.checker.traces.diff import field_diff
from kreassign.reference import ActionNotSupported, ActionSpace, InvalidAction, Profile
from kreassign.reference import zk_controller as C
from kreassign.reference.capabilities import KAFKA as CAPABILITIES
from kreassign.reference.kraft import CONTROLLER_ACTIONS
from kreassign.reference.profile_base import Profile as _BaseProfile
from kreassign.reference.topic_changes import topic_deletion_actions
from kreassign.reference.zk_elections import remove_replica_from_isr
from kreassign.spec import actions as A
from kreassign.spec.codec import DecodeError, decode_action, state_from_json, to_json
from kreassign.spec.kafka_limits import (
    action_problem,
    broker_problem,
    epoch_problem,
    leader_problem,
    partition_problem,
    state_problem,
    topic_problem,
)
from kreassign.spec.state import NO_LEADER, Broker, ClusterState, Kip236Admin, Partition, Topic

from kreassign.errors import UsageError

EPOCH_FIELDS = ("leader_epoch", "partition_epoch", "controller_epoch")
REQUESTS = ("Reassign", "Cancel", "AlterReassignments", "ZnodeReassign", "CancelTopic", "CancelAll",
            "RemoveCancelMarker", "ElectLeaders", "ToolExecute", "ToolCancel", "ToolVerify", "CreatePartitions")
NA = object()  # a field the state does not have under this profile (e.g. the zk controller's memory)


class TraceFormatError(UsageError, ValueError):
    """A malformed trace file (usage error, exit 2); the message names the line and the field."""


@dataclass(frozen=True)
class SearchLimits:
    """How many unlogged actions may fall between two consecutive observations."""

    max_unlogged: int = 8  # actions in all
    max_requests: int = 2  # of which admin requests (Reassign, Cancel, ZnodeReassign, ElectLeaders, ...)
    max_failures: int = 1  # broker failures (recoveries are free)
    max_failovers: int = 1  # controller failovers
    max_states: int = 200_000  # states the search may visit between two observations
    elections: tuple[str, ...] = ()  # ElectLeaders types the unlogged actions may use
    shortest: bool = True  # keep only the matches reached with the fewest unlogged actions (see the docs)
    max_candidates: int = 2_000  # candidate states kept per observation; beyond, a rejection is only INCONCLUSIVE
    kraft_actions: tuple[str, ...] = ()  # the KRaft controller's own actions the unlogged ones may use (--kraft-actions)


@dataclass(frozen=True)
class Cand:
    """A candidate: the reference state, or — in the middle of a step whose ZooKeeper writes are
    being observed one by one — the step's end state plus the partition as written so far."""

    state: ClusterState
    partial: Partition | None = None
    topic: str | None = None
    partition: int | None = None
    # a hash of the part of the state the observation is about: hashing a whole cluster of thousands of
    # partitions per candidate dominated long logs; equal candidates (same observation) have equal hints
    hint: int = field(default=0, compare=False)

    def __hash__(self) -> int:
        return hash((self.hint, self.partial, self.topic, self.partition))


@dataclass
class Link:
    """How a candidate was reached: from which candidate of the previous observation, by which actions."""

    parent: Cand | None
    actions: tuple[Any, ...]  # the unlogged actions, then (sub-step or JSON lines) the logged one
    steps: tuple[str, ...]  # for zk ControllerSteps: the step each ran (U, A1, ...); "" otherwise
    offsets: dict[tuple, int]  # epoch offsets fixed at this observation
    bumped: frozenset = frozenset()  # epoch keys written and not observed since (see Validator._written)


@dataclass
class Mismatch:
    field: str
    observed: Any
    model: Any

    def __str__(self) -> str:
        return f"{self.field}: the line says {_fmt(self.observed)}, the model has {_fmt(self.model)}"


@dataclass
class Closest:
    """The searched state nearest to a failing observation."""

    state: ClusterState
    partial: Partition | None
    actions: tuple[Any, ...]
    mismatches: list[Mismatch]
    steps: tuple[str, ...] = ()


@dataclass
class ValidationResult:
    valid: bool
    profile: str
    format: str
    observations: int
    initial: ClusterState  # the initial state (for Kafka logs: inferred, epochs as the run had them)
    notes: list[str] = field(default_factory=list)  # how the initial state was inferred
    recognised: int = 0
    ignored: list[int] = field(default_factory=list)
    total_lines: int = 0
    # one explanation, per observation (observation, actions, steps, state after): of the whole trace when
    # valid, of the observations before the failure otherwise
    explanation: list[tuple[Observation, tuple[Any, ...], tuple[str, ...], Cand]] = field(default_factory=list)
    # when invalid
    failed: Observation | None = None
    reason: str = ""
    previous: Observation | None = None
    before: list[Cand] = field(default_factory=list)  # candidates after the last matched observation
    closest: Closest | None = None
    states_searched: int = 0
    inconclusive: bool = False  # the search hit --max-states before deciding, or lines were outside the model
    shapes: dict[str, int] = field(default_factory=dict)  # recognised lines by shape (kafka-log)
    not_understood: dict[str, list[int]] = field(default_factory=dict)  # why -> lines outside the model
    truncated: bool = False  # the candidate set was capped (--max-candidates) somewhere before the verdict

    @property
    def verdict(self) -> str:
        if self.valid:
            return "VALID"
        return "INCONCLUSIVE" if self.inconclusive else "INVALID"

    @property
    def explained_lines(self) -> int:
        return self.recognised - sum(len(v) for v in self.not_understood.values())


def _fmt(v: Any) -> str:
    if isinstance(v, (tuple, list, frozenset, set)):
        items = sorted(v) if isinstance(v, (frozenset, set)) else list(v)
        return "[" + ",".join(map(str, items)) + "]"
    if v is None:
        return "none"
    return str(v)


# -- what a state shows of the fields an observation carries ------------------------------------------


def view(state: ClusterState, topic: str | None, partition: int | None, partial: Partition | None = None) -> dict[str, Any]:
    """The observable fields of one partition (or of the controller when `topic` is None)."""
    zk = state.zk
    out: dict[str, Any] = {
        "controller_epoch": zk.epoch if zk is not None else NA,
        "znode_empty": (not zk.admin_znode) if zk is not None else NA,
    }
    if topic is None:
        return out
    part = partial if partial is not None else state.partition(topic, partition)
    if part is None:
        return out
    if zk is not None:
        mem = C.memory_of(zk, topic, partition) or C.EMPTY
        step = C.next_step(zk, topic, partition)
        znode = C.znode_target(zk, topic, partition)
    else:
        mem, step, znode = C.Plan(part.replicas, part.adding, part.removing), NA, NA
    target = C.target_of(mem)
    out.update({
        "replicas": part.replicas,
        "adding": part.adding,
        "removing": part.removing,
        "leader": part.leader,
        "isr": frozenset(part.isr),
        "leader_epoch": part.leader_epoch,
        "partition_epoch": part.partition_epoch,
        "memory_replicas": mem.replicas,
        "memory_adding": mem.adding,
        "memory_removing": mem.removing,
        "memory_target": target,
        "target_in_isr": set(target) <= set(part.isr),
        "next_step": step,
        "leader_live": part.leader != NO_LEADER and state.is_active(part.leader),
        "znode_entry": znode,
    })
    if zk is not None:  # whether the ZooKeeper controller's elections find a leader (a failed one writes nothing)
        out.update(_electable(state, topic, part, mem.replicas, target))
    return out


def _electable(state: ClusterState, topic: str, part: Partition, assignment: tuple[int, ...],
               target: tuple[int, ...]) -> dict[str, bool]:
    """Kafka 3.9.2's PartitionLeaderElectionAlgorithms over the controller's assignment (its memory: the full
    replica list) and the partition's ISR, "live" being the model's live brokers: offline (the first live in-sync
    replica; with the topic's unclean.leader.election.enable, else the first live replica), reassign (the first
    live in-sync replica of the target), controlled shutdown (the first live in-sync replica that is not shutting
    down — doControlledShutdown elects only the partitions the shutting-down broker leads, so it is the leader)."""
    live = [b for b in assignment if state.is_active(b)]
    isr = set(part.isr)
    unclean = bool(getattr(state.topic(topic), "unclean_leader_election", False))
    return {
        "offline_electable": any(b in isr for b in live) or (unclean and bool(live)),
        "reassign_electable": any(state.is_active(b) and b in isr for b in target),
        "shutdown_electable": any(b in isr and b != part.leader for b in live),
    }


def epoch_key(name: str, obs: Observation) -> tuple:
    return (name,) if name == "controller_epoch" else (name, obs.topic, obs.partition)


def compare(obs: Observation, shown: dict[str, Any], fixed: set | None) -> tuple[list[Mismatch], dict[tuple, int]]:
    """The fields where the state differs from the observation, and the epoch offsets it would fix.

    `fixed` is the set of epoch keys already fixed (None: every epoch is real, as in JSON lines).
    An epoch not fixed yet matches any value the model can be shifted up to (offset >= 0).
    """
    mismatches: list[Mismatch] = []
    offsets: dict[tuple, int] = {}
    for name, value in obs.fields:
        model = shown.get(name, NA)
        if model is NA:
            continue
        if name == "isr":
            if frozenset(value) != model:
                mismatches.append(Mismatch(name, value, model))
        elif name in EPOCH_FIELDS and fixed is not None and epoch_key(name, obs) not in fixed:
            off = value - model
            if off < 0:
                mismatches.append(Mismatch(name, value, f"{model} (more bumps than the line allows)"))
            else:
                offsets[epoch_key(name, obs)] = off
        elif model != value:
            mismatches.append(Mismatch(name, value, model))
    return mismatches, offsets


def shift(state: ClusterState, offsets: dict[tuple, int]) -> ClusterState:
    """The state with its epochs moved by the offsets (the model's epochs → the run's)."""
    for key, off in offsets.items():
        if not off:
            continue
        if key[0] == "controller_epoch":
            if state.zk is not None:
                state = replace(state, zk=replace(state.zk, epoch=state.zk.epoch + off))
            continue
        name, topic, partition = key
        part = state.partition(topic, partition)
        state = state.with_partition(topic, partition, replace(part, **{name: getattr(part, name) + off}))
    return state


def shift_partition(part: Partition, offsets: dict[tuple, int]) -> Partition:
    for key, off in offsets.items():
        if off and key[0] in ("leader_epoch", "partition_epoch"):
            part = replace(part, **{key[0]: getattr(part, key[0]) + off})
    return part


def _core(p: Partition) -> tuple:
    return p.leader, frozenset(p.isr), p.leader_epoch, p.partition_epoch


def _strip(state: ClusterState, like: ClusterState) -> ClusterState:
    """Compare as much as the observed state shows: a trace without the controller's fields (zk,
    kip236 = null) is compared on the brokers and topics only."""
    if like.zk is None and state.zk is not None:
        state = replace(state, zk=None)
    if like.kip236 is None and state.kip236 is not None:
        state = replace(state, kip236=None)
    return state


def absent(obs: Observation, state: ClusterState, partial: Partition | None = None) -> list[Mismatch]:
    """A line about a partition this state does not have (a deleted topic, a partition no logged
    CreatePartitions added): the line cannot match it — a mismatch, never a vacuous match."""
    if obs.topic is None or obs.state is not None or partial is not None \
            or state.partition(obs.topic, obs.partition) is not None:
        return []
    return [Mismatch("partition", f"{obs.topic}-{obs.partition}", "no such partition")]


def state_mismatches(observed: ClusterState, state: ClusterState) -> list[Mismatch]:
    stripped = _strip(state, observed)
    if stripped == observed:
        return []
    return [Mismatch("state", d, "") for d in field_diff(to_json(observed), to_json(stripped), left="trace", right="model")]


def _same_response(model_response: Any, logged: Any) -> bool:
    if logged is None:
        return True
    logged = {k: v for k, v in logged.items() if k != "type"} if isinstance(logged, dict) else logged
    return to_json(model_response) == logged


# -- the search ---------------------------------------------------------------------------------------


class SearchLimitReached(Exception):
    pass


_INDEX: dict[int, tuple[tuple, dict]] = {}  # id(tuple of controller entries) -> (the tuple, entries by partition)


class Projection:
    """One partition's view of a cluster: the brokers, that partition alone (as partition 0 of its topic)
    and the controller's entries about it. The search for a line about one partition runs on this small
    state; every explanation found is then replayed on the whole cluster (`lift`) and checked again, so
    the projection only decides where to look, never what is accepted."""

    def __init__(self, topic: str, partition: int):
        self.topic, self.partition = topic, partition

    def _mine(self, entries: tuple) -> tuple:
        if not entries:
            return entries
        index = _INDEX.get(id(entries))
        if index is None or index[0] is not entries:  # index the (shared, immutable) tuple once
            if len(_INDEX) > 256:
                _INDEX.clear()
            by_tp: dict[tuple, list] = {}
            for e in entries:
                by_tp.setdefault((e[0], e[1]), []).append((e[0], 0) + tuple(e[2:]))
            index = _INDEX[id(entries)] = (entries, {k: tuple(v) for k, v in by_tp.items()})
        return index[1].get((self.topic, self.partition), ())

    def state(self, full: ClusterState) -> ClusterState:
        t = full.topic(self.topic)
        part = t.partitions[self.partition]
        zk, kip = full.zk, full.kip236
        if zk is not None:  # every per-partition table of the controller, this partition's entries only
            zk = replace(zk, memory=self._mine(zk.memory), being_reassigned=self._mine(zk.being_reassigned),
                         admin_znode=self._mine(zk.admin_znode), pending=self._mine(zk.pending))
            if getattr(zk, "leadership", None):
                zk = replace(zk, leadership=self._mine(zk.leadership))
        if kip is not None:
            kip = Kip236Admin(kip.cancel_marker, self._mine(kip.extra), self._mine(kip.routes))
        hosted, throttles = full.hosted, full.throttles
        if hosted is not None:  # the brokers' logs of this partition (b, topic, 0)
            hosted = tuple((b, t.name, 0) for b, tt, i in hosted if (tt, i) == (self.topic, self.partition))
        if throttles is not None:
            throttles = replace(throttles, leader=self._throttled(throttles.leader),
                                follower=self._throttled(throttles.follower))
        return ClusterState(full.brokers, (Topic(t.name, (part,), t.unclean_leader_election),), zk, kip,
                            throttles, hosted)

    def _throttled(self, entries: tuple) -> tuple:
        return tuple((t, 0, b) for t, i, b in entries if (t, i) == (self.topic, self.partition))

    def action(self, a: Any) -> Any:
        """A projected action as the whole cluster's."""
        if getattr(a, "topic", None) == self.topic and getattr(a, "partition", None) == 0:
            return replace(a, partition=self.partition)
        return a

    def key(self, key: tuple) -> tuple:
        return key if len(key) == 1 else (key[0], key[1], self.partition)

    def targets(self, targets: Iterable[tuple[str, int, tuple[int, ...]]]) -> tuple:
        return tuple((t, 0, r) for t, i, r in targets if (t, i) == (self.topic, self.partition))


class Validator:
    """Candidate-set search over one profile (see the module docstring)."""

    def __init__(self, profile: Profile, observations: Sequence[Observation], limits: SearchLimits,
                 *, shift_epochs: bool, targets: Iterable[tuple[str, int, tuple[int, ...]]] = (),
                 partitions: Iterable[tuple[str, int]] | None = None, project: bool = True):
        self.profile = profile
        self.obs = list(observations)
        self.limits = limits
        self.shift_epochs = shift_epochs
        self.fixed: set | None = set() if shift_epochs else None
        # unlogged actions only touch the partitions the trace is about (a Kafka log's placeholders are left alone)
        self.partitions = set(partitions) if partitions is not None else {
            (o.topic, o.partition) for o in self.obs if o.topic is not None}
        supports_znode = type(profile).znode_reassign is not _BaseProfile.znode_reassign
        self.space = ActionSpace(
            targets=tuple(targets), reassign=True, cancel=True, isr_changes=True, failures=True, failover=True,
            elections=tuple(limits.elections), znode=supports_znode,
        )
        self.bounds = self._future_bounds()
        self.searched = 0
        self.truncated = False
        self.project = project  # search lines about one partition on its projection (Projection)
        # a partition's first observation may be its initial state itself (creation, or a log starting mid-life)
        self.first: set[int] = set()
        seen_tp: set = set()
        for k, o in enumerate(self.obs):
            if o.topic is not None and o.action is None and o.state is None and (o.topic, o.partition) not in seen_tp:
                seen_tp.add((o.topic, o.partition))
                self.first.add(k)
        self.focus: tuple[str, int] | None = None  # the partition the current observation is about
        self.hint_focus: tuple[str, int] | None = None  # what candidate hashes look at (see Cand.hint)
        self.refused = ""  # why the reference refused the last logged action, if it did
        self.missing = ""  # why the last line matched no candidate: the partition is in none of them

    # epochs only grow: a state whose epoch is above what a later line shows cannot lead there. This holds
    # for epochs not fixed yet too: the run's epoch is the model's plus an offset >= 0.
    def _future_bounds(self) -> dict[tuple, tuple[list[int], list[int]]]:
        """Per epoch key: the observations that show it and the minimum shown from each on (suffix minima)."""
        where: dict[tuple, tuple[list[int], list[int]]] = {}
        for k, o in enumerate(self.obs):
            for key, value in _epochs_of(o).items():
                idx, vals = where.setdefault(key, ([], []))
                idx.append(k)
                vals.append(value)
        for idx, vals in where.values():
            for j in range(len(vals) - 2, -1, -1):
                vals[j] = min(vals[j], vals[j + 1])
        return where

    def _bound(self, key: tuple, k: int) -> int | None:
        entry = self.bounds.get(key)
        if entry is None:
            return None
        idx, vals = entry
        j = bisect_left(idx, k)
        return vals[j] if j < len(idx) else None

    def _pruned(self, state: ClusterState, k: int, proj: Projection | None = None) -> bool:
        zk = state.zk
        if zk is not None:
            b = self._bound(("controller_epoch",), k)
            if b is not None and zk.epoch > b:
                return True
        for t, i, p in state.partitions():
            if proj is not None:
                i = proj.partition
            for name in ("leader_epoch", "partition_epoch"):
                b = self._bound((name, t, i), k)
                if b is not None and getattr(p, name) > b:
                    return True
        return False

    def _actions(self, state: ClusterState, space: ActionSpace | None = None) -> list[Any]:
        """Unlogged actions: on the partition the line is about, or cluster-wide (brokers, controller).
        Actions on other partitions commute with these in the model and are left to those partitions' lines."""
        out = []
        focus = self.focus
        projected = space is not None and space is not self.space  # a projection holds the focus alone
        for a in self.profile.enabled_actions(state, space or self.space) + self._capability_actions(state):
            if not CAPABILITIES.allows(state, a):  # a follower without the partition's log cannot join the ISR
                continue
            t = getattr(a, "topic", None)
            if t is not None and hasattr(a, "partition") and not projected and (
                    (t, a.partition) not in self.partitions or (focus is not None and (t, a.partition) != focus)):
                continue
            out.append(a)
        return out

    @staticmethod
    def _capability_actions(state: ClusterState) -> list[Any]:
        """Unlogged actions of the capabilities the state shows (reference/capabilities.py): brokers acting
        on the metadata they replayed (with `hosted`), --verify run periodically (with `throttles`), the zk
        controller resuming a topic deletion the state has queued (`zk.deleting`)."""
        out: list[Any] = []
        if state.hosted is not None:
            out += [A.BrokerReplay(b.id) for b in state.brokers if b.registered and b.active
                    and CAPABILITIES.replicas.replay_changes(state, b.id)]
        if state.throttles is not None:
            out += [A.ToolVerify(t, i) for t, i, _ in state.partitions()]
        if state.zk is not None and state.zk.deleting:  # zk: the controller resumes a queued deletion
            out += topic_deletion_actions(state, ())
        if state.broker_isr is not None:  # the leaders' ISR maintenance and the followers' fetches (broker_isr)
            out += CAPABILITIES.isr.enabled(state)
        return out

    @staticmethod
    def _spend(used: tuple[int, int, int], action: Any, limits: SearchLimits) -> tuple[int, int, int] | None:
        name = type(action).__name__
        r, f, o = used
        if name in REQUESTS:
            r += 1
        elif name == "BrokerFail":
            f += 1
        elif name == "ControllerFailover":
            o += 1
        if r > limits.max_requests or f > limits.max_failures or o > limits.max_failovers:
            return None
        return r, f, o

    def _step_name(self, state: ClusterState, action: Any) -> str:
        if state.zk is not None and type(action).__name__ == "ControllerStep":
            return C.next_step(state.zk, action.topic, action.partition) or ""
        return ""

    def _apply(self, state: ClusterState, action: Any):
        if not CAPABILITIES.allows(state, action):
            self.refused = f"the reference refuses {action}: broker {action.broker} does not host the log yet"
            return None
        try:  # the profile's step, or a capability's (ToolExecute, CreatePartitions, BrokerReplay, ...)
            return CAPABILITIES.apply(self.profile, state, action)
        except (InvalidAction, ActionNotSupported, ValueError) as e:  # the reference refuses it here
            self.refused = f"the reference refuses {action}: {e}"
            return None

    # one observation ---------------------------------------------------------------------------------
    def step(self, k: int, cands: dict[Cand, Link]) -> tuple[dict[Cand, Link], Closest | None]:
        obs = self.obs[k]
        found: dict[Cand, Link] = {}
        best: list = [None]  # (score, Closest)

        def consider(mism: list[Mismatch], state: ClusterState, partial: Partition | None, acts: tuple,
                     steps: tuple = (), proj: Projection | None = None, root: Cand | None = None) -> None:
            score = (len(mism), len(acts))
            if best[0] is None or score < best[0][0]:
                best[0] = (score, Closest(state, partial, acts, mism, steps), proj, root)

        def accept(cand: Cand, link: Link) -> None:
            if cand not in found:
                found[cand] = link

        self.refused = ""
        self.missing = ""
        self.focus = (obs.topic, obs.partition) if obs.topic is not None and obs.action is None else None
        self.hint_focus = (obs.topic, obs.partition) if obs.topic is not None and obs.state is None else None
        def closest() -> Closest | None:
            if best[0] is None:
                return None
            _, c, proj, root = best[0]
            if proj is not None:  # shown on the whole cluster
                full, acts = root.state, []
                for a in c.actions:
                    a = proj.action(a)
                    step = self._apply(full, a)
                    if step is None:
                        break
                    full = step.state
                    acts.append(a)
                c = Closest(full, c.partial, tuple(acts), c.mismatches, c.steps)
            return c

        if obs.action is not None:  # a logged action: exactly this action, from every candidate
            for c in cands:
                if c.partial is not None:
                    continue
                step = self._apply(c.state, obs.action)
                if step is None:
                    continue
                mism = self._match_full(obs, step.state)
                if not _same_response(step.response, obs.response):
                    mism.append(Mismatch("response", obs.response, to_json(step.response)))
                consider(mism, step.state, None, (obs.action,))
                if not mism:
                    accept(self._cand(step.state), Link(c, (obs.action,), (self._step_name(c.state, obs.action),), {},
                                                  _bumped(c.state, step.state)))
            return found, closest()

        if obs.removed_replica is not None:  # continue a step whose writes are being observed
            for c, link in cands.items():
                if c.partial is None or (c.topic, c.partition) != (obs.topic, obs.partition):
                    continue
                self._substep(obs, c, c.state, c.partial, (), (), accept, consider, parent=c, bumped=link.bumped)

        seen: set = set()
        removal = obs.removed_replica is not None
        # a line about one partition is searched on that partition's projection (see Projection)
        proj = Projection(obs.topic, obs.partition) if obs.topic is not None and obs.state is None and not removal \
            and self.project else None
        space = self.space if proj is None else replace(self.space, targets=proj.targets(self.space.targets))
        frontier: list[tuple[ClusterState, tuple, tuple, tuple[int, int, int], Cand, frozenset]] = []
        lacking = 0  # candidates without the line's partition: no unlogged action creates one
        for c, link in cands.items():
            if c.partial is not None:
                continue
            gone = absent(obs, c.state)
            if gone:
                lacking += 1
                consider(gone, c.state, None, ())
                continue
            start = c.state if proj is None else proj.state(c.state)
            key = (start, (0, 0, 0))
            if key not in seen:
                seen.add(key)
                frontier.append((start, (), (), (0, 0, 0), c, link.bumped))
        if lacking and not frontier:
            self.missing = (f"{obs.topic}-{obs.partition} exists in no state the profile allows here (only a logged "
                            "CreatePartitions adds a partition; a deleted topic's partitions are gone)")
            return found, closest()
        limits = self.limits
        initial: dict[Cand, Link] = {}  # the first observation of a partition matching its state as it is
        seen_keys = frozenset(epoch_key(name, obs) for name, _ in obs.fields if name in EPOCH_FIELDS)
        written_by_last = frozenset(
            (name, obs.topic, obs.partition) for name in ("leader_epoch", "partition_epoch"))
        for depth in range(limits.max_unlogged + 1):
            if not removal or depth == 0:
                for state, acts, steps, used, root, bumped in frontier:
                    if removal and not (bumped & written_by_last):
                        # an ISR removal already written by the last step (a broker failure writes several
                        # partitions in one model step, Kafka logs each): only then without a new action
                        continue
                    mism, offsets = self._match(obs, state) if proj is None else compare(
                        obs, view(state, obs.topic, 0), self.fixed)
                    if not mism and proj is not None and acts:  # replay on the whole cluster, check again
                        lifted = self._lift(root.state, acts, obs, bumped)
                        if lifted is None:
                            mism = [Mismatch("projection", "the same actions on the whole cluster", "differ")]
                        else:
                            state, acts, bumped, offsets = lifted
                    elif proj is not None and not acts:
                        state = root.state
                    if not mism and not self._written(obs, offsets, bumped):
                        if depth == 0 and k in self.first:
                            initial.setdefault(self._cand(shift(state, offsets)),
                                               Link(root, acts, steps, offsets, bumped - seen_keys))
                        mism = [Mismatch("epochs", "written by the last action",
                                         "the last action did not write them")]
                    consider(mism, state, None, acts, steps, proj, root)
                    if not mism:
                        accept(self._cand(shift(state, offsets)), Link(root, acts, steps, offsets, bumped - seen_keys))
                if initial:
                    # a partition's first line (its creation, or where the log starts in its life) shows its
                    # initial state: legal as it is, before any write the log does not show
                    found.update(initial)
                    break
                if (found and limits.shortest) or depth == limits.max_unlogged:
                    break  # the fewest unlogged actions that explain the line
            nxt_frontier = []
            for state, acts, steps, used, root, bumped in frontier:
                for a in self._actions(state, space):
                    used2 = self._spend(used, a, limits)
                    if used2 is None:
                        continue
                    step = self._apply(state, a)
                    if step is None:
                        continue
                    s2 = step.state
                    acts2, steps2 = acts + (a,), steps + (self._step_name(state, a),)
                    if removal:
                        part = state.partition(obs.topic, obs.partition)
                        if part is not None:
                            self._substep(obs, Cand(s2, part, obs.topic, obs.partition), s2, part, acts2, steps2,
                                          accept, consider, parent=root, bumped=bumped | _bumped(state, s2))
                    if depth == limits.max_unlogged or s2 == state or self._pruned(s2, k, proj):
                        continue
                    bumped2 = _bumped(state, s2)
                    if proj is not None:
                        bumped2 = frozenset(proj.key(b) for b in bumped2)
                    key = (s2, used2)
                    if key in seen:
                        continue
                    seen.add(key)
                    self.searched += 1
                    if len(seen) > limits.max_states:
                        raise SearchLimitReached(
                            f"more than {limits.max_states:,} states between two observations (--max-states)")
                    nxt_frontier.append((s2, acts2, steps2, used2, root, bumped | bumped2))
            if (found and limits.shortest) or not nxt_frontier:
                break
            frontier = nxt_frontier
        if not found and initial:
            found.update(initial)  # no action explains it: the log starts in this partition's life here
        if limits.shortest and len(found) > limits.max_candidates:  # --all-explanations stays complete
            self.truncated = True
            found = dict(list(found.items())[:limits.max_candidates])
        return found, closest()

    def _cand(self, state: ClusterState, partial: Partition | None = None, topic: str | None = None,
              partition: int | None = None) -> Cand:
        focus = self.hint_focus
        if focus is None:
            hint = hash((state.brokers, state.zk))
        else:
            hint = hash((state.brokers, state.zk.epoch if state.zk is not None else None,
                         state.partition(*focus)))
        return Cand(state, partial, topic, partition, hint)

    def _lift(self, full: ClusterState, acts: tuple, obs: Observation, bumped: frozenset):
        """Replay projected actions on the whole cluster: (state, actions, written keys, offsets) if the line
        still matches there, else None."""
        proj = Projection(obs.topic, obs.partition)
        out = []
        for a in acts:
            a = proj.action(a)
            step = self._apply(full, a)
            if step is None:
                return None
            bumped = bumped | _bumped(full, step.state)
            full = step.state
            out.append(a)
        mism, offsets = self._match(obs, full)
        if mism:
            return None
        return full, tuple(out), bumped, offsets

    def _written(self, obs: Observation, offsets: dict[tuple, int], bumped: frozenset) -> bool:
        """The first line carrying a partition's epochs is logged after the write that set them (every
        such Kafka line is): one of them must have been written by an action not observed since.
        Without this, an unfixed epoch would match before the write as well as after it."""
        new = [key for key in offsets if key[0] != "controller_epoch"]
        return not new or any(key in bumped for key in new)

    def _substep(self, obs: Observation, c: Cand, end: ClusterState, part: Partition, acts: tuple, steps: tuple,
                 accept, consider, parent: Cand, bumped: frozenset = frozenset()) -> None:
        """An OfflineReplica ISR removal written inside a step (U's stopped replicas, B4's removing
        replicas, a failover's dead brokers): apply the reference's remove_replica_from_isr to the
        partition as written so far; the step is over when that reaches the step's end state."""
        written = remove_replica_from_isr(part, obs.removed_replica)
        if written is part:
            return
        after = end.partition(obs.topic, obs.partition)
        if after is None or (obs.removed_replica in after.isr and obs.removed_replica not in written.isr):
            return  # the step keeps this replica in the ISR: a write that removes it is not one of its writes
        # (the last ISR member stays in the ISR with leader -1: KafkaController.doRemoveReplicasFromIsr, 3.9.2)
        mism, offsets = self._match(obs, end, written)
        consider(mism, end, written, acts, steps)
        if mism:
            return
        end_s = shift(end, offsets)
        written_s = shift_partition(written, offsets)
        # the partition's own epochs are observed by this line; the step's other writes are still to be seen
        mine = frozenset((name, obs.topic, obs.partition) for name in ("leader_epoch", "partition_epoch"))
        link = Link(parent, acts, steps, offsets, bumped - mine)
        if _core(written_s) == _core(end_s.partition(obs.topic, obs.partition)):
            accept(self._cand(end_s), link)
        else:
            accept(self._cand(end_s, written_s, obs.topic, obs.partition), link)

    def _match(self, obs: Observation, state: ClusterState, partial: Partition | None = None):
        if obs.state is not None:
            return self._match_full(obs, state), {}
        return absent(obs, state, partial) or compare(obs, view(state, obs.topic, obs.partition, partial),
                                                      self.fixed)

    def _match_full(self, obs: Observation, state: ClusterState) -> list[Mismatch]:
        if obs.state is not None:
            return state_mismatches(obs.state, state)
        return absent(obs, state) or compare(obs, view(state, obs.topic, obs.partition), self.fixed)[0]

    def run(self, initial: ClusterState) -> tuple[bool, list[dict[Cand, Link]], int | None, Closest | None, str, bool]:
        """(valid?, candidate layers, index of the failing observation, closest state, reason, inconclusive?)"""
        layers: list[dict[Cand, Link]] = [{Cand(initial): Link(None, (), (), {})}]
        for k, obs in enumerate(self.obs):
            try:
                found, closest = self.step(k, layers[-1])
            except SearchLimitReached as e:
                return False, layers, k, None, str(e), True
            if not found:
                refused = self.refused if obs.action is not None and closest is None else ""
                return False, layers, k, closest, self.missing or refused, False
            if self.fixed is not None:
                for name, _ in obs.fields:
                    if name in EPOCH_FIELDS:
                        self.fixed.add(epoch_key(name, obs))
            layers.append(found)
        return True, layers, None, None, "", False


def _bumped(before: ClusterState, after: ClusterState) -> frozenset:
    """The (epoch, topic, partition) keys an action changed."""
    out = set()
    if before.topics is after.topics:
        return frozenset()
    for tb, ta in zip(before.topics, after.topics):
        if tb is ta:
            continue
        for i, (p, q) in enumerate(zip(tb.partitions, ta.partitions)):
            if p is q:
                continue
            if p.leader_epoch != q.leader_epoch:
                out.add(("leader_epoch", ta.name, i))
            if p.partition_epoch != q.partition_epoch:
                out.add(("partition_epoch", ta.name, i))
    return frozenset(out)


def _epochs_of(obs: Observation) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for name, value in obs.fields:
        if name in EPOCH_FIELDS:
            out[epoch_key(name, obs)] = value
    if obs.state is not None:
        for t, i, p in obs.state.partitions():
            out[("leader_epoch", t, i)] = p.leader_epoch
            out[("partition_epoch", t, i)] = p.partition_epoch
        if obs.state.zk is not None:
            out[("controller_epoch",)] = obs.state.zk.epoch
    return out


# -- initial state --------------------------------------------------------------------------------------


def infer_initial_state(parsed: ParsedLog, unknown: list[tuple[str, int]] | None = None) -> tuple[ClusterState, list[str]]:
    """The cluster before a Kafka log's first line, from what its first lines say (docs/validate-trace.md).

    Brokers: every id an assignment or a controller request names, all live. Per partition:
    replicas = the origin of the first assignment logged (replicas − adding: the log starts
    at the reassignment's first write), else the first ISR; leader = the first leader logged
    (if a replica), else replicas[0]; ISR = the first ISR logged, restricted to the replicas
    and holding the leader, else every replica. Epochs start at 0 and are shifted to the
    run's at the first line that carries each one (controller epoch: 1, then shifted). A
    partition whose creation is logged (`New topics: ...`, `... to NewPartition with assigned
    replicas ...`) starts with the replicas created. A partition no line gives replicas or an
    ISR for is appended to `unknown` (when given) and left out, else refused.
    """
    notes: list[str] = []
    by_tp: dict[tuple[str, int], list[Observation]] = {}
    for o in parsed.observations:
        if o.topic is not None:
            by_tp.setdefault((o.topic, o.partition), []).append(o)
    if not by_tp:
        raise TraceFormatError("no line names a partition: nothing to validate")
    brokers = set(parsed.broker_ids)
    topics: dict[str, dict[int, Partition]] = {}
    for (t, i), obs in sorted(by_tp.items()):
        replicas = None
        created = parsed.created.get((t, i))
        if created is not None:
            replicas = created[0]
            notes.append(f"{t}-{i}: replicas {_fmt(replicas)} as created at line {created[1]}")
        for o in ([] if replicas is not None else obs):
            if o.get("replicas") is not None:
                replicas = tuple(b for b in o.get("replicas") if b not in set(o.get("adding") or ()))
                notes.append(f"{t}-{i}: replicas {_fmt(replicas)} = the origin (replicas - adding) of line {o.line}")
                break
            if o.get("memory_replicas") is not None:
                replicas = tuple(b for b in o.get("memory_replicas") if b not in set(o.get("memory_adding") or ()))
                notes.append(f"{t}-{i}: replicas {_fmt(replicas)} = the origin of the assignment of line {o.line}")
                break
        first_isr = next((o for o in obs if o.get("isr") is not None), None)
        if replicas is None:
            if first_isr is None and unknown is not None:
                unknown.append((t, i))
                continue
            if first_isr is None:
                raise TraceFormatError(f"{t}-{i}: no line gives its replicas or ISR: cannot infer the initial state")
            replicas = tuple(first_isr.get("isr"))
            notes.append(f"{t}-{i}: replicas {_fmt(replicas)} = the ISR of line {first_isr.line} (no assignment logged)")
        first_leader = next((o for o in obs if o.get("leader") is not None), None)
        leader = replicas[0]
        if first_leader is not None and first_leader.get("leader") in replicas:
            leader = first_leader.get("leader")
            notes.append(f"{t}-{i}: leader {leader} from line {first_leader.line}")
        else:
            notes.append(f"{t}-{i}: leader {leader} = the first replica (no leader logged among the replicas)")
        isr = tuple(replicas)
        if first_isr is not None:
            candidate = tuple(b for b in first_isr.get("isr") if b in replicas)
            if leader in candidate:
                isr = candidate
                notes.append(f"{t}-{i}: ISR {_fmt(isr)} from line {first_isr.line}")
        if isr == tuple(replicas) and (first_isr is None or leader not in first_isr.get("isr")):
            notes.append(f"{t}-{i}: ISR = every replica (no usable ISR logged)")
        brokers.update(replicas)
        topics.setdefault(t, {})[i] = Partition(replicas=tuple(replicas), isr=isr, leader=leader)
    if not topics:
        raise TraceFormatError("no partition's replicas or ISR can be inferred: nothing to validate")
    topic_values = []
    for name in sorted(topics):
        parts = topics[name]
        filler = min(brokers)
        rows = []
        for i in range(max(parts) + 1):
            rows.append(parts.get(i, Partition(replicas=(filler,), isr=(filler,), leader=filler)))
            if i not in parts:
                notes.append(f"{name}-{i}: not in the log; a placeholder with replicas [{filler}]")
        topic_values.append(Topic(name=name, partitions=tuple(rows)))
    notes.append("brokers " + _fmt(sorted(brokers)) + ": every id an assignment or a controller request names, all live")
    notes.append("epochs: fixed by the first line that carries each (the model's epochs shifted by a constant)")
    cluster = ClusterState(brokers=tuple(Broker(b) for b in sorted(brokers)), topics=tuple(topic_values))
    return cluster, notes


def targets_of(observations: Iterable[Observation], initial: ClusterState) -> list[tuple[str, int, tuple[int, ...]]]:
    """The reassignment targets the unlogged admin requests may use: those the trace shows."""
    out: list[tuple[str, int, tuple[int, ...]]] = []

    def add(t: str, i: int, target: Iterable[int]) -> None:
        row = (t, i, tuple(target))
        if row[2] and row not in out:
            out.append(row)

    for o in observations:
        if o.topic is not None:
            replicas, removing = o.get("replicas"), o.get("removing")
            if replicas is not None and (removing or o.get("adding")):
                add(o.topic, o.partition, [b for b in replicas if b not in set(removing or ())])
            mem, mrem = o.get("memory_replicas"), o.get("memory_removing")
            if mem is not None:
                add(o.topic, o.partition, [b for b in mem if b not in set(mrem or ())])
            if o.get("memory_target"):
                add(o.topic, o.partition, o.get("memory_target"))
        if o.action is not None and type(o.action).__name__ in ("Reassign", "ZnodeReassign", "ToolExecute"):
            add(o.action.topic, o.action.partition, o.action.replicas)
        if o.state is not None:
            for t, i, p in o.state.partitions():
                if p.reassigning:
                    add(t, i, p.target)
    return out


# -- JSON lines ------------------------------------------------------------------------------------------


def _kafka_limits(n: int, where: str, found: tuple[str, str] | None) -> None:
    """A name or number Kafka itself would refuse (spec/kafka_limits.py): bad input, naming line and field."""
    if found is not None:
        raise TraceFormatError(f"line {n}: {where}.{found[0]}: {found[1]}")


def parse_jsonl(text: str) -> tuple[ClusterState, str | None, list[Observation], int, dict[str, str]]:
    """(initial state, profile named by the file or None, observations, lines, release) of a JSON-lines trace;
    `release`: the header's "kafka_version" and "elr" (kraft), when it names them.

    Every error is a TraceFormatError (exit 2) naming the line and the field. Besides the format, Kafka's own
    limits (spec/kafka_limits.py): a state holding a topic name Topic.validate refuses or an id or epoch that
    is negative or beyond Java's int; an action with a number beyond int32 (a bad name or a negative id in an
    action is what a client may send, and Kafka's error answer is the reference's to reproduce); an observe
    line with such a topic, partition, broker id, leader or epoch.

    An observe line about a topic the initial state lacks is bad input too (exit 2), not a rejection: the
    model has no action that creates a topic (CreatePartitions grows an existing one), so the initial state
    of a JSON-lines trace must hold every topic the trace observes; a trace that leaves one out is
    incomplete, and no verdict about the run could be drawn from it. A partition beyond the topic's count in
    the initial state is a legitimate observation (a logged CreatePartitions may add it): when no candidate
    state has it, the line is rejected, INVALID, with that reason (`Validator.step`)."""
    initial: ClusterState | None = None
    profile_name: str | None = None
    release: dict[str, str] = {}
    obs: list[Observation] = []
    lines = text.splitlines()
    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise TraceFormatError(f"line {n}: invalid JSON at column {e.colno}: {e.msg}") from None
        if not isinstance(data, dict):
            raise TraceFormatError(f"line {n}: expected a JSON object")
        if initial is None:
            unknown = set(data) - {"initial_state", "profile", "kafka_version", "elr"}
            if "initial_state" not in data or unknown:
                raise TraceFormatError(f"line {n}: the first line must be {{\"initial_state\": STATE}} "
                                       f"(optionally with \"profile\", \"kafka_version\", \"elr\"), got keys "
                                       f"{sorted(data)}")
            for key in ("kafka_version", "elr"):
                if key in data:
                    if not isinstance(data[key], str):
                        raise TraceFormatError(f"line {n}: {key}: expected a string")
                    release[key] = data[key]
            try:
                initial = state_from_json(data["initial_state"], )
            except DecodeError as e:
                raise TraceFormatError(f"line {n}: initial_state.{e}") from None
            _kafka_limits(n, "initial_state", state_problem(initial))
            profile_name = data.get("profile")
            if profile_name is not None and not isinstance(profile_name, str):
                raise TraceFormatError(f"line {n}: profile: expected a string")
            continue
        unknown = set(data) - {"action", "state", "observe", "response"}
        if unknown:
            raise TraceFormatError(f"line {n}: unknown key(s) {sorted(unknown)} (action, state, observe, response)")
        if ("state" in data) == ("observe" in data):
            raise TraceFormatError(f"line {n}: needs exactly one of \"state\" (a full state) and \"observe\" (some fields)")
        action = None
        if "action" in data:
            try:
                action = decode_action(data["action"], "action")
            except DecodeError as e:
                raise TraceFormatError(f"line {n}: {e}") from None
            _kafka_limits(n, "action", action_problem(action))
        if "response" in data and action is None:
            raise TraceFormatError(f"line {n}: a \"response\" needs the \"action\" it answers")
        if "state" in data:
            try:
                state = state_from_json(data["state"])
            except DecodeError as e:
                raise TraceFormatError(f"line {n}: state.{e}") from None
            _kafka_limits(n, "state", state_problem(state))
            obs.append(Observation(n, line, action=action, state=state, response=data.get("response"),
                                   what="action and state" if action is not None else "state"))
        else:
            observed = _observe(n, line, data["observe"], action, data.get("response"))
            if observed.topic is not None and initial.topic(observed.topic) is None:
                known = ", ".join(repr(t.name) for t in initial.topics[:5]) or "none"
                raise TraceFormatError(
                    f"line {n}: observe.topic: topic {observed.topic!r} is not in the initial state (its topics: "
                    f"{known}); the model creates no topics, so the initial state must hold every topic observed")
            obs.append(observed)
    if initial is None:
        raise TraceFormatError("empty trace: the first line must be {\"initial_state\": STATE}")
    return initial, profile_name, obs, len(lines), release


OBSERVABLE = {
    "replicas": "ids", "adding": "ids", "removing": "ids", "isr": "ids", "leader": "int",
    "leader_epoch": "int", "partition_epoch": "int", "controller_epoch": "int",
    "memory_replicas": "ids", "memory_adding": "ids", "memory_removing": "ids", "memory_target": "ids",
    "target_in_isr": "bool", "next_step": "str", "leader_live": "bool", "znode_entry": "ids?", "znode_empty": "bool",
    "offline_electable": "bool", "reassign_electable": "bool", "shutdown_electable": "bool",
}


def _observed_limits(n: int, key: str, kind: str, value: Any) -> None:
    """An observed field the model's states cannot hold because Kafka cannot: broker ids >= 0, a leader that
    is a broker id or -1, epochs >= 0 (a JSON-lines trace's epochs are the real ones), all within int32."""
    if kind in ("ids", "ids?"):
        for k, b in enumerate(value or ()):
            why = broker_problem(b)
            if why is not None:
                raise TraceFormatError(f"line {n}: observe.{key}[{k}]: {why}")
        return
    why = None
    if key == "leader":
        why = leader_problem(value)
    elif key in EPOCH_FIELDS:
        why = epoch_problem(value, key.replace("_", " "))
    if why is not None:
        raise TraceFormatError(f"line {n}: observe.{key}: {why}")


def _observe(n: int, line: str, data: Any, action: Any, response: Any) -> Observation:
    if not isinstance(data, dict):
        raise TraceFormatError(f"line {n}: observe: expected an object")
    topic, partition = data.get("topic"), data.get("partition")
    if (topic is None) != (partition is None) or (topic is not None and not isinstance(topic, str)) or (
            partition is not None and (not isinstance(partition, int) or isinstance(partition, bool))):
        raise TraceFormatError(f"line {n}: observe: \"topic\" (a string) and \"partition\" (an integer) go together")
    if topic is not None:
        for key, why in (("topic", topic_problem(topic)), ("partition", partition_problem(partition))):
            if why is not None:
                raise TraceFormatError(f"line {n}: observe.{key}: {why}")
    fields = []
    for key, value in data.items():
        if key in ("topic", "partition"):
            continue
        kind = OBSERVABLE.get(key)
        if kind is None:
            raise TraceFormatError(f"line {n}: observe.{key}: unknown field (known: {', '.join(OBSERVABLE)})")
        ok = {
            "ids": isinstance(value, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in value),
            "ids?": value is None or (isinstance(value, list) and all(isinstance(b, int) for b in value)),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "str": isinstance(value, str),
        }[kind]
        if not ok:
            raise TraceFormatError(f"line {n}: observe.{key}: expected {kind}, got {json.dumps(value)}")
        _observed_limits(n, key, kind, value)
        fields.append((key, tuple(value) if isinstance(value, list) else value))
    if topic is None and any(k not in ("controller_epoch", "znode_empty") for k, _ in fields):
        raise TraceFormatError(f"line {n}: observe: partition fields need \"topic\" and \"partition\"")
    return Observation(n, line, topic, partition, tuple(fields), action=action, response=response, what="observe")


# -- entry points -----------------------------------------------------------------------------------------


def validate_observations(profile: Profile, initial: ClusterState, observations: Sequence[Observation],
                          limits: SearchLimits = SearchLimits(), *, shift_epochs: bool, fmt: str,
                          notes: Sequence[str] = ()) -> ValidationResult:
    if limits.kraft_actions:  # as `check --kraft-actions`: the profile also offers the controller's own actions
        if not hasattr(profile, "controller_actions"):
            raise UsageError(f"--kraft-actions: apply to the kraft profiles only, not {profile.name!r}")
        profile = copy(profile)  # profile() hands out one shared instance
        profile.controller_actions = tuple(a for a in CONTROLLER_ACTIONS if a in limits.kraft_actions)
    initial = profile.initial_state(initial)
    logged = {(o.topic, o.partition) for o in observations if o.topic is not None}
    everything = any(o.state is not None for o in observations) or not logged
    partitions = [(t, i) for t, i, _ in initial.partitions() if everything or (t, i) in logged]
    validator = Validator(profile, observations, limits, shift_epochs=shift_epochs,
                          targets=targets_of(observations, initial), partitions=partitions)
    ok, layers, failed_at, closest, reason, inconclusive = validator.run(initial)
    result = ValidationResult(ok, profile.name, fmt, len(observations), initial, list(notes),
                              states_searched=validator.searched)
    # one explanation of what matched (all of it when valid, the prefix before the failure otherwise)
    result.initial, result.explanation = _explain(initial, layers, observations)
    if ok:
        return result
    result.failed = observations[failed_at]
    result.previous = observations[failed_at - 1] if failed_at > 0 else None
    result.before = list(layers[-1])[:5]
    result.closest = closest
    result.truncated = validator.truncated
    result.inconclusive = inconclusive or validator.truncated
    result.reason = reason or "no state the profile allows after at most " \
        f"{limits.max_unlogged} unlogged action(s) matches this line"
    if validator.truncated and not inconclusive:
        result.reason += (f" — but candidate states were dropped beyond --max-candidates "
                          f"{limits.max_candidates}, so this is not a proof")
    return result


def _explain(initial: ClusterState, layers: list[dict[Cand, Link]], observations: Sequence[Observation]):
    """Walk back from the first candidate of the last layer: (initial state in the run's epochs, chain).

    Each state of the chain is shown in the run's epochs: shifted by the offsets fixed after it
    (the initial state by all of them)."""
    chain: list[tuple[Observation, Link, Cand]] = []
    cand = next(iter(layers[-1]))
    for k in range(len(layers) - 1, 0, -1):
        link = layers[k][cand]
        chain.append((observations[k - 1], link, cand))
        cand = link.parent
    chain.reverse()
    remaining: dict[tuple, int] = {}
    for _, link, _ in chain:
        for key, off in link.offsets.items():
            remaining[key] = remaining.get(key, 0) + off
    shown_initial = shift(initial, remaining)
    explanation = []
    remaining = {key: off for key, off in remaining.items() if off}
    for obs, link, c in chain:
        for key, off in link.offsets.items():
            if off:
                remaining[key] -= off
                if not remaining[key]:
                    del remaining[key]
        pending = remaining
        if pending:
            c = Cand(shift(c.state, pending), shift_partition(c.partial, pending) if c.partial else None,
                     c.topic, c.partition)
        explanation.append((obs, link.actions, link.steps, c))
    return shown_initial, explanation


def validate_text(text: str, fmt: str, profile: Profile | str | None = None,
                  limits: SearchLimits = SearchLimits(), kafka_version: str | None = None,
                  topics: Iterable[str] | None = None) -> ValidationResult | MetadataResult:
    """Validate a trace given as text: `fmt` is "jsonl", "kafka-log" or "kraft-metadata"; `kafka_version`:
    the release the kraft profile follows (default the newest; a metadata log's own FeatureLevelRecords
    give its metadata.version and whether ELR is on); `topics` (kraft-metadata only): check only these
    topics' records."""
    from kreassign.reference import profile as get_profile

    if fmt == "kafka-log":
        parsed = parse_log(text)
        prof = get_profile(profile or "zk") if not isinstance(profile, Profile) else profile
        if parsed.elections and not limits.elections:
            # the log shows preferred elections (auto-rebalance, admin): unlogged ones may happen
            limits = replace(limits, elections=("PREFERRED",))
        unknown: list[tuple[str, int]] = []
        observations = parsed.observations
        if any(o.topic is not None for o in observations):
            initial, notes = infer_initial_state(parsed, unknown)
        else:
            initial, notes = None, []
        not_understood = dict(parsed.outside)
        if unknown:
            gone = set(unknown)
            not_understood["partition whose replicas no line gives"] = sorted(
                {o.line for o in observations if (o.topic, o.partition) in gone})
            observations = [o for o in observations if (o.topic, o.partition) not in gone]
        if initial is None:
            result = ValidationResult(False, prof.name, fmt, 0, ClusterState(brokers=(), topics=()), notes,
                                      inconclusive=True, reason="no line of the log shows partition state the "
                                      "model can check (docs/validate-trace.md lists the shapes read)")
        else:
            result = validate_observations(prof, initial, observations, limits, shift_epochs=True,
                                           fmt=fmt, notes=notes)
        result.recognised, result.ignored, result.total_lines = parsed.recognised, parsed.ignored, parsed.total
        result.shapes, result.not_understood = dict(parsed.shapes), not_understood
        if result.valid and not_understood:
            result.valid, result.inconclusive = False, True
            result.reason = "every line checked is legal, but some lines are outside the model"
        return result
    if fmt == "kraft-metadata":
        log = parse_metadata_log(text)
        if isinstance(profile, Profile):
            prof = profile
        elif (profile or "kraft") == "kraft":
            prof = _kraft_for_log(log, kafka_version)
        else:
            prof = get_profile(profile)
        if not prof.name.startswith("kraft"):
            raise TraceFormatError(f"a KRaft metadata log is checked under a kraft profile, not {prof.name!r}")
        return check_metadata(log, prof, topics=topics)
    if fmt == "jsonl" and quota_handlers_trace.is_handlers_trace(text, profile):  # kip599-handlers[-rate]: Format 4
        return quota_handlers_trace.validate_handlers_text(text, profile, limits.max_unlogged, limits.max_states)
    if fmt == "jsonl":
        initial, named, observations, total, release = parse_jsonl(text)
        if isinstance(profile, Profile):
            prof = profile
        elif (profile or named or "kraft") == "kraft" and (kafka_version or release):
            prof = _kraft_for_jsonl(kafka_version or release.get("kafka_version"), release.get("elr"))
        else:
            prof = get_profile(profile or named or "kraft")
        result = validate_observations(prof, initial, observations, limits, shift_epochs=False, fmt=fmt)
        result.recognised, result.total_lines = len(observations) + 1, total
        return result
    raise TraceFormatError(f"unknown format {fmt!r} (jsonl, kafka-log or kraft-metadata)")


def _kraft_for_jsonl(kafka_version: str | None, elr: str | None) -> Profile:
    """The kraft profile a JSON-lines trace names (its header's kafka_version / elr), checked."""
    from kreassign.reference.kraft import KraftProfile
    from kreassign.spec.kafka_releases import parse_version

    if elr not in (None, "on", "off"):
        raise TraceFormatError(f"line 1: elr: expected \"on\" or \"off\", got {elr!r}")
    try:
        version = parse_version(kafka_version) if kafka_version else None
        return KraftProfile(kafka_version=version, elr=None if elr is None else elr == "on") if version else \
            KraftProfile(elr=None if elr is None else elr == "on")
    except ValueError as e:
        raise TraceFormatError(f"line 1: {e}") from None


def _kraft_for_log(log: Any, kafka_version: str | None) -> Profile:
    """The kraft profile at `kafka_version` (default: the newest), at the metadata.version and ELR setting
    the log's FeatureLevelRecords give (a log without its bootstrap records: the release's defaults)."""
    from kreassign.reference.kraft import KraftProfile
    from kreassign.spec import kafka_releases

    version = kafka_version or kafka_releases.NEWEST
    levels = {r.data.get("name"): r.data.get("featureLevel") for r in log.records if r.type == "FEATURE_LEVEL_RECORD"}
    mv = kafka_releases.level_name(levels["metadata.version"]) if isinstance(levels.get("metadata.version"), int) else None
    if mv is not None and mv not in kafka_releases.release(version).metadata_versions:
        raise UsageError(f"the log's metadata.version {mv} is not accepted by Kafka {version} "
                         "(name the release that wrote it with --kafka-version)")
    elr = None
    if "metadata.version" in levels:  # the bootstrap is in the log: ELR is on only if it says so
        elr = (levels.get("eligible.leader.replicas.version") or 0) >= 1
    return KraftProfile(kafka_version=version, metadata_version=mv, elr=elr)


def guess_format(text: str) -> str:
    if looks_like_metadata_log(text):
        return "kraft-metadata"
    for line in text.splitlines():
        if line.strip():
            first = line.lstrip()
            return "jsonl" if first.startswith("{") and not first.startswith('{"log":') else "kafka-log"
    return "kafka-log"


# -- rendering ------------------------------------------------------------------------------------------------


def describe_partition(state: ClusterState, topic: str, partition: int, partial: Partition | None = None) -> str:
    p = partial if partial is not None else state.partition(topic, partition)
    if p is None:  # DeleteTopic: the partition is gone; or no logged CreatePartitions made it
        return "(deleted)" if state.topic(topic) is None else "(no such partition)"
    text = (f"replicas={_fmt(p.replicas)} adding={_fmt(p.adding)} removing={_fmt(p.removing)} isr={_fmt(p.isr)} "
            f"leader={p.leader} leader_epoch={p.leader_epoch} partition_epoch={p.partition_epoch}")
    zk = state.zk
    if zk is not None:
        mem = C.memory_of(zk, topic, partition) or C.EMPTY
        step = C.next_step(zk, topic, partition)
        znode = C.znode_target(zk, topic, partition)
        text += (f" | zk: memory={_fmt(mem.replicas)}/{_fmt(mem.adding)}/{_fmt(mem.removing)}"
                 f" next_step={step or '-'} znode={_fmt(znode) if znode else '-'} controller_epoch={zk.epoch}")
    down = [b.id for b in state.brokers if not state.is_active(b.id)]
    if down:
        text += f" | brokers down {_fmt(down)}"
    if partial is not None:
        text += " (mid-step: written so far)"
    return text


def describe_state(state: ClusterState, partitions: Iterable[tuple[str, int]]) -> list[str]:
    return [f"{t}-{i}: {describe_partition(state, t, i)}" for t, i in partitions]


def action_text(action: Any, step: str) -> str:
    return f"{action}[{step}]" if step else str(action)


MAX_NOTES = 30  # initial-state notes printed (a log of many partitions has several per partition)


def _summary(result: ValidationResult) -> list[str]:
    nu = sum(len(v) for v in result.not_understood.values())
    lines = [(f"{result.total_lines} lines: {result.recognised} recognised ({result.recognised - nu} explained, "
             f"{nu} not understood), {len(result.ignored)} ignored (other loggers), {result.observations} observations")]
    for shape, n in sorted(result.shapes.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {n:>7} {shape}")
    for why, where in result.not_understood.items():
        lines.append(f"  not understood: {why}: {len(where)} line(s), first at line {where[0]}")
    return lines


def _explanation_lines(result: ValidationResult, parts: list[tuple[str, int]]) -> list[str]:
    lines = ["one explanation (unlogged actions in parentheses):"]
    for obs, acts, steps, cand in result.explanation:
        logged_last = obs.action is not None or obs.removed_replica is not None
        shown = []
        for j, (a, s) in enumerate(zip(acts, steps)):
            text = action_text(a, s)
            shown.append(text if logged_last and j == len(acts) - 1 else f"({text})")
        none = "(the same step, one more write)" if obs.removed_replica is not None else "(no action)"
        lines.append(f"  line {obs.line:>4} {obs.what}: {' '.join(shown) or none}")
        if obs.topic is not None:
            lines.append(f"            -> {obs.topic}-{obs.partition}: "
                         + describe_partition(cand.state, obs.topic, obs.partition, cand.partial))
        elif obs.state is not None:
            lines += [f"            -> {d}" for d in describe_state(cand.state, parts)]
        elif cand.state.zk is not None:
            znode = cand.state.zk.admin_znode
            lines.append(f"            -> /admin/reassign_partitions: {'empty' if not znode else znode}")
    return lines


def report(result: ValidationResult | MetadataResult, path: str) -> str:
    if isinstance(result, MetadataResult):
        return report_metadata(result, path)
    if isinstance(result, quota_handlers_trace.HandlersTraceResult):
        return quota_handlers_trace.report(result, path)
    parts = sorted({(o.topic, o.partition) for o, *_ in result.explanation if o.topic is not None})
    if not parts or any(o.state is not None for o, *_ in result.explanation):
        parts = [(t, i) for t, i, _ in result.initial.partitions()]
    lines = [f"kreassign validate-trace: {path} ({result.format}, profile {result.profile})"]
    if result.format == "kafka-log":
        lines += _summary(result)
        lines.append("initial state (inferred):")
        lines += [f"  {n}" for n in result.notes[:MAX_NOTES]]
        if len(result.notes) > MAX_NOTES:
            lines.append(f"  ... ({len(result.notes) - MAX_NOTES} more notes)")
    else:
        lines.append(f"{result.observations} observations")
    shown_parts = parts[:MAX_NOTES]
    lines += ["  " + s for s in describe_state(result.initial, shown_parts)]
    if len(parts) > len(shown_parts):
        lines.append(f"  ... ({len(parts) - len(shown_parts)} more partitions)")
    if result.valid:
        lines.append(f"VALID: every observation is reachable under {result.profile} "
                     f"({result.states_searched:,} states searched)")
        lines += _explanation_lines(result, parts)
        return "\n".join(lines)
    obs = result.failed
    if obs is None:  # inconclusive: nothing contradicts the profile, but not everything could be checked
        lines.append(f"INCONCLUSIVE: {result.reason} ({result.states_searched:,} states searched)")
        if result.explanation:
            lines += _explanation_lines(result, parts)
        return "\n".join(lines)
    verdict = "INCONCLUSIVE" if result.inconclusive else "INVALID"
    lines.append(f"{verdict} at line {obs.line}: {result.reason}")
    lines.append(f"  line {obs.line}: {obs.text}")
    if obs.fields:
        lines.append("  it says: " + ", ".join(f"{k}={_fmt(v)}" for k, v in obs.fields))
    if result.previous is not None:
        lines.append(f"  last matched: line {result.previous.line}: {result.previous.text}")
    else:
        lines.append("  last matched: the initial state")
    where = [(obs.topic, obs.partition)] if obs.topic is not None else parts
    lines.append(f"  candidate state(s) before it ({len(result.before)} shown):")
    for c in result.before:
        for t, i in where:
            lines.append(f"    {t}-{i}: " + describe_partition(c.state, t, i, c.partial if (c.topic, c.partition) == (t, i) else None))
    if result.closest is not None:
        c = result.closest
        acts = ", ".join(action_text(a, s) for a, s in zip(c.actions, c.steps or ("",) * len(c.actions))) or (
            "the same step, one more write" if c.partial is not None else "no action")
        lines.append(f"  closest state reached ({acts}):")
        if obs.topic is not None:
            lines.append("    " + f"{obs.topic}-{obs.partition}: " + describe_partition(c.state, obs.topic, obs.partition, c.partial))
        lines += [f"    differs: {m}" if m.field != "state" else f"    differs: {m.observed}" for m in c.mismatches]
    return "\n".join(lines)


def result_json(result: ValidationResult | MetadataResult, path: str) -> dict[str, Any]:
    if isinstance(result, MetadataResult):
        return metadata_json(result, path)
    if isinstance(result, quota_handlers_trace.HandlersTraceResult):
        return quota_handlers_trace.result_json(result, path)
    out: dict[str, Any] = {
        "file": path,
        "format": result.format,
        "profile": result.profile,
        "verdict": result.verdict,
        "valid": result.valid,
        "inconclusive": result.inconclusive,
        "reason": result.reason,
        "shapes": result.shapes,
        "explained_lines": result.explained_lines,
        "not_understood": result.not_understood,
        "observations": result.observations,
        "lines": result.total_lines,
        "recognised": result.recognised,
        "ignored_lines": result.ignored,
        "initial_state": to_json(result.initial),
        "initial_state_notes": result.notes,
        "states_searched": result.states_searched,
    }
    out["explanation"] = [
        {"line": o.line, "actions": [action_text(a, s) for a, s in zip(acts, steps)],
         "actions_json": [to_json(a) for a in acts], "state": to_json(c.state),
         "mid_step": to_json(c.partial) if c.partial is not None else None}
        for o, acts, steps, c in result.explanation
    ]
    if result.failed is None:
        out["failure"] = None
    else:
        o = result.failed
        closest = result.closest
        out["failure"] = {
            "line": o.line,
            "text": o.text,
            "reason": result.reason,
            "observed": {k: list(v) if isinstance(v, tuple) else v for k, v in o.fields},
            "previous_line": result.previous.line if result.previous is not None else None,
            "before": [{"state": to_json(c.state), "mid_step": to_json(c.partial) if c.partial is not None else None}
                       for c in result.before],
            "closest": None if closest is None else {
                "actions": [action_text(a, st) for a, st in zip(closest.actions, closest.steps or ("",) * len(closest.actions))],
                "state": to_json(closest.state),
                "differs": [str(m) if m.field != "state" else m.observed for m in closest.mismatches],
            },
        }
    return out


__all__ = [
    "Cand",
    "SearchLimits",
    "TraceFormatError",
    "ValidationResult",
    "Validator",
    "guess_format",
    "infer_initial_state",
    "parse_jsonl",
    "report",
    "result_json",
    "validate_observations",
    "validate_text",
]
