"""Checkpoint files of Spark runs: one directory per BFS level, written through Hadoop's FileSystem.

Layout of a run's directory (`<checkpoint dir>/<model slug>-<model hash>/`):

    level-00000/data/      text files, one line per blob, "<name> <base64 blob>": "N:<level>:<bucket>"
                           the level's states (discovery keys, identities, payloads) and, when
                           the run keeps the graph, "E:<level>:<bucket>" the edges out of them
    level-00000/meta.json  the run after that level (counts, findings, options), written last:
                           a level counts only once its meta.json exists
    level-00001/...

Everything goes through Spark's Hadoop FileSystem (py4j), so the directory may be a local
path (local mode, or NFS shared by every node) or any Hadoop URI (hdfs://, s3a://, gs://,
abfs://). A meta file is written to a temporary name and renamed. Nothing is pickled:
blobs are numpy buffers and JSON (checker/spark/tasks.py). A run commits and resumes its
levels through checker/spark/checkpoint.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any
from urllib.parse import urlparse

META = "meta.json"
FORMAT = "kreassign-spark-checkpoint"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that cannot be used for this run; the message says why."""


def absolute_uri(path: str) -> str:
    """Local paths become absolute (executors in local mode share the driver's file system)."""
    if urlparse(path).scheme and len(urlparse(path).scheme) > 1:  # not a Windows drive letter
        return path.rstrip("/")
    return os.path.abspath(os.path.expanduser(path))


def run_name(model: Any, codec: str) -> str:
    """A directory name for one model: readable slug plus a hash of what identifies the model."""
    described = json.dumps(model.describe(), sort_keys=True, default=repr)
    identity = f"{type(model).__module__}.{type(model).__qualname__}|{described}|{codec}"
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(getattr(model, "name", "model")))[:40].strip("-") or "model"
    return f"{slug}-{hashlib.sha1(identity.encode()).hexdigest()[:12]}"


class HadoopFS:
    """The few file operations the checkpoint needs, on any Hadoop-supported URI."""

    def __init__(self, sc: Any, root: str):
        self.sc = sc
        self.root = root
        self._jvm = sc._jvm
        self._conf = sc._jsc.hadoopConfiguration()
        self._path_cls = self._jvm.org.apache.hadoop.fs.Path

    def _path(self, path: str) -> Any:
        return self._path_cls(path)

    def _fs(self, path: Any) -> Any:
        return path.getFileSystem(self._conf)

    def exists(self, path: str) -> bool:
        p = self._path(path)
        return bool(self._fs(p).exists(p))

    def mkdirs(self, path: str) -> None:
        p = self._path(path)
        self._fs(p).mkdirs(p)

    def delete(self, path: str) -> None:
        p = self._path(path)
        fs = self._fs(p)
        if fs.exists(p):
            fs.delete(p, True)

    def children(self, path: str) -> list[str]:
        p = self._path(path)
        fs = self._fs(p)
        if not fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(p))

    def write_text(self, path: str, text: str) -> None:
        """Write atomically: a temporary file, then a rename over the target."""
        p, tmp = self._path(path), self._path(path + ".tmp")
        fs = self._fs(p)
        out = fs.create(tmp, True)
        try:
            out.write(bytearray(text.encode()))
        finally:
            out.close()
        if fs.exists(p):
            fs.delete(p, False)
        if not fs.rename(tmp, p):
            raise OSError(f"{path}: cannot rename the temporary file into place")

    def read_text(self, path: str) -> str:
        p = self._path(path)
        fs = self._fs(p)
        stream = fs.open(p)
        try:
            data = self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream)
        finally:
            stream.close()
        return bytes(data).decode()


def level_dir(run_dir: str, level: int) -> str:
    return f"{run_dir}/level-{level:05d}"


def committed_levels(fs: HadoopFS, run_dir: str) -> list[int]:
    """Levels whose meta.json exists, in order; they must be 0..n-1 without a gap."""
    levels = []
    for name in fs.children(run_dir):
        m = re.fullmatch(r"level-(\d{5})", name)
        if m and fs.exists(f"{run_dir}/{name}/{META}"):
            levels.append(int(m.group(1)))
    levels.sort()
    if levels != list(range(len(levels))):
        raise CheckpointError(f"{run_dir}: levels {levels} are not 0..n-1 (a level directory is missing)")
    return levels


def read_meta(fs: HadoopFS, run_dir: str, level: int) -> dict[str, Any]:
    path = f"{level_dir(run_dir, level)}/{META}"
    try:
        meta = json.loads(fs.read_text(path))
    except json.JSONDecodeError as e:
        raise CheckpointError(f"{path}: invalid JSON ({e.msg})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a {FORMAT} file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: format_version {meta.get('format_version')!r}, this tool reads {FORMAT_VERSION}")
    return meta


def write_meta(fs: HadoopFS, run_dir: str, level: int, meta: dict[str, Any]) -> None:
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, **meta}
    fs.write_text(f"{level_dir(run_dir, level)}/{META}", json.dumps(meta, indent=1, sort_keys=True))


def remove_uncommitted(fs: HadoopFS, run_dir: str, first: int) -> None:
    """Delete level directories from `first` on (an interrupted level is rewritten)."""
    for name in fs.children(run_dir):
        m = re.fullmatch(r"level-(\d{5})", name)
        if m and int(m.group(1)) >= first:
            fs.delete(f"{run_dir}/{name}")
