"""Files in and out of the command line: `--out DIR` refused before a long run rather than after it
(`check_out_dir`), and input files read with one clear error for every way they can be unreadable
(`read_text`)."""

from __future__ import annotations

import os

from kreassign.errors import UsageError


def check_out_dir(path: str, flag: str = "--out") -> None:
    """DIR must be a writable directory, or creatable as one (UsageError, exit 2, otherwise)."""
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise UsageError(f"{flag} {path}: exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise UsageError(f"{flag} {path}: directory is not writable")
        return
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise UsageError(f"{flag} {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: cannot create it, {parent} is not writable")




def read_text(path: str, what: str, error: type[Exception] = UsageError) -> str:
    """The UTF-8 text of an input file; every failure is one `error` naming the file (and the
    line of a non-UTF-8 byte), never a traceback. `what` says what the file should have been."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not {what}") from None
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise error(f"{path}: line {line}: not UTF-8 text (byte {e.start}), not {what}") from None


__all__ = ["check_out_dir", "read_text"]
