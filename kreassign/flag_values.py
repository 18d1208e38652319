"""Flag values parsed with the flag's name in the error (UsageError, exit 2), and progress lines on stderr, for
the subcommands that drive real clusters (cluster, conformance)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from kreassign.errors import UsageError


def integer(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise UsageError(f"{flag}: expected an integer, got {text!r}") from None

    return parse


def seconds(flag: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise UsageError(f"{flag}: expected a number of seconds, got {text!r}") from None

    return parse


def say(line: str) -> None:
    """One progress line on stderr, flushed (CI logs show it at once)."""
    print(line, file=sys.stderr, flush=True)


__all__ = ["integer", "say", "seconds"]
