"""Progress and the closing summary of a `kreassign check` run, for terminals and CI logs alike.

On a terminal the engine's progress is one live line, rewritten in place. Anywhere else
(a CI log, a file) a full line is printed every `interval` seconds, as TLC does:

    progress kraft: 1,234,567 generated, 234,567 distinct, depth 12, 45,678 states/s, queue 12,345, elapsed 0:01:30

Every run ends with one summary line (`summary_line`):

    12 properties hold, 3 known findings, 0 unexpected, 2 not checked — exit 0
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from kreassign.checker.check.run import HOLDS, KNOWN

#: seconds between two progress lines when stderr is not a terminal (TLC prints every minute; CI wants more)
CI_INTERVAL = 10.0

#: a terminal's live line appears only once a run has lasted this long (short runs stay quiet)
TTY_DELAY = 2.0


def elapsed(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class ProgressReporter:
    """The engine's `progress` callback (checker/explore/bfs.py): a live line or periodic log lines.

    `tty` defaults to whether `stream` is a terminal; `clock` is injectable for tests.
    """

    wants_detail = True  # bfs.py passes generated= and queue= too

    def __init__(self, profile: str, stream: TextIO | None = None, *, tty: bool | None = None,
                 interval: float = CI_INTERVAL, clock: Callable[[], float] = time.monotonic):
        self.profile = profile
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream) if tty is None else tty
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self.last_line = self.started
        self.live = False  # a live line is on screen
        self.lines = 0
        self.last: tuple[int, int, int | None] | None = None  # (states, depth, generated) last reported

    def line(self, states: int, depth: int, rate: float, generated: int | None = None,
             queue: int | None = None) -> str:
        parts = [f"progress {self.profile}:"]
        if generated is not None:
            parts.append(f"{generated:,} generated,")
        parts.append(f"{states:,} distinct, depth {depth}, {rate:,.0f} states/s,")
        if queue is not None:
            parts.append(f"queue {queue:,},")
        parts.append(f"elapsed {elapsed(self.clock() - self.started)}")
        return " ".join(parts)

    def __call__(self, states: int, depth: int, rate: float, *, generated: int | None = None,
                 queue: int | None = None) -> None:
        now = self.clock()
        self.last = (states, depth, generated)  # what an interrupt can still report when the engine could not
        text = self.line(states, depth, rate, generated, queue)
        try:
            if self.tty:
                if now - self.started >= TTY_DELAY:
                    self.stream.write(f"\r{text}   ")
                    self.stream.flush()
                    self.live = True
            elif now - self.last_line >= self.interval:
                self.last_line = now
                self.stream.write(text + "\n")
                self.stream.flush()
                self.lines += 1
        except (OSError, ValueError):  # a closed or broken stderr must not end the run
            pass

    def finish(self) -> None:
        """Clear the live line, if one is on screen."""
        if self.live:
            try:
                self.stream.write("\r" + " " * 100 + "\r")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self.live = False


def shares_stdout(stream: Any) -> bool:
    """Is `stream` (stderr) the very file or pipe standard output is, and not a terminal? Then a line written to
    it lands in stdout: under spark-submit, whose PythonRunner starts the Python driver with
    `redirectErrorStream(true)` (Spark's core/.../deploy/PythonRunner.scala), or after `2>&1`."""
    import os

    try:
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):  # (a stream without a file: a test's capture)
        return False
    return (out.st_dev, out.st_ino) == (err.st_dev, err.st_ino) and not _isatty(stream)


class Discard:
    """A stream that writes nothing (progress that must not reach a shared stdout)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# -- the summary line -------------------------------------------------------------------------------

def tally(results: list[Any]) -> dict[str, int]:
    """Counts over every profile x property: hold / known / unexpected / not checked.

    Unexpected is what each result itself calls unexpected (`CheckResult.unexpected`), so the
    summary can never disagree with the exit code; anything else that is neither a hold nor
    a known finding (not checked, an incomplete run's open verdicts) is "not checked".
    """
    counts = {"hold": 0, "known": 0, "unexpected": 0, "not_checked": 0}
    for r in results:
        unexpected = set(r.unexpected)
        for name, v in r.properties.items():
            if name in unexpected:
                counts["unexpected"] += 1
            elif v.status == HOLDS:
                counts["hold"] += 1
            elif v.status == KNOWN:
                counts["known"] += 1
            else:
                counts["not_checked"] += 1
    return counts


def summary_line(results: list[Any], exit_code: int, *, not_run: int = 0, release: str | None = None,
                 lost_executors: int = 0) -> str:
    """`N properties hold, K known findings, U unexpected, I not checked[, kraft at Kafka V (...)][, Spark lost L
    executors (their work recomputed)] — exit E`.

    `not_run` adds properties of profiles an interrupt or error kept from running at all; `release` names
    the Kafka release the kraft profile followed (e.g. "Kafka 4.4.0, metadata.version 4.4-IV2, ELR on");
    `lost_executors` counts the Spark executors lost while the searches ran (Spark recomputed what they held).
    """
    c = tally(results)  # one fixed form, whatever the counts, so that CI can grep it
    kraft = f", kraft at {release}" if release else ""
    lost = (f", Spark lost {lost_executors} executor{'s' if lost_executors != 1 else ''} (their work recomputed)"
            if lost_executors else "")
    return (f"{c['hold']} properties hold, {c['known']} known findings, {c['unexpected']} unexpected, "
            f"{c['not_checked'] + not_run} not checked{kraft}{lost} — exit {exit_code}")


__all__ = ["CI_INTERVAL", "Discard", "ProgressReporter", "elapsed", "shares_stdout", "summary_line", "tally"]
