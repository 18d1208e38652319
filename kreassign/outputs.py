"""Files in and out of the command line: `--out DIR` refused before a long run rather than after it
(`check_out_dir`), and input files read with one clear error for every way they can be unreadable
(`read_text`)."""

from __future__ import annotations

import contextlib
import os
import tempfile

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




def check_output_file(path: str, flag: str) -> None:
    """An output FILE must be writable where it is named: refused before a long run, not after it (UsageError)."""
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a directory, not a file")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"{flag} {path}: no such directory {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: directory {directory} is not writable")


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


def write_text_atomically(path: str, text: str) -> None:
    """Write `text` to `path` all or nothing: a temp file in the same directory, fsync, rename.
    The new file keeps the mode of the file it replaces (else the umask's default, not mkstemp's
    0600). Failures are the OSError itself: the caller decides whether it is usage (2) or disk (3)."""
    try:
        mode = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


__all__ = ["check_out_dir", "check_output_file", "read_text", "write_text_atomically"]
