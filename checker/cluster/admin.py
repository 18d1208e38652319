"""Kafka's own Admin client, driven from Python: the helper `java/KreassignClusterAdmin.java` (package data),
compiled with javac against the release's broker jars on first use and cached, runs in one JVM per cluster and
answers JSON lines (docs/cluster.md). This is how the cluster is asked what it thinks: which brokers are
registered and unfenced, who leads the metadata quorum, where a topic's replicas are.

A reply Kafka refused (a topic that exists, a reassignment of an unknown partition) raises `AdminRequestError`
with Kafka's exception class; a helper that died or did not answer in time raises `AdminError` (exit 3).

The same helper also speaks to a user's own cluster (external.py: `--bootstrap-server`, `--command-config`); the
credentials of that connection are `secrets`, replaced by `[hidden]` in every message this module makes.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

from kreassign.checker.implementations.javac import compile_into
from kreassign.checker.implementations.kafka.releases import cache_root

from kreassign.errors import InfraError

from . import procs

SOURCE = Path(__file__).resolve().parent / "java" / "KreassignClusterAdmin.java"
MAIN_CLASS = "KreassignClusterAdmin"
HIDDEN = "[hidden]"
SHORT_SECRET = 6  # a secret shorter than this is hidden where it stands alone (not inside a longer word)


class AdminError(InfraError):
    """The Admin helper could not be compiled, died, or did not answer in time (exit 3)."""

    exit_code = 3


class AdminRequestError(Exception):
    """Kafka answered a request with an error: `error_class` is its exception (TopicExistsException, ...)."""

    def __init__(self, op: str, error_class: str, message: str):
        super().__init__(f"{op}: {error_class}: {message}")
        self.op, self.error_class, self.message = op, error_class, message


class AdminCreateError(AdminRequestError):
    """Kafka's Admin client could not be created (a property it refuses, an unresolvable bootstrap address): the
    helper answers every request with this."""


def compile_helper(javac: str, lib: Path, version: str) -> Path:
    """javac the helper against the release's jars into the cache (keyed by source, jars and javac)."""
    h = hashlib.sha256(SOURCE.read_bytes())
    for jar in sorted(lib.glob("*.jar")):
        st = jar.stat()
        h.update(f"{jar.name}|{st.st_size}|{int(st.st_mtime)}\n".encode())
    h.update(javac.encode())
    target = cache_root() / f"cluster-admin-{version}-{h.hexdigest()[:20]}"

    return compile_into(target, target / f"{MAIN_CLASS}.class", javac, ["-cp", os.path.join(str(lib), "*"), str(SOURCE)],
                        f"the cluster's Admin helper against Kafka {version} ({lib})", AdminError)


def _secret_pattern(secret: str) -> re.Pattern[str]:
    """Where a secret is hidden: anywhere; a short one (a username "kafka") only where it stands alone, not
    inside a longer word or dotted name ("org.apache.kafka.clients"), so that messages stay readable."""
    if len(secret) >= SHORT_SECRET:
        return re.compile(re.escape(secret))
    return re.compile(rf"(?<![\w.-]){re.escape(secret)}(?![\w-]|\.\w)")


class ClusterAdmin:
    """One helper JVM speaking to the cluster through `bootstrap`; requests are serialised (one at a time)."""

    #: how long past a request's own timeout (Kafka's, inside the helper) its reply may take
    REPLY_MARGIN_S = 10.0

    def __init__(self, argv: list[str], cwd: Path, output: Path, secrets: Iterable[str] = ()):
        self._argv, self._cwd, self._output = argv, cwd, output
        # longest first: a secret that contains another is hidden whole
        self._secrets = [_secret_pattern(s) for s in sorted({s for s in secrets if s}, key=len, reverse=True)]
        self._proc: subprocess.Popen | None = None
        self._replies: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the helper's JVM (again after one died or was given up on: each has its own replies)."""
        with open(self._output, "ab") as err:
            self._proc = subprocess.Popen(self._argv, cwd=self._cwd, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=err, close_fds=True, process_group=0)
        self._replies = queue.Queue()
        threading.Thread(target=self._read, args=(self._proc, self._replies), name="kreassign-cluster-admin",
                         daemon=True).start()

    @staticmethod
    def _read(proc: subprocess.Popen, replies: queue.Queue) -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            replies.put(line)
        replies.put(None)  # the helper ended

    def redact(self, text: str) -> str:
        """`text` with every secret of the connection replaced by [hidden]."""
        for pattern in self._secrets:
            text = pattern.sub(HIDDEN, text)
        return text

    def _tail(self) -> str:
        try:
            lines = self._output.read_text(errors="replace").splitlines()[-10:]
        except OSError:
            lines = []
        return self.redact("; its output ends:\n" + "\n".join(lines)) if lines else ""

    def _hide_errors(self, value: Any) -> Any:
        """A result's "error" texts (a broker that did not answer, per resource) redacted, in place."""
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "error" and isinstance(v, str):
                    value[k] = self.redact(v)
                else:
                    self._hide_errors(v)
        elif isinstance(value, list):
            for v in value:
                self._hide_errors(v)
        return value

    def call(self, op: str, timeout_s: float = 10.0, **args: Any) -> Any:
        """One request; Kafka's answer (`result`), or AdminRequestError for Kafka's error."""
        with self._lock:
            if self._closed:
                raise AdminError("the cluster is closed")
            if self._proc is None or self._proc.poll() is not None:
                self.start()  # it died, or a request was given up on: a new helper answers
            proc = self._proc
            request = {"op": op, "timeout_ms": int(timeout_s * 1000), **args}
            try:
                proc.stdin.write((json.dumps(request) + "\n").encode())  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
            except OSError:
                raise AdminError(f"the cluster's Admin helper stopped reading{self._tail()}") from None
            try:
                line = self._replies.get(timeout=timeout_s + self.REPLY_MARGIN_S)
            except queue.Empty:
                # a reply that came later would answer the next request: this helper is no use any more
                procs.kill_and_reap(proc)
                raise AdminError(f"the cluster's Admin helper did not answer {op} within "
                                 f"{timeout_s + self.REPLY_MARGIN_S:.0f} s") from None
            if line is None:
                self._proc = None
                raise AdminError(f"the cluster's Admin helper ended{self._tail()}")
        reply = json.loads(line)
        if not reply.get("ok"):
            error = AdminCreateError if reply.get("create_failed") else AdminRequestError
            raise error(op, reply.get("error_class", "?"), self.redact(str(reply.get("error", ""))))
        return self._hide_errors(reply.get("result")) if self._secrets else reply.get("result")

    def close(self) -> None:
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        procs.kill_and_reap(proc, timeout_s=10)
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the cluster is asked ------------------------------------------------------------------------

    def describe_cluster(self, timeout_s: float = 10.0, *, include_fenced: bool = False) -> dict:
        """{"cluster_id", "controller" (ZooKeeper mode: the controller broker; KRaft: any broker), "brokers":
        [{"id", "host", "port", "rack"}], "fenced_known"}: the brokers registered and unfenced, as a broker's
        metadata says (rack None without broker.rack). With `include_fenced`, the fenced ones too, each with
        "fenced" (KIP-1073) and "fenced_known" True; False, and no "fenced" keys, when the helper's jars or the
        cluster (Kafka before 4.0, ZooKeeper mode) cannot list them."""
        if include_fenced:
            return self.call("describe_cluster", timeout_s, include_fenced=True)
        return self.call("describe_cluster", timeout_s)

    def broker_ids(self, timeout_s: float = 10.0) -> list[int]:
        return [b["id"] for b in self.describe_cluster(timeout_s)["brokers"]]

    def quorum(self, timeout_s: float = 10.0) -> dict:
        """KRaft's metadata quorum: {"leader", "leader_epoch", "high_watermark", "voters", "observers"}."""
        return self.call("quorum", timeout_s)

    def features(self, timeout_s: float = 10.0) -> dict[str, int]:
        """The finalized features' levels (metadata.version, eligible.leader.replicas.version, ...)."""
        return self.call("features", timeout_s)["finalized"]

    def features_full(self, timeout_s: float = 10.0) -> dict[str, dict]:
        """{"finalized": {feature: level}, "supported": {feature: {"min", "max"}}}: the cluster's finalized
        levels, and the range the broker that answered supports (its release's: metadata.version's max is the
        release's latest production level)."""
        result = self.call("features", timeout_s)
        return {"finalized": result["finalized"], "supported": result.get("supported", {})}

    def list_topics(self, internal: bool = False, timeout_s: float = 10.0) -> list[str]:
        """The topics' names, sorted; Kafka's internal ones (__consumer_offsets, ...) only with `internal`."""
        return self.call("list_topics", timeout_s, internal=bool(internal))

    def describe_configs(self, resources: Iterable[tuple[str, str | int]], keys: Iterable[str] | None = None,
                         timeout_s: float = 10.0) -> dict[str, dict[str, dict]]:
        """Configs of ("topic", name) and ("broker", id) resources: {"topic": {name: {key: value}}, "broker":
        {id: {key: value}}} (ids as strings). With `keys`, only those, whatever their source (a topic's
        min.insync.replicas from the broker's default too); without, the ones not at Kafka's default. A
        sensitive value is None; a resource that did not answer is {"error_class", "error"}."""
        wanted = []
        for kind, name in resources:
            if kind not in ("topic", "broker"):
                raise ValueError(f"resource: topic or broker, not {kind!r}")
            if kind == "broker" and not str(name).isdigit():
                raise ValueError(f"a broker resource is named by its id, not {name!r}")
            wanted.append({"type": kind, "name": str(name)})
        return self.call("describe_configs", timeout_s, resources=wanted,
                         keys=None if keys is None else sorted(set(keys)))

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1, *,
                     assignment: dict[int, list[int]] | None = None, configs: dict[str, str] | None = None,
                     timeout_s: float = 30.0) -> None:
        args: dict[str, Any] = {"name": name}
        if assignment is not None:
            args["assignment"] = {str(p): list(r) for p, r in assignment.items()}
        else:
            args.update(partitions=partitions, replication_factor=replication_factor)
        if configs:
            args["configs"] = dict(configs)
        self.call("create_topic", timeout_s, **args)

    def delete_topics(self, names: list[str], timeout_s: float = 30.0) -> None:
        self.call("delete_topics", timeout_s, names=list(names))

    def describe_topics(self, names: list[str], timeout_s: float = 10.0) -> dict:
        """{topic: {"id", "partitions": [{"partition", "leader", "replicas", "isr", "elr",
        "last_known_elr"}]}}, as the brokers' metadata says."""
        return self.call("describe_topics", timeout_s, names=list(names))

    def log_dirs(self, brokers: list[int], timeout_s: float = 10.0) -> dict[int, dict]:
        """Asked of each broker itself: {broker: {"replicas": [{"topic", "partition", "size", "future"}]}} or
        {broker: {"error_class", "error"}} for a broker that did not answer."""
        return {int(b): v for b, v in self.call("log_dirs", timeout_s, brokers=list(brokers)).items()}

    def alter_reassignments(self, changes: list[tuple[str, int, list[int] | None]],
                            timeout_s: float = 30.0) -> list[dict]:
        """(topic, partition, target replicas or None to cancel) each; each partition's error or None."""
        return self.call("alter_reassignments", timeout_s, reassignments=[
            {"topic": t, "partition": p, "target": None if r is None else list(r)} for t, p, r in changes])

    def list_reassignments(self, timeout_s: float = 10.0) -> list[dict]:
        return self.call("list_reassignments", timeout_s)

    def elect_leaders(self, partitions: list[tuple[str, int]], unclean: bool = False,
                      timeout_s: float = 30.0) -> list[dict]:
        return self.call("elect_leaders", timeout_s, type="unclean" if unclean else "preferred",
                         partitions=[{"topic": t, "partition": p} for t, p in partitions])

    def alter_configs(self, resource: str, name: str, *, set_: dict[str, str] | None = None,
                      delete: list[str] | None = None, timeout_s: float = 10.0) -> None:
        """Incremental changes of a `resource` ("topic" or "broker") config: keys set, keys deleted (back to the
        default); a broker's are dynamic configs (kafka-configs.sh --entity-type brokers)."""
        if resource not in ("topic", "broker"):
            raise ValueError(f"resource: topic or broker, not {resource!r}")
        self.call("alter_configs", timeout_s, resource=resource, name=name, set=dict(set_ or {}),
                  delete=list(delete or []))

    def produce(self, topic: str, partition: int, *, records: int = 1, size: int = 1024,
                timeout_s: float = 10.0) -> list[int]:
        """`records` records of `size` bytes into one partition, each acknowledged by its leader (acks=1); their
        offsets. A leaderless partition is an AdminRequestError (a TimeoutException) after `timeout_s`."""
        return self.call("produce", timeout_s, topic=topic, partition=partition, records=records, bytes=size)

    def znodes(self, connect: str, paths: list[str], timeout_s: float = 10.0) -> dict[str, dict]:
        """ZooKeeper mode: each path read with ZooKeeper's own client through `connect` (the cluster's ZooKeeper
        address): {path: {"exists": False} or {"exists": True, "data": text or None, "version", "children"}}."""
        return self.call("znodes", timeout_s, connect=connect, paths=list(paths))

    def delete_znode(self, connect: str, path: str, timeout_s: float = 10.0) -> None:
        """ZooKeeper mode: delete one znode (any version); a missing one is an AdminRequestError
        (NoNodeException)."""
        self.call("znode_delete", timeout_s, connect=connect, path=path)


__all__ = ["HIDDEN", "AdminCreateError", "AdminError", "AdminRequestError", "ClusterAdmin",
           "compile_helper"]
