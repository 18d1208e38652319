"""Kafka's Admin client on a user's own cluster (`kreassign status --bootstrap-server HOST:PORT
[--command-config FILE]`): the cluster's Admin helper (admin.py), compiled against the newest release's client
jars, pointed at any address, with the Kafka client properties file Kafka's own tools take as
`--command-config` (SASL, SSL).

    with connect("broker1:9092", "client.properties") as admin:
        reach(admin, "broker1:9092", 15)              # ClusterUnreachable (exit 3) in one line, or the cluster
        admin.describe_cluster(include_fenced=True)

The flags are checked here first, each bad one a UsageError (exit 2) naming it. The file's secrets (passwords,
JAAS lines, keys) never reach a message: the ClusterAdmin replaces each with `[hidden]`. Closing (the `with`
block's end, an exception, interpreter exit; the watchdog if the driver is killed) ends the JVM and removes its
temporary directory.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from kreassign.checker.implementations.kafka import KafkaSetupError, find_java_tools, releases

from kreassign.errors import InfraError, UsageError

from . import config as C
from . import watchdog
from .admin import MAIN_CLASS, AdminCreateError, AdminError, AdminRequestError, ClusterAdmin, compile_helper

BOOTSTRAP_FLAG = "--bootstrap-server"
CONFIG_FLAG = "--command-config"
HEAP_MB = 128  # the Admin client alone: a few connections, small answers
WATCHDOG_FILE = Path(watchdog.__file__).resolve()

_ADDRESS = re.compile(r"(?P<host>\[[0-9A-Za-z:.%]+\]|[A-Za-z0-9_][A-Za-z0-9_.-]*):(?P<port>[0-9]{1,10})")
#: keys whose values are credentials (Kafka's Password configs and the like)
_SECRET_KEY = re.compile(r"password|jaas|secret|token|credential", re.IGNORECASE)
#: a JAAS option's value: username="alice" password="..." (quoted, as JAAS wants; a bare word too)
_JAAS_OPTION = re.compile(r"\b(?:password|username)\s*=\s*(?:\"((?:[^\"\\]|\\.)*)\"|([^\s;\"]+))", re.IGNORECASE)


class ClusterUnreachable(InfraError):
    """The cluster at the bootstrap address did not answer (down, wrong address, refused the client): exit 3."""

    exit_code = 3


# -- the flags ------------------------------------------------------------------------------------------------


def check_bootstrap(text: str | None) -> str:
    """HOST:PORT[,HOST:PORT...] (an IPv6 host in brackets), each port 1..65535: the list, spaces removed; else a
    UsageError naming --bootstrap-server."""
    if text is None or not str(text).strip():
        raise UsageError(f"{BOOTSTRAP_FLAG}: expected HOST:PORT[,HOST:PORT...], got an empty value")
    parts = [p.strip() for p in str(text).split(",")]
    for part in parts:
        if not part:
            raise UsageError(f"{BOOTSTRAP_FLAG}: an empty address in {text!r} (HOST:PORT[,HOST:PORT...])")
        m = _ADDRESS.fullmatch(part)
        if m is None:
            raise UsageError(f"{BOOTSTRAP_FLAG}: {part!r} is not HOST:PORT")
        if not 1 <= int(m["port"]) <= 65535:
            raise UsageError(f"{BOOTSTRAP_FLAG}: port {m['port']} of {part!r} is not in 1..65535")
    return ",".join(parts)


def check_command_config(path: str | os.PathLike) -> tuple[Path, dict[str, str]]:
    """The file's absolute path and its properties; a UsageError naming --command-config if it is missing, not
    a regular readable file, or not Java properties."""
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except FileNotFoundError:
        raise UsageError(f"{CONFIG_FLAG}: no such file: {p}") from None
    except OSError as e:
        raise UsageError(f"{CONFIG_FLAG}: cannot read {p}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{CONFIG_FLAG}: {p} is not a regular file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise UsageError(f"{CONFIG_FLAG}: cannot read {p}: {e.strerror}") from None
    try:
        props = parse_properties(data.decode("latin-1"))  # Properties.load(InputStream): ISO 8859-1
    except ValueError as e:
        raise UsageError(f"{CONFIG_FLAG}: {p}: {e}") from None
    return p.resolve(), props


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_BLANK = " \t\f"


def parse_properties(text: str) -> dict[str, str]:
    """java.util.Properties.load's reading: comments (# !), key = value / key: value / key value, lines continued
    by an odd number of backslashes, \\t \\n \\uXXXX escapes. A malformed \\uXXXX is a ValueError naming the
    line."""
    props: dict[str, str] = {}
    lines = re.split(r"\r\n|\r|\n", text)
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].lstrip(_BLANK)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continued(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(_BLANK)
            i += 1
        if _continued(line):
            line = line[:-1]  # a continuation at the end of the file continues with nothing
        key, value = _split(line)
        try:
            props[_unescape(key)] = _unescape(value)
        except ValueError as e:
            raise ValueError(f"line {start + 1}: {e}") from None
    return props


def _continued(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split(line: str) -> tuple[str, str]:
    """The raw key and value: the key ends at the first unescaped '=', ':' or blank."""
    pos, escaped = 0, False
    while pos < len(line):
        c = line[pos]
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in "=:" or c in _BLANK:
            break
        pos += 1
    key, rest = line[:pos], line[pos:]
    rest = rest.lstrip(_BLANK)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANK)
    return key, rest


def _unescape(raw: str) -> str:
    out, pos = [], 0
    while pos < len(raw):
        c = raw[pos]
        pos += 1
        if c != "\\" or pos == len(raw):
            out.append(c)
            continue
        c = raw[pos]
        pos += 1
        if c == "u":
            digits = raw[pos:pos + 4]
            if len(digits) < 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError("malformed \\uxxxx escape")
            out.append(chr(int(digits, 16)))
            pos += 4
        else:
            out.append(_ESCAPES.get(c, c))
    return "".join(out)


def secrets_of(props: dict[str, str]) -> list[str]:
    """The values never to print: those of keys naming a password, JAAS line, secret, token, credential or
    ending in .key, and the username and password inside any JAAS line (as written and as JAAS reads them)."""
    found: set[str] = set()
    for key, value in props.items():
        if _SECRET_KEY.search(key) or key.lower().endswith(".key"):
            found.update((value, value.strip()))
        for m in _JAAS_OPTION.finditer(value):
            raw = m[1] if m[1] is not None else m[2]
            found.update((raw, re.sub(r"\\(.)", r"\1", raw)))
    # as UTF-8 too: the JVM reads the file as ISO 8859-1, a terminal or a log may show either
    for s in list(found):
        try:
            found.add(s.encode("latin-1").decode("utf-8"))
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    return sorted(s for s in found if s)


# -- the connection -------------------------------------------------------------------------------------------


class ExternalAdmin(ClusterAdmin):
    """A ClusterAdmin on a user's cluster, with its own temporary directory and watchdog; `close()` (or the
    `with` block's end) kills the JVM and removes both."""

    def __init__(self, argv: list[str], directory: Path, secrets: list[str], guard: subprocess.Popen,
                 bootstrap: str, command_config: Path | None):
        super().__init__(argv, directory, directory / "helper.log", secrets)
        self.directory, self.bootstrap, self.command_config = directory, bootstrap, command_config
        self._guard: subprocess.Popen | None = guard
        atexit.register(self.close)

    def close(self) -> None:
        if self._guard is None:
            return  # closed already
        atexit.unregister(self.close)
        try:
            super().close()
        finally:
            watchdog.sweep(str(self.directory))  # anything carrying the marker, then the directory
            guard, self._guard = self._guard, None
            if guard is not None:
                try:
                    guard.stdin.close()  # type: ignore[union-attr]
                    guard.wait(timeout=20)
                except (OSError, subprocess.TimeoutExpired):
                    pass


def connect(bootstrap: str, command_config: str | os.PathLike | None = None, *, version: str | None = None,
            log: Callable[[str], None] | None = None) -> ExternalAdmin:
    """An Admin client on the cluster at `bootstrap`, with `command_config`'s client properties: Kafka
    `version`'s client jars (the newest release by default; Maven fetches them on first use), one small JVM.
    Nothing is asked of the cluster yet (`reach` does). Bad flags: UsageError (exit 2); no Java, Maven or
    javac: exit 3."""
    bootstrap = check_bootstrap(bootstrap)
    config_path, props = check_command_config(command_config) if command_config is not None else (None, {})
    release = releases.classpath_for(version or releases.NEWEST, log=log)
    try:
        java, javac = find_java_tools()
    except KafkaSetupError as e:
        raise AdminError(str(e).replace("--impl kafka", "the Admin client")) from None
    classes = compile_helper(javac, release.lib, release.version)
    directory = Path(tempfile.mkdtemp(prefix="kreassign-cluster-admin-")).resolve()
    try:
        # the watchdog first: whatever happens to this process from here on, the JVM and the directory go
        guard = subprocess.Popen([sys.executable, "-I", "-S", str(WATCHDOG_FILE), str(directory)],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 close_fds=True, start_new_session=True)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    admin = ExternalAdmin(helper_argv(java, classes, release.lib, directory, bootstrap, config_path), directory,
                          secrets_of(props), guard, bootstrap, config_path)
    try:
        (directory / "tmp").mkdir()
        admin.start()
    except OSError as e:
        admin.close()
        raise AdminError(f"cannot start the Admin client's JVM ({java}): {e.strerror}") from None
    except BaseException:
        admin.close()
        raise
    if log:
        log(f"admin: Kafka {release.version}'s Admin client for {bootstrap}"
            + (f" with {config_path}" if config_path else ""))
    return admin


def helper_argv(java: str, classes: Path, lib: Path, directory: Path, bootstrap: str,
                command_config: Path | None) -> list[str]:
    """The helper's JVM: a small heap, temp files in its directory, the marker the watchdog finds it by, its
    classes ahead of the release's client jars; the bootstrap and the properties file's path (never its
    contents) as arguments."""
    return [java, f"-Xmx{HEAP_MB}m", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-XX:-UsePerfData", "-Djava.awt.headless=true", f"-Djava.io.tmpdir={directory / 'tmp'}",
            C.marker_argument(directory), "-cp", f"{classes}{os.pathsep}{os.path.join(str(lib), '*')}",
            MAIN_CLASS, bootstrap, *([str(command_config)] if command_config is not None else [])]


def reach(admin: ClusterAdmin, bootstrap: str, timeout_s: float) -> dict:
    """One describe_cluster within `timeout_s`: its answer, or ClusterUnreachable in one line (no answer in
    time, refused connections, a failed handshake, an unresolvable address, a helper that died). Properties
    the client refuses are a UsageError naming --command-config."""
    try:
        return admin.describe_cluster(timeout_s)
    except AdminRequestError as e:
        # the client refused its properties: the file's (the helper's own are valid), unless the address
        refused_config = isinstance(e, AdminCreateError) and "bootstrap" not in e.message
        if refused_config and getattr(admin, "command_config", None) is not None:
            raise UsageError(f"{CONFIG_FLAG}: {one_line(e.message)}") from None
        reason = f"{e.error_class}: {e.message}"
    except AdminError as e:
        reason = str(e)
    raise ClusterUnreachable(f"cannot reach the cluster at {bootstrap} within {timeout_s:.0f} s: "
                             f"{one_line(reason)}") from None


def one_line(text: str, limit: int = 300) -> str:
    """`text` in one line of at most `limit` characters: its first line, and its last (a helper's output ends
    with why it died), blanks collapsed."""
    lines = [" ".join(x.split()) for x in text.strip().splitlines() if x.strip()] or [""]
    line = lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}"
    return line if len(line) <= limit else line[:limit - 3] + "..."


__all__ = ["BOOTSTRAP_FLAG", "CONFIG_FLAG", "ClusterUnreachable", "ExternalAdmin", "check_bootstrap",
           "check_command_config", "connect", "helper_argv", "one_line", "parse_properties", "reach",
           "secrets_of"]
