"""The `kreassign` command: one command, one subcommand per job.

Subcommands are listed in SUBCOMMANDS (name -> (help, "module:register")) and imported
lazily: `kreassign --version` and `kreassign --help` import none of them (so neither z3,
pyspark, hypothesis nor numpy), and `kreassign NAME ...` imports only NAME's module.
Every subcommand follows the exit-code contract of kreassign/errors.py.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from ._version import __version__
from .errors import EXIT_CODES_HELP, INFRA, INTERRUPTED, KreassignError

#: top-level module -> (distribution, extra) of the optional engines (pyproject.toml extras)
OPTIONAL_MODULES = {"pyspark": ("pyspark", "spark"), "py4j": ("pyspark", "spark"), "z3": ("z3-solver", "prove"),
                    "hypothesis": ("hypothesis", "fuzz")}

# name -> (help, "module:register"); register(parser) adds the flags and sets func(args) -> exit code
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("explore every interleaving of a bounded configuration and check every property",
              "kreassign.checker.cli.check:register"),
    "show": ("render a counterexample trace as a table (or --format dot)", "kreassign.checker.cli.show:register"),
    "replay": ("re-execute a counterexample trace against the reference", "kreassign.checker.cli.replay:register"),
    "prove": ("prove invariants with z3 for clusters of up to 32 brokers", "kreassign.checker.cli.prove:register"),
    "fuzz": ("hypothesis stateful testing of the reference or another implementation",
             "kreassign.checker.cli.fuzz:register"),
    "oracle": ("serve the reference as a JSON-lines oracle on stdin/stdout", "kreassign.checker.cli.oracle:register"),
    "validate-trace": ("check an observed trace (JSON lines or Kafka controller logs) against a profile",
                       "kreassign.checker.cli.validate_trace:register"),
    "reassign-json": ("read, validate and convert kafka-reassign-partitions.sh JSON",
                      "kreassign.checker.cli.reassign_json:register"),
    "spark-package": ("build the zip that ships kreassign to Spark executors", "kreassign.checker.cli.spark_package:register"),
    "plan": ("check a reassignment plan (Kafka's JSON) partition by partition: phases, risks, rollback",
             "kreassign.checker.cli.plan:register"),
    "report": ("write counterexample traces as one self-contained HTML report", "kreassign.checker.cli.report:register"),
    "doctor": ("show which java, javac, Maven and Kafka releases --impl kafka runs with", "kreassign.checker.cli.doctor:register"),
    "kafka": ("resolve Kafka's released controller jars with Maven into the cache (fetch, list)",
              "kreassign.checker.cli.kafka:register"),
    "cluster": ("real Kafka clusters on 127.0.0.1 (start, fetch)", "kreassign.checker.cli.cluster:register"),
    "status": ("why the reassignments of a live cluster are stuck, what a cancel would leave, throttles left behind",
               "kreassign.checker.cli.status:register"),
    "conformance": ("run model-drawn scenarios with faults on a real Kafka cluster, checked against the reference",
                    "kreassign.checker.cli.conformance:register"),
}


def _chosen(argv: list[str]) -> str | None:
    """The subcommand named on the command line (the first word that is one), if any."""
    return next((a for a in argv if a in SUBCOMMANDS), None)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the subcommand named in `argv` is imported and gets its flags
    (all of them when `argv` is None, for documentation and tests)."""
    parser = argparse.ArgumentParser(
        prog="kreassign",
        description="Formal model and property-checked reference of Kafka partition reassignment, "
        "cancellation and the controller mutation quota.",
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"kreassign {__version__}")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks (for bug reports)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _chosen(argv) if argv is not None else None
    for name, (help_text, target) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=EXIT_CODES_HELP)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        if argv is None or name == chosen:
            module, func = target.split(":")
            getattr(import_module(module), func)(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    command = _chosen(argv)
    prog = f"kreassign {command}" if command else "kreassign"  # errors name the subcommand
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return 0
        return int(args.func(args) or 0)
    except KreassignError as e:
        if debug:
            raise
        print(f"{prog}: {e}", file=sys.stderr)
        return e.exit_code
    except ModuleNotFoundError as e:  # an optional engine's dependency (pyproject extras) is not installed
        extra = OPTIONAL_MODULES.get((e.name or "").split(".")[0])
        if extra is None or debug:
            raise
        print(f"{prog}: this needs {extra[0]}, which is not installed: pip install 'kreassign[{extra[1]}]'",
              file=sys.stderr)
        return INFRA  # like a missing Java: the machine lacks something, the input is fine
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # e.g. `kreassign show --format dot F | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
