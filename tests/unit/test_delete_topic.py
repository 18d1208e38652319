"""Topic deletion during a reassignment (bounds.delete_topic; reference/topic_changes.py; issue 14 item 4).

KRaft deletes the topic at once, with its partitions and their reassignments; the ZooKeeper
controller queues it and deletes it only once no partition of it is being reassigned. Each
property has a planted bug the checker catches with a short counterexample.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds, ConfigError
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.reassign import ReassignmentModel
from kreassign.checker.packed.reassignment import packable
from kreassign.checker.traces.format import read_trace
from kreassign.reference import profile
from kreassign.reference.capabilities import apply_action
from kreassign.reference.steps import Step
from kreassign.reference.topic_changes import reassignment_in_progress, remove_topic
from kreassign.spec import actions as A
from kreassign.spec import messages as M
from kreassign.spec.state import make_cluster
from kreassign.spec.topic_change_properties import _being_reassigned

from kreassign.cli import main

BOUNDS = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, delete_topic=True)
DELETION = ("no_reassignment_outlives_its_topic", "accepted_deletion_takes_effect")


def reassigning(name: str):
    kraft = profile(name)
    s = kraft.initial_state(make_cluster([1, 2, 3], {"t": [[1, 2]]}))
    return kraft, kraft.apply(s, A.Reassign("t", 0, (2, 3))).state


def test_kraft_deletes_a_reassigning_topic_at_once_and_lists_nothing():
    kraft, s = reassigning("kraft")
    step = apply_action(kraft, s, A.DeleteTopic("t"))
    assert step.response == M.Ack() and step.state.topics == ()
    assert kraft.list_partition_reassignments(step.state).topics == ()
    gone = apply_action(kraft, step.state, A.DeleteTopic("t"))
    assert gone.response.error_code == M.UNKNOWN_TOPIC_OR_PARTITION and gone.state is step.state


def test_zk_queues_the_deletion_until_the_reassignment_ends():
    zk, s = reassigning("zk")
    queued = apply_action(zk, s, A.DeleteTopic("t")).state
    assert queued.topic("t") is not None and queued.zk.deleting == ("t",)
    assert reassignment_in_progress(queued, "t")
    assert apply_action(zk, queued, A.ResumeTopicDeletion("t")).state == queued  # ineligible: nothing happens
    model = ReassignmentModel("zk", BOUNDS)
    assert not any(isinstance(a, A.ResumeTopicDeletion) for a in model._extra_actions(model.init_states()[0]))


@pytest.mark.parametrize("name", ["kraft", "kraft-3.7", "zk"])
def test_the_real_profiles_keep_the_deletion_properties(name):
    result = check_model(name, BOUNDS, minimize_counterexamples=False)
    for prop in DELETION + (("reassigning_topic_not_deleted",) if name == "zk" else ()):
        assert result.properties[prop].status == HOLDS, prop
    assert result.unexpected == []
    states = explore(ReassignmentModel(name, BOUNDS), keep_graph=True).graph.states
    gone = [x for x in states if x.cluster.topic("t") is None]
    assert gone and all(x.ghosts == () for x in gone)  # the partitions' ghosts went with them
    if name == "zk":  # deleted only after a queued deletion waited for a reassignment, nothing of it left
        assert any(x.cluster.zk.deleting == ("t",) and reassignment_in_progress(x.cluster, "t") for x in states)
        assert all(x.cluster.zk.memory == () and x.cluster.zk.deleting == () for x in gone)


def test_the_spec_and_the_reference_agree_on_being_reassigned():
    """Differential: wherever the reference lets a queued deletion resume, the property sees no
    reassignment either (the property's notion is the narrower one, partitionsBeingReassigned)."""
    model = ReassignmentModel("zk", BOUNDS)
    result = explore(model, keep_graph=True)
    states = result.graph.states
    assert len(states) > 100
    for s in states:
        if s.cluster.topic("t") is not None and not reassignment_in_progress(s.cluster, "t"):
            assert not _being_reassigned(s.cluster, "t")


# -- planted bugs ---------------------------------------------------------------------------------------


def kraft_keeps_reassigning(profile_, state, action):
    """Broken on purpose: KRaft's deletion skips a topic with a partition being reassigned, yet answers NONE."""
    if any(p.reassigning for p in state.topic(action.topic).partitions):
        return Step(state, M.Ack())
    return Step(remove_topic(state, action.topic), M.Ack())


def zk_deletes_at_once(profile_, state, action):
    """Broken on purpose: the ZooKeeper controller deletes a topic at once, reassigning or not."""
    return Step(remove_topic(state, action.topic), M.Ack())


def zk_keeps_the_deletion_znode(profile_, state, action):
    """Broken on purpose: completeDeleteTopic forgets /admin/delete_topics/<topic> (the queue entry)."""
    from kreassign.reference.topic_changes import delete_topic

    step = delete_topic(profile_, state, action)
    if step.state.topic(action.topic) is None and state.topic(action.topic) is not None:
        return Step(replace(step.state, zk=replace(step.state.zk, deleting=state.zk.deleting)), step.response)
    return step


@pytest.mark.parametrize("name,bug,prop,steps", [
    ("kraft", kraft_keeps_reassigning, "accepted_deletion_takes_effect", ["Reassign(t-0 -> [1,3])", "DeleteTopic(t)"]),
    # zk: even a request for the current replicas puts the partition in partitionsBeingReassigned
    ("zk", zk_deletes_at_once, "reassigning_topic_not_deleted", ["Reassign(t-0 -> [1,2])", "DeleteTopic(t)"]),
    ("zk", zk_keeps_the_deletion_znode, "no_reassignment_outlives_its_topic",
     ["DeleteTopic(t)", "ResumeTopicDeletion(t)"]),
])
def test_a_broken_deletion_is_caught(name, bug, prop, steps, tmp_path):
    def factory(_p, b):
        model = ReassignmentModel(name, b)
        model.capabilities = replace(model.capabilities, topic_deletion=bug)
        return model

    result = check_model(name, BOUNDS, factory=factory, out_dir=str(tmp_path))
    v = result.properties[prop]
    assert v.status == VIOLATED and prop in result.unexpected
    assert [s["action_text"] for s in read_trace(v.counterexample).steps] == steps


# -- bounds, flags, engines ---------------------------------------------------------------------------------


def test_off_by_default_and_refused_where_not_modelled():
    assert "delete_topic" not in Bounds().to_json()
    assert not any(p.name in DELETION for p in ReassignmentModel("kraft", Bounds()).properties())
    for name in ("kip455", "kip236"):
        with pytest.raises(ConfigError, match=f"^delete_topic: modelled for kraft, kraft-3.7 and zk, not '{name}'"):
            ReassignmentModel(name, BOUNDS)
    with pytest.raises(ConfigError, match="^delete_topic: not modelled together with create_partitions"):
        ReassignmentModel("kraft", replace(BOUNDS, create_partitions=1))
    assert not packable(ReassignmentModel("kraft", BOUNDS))


def test_cli_flag(tmp_path, capsys):
    assert main(["check", "--profile", "kraft", "--delete-topic", "--brokers", "3", "--reassigns", "1",
                 "--cancels", "1", "--failures", "0", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "accepted_deletion_takes_effect" in out and "no_reassignment_outlives_its_topic" in out
    assert main(["check", "--profile", "kip455", "--delete-topic", "--out", str(tmp_path)]) == 2
    assert "delete_topic: modelled for kraft" in capsys.readouterr().err
