"""A cluster's watchdog: the process that cleans up when the driver cannot (docs/cluster.md).

    python -I -S watchdog.py DIRECTORY

The driver starts it before any JVM, in a session of its own (a Ctrl-C in the terminal or a kill of the
driver's process group does not reach it), and keeps the write end of its stdin. When that pipe closes — the
driver closed the cluster, returned, raised, or was killed with SIGKILL — the watchdog kills every process of
this user whose command line carries `-Dkreassign.cluster=DIRECTORY` (every JVM of the cluster is started with
it, so one started a moment before the driver died is found too), waits until they are gone and removes
DIRECTORY. After a normal close the driver has done the same, and this finds nothing to do.

Standard library only: it is run as a file, not imported through the package, so that it starts in a few
milliseconds; the driver imports `cluster_processes` and `sweep` from it for its own clean-up.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time

MARKER_PROPERTY = "kreassign.cluster"  # config.MARKER_PROPERTY (this file imports nothing of the package)


def cluster_processes(directory: str) -> list[int]:
    """The live processes of this user started with the cluster's marker (a zombie has no command line)."""
    marker = f"-D{MARKER_PROPERTY}={directory}".encode()
    uid, me = os.getuid(), os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        if marker in argv:
            found.append(int(entry))
    return found


def sweep(directory: str, timeout_s: float = 15.0) -> list[int]:
    """SIGKILL every process of the cluster (stopped ones too), wait until none is left, remove the directory;
    the pids it killed."""
    killed: list[int] = []
    deadline = time.monotonic() + timeout_s
    while True:
        pids = cluster_processes(directory)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            if pid not in killed:
                killed.append(pid)
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)  # the kernel tears the JVMs down; look again
    shutil.rmtree(directory, ignore_errors=True)
    return killed


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not os.path.isabs(argv[1]):
        print("usage: watchdog.py ABSOLUTE_DIRECTORY", file=sys.stderr)
        return 2
    directory = argv[1]
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)  # only the pipe decides; a terminal's signals are the driver's

    def on_term(_signum, _frame):
        sweep(directory)
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    try:
        while sys.stdin.buffer.read(65536):  # the driver writes nothing: this returns at EOF
            pass
    except OSError:
        pass
    sweep(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
