"""How long `kreassign validate-trace` takes on a whole ZooKeeper-era log (issue 15: 100,000 lines < 30 s).

    python bench/validate_log.py                 # 100,000 lines, 240 partitions, prints the figures
    python bench/validate_log.py --lines 20000 --topics 10 --out /tmp/big.log
    python bench/validate_log.py --quick         # 2,000 lines, 2 topics (16 partitions): a smoke run

The log is written the way Kafka 2.8 – 3.x writes its controller, state-change and broker
logs (the shapes of docs/validate-trace.md, log4j prefixes with timestamps and thread-free
`[Controller id=1 epoch=E]` identities), from a run of the zk reference: topic creations,
then rounds of a broker failure (elections, ISR removals), its recovery (the leaders'
AlterPartition ISR expansions, broker side), automatic preferred elections and, every few
rounds, a controller failover — many partitions interleaved, other loggers' lines in
between. Prints lines, partitions, observations, the verdict and the wall time; asserts
nothing about time.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from kreassign.checker.traces.validation import validate_text
from kreassign.reference import profile
from kreassign.spec import actions as A
from kreassign.spec.state import make_cluster

BROKERS = [1, 2, 3, 4, 5, 6]


class Writer:
    def __init__(self, seed: int):
        self.lines: list[str] = []
        self.t = 1_700_000_000.0
        self.rng = random.Random(seed)

    def emit(self, level: str, text: str, logger: str) -> None:
        self.t += 0.001
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.t)) + f",{int(self.t * 1000) % 1000:03d}"
        self.lines.append(f"[{stamp}] {level} {text} ({logger})")

    def noise(self, n: int) -> None:
        for _ in range(n):
            k = self.rng.randrange(3)
            if k == 0:
                self.emit("INFO", f"[Log partition=t{self.rng.randrange(99)}-0, dir=/var/lib/kafka/data] Rolled new log "
                          f"segment at offset {self.rng.randrange(10**6)} in 2 ms.", "kafka.log.Log")
            elif k == 1:
                self.emit("INFO", "[GroupCoordinator 1]: Stabilized group consumers generation 4", "kafka.coordinator.group.GroupCoordinator")
            else:
                self.emit("INFO", "[ProducerStateManager partition=t0-0] Wrote producer snapshot", "kafka.log.ProducerStateManager")


def lai(p) -> str:
    return (f"LeaderAndIsr(leader={p.leader}, leaderEpoch={p.leader_epoch}, isr=List({', '.join(map(str, p.isr))}), "
            f"leaderRecoveryState=RECOVERED, zkVersion={p.partition_epoch})")


def part_state(t: str, i: int, p, ce: int) -> str:
    return (f"LeaderAndIsrPartitionState(topicName='{t}', partitionIndex={i}, controllerEpoch={ce}, leader={p.leader}, "
            f"leaderEpoch={p.leader_epoch}, isr=[{', '.join(map(str, p.isr))}], zkVersion={p.partition_epoch}, "
            f"replicas=[{', '.join(map(str, p.replicas))}], addingReplicas=[], removingReplicas=[], isNew=false, "
            f"leaderRecoveryState=0)")


def generate(target_lines: int = 100_000, topics: int = 30, per_topic: int = 8, seed: int = 15) -> str:
    """A Kafka-format log of about `target_lines` lines (see the module docstring)."""
    zk = profile("zk")
    names = [f"topic-{k:02d}" for k in range(topics)]
    assign = {n: [[BROKERS[(k + i + j) % 6] for j in range(3)] for i in range(per_topic)] for k, n in enumerate(names)}
    state = zk.initial_state(make_cluster(BROKERS, assign))
    w = Writer(seed)
    ctl = 1

    def who() -> str:
        return f"[Controller id={ctl} epoch={state.zk.epoch}]"

    def sends(t: str, i: int, p) -> None:
        for b in p.replicas:
            if state.is_active(b):
                kind = "become-leader" if b == p.leader else "become-follower"
                w.emit("TRACE", f"{who()} Sending {kind} LeaderAndIsr request {part_state(t, i, p, state.zk.epoch)} "
                       f"to broker {b} for partition {t}-{i}", "state.change.logger")

    for n in names:  # creation
        parts = ", ".join(f"{n}-{i} -> ReplicaAssignment(replicas={','.join(map(str, r))}, addingReplicas=, "
                          f"removingReplicas=)" for i, r in enumerate(assign[n]))
        w.emit("INFO", f"[Controller id={ctl}] New topics: [Set({n})], deleted topics: [HashSet()], new partition "
               f"replica assignment [HashMap({parts})]", "kafka.controller.KafkaController")
        w.emit("INFO", f"[Controller id={ctl}] New partition creation callback for "
               + ",".join(f"{n}-{i}" for i in range(per_topic)), "kafka.controller.KafkaController")
        for i, r in enumerate(assign[n]):
            w.emit("INFO", f"{who()} Changed partition {n}-{i} state from NonExistentPartition to NewPartition with "
                   f"assigned replicas {','.join(map(str, r))}", "state.change.logger")
        for i in range(per_topic):
            p = state.partition(n, i)
            w.emit("INFO", f"{who()} Changed partition {n}-{i} from NewPartition to OnlinePartition with state "
                   f"{lai(p)}", "state.change.logger")
            sends(n, i, p)
            for b in p.replicas:
                w.emit("TRACE", f"{who()} Changed state of replica {b} for partition {n}-{i} from NewReplica to "
                       f"OnlineReplica", "state.change.logger")
        w.emit("INFO", f"{who()} Sending UpdateMetadata request to brokers HashSet(1, 2, 3, 4, 5, 6) for "
               f"{per_topic} partitions", "state.change.logger")
        w.noise(3)

    rounds = 0
    while len(w.lines) < target_lines:
        rounds += 1
        live = [b for b in BROKERS if state.is_active(b)]
        b = w.rng.choice(live)
        before = state
        state = zk.apply(state, A.BrokerFail(b)).state
        changed = [(t, i, p, before.partition(t, i)) for t, i, p in state.partitions() if p != before.partition(t, i)]
        for t, i, p, old in changed:  # elections first, then the ISR removals (onReplicasBecomeOffline)
            if p.leader != old.leader:
                w.emit("INFO", f"{who()} Changed partition {t}-{i} state from OnlinePartition to OfflinePartition",
                       "state.change.logger")
                w.emit("INFO", f"{who()} Changed partition {t}-{i} from OfflinePartition to OnlinePartition with "
                       f"state {lai(p)}", "state.change.logger")
                sends(t, i, p)
        for t, i, p, old in changed:
            if p.leader == old.leader:
                w.emit("INFO", f"{who()} Partition {t}-{i} state changed to (Leader:{p.leader},ISR:"
                       f"{','.join(map(str, p.isr))},LeaderRecoveryState:RECOVERED,LeaderEpoch:{p.leader_epoch},"
                       f"ZkVersion:{p.partition_epoch},ControllerEpoch:{state.zk.epoch}) after removing replica {b} "
                       f"from the ISR as part of transition to OfflineReplica", "state.change.logger")
            w.emit("TRACE", f"{who()} Changed state of replica {b} for partition {t}-{i} from OnlineReplica to "
                   f"OfflineReplica", "state.change.logger")
        w.noise(20)
        state = zk.apply(state, A.BrokerRecover(b)).state
        for t, i, p in list(state.partitions()):  # the leaders take the recovered replica back (AlterPartition)
            if b in p.replicas and b not in p.isr and state.is_active(p.leader):
                state = zk.apply(state, A.LeaderExpandIsr(t, i, b)).state
                q = state.partition(t, i)
                w.emit("INFO", f"[Partition {t}-{i} broker={q.leader}] ISR updated to {','.join(map(str, q.isr))} "
                       f"and version updated to [{q.partition_epoch}]", "kafka.cluster.Partition")
                if w.rng.random() < 0.2:
                    w.noise(1)
        if rounds % 2 == 0:  # the auto-rebalance moves leadership back to the preferred replicas
            w.emit("INFO", f"[Controller id={ctl}] Processing automatic preferred replica leader election",
                   "kafka.controller.KafkaController")
            for t, i, p in list(state.partitions()):
                if p.leader != p.replicas[0] and p.replicas[0] in p.isr and state.is_active(p.replicas[0]):
                    state = zk.apply(state, A.ElectLeaders(t, i, A.PREFERRED)).state
                    q = state.partition(t, i)
                    w.emit("INFO", f"{who()} Changed partition {t}-{i} from OnlinePartition to OnlinePartition with "
                           f"state {lai(q)}", "state.change.logger")
                    sends(t, i, q)
                    w.emit("INFO", f"[Controller id={ctl}] Partition {t}-{i} completed preferred replica leader "
                           f"election. New leader is {q.leader}", "kafka.controller.KafkaController")
        if rounds % 5 == 0:  # a controller failover: the next controller logs under the next epoch
            state = zk.apply(state, A.ControllerFailover()).state
            ctl = ctl % 6 + 1
            w.emit("INFO", f"[Controller id={ctl}] Controller {ctl} became the active controller", "kafka.controller.KafkaController")
        w.noise(10)
    return "\n".join(w.lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, help="default: 100,000 (with --quick 2,000)")
    parser.add_argument("--topics", type=int, help="default: 30 (with --quick 2)")
    parser.add_argument("--out", type=Path, help="also write the log here")
    parser.add_argument("--quick", action="store_true", help="2,000 lines over 2 topics")
    args = parser.parse_args(argv)
    args.lines = args.lines or (2_000 if args.quick else 100_000)
    args.topics = args.topics or (2 if args.quick else 30)
    t0 = time.perf_counter()
    text = generate(args.lines, args.topics)
    gen = time.perf_counter() - t0
    if args.out:
        args.out.write_text(text)
    t0, c0 = time.perf_counter(), time.process_time()
    result = validate_text(text, "kafka-log", "zk")
    took, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"log: {result.total_lines:,} lines, {args.topics * 8} partitions, {result.observations:,} observations, "
          f"{len(result.ignored):,} lines of other loggers (generated in {gen:.1f} s)")
    print(f"verdict: {result.verdict} ({result.states_searched:,} states searched)"
          + (f" — line {result.failed.line}: {result.reason}" if result.failed is not None else ""))
    print(f"validate-trace: {took:.1f} s wall, {cpu:.1f} s CPU ({result.total_lines / cpu:,.0f} lines per CPU second; "
          f"one process, so 2 cores do not help); target < 30 s on 2 cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
