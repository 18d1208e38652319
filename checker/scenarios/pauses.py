"""A follower held behind its leader, for a `pause` step (docs/scenarios.md): the model's LeaderShrinkIsr — the
leader drops a lagging follower from the ISR — made to happen on a real cluster, and undone by `resume`.

Kafka's replication throttles (KIP-73) never slow an in-sync replica: the follower side throttles a partition
only while its fetch state is not in sync (ReplicaFetcherThread.shouldFollowerThrottle: `!isReplicaInSync`), and
so does the leader side (ReplicaManager.shouldLeaderThrottle: not in the ISR) — 3.9 and 4.x alike, so no
throttle alone makes a follower fall out. A pause therefore:

1. marks the follower throttled — the topic's `follower.replication.throttled.replicas` names the (partition,
   broker) pair, the broker's dynamic `follower.replication.throttled.rate` is 1 byte/s;
2. freezes the follower's JVM (SIGSTOP) and produces records into the partition until its leader has dropped it
   from the ISR (not caught up for `replica.lag.time.max.ms`: Partition.getOutOfSyncReplicas) and a backlog of
   BACKLOG_BYTES is behind it;
3. thaws it (SIGCONT) well before its session expires, so that it is never fenced: it is now out of sync, the
   throttle holds, and the backlog keeps it behind. A throttled fetcher still takes one fetch of up to
   `replica.fetch.max.bytes` whenever the quota's window has emptied (the bytes are recorded after the fetch),
   also after a restart (the quota is in memory): PAUSE_BROKER_CONFIG sets that limit low, so the backlog
   lasts minutes.

`resume` removes the pair from the topic's list: the follower fetches at full speed and its leader takes it back
into the ISR (the step's waits ask for that). The brokers' rates stay until the scenario ends (`release_all`):
a broker's config is altered through that broker, which may be down when its follower is resumed, and a rate
throttles nothing that no topic lists.
"""

from __future__ import annotations

from kreassign.checker.cluster import AdminRequestError, Cluster, ClusterError

#: broker settings a cluster needs for pauses: a follower not caught up for 3 s is dropped (Kafka's default is
#: 30 s), which the leader notices within 4.5 s (it checks every half of that); a throttled follower's
#: occasional fetch takes at most 64 KiB of its backlog
PAUSE_BROKER_CONFIG = (("replica.lag.time.max.ms", "3000"), ("replica.fetch.max.bytes", "65536"))
#: the session timeout such a cluster needs: a frozen follower must be dropped from the ISR, and thawed,
#: before its session expires (it would be fenced: another model action)
PAUSE_SESSION_TIMEOUT_MS = 12000
RECORD_BYTES = 16 * 1024
BACKLOG_BYTES = 2 * 1024 * 1024  # at 64 KiB per quota window (~11 s) a held follower stays behind for minutes
THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
THROTTLED_RATE = "follower.replication.throttled.rate"


def _throttled_list(pairs: set[tuple[int, int]]) -> str:
    return ",".join(f"{p}:{b}" for p, b in sorted(pairs))


def pause_ready(spec) -> list[str]:
    """What a cluster spec lacks for pauses (empty: nothing)."""
    missing = [f"--broker-config {k}={v}" for k, v in PAUSE_BROKER_CONFIG if (k, v) not in spec.broker_config]
    if spec.session_timeout_ms < PAUSE_SESSION_TIMEOUT_MS:
        missing.append(f"--session-timeout-ms {PAUSE_SESSION_TIMEOUT_MS} (or more)")
    return missing


class Pauses:
    """The followers held on one topic during a scenario, and the throttle configs that hold them."""

    def __init__(self, cluster: Cluster, topic: str):
        self.cluster, self.topic = cluster, topic
        self.held: set[tuple[int, int]] = set()
        self.rated: set[int] = set()  # brokers whose follower rate this scenario set

    def pause(self, partition: int, broker: int) -> None:
        """Hold the follower behind (steps 1-3 above); a ClusterError (exit 3) naming what did not happen if
        its leader has not dropped it well before its session would expire."""
        admin = self.cluster.admin
        self.held.add((partition, broker))
        admin.alter_configs("topic", self.topic, set_={THROTTLED_REPLICAS: _throttled_list(self.held)})
        if broker not in self.rated:
            admin.alter_configs("broker", str(broker), set_={THROTTLED_RATE: "1"})
            self.rated.add(broker)
        admin.produce(self.topic, partition, records=1, size=RECORD_BYTES)  # the producer knows the leader now
        produced = 0

        def dropped() -> str | None:
            nonlocal produced
            if produced < BACKLOG_BYTES:
                n = 32
                admin.produce(self.topic, partition, records=n, size=RECORD_BYTES)
                produced += n * RECORD_BYTES
            try:  # the Admin client may pick the frozen broker: ask again, and it picks another
                described = admin.describe_topics([self.topic], timeout_s=2.0)[self.topic]["partitions"]
            except AdminRequestError as e:
                return f"no answer ({e.error_class})"
            isr = next(q["isr"] for q in described if q["partition"] == partition)
            if broker in isr:
                return f"broker-{broker} still in the ISR {isr} of {self.topic}-{partition}"
            if produced < BACKLOG_BYTES:
                return f"{produced} of {BACKLOG_BYTES} bytes of backlog produced"
            return None

        # thawed with a third of the session left: a frozen broker whose session expired is fenced
        budget_s = self.cluster.spec.session_timeout_ms / 1000 * 2 / 3
        self.cluster.pause(broker)
        try:
            self.cluster.wait_for(f"broker-{broker} dropped from the ISR of {self.topic}-{partition} while frozen",
                                  dropped, budget_s)
        finally:
            self.cluster.resume(broker)
        if broker not in admin.broker_ids():
            raise ClusterError(f"broker-{broker} was fenced while frozen for a pause of {self.topic}-{partition}: "
                               f"its session ({self.cluster.spec.session_timeout_ms} ms) is too short")

    def resume(self, partition: int, broker: int) -> None:
        """Remove the follower from the topic's throttled replicas (its broker's rate stays: module docstring)."""
        self.held.discard((partition, broker))
        self._write_topic()

    @property
    def touched(self) -> bool:
        return bool(self.held or self.rated)

    def release_all(self) -> None:
        """Remove every throttle this scenario set: the topic's list and the brokers' rates (every broker up)."""
        self.held.clear()
        self._write_topic()
        for b in sorted(self.rated):
            self.cluster.admin.alter_configs("broker", str(b), delete=[THROTTLED_RATE])
        self.rated.clear()

    def _write_topic(self) -> None:
        admin = self.cluster.admin
        if self.held:
            admin.alter_configs("topic", self.topic, set_={THROTTLED_REPLICAS: _throttled_list(self.held)})
        else:
            admin.alter_configs("topic", self.topic, delete=[THROTTLED_REPLICAS])


__all__ = ["BACKLOG_BYTES", "PAUSE_BROKER_CONFIG", "PAUSE_SESSION_TIMEOUT_MS", "Pauses", "pause_ready"]
