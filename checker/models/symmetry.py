"""Symmetry reduction over broker ids, where a profile allows it.

Renaming brokers by a permutation π is a symmetry of a model iff the reference
commutes with it (succ(π(s)) = π(succ(s))) and π fixes the initial state. The group
used here is every permutation of the brokers that hold no replica initially (they are
interchangeable: nothing distinguishes them but their ids) that also maps the set of
target lists the admin may request onto itself. With `targets = "all"` (each RF-subset
in ascending order) that is only the identity once a target holds two free brokers;
`targets = "permutations"` (every order) keeps the whole group. Profiles whose rules look
at the numeric order of ids are not symmetric: `kraft` sorts adding and removing
replicas by id and puts removing replicas into the replica list in that order, so a
renaming changes which replica is preferred or elected. A profile declares
`broker_symmetry = True` only when its rules never compare ids; the test
`tests/unit/test_symmetry.py` proves the reduction sound for each such profile by
comparing reduced and unreduced runs (same verdicts; reduced states = orbits of the
unreduced states) and shows it unsound for `kraft`.

A state is replaced by its canonical representative: the smallest of its images under
the group, compared by a key built from the JSON form. Counterexamples found on
representatives are turned back into concrete, replayable paths by `concretize`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import permutations
from typing import Any

from kreassign.spec.reassign_properties import Ghost, ModelState
from kreassign.spec.state import NO_LEADER, ClusterState, Partition

from kreassign.checker.explore.protocol import Model

#: profiles whose rules never compare broker ids (proved sound by tests/unit/test_symmetry.py);
#: kraft and kraft-3.7 sort by id, and kip236's in-flight drop rule is not renaming-invariant
SYMMETRIC_PROFILES = frozenset({"zk", "kip455"})


def _m(ids: Iterable[int], pi: dict[int, int]) -> tuple[int, ...]:
    return tuple(pi.get(b, b) for b in ids)


def rename_partition(p: Partition, pi: dict[int, int]) -> Partition:
    log = p.log
    if log is not None:
        log = replace(log, logs=tuple(sorted((pi.get(b, b), entries) for b, entries in log.logs)))
    return replace(
        p,
        replicas=_m(p.replicas, pi),
        isr=_m(p.isr, pi),
        leader=pi.get(p.leader, p.leader) if p.leader != NO_LEADER else NO_LEADER,
        adding=_m(p.adding, pi),
        removing=_m(p.removing, pi),
        original=_m(p.original, pi) if p.original is not None else None,
        log=log,
    )


def rename_cluster(c: ClusterState, pi: dict[int, int]) -> ClusterState:
    brokers = tuple(sorted((replace(b, id=pi.get(b.id, b.id)) for b in c.brokers), key=lambda b: b.id))
    topics = tuple(replace(t, partitions=tuple(rename_partition(p, pi) for p in t.partitions)) for t in c.topics)
    zk = c.zk
    if zk is not None:
        zk = replace(
            zk,
            memory=tuple((t, i, _m(r, pi), _m(a, pi), _m(d, pi)) for t, i, r, a, d in zk.memory),
            being_reassigned=tuple((t, i, _m(r, pi)) for t, i, r in zk.being_reassigned),
            admin_znode=tuple((t, i, _m(r, pi)) for t, i, r in zk.admin_znode),
        )
    k = c.kip236
    if k is not None:
        k = replace(k, extra=tuple((t, i, _m(r, pi)) for t, i, r in k.extra))
    th = c.throttles
    if th is not None:  # the reassignment tool's throttle configs name brokers too
        th = replace(
            th,
            leader=tuple(sorted((t, i, pi.get(b, b)) for t, i, b in th.leader)),
            follower=tuple(sorted((t, i, pi.get(b, b)) for t, i, b in th.follower)),
            brokers=tuple(sorted(_m(th.brokers, pi))),
        )
    hosted = c.hosted
    if hosted is not None:  # the logs brokers host
        hosted = tuple(sorted((pi.get(b, b), t, i) for b, t, i in hosted))
    req = c.requests
    if req is not None:  # zk: the requests in flight and the brokers' memory name brokers too
        req = replace(req, queues=tuple(sorted(
            (pi.get(b, b), tuple(replace(q, leader=pi.get(q.leader, q.leader) if q.leader != NO_LEADER else NO_LEADER,
                                         isr=_m(q.isr, pi), replicas=_m(q.replicas, pi), adding=_m(q.adding, pi),
                                         removing=_m(q.removing, pi)) for q in queue))
            for b, queue in req.queues)), known=tuple(sorted((pi.get(b, b), t, i, e, r) for b, t, i, e, r in req.known)))
    actors = c.actors
    if actors is not None:  # what the tools and automation remember names brokers too (bounds: actors)
        actors = replace(actors, snapshot=None if actors.snapshot is None else tuple(
            (t, i, _m(r, pi)) for t, i, r in actors.snapshot), cache=_rename_throttles(actors.cache, pi),
            written=_rename_throttles(actors.written, pi))
    return replace(c, brokers=brokers, topics=topics, zk=zk, kip236=k, throttles=th, hosted=hosted, requests=req,
                   actors=actors)


def _rename_throttles(th, pi: dict[int, int]):
    if th is None:
        return None
    return replace(th, leader=tuple(sorted((t, i, pi.get(b, b)) for t, i, b in th.leader)),
                   follower=tuple(sorted((t, i, pi.get(b, b)) for t, i, b in th.follower)),
                   brokers=tuple(sorted(_m(th.brokers, pi))))


def rename_state(s: ModelState, pi: dict[int, int]) -> ModelState:
    ghosts = tuple(
        Ghost(_m(g.original, pi) if g.original is not None else None,
              _m(g.requested, pi) if g.requested is not None else None, g.cancelled)
        for g in s.ghosts
    )
    return ModelState(rename_cluster(s.cluster, pi), ghosts, s.budget)


def _key(s: ModelState) -> tuple:
    """A total order on states for choosing the representative (dataclass reprs are deterministic)."""
    return (repr(s.cluster), repr(s.ghosts), s.budget)


def broker_group(free_brokers: Sequence[int]) -> list[dict[int, int]]:
    """Every permutation of the interchangeable brokers (the identity first)."""
    free = list(free_brokers)
    return [dict(zip(free, perm)) for perm in permutations(free)]


def canonical(s: ModelState, group: list[dict[int, int]]) -> ModelState:
    if len(group) <= 1:
        return s
    return min((rename_state(s, pi) for pi in group), key=_key)


class SymmetryReduced(Model):
    """A model explored on canonical representatives of broker-renaming orbits."""

    def __init__(self, model: Any):
        self.inner = model
        self.name = model.name
        initial = set()
        for s in model.init_states():
            for _, _, p in s.cluster.partitions():
                initial |= set(p.replicas)
        free = [b.id for b in model.init_states()[0].cluster.brokers if b.id not in initial]
        targets = {r for _, _, r in model.space.targets}
        # only renamings that map the admin's target lists onto themselves are symmetries
        self.group = [pi for pi in broker_group(free) if {_m(r, pi) for r in targets} == targets]

    def init_states(self):
        return [canonical(s, self.group) for s in self.inner.init_states()]

    def actions(self, state):
        return self.inner.actions(state)

    def next_state(self, state, action):
        n = self.inner.next_state(state, action)
        return None if n is None else canonical(n, self.group)

    def successors(self, state):
        for a, n in self.inner.successors(state):
            yield a, canonical(n, self.group)

    def properties(self):
        return self.inner.properties()

    def describe(self):
        return {**self.inner.describe(), "symmetry": True}

    def state_to_json(self, s):
        return self.inner.state_to_json(s)

    def state_from_json(self, d):
        return self.inner.state_from_json(d)

    def action_to_json(self, a):
        return self.inner.action_to_json(a)

    def action_from_json(self, d):
        return self.inner.action_from_json(d)

    def annotate_path(self, path):
        return self.inner.annotate_path(path)

    def concretize(self, path: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """Turn a path of representatives into a concrete path of the unreduced model.

        At each step, among the concrete state's successors, take the one whose
        representative is the next state of the reduced path (one exists: the reduced
        edge came from some renaming of the concrete state, and renaming commutes).
        """
        state = self.inner.init_states()[0]
        out = [(state, None)]
        for rep, _ in path[1:]:
            for a, n in self.inner.successors(state):
                if canonical(n, self.group) == rep:
                    state = n
                    out.append((n, a))
                    break
            else:
                raise RuntimeError("reduced path has no concrete counterpart: the profile is not symmetric")
        return out
