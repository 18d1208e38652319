"""`--out DIR` of check, fuzz and prove: refuse an unusable directory before a long run, not after it."""

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


__all__ = ["check_out_dir"]
