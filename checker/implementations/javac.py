"""Java sources compiled once into the per-user cache, against a Kafka release's jars.

The Kafka adapter (checker/implementations/kafka/) and the cluster's Admin helper (checker/cluster/admin.py)
are compiled by `javac` on first use, never shipped as classes. Both go the same way: compile into a fresh
temporary sibling of the cache directory, then rename it into place, so that a concurrent run sees the whole
directory or none, and a run that loses the race keeps the winner's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path


def compile_into(target: Path, marker: Path, javac: str, args: Sequence[str], what: str,
                 failure: Callable[[str], Exception], *, generated: dict[str | Path, str] | None = None) -> Path:
    """`target` holding the classes `javac ... args` compiles (args: the classpath and sources), unless `marker`
    (a class file in it) says it is there already. `generated` (path under the directory -> Java source) is
    written before javac runs and removed after, so the directory holds classes only. A javac failure raises
    `failure("javac could not compile WHAT:" and the tail of javac's output)`, a cache that cannot be written
    `failure("cannot write the cache ...")`."""
    if marker.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{target.name.split('-')[0]}-tmp-", dir=target.parent))
    except OSError as e:
        raise failure(f"cannot write the cache {target.parent}: {e.strerror}") from None
    try:
        written = []
        for rel, source in (generated or {}).items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8")
            written.append(path)
        proc = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(tmp), *args,
                               *(str(p) for p in written)],
                              capture_output=True, text=True, timeout=300, check=False, stdin=subprocess.DEVNULL)
        for path in written:
            path.unlink()
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
            raise failure(f"javac could not compile {what}:\n" + "\n".join(tail))
        try:
            os.rename(tmp, target)  # atomic: a concurrent run sees the whole directory or none
        except OSError:
            if not marker.is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another run won the race
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


__all__ = ["compile_into"]
