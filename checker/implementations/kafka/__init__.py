"""Apache Kafka's own KRaft controller as an implementation under test (issue 12, docs/kafka.md).

`KafkaImplementation` runs the Java adapter `java/core/.../KreassignAdapter.java` with the release's layer chain
`java/layers/vX_Y/.../*.java` (`layer_sources`; package data, compiled with `javac` on first use and cached)
in one JVM per run, and speaks
the subprocess protocol of docs/adapters.md to it through `SubprocessImplementation`:
`reset` puts Kafka's ReplicationControlManager / ClusterControlManager into a kreassign state,
`apply` drives one action through Kafka's own entry point and reads the state back.

The implementation spec is `kafka` or `kafka[key=value,...]` with the keys
`version` (a release, resolved by Maven into the cache on first use: releases.py; default the
newest), `classpath` (a Kafka distribution's `libs/` directory, or jars separated by ':' or ',';
the version is read from its jars), `metadata.version` (default the release's latest production
level), `zk-migration` and `bug` (a planted bug, for the tests).

Errors of the set-up (no java/javac, a classpath without Kafka's controller classes, a
failed compilation) raise `KafkaSetupError`, an `InfraError` (exit code 3) naming what is
missing.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kreassign.checker.implementations.adapters import (
    DEFAULT_TIMEOUT,
    ImplementationError,
    SubprocessImplementation,
)
from kreassign.checker.implementations.javac import compile_into
from kreassign.spec import actions as A
from kreassign.spec import kafka_releases
from kreassign.spec.codec import to_json
from kreassign.spec.state import ClusterState

from kreassign.errors import InfraError, UsageError

from . import releases
from .releases import cache_root

#: where the adapter's Java source lives (package data): a version-independent core and one thin layer per
#: release whose controller API differs (java/layers/vX_Y: used from release X.Y on; it holds only what
#: differs from the layers before it, see layer_sources)
JAVA_ROOT = Path(__file__).resolve().parent / "java"
PACKAGE_DIR = Path("org") / "apache" / "kafka" / "controller"
CORE_SOURCE = JAVA_ROOT / "core" / PACKAGE_DIR / "KreassignAdapter.java"
LAYERS_ROOT = JAVA_ROOT / "layers"
#: the class the core calls, generated into the compile's directory: `final class KafkaRelease extends
#: KafkaReleaseX_Y` (the newest layer class not newer than the release), with the chosen layer's name
LAYER_FILE = PACKAGE_DIR / "KafkaRelease.java"
_LAYER_CLASS = re.compile(r"KafkaRelease(\d+)_(\d+)\.java")
_EXTENDS = re.compile(r"\bclass\s+KafkaRelease(\d+)_(\d+)\s+extends\s+KafkaRelease(\d+)_(\d+)\b")
ADAPTER_CLASS = "org.apache.kafka.controller.KreassignAdapter"

#: the class every Kafka classpath must provide (kafka-metadata-*.jar)
CONTROLLER_CLASS = "org/apache/kafka/controller/ReplicationControlManager.class"

#: metadata.versions some supported release accepts (spec/kafka_releases.py has each release's range)
SUPPORTED_METADATA_VERSIONS = tuple(dict.fromkeys(v for r in kafka_releases.RELEASES for v in r.metadata_versions))
BUGS = ("wrong-partition",)


class KafkaSetupError(InfraError, ImplementationError):
    """Java or Kafka's classes are missing, or the adapter does not compile (exit code 3)."""

    exit_code = 3


# -- finding java, javac and Kafka ---------------------------------------------------------------------


def find_java_tools() -> tuple[str, str]:
    """(java, javac): from $JAVA_HOME/bin, then the PATH (the JDK's own convention)."""
    found: dict[str, str | None] = {}
    home = os.environ.get("JAVA_HOME")
    for tool in ("java", "javac"):
        in_home = os.path.join(home, "bin", tool) if home else None
        found[tool] = in_home if in_home and os.access(in_home, os.X_OK) else shutil.which(tool)
    missing = [t for t, p in found.items() if p is None]
    if missing:
        raise KafkaSetupError(
            f"--impl kafka needs a JDK (17 or newer): {' and '.join(missing)} not found on the PATH "
            f"(nor in $JAVA_HOME/bin); install one, e.g. apt-get install openjdk-17-jdk-headless")
    return str(found["java"]), str(found["javac"])


def expand_classpath(spec: str) -> list[Path]:
    """A directory of jars (a Kafka distribution's libs/), or jars / directories separated by ':' or ','."""
    out: list[Path] = []
    for part in re.split(f"[,{re.escape(os.pathsep)}]", spec):
        part = part.strip()
        if not part:
            continue
        p = Path(part).expanduser()
        if p.is_dir():
            jars = sorted(p.glob("*.jar"))
            if not jars:
                raise KafkaSetupError(f"--kafka-classpath: the directory {part} holds no .jar files")
            out += jars
        elif p.is_file():
            out.append(p)
        else:
            raise KafkaSetupError(f"--kafka-classpath: {part}: no such file or directory")
    if not out:
        raise KafkaSetupError("--kafka-classpath: empty classpath")
    return out


def _jar_has(jar: Path, entry: str) -> bool:
    try:
        with zipfile.ZipFile(jar) as z:
            z.getinfo(entry)
            return True
    except (KeyError, zipfile.BadZipFile, OSError):
        return False


def kafka_version(jars: list[Path]) -> str | None:
    """Kafka's version from kafka/kafka-version.properties in the classpath (kafka-clients carries it)."""
    for jar in jars:
        try:
            with zipfile.ZipFile(jar) as z:
                text = z.read("kafka/kafka-version.properties").decode("utf-8", "replace")
        except (KeyError, zipfile.BadZipFile, OSError):
            continue
        m = re.search(r"^version=(.+)$", text, re.MULTILINE)
        if m:
            return m.group(1).strip()
    return None


def _layers(version: str) -> list[tuple[tuple[int, int], Path]]:
    """The java/layers/vX_Y holding Java files and not newer than the release's minor, oldest first."""
    key = releases.version_key(releases.parse_version(version, flag="Kafka release"))[:2]
    found = []
    for d in LAYERS_ROOT.iterdir() if LAYERS_ROOT.is_dir() else []:
        m = re.fullmatch(r"v(\d+)_(\d+)", d.name)
        if m and (int(m.group(1)), int(m.group(2))) <= key and any((d / PACKAGE_DIR).glob("*.java")):
            found.append(((int(m.group(1)), int(m.group(2))), d))
    if not found:
        raise KafkaSetupError(f"--impl kafka: no adapter layer for Kafka {version} under {LAYERS_ROOT}")
    return sorted(found)


def layer_for(version: str) -> Path:
    """The adapter layer for a release: the greatest java/layers/vX_Y not newer than the release's minor."""
    return _layers(version)[-1][1]


def layer_sources(version: str) -> list[Path]:
    """The layer files compiled for a release, oldest first. Two kinds, neither ever newer than the release:

    - the layer classes `vX_Y/.../KafkaReleaseX_Y.java`: the newest one, and each one it extends (`class
      KafkaRelease4_3 extends KafkaRelease4_0`: only what 4.3 changes; a class that extends none starts a
      chain, as 4.0's, whose API shares nothing with 3.9's). The generated KafkaRelease extends the newest.
    - every other file name (a class that some release moved to another package, wrapped in a class of
      its own, as RecordBatches): from the newest layer that has a file of that name. Such a file must not
      go into a layer class, which later releases compile too.
    """
    layers = _layers(version)
    by_key = dict(layers)
    top = next((k for k, d in reversed(layers) if (d / PACKAGE_DIR / f"KafkaRelease{k[0]}_{k[1]}.java").is_file()), None)
    if top is None:
        raise KafkaSetupError(f"--impl kafka: no adapter layer class KafkaReleaseX_Y.java for Kafka {version} "
                              f"under {LAYERS_ROOT}")
    chain: list[Path] = []
    key: tuple[int, int] | None = top
    while key is not None:
        src = by_key[key] / PACKAGE_DIR / f"KafkaRelease{key[0]}_{key[1]}.java" if key in by_key else None
        if src is None or not src.is_file():
            raise KafkaSetupError(f"--impl kafka: {chain[-1]} extends KafkaRelease{key[0]}_{key[1]}, which no layer "
                                  f"not newer than Kafka {version} holds")
        chain.insert(0, src)
        m = _EXTENDS.search(src.read_text(encoding="utf-8"))
        parent = (int(m.group(3)), int(m.group(4))) if m else None
        if parent is not None and parent >= key:
            raise KafkaSetupError(f"--impl kafka: {src} extends a layer class that is not older than its own")
        key = parent
    moved: dict[str, Path] = {}
    for _, d in layers:
        for f in (d / PACKAGE_DIR).glob("*.java"):
            if not _LAYER_CLASS.fullmatch(f.name):
                moved[f.name] = f
    return chain + [moved[name] for name in sorted(moved)]


def release_class_source(version: str) -> str:
    """The generated KafkaRelease.java: the newest layer class for the release, and the chosen layer's name."""
    top = next(p for p in reversed(layer_sources(version)) if _LAYER_CLASS.fullmatch(p.name)).stem
    return (f"// generated by kreassign (checker/implementations/kafka/__init__.py) for Kafka {version}\n"
            "package org.apache.kafka.controller;\n\n"
            f"final class KafkaRelease extends {top} {{\n"
            "    private KafkaRelease() { }\n\n"
            f"    static final String LAYER = \"{layer_for(version).name}\";\n"
            "}\n")


@dataclass
class KafkaSetup:
    """What `--impl kafka` runs with: the tools, the classpath, Kafka's version, the compiled adapter."""

    java: str
    javac: str
    kafka_jars: list[Path]
    version: str
    source: str  # "maven cache" or "--kafka-classpath"
    classes: Path | None = None  # the compiled adapter (cache directory)

    @property
    def classpath(self) -> str:
        return os.pathsep.join(str(p) for p in self.kafka_jars)

    @property
    def layer(self) -> Path:
        return layer_for(self.version)

    @property
    def sources(self) -> list[Path]:
        """The files javac compiles, besides the generated LAYER_FILE (release_class_source)."""
        return [CORE_SOURCE, *layer_sources(self.version)]


def resolve_setup(classpath: str | None = None, version: str | None = None,
                  log: Any = None) -> KafkaSetup:
    """Find java/javac and Kafka's classes (a distribution's libs/, or the release resolved by Maven into
    the cache, fetched on first use); raise KafkaSetupError / MavenError naming what is missing."""
    java, javac = find_java_tools()
    if classpath:
        jars = expand_classpath(classpath)
        source = "--kafka-classpath"
        if not any(_jar_has(j, CONTROLLER_CLASS) for j in jars):
            raise KafkaSetupError(
                f"--impl kafka: the classpath {classpath} lacks Kafka's KRaft controller classes "
                f"(no {CONTROLLER_CLASS[:-6].replace('/', '.')}; a Kafka distribution has it in libs/kafka-metadata-*.jar)")
        found = kafka_version(jars)
        if found is None:
            raise KafkaSetupError(f"--kafka-classpath: {classpath}: no kafka-clients jar (kafka/kafka-version.properties) "
                                  "to read Kafka's version from")
        if version is not None and found != version:
            raise UsageError(f"--kafka-version {version} contradicts --kafka-classpath {classpath}, which holds Kafka {found}")
        try:
            releases.parse_version(found, flag="--kafka-classpath")
        except UsageError as e:
            raise UsageError(f"{e} (read from the jars of {classpath})") from None
        version = found
    else:
        version = version or releases.DEFAULT_RELEASE
        release = releases.classpath_for(version, log=log)
        jars = list(release.jars)
        source = "maven cache"
    return KafkaSetup(java, javac, jars, version, source)


# -- compiling the adapter once, cached -------------------------------------------------------------------


def _cache_key(setup: KafkaSetup) -> str:
    h = hashlib.sha256()
    for src in setup.sources:
        h.update(f"{src.name}|".encode() + src.read_bytes())
    h.update(release_class_source(setup.version).encode())
    for jar in setup.kafka_jars:
        st = jar.stat()
        h.update(f"{jar.resolve()}|{st.st_size}|{int(st.st_mtime)}\n".encode())
    h.update(setup.javac.encode())
    return h.hexdigest()[:20]


def compile_adapter(setup: KafkaSetup) -> Path:
    """javac the adapter's core, the release's layer chain and the generated KafkaRelease into the cache (keyed
    by the sources, the classpath and javac) unless it is there."""
    target = cache_root() / f"kafka-adapter-{setup.version}-{_cache_key(setup)}"
    marker = target / "org" / "apache" / "kafka" / "controller" / "KreassignAdapter.class"
    if marker.is_file():
        setup.classes = target
        return target
    compile_into(target, marker, setup.javac, ["-cp", setup.classpath, *(str(s) for s in setup.sources)],
                 f"the Kafka adapter (layer {setup.layer.name}) against Kafka {setup.version} ({setup.classpath})",
                 lambda message: KafkaSetupError(f"--impl kafka: {message}"),
                 generated={LAYER_FILE: release_class_source(setup.version)})
    setup.classes = target
    return target


def prepare(classpath: str | None = None, version: str | None = None, log: Any = None) -> KafkaSetup:
    setup = resolve_setup(classpath, version, log)
    compile_adapter(setup)
    return setup


# -- the implementation spec ------------------------------------------------------------------------------

SPEC_RE = re.compile(r"^kafka(?:\[(?P<opts>.*)\])?$", re.DOTALL)


@dataclass(frozen=True)
class KafkaOptions:
    classpath: str | None = None  # a distribution's libs/ (the version is read from its jars)
    metadata_version: str | None = None  # default: the release's latest production level
    bug: str | None = None
    zk_migration: bool = False  # ZooKeeper-migration mode (the controller's zookeeper.metadata.migration.enable)
    kafka_version: str | None = None  # a release resolved by Maven into the cache (default: releases.DEFAULT_RELEASE)
    elr: bool | None = None  # eligible leader replicas (KIP-966); default: what the release formats a new cluster with


OPTION_KEYS = ("version", "classpath", "metadata.version", "elr", "zk-migration", "bug")


def is_kafka_spec(spec: str) -> bool:
    return isinstance(spec, str) and SPEC_RE.match(spec.strip()) is not None


def parse_spec(spec: str) -> KafkaOptions:
    """`kafka` or `kafka[version=V,classpath=P,metadata.version=MV,bug=B]` (keys may repeat the CLI flags' names)."""
    m = SPEC_RE.match(spec.strip())
    if m is None:
        raise UsageError(f"implementation {spec!r}: expected 'kafka' or 'kafka[version=V,metadata.version=MV,classpath=PATH]'")
    values: dict[str, str] = {}
    opts = m.group("opts")
    if opts:
        for item in re.split(r",(?=[a-z.\-_]+=)", opts):
            key, sep, value = item.partition("=")
            key = key.strip().replace("-", "_").replace(".", "_")
            key = {"kafka_classpath": "classpath", "kafka_version": "version"}.get(key, key)
            if not sep or key not in ("version", "classpath", "metadata_version", "elr", "bug", "zk_migration"):
                raise UsageError(f"implementation {spec!r}: unknown option {item.strip()!r} ({', '.join(OPTION_KEYS)})")
            values[key] = value.strip()
    mv = values.get("metadata_version") or None
    if mv is not None:
        check_metadata_version(mv, values.get("version"))
    bug = values.get("bug") or None
    if bug is not None and bug not in BUGS:
        raise UsageError(f"implementation {spec!r}: unknown planted bug {bug!r} ({', '.join(BUGS)})")
    zk = values.get("zk_migration", "false").lower()
    if zk not in ("true", "false"):
        raise UsageError(f"implementation {spec!r}: zk-migration: expected true or false, got {zk!r}")
    version = values.get("version") or None
    if version is not None:
        releases.parse_version(version, flag=f"implementation {spec!r}: version")
    elr = values.get("elr")
    if elr is not None and elr.lower() not in ("true", "false"):
        raise UsageError(f"implementation {spec!r}: elr: expected true or false, got {elr!r}")
    return KafkaOptions(values.get("classpath") or None, mv, bug, zk == "true", version,
                        None if elr is None else elr.lower() == "true")


def check_metadata_version(mv: str, kafka_version: str | None = None) -> str:
    """A level the release accepts (any supported release's, when the release is not known yet); else exit 2."""
    accepted = SUPPORTED_METADATA_VERSIONS
    where = "any supported release"
    if kafka_version is not None:
        try:
            accepted = kafka_releases.release(kafka_version).metadata_versions
            where = f"Kafka {kafka_version}"
        except ValueError:
            pass  # the version's own check names it
    if mv not in accepted:
        raise UsageError(f"--metadata-version: {mv!r} is not accepted by {where} (accepted: "
                         f"{accepted[0]} .. {accepted[-1]}, e.g. {accepted[-1]})")
    return mv


def check_elr(elr: bool | None, kafka_version: str, metadata_version: str) -> bool:
    """ELR on or off: the release's default for a new cluster at this level, or what was asked (exit 2 if impossible)."""
    if elr is None:
        return kafka_releases.elr_default(kafka_version, metadata_version)
    if elr and not kafka_releases.elr_possible(kafka_version, metadata_version):
        raise UsageError(f"--elr on: eligible.leader.replicas.version 1 needs Kafka 4.0 or newer at metadata.version "
                         f"4.0-IV1 or newer (here Kafka {kafka_version} at {metadata_version})")
    return elr


def make_spec(classpath: str | None = None, metadata_version: str | None = None, *,
              kafka_version: str | None = None, zk_migration: bool = False, bug: str | None = None,
              elr: bool | None = None) -> str:
    """The implementation spec for the CLI flags (--kafka-version, --kafka-classpath, --metadata-version)."""
    opts = []
    if kafka_version:
        opts.append(f"version={kafka_version}")
    if metadata_version:
        opts.append(f"metadata.version={metadata_version}")
    if elr is not None:
        opts.append(f"elr={'true' if elr else 'false'}")
    if classpath:
        opts.append(f"classpath={classpath}")
    if zk_migration:
        opts.append("zk-migration=true")
    if bug:
        opts.append(f"bug={bug}")
    return "kafka" + (f"[{','.join(opts)}]" if opts else "")


# -- the implementation -------------------------------------------------------------------------------------

#: actions Kafka's controller has no counterpart for: the replication layer (logs, fetches) lives in
#: the brokers; differences.py declares that the reference moves records on top of Kafka's controller state
REPLICATION_ACTIONS = (A.Produce, A.FollowerFetch)


class KafkaImplementation(SubprocessImplementation):
    """Kafka's KRaft controller (a release from the Maven cache, or a distribution's libs/) in one JVM, behind the subprocess protocol (docs/adapters.md).

    `reset` is sent together with the next `apply` (one round trip per step: the adapter
    accepts a "state" in an apply request).
    """

    def __init__(self, options: KafkaOptions | None = None, *, timeout: float | None = None):
        self.options = options or KafkaOptions()
        self.setup = prepare(self.options.classpath, self.options.kafka_version)
        #: the release's row (its metadata.versions, ELR's default) and the level this run uses
        self.release = kafka_releases.release(self.setup.version)
        self.metadata_version = self.options.metadata_version or self.release.latest_production
        check_metadata_version(self.metadata_version, self.setup.version)
        #: ELR on or off, as the reference decides it for this release and level (spec/kafka_releases.py)
        self.elr = check_elr(self.options.elr, self.setup.version, self.metadata_version)
        argv = [self.setup.java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m",
                "-cp", os.pathsep.join([str(self.setup.classes), self.setup.classpath]), ADAPTER_CLASS,
                "--metadata-version", self.metadata_version]
        if self.elr:
            argv.append("--elr")
        if self.options.bug:
            argv += ["--bug", self.options.bug]
        if self.options.zk_migration:
            argv.append("--zk-migration")
        super().__init__(shlex.join(argv), timeout=DEFAULT_TIMEOUT if timeout is None else timeout)
        self.spec = make_spec(self.options.classpath, self.options.metadata_version,
                              kafka_version=self.options.kafka_version, zk_migration=self.options.zk_migration,
                              bug=self.options.bug, elr=self.options.elr)
        self._pending: tuple[str, ClusterState] | None = None
        self._current: ClusterState | None = None
        # prefetch(): Kafka's outcomes of every action from one state, fetched in one round trip
        self._prefetched: tuple[ClusterState, dict[Any, dict[str, Any]]] | None = None
        self.round_trips = 0

    # -- the Implementation protocol, with the reset folded into the next apply --------------------------
    def reset(self, profile: str, state: ClusterState) -> None:
        if profile != "kraft":
            raise ImplementationError(f"{self.spec}: Kafka {self.setup.version}'s KRaft controller implements the profile kraft, "
                                      f"not {profile}")
        self._pending = (profile, state)
        self._current = state

    def apply(self, action: Any) -> tuple[ClusterState, object]:
        state, response, _ = self.apply_with_records(action)
        return state, response

    def prefetch(self, state: ClusterState, actions: list[Any]) -> None:
        """Ask Kafka for the outcome of every action from `state` in one request (the `batch` op);
        the next reset(state) + apply(action) pairs are answered from it."""
        wanted = [a for a in actions if not isinstance(a, REPLICATION_ACTIONS)]
        if not wanted:
            return
        data = self.request({"op": "batch", "profile": "kraft", "state": to_json(state),
                             "actions": [to_json(a) for a in wanted]})
        self.round_trips += 1
        results = data.get("results")
        if not isinstance(results, list) or len(results) != len(wanted):
            raise self.fail("malformed reply to 'batch': expected one result per action")
        self._prefetched = (state, dict(zip(wanted, results)))

    def apply_with_records(self, action: Any, records: bool = False) -> tuple[ClusterState, object, list[dict]]:
        """One step; with `records`, also the step's metadata records as kafka-dump-log prints their payload."""
        if isinstance(action, REPLICATION_ACTIONS):
            return self._replication_step(action)
        cached = self._from_prefetch(action) if not records else None
        if cached is not None:
            return cached
        message: dict[str, Any] = {"op": "apply", "action": to_json(action)}
        if self._pending is not None:
            message["profile"], message["state"] = self._pending[0], to_json(self._pending[1])
        if records:
            message["records"] = True
        data = self.request(message)
        self.round_trips += 1
        self._pending = None
        state, response = self._decode_apply(data)
        state = self._refresh_logs(state)
        self._current = state
        return state, response, list(data.get("records", []))

    def _from_prefetch(self, action: Any) -> tuple[ClusterState, object, list[dict]] | None:
        if self._prefetched is None or self._pending is None:
            return None
        state, results = self._prefetched
        if self._pending[1] is not state and self._pending[1] != state:
            self._prefetched = None
            return None
        data = results.get(action)
        if data is None:
            return None
        if not data.get("ok"):
            from kreassign.checker.implementations.adapters import ImplementationRefused

            raise ImplementationRefused(f"{self.spec}: the implementation refused 'apply': {data.get('error')}")
        new_state, response = self._decode_apply(data)
        new_state = self._refresh_logs(new_state)
        self._pending = ("kraft", new_state)  # the JVM holds another state: an apply without reset sends this one
        self._current = new_state
        return new_state, response, []

    def _decode_apply(self, data: dict[str, Any]) -> tuple[ClusterState, object]:
        from kreassign.checker.implementations.adapters import decode_response
        from kreassign.spec.codec import DecodeError, state_from_json

        try:
            state = state_from_json(data["state"])
        except (KeyError, DecodeError) as e:
            raise self.fail(f"malformed state in the reply to 'apply': {e}") from None
        try:
            response = decode_response(data.get("response"), None)
        except DecodeError as e:
            raise self.fail(f"malformed response in the reply to 'apply': {e}") from None
        return state, response

    def _refresh_logs(self, state: ClusterState) -> ClusterState:
        """With the replication layer on, the high watermark follows Kafka's new ISR and leader (as Profile.apply)."""
        if any(p.log is not None for _, _, p in state.partitions()):
            from kreassign.reference.replication import refresh_all

            return refresh_all(state)
        return state

    def _replication_step(self, action: Any) -> tuple[ClusterState, object, list[dict]]:
        from kreassign.reference import replication

        if self._current is None:
            raise ImplementationError(f"{self.spec}: apply before reset")
        fn = replication.produce if isinstance(action, A.Produce) else replication.follower_fetch
        args = (action.topic, action.partition) + ((action.broker,) if isinstance(action, A.FollowerFetch) else ())
        step = fn(self._current, *args)
        state = self._refresh_logs(step.state)
        self._pending = ("kraft", state)
        self._current = state
        return state, step.response, []

    def dump_log(self) -> list[str]:
        """The metadata log since the last reset (bootstrap records, then one batch per step's records)
        as `kafka-dump-log.sh --cluster-metadata-decoder` prints a __cluster_metadata segment."""
        if self._pending is not None:
            raise ImplementationError(f"{self.spec}: dump_log before any apply since the last reset")
        return list(self.request({"op": "dump_log"})["lines"])

    def version_info(self) -> dict[str, Any]:
        """Kafka's version and commit, the metadata.version and the JVM's version, as the adapter reports them."""
        return self.request({"op": "version"})


def load(spec: str, *, timeout: float | None = None) -> KafkaImplementation:
    """load_implementation's hook for `kafka` / `kafka[...]`."""
    return KafkaImplementation(parse_spec(spec), timeout=timeout)


__all__ = [
    "SUPPORTED_METADATA_VERSIONS",
    "KafkaImplementation",
    "KafkaOptions",
    "KafkaSetup",
    "KafkaSetupError",
    "check_metadata_version",
    "compile_adapter",
    "is_kafka_spec",
    "layer_for",
    "layer_sources",
    "load",
    "make_spec",
    "parse_spec",
    "prepare",
    "resolve_setup",
]
