"""The `--impl kafka` flags shared by `check`, `fuzz` and `replay` (docs/kafka.md).

`--impl kafka` runs Kafka 3.9's KRaft controller in lockstep with the reference;
`--kafka-classpath PATH` names Kafka's jars (default: ../shared/kafka/kafka-controller-3.9.0.jar
or $KREASSIGN_KAFKA_CLASSPATH); `--metadata-version V` sets the cluster's metadata.version
for Kafka and the reference alike (without --impl kafka, `check` runs the reference's kraft
profile at that version).
"""

from __future__ import annotations

import argparse
from typing import Any

from kreassign.errors import UsageError

from . import DEFAULT_METADATA_VERSION, check_metadata_version, is_kafka_spec, make_spec, parse_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kafka-classpath", metavar="PATH",
                        help="with --impl kafka: Kafka's jars, a distribution's libs/ directory or a ':'-separated "
                        "jar list (default: ../shared/kafka/kafka-controller-3.9.0.jar, or $KREASSIGN_KAFKA_CLASSPATH)")
    parser.add_argument("--metadata-version", metavar="V",
                        help=f"the kraft profile's metadata.version, e.g. 3.5-IV2 (default: {DEFAULT_METADATA_VERSION})")
    # --kraft-actions is a bound flag (checker/models/bound_flags.py): the bounds carry the actions


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
    mv = getattr(args, "metadata_version", None)
    if impl is not None and is_kafka_spec(impl):
        options = parse_spec(impl)
        if mv is not None:
            check_metadata_version(mv)
        spec = make_spec(classpath or options.classpath, mv or options.metadata_version)
        for key, value in (("zk-migration", "true" if options.zk_migration else None), ("bug", options.bug)):
            if value:
                spec = spec[:-1] + f",{key}={value}]" if spec.endswith("]") else spec + f"[{key}={value}]"
        return spec
    if classpath is not None:
        raise UsageError("--kafka-classpath: applies to --impl kafka only")
    return impl


def metadata_version(args: argparse.Namespace) -> str | None:
    mv = getattr(args, "metadata_version", None)
    return check_metadata_version(mv) if mv is not None else None


def check_factory(args: argparse.Namespace, kind: str):
    """The model factory for `check` when the Kafka flags apply, else None (the caller's default)."""
    spec = impl_spec(args)
    controller_actions(args)  # the bounds carry them (bounds.kraft_actions); checked here for the message
    if spec is not None and is_kafka_spec(spec):
        from .lockstep import kafka_factory

        return kafka_factory(spec)
    mv = metadata_version(args)
    if mv is None:
        return None  # the plain model: it explores bounds.kraft_actions itself
    if spec is not None:
        raise UsageError("--metadata-version: applies to the reference or --impl kafka, not to another implementation")
    from .lockstep import KraftActionsModel, reference_profile

    def factory(profile: str, bounds: Any):
        if profile != "kraft":
            raise UsageError(f"--metadata-version: applies to the kraft profile only, not {profile!r}")
        return KraftActionsModel(reference_profile(mv), bounds)

    return factory


__all__ = ["add_arguments", "check_factory", "impl_spec", "metadata_version"]
