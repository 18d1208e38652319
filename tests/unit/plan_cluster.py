"""A realistic cluster and a plan for it, as Kafka's tools would print them (for tests and bench/plan_bench.py).

Assignments follow Kafka's AdminUtils.assignReplicasToBrokers (rack-unaware: a random start
broker, then each replica shifted), which is also what `kafka-reassign-partitions.sh --generate`
uses for the proposed plan; here the plan decommissions three brokers and adds three new ones.
"""

from __future__ import annotations

import json
import random

BROKERS = [101, 102, 103, 104, 105, 106, 107, 108, 109]
NEW_BROKERS = [101, 102, 103, 104, 105, 106, 110, 111, 112]  # 107-109 leave, 110-112 join
TOPICS = [("orders", 12, 3), ("payments", 24, 3), ("audit", 6, 2), ("clicks", 30, 3), ("users", 8, 3),
          ("inventory", 16, 3), ("events", 40, 3), ("metrics", 20, 2), ("sessions", 36, 3), ("billing", 8, 3)]


def assign_replicas(n_partitions: int, rf: int, brokers: list[int], rng: random.Random) -> list[list[int]]:
    """AdminUtils.assignReplicasToBrokersRackUnaware."""
    n = len(brokers)
    start, shift = rng.randrange(n), rng.randrange(n)
    out = []
    for pid in range(n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start) % n
        replicas = [brokers[first]]
        for j in range(rf - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out.append(replicas)
    return out


def cluster(topics=TOPICS, seed: int = 7, scale: int = 1):
    """(current, plan, describe text): `scale` multiplies the partition counts."""
    rng = random.Random(seed)
    current, plan, lines = {}, {}, []
    for name, count, rf in topics:
        count *= scale
        now = assign_replicas(count, rf, BROKERS, rng)
        new = assign_replicas(count, rf, NEW_BROKERS, rng)
        min_isr = 2 if rf == 3 else 1
        lines.append(f"Topic: {name}\tTopicId: {name[:4]:A<22}\tPartitionCount: {count}\tReplicationFactor: {rf}\t"
                     f"Configs: min.insync.replicas={min_isr},segment.bytes=1073741824")
        for p, (r, t) in enumerate(zip(now, new)):
            current[(name, p)], plan[(name, p)] = r, t
            isr = r if (p * 7 + len(name)) % 17 else r[:-1]  # a few followers lag behind
            lines.append(f"\tTopic: {name}\tPartition: {p}\tLeader: {r[0]}\tReplicas: {','.join(map(str, r))}\t"
                         f"Isr: {','.join(map(str, isr))}\tElr: N/A\tLastKnownElr: N/A")
    return current, plan, "\n".join(lines) + "\n"


def reassignment_json(parts: dict[tuple[str, int], list[int]]) -> str:
    return json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)} for (t, p), r in parts.items()]},
        separators=(",", ":"))


def write_files(directory, scale: int = 1):
    """Write current.json, plan.json and describe.txt into `directory`; return their paths."""
    current, plan, describe = cluster(scale=scale)
    paths = {name: str(directory / name) for name in ("current.json", "plan.json", "describe.txt")}
    (directory / "current.json").write_text(reassignment_json(current))
    (directory / "plan.json").write_text(reassignment_json(plan))
    (directory / "describe.txt").write_text(describe)
    return paths, current, plan
