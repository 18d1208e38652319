"""`kreassign doctor`: what `--impl kafka` would run with — java, javac, Kafka's classpath and version.

Exit codes (kreassign/errors.py): 0 everything was found and the adapter compiles and
answers, 3 something is missing (the message names it), 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import subprocess

from kreassign.errors import InfraError


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kafka-classpath", metavar="PATH",
                        help="Kafka's jars to check (default: ../shared/kafka/kafka-controller-3.9.0.jar, "
                        "or $KREASSIGN_KAFKA_CLASSPATH)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _java_version(java: str) -> str:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfraError(f"{java} -version failed: {e}") from None
    lines = (out.stderr or out.stdout).strip().splitlines()
    return lines[0] if lines else "unknown"


def run(args: argparse.Namespace) -> int:
    from kreassign.checker.oracle.kafka import KafkaImplementation, KafkaOptions, cache_root

    impl = KafkaImplementation(KafkaOptions(classpath=args.kafka_classpath))  # KafkaSetupError: exit 3
    try:
        info = impl.version_info()
    finally:
        impl.close()
    setup = impl.setup
    report = {
        "java": setup.java,
        "java_version": _java_version(setup.java),
        "javac": setup.javac,
        "kafka_version": info.get("kafka_version") or setup.version,
        "kafka_commit": info.get("kafka_commit"),
        "metadata_version": info.get("metadata_version"),
        "kafka_classpath": [str(p) for p in setup.kafka_jars],
        "runtime_classpath": [str(p) for p in setup.runtime_jars],
        "adapter_classes": str(setup.classes),
        "cache": str(cache_root()),
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    kafka_jars = report["kafka_classpath"]
    print(f"java             {report['java']} ({report['java_version']})")
    print(f"javac            {report['javac']}")
    print(f"Kafka            {report['kafka_version']} (commit {report['kafka_commit']}), "
          f"default metadata.version {report['metadata_version']}")
    print(f"Kafka classpath  {kafka_jars[0]}" + (f" (+{len(kafka_jars) - 1} jars)" if len(kafka_jars) > 1 else ""))
    for jar in report["runtime_classpath"]:
        print(f"runtime jar      {jar}")
    print(f"adapter          {report['adapter_classes']} (compiled, answered 'version')")
    print("ok: kreassign check --impl kafka --profile kraft can run")
    return 0


__all__ = ["register", "run"]
