"""The `kreassign` command: one command, one subcommand per job.

Subcommands register themselves in SUBCOMMANDS (name -> "module:function" taking the
parsed args); one that is not built yet says so and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from ._version import __version__

# name -> (help, "module:register" or None when not implemented yet)
SUBCOMMANDS: dict[str, tuple[str, str | None]] = {
    "check": ("explore every interleaving of a bounded configuration and check every property",
              "kreassign.checker.cli_check:register"),
    "show": ("render a counterexample trace as a table (or --format dot)", "kreassign.checker.cli_trace:register_show"),
    "replay": ("re-execute a counterexample trace against the reference", "kreassign.checker.cli_trace:register_replay"),
    "prove": ("prove invariants with z3 for clusters of up to 32 brokers", "kreassign.checker.cli_prove:register"),
    "fuzz": ("hypothesis stateful testing of the reference or another implementation",
             "kreassign.checker.cli_fuzz:register"),
    "oracle": ("serve the reference as a JSON-lines oracle on stdin/stdout", "kreassign.checker.cli_oracle:register"),
    "validate-trace": ("check an observed trace (JSON lines or Kafka controller logs) against a profile",
                       "kreassign.checker.cli_validate:register"),
    "reassign-json": ("read, validate and convert kafka-reassign-partitions.sh JSON", "kreassign.checker.cli_reassign_json:register"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kreassign",
        description="Formal model and property-checked reference of Kafka partition reassignment, "
        "cancellation and the controller mutation quota.",
    )
    parser.add_argument("--version", action="version", version=f"kreassign {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, target) in SUBCOMMANDS.items():
        if target is None:
            p = sub.add_parser(name, help=f"{help_text} (not implemented yet)", add_help=True)
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            p.set_defaults(func=_not_implemented(name))
        else:
            module, func = target.split(":")
            try:
                register = getattr(import_module(module), func)
            except ModuleNotFoundError as e:
                if e.name != module:  # a missing dependency of a module that exists is a real error
                    raise
                p = sub.add_parser(name, help=f"{help_text} (not implemented yet)")
                p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
                p.set_defaults(func=_not_implemented(name))
                continue
            p = sub.add_parser(name, help=help_text, description=help_text)
            register(p)
    return parser


def _not_implemented(name: str):
    def run(_args: argparse.Namespace) -> int:
        print(f"kreassign {name}: not implemented yet", file=sys.stderr)
        return 2

    return run


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `kreassign show --format dot F | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
