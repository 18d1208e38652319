"""The `--impl kafka` flags shared by `check`, `fuzz` and `replay` (docs/kafka.md).

`--impl kafka` runs a Kafka release's own KRaft controller in lockstep with the reference;
`--kafka-version V` picks the release (resolved by Maven into the cache on first use; default the
newest, spec/kafka_releases.py) for Kafka and the reference alike; `--kafka-classpath PATH`
takes a distribution's libs/ instead (its version is read from its jars); `--metadata-version V`
sets the cluster's metadata.version for Kafka and the reference alike (default: the release's
latest production level). Without --impl kafka, `check` runs the reference's kraft profile at
that release and version.
"""

from __future__ import annotations

import argparse
from typing import Any

from kreassign.checker.implementations.adapters import DEFAULT_TIMEOUT
from kreassign.checker.implementations.kafka import (
    check_metadata_version,
    is_kafka_spec,
    make_spec,
    parse_spec,
    releases,
)
from kreassign.spec import kafka_releases

from kreassign.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kafka-version", metavar="V",
                        help="the Kafka release the kraft profile follows, and whose controller --impl kafka runs "
                        f"(resolved with Maven on first use: kreassign kafka fetch V; default {releases.DEFAULT_RELEASE}; "
                        f"supported: {', '.join(releases.RELEASES)})")
    parser.add_argument("--kafka-classpath", metavar="PATH",
                        help="with --impl kafka: Kafka's jars instead of a cached release, a distribution's libs/ "
                        "directory or a ':'-separated jar list (the version is read from the jars)")
    parser.add_argument("--metadata-version", metavar="V",
                        help="the kraft profile's metadata.version, e.g. 3.5-IV2 (default: the release's latest "
                        "production level)")
    parser.add_argument("--impl-timeout", metavar="SECONDS", type=float, default=DEFAULT_TIMEOUT,
                        help=f"with --impl: how long an implementation in another process (exec:, kafka) may take "
                        f"to answer one request (default {DEFAULT_TIMEOUT:g})")
    # --kraft-actions is a bound flag (checker/config/bound_flags.py): the bounds carry the actions


def impl_timeout(args: argparse.Namespace) -> float:
    """--impl-timeout, checked: a positive number of seconds."""
    value = getattr(args, "impl_timeout", DEFAULT_TIMEOUT)
    if not value > 0:
        raise UsageError(f"--impl-timeout: must be a positive number of seconds, got {value:g}")
    return value


def controller_actions(args: argparse.Namespace) -> tuple[str, ...]:
    """--kraft-actions as a tuple (checked against the reference's list). The bounds carry them too
    (bounds.kraft_actions), which is what the models read."""
    from kreassign.reference.kraft import CONTROLLER_ACTIONS

    text = getattr(args, "kraft_actions", None)
    if not text:
        return ()
    names = tuple(a.strip() for a in text.split(",") if a.strip())
    unknown = [a for a in names if a not in CONTROLLER_ACTIONS]
    if unknown:
        raise UsageError(f"--kraft-actions: unknown action(s) {', '.join(unknown)} (known: {', '.join(CONTROLLER_ACTIONS)})")
    return names


def impl_spec(args: argparse.Namespace) -> str | None:
    """args.impl with the Kafka flags folded in (`kafka[...]`); the flags without --impl kafka are an error."""
    impl = getattr(args, "impl", None)
    classpath = getattr(args, "kafka_classpath", None)
    version = kafka_version(args)
    mv = getattr(args, "metadata_version", None)
    if impl is not None and is_kafka_spec(impl):
        options = parse_spec(impl)
        version = version or options.kafka_version
        if classpath and version:
            raise UsageError("--kafka-classpath: names its own release (read from its jars); drop --kafka-version")
        if mv is not None:
            check_metadata_version(mv, version)
        elr = {"on": True, "off": False}.get(getattr(args, "elr", None) or "", options.elr)
        return make_spec(classpath or options.classpath, mv or options.metadata_version,
                         kafka_version=version if not (classpath or options.classpath) else None,
                         zk_migration=options.zk_migration, bug=options.bug, elr=elr)
    if classpath is not None:
        raise UsageError("--kafka-classpath: applies to --impl kafka only")
    return impl


def kafka_version(args: argparse.Namespace) -> str | None:
    """--kafka-version, checked (a supported minor's X.Y.Z), or None."""
    v = getattr(args, "kafka_version", None)
    return releases.parse_version(v) if v is not None else None


def metadata_version(args: argparse.Namespace) -> str | None:
    mv = getattr(args, "metadata_version", None)
    return check_metadata_version(mv, kafka_version(args) or releases.DEFAULT_RELEASE) if mv is not None else None


def release_label(args: argparse.Namespace) -> str:
    """`Kafka 4.4.0, metadata.version 4.4-IV2` for the summary line: the release the kraft profiles follow."""
    version = kafka_version(args) or releases.DEFAULT_RELEASE
    mv = getattr(args, "metadata_version", None) or kafka_releases.release(version).latest_production
    return f"Kafka {version}, metadata.version {mv}"


def check_factory(args: argparse.Namespace, kind: str):
    """The model factory for `check` when the Kafka flags apply, else None (the caller's default)."""
    spec = impl_spec(args)
    controller_actions(args)  # the bounds carry them (bounds.kraft_actions); checked here for the message
    if spec is not None and is_kafka_spec(spec):
        from kreassign.checker.oracle.kafka_lockstep import kafka_factory

        return kafka_factory(spec)
    mv = metadata_version(args)
    version = kafka_version(args)
    if spec is not None and mv is not None:  # (--kafka-version is a bound: the reference follows it in any lockstep)
        raise UsageError("--metadata-version: applies to the reference or --impl kafka, not to another implementation")
    if mv is None:
        return None  # the plain model: the bounds carry the release, ELR and the controller actions
    from kreassign.checker.oracle.kafka_lockstep import KraftActionsModel, reference_profile

    elr = {"on": True, "off": False}.get(getattr(args, "elr", None) or "")

    def factory(profile: str, bounds: Any):
        if profile != "kraft":
            raise UsageError(f"--metadata-version: applies to the kraft profile only, not {profile!r}")
        try:
            ref = reference_profile(mv, kafka_version=version or releases.DEFAULT_RELEASE, elr=elr)
        except ValueError as e:
            raise UsageError(f"--metadata-version: {e}") from None
        return KraftActionsModel(ref, bounds)

    return factory


__all__ = ["add_arguments", "check_factory", "impl_spec", "impl_timeout", "kafka_version", "metadata_version", "release_label"]
