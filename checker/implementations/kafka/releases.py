"""Kafka's released controller jars, resolved by Maven into a per-user cache (issue 22, docs/kafka.md).

`kreassign kafka fetch VERSION` asks Maven — with the user's own Maven configuration, so its
default repository, mirrors and proxies — for the artifacts the KRaft controller needs
(kafka-metadata, kafka-server-common, kafka-raft, kafka-clients and their runtime
dependencies) and copies them into `<cache>/kafka/<VERSION>/lib/`. Maven downloads into its
own local repository (~/.m2 by default) once; the copy here makes a release's classpath one
directory, exactly like a distribution's `libs/`. Nothing here names a repository address or
resolves an artifact by itself: the POM handed to Maven only lists the four artifacts.

A release is usable once its directory holds `release.json` (written last, after an atomic
rename of the jars), so an interrupted fetch leaves nothing half-made behind.

A second artifact set, `kind="broker"` (`kreassign cluster fetch VERSION`, docs/cluster.md), is a
whole broker for real clusters: `org.apache.kafka:kafka_2.13` with its runtime dependencies (the
ZooKeeper client and server jars too, for 3.9), plus the SLF4J binding Kafka's own distribution
ships, at the version Maven resolved for its logging library. It lives beside the controller
set, in `<cache>/kafka-broker/<VERSION>/lib/`, so that either can be fetched again (`--force`)
without touching the other.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kreassign.spec import kafka_releases

from kreassign.errors import InfraError, UsageError

#: the newest patch release of every minor the adapter and the reference follow (docs/kafka.md, the release matrix)
RELEASES = tuple(r.version for r in kafka_releases.RELEASES)
NEWEST = kafka_releases.NEWEST
#: what `--impl kafka` runs without --kafka-version / --kafka-classpath
DEFAULT_RELEASE = NEWEST
#: what the controller classes need at run time; Maven adds their dependencies (jackson, zstd, ...)
CONTROLLER_ARTIFACTS = ("kafka-metadata", "kafka-server-common", "kafka-raft", "kafka-clients")
#: what a broker (`kafka.Kafka`), the storage tool, the dump-log tool and, for 3.9, ZooKeeper need (the core
#: artifact), and Kafka's command-line tools a distribution's libs/ also holds (kafka-tools: the reassignment
#: tool, `kafka-reassign-partitions.sh`'s class); Maven adds the rest
BROKER_ARTIFACTS = ("kafka_2.13", "kafka-tools")
#: the artifact sets: the controller's (the adapter's classpath) and a whole broker's (real clusters)
KINDS = ("controller", "broker")
GROUP = "org.apache.kafka"
VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")  # (a cached directory's name is a release)
MAVEN_TIMEOUT_S = 900


class MavenError(InfraError):
    """Maven is missing, or could not resolve a release (no network, unknown version): exit 3."""

    exit_code = 3


def cache_root() -> Path:
    """$XDG_CACHE_HOME/kreassign, else ~/.cache/kreassign (the adapter's compiled classes live there too)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kreassign"


def release_dir(version: str, kind: str = "controller") -> Path:
    """<cache>/kafka/V for the controller's jars, <cache>/kafka-broker/V for a broker's (each whole)."""
    return cache_root() / ("kafka" if _kind(kind) == "controller" else "kafka-broker") / version


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown artifact set {kind!r} (expected one of {', '.join(KINDS)})")
    return kind


def parse_version(text: str, *, flag: str = "--kafka-version") -> str:
    """A released version X.Y.Z of a supported minor (3.9 .. the newest); else a UsageError naming the flag."""
    try:
        return kafka_releases.parse_version(text)
    except ValueError as e:
        raise UsageError(f"{flag}: {e}") from None


def requested_versions(versions: list[str], every: bool) -> list[str]:
    """The releases a `fetch` names (`--all`: every supported one), each checked before anything is downloaded."""
    if every and versions:
        raise UsageError("fetch: give versions or --all, not both")
    chosen = list(RELEASES) if every else versions
    if not chosen:
        raise UsageError(f"fetch: name a release (e.g. {NEWEST}) or --all")
    return [parse_version(v, flag="fetch") for v in chosen]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


@dataclass(frozen=True)
class CachedRelease:
    version: str
    lib: Path
    jars: tuple[Path, ...]
    maven: str | None


def cached(version: str, kind: str = "controller") -> CachedRelease | None:
    """The release's cached jars, if a complete fetch left them (release.json names every jar, and each exists)."""
    d = release_dir(version, kind)
    try:
        info = json.loads((d / "release.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    jars = tuple(d / "lib" / name for name in info.get("jars", []))
    if not jars or not all(j.is_file() for j in jars):
        return None
    wanted = CONTROLLER_ARTIFACTS if _kind(kind) == "controller" else BROKER_ARTIFACTS
    if "artifacts" in info and not set(wanted) <= set(info["artifacts"]):
        return None  # fetched for an older artifact set (the reassignment tool was added): fetch again
    return CachedRelease(version, d / "lib", jars, info.get("maven"))


def cached_releases() -> list[CachedRelease]:
    root = cache_root() / "kafka"
    out = [c for d in (sorted(root.iterdir()) if root.is_dir() else []) if (c := cached(d.name)) is not None]
    return sorted(out, key=lambda c: version_key(c.version) if VERSION_RE.match(c.version) else (0,))


def find_maven() -> str | None:
    """`mvn` on the PATH (Maven's own configuration decides where it downloads from)."""
    return shutil.which("mvn")


def fetch_command(version: str, kind: str = "controller") -> str:
    return f"kreassign {'kafka' if _kind(kind) == 'controller' else 'cluster'} fetch {version}"


def pom(version: str, kind: str = "controller") -> str:
    """The POM Maven resolves: the set's artifacts at `version`, nothing else (Maven's own repositories)."""
    artifacts = CONTROLLER_ARTIFACTS if _kind(kind) == "controller" else BROKER_ARTIFACTS
    return pom_for([(GROUP, a, version) for a in artifacts], f"kafka-{kind}", version)


def pom_for(coordinates: list[tuple[str, str, str]], name: str, version: str) -> str:
    """A POM listing only `coordinates` (group, artifact, version) as dependencies: no repository, no plugin."""
    deps = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version>"
        "</dependency>" for g, a, v in coordinates)
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
            "  <modelVersion>4.0.0</modelVersion>\n"
            f"  <groupId>kreassign.local</groupId><artifactId>{name}</artifactId>"
            f"<version>{version}</version><packaging>pom</packaging>\n"
            f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n")


def log_binding(jars: list[str]) -> tuple[str, str, str] | None:
    """The SLF4J binding a broker's classpath lacks (Kafka's POMs leave it to the distribution, and without
    one a broker logs nothing): what the distribution ships, at the version of the logging library Maven
    resolved — log4j 2's `log4j-slf4j-impl` from 4.0 (KIP-653), reload4j's `slf4j-reload4j` before. None if
    one is there."""
    if any(j.startswith(("log4j-slf4j-impl-", "slf4j-reload4j-", "slf4j-log4j12-")) for j in jars):
        return None
    for j in jars:
        if m := re.fullmatch(r"log4j-core-(\d[\w.\-]*)\.jar", j):
            return ("org.apache.logging.log4j", "log4j-slf4j-impl", m.group(1))
    for j in jars:
        if m := re.fullmatch(r"slf4j-api-(1\.7\.\d+)\.jar", j):
            return ("org.slf4j", "slf4j-reload4j", m.group(1))
    return None


def fetch(version: str, *, force: bool = False, log: Callable[[str], None] | None = None,
          kind: str = "controller") -> CachedRelease:
    """Resolve `version`'s artifact set `kind` with Maven into the cache (a no-op if cached, unless `force`)."""
    version = parse_version(version, flag="kafka fetch" if _kind(kind) == "controller" else "cluster fetch")
    have = cached(version, kind)
    if have is not None and not force:
        return have
    what = f"Kafka {version}" if kind == "controller" else f"Kafka {version}'s broker"
    command = fetch_command(version, kind)
    mvn = find_maven()
    if mvn is None:
        raise MavenError(f"{what} is not in the cache ({release_dir(version, kind)}) and Maven (mvn) was not "
                         f"found: install Maven (e.g. apt-get install maven), then run: {command}")
    target = release_dir(version, kind)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".fetch-{version}-", dir=target.parent))
    except OSError as e:
        raise MavenError(f"cannot write the Kafka cache {target.parent}: {e.strerror} (set XDG_CACHE_HOME to a "
                         f"writable folder, then run: {command})") from None
    try:
        lib = work / "lib"
        artifacts = CONTROLLER_ARTIFACTS if kind == "controller" else BROKER_ARTIFACTS
        if log:
            log(f"kafka fetch: resolving {what} ({', '.join(artifacts)}) with {mvn}")
        proc = _copy_dependencies(mvn, work / "pom.xml", pom(version, kind), lib, what, command)
        jars = sorted(p.name for p in lib.glob("*.jar")) if lib.is_dir() else []
        needed = "kafka-metadata-" if kind == "controller" else f"kafka_2.13-{version}.jar"
        if proc.returncode != 0 or not any(j.startswith(needed) for j in jars):
            raise MavenError(f"Maven could not resolve {what} ({_maven_reason(proc.stdout + proc.stderr)}); "
                             f"check the version and the network, then run: {command}")
        info = {"version": version, "jars": jars, "maven": mvn, "artifacts": list(artifacts)}
        if kind == "broker" and (binding := log_binding(jars)) is not None:
            binding_pom = pom_for([binding], "kafka-log-binding", version)
            proc = _copy_dependencies(mvn, work / "log-binding.xml", binding_pom, lib, what, command)
            if proc.returncode != 0:
                raise MavenError(f"Maven could not resolve {':'.join(binding)} for {what} "
                                 f"({_maven_reason(proc.stdout + proc.stderr)}); run: {command}")
            jars = sorted(p.name for p in lib.glob("*.jar"))
            info.update(jars=jars, log_binding=":".join(binding))
        (work / "release.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.rename(work, target)  # atomic: a concurrent run sees the whole release or none
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if log:
        log(f"kafka fetch: {what}: {len(jars)} jars in {target / 'lib'}")
    got = cached(version, kind)
    assert got is not None
    return got


def _copy_dependencies(mvn: str, pom_path: Path, pom_text: str, lib: Path, what: str,
                       command: str) -> subprocess.CompletedProcess:
    """Maven copies the POM's dependencies (runtime scope, transitively) into `lib`."""
    pom_path.write_text(pom_text, encoding="utf-8")
    argv = [mvn, "-B", "-q", "-f", str(pom_path), "dependency:copy-dependencies",
            f"-DoutputDirectory={lib}", "-DincludeScope=runtime"]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise MavenError(f"Maven did not resolve {what} within {MAVEN_TIMEOUT_S} s; "
                         f"check the network, then run: {command}") from None
    except OSError as e:
        raise MavenError(f"could not run {mvn}: {e.strerror}; run: {command}") from None


def _maven_reason(output: str) -> str:
    """The first [ERROR] line of Maven's output, shortened (Maven's own words, one line)."""
    for line in output.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if line.startswith("[ERROR]") and len(line) > 8:
            text = line[8:].strip()
            return text if len(text) <= 300 else text[:297] + "..."
    return "Maven failed without an [ERROR] line"


def classpath_for(version: str, *, fetch_missing: bool = True, log: Callable[[str], None] | None = None) -> CachedRelease:
    """The cached release, fetched on first use (`--kafka-version V`)."""
    version = parse_version(version)
    have = cached(version)
    if have is not None:
        return have
    if not fetch_missing:
        raise MavenError(f"Kafka {version} is not in the cache; run: {fetch_command(version)}")
    return fetch(version, log=log)


__all__ = [
    "BROKER_ARTIFACTS",
    "CONTROLLER_ARTIFACTS",
    "DEFAULT_RELEASE",
    "KINDS",
    "NEWEST",
    "RELEASES",
    "CachedRelease",
    "MavenError",
    "cache_root",
    "cached",
    "cached_releases",
    "classpath_for",
    "fetch",
    "fetch_command",
    "find_maven",
    "log_binding",
    "parse_version",
    "pom",
    "pom_for",
    "release_dir",
    "version_key",
]
