"""Ctrl-C during `kreassign plan --jobs 2`: exit 130, one line on stderr, no worker's traceback, no
process left behind (checker/plan/check.py: the shape workers ignore SIGINT, the parent ends them).

A Ctrl-C at a terminal reaches every process of the foreground process group, the workers too; a
`kill -INT` reaches the leader alone. Both are sent here, to a run started in a process group of its own
with stderr on a pseudo-terminal (so `plan` prints its progress, as at a terminal), once one shape is
done: one worker then waits for work, where a KeyboardInterrupt used to print its traceback (issue 29:
"Process ForkProcess-2: Traceback ... KeyboardInterrupt", 3 runs of 3), while the other still checks the
long shape, which the parent must end rather than wait for.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kreassign.errors import INTERRUPTED

#: zk (no packed path) with two failures: a long shape (several seconds, 6 brokers: checked first) and a
#: short one, so one worker is idle while the other works
MOVES = [([1, 2, 3], [4, 5, 6]), ([1, 2], [2, 3])]


def _files(tmp_path: Path) -> list[str]:
    plan = {"version": 1, "partitions": [{"topic": f"t{k}", "partition": 0, "replicas": t}
                                         for k, (_, t) in enumerate(MOVES)]}
    current = {"version": 1, "partitions": [{"topic": f"t{k}", "partition": 0, "replicas": c}
                                            for k, (c, _) in enumerate(MOVES)]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "current.json").write_text(json.dumps(current))
    return [str(tmp_path / "plan.json"), "--current", str(tmp_path / "current.json"), "--profile", "zk",
            "--failures", "2", "--jobs", "2"]


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def _group(pgid: int) -> list[int]:
    """Every process still in process group `pgid` (zombies included: a worker not reaped counts as left)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[2]) == pgid:
                out.append(int(entry.name))
    return out


def _read(fd: int, timeout: float) -> str:
    """What the terminal shows within `timeout` s ("" at its end: every writer gone)."""
    if not select.select([fd], [], [], timeout)[0]:
        return ""
    try:
        return os.read(fd, 65536).decode(errors="replace")
    except OSError:  # EIO: the other side closed
        return ""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("to", ["terminal", "leader"])
def test_ctrl_c_during_plan_is_130_without_traceback_or_workers_left(tmp_path, to):
    terminal, tty = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kreassign", "plan", *_files(tmp_path)], cwd=tmp_path,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=tty, text=True,
                            start_new_session=True,  # a process group of its own, as a shell's job is
                            # a background job's SIGINT may be ignored (SIG_IGN is inherited): the default, as at a
                            # terminal (signal.signal only, no lock a thread could hold)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    os.close(tty)
    shown = ""
    try:
        deadline = time.monotonic() + 120
        while "checking shapes: 1/2" not in shown:  # the progress line: the short shape is done
            assert proc.poll() is None, f"the plan ended before its first shape was done: {shown!r}"
            assert time.monotonic() < deadline, f"no progress within 120 s: {shown!r}"
            shown += _read(terminal, 0.2)
        assert "checking shapes: 2/2" not in shown, "the long shape was done already: nothing left to interrupt"
        workers = _children(proc.pid)
        assert len(workers) == 2
        if to == "terminal":
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
        else:
            os.kill(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        while chunk := _read(terminal, 5):
            shown += chunk
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(terminal)
    err = shown.replace("\r\n", "\n").split("checking shapes: 1/2", 1)[1]
    assert proc.returncode == INTERRUPTED, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "Error" not in err, err
    assert err.strip() == "kreassign plan: interrupted", err
    assert out == ""  # interrupted before any result: nothing half-printed
    deadline = time.monotonic() + 5
    while _group(proc.pid) and time.monotonic() < deadline:  # a worker's exit may lag its parent's by a moment
        time.sleep(0.05)
    assert _group(proc.pid) == [], f"left behind: {_group(proc.pid)} (workers were {workers})"
