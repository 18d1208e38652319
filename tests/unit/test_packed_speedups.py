"""The packed path's shortcuts give the very results of the plain code they replace.

- `spec.state.replace` (generated per class, slots set directly) against `dataclasses.replace`;
- tabulating in forked workers installs the rows in key order: the same local ids, so the same
  packed value for every state, in the same BFS order, as one worker (workers fork only where the
  reference answers: with the kraft kernels every row is computed in one process).
"""

from __future__ import annotations

import dataclasses

import pytest
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.bfs import explore_packed
from kreassign.checker.packed.reassignment import PackedReassignment
from kreassign.spec import state as S
from kreassign.spec.state import replace

CLUSTER = S.make_cluster(3, {"t": [[1, 2], [2, 0]]}, replication_layer=True)
PART = CLUSTER.topics[0].partitions[0]
VALUES = [CLUSTER, CLUSTER.topics[0], PART, PART.log, CLUSTER.brokers[0], S.ZkController(), S.Kip236Admin(),
          S.ReplicationThrottles()]
SENTINEL = ("changed",)  # a value no field holds


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_replace_is_dataclasses_replace(value):
    assert replace(value) == dataclasses.replace(value) and replace(value) is not value
    for f in dataclasses.fields(value):
        mine, theirs = replace(value, **{f.name: SENTINEL}), dataclasses.replace(value, **{f.name: SENTINEL})
        assert type(mine) is type(theirs) and mine == theirs and hash(mine) == hash(theirs)
        assert getattr(mine, f.name) is SENTINEL
        assert all(getattr(mine, g.name) is getattr(value, g.name) for g in dataclasses.fields(value) if g is not f)
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace(value).__setattr__(dataclasses.fields(value)[0].name, 1)
    with pytest.raises(TypeError):
        replace(value, no_such_field=1)


def test_replace_keeps_post_init_and_falls_back_for_other_dataclasses():
    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self):
            if self.x < 0:
                raise ValueError("negative")

    @dataclasses.dataclass
    class Derived:
        x: int
        y: int = dataclasses.field(init=False, default=0)

    assert replace(Checked(1), x=2) == Checked(2)
    with pytest.raises(ValueError):
        replace(Checked(1), x=-1)
    assert replace(Derived(1), x=3) == dataclasses.replace(Derived(1), x=3)


@pytest.mark.parametrize("release,forks", [({"kafka_version": "4.4.0", "elr": "on", "min_insync": 2}, True),
                                           ({"kafka_version": "3.9.2"}, False)], ids=["4.4-elr-on-min-isr-2", "3.9"])
def test_forked_workers_number_every_state_as_one_worker(release, forks, monkeypatch):
    from kreassign.checker.packed import reassignment as packed_module

    monkeypatch.setattr(packed_module, "PARALLEL_MIN", 1)  # fork for every batch, however small
    model = ReassignmentModel("kraft", Bounds(brokers=4, rf=2, reassigns=2, cancels=1, failures=1, **release))
    one, two = PackedReassignment(model, workers=1), PackedReassignment(model, workers=2)
    # with ELR on and a min ISR above 1 the kernels decline: the reference answers, in forked workers; at 3.9 the
    # kernels answer
    assert (two.kernel is None) == forks
    r1, r2 = explore_packed(one, liveness=False), explore_packed(two, liveness=False)
    assert (r2.states, r2.transitions, r2.depth) == (r1.states, r1.transitions, r1.depth)
    assert [r2.state_of(i) for i in range(r2.states)] == [r1.state_of(i) for i in range(r1.states)]
    assert two.locals == one.locals and two.codes == one.codes and two.envs == one.envs
