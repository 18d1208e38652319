"""Files in and out of the command line: every output checked before any work and written so that it cannot
harm what the user owns (docs/outputs.md); input files read with one clear error for every way they can be
unreadable (`read_text`).

The rule for outputs, the same for every flag of every subcommand:

- An output goes only to a regular file or to a new path, never over anything else: an existing character or
  block device, FIFO, socket or directory is refused (exit 2, one line naming the flag and the path). `-` means
  standard output only for the flags that say so (`STDOUT`; e.g. `report -o -`, `reassign-json --out -`);
  elsewhere it is refused rather than written as a file named `-` (say `./-` for that).
- A symlink is followed: the file is written atomically to the symlink's final target, which must itself be a
  regular file, or a new path in an existing writable folder; the symlink is kept. A dangling symlink into a
  missing folder, and a symlink loop, are refused.
- An output that resolves (realpath, or the same inode) to an input of the same run, or to another output of
  the same run, is refused before any work ("--html C: is also the --current input; refusing to overwrite it").
- The output's folder must exist and be writable (an output directory, `--out DIR`, may be created, but its
  nearest existing parent must be a writable directory), checked before any work (`check_outputs`).
- The write itself is all or nothing: a temporary file in the target's folder, fsync, rename over the target
  (keeping the old file's mode, and its owner when run as root). A full or failing disk (ENOSPC, EDQUOT, EIO,
  EFBIG) is one line and exit 3; the old target is untouched and the temporary file removed. Any other failure
  to write is exit 2.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import IO

from kreassign.errors import InfraError, KreassignError, UsageError

#: the path that means standard output, for the flags that accept it
STDOUT = "-"
#: a write that fails with one of these is the machine's fault (exit 3), not the user's
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG})


def _error(cls: type[KreassignError], where: str, problem: str) -> KreassignError:
    """`cls("where: problem")` that also keeps both parts (reassign-json prints them its own way)."""
    e = cls(f"{where}: {problem}")
    e.where, e.problem = where, problem  # type: ignore[attr-defined]
    return e


def _where(path: str, flag: str | None) -> str:
    return f"{flag} {path}" if flag else path


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def resolve_output(path: str, flag: str | None = None) -> str:
    """The real path an output FILE is written to (its symlinks followed), after the rule's checks: an existing
    target must be a regular file, its folder must exist and be writable (UsageError, exit 2, otherwise)."""
    where = _where(path, flag)
    real = os.path.realpath(path)
    link = os.path.islink(path)
    through = f" (the symlink's target {real})" if link else ""
    try:
        st: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:  # a symlink loop, a folder we may not search
        raise _error(UsageError, where, f"cannot be used as an output: {e.strerror or e}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise _error(UsageError, where, f"is a directory, not a file{through}")
        if not stat.S_ISREG(st.st_mode):
            raise _error(UsageError, where, f"is {_kind(st.st_mode)}{through}, not a regular file; "
                                            "refusing to replace it")
    directory = os.path.dirname(real)
    if not os.path.isdir(directory):
        if link:
            raise _error(UsageError, where, f"is a symlink to {real}, whose directory {directory} does not exist")
        raise _error(UsageError, where, f"no such directory {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _error(UsageError, where, f"directory {directory} is not writable")
    return real


def check_output_file(path: str, flag: str) -> None:
    """An output FILE is checked where it is named, before a long run, not after it (UsageError; the rule of
    this module: a regular file or a new path, symlinks followed, its folder writable)."""
    resolve_output(path, flag)


def check_out_dir(path: str, flag: str = "--out") -> str:
    """DIR must be a writable directory (a symlink to one is fine), or creatable as one (UsageError, exit 2,
    otherwise). Returns its real path."""
    real = os.path.realpath(path)
    if os.path.islink(path) and not os.path.exists(path):
        raise _error(UsageError, f"{flag} {path}", f"is a dangling symlink (to {real})")
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise _error(UsageError, f"{flag} {path}", "exists and is not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise _error(UsageError, f"{flag} {path}", "directory is not writable")
        return real
    parent = os.path.dirname(real)
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise _error(UsageError, f"{flag} {path}", f"{parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise _error(UsageError, f"{flag} {path}", f"cannot create it, {parent} is not writable")
    return real


def _same(real: str, other: str) -> bool:
    if os.path.realpath(other) == real:
        return True
    try:
        return os.path.samefile(real, other)  # e.g. a hard link
    except OSError:
        return False


def _paths(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [v for v in value if v is not None]


def check_outputs(files: Mapping[str, str | None] | None = None,
                  inputs: Mapping[str, str | Iterable[str] | None] | None = None, *,
                  dirs: Mapping[str, str | None] | None = None, stdout: Collection[str] = ()) -> None:
    """Check a run's outputs before any work (UsageError, exit 2, naming the flag and the path).

    files: output flag -> FILE (None: not given); dirs: output flag -> DIR (files are written into it);
    inputs: a name for the input (its flag, or its metavar for a positional) -> path(s) the run reads;
    stdout: the flags of `files` for which `-` means standard output.
    """
    outputs: list[tuple[str, str, str]] = []  # (flag, path, real path)
    for flag, path in (files or {}).items():
        if path is None:
            continue
        if path == STDOUT:
            if flag in stdout:
                continue
            raise _error(UsageError, f"{flag} -", "writes a file, not standard output (for a file named '-', say ./-)")
        outputs.append((flag, path, resolve_output(path, flag)))
    for flag, path in (dirs or {}).items():
        if path is not None:
            outputs.append((flag, path, check_out_dir(path, flag)))
    for i, (flag, path, real) in enumerate(outputs):
        for other, other_path, other_real in outputs[:i]:
            if real == other_real or _same(real, other_path):
                raise _error(UsageError, f"{flag} {path}", f"is also the {other} output; give each output its own path")
    for label, value in (inputs or {}).items():
        for source in _paths(value):
            if source == STDOUT:  # stdin
                continue
            for flag, path, real in outputs:
                if _same(real, source):
                    named = "" if source == path else f" {source}"
                    raise _error(UsageError, f"{flag} {path}", f"is also the {label} input{named}; "
                                                               "refusing to overwrite it")


# -- writing ---------------------------------------------------------------------------------------------------


def _failed(where: str, e: OSError, existed: bool) -> KreassignError:
    """The one-line error of a failed write; `.oserror` keeps the OSError for callers with their own format."""
    if e.errno in DISK_ERRNOS:
        left = "the old file is left as it was" if existed else "nothing was written"
        error = _error(InfraError, where, f"cannot write: {e.strerror or e} ({left})")
    else:
        error = _error(UsageError, where, f"cannot write: {e.strerror or e}")
    error.oserror = e  # type: ignore[attr-defined]
    return error


@contextlib.contextmanager
def _replacing(path: str, flag: str | None, suffix: str, raw: bool) -> Iterator[str]:
    """A temporary path next to the output's real target; once the body has filled it: fsync, the old file's
    mode (and owner, as root), rename over the target. On any failure the temporary file is removed and the
    target untouched. `raw`: I/O failures stay OSErrors (write_text_atomically's contract)."""
    where = _where(path, flag)
    try:
        real = resolve_output(path, flag)  # at write time too: the path may have changed since the run began
    except UsageError as e:
        if not raw:
            raise
        raise OSError(errno.EINVAL, getattr(e, "problem", str(e)), path) from None
    try:
        old: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        old = None
    if old is not None:
        mode = old.st_mode & 0o777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=f".{os.path.basename(real)}.", suffix=suffix)
        os.close(fd)
    except OSError as e:
        if raw:
            raise
        raise _failed(where, e, old is not None) from None
    body = True
    try:
        yield tmp
        body = False
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        if old is not None and os.geteuid() == 0 and (old.st_uid, old.st_gid) != (0, 0):
            with contextlib.suppress(OSError):  # root replacing a user's file gives it back to the user
                os.chown(tmp, old.st_uid, old.st_gid)
        os.replace(tmp, real)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if raw or not isinstance(e, OSError) or (body and e.errno not in DISK_ERRNOS):
            raise  # the body's own failures (say, reading a source file) are not the output's
        raise _failed(where, e, old is not None) from None


@contextlib.contextmanager
def replacing(path: str, flag: str | None = None, *, suffix: str = ".tmp") -> Iterator[str]:
    """For outputs another library writes by name (a zip, venv-pack's archive): fill the temporary path this
    yields; it then replaces the output by the rule of this module. Failures are KreassignErrors: exit 2, or
    3 for a full or failing disk."""
    with _replacing(path, flag, suffix, raw=False) as tmp:
        yield tmp


@contextlib.contextmanager
def open_output(path: str, flag: str | None = None, *, binary: bool = False) -> Iterator[IO]:
    """An output file opened for writing by the rule of this module (see `replacing`)."""
    with _replacing(path, flag, ".tmp", raw=False) as tmp, \
            open(tmp, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
        yield f


def write_output(path: str, text: str, flag: str | None = None, *, stdout: bool = False) -> None:
    """Write `text` to the output `path` by the rule of this module (`-` is standard output when `stdout`).
    Failures are one-line KreassignErrors naming the flag and the path: exit 2, or 3 for a full or failing
    disk, the old file untouched."""
    if stdout and path == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open_output(path, flag) as f:
        f.write(text)


def write_text_atomically(path: str, text: str) -> None:
    """Write `text` to `path` all or nothing, by the rule of this module. Every failure is an OSError, for
    callers that decide themselves whether it is usage (2) or disk (3): the write's own, or EINVAL with the
    rule's words as strerror for a refused target (a device, a directory, a symlink into a missing folder).
    The commands use `write_output`."""
    with _replacing(path, None, ".tmp", raw=True) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(text)


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


__all__ = ["DISK_ERRNOS", "STDOUT", "check_out_dir", "check_output_file", "check_outputs", "open_output",
           "read_text", "replacing", "resolve_output", "write_output", "write_text_atomically"]
