"""`kreassign doctor`: what `--impl kafka` would run with — java, javac, Maven, the cached Kafka releases,
and the chosen release's adapter compiled and answering.

Exit codes (kreassign/errors.py): 0 everything was found and the adapter compiles and answers,
3 something is missing (the message names it and the command that fixes it), 2 bad usage.
Doctor never downloads: a release that is not cached is reported with `kreassign kafka fetch V`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess

from kreassign.errors import InfraError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kafka-version", metavar="V", help="the cached release to check (default: the newest)")
    parser.add_argument("--kafka-classpath", metavar="PATH", help="check a distribution's libs/ instead")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _first_line(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in (out.stderr + out.stdout).splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if line and not line.startswith("WARNING"):
            return line
    return None


def run(args: argparse.Namespace) -> int:
    from kreassign.checker.implementations.kafka import (
        KafkaImplementation,
        KafkaOptions,
        find_java_tools,
        releases,
    )
    from kreassign.checker.oracle.kafka_flags import kafka_version

    version = kafka_version(args)
    if args.kafka_classpath and version:
        from kreassign.errors import UsageError

        raise UsageError("--kafka-classpath: names its own release (read from its jars); drop --kafka-version")
    java, javac = find_java_tools()  # KafkaSetupError: exit 3
    mvn = releases.find_maven()
    cached = releases.cached_releases()
    report = {
        "java": java, "java_version": _first_line([java, "-version"]), "javac": javac,
        "maven": mvn, "maven_version": _first_line([mvn, "-v"]) if mvn else None,
        "cache": str(releases.cache_root() / "kafka"),
        "cached_releases": [{"version": c.version, "lib": str(c.lib), "jars": len(c.jars)} for c in cached],
        "supported_releases": list(releases.RELEASES),
    }
    if not args.kafka_classpath:
        version = version or releases.DEFAULT_RELEASE
        if releases.cached(version) is None:
            _print(report, args.json)
            raise InfraError(f"Kafka {version} is not cached; run: {releases.fetch_command(version)}"
                             + ("" if mvn else " (after installing Maven, e.g. apt-get install maven)"))
    impl = KafkaImplementation(KafkaOptions(classpath=args.kafka_classpath, kafka_version=version))
    try:
        info = impl.version_info()
    finally:
        impl.close()
    setup = impl.setup
    report.update({
        "kafka_version": info.get("kafka_version") or setup.version,
        "kafka_commit": info.get("kafka_commit"),
        "kafka_source": setup.source,
        "metadata_version": info.get("metadata_version"),
        "adapter_layer": setup.layer.name,
        "kafka_classpath": [str(p) for p in setup.kafka_jars],
        "adapter_classes": str(setup.classes),
    })
    _print(report, args.json)
    if not args.json:
        print(f"ok: kreassign check --impl kafka --kafka-version {setup.version} can run")
    return 0


def _print(report: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report, indent=1))
        return
    print(f"java             {report['java']} ({report['java_version']})")
    print(f"javac            {report['javac']}")
    print(f"maven            {report['maven'] or 'not found (kreassign kafka fetch needs it)'}"
          + (f" ({report['maven_version']})" if report.get("maven_version") else ""))
    have = {c["version"] for c in report["cached_releases"]}
    print(f"cache            {report['cache']}")
    for v in report["supported_releases"]:
        print(f"  Kafka {v:<9}{'cached' if v in have else 'not cached'}")
    for c in report["cached_releases"]:
        if c["version"] not in report["supported_releases"]:
            print(f"  Kafka {c['version']:<9}cached (not in the matrix)")
    if "kafka_version" in report:
        jars = report["kafka_classpath"]
        print(f"Kafka            {report['kafka_version']} (commit {report['kafka_commit']}, from the {report['kafka_source']}), "
              f"metadata.version {report['metadata_version']}")
        print(f"Kafka classpath  {jars[0]}" + (f" (+{len(jars) - 1} jars)" if len(jars) > 1 else ""))
        print(f"adapter          {report['adapter_classes']} (layer {report['adapter_layer']}; compiled, answered 'version')")


__all__ = ["register", "run"]
