"""Write a text file all or nothing: temp file in the same directory, fsync, rename."""

from __future__ import annotations

import contextlib
import os
import tempfile

from kreassign.errors import UsageError


def write_text_atomically(path: str, text: str) -> None:
    """An existing file is replaced only by a complete new one; an unwritable path is a UsageError."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as e:
        raise UsageError(f"{path}: cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
