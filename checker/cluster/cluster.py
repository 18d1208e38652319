"""A real Kafka cluster on this machine, from a released Kafka (issue 24, docs/cluster.md).

    with start_cluster(ClusterSpec(version="4.4.0", mode="kraft", controllers=1, brokers=3)) as c:
        c.admin.create_topic("t", partitions=1, replication_factor=3)
        c.kill(2); c.restart(2)

Each node is its own JVM (`kafka.Kafka server.properties`, ZooKeeper's `QuorumPeerMain zoo.cfg`) on the broker
jars Maven resolved (releases.fetch(kind="broker")), in a fresh temporary directory, every listener on
127.0.0.1. Waits are conditions asked of the cluster itself through Kafka's Admin client (admin.py), each with
a timeout that fails naming what did not happen, with the tail of the log that says why.

Clean-up: `close()` (the `with` block's end, an exception in it, Ctrl-C, interpreter exit) kills every JVM of
the cluster and removes its directory; a watchdog process (watchdog.py) does the same if the driver itself is
killed.
"""

from __future__ import annotations

import atexit
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from kreassign.checker.implementations.kafka import KafkaSetupError, find_java_tools, releases

from kreassign.errors import InfraError

from . import config as C
from . import procs, watchdog
from .admin import MAIN_CLASS, AdminError, AdminRequestError, ClusterAdmin, compile_helper
from .config import ClusterSpec, NodeLayout

WATCHDOG_FILE = Path(watchdog.__file__).resolve()
POLL_S = 0.2  # how often a condition is asked again
TAIL_LINES = 15


class ClusterError(InfraError):
    """A cluster that cannot start, or a node that does not come back in time (exit 3)."""

    exit_code = 3


@dataclass(frozen=True)
class NodeInfo:
    """What a node is, for a caller: its name, role, id, address, pid and state."""

    name: str
    role: str
    node_id: int | None
    host: str
    port: int
    pid: int | None
    state: str  # "running", "paused", "stopped" (SIGTERM), "killed" (SIGKILL), "exited" (on its own)

    def to_json(self) -> dict:
        return {"name": self.name, "role": self.role, "id": self.node_id, "host": self.host,
                "port": self.port, "pid": self.pid, "state": self.state}


class _Node:
    def __init__(self, layout: NodeLayout):
        self.layout = layout
        self.proc: subprocess.Popen | None = None
        self.state = "new"
        self.log_mark = 0  # server.log's size when the process last started: "started" lines after it count

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def info(self) -> NodeInfo:
        state = self.state
        if state in ("running", "paused") and not self.running:
            state = "exited"
        return NodeInfo(self.layout.name, self.layout.role, self.layout.node_id, C.HOST, self.layout.port,
                        self.proc.pid if self.running else None, state)


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C while the clean-up runs (a second Ctrl-C must not leave half a cluster); it is delivered
    after. Main thread only: elsewhere signals are not delivered anyway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Cluster:
    """A running cluster; use `start_cluster(spec)`, and `with` it (or call `close()`)."""

    def __init__(self, spec: ClusterSpec, *, log: Callable[[str], None] | None = None):
        self.spec = spec
        self._log = log or (lambda _line: None)
        self._nodes: dict[str, _Node] = {}
        self._closed = False
        self._watchdog: subprocess.Popen | None = None
        self._admin: ClusterAdmin | None = None
        self.directory: Path | None = None
        self.cluster_id = C.cluster_id()
        self.started_in_s: float | None = None

    # -- start --------------------------------------------------------------------------------------------

    def start(self) -> Cluster:
        """Resolve the release (Maven, on first use), lay the cluster out, format (KRaft), start every node
        and wait until every broker is registered and unfenced; on any failure (or Ctrl-C) everything is
        removed."""
        began = time.monotonic()
        atexit.register(self.close)
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        self.started_in_s = time.monotonic() - began
        self._log(f"cluster: {self.spec.describe()} is up in {self.started_in_s:.1f} s")
        return self

    def _start(self) -> None:
        spec = self.spec
        release = releases.cached(spec.version, "broker") or releases.fetch(spec.version, kind="broker",
                                                                            log=self._log)
        self._lib = release.lib
        try:
            self._java, javac = find_java_tools()
        except KafkaSetupError as e:
            raise ClusterError(str(e).replace("--impl kafka", "a Kafka cluster")) from None
        helper_classes = compile_helper(javac, release.lib, spec.version)
        # one deadline for the whole start (Maven and javac, once per release, are not part of it)
        deadline = time.monotonic() + spec.start_timeout_s

        def remaining() -> float:
            return max(0.5, deadline - time.monotonic())

        self.directory = Path(tempfile.mkdtemp(prefix="kreassign-cluster-")).resolve()
        # the watchdog first: from here on, whatever happens to this process, the directory and its JVMs go
        self._watchdog = subprocess.Popen(
            [sys.executable, "-I", "-S", str(WATCHDOG_FILE), str(self.directory)], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
        root = self.directory
        (root / "tmp").mkdir()
        (root / "log4j.properties").write_text(C.log4j_properties(), encoding="utf-8")
        (root / "log4j2.properties").write_text(C.log4j2_properties(), encoding="utf-8")
        nodes = C.layout(spec, root, procs.free_ports(spec.port_count))
        for layout in nodes:
            layout.directory.mkdir()
            layout.logs_dir.mkdir()
            text = C.zookeeper_config(layout) if layout.role == "zookeeper" \
                else C.server_properties(spec, layout, nodes)
            layout.config_file.write_text(text, encoding="utf-8")
            self._nodes[layout.name] = _Node(layout)
        self._log(f"cluster: starting {spec.describe()} in {root}")
        helper_dir = root / "admin"
        (helper_dir / "logs").mkdir(parents=True)
        # the helper's JVM starts while the nodes are formatted and start (it connects once brokers listen)
        self._admin = ClusterAdmin(self._helper_argv(helper_classes, helper_dir), helper_dir,
                                   helper_dir / "stdout.log")
        self._admin.start()
        if spec.mode == "kraft":
            self._format_storage(remaining())
            self._log(f"cluster: formatted the storage of {len(self._nodes)} nodes")
        else:
            zk = self._nodes["zookeeper"]
            self._launch(zk)
            self.wait_for("ZooKeeper serving on " + zk.layout.address,
                          lambda: None if procs.zookeeper_serving(zk.layout.port) else "no answer to srvr",
                          remaining(), nodes=["zookeeper"])
        for node in self._nodes.values():
            if node.layout.role != "zookeeper":
                self._launch(node)
        self._log(f"cluster: launched {len(self._nodes)} nodes")
        self.wait_until_ready(remaining())
        found: dict[str, str] = {}

        def cluster_id_known() -> str | None:
            found["id"] = self.admin.describe_cluster(timeout_s=5)["cluster_id"]
            return None

        self.wait_for("the cluster id", cluster_id_known, remaining())
        self.cluster_id = found["id"]  # zk mode: the one ZooKeeper holds; KRaft: the one formatted

    def _helper_argv(self, classes: Path, helper_dir: Path) -> list[str]:
        """The Admin helper's JVM: the cluster's JVM options, its classes ahead of the release's jars."""
        argv = C.jvm_argv(self._java, self.spec, self._lib, self.directory, helper_dir / "logs", MAIN_CLASS,
                          [self.bootstrap])
        cp = argv.index("-cp")
        argv[cp + 1] = f"{classes}:{argv[cp + 1]}"
        return argv

    def _format_storage(self, timeout_s: float) -> None:
        """`kafka-storage format` every KRaft node at once (one JVM each), with the cluster's id."""
        runs = []
        for node in self._nodes.values():
            lay = node.layout
            argv = C.jvm_argv(self._java, self.spec, self._lib, self.directory, lay.logs_dir, C.STORAGE_TOOL,
                              C.format_args(self.spec, lay, self.cluster_id))
            runs.append((node, procs.launch(argv, lay.directory, lay.directory / "format.log")))
        deadline = time.monotonic() + timeout_s
        for node, proc in runs:
            try:
                code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                procs.kill_and_reap(proc)
                code = None
            if code != 0:
                raise ClusterError(f"{self.spec.describe()}: formatting {node.layout.name}'s storage "
                                   + ("timed out" if code is None else f"failed (exit {code})")
                                   + self._tail(node.layout.directory / "format.log"))

    def _launch(self, node: _Node) -> None:
        lay = node.layout
        if lay.role == "zookeeper":
            main, args = C.ZOOKEEPER_MAIN, [str(lay.config_file)]
        else:
            main, args = C.KAFKA_MAIN, [str(lay.config_file)]
        server_log = lay.logs_dir / "server.log"
        node.log_mark = server_log.stat().st_size if server_log.exists() else 0
        argv = C.jvm_argv(self._java, self.spec, self._lib, self.directory, lay.logs_dir, main, args)
        node.proc = procs.launch(argv, lay.directory, lay.stdout_file)
        node.state = "running"

    # -- conditions ---------------------------------------------------------------------------------------

    def wait_for(self, what: str, check: Callable[[], str | None], timeout_s: float,
                 nodes: list[str] | None = None) -> None:
        """Ask `check` until it returns None (done); it returns what is still missing otherwise. A node of
        `nodes` (default: every node meant to run) that exits, or the timeout, raises ClusterError naming
        `what`, what is missing and the tail of the implicated nodes' logs."""
        watched = [self._node(n) for n in nodes] if nodes is not None else \
            [n for n in self._nodes.values() if n.state in ("running", "paused")]
        deadline = time.monotonic() + timeout_s
        while True:
            for node in watched:
                if node.state == "running" and not node.running:
                    code = node.proc.returncode if node.proc is not None else None
                    raise ClusterError(f"{self.spec.describe()}: {node.layout.name} exited (code {code}) "
                                       f"while waiting for {what}" + self._node_tail(node))
            try:
                missing = check()
            except (AdminError, AdminRequestError) as e:
                missing = str(e)
            if missing is None:
                return
            if time.monotonic() > deadline:
                implicated = [n for n in watched if n.layout.name in missing] or watched
                raise ClusterError(f"{self.spec.describe()}: {what} did not happen within {timeout_s:.0f} s: "
                                   f"{missing}" + "".join(self._node_tail(n) for n in implicated))
            time.sleep(POLL_S)

    def _brokers_missing(self) -> str | None:
        """None once every running broker, asked itself, lists every running broker (registered, and in KRaft
        unfenced): a client asking any of them sees the whole cluster."""
        running = [n for n in self._nodes.values() if n.layout.role == "broker" and n.state == "running"]
        expected = tuple(sorted(n.layout.node_id for n in running))  # not a paused one
        for node in running:
            view = procs.broker_view(node.layout.port)
            if view is None:
                return f"{node.layout.name} does not answer on {node.layout.address}"
            absent = [b for b in expected if b not in view.brokers]
            if absent:
                return (f"broker(s) {', '.join(f'broker-{b}' for b in absent)} not registered and unfenced in "
                        f"{node.layout.name}'s metadata (it lists {list(view.brokers)})")
        return None

    def _controller_missing(self) -> str | None:
        if self.spec.mode == "kraft":
            q = self.admin.quorum(timeout_s=5)
            if q["leader"] not in self.spec.controller_ids:
                return f"no active controller (quorum leader {q['leader']})"
        elif self.admin.describe_cluster(timeout_s=5)["controller"] is None:
            return "no broker is the controller"
        return None

    def wait_until_ready(self, timeout_s: float | None = None) -> None:
        """Every running broker registered, unfenced and answering; an active controller."""
        self.wait_for("every broker registered and unfenced",
                      lambda: self._brokers_missing() or self._controller_missing(),
                      timeout_s if timeout_s is not None else self.spec.start_timeout_s)

    # -- the nodes ----------------------------------------------------------------------------------------

    def _node(self, node: int | str) -> _Node:
        if isinstance(node, str) and node in self._nodes:
            return self._nodes[node]
        for n in self._nodes.values():
            if n.layout.node_id == node and not isinstance(node, bool):
                return n
        raise KeyError(f"no node {node!r} in this cluster (nodes: {', '.join(self._nodes)})")

    @property
    def nodes(self) -> list[NodeInfo]:
        return [n.info() for n in self._nodes.values()]

    @property
    def brokers(self) -> tuple[int, ...]:
        return self.spec.broker_ids

    @property
    def controllers(self) -> tuple[int, ...]:
        """The KRaft controllers' ids (empty in ZooKeeper mode: the controller is a broker)."""
        return self.spec.controller_ids

    @property
    def bootstrap(self) -> str:
        """bootstrap.servers for a client: every broker's 127.0.0.1:port."""
        return ",".join(n.layout.address for n in self._nodes.values() if n.layout.role == "broker")

    @property
    def admin(self) -> ClusterAdmin:
        if self._admin is None:
            raise ClusterError("the cluster is not started (or is closed)")
        return self._admin

    def address(self, node: int | str) -> str:
        return self._node(node).layout.address

    def data_dir(self, node: int | str) -> Path:
        """A node's data directory (its log.dirs; a KRaft controller's `__cluster_metadata-0` is in it)."""
        return self._node(node).layout.data_dir

    def tool_argv(self, main: str, args: list[str]) -> list[str]:
        """The argv of a JVM running `main` of the cluster's release (the broker lib classpath, the cluster's JVM
        options, its log4j output under the cluster's `tools/logs`): for Kafka's own tools, e.g. the dump-log
        tool reading a node's segments. The caller runs it (and bounds its time)."""
        if self.directory is None:
            raise ClusterError("the cluster is not started (or is closed)")
        logs = self.directory / "tools" / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        return C.jvm_argv(self._java, self.spec, self._lib, self.directory, logs, main, list(args))

    def pid(self, node: int | str) -> int | None:
        n = self._node(node)
        return n.proc.pid if n.running else None

    def pids(self) -> dict[str, int]:
        """Every live process of the cluster by node name (and "admin", the Admin helper)."""
        out = {name: n.proc.pid for name, n in self._nodes.items() if n.running}
        if self._admin is not None and self._admin.pid is not None:
            out["admin"] = self._admin.pid
        return out

    def kill(self, node: int | str) -> None:
        """SIGKILL: the node vanishes without a word (a crash, a power cut)."""
        n = self._node(node)
        if n.proc is not None:
            procs.kill_and_reap(n.proc)
        n.state = "killed"
        self._log(f"cluster: killed {n.layout.name}")

    def stop(self, node: int | str, timeout_s: float = 60.0) -> None:
        """SIGTERM: a clean shutdown (a broker's controlled shutdown moves its leaderships first); SIGKILL if
        it has not ended within `timeout_s`."""
        n = self._node(node)
        if n.running:
            procs.signal_group(n.proc, signal.SIGCONT)  # a paused JVM cannot shut down
            procs.signal_group(n.proc, signal.SIGTERM)
            try:
                n.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self._log(f"cluster: {n.layout.name} did not stop within {timeout_s:.0f} s; killed")
                procs.kill_and_reap(n.proc)
        n.state = "stopped"
        self._log(f"cluster: stopped {n.layout.name}")

    def pause(self, node: int | str) -> None:
        """SIGSTOP: the JVM freezes (a long GC pause, a hung disk); its sessions expire while it sleeps."""
        n = self._node(node)
        if not n.running:
            raise ClusterError(f"{n.layout.name} is not running ({n.state})")
        procs.signal_group(n.proc, signal.SIGSTOP)
        n.state = "paused"
        self._until_state(n, lambda s: s == "T", "stopped")  # the kernel stops every thread, not at once

    def resume(self, node: int | str) -> None:
        """SIGCONT after pause."""
        n = self._node(node)
        if n.running:
            procs.signal_group(n.proc, signal.SIGCONT)
            n.state = "running"
            self._until_state(n, lambda s: s != "T", "running again")

    def _until_state(self, n: _Node, ok: Callable[[str], bool], what: str, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not ok(procs.process_state(n.proc.pid) or "Z"):
            if time.monotonic() > deadline:
                raise ClusterError(f"{n.layout.name} is not {what} {timeout_s:.0f} s after the signal")
            time.sleep(0.01)

    def restart(self, node: int | str, timeout_s: float | None = None) -> None:
        """Stop the node if it runs (SIGTERM), start it again on the same port and data, and wait until it is
        back: a broker registered and unfenced, a controller started and a quorum leader known, ZooKeeper
        serving."""
        n = self._node(node)
        if n.running:
            self.stop(node)
        timeout_s = timeout_s if timeout_s is not None else self.spec.start_timeout_s
        self._launch(n)
        self._log(f"cluster: restarting {n.layout.name}")
        if n.layout.role == "zookeeper":
            self.wait_for("ZooKeeper serving again",
                          lambda: None if procs.zookeeper_serving(n.layout.port) else "no answer to srvr",
                          timeout_s, nodes=[n.layout.name])
        elif n.layout.role == "controller":
            self.wait_for(f"{n.layout.name} started",
                          lambda: None if self._started_since_launch(n) else f"{n.layout.name} is starting",
                          timeout_s, nodes=[n.layout.name])
            self.wait_for("an active controller", self._controller_missing, timeout_s, nodes=[n.layout.name])
        else:
            self.wait_for(f"{n.layout.name} registered and unfenced", self._brokers_missing, timeout_s,
                          nodes=[n.layout.name])

    def _started_since_launch(self, n: _Node) -> bool:
        try:
            with open(n.layout.logs_dir / "server.log", "rb") as f:
                f.seek(n.log_mark)
                text = f.read()
        except OSError:
            return False
        return b"Kafka Server started" in text or b"] started (kafka.server.KafkaServer)" in text

    def active_controller(self, timeout_s: float = 10.0) -> int:
        """KRaft: the metadata quorum's leader (a controller id); ZooKeeper mode: the controller broker."""
        if self.spec.mode == "kraft":
            leader = self.admin.quorum(timeout_s)["leader"]
        else:
            leader = self.admin.describe_cluster(timeout_s)["controller"]
        if leader is None or leader < 0:
            raise ClusterError(f"{self.spec.describe()}: no active controller right now")
        return leader

    def logs(self, node: int | str, name: str = "server") -> str:
        """A node's log: "server" (the default), "controller", "state-change" (Kafka's distribution splits
        them so), or "stdout" (the JVM's own output)."""
        n = self._node(node)
        if name == "stdout":
            path = n.layout.stdout_file
        elif name in C.LOG_FILES:
            path = n.layout.logs_dir / f"{name}.log"
        else:
            raise ValueError(f"no log {name!r} (one of stdout, {', '.join(C.LOG_FILES)})")
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def _tail(self, path: Path, lines: int = TAIL_LINES) -> str:
        try:
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        if not text:
            return ""
        return f"\n--- last lines of {path.relative_to(self.directory) if self.directory else path} ---\n" \
            + "\n".join(text)

    def _node_tail(self, node: _Node) -> str:
        lay = node.layout
        return self._tail(lay.logs_dir / "server.log") + self._tail(lay.stdout_file, 5)

    # -- clean-up -----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Kill every JVM of the cluster, remove its directory, end the watchdog. Idempotent; Ctrl-C waits."""
        if self._closed:
            return
        self._closed = True
        with _sigint_deferred():
            atexit.unregister(self.close)
            if self._admin is not None:
                self._admin.close()
            for node in self._nodes.values():
                if node.proc is not None:
                    procs.kill_and_reap(node.proc)  # the data is thrown away: no reason to shut down cleanly
            if self.directory is not None:
                watchdog.sweep(str(self.directory))  # anything else carrying the marker, then the directory
            if self._watchdog is not None:
                try:
                    self._watchdog.stdin.close()  # type: ignore[union-attr]
                    self._watchdog.wait(timeout=20)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._log("cluster: stopped; every process ended and its directory removed")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_cluster(spec: ClusterSpec, *, log: Callable[[str], None] | None = None) -> Cluster:
    """Start `spec`'s cluster and wait until it is ready; a ClusterError (exit 3) if it cannot start, with
    nothing left behind."""
    return Cluster(spec, log=log).start()


__all__ = ["Cluster", "ClusterError", "NodeInfo", "start_cluster"]
