"""Write a text file all or nothing: temp file in the same directory, fsync, rename."""

from __future__ import annotations

import contextlib
import os
import tempfile

from kreassign.errors import UsageError


def write_text_atomically(path: str, text: str) -> None:
    """An existing file is replaced only by a complete new one; an unwritable path is a UsageError."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory, not a file to write")
    try:  # keep the mode of the file replaced, else the umask's default (not mkstemp's 0600)
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as e:
        raise UsageError(f"{path}: cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):  # e.g. the disk filled up: nothing was replaced
            raise UsageError(f"{path}: cannot write: {e.strerror or e}") from None
        raise
