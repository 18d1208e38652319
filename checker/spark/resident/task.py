"""The resident layout's executor side: one long-lived Spark task per bucket, for the whole search.

All the run's tasks are one barrier stage (Spark starts them together or not at all). Each task connects to
the driver's coordinator (checker/spark/resident/coordinator.py), opens its mailbox for its peers, and
then does what the driver says, level after level:

- "level": deduplicate the candidates its peers sent it for this level against its visited set (or take
  its initial states), then send its new states' keys to every task: each now holds the level's keys
  over every bucket (the next level's ranks need them), and tells the driver how many states it found;
- "check": keep the first states only if max_states fell in the level, check them and, unless told not
  to, expand them, sending each peer the candidates it owns (the next level's input); its findings go
  to the driver;
- "resolve": the keys of the (level, rank) pairs it holds (a counterexample's path); "end": stop.

A task that fails tells the driver why before it ends ("failed"), so that the run names the cause, not the
broken connections it leaves its peers.

Nothing is pickled through the JVM and nothing goes through the driver but counts and findings.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import time
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kreassign.checker.spark import tasks as T
from kreassign.checker.spark.resident.bucket import ResidentBucket, merge_keys
from kreassign.checker.spark.resident.wire import Channel, Mailbox, Peers, WireError, connect


def local_address(host: str, port: int) -> str:
    """The address of this host's interface that reaches (host, port): the one its peers can reach too
    (127.0.0.1 in local mode). A UDP socket's connect sends nothing."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect((host, port))
        return probe.getsockname()[0]


class _End(Exception):
    """The driver said "end"."""


def resident_task(partition: Iterable[Any], setup: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Spark (a barrier stage): the bucket this task's partition is, until the driver ends the search."""
    from pyspark import BarrierTaskContext

    list(partition)
    context = BarrierTaskContext.get()
    bucket, attempt = context.partitionId(), context.attemptNumber()
    host, port, token, tasks = setup["host"], setup["port"], setup["token"], setup["buckets"]
    mailbox = Mailbox(local_address(host, port), token, tasks)
    hello = ("hello", bucket, attempt, mailbox.address, T.executor_id(), os.getpid())
    driver = Channel(connect((host, port), token, hello), "the driver")
    peers = None
    try:
        message = driver.recv()
        if message[0] != "peers":
            return
        peers = Peers(bucket, message[1], token, mailbox)
        with_driver(driver, peers, mailbox, ResidentBucket(bucket, setup["job"], setup["recipe"]), setup)
    except _End:
        pass
    except Exception as e:  # the driver hears why first (a peer's broken connection is only a consequence)
        where = traceback.extract_tb(e.__traceback__)[-1]
        with contextlib.suppress(Exception):
            driver.send(("failed", bucket, f"{type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno})",
                         isinstance(e, WireError)))
        raise
    finally:
        if peers is not None:
            peers.close()
        mailbox.close()
        driver.close()
    yield {"bucket": bucket, "attempt": attempt}


def _send_candidates(peers: Peers, level: int, target: int, record: Any) -> None:
    peers.send(target, level, "cands", record)


def next_order(driver: Channel, b: ResidentBucket, tag: str) -> tuple[Any, ...]:
    """The driver's next order of kind `tag`, answering its "resolve" orders meanwhile ("end": _End)."""
    while True:
        message = driver.recv()
        if message[0] == "end":
            raise _End
        if message[0] == "resolve":
            driver.send(("resolved", b.lookup(message[1])))
            continue
        if message[0] != tag:
            raise RuntimeError(f"the driver sent {message[0]!r} where {tag!r} was due (engine bug)")
        return message


def with_driver(driver: Channel, peers: Peers, mailbox: Mailbox, b: ResidentBucket, setup: dict[str, Any]) -> None:
    """The levels, as the driver calls them (see the module docstring)."""
    tasks = setup["buckets"]
    prev_keys = T.EMPTY_I64
    while True:
        job = next_order(driver, b, "level")[1]
        level = job["level"]
        started = time.perf_counter()
        if job["mode"] == "seed":
            new = b.seed(setup["seeds"].get(b.bucket, []))
            received = 0.0
        else:
            cands = [value for _, value in mailbox.take(level, "cands")]
            received = time.perf_counter()
            new = b.dedupe(cands, prev_keys)
        deduped = time.perf_counter()
        mine = b.sorted_keys()
        for to in range(tasks):
            peers.send(to, level, "keys", mine)
        peers.end(level, "keys")
        level_keys = merge_keys([keys for _, keys in sorted(mailbox.take(level, "keys"), key=lambda r: r[0])])
        gathered = time.perf_counter()
        driver.send(("deduped", level, len(new)))
        _, keep, expand = next_order(driver, b, "check")
        b.place(level_keys, keep)
        prev_keys = level_keys if keep is None else level_keys[:keep]
        expanding = time.perf_counter()
        sent = peers.sent_bytes
        stats = b.check_and_expand(job, expand, functools.partial(_send_candidates, peers, level + 1))
        peers.end(level + 1, "cands")
        done = time.perf_counter()
        stats.update(new=len(b.new), shuffled=peers.sent_bytes - sent, phases={
            "wait": (received - started) if received else 0.0,
            "dedupe": deduped - (received or started), "keys": gathered - deduped,
            "expand and send": done - expanding})
        driver.send(("expanded", level, stats))


__all__ = ["local_address", "resident_task"]
