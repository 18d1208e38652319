"""Write a report file by the output rule of kreassign/outputs.py (docs/outputs.md): all or nothing, only to a
regular file or a new path, symlinks written through; an unusable path is bad usage (exit 2), a full disk an
infrastructure failure (exit 3), the old file untouched either way."""

from __future__ import annotations

from kreassign import outputs


def write_text_atomically(path: str, text: str, flag: str | None = None, *, stdout: bool = False) -> None:
    """An existing file is replaced only by a complete new one; failures are one line naming `flag` and `path`."""
    outputs.write_output(path, text, flag, stdout=stdout)
