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


def release_dir(version: str) -> Path:
    return cache_root() / "kafka" / version


def parse_version(text: str, *, flag: str = "--kafka-version") -> str:
    """A released version X.Y.Z of a supported minor (3.9 .. the newest); else a UsageError naming the flag."""
    try:
        return kafka_releases.parse_version(text)
    except ValueError as e:
        raise UsageError(f"{flag}: {e}") from None


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


@dataclass(frozen=True)
class CachedRelease:
    version: str
    lib: Path
    jars: tuple[Path, ...]
    maven: str | None


def cached(version: str) -> CachedRelease | None:
    """The release's cached jars, if a complete fetch left them (release.json names every jar, and each exists)."""
    d = release_dir(version)
    try:
        info = json.loads((d / "release.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    jars = tuple(d / "lib" / name for name in info.get("jars", []))
    if not jars or not all(j.is_file() for j in jars):
        return None
    return CachedRelease(version, d / "lib", jars, info.get("maven"))


def cached_releases() -> list[CachedRelease]:
    root = cache_root() / "kafka"
    out = [c for d in (sorted(root.iterdir()) if root.is_dir() else []) if (c := cached(d.name)) is not None]
    return sorted(out, key=lambda c: version_key(c.version) if VERSION_RE.match(c.version) else (0,))


def find_maven() -> str | None:
    """`mvn` on the PATH (Maven's own configuration decides where it downloads from)."""
    return shutil.which("mvn")


def fetch_command(version: str) -> str:
    return f"kreassign kafka fetch {version}"


def pom(version: str) -> str:
    """The POM Maven resolves: the controller's artifacts at `version`, nothing else (Maven's own repositories)."""
    deps = "\n".join(
        f"    <dependency><groupId>{GROUP}</groupId><artifactId>{a}</artifactId><version>{version}</version></dependency>"
        for a in CONTROLLER_ARTIFACTS)
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
            "  <modelVersion>4.0.0</modelVersion>\n"
            "  <groupId>kreassign.local</groupId><artifactId>kafka-controller</artifactId>"
            f"<version>{version}</version><packaging>pom</packaging>\n"
            f"  <dependencies>\n{deps}\n  </dependencies>\n</project>\n")


def fetch(version: str, *, force: bool = False, log: Callable[[str], None] | None = None) -> CachedRelease:
    """Resolve `version` with Maven into the cache (a no-op if it is there, unless `force`)."""
    version = parse_version(version, flag="kafka fetch")
    have = cached(version)
    if have is not None and not force:
        return have
    mvn = find_maven()
    if mvn is None:
        raise MavenError(f"Kafka {version} is not in the cache ({release_dir(version)}) and Maven (mvn) was not found: "
                         f"install Maven (e.g. apt-get install maven), then run: {fetch_command(version)}")
    target = release_dir(version)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".fetch-{version}-", dir=target.parent))
    except OSError as e:
        raise MavenError(f"cannot write the Kafka cache {target.parent}: {e.strerror} (set XDG_CACHE_HOME to a "
                         f"writable folder, then run: {fetch_command(version)})") from None
    try:
        (work / "pom.xml").write_text(pom(version), encoding="utf-8")
        lib = work / "lib"
        argv = [mvn, "-B", "-q", "-f", str(work / "pom.xml"), "dependency:copy-dependencies",
                f"-DoutputDirectory={lib}", "-DincludeScope=runtime"]
        if log:
            log(f"kafka fetch: resolving Kafka {version} ({', '.join(CONTROLLER_ARTIFACTS)}) with {mvn}")
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S, check=False,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise MavenError(f"Maven did not resolve Kafka {version} within {MAVEN_TIMEOUT_S} s; "
                             f"check the network, then run: {fetch_command(version)}") from None
        except OSError as e:
            raise MavenError(f"could not run {mvn}: {e.strerror}; run: {fetch_command(version)}") from None
        jars = sorted(p.name for p in lib.glob("*.jar")) if lib.is_dir() else []
        if proc.returncode != 0 or not any(j.startswith("kafka-metadata-") for j in jars):
            raise MavenError(f"Maven could not resolve Kafka {version} ({_maven_reason(proc.stdout + proc.stderr)}); "
                             f"check the version and the network, then run: {fetch_command(version)}")
        (work / "release.json").write_text(json.dumps({"version": version, "jars": jars, "maven": mvn,
                                                       "artifacts": list(CONTROLLER_ARTIFACTS)}, indent=1) + "\n",
                                           encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.rename(work, target)  # atomic: a concurrent run sees the whole release or none
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if log:
        log(f"kafka fetch: Kafka {version}: {len(jars)} jars in {target / 'lib'}")
    got = cached(version)
    assert got is not None
    return got


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
    "CONTROLLER_ARTIFACTS",
    "DEFAULT_RELEASE",
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
    "parse_version",
    "release_dir",
    "version_key",
]
