"""CPU seconds and resident memory of process trees, read from /proc while they run (the Spark benches' meter).

A `TreeMeter` is polled (`poll()`) every POLL seconds by the bench while its commands run. For each named group
of root pids it keeps each process's largest utime + stime (so a process counts until it exits; one that lives
less than a poll may be missed) and the group's largest summed RSS at one poll.
"""

from __future__ import annotations

import os

POLL = 0.1
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _table() -> tuple[dict[int, list[int]], dict[int, tuple[float, int]]]:
    """(parent pid -> children, pid -> (CPU seconds, RSS bytes)) of every process now."""
    children: dict[int, list[int]] = {}
    usage: dict[int, tuple[float, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(name))
        usage[int(name)] = ((int(fields[11]) + int(fields[12])) / TICKS, int(fields[21]) * PAGE)
    return children, usage


class TreeMeter:
    def __init__(self, groups: dict[str, list[int]]):
        self.groups = groups  # name -> root pids (each with its descendants)
        self.cpu: dict[str, dict[int, float]] = {g: {} for g in groups}
        self.peak_rss: dict[str, int] = dict.fromkeys(groups, 0)

    def poll(self) -> None:
        children, usage = _table()
        for group, roots in self.groups.items():
            rss, todo, seen = 0, list(roots), set()
            while todo:
                pid = todo.pop()
                if pid in seen or pid not in usage:
                    continue
                seen.add(pid)
                cpu, mem = usage[pid]
                self.cpu[group][pid] = max(self.cpu[group].get(pid, 0.0), cpu)
                rss += mem
                todo += children.get(pid, [])
            self.peak_rss[group] = max(self.peak_rss[group], rss)

    def cpu_seconds(self, group: str) -> float:
        return sum(self.cpu[group].values())


__all__ = ["POLL", "TreeMeter"]
