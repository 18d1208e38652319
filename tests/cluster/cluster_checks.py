"""What the cluster tests ask of a cluster and of the machine: conditions polled with a timeout, a topic seen
by every broker, and the clean-up (no process carrying the cluster's marker, no directory)."""

from __future__ import annotations

import time
from pathlib import Path

from kreassign.checker.cluster import AdminRequestError, Cluster
from kreassign.checker.cluster.watchdog import cluster_processes
from kreassign.spec import kafka_releases

NEWEST = kafka_releases.NEWEST  # the tier follows the matrix (.ci/run fetches it)
KAFKA_39 = "3.9.2"


def eventually(condition, what: str, timeout_s: float = 60.0):
    """Ask `condition` until it returns something true; after the timeout, fail naming `what` (and the last
    answer)."""
    deadline = time.monotonic() + timeout_s
    last, error = None, None
    while time.monotonic() < deadline:
        try:
            last = condition()
        except AdminRequestError as e:  # e.g. a topic not yet in the metadata of the broker asked
            last = None
            error = e
        else:
            error = None
        if last:
            return last
        time.sleep(0.2)
    if error is not None:
        raise AssertionError(f"{what} did not happen within {timeout_s:.0f} s: {error}")
    raise AssertionError(f"{what} did not happen within {timeout_s:.0f} s (last: {last!r})")


def alive(pid: int) -> bool:
    """The process exists and has not ended (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def state_of(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def assert_cleaned(directory: Path, pids: list[int], timeout_s: float = 30.0) -> None:
    """No process of the cluster is left (by pid and by marker) and its directory is gone."""
    eventually(lambda: not [p for p in pids if alive(p)] and not cluster_processes(str(directory))
               and not directory.exists(), f"the cluster in {directory} cleaned up", timeout_s)


def isr(c: Cluster, topic: str, partition: int = 0) -> list[int]:
    return c.admin.describe_topics([topic])[topic]["partitions"][partition]["isr"]


def topic_on_every_broker(c: Cluster, topic: str, partitions: int) -> None:
    """Every broker, asked itself (DescribeLogDirs), holds a replica of every partition; every ISR is full."""
    def seen():
        dirs = c.admin.log_dirs(list(c.brokers))
        held = {b: sorted(r["partition"] for r in d.get("replicas", []) if r["topic"] == topic)
                for b, d in dirs.items()}
        described = c.admin.describe_topics([topic])[topic]["partitions"]
        return all(held[b] == list(range(partitions)) for b in c.brokers) \
            and all(sorted(p["isr"]) == list(c.brokers) for p in described)
    eventually(seen, f"{topic} on every broker")


def listeners_are_local(c: Cluster) -> None:
    """Each node listens on its own port on 127.0.0.1 and nowhere else; the Admin helper listens nowhere."""
    from kreassign.checker.cluster.procs import listening_sockets

    for name, pid in c.pids().items():
        expected = [] if name == "admin" else [("127.0.0.1", int(c.address(name).rsplit(":", 1)[1]))]
        assert listening_sockets(pid) == expected, name
