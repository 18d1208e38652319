"""Which brokers hold a partition's log on disk at the end of a scenario (issue 24, item 3: stray or missing
replicas), asked of each broker itself with DescribeLogDirs, against the replicas the model ends with: every
replica's broker holds the log (a missing one would have to be rebuilt from nothing), and no other broker does (a
stray log: a replica a reassignment or cancel removed, whose broker did not delete it). Deletion is asynchronous
(a removed replica's log is renamed for deletion when its broker applies the change, KRaft and ZooKeeper mode
alike), so the check is a condition asked until it holds or the timeout passes; what is still wrong then is a
divergence of kind "log_dirs".
"""

from __future__ import annotations

import time
from typing import Any

from kreassign.checker.cluster import AdminError, AdminRequestError, Cluster, ClusterError

from .format import Scenario

TIMEOUT_S = 15.0  # a removed replica leaves DescribeLogDirs as soon as its broker applies the change; a
# broker just restarted may take seconds to answer at all
POLL_S = 0.5


def holders(cluster: Cluster, topic: str) -> dict[int, list[int]] | str:
    """{partition: the brokers whose log dirs hold it (current logs, not a log dir move's future one)}, or
    what kept a broker from answering."""
    dirs = cluster.admin.log_dirs(list(cluster.brokers))
    out: dict[int, set[int]] = {}
    for b, info in sorted(dirs.items()):
        if "error_class" in info:
            return f"broker-{b} did not answer DescribeLogDirs ({info['error_class']})"
        for r in info["replicas"]:
            if r["topic"] == topic and not r["future"]:
                out.setdefault(r["partition"], set()).add(b)
    return {p: sorted(bs) for p, bs in out.items()}


def check_log_dirs(cluster: Cluster, scenario: Scenario, expected: dict[str, Any] | None,
                   timeout_s: float = TIMEOUT_S) -> list[dict[str, Any]]:
    """The divergences between the brokers holding the scenario's partitions and the replicas of `expected`
    (the last step's expectation: every broker up); [] when they agree, or when the model did not determine
    the end."""
    if expected is None:
        return []
    want = {int(p): sorted(v["replicas"]) for p, v in expected["partitions"].items()}
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            got: dict[int, list[int]] | str = holders(cluster, scenario.topic)
        except (AdminError, AdminRequestError) as e:
            got = str(e).splitlines()[0]
        if not isinstance(got, str) and all(got.get(p, []) == w for p, w in want.items()):
            return []
        if time.monotonic() > deadline:
            break
        time.sleep(POLL_S)
    if isinstance(got, str):  # a broker that does not answer says nothing about its disk: not a verdict
        raise ClusterError(f"{scenario.topic}: {got} within {timeout_s:.0f} s")
    out = []
    for p, w in sorted(want.items()):
        have = got.get(p, [])
        if have != w:
            missing, stray = sorted(set(w) - set(have)), sorted(set(have) - set(w))
            out.append({"kind": "log_dirs", "step": len(scenario.steps) - 1, "partition": p, "expected": w,
                        "observed": have, "what": f"{scenario.topic}-{p}: logs on brokers {have}, the replicas are "
                        f"{w}" + (f"; missing on {missing}" if missing else "") + (f"; stray on {stray}" if stray else "")
                        + f" ({timeout_s:.0f} s after the last step)"})
    return out


__all__ = ["check_log_dirs", "holders"]
