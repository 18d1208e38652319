"""Real clusters without a JVM (issue 24, docs/cluster.md): the ClusterSpec's checks, the files and command
lines its nodes get (every listener on 127.0.0.1, distinct free ports, nothing else opened), the broker
artifact set handed to Maven, the CLI's bad flags, and the watchdog that cleans up after a killed driver."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kreassign.checker.cluster import config as C
from kreassign.checker.cluster import procs, watchdog
from kreassign.checker.cluster.config import ClusterSpec, ClusterSpecError
from kreassign.checker.implementations.kafka import releases
from kreassign.spec import kafka_releases

from kreassign import cli

ROOT = Path("/nonexistent/kreassign-cluster-test")


def _nodes(spec: ClusterSpec):
    return C.layout(spec, ROOT, list(range(20001, 20001 + spec.port_count)))


# -- the spec -----------------------------------------------------------------------------------------------


def test_the_default_spec_is_the_newest_release_in_kraft_with_one_controller_and_three_brokers():
    spec = ClusterSpec()
    assert (spec.version, spec.mode, spec.controllers, spec.brokers) == (kafka_releases.NEWEST, "kraft", 1, 3)
    assert spec.controller_ids == (3000,) and spec.broker_ids == (1, 2, 3) and spec.port_count == 4
    assert ClusterSpec(version="3.9.2", mode="zk", brokers=6).controller_ids == ()
    assert ClusterSpec(broker_config={"b": "2", "a": "1"}).broker_config == (("a", "1"), ("b", "2"))


@pytest.mark.parametrize(("fields", "field", "words"), [
    ({"brokers": 2}, "brokers", "from 3 to 6"),
    ({"brokers": 7}, "brokers", "from 3 to 6"),
    ({"brokers": "3"}, "brokers", "not '3'"),
    ({"brokers": True}, "brokers", "not True"),
    ({"controllers": 2}, "controllers", "1 or 3"),
    ({"version": "3.9.2", "mode": "zk", "controllers": 3}, "controllers", "one ZooKeeper server"),
    ({"mode": "zk"}, "mode", "needs Kafka 3.9"),
    ({"mode": "raft"}, "mode", "not one of kraft, zk"),
    ({"version": "3.8.0"}, "version", "not supported"),
    ({"version": "latest"}, "version", "not a Kafka release"),
    ({"metadata_version": "9.9-IV9"}, "metadata_version", "formats 3.3-IV3 .. 4.4-IV2"),
    ({"version": "3.9.2", "mode": "zk", "metadata_version": "3.9-IV0"}, "metadata_version", "only for KRaft"),
    ({"version": "3.9.2", "elr": True}, "elr", "cannot have eligible leader replicas"),
    ({"metadata_version": "3.9-IV0", "elr": True}, "elr", "cannot have eligible leader replicas"),
    ({"session_timeout_ms": 500}, "session_timeout_ms", "from 2000 to 20000"),
    ({"heap_mb": 16}, "heap_mb", "from 128 to 4096"),
    ({"start_timeout_s": 0}, "start_timeout_s", "(0, 3600]"),
    ({"broker_config": {"listeners": "PLAINTEXT://0.0.0.0:9092"}}, "broker_config", "set by the cluster"),
    ({"broker_config": {"advertised.listeners": "x"}}, "broker_config", "every listener on 127.0.0.1"),
    ({"broker_config": [("a",)]}, "broker_config", "key=value"),
])
def test_a_bad_spec_is_refused_naming_the_field(fields, field, words):
    with pytest.raises(ClusterSpecError, match=re.escape(words)) as e:
        ClusterSpec(**fields)
    assert e.value.field == field and str(e.value).startswith(f"{field}: ")
    assert e.value.exit_code == 2


def test_metadata_version_and_elr_become_format_flags():
    nodes = _nodes(ClusterSpec(metadata_version="4.0-IV3", elr=False))
    args = C.format_args(ClusterSpec(metadata_version="4.0-IV3", elr=False), nodes[0], "abc")
    assert args == ["format", "--cluster-id", "abc", "--config", str(nodes[0].config_file),
                    "--release-version", "4.0-IV3", "--feature", "eligible.leader.replicas.version=0"]
    assert C.format_args(ClusterSpec(version="3.9.2"), nodes[0], "abc")[-1] == str(nodes[0].config_file)
    assert ClusterSpec(elr=True).level == "4.4-IV2"


def test_cluster_ids_are_kafka_uuids():
    for _ in range(200):
        cid = C.cluster_id()
        assert len(cid) == 22 and not cid.startswith("-")
        assert len(base64.urlsafe_b64decode(cid + "==")) == 16


# -- the nodes' files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [ClusterSpec(), ClusterSpec(controllers=3, brokers=6),
                                  ClusterSpec(version="3.9.2"),
                                  ClusterSpec(version="3.9.2", mode="zk", brokers=4)],
                         ids=["kraft-1-3", "kraft-3-6", "kraft-3.9", "zk-4"])
def test_every_listener_of_every_node_is_on_127_0_0_1_and_each_node_has_its_own_port(spec):
    nodes = _nodes(spec)
    assert [n.name for n in nodes] == (["zookeeper"] if spec.mode == "zk" else []) + \
        [f"controller-{c}" for c in spec.controller_ids] + [f"broker-{b}" for b in spec.broker_ids]
    assert len({n.port for n in nodes}) == len(nodes)
    for node in nodes:
        text = C.zookeeper_config(node) if node.role == "zookeeper" \
            else C.server_properties(spec, node, nodes)
        addresses = C.listeners_of(text)
        assert addresses and all(a.startswith("127.0.0.1:") for a in addresses), (node.name, addresses)
        assert f"127.0.0.1:{node.port}" in addresses
        assert "0.0.0.0" not in text and "localhost" not in text and "jmx" not in text.lower()
        assert str(node.data_dir).startswith(str(ROOT))
    if spec.mode == "kraft":
        broker = C.server_properties(spec, nodes[-1], nodes)
        voters = next(line for line in broker.splitlines() if line.startswith("controller.quorum.voters="))
        assert voters == "controller.quorum.voters=" + ",".join(
            f"{3000 + i}@127.0.0.1:{20001 + i}" for i in range(spec.controllers))
    else:
        zoo = C.zookeeper_config(nodes[0])
        assert "clientPortAddress=127.0.0.1" in zoo and "admin.enableServer=false" in zoo


def test_broker_settings_come_last_and_reach_brokers_only():
    spec = ClusterSpec(broker_config={"min.insync.replicas": "2"})
    nodes = _nodes(spec)
    assert C.server_properties(spec, nodes[-1], nodes).rstrip().endswith("min.insync.replicas=2")
    assert "min.insync.replicas" not in C.server_properties(spec, nodes[0], nodes)


def test_the_layout_needs_one_distinct_port_per_node():
    with pytest.raises(ValueError, match="distinct ports"):
        C.layout(ClusterSpec(), ROOT, [1, 1, 2, 3])
    with pytest.raises(ValueError, match="need 4"):
        C.layout(ClusterSpec(), ROOT, [1, 2, 3])


def test_a_jvm_of_the_cluster_is_small_marked_and_opens_no_jmx_port():
    argv = C.jvm_argv("java", ClusterSpec(heap_mb=200), Path("/lib"), ROOT, ROOT / "b/logs", C.KAFKA_MAIN,
                      ["p"])
    assert argv[0] == "java" and argv[-3:] == ["/lib/*", C.KAFKA_MAIN, "p"] and argv[-4] == "-cp"
    assert "-Xmx200m" in argv and "-XX:+UseSerialGC" in argv and "-XX:-UsePerfData" in argv
    assert C.marker_argument(ROOT) in argv and f"-Djava.io.tmpdir={ROOT / 'tmp'}" in argv
    assert not [a for a in argv if "jmxremote" in a or "agentlib" in a]


def test_both_log_configurations_write_the_distributions_three_files():
    for text in (C.log4j_properties(), C.log4j2_properties()):
        for name in C.LOG_FILES:
            assert f"kafka.logs.dir}}/{name}.log" in text
        assert "state.change.logger" in text and "kafka.controller" in text


# -- processes and sockets ----------------------------------------------------------------------------------


def test_free_ports_are_distinct_free_on_127_0_0_1_and_never_ephemeral():
    ports = procs.free_ports(6)
    assert len(set(ports)) == 6
    low, _ = procs.ephemeral_range()
    if low - procs.PORT_FLOOR >= 1000:  # an outgoing connection cannot take them before the node binds them
        assert all(procs.PORT_FLOOR <= p < low for p in ports)
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_listening_sockets_names_the_address_and_port_a_process_listens_on():
    with socket.socket() as s4, socket.socket(socket.AF_INET6) as s6:
        s4.bind(("127.0.0.1", 0))
        s4.listen()
        s6.bind(("::1", 0))
        s6.listen()
        found = procs.listening_sockets(os.getpid())
        assert ("127.0.0.1", s4.getsockname()[1]) in found and ("::1", s6.getsockname()[1]) in found


def _marked_sleeper(directory: Path) -> subprocess.Popen:
    """A process carrying the cluster's marker, as every JVM of a cluster does."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)",
                             C.marker_argument(directory)], process_group=0)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


def _wait(condition, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_sweep_kills_the_marked_processes_and_removes_the_directory(tmp_path):
    directory = tmp_path / "cluster"
    directory.mkdir()
    (directory / "file").write_text("x")
    sleeper = _marked_sleeper(directory)
    other = _marked_sleeper(tmp_path / "another-cluster")
    try:
        assert _wait(lambda: watchdog.cluster_processes(str(directory)) == [sleeper.pid], 10)
        assert watchdog.sweep(str(directory)) == [sleeper.pid]
        assert sleeper.wait(10) == -signal.SIGKILL and not directory.exists()
        assert other.poll() is None  # another cluster's process is not touched
    finally:
        other.kill()
        other.wait()


DRIVER = r"""
import subprocess, sys, time
directory, watchdog_file = sys.argv[1], sys.argv[2]
w = subprocess.Popen([sys.executable, "-I", "-S", watchdog_file, directory], stdin=subprocess.PIPE,
                     start_new_session=True)
s = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)",
                      "-Dkreassign.cluster=" + directory], process_group=0)
print(w.pid, s.pid, flush=True)
time.sleep(120)
"""


def test_a_driver_killed_with_sigkill_leaves_no_process_and_no_directory(tmp_path):
    """The watchdog (what a Cluster starts first) cleans up when its driver dies without a word."""
    directory = tmp_path / "cluster"
    directory.mkdir()
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(directory), watchdog.__file__],
                              stdout=subprocess.PIPE, text=True)
    try:
        watchdog_pid, sleeper_pid = map(int, driver.stdout.readline().split())
        assert not _gone(sleeper_pid) and not _gone(watchdog_pid)
        driver.kill()
        driver.wait()
        assert _wait(lambda: _gone(sleeper_pid) and not directory.exists() and _gone(watchdog_pid))
    finally:
        driver.kill()
        driver.wait()


# -- the broker artifact set --------------------------------------------------------------------------------


def test_the_broker_pom_lists_kafka_core_and_no_repository():
    text = releases.pom("3.9.2", kind="broker")
    assert ("<groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>3.9.2</version>"
            in text)
    assert "repositor" not in text.lower()
    assert "http" not in text.replace("http://maven.apache.org/POM/4.0.0", "")
    assert releases.release_dir("4.4.0", "broker").parent.name == "kafka-broker"
    assert releases.fetch_command("4.4.0", "broker") == "kreassign cluster fetch 4.4.0"


def test_the_log_binding_is_the_distributions():
    assert releases.log_binding(["log4j-core-2.25.5.jar", "slf4j-api-1.7.36.jar"]) == \
        ("org.apache.logging.log4j", "log4j-slf4j-impl", "2.25.5")
    assert releases.log_binding(["slf4j-api-1.7.36.jar", "zookeeper-3.8.4.jar"]) == \
        ("org.slf4j", "slf4j-reload4j", "1.7.36")
    assert releases.log_binding(["slf4j-api-1.7.36.jar", "slf4j-reload4j-1.7.36.jar"]) is None


def _fake_mvn(tmp_path, script: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    mvn = bin_dir / "mvn"
    mvn.write_text("#!/bin/bash\n" + script)
    mvn.chmod(mvn.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def test_cluster_fetch_resolves_kafka_then_its_log_binding_beside_the_controller_jars(monkeypatch, tmp_path,
                                                                                      capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    calls = tmp_path / "calls"
    # a Maven that "resolves" each POM by writing jars named after what it lists
    script = ('f=""; for a in "$@"; do case $a in -DoutputDirectory=*) d=${a#*=};; esac; done\n'
              'for a in "$@"; do case $a in *.xml) f=$a;; esac; done\n'
              'echo "$f" >> ' + str(calls) + '\n/bin/mkdir -p "$d"\n'
              'if /bin/grep -q kafka_2.13 "$f"; then : > "$d/kafka_2.13-4.4.0.jar"; '
              ': > "$d/log4j-core-2.25.5.jar"; : > "$d/slf4j-api-1.7.36.jar"; '
              'else /bin/grep -q "log4j-slf4j-impl</artifactId><version>2.25.5" "$f" && '
              ': > "$d/log4j-slf4j-impl-2.25.5.jar"; fi\n')
    monkeypatch.setenv("PATH", str(_fake_mvn(tmp_path, script)))
    assert cli.main(["cluster", "fetch", "4.4.0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["releases"][0]
    assert out["jars"] == 4 and not out["was_cached"]
    got = releases.cached("4.4.0", "broker")
    assert got is not None and "log4j-slf4j-impl-2.25.5.jar" in {j.name for j in got.jars}
    info = json.loads((got.lib.parent / "release.json").read_text())
    assert info["log_binding"] == "org.apache.logging.log4j:log4j-slf4j-impl:2.25.5"
    assert [Path(p).name for p in calls.read_text().split()] == ["pom.xml", "log-binding.xml"]
    assert releases.cached("4.4.0") is None  # the controller's set is another folder
    assert cli.main(["cluster", "fetch", "4.4.0"]) == 0 and "(cached)" in capsys.readouterr().out


def test_cluster_fetch_without_maven_is_exit_3_naming_the_command(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cli.main(["cluster", "fetch", "3.9.2"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Maven (mvn) was not found" in err[0]
    assert "run: kreassign cluster fetch 3.9.2" in err[0]


# -- the command line ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "words"), [
    (["--brokers", "2"], "--brokers: an integer from 3 to 6"),
    (["--brokers", "x"], "--brokers: expected an integer"),
    (["--controllers", "2"], "--controllers: a KRaft quorum of 1 or 3"),
    (["--mode", "zk"], "--mode: zk needs Kafka 3.9"),
    (["--kafka-version", "3.8.0"], "--kafka-version: Kafka 3.8.0 is not supported"),
    (["--elr", "maybe"], "--elr: on or off"),
    (["--kafka-version", "3.9.2", "--elr", "on"], "--elr: Kafka 3.9.2"),
    (["--metadata-version", "1.0"], "--metadata-version: Kafka 4.4.0 formats"),
    (["--broker-config", "listeners=PLAINTEXT://0.0.0.0:9092"],
     "--broker-config: listeners is set by the cluster"),
    (["--broker-config", "novalue"], "--broker-config: expected KEY=VALUE"),
    (["--start-timeout", "-1"], "--start-timeout: seconds in (0, 3600]"),
    (["--session-timeout-ms", "1"], "--session-timeout-ms: an integer from 2000"),
])
def test_a_bad_flag_is_exit_2_in_one_line_naming_it(argv, words, capsys):
    assert cli.main(["cluster", "start", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_cluster_without_an_action_is_exit_2(capsys):
    assert cli.main(["cluster"]) == 2
    assert cli.main(["cluster", "fetch"]) == 2
    assert cli.main(["cluster", "fetch", "4.4.0", "--all"]) == 2
    assert "expected an action" in capsys.readouterr().err


# -- the Admin helper's protocol, with a stand-in for the JVM ----------------------------------------------

FAKE_HELPER = r"""
import json, sys, time
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "hang":
        time.sleep(60)
    elif req["op"] == "die":
        sys.exit(1)
    reply = {"ok": True, "result": req} if req["op"] != "refuse" else \
        {"ok": False, "error_class": "TopicExistsException", "error": "Topic 't' already exists."}
    print(json.dumps(reply), flush=True)
"""


def test_the_admin_client_speaks_json_lines_and_replaces_a_helper_that_died_or_hung(tmp_path):
    from kreassign.checker.cluster.admin import AdminError, AdminRequestError, ClusterAdmin

    admin = ClusterAdmin([sys.executable, "-c", FAKE_HELPER], tmp_path, tmp_path / "out.log")
    admin.REPLY_MARGIN_S = 0.5
    admin.start()
    try:
        assert admin.call("describe_cluster", 2, x=1) == \
            {"op": "describe_cluster", "timeout_ms": 2000, "x": 1}
        with pytest.raises(AdminRequestError) as e:
            admin.call("refuse")
        assert e.value.error_class == "TopicExistsException" and "already exists" in str(e.value)
        first = admin.pid
        with pytest.raises(AdminError, match="ended"):
            admin.call("die")
        assert admin.call("again")["op"] == "again" and admin.pid != first  # a new helper answers
        with pytest.raises(AdminError, match="did not answer hang within 1 s"):
            admin.call("hang", 0.5)
        assert admin.call("after")["op"] == "after"  # the hung one was killed and replaced
    finally:
        admin.close()
    with pytest.raises(AdminError, match="closed"):
        admin.call("late")


def test_a_brokers_own_view_is_read_from_its_metadata_answer():
    """broker_view speaks Metadata v4 (what every supported release answers) to one broker; a stand-in here."""
    import struct
    import threading

    def string(s: str | None) -> bytes:
        return struct.pack(">h", -1) if s is None else struct.pack(">h", len(s)) + s.encode()

    body = (struct.pack(">ii", 7, 0) + struct.pack(">i", 2)  # correlation id, throttle, two brokers
            + struct.pack(">i", 3) + string("127.0.0.1") + struct.pack(">i", 9093) + string("rack-a")
            + struct.pack(">i", 1) + string("127.0.0.1") + struct.pack(">i", 9092) + string(None)
            + string("cluster-id") + struct.pack(">i", 3) + struct.pack(">i", 0))
    seen = {}
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def answer():
            conn, _ = server.accept()
            with conn:
                size = struct.unpack(">i", conn.recv(4))[0]
                seen["request"] = conn.recv(size)
                conn.sendall(struct.pack(">i", len(body)) + body)

        t = threading.Thread(target=answer)
        t.start()
        view = procs.broker_view(server.getsockname()[1])
        t.join()
    assert view == procs.BrokerView((1, 3), 3)
    assert struct.unpack(">hh", seen["request"][:4]) == (3, 4)  # Metadata, version 4
    assert seen["request"].endswith(struct.pack(">i?", 0, False))  # no topics, no auto-creation
    assert procs.broker_view(procs.free_ports(1)[0], timeout_s=0.5) is None  # nobody there


def test_a_broker_set_fetched_before_the_reassignment_tool_was_added_is_fetched_again(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    d = releases.release_dir("4.4.0", "broker")
    (d / "lib").mkdir(parents=True)
    (d / "lib" / "kafka_2.13-4.4.0.jar").write_bytes(b"")
    info = {"version": "4.4.0", "jars": ["kafka_2.13-4.4.0.jar"], "artifacts": ["kafka_2.13"]}
    (d / "release.json").write_text(json.dumps(info))
    assert releases.cached("4.4.0", "broker") is None  # stale: kafka-tools is missing
    info["artifacts"] = list(releases.BROKER_ARTIFACTS)
    (d / "release.json").write_text(json.dumps(info))
    assert releases.cached("4.4.0", "broker") is not None


def test_controller_settings_go_to_the_kraft_controllers_only(tmp_path):
    spec = ClusterSpec(version="4.4.0", controllers=1, brokers=3,
                       controller_config=(("auto.leader.rebalance.enable", "false"),))
    nodes = C.layout(spec, tmp_path, list(range(20000, 20000 + spec.port_count)))
    controller = next(n for n in nodes if n.role == "controller")
    broker = next(n for n in nodes if n.role == "broker")
    assert "auto.leader.rebalance.enable=false" in C.server_properties(spec, controller, nodes)
    assert "auto.leader.rebalance.enable" not in C.server_properties(spec, broker, nodes)
    with pytest.raises(ClusterSpecError, match="controller_config.*only for KRaft"):
        ClusterSpec(version="3.9.2", mode="zk", controller_config=(("a", "b"),))
    with pytest.raises(ClusterSpecError, match="controller_config.*log.dirs is set by the cluster"):
        ClusterSpec(controller_config=(("log.dirs", "/x"),))


def test_interrupt_and_reap_stops_as_ctrl_c_then_kills_what_ignores_it():
    """procs.interrupt_and_reap: a run that handles SIGINT exits with its own status; one that ignores it is
    killed after the timeout; one that has exited is only reaped."""
    handles = ("import signal, sys, time\n"
               "signal.signal(signal.SIGINT, lambda *a: sys.exit(5))\nprint('ready', flush=True)\ntime.sleep(60)")
    ignores = ("import signal, time\n"
               "signal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)")
    for code, want in ((handles, 5), (ignores, -signal.SIGKILL)):
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"  # (its handler is set)
        assert procs.interrupt_and_reap(proc, 1.0) == want  # (-SIGKILL: killed, not waited out)
        proc.stdout.close()
    done = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    done.wait()
    assert procs.interrupt_and_reap(done, 1.0) == 3
