"""A ZooKeeper-mode cluster of Kafka 3.9.2: a real ZooKeeper server and three brokers, one of them the
controller (the controller the model's zk profile describes)."""

from __future__ import annotations

import pytest
from cluster_checks import KAFKA_39, eventually, isr, listeners_are_local, topic_on_every_broker
from kreassign.checker.cluster import ClusterSpec, start_cluster


@pytest.fixture(scope="module")
def zk():
    with start_cluster(ClusterSpec(version=KAFKA_39, mode="zk", brokers=3)) as c:
        yield c


def test_zookeeper_and_three_brokers_one_of_them_the_controller(zk):
    assert zk.admin.broker_ids() == [1, 2, 3] and zk.controllers == ()
    assert zk.active_controller() in (1, 2, 3)
    assert sorted(zk.pids()) == ["admin", "broker-1", "broker-2", "broker-3", "zookeeper"]
    listeners_are_local(zk)  # ZooKeeper's client port only: no admin server, no quorum ports
    assert "binding to port /127.0.0.1:" in zk.logs("zookeeper")
    assert "Kafka Server started" in zk.logs(1) or "started (kafka.server.KafkaServer)" in zk.logs(1)


def test_a_topic_is_seen_on_every_broker(zk):
    zk.admin.create_topic("zk-seen", partitions=2, replication_factor=3)
    topic_on_every_broker(zk, "zk-seen", 2)
    controller = zk.active_controller()
    assert "zk-seen" in zk.logs(controller, "state-change") or "zk-seen" in zk.logs(controller, "controller")


def test_killing_the_controller_broker_elects_another_and_it_rejoins(zk):
    zk.admin.create_topic("zk-moves", assignment={0: [1, 2, 3]})
    eventually(lambda: sorted(isr(zk, "zk-moves")) == [1, 2, 3], "zk-moves in sync")
    controller = zk.active_controller()
    zk.kill(controller)
    eventually(lambda: controller not in zk.admin.broker_ids(), f"broker {controller}'s session expired")
    eventually(lambda: zk.active_controller() not in (controller,), "another controller")
    eventually(lambda: controller not in isr(zk, "zk-moves"), f"broker {controller} out of the ISR")
    zk.restart(controller)
    assert zk.admin.broker_ids() == [1, 2, 3]
    eventually(lambda: sorted(isr(zk, "zk-moves")) == [1, 2, 3], f"broker {controller} back in the ISR")
