"""The Admin helper on a cluster it did not start (checker/cluster/external.py, what `kreassign status` reads
through): connected by bootstrap address only, as a user's cluster would be. A KRaft cluster of the newest
release (racked brokers) shared by the module; a Kafka 3.9.2 KRaft cluster for the fenced-brokers fallback,
started and gone first so that the two never run at once; no cluster at all for the unreachable address."""

from __future__ import annotations

import pytest
from cluster_checks import KAFKA_39, NEWEST, alive, eventually
from kreassign.checker.cluster import ClusterSpec, ClusterUnreachable, external, procs, start_cluster
from kreassign.spec import kafka_releases

RACK = "rack-a"
PASSWORD = "s3cret-value"


def _closed(admin: external.ExternalAdmin) -> None:
    """The helper's JVM is gone and its directory removed."""
    pid, directory = admin.pid, admin.directory
    admin.close()
    eventually(lambda: (pid is None or not alive(pid)) and not directory.exists(), "the helper cleaned up", 20)


def test_against_kafka_39_fenced_brokers_fall_back_to_the_plain_answer():
    # first in the file: its cluster is gone before the module's newest-release cluster starts
    with start_cluster(ClusterSpec(version=KAFKA_39, mode="kraft", controllers=1, brokers=3)) as c:
        admin = external.connect(c.bootstrap)  # the newest release's client: it has includeFencedBrokers
        try:
            assert external.reach(admin, c.bootstrap, 15)["cluster_id"] == c.cluster_id
            full = admin.describe_cluster(include_fenced=True)  # 3.9 refuses DescribeCluster v2: the plain answer
            plain = admin.describe_cluster()
            assert full["fenced_known"] is False and plain["fenced_known"] is False
            assert [b["id"] for b in full["brokers"]] == [b["id"] for b in plain["brokers"]] == [1, 2, 3]
            assert all("fenced" not in b and b["rack"] is None for b in full["brokers"])
            supported = admin.features_full()["supported"]["metadata.version"]
            assert kafka_releases.level_name(supported["max"]) == \
                kafka_releases.release(KAFKA_39).latest_production
        finally:
            _closed(admin)


def test_an_unreachable_address_is_clusterunreachable_within_the_timeout():
    address = f"127.0.0.1:{procs.free_ports(1)[0]}"
    with external.connect(address) as admin, pytest.raises(ClusterUnreachable) as e:
        external.reach(admin, address, 4)
    message = str(e.value)
    assert message.startswith(f"cannot reach the cluster at {address} within 4 s: TimeoutException: Timed out")
    assert "\n" not in message and e.value.exit_code == 3
    assert not admin.directory.exists()


@pytest.fixture(scope="module")
def kraft():
    spec = ClusterSpec(version=NEWEST, mode="kraft", controllers=1, brokers=3, broker_config={"broker.rack": RACK})
    with start_cluster(spec) as c:
        yield c


@pytest.fixture(scope="module")
def admin(kraft):
    a = external.connect(kraft.bootstrap)
    try:
        external.reach(a, kraft.bootstrap, 15)
        yield a
    finally:
        _closed(a)


def test_a_stopped_broker_is_listed_fenced_with_every_rack(kraft, admin):
    full = admin.describe_cluster(include_fenced=True)
    assert full["fenced_known"] is True and full["cluster_id"] == kraft.cluster_id
    assert [(b["id"], b["rack"], b["fenced"]) for b in full["brokers"]] == [(i, RACK, False) for i in (1, 2, 3)]
    plain = admin.describe_cluster()
    assert [b["id"] for b in plain["brokers"]] == [1, 2, 3] and all("fenced" not in b for b in plain["brokers"])
    kraft.stop(3)
    try:
        def fenced():
            now = admin.describe_cluster(include_fenced=True, timeout_s=5)
            return now if {b["id"]: b["fenced"] for b in now["brokers"]} == {1: False, 2: False, 3: True} else None

        eventually(fenced, "broker 3 listed as fenced")
        assert 3 not in admin.broker_ids()  # the plain answer leaves it out
    finally:
        kraft.restart(3)
    eventually(lambda: not any(b["fenced"] for b in admin.describe_cluster(include_fenced=True)["brokers"]),
               "broker 3 unfenced again")


def test_features_full_shows_the_release_supported_range(admin):
    full = admin.features_full()
    assert full["finalized"] == admin.features()
    mv = full["supported"]["metadata.version"]
    latest = kafka_releases.release(NEWEST).latest_production  # 4.4-IV2 for 4.4.0
    assert mv["max"] == kafka_releases.level_index(latest) + 4 and kafka_releases.level_name(mv["max"]) == latest
    assert mv["min"] <= full["finalized"]["metadata.version"] <= mv["max"]


def test_describe_configs_gives_effective_and_non_default_values(kraft, admin):
    kraft.admin.create_topic("ext-configs", 1, 3, configs={"min.insync.replicas": "2"})
    kraft.admin.alter_configs("broker", "2", set_={"follower.replication.throttled.rate": "1048576"})
    try:
        keys = ["min.insync.replicas", "unclean.leader.election.enable", "follower.replication.throttled.rate"]

        def asked():
            got = admin.describe_configs([("topic", "ext-configs"), ("broker", 2), ("broker", 1)], keys=keys)
            return got if got["broker"]["2"].get("follower.replication.throttled.rate") else None

        got = eventually(asked, "broker 2's dynamic throttle seen")
        assert got["topic"]["ext-configs"] == {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
        assert got["broker"]["2"]["follower.replication.throttled.rate"] == "1048576"
        assert "follower.replication.throttled.rate" not in got["broker"]["1"]  # never set there
        assert got["broker"]["1"]["min.insync.replicas"] == "1"  # the effective default, asked by name
        every = admin.describe_configs([("topic", "ext-configs"), ("broker", "2"), ("topic", "no-such-topic")])
        assert every["topic"]["ext-configs"] == {"min.insync.replicas": "2"}  # only what is not a default
        assert every["broker"]["2"]["follower.replication.throttled.rate"] == "1048576"
        assert every["broker"]["2"]["broker.rack"] == RACK  # server.properties: not a default either
        assert every["topic"]["no-such-topic"]["error_class"] == "UnknownTopicOrPartitionException"
    finally:
        kraft.admin.alter_configs("broker", "2", delete=["follower.replication.throttled.rate"])


def test_list_topics_is_sorted_and_leaves_internal_ones_out_unless_asked(kraft, admin):
    for name in ("ext-b", "ext-a"):
        kraft.admin.create_topic(name, 1, 1)

    def listed():  # each listing asks some broker: until every broker's metadata has both topics
        names, every = admin.list_topics(), admin.list_topics(internal=True)
        return (names, every) if {"ext-a", "ext-b"} <= set(names) and set(names) <= set(every) else None

    names, every = eventually(listed, "ext-a and ext-b listed, with and without the internal topics")
    assert names == sorted(names) and every == sorted(every) and not any(n.startswith("__") for n in names)


def test_a_sasl_client_against_plaintext_fails_without_showing_its_password(kraft, tmp_path):
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                      f'username="kreassign-user" password="{PASSWORD}";\n')
    with external.connect(kraft.bootstrap, config) as a:
        with pytest.raises(ClusterUnreachable) as e:
            external.reach(a, kraft.bootstrap, 5)
        log = (a.directory / "helper.log").read_text(errors="replace")
    message = str(e.value)
    assert message.startswith(f"cannot reach the cluster at {kraft.bootstrap} within 5 s: ")
    assert PASSWORD not in message and "\n" not in message
    assert PASSWORD not in log  # the JVM's own output says nothing of it either
