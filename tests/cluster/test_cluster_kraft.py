"""A KRaft cluster of the newest release (1 controller, 3 brokers), shared by the module's tests, and one of
Kafka 3.9.2 whose clean exit is checked (issue 24)."""

from __future__ import annotations

import pytest
from cluster_checks import (
    KAFKA_39,
    NEWEST,
    alive,
    assert_cleaned,
    eventually,
    isr,
    listeners_are_local,
    state_of,
    topic_on_every_broker,
)
from kreassign.checker.cluster import AdminRequestError, ClusterError, ClusterSpec, start_cluster


@pytest.fixture(scope="module")
def kraft():
    with start_cluster(ClusterSpec(version=NEWEST, mode="kraft", controllers=1, brokers=3)) as c:
        yield c


def test_every_broker_is_registered_and_the_controller_leads(kraft):
    assert kraft.admin.broker_ids() == [1, 2, 3]
    assert kraft.active_controller() == 3000
    quorum = kraft.admin.quorum()
    assert [v["id"] for v in quorum["voters"]] == [3000]
    assert sorted(o["id"] for o in quorum["observers"]) == [1, 2, 3]
    features = kraft.admin.features()
    assert features["metadata.version"] > 0
    assert features["eligible.leader.replicas.version"] == 1  # a new cluster's default since 4.1
    assert kraft.admin.describe_cluster()["cluster_id"] == kraft.cluster_id
    assert "Kafka Server started" in kraft.logs(1) and "Kafka Server started" in kraft.logs(3000)


def test_every_listener_is_on_127_0_0_1_only(kraft):
    listeners_are_local(kraft)
    assert sorted(kraft.pids()) == ["admin", "broker-1", "broker-2", "broker-3", "controller-3000"]


def test_a_topic_is_seen_on_every_broker(kraft):
    kraft.admin.create_topic("seen", partitions=3, replication_factor=3)
    topic_on_every_broker(kraft, "seen", 3)
    with pytest.raises(AdminRequestError) as e:
        kraft.admin.create_topic("seen", partitions=1, replication_factor=3)
    assert e.value.error_class == "TopicExistsException"


def test_a_killed_broker_is_fenced_and_a_restarted_one_rejoins_the_isr(kraft):
    kraft.admin.create_topic("moves", assignment={0: [1, 2, 3]})
    eventually(lambda: sorted(isr(kraft, "moves")) == [1, 2, 3], "moves in sync")
    leader = kraft.admin.describe_topics(["moves"])["moves"]["partitions"][0]["leader"]
    pid = kraft.pid(leader)
    kraft.kill(leader)
    assert not alive(pid) and kraft.pid(leader) is None
    eventually(lambda: leader not in kraft.admin.broker_ids(), f"broker {leader} fenced")

    def moved():
        p = kraft.admin.describe_topics(["moves"])["moves"]["partitions"][0]
        return p if leader not in p["isr"] and p["leader"] not in (None, leader) else None

    after = eventually(moved, "leadership moved")
    assert after["replicas"] == [1, 2, 3]
    kraft.restart(leader)
    assert kraft.admin.broker_ids() == [1, 2, 3]
    eventually(lambda: sorted(isr(kraft, "moves")) == [1, 2, 3], f"broker {leader} back in the ISR")


def test_a_paused_broker_is_stopped_and_resumes(kraft):
    kraft.pause(2)
    try:
        assert state_of(kraft.pid(2)) == "T"
        assert [n.state for n in kraft.nodes if n.name == "broker-2"] == ["paused"]
    finally:
        kraft.resume(2)
    kraft.wait_until_ready(60)
    assert state_of(kraft.pid(2)) in ("S", "R")


def test_the_controller_restarts_and_leads_again(kraft):
    kraft.restart(3000)
    assert kraft.active_controller() == 3000
    kraft.admin.create_topic("after-failover", partitions=1, replication_factor=3)
    topic_on_every_broker(kraft, "after-failover", 1)


def test_a_condition_that_never_holds_fails_naming_it_with_the_log(kraft):
    with pytest.raises(ClusterError) as e:
        kraft.wait_for("the impossible", lambda: "broker-2 never agrees", timeout_s=0.5)
    text = str(e.value)
    assert "the impossible did not happen within 0 s: broker-2 never agrees" in text
    assert "last lines of broker-2/logs/server.log" in text and "broker-1/logs" not in text


def test_kafka_39_in_kraft_mode_starts_serves_and_leaves_nothing_at_exit():
    with start_cluster(ClusterSpec(version=KAFKA_39, mode="kraft")) as c:
        directory, pids = c.directory, list(c.pids().values())
        assert c.admin.broker_ids() == [1, 2, 3] and c.active_controller() == 3000
        assert "eligible.leader.replicas.version" not in c.admin.features()  # 3.9 has no ELR feature
        c.admin.create_topic("t39", partitions=2, replication_factor=3)
        topic_on_every_broker(c, "t39", 2)
        listeners_are_local(c)
        assert directory.is_dir() and all(alive(p) for p in pids)
    assert_cleaned(directory, pids)
