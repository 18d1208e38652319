"""The exit-code contract of every `kreassign` subcommand, and the errors that carry it.

One contract for all subcommands, so that CI can gate on the code alone:

    0    all good: every property holds or is a declared finding, the trace is valid, ...
    1    a finding for the user: an unexpected violation, an invalid trace, a mismatch
    2    bad usage or bad input (the message names the file, field path or line)
    3    infrastructure failure: Spark, Java, an implementation under test that crashed or hung
    4    inconclusive: the input could be read but not fully judged (validate-trace), or a run
         limit (check --max-states / --max-memory) stopped a search before it was complete
    130  interrupted (Ctrl-C); what was explored so far is printed, marked incomplete

Code raises `UsageError` / `InfraError`; `kreassign.cli.main` turns them into one line on
stderr and the exit code (the traceback only with `--debug`). Lowest layer: imports nothing.
"""

from __future__ import annotations

OK = 0
FINDING = 1
USAGE = 2
INFRA = 3
INCONCLUSIVE = 4
INTERRUPTED = 130

EXIT_CODES_HELP = (
    "exit codes: 0 all good, 1 a finding (unexpected violation, invalid trace, mismatch), "
    "2 bad usage or bad input, 3 infrastructure failure (Spark, Java, implementation crashed), "
    "4 inconclusive (validate-trace; check stopped by --max-states/--max-memory), 130 interrupted"
)


class KreassignError(Exception):
    """An error for the user, reported as one line with `exit_code`."""

    exit_code = USAGE


class UsageError(KreassignError):
    """Bad usage or bad input: the message names the file, field path or line."""

    exit_code = USAGE


class InfraError(KreassignError):
    """Something kreassign depends on failed: Spark, Java, an implementation under test."""

    exit_code = INFRA
