"""Write a report file all or nothing (kreassign/outputs.py), an unusable path being bad usage."""

from __future__ import annotations

import os

from kreassign import outputs
from kreassign.errors import UsageError


def write_text_atomically(path: str, text: str) -> None:
    """An existing file is replaced only by a complete new one; an unwritable path is a UsageError."""
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory, not a file to write")
    try:
        outputs.write_text_atomically(path, text)
    except OSError as e:  # e.g. the disk filled up: nothing was replaced
        raise UsageError(f"{path}: cannot write: {e.strerror or e}") from None
