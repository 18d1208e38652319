"""What a cluster is made of, as values: the `ClusterSpec` a user asks for, the nodes it becomes, and every
file and command line they run with (docs/cluster.md). Pure: no process, no socket; the ports come in as
arguments.

Every listener binds to 127.0.0.1 only — the brokers', the controllers', ZooKeeper's client port — and nothing
else is opened: no JMX port, no ZooKeeper admin server. Node ids follow the model: brokers 1..N (as the
checker numbers them), KRaft controllers 3000, 3001, ... (Kafka's own test clusters number them so).
"""

from __future__ import annotations

import base64
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kreassign.spec import kafka_releases

from kreassign.errors import UsageError

HOST = "127.0.0.1"
MODES = ("kraft", "zk")
CONTROLLER_ID_BASE = 3000
BROKERS_RANGE = (3, 6)
KRAFT_CONTROLLERS = (1, 3)
#: the session bounds ZooKeeper accepts with ZK_TICK_MS (2 and 20 ticks); KRaft uses the same bounds
SESSION_RANGE_MS = (2000, 20000)
ZK_TICK_MS = 1000

KAFKA_MAIN = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
#: the system property every process of a cluster carries, naming the cluster's directory: how the watchdog
#: and the clean-up find them (checker/cluster/watchdog.py)
MARKER_PROPERTY = "kreassign.cluster"

#: settings the cluster owns: they place every listener on 127.0.0.1 and every file in the cluster's directory
RESERVED_SETTINGS = frozenset({
    "process.roles", "node.id", "broker.id", "listeners", "advertised.listeners", "controller.listener.names",
    "controller.quorum.voters", "controller.quorum.bootstrap.servers", "listener.security.protocol.map",
    "inter.broker.listener.name", "log.dirs", "log.dir", "metadata.log.dir", "zookeeper.connect",
})


class ClusterSpecError(UsageError):
    """A ClusterSpec field out of its range (exit 2); `field` names it (the CLI turns it into its flag)."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass(frozen=True)
class ClusterSpec:
    """A cluster to start: a Kafka release, KRaft or ZooKeeper mode, its size, and the few settings that
    matter to reassignment. Checked when made: a bad value raises ClusterSpecError naming the field."""

    version: str = kafka_releases.NEWEST
    mode: str = "kraft"
    controllers: int = 1  # KRaft: the controller quorum (1 or 3); zk: the ZooKeeper server (1)
    brokers: int = 3
    metadata_version: str | None = None  # KRaft: `format --release-version` (default: the release's latest)
    elr: bool | None = None  # KRaft 4.x: eligible.leader.replicas.version at format (default: the release's)
    # broker.session.timeout.ms (KRaft) or zookeeper.session.timeout.ms (zk): how soon a killed broker is
    # fenced, and how soon a restarted one may register again (Kafka's defaults, 9 s and 18 s, make every test
    # wait)
    session_timeout_ms: int = 6000
    broker_config: tuple[tuple[str, str], ...] = field(default=())  # extra server.properties of every broker
    # extra server.properties of every KRaft controller (settings the controller reads in KRaft, such as
    # auto.leader.rebalance.enable: a broker's setting in ZooKeeper mode)
    controller_config: tuple[tuple[str, str], ...] = field(default=())
    heap_mb: int = 256
    start_timeout_s: float = 120.0

    def __post_init__(self) -> None:
        try:
            version = kafka_releases.parse_version(str(self.version))
        except ValueError as e:
            raise ClusterSpecError("version", str(e)) from None
        object.__setattr__(self, "version", version)
        release = kafka_releases.release(version)
        if self.mode not in MODES:
            raise ClusterSpecError("mode", f"{self.mode!r} is not one of {', '.join(MODES)}")
        if self.mode == "zk" and release.since("4.0"):
            raise ClusterSpecError("mode", f"zk needs Kafka 3.9 (4.0 removed ZooKeeper mode, KIP-833); "
                                           f"got {version}")
        _int_in("brokers", self.brokers, *BROKERS_RANGE)
        if self.mode == "kraft" and self.controllers not in KRAFT_CONTROLLERS:
            raise ClusterSpecError("controllers",
                                   f"a KRaft quorum of 1 or 3 controllers, not {self.controllers!r}")
        if self.mode == "zk" and self.controllers != 1:
            raise ClusterSpecError("controllers", "zk mode runs one ZooKeeper server (the controller is a "
                                                  f"broker), not {self.controllers!r}")
        if self.metadata_version is not None:
            if self.mode == "zk":
                raise ClusterSpecError("metadata_version",
                                       "only for KRaft (zk mode has inter.broker.protocol.version)")
            if self.metadata_version not in release.metadata_versions:
                raise ClusterSpecError("metadata_version",
                                       f"Kafka {version} formats {release.metadata_versions[0]} .. "
                                       f"{release.latest_production}, not {self.metadata_version!r}")
        if self.elr is not None:
            if self.mode == "zk":
                raise ClusterSpecError("elr", "only for KRaft")
            if self.elr and not kafka_releases.elr_possible(version, self.level):
                raise ClusterSpecError("elr", f"Kafka {version} at metadata.version {self.level} cannot have "
                                              "eligible leader replicas (4.0 and 4.0-IV1 or newer)")
        _int_in("session_timeout_ms", self.session_timeout_ms, *SESSION_RANGE_MS)
        _int_in("heap_mb", self.heap_mb, 128, 4096)
        if isinstance(self.start_timeout_s, bool) or not isinstance(self.start_timeout_s, (int, float)) \
                or not 0 < self.start_timeout_s <= 3600:
            raise ClusterSpecError("start_timeout_s", f"seconds in (0, 3600], not {self.start_timeout_s!r}")
        object.__setattr__(self, "broker_config", _settings(self.broker_config))
        object.__setattr__(self, "controller_config", _settings(self.controller_config, "controller_config"))
        if self.controller_config and self.mode == "zk":
            raise ClusterSpecError("controller_config", "only for KRaft (in zk mode the controller is a broker: "
                                                        "broker_config)")

    @property
    def level(self) -> str:
        """The metadata.version the cluster is formatted with (KRaft)."""
        return self.metadata_version or kafka_releases.release(self.version).latest_production

    @property
    def controller_ids(self) -> tuple[int, ...]:
        return tuple(CONTROLLER_ID_BASE + i for i in range(self.controllers)) if self.mode == "kraft" else ()

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(range(1, self.brokers + 1))

    @property
    def port_count(self) -> int:
        return self.controllers + self.brokers  # KRaft controllers, or the ZooKeeper server

    def describe(self) -> str:
        head = f"{self.controllers} controller{'s' if self.controllers > 1 else ''}" if self.mode == "kraft" \
            else "ZooKeeper"
        return f"Kafka {self.version} ({self.mode}, {head}, {self.brokers} brokers)"


def _int_in(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ClusterSpecError(name, f"an integer from {low} to {high}, not {value!r}")


def _settings(value: object, name: str = "broker_config") -> tuple[tuple[str, str], ...]:
    """broker_config (or controller_config) as sorted (key, value) pairs, from a mapping or pairs; the
    cluster's own keys refused."""
    items = list(value.items()) if isinstance(value, Mapping) else list(value)  # type: ignore[arg-type]
    out: dict[str, str] = {}
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and item[0].strip()):
            raise ClusterSpecError(name, f"expected key=value settings, got {item!r}")
        key, val = item[0].strip(), str(item[1])
        if key in RESERVED_SETTINGS:
            raise ClusterSpecError(name, f"{key} is set by the cluster (every listener on {HOST}, "
                                         "every file in its directory)")
        if "\n" in key or "\n" in val:
            raise ClusterSpecError(name, f"{key}: one line per setting")
        out[key] = val
    return tuple(sorted(out.items()))


# -- the nodes ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeLayout:
    """One process of the cluster: its name, role, id, port and folder (under the cluster's directory)."""

    name: str  # "broker-1", "controller-3000", "zookeeper"
    role: str  # "broker" | "controller" | "zookeeper"
    node_id: int | None  # None for ZooKeeper
    port: int
    directory: Path

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def config_file(self) -> Path:
        return self.directory / ("zoo.cfg" if self.role == "zookeeper" else "server.properties")

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def logs_dir(self) -> Path:
        return self.directory / "logs"

    @property
    def stdout_file(self) -> Path:
        """The JVM's own output (a crash before logging starts lands here)."""
        return self.directory / "stdout.log"


def layout(spec: ClusterSpec, root: Path, ports: list[int]) -> tuple[NodeLayout, ...]:
    """The cluster's nodes in start order (ZooKeeper or the controllers, then the brokers), one port each."""
    if len(ports) != spec.port_count or len(set(ports)) != len(ports):
        raise ValueError(f"need {spec.port_count} distinct ports, got {ports}")
    it = iter(ports)
    nodes: list[NodeLayout] = []
    if spec.mode == "zk":
        nodes.append(NodeLayout("zookeeper", "zookeeper", None, next(it), root / "zookeeper"))
    for cid in spec.controller_ids:
        nodes.append(NodeLayout(f"controller-{cid}", "controller", cid, next(it), root / f"controller-{cid}"))
    for bid in spec.broker_ids:
        nodes.append(NodeLayout(f"broker-{bid}", "broker", bid, next(it), root / f"broker-{bid}"))
    return tuple(nodes)


def cluster_id() -> str:
    """A new cluster id as Kafka writes one (Uuid.randomUuid: 16 random bytes, URL-safe base64, no padding),
    never starting with '-' (Kafka avoids it too: it would read as a flag)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def _properties(pairs: list[tuple[str, object]]) -> str:
    return "".join(f"{k}={v}\n" for k, v in pairs)


def server_properties(spec: ClusterSpec, node: NodeLayout, nodes: tuple[NodeLayout, ...]) -> str:
    """server.properties of a controller or broker: listeners on 127.0.0.1, data in the node's folder, and the
    small-cluster settings (few threads, internal topics no larger than the cluster, no topic made by
    accident)."""
    broker_listener = ("BROKER", f"BROKER://{node.address}")
    if spec.mode == "kraft":
        voters = ",".join(f"{n.node_id}@{n.address}" for n in nodes if n.role == "controller")
        pairs: list[tuple[str, object]] = [
            ("process.roles", node.role),
            ("node.id", node.node_id),
            ("controller.listener.names", "CONTROLLER"),
            ("controller.quorum.voters", voters),
            ("listener.security.protocol.map", "BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT"),
        ]
        if node.role == "controller":
            pairs += [("listeners", f"CONTROLLER://{node.address}"),
                      ("broker.session.timeout.ms", spec.session_timeout_ms)]
        else:
            pairs += [("listeners", broker_listener[1]), ("advertised.listeners", broker_listener[1]),
                      ("inter.broker.listener.name", broker_listener[0]),
                      ("broker.heartbeat.interval.ms", max(100, spec.session_timeout_ms // 6))]
    else:
        zk = next(n for n in nodes if n.role == "zookeeper")
        pairs = [
            ("broker.id", node.node_id),
            ("zookeeper.connect", zk.address),
            ("zookeeper.session.timeout.ms", spec.session_timeout_ms),
            ("listeners", broker_listener[1]),
            ("advertised.listeners", broker_listener[1]),
            ("listener.security.protocol.map", "BROKER:PLAINTEXT"),
            ("inter.broker.listener.name", broker_listener[0]),
        ]
    pairs.append(("log.dirs", node.data_dir))
    if node.role == "broker":
        replicas = min(3, spec.brokers)
        pairs += [
            ("auto.create.topics.enable", "false"),  # scenarios name their topics
            ("offsets.topic.replication.factor", replicas),
            ("offsets.topic.num.partitions", 3),
            ("transaction.state.log.replication.factor", replicas),
            ("transaction.state.log.num.partitions", 3),
            ("group.initial.rebalance.delay.ms", 0),
        ]
    pairs += [("num.network.threads", 2), ("num.io.threads", 2), ("num.recovery.threads.per.data.dir", 1),
              ("background.threads", 2)]
    if node.role == "broker":
        pairs += list(spec.broker_config)
    elif node.role == "controller":
        pairs += list(spec.controller_config)
    return f"# written by kreassign for a throwaway cluster (docs/cluster.md): every listener on {HOST}\n" \
        + _properties(pairs)


def zookeeper_config(node: NodeLayout) -> str:
    """zoo.cfg of the one ZooKeeper server: client port on 127.0.0.1, no admin server (its Jetty port, 8080).
    """
    return _properties([
        ("dataDir", node.data_dir),
        ("clientPort", node.port),
        ("clientPortAddress", HOST),
        ("tickTime", ZK_TICK_MS),
        ("maxClientCnxns", 0),
        ("admin.enableServer", "false"),
    ])


#: the distribution's log layout (config/log4j.properties, 4.x: log4j2.yaml): server.log, and the controller's
#: and the state-change logger's own files, which validate-trace reads (docs/validate-trace.md)
LOG_FILES = ("server", "controller", "state-change")
_LOGGERS = (  # (logger, level, file or None for server.log)
    ("kafka.controller", "TRACE", "controller"),
    ("org.apache.kafka.controller", "INFO", "controller"),
    ("state.change.logger", "INFO", "state-change"),
    ("kafka.request.logger", "WARN", None),
    ("kafka.network.RequestChannel$", "WARN", None),
)
_PATTERN = "[%d] %p %m (%c)%n"


def log4j_properties() -> str:
    """reload4j's configuration (Kafka 3.9), files under the node's -Dkafka.logs.dir."""
    lines = ["log4j.rootLogger=INFO, server"]
    for name in LOG_FILES:
        appender = name.replace("-", "")
        lines += [f"log4j.appender.{appender}=org.apache.log4j.FileAppender",
                  f"log4j.appender.{appender}.File=${{kafka.logs.dir}}/{name}.log",
                  f"log4j.appender.{appender}.layout=org.apache.log4j.PatternLayout",
                  f"log4j.appender.{appender}.layout.ConversionPattern={_PATTERN}"]
    for logger, level, file in _LOGGERS:
        if file is None:
            lines.append(f"log4j.logger.{logger}={level}")
        else:
            lines += [f"log4j.logger.{logger}={level}, {file.replace('-', '')}",
                      f"log4j.additivity.{logger}=false"]
    return "\n".join(lines) + "\n"


def log4j2_properties() -> str:
    """log4j 2's configuration (Kafka 4.x), the same files."""
    lines = []
    for name in LOG_FILES:
        appender = name.replace("-", "")
        lines += [f"appender.{appender}.type=File", f"appender.{appender}.name={appender}",
                  f"appender.{appender}.fileName=${{sys:kafka.logs.dir}}/{name}.log",
                  f"appender.{appender}.layout.type=PatternLayout",
                  f"appender.{appender}.layout.pattern={_PATTERN}"]
    lines += ["rootLogger.level=INFO", "rootLogger.appenderRef.server.ref=server"]
    for i, (logger, level, file) in enumerate(_LOGGERS):
        lines += [f"logger.l{i}.name={logger}", f"logger.l{i}.level={level}"]
        if file is not None:
            lines += [f"logger.l{i}.additivity=false",
                      f"logger.l{i}.appenderRef.a.ref={file.replace('-', '')}"]
    return "\n".join(lines) + "\n"


def jvm_argv(java: str, spec: ClusterSpec, lib: Path, root: Path, logs_dir: Path, main: str,
             args: list[str]) -> list[str]:
    """One JVM of the cluster: a small heap and the serial collector (several JVMs share two cores), no perf
    data file (a killed JVM would leave it in /tmp), temp files in the cluster's directory, the log
    configuration for either logging library, and the marker the clean-up finds it by."""
    return [
        java, f"-Xmx{spec.heap_mb}m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-XX:-UsePerfData", "-XX:+ExitOnOutOfMemoryError", "-Djava.net.preferIPv4Stack=true",
        "-Djava.awt.headless=true",
        f"-Djava.io.tmpdir={root / 'tmp'}", f"-Dkafka.logs.dir={logs_dir}",
        f"-Dlog4j.configuration=file:{root / 'log4j.properties'}",
        f"-Dlog4j2.configurationFile={root / 'log4j2.properties'}",
        "-Dzookeeper.admin.enableServer=false",
        marker_argument(root), "-cp", os.path.join(str(lib), "*"), main, *args,
    ]


def marker_argument(root: Path) -> str:
    return f"-D{MARKER_PROPERTY}={root}"


def format_args(spec: ClusterSpec, node: NodeLayout, cid: str) -> list[str]:
    """`kafka-storage format` of one KRaft node (kafka.tools.StorageTool in 3.9 and 4.x)."""
    args = ["format", "--cluster-id", cid, "--config", str(node.config_file)]
    if spec.metadata_version is not None:
        args += ["--release-version", spec.metadata_version]
    if spec.elr is not None and kafka_releases.release(spec.version).since("4.0"):
        args += ["--feature", f"eligible.leader.replicas.version={1 if spec.elr else 0}"]
    return args


def listeners_of(text: str) -> list[str]:
    """Every host:port a server.properties / zoo.cfg names for a listener (listeners, advertised listeners,
    controller voters, ZooKeeper's client address): what the tests check is 127.0.0.1 only."""
    out: list[str] = []
    settings = dict(line.split("=", 1) for line in text.splitlines()
                    if "=" in line and not line.startswith("#"))
    for key, value in settings.items():
        if key in ("listeners", "advertised.listeners"):
            out += [v.split("://", 1)[1] for v in value.split(",")]
        elif key == "controller.quorum.voters":
            out += [v.split("@", 1)[1] for v in value.split(",")]
        elif key == "zookeeper.connect":
            out += value.split(",")
        elif key == "clientPort":
            host = settings.get("clientPortAddress", "0.0.0.0")  # no address: every interface
            out.append(f"{host}:{value}")
    return out


__all__ = [
    "BROKERS_RANGE", "CONTROLLER_ID_BASE", "HOST", "KAFKA_MAIN", "KRAFT_CONTROLLERS", "LOG_FILES",
    "MARKER_PROPERTY", "MODES", "RESERVED_SETTINGS", "SESSION_RANGE_MS", "STORAGE_TOOL", "ZOOKEEPER_MAIN",
    "ClusterSpec", "ClusterSpecError", "NodeLayout", "cluster_id", "format_args", "jvm_argv", "layout",
    "listeners_of", "log4j2_properties", "log4j_properties", "marker_argument", "server_properties",
    "zookeeper_config",
]
