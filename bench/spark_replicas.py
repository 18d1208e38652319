"""How much the Spark executors' replicas of the packed model tabulate twice, with and without situation buckets.

    python bench/spark_replicas.py                    # kraft --brokers 5 --rf 3 --failures 2, 2 and 4 executors
    python bench/spark_replicas.py --failures 1 --executors 2
    python bench/spark_replicas.py --quick            # --brokers 3 --rf 2 --failures 1, 2 executors: a smoke run

Each executor of the packed path (checker/spark/packed_codec.py `PackedCodec`) builds its own replica of the packed model
and tabulates every situation (a partition's fields without the budget) that it meets. The state's identity
decides its bucket: with a digest of the whole state (before) the states of one situation spread over every
executor, and each tabulates it; with `PackedCodec.identities` (after: the bucketing half is the situation's
fingerprint) each situation lands on one executor. Here the task code (tasks.run_step, the code every Spark task
runs) runs in this process, one replica per simulated executor, without a JVM, so the figures are the tasks' own:
situations tabulated per replica, their sum against one replica's, and the CPU seconds of the tasks. Each mode
runs in its own process, side by side in one run; prints figures, never asserts.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import time

from tabulate import tabulate


def simulate(mode: str, executors: int, failures: int, brokers: int = 5, rf: int = 3) -> dict:
    import numpy as np
    from kreassign.checker.config.bounds import Bounds
    from kreassign.checker.models.reassign import ReassignmentModel
    from kreassign.checker.spark import packed_codec as C
    from kreassign.checker.spark import tasks as T
    from kreassign.checker.spark.recipes import model_recipe, recipe_id
    from kreassign.checker.spark.rounds import DriverValue

    if mode == "whole-state digest (before)":
        C.PackedCodec.situation_buckets = False  # (the budget bits in the bucketing half too)
    model = ReassignmentModel("kraft", Bounds(brokers=brokers, rf=rf, reassigns=2, cancels=1, targets="all",
                                              failures=failures))
    recipe = model_recipe(model, None)
    props = {p.name: p for p in model.properties()}
    job = {"recipe_id": recipe_id(recipe), "codec": "packed", "buckets": executors, "seed_level": 0,
           "always": [n for n, p in props.items() if p.kind == "always"],
           "sometimes": [n for n, p in props.items() if p.kind == "sometimes"],
           "transition": [n for n, p in props.items() if p.kind == "transition"],
           "check_deadlock": False, "keep_graph": False, "keep_states": False, "save_states": False,
           "task_timings": False, "record_states": 1 << 18}
    replicas = [collections.OrderedDict() for _ in range(executors)]  # each executor's model cache
    T._MODELS = replicas[0]
    codec = T.runtime(job, recipe).codec
    init = list(model.init_states())
    encoded = [codec.encode(s) for s in init]
    hi, lo = T.split_digests(b"".join(i for i, _ in encoded))
    owner = T.digest_buckets(lo, executors)
    inputs: dict[int, list] = {b: [] for b in range(executors)}
    for j, (_, payload) in enumerate(encoded):
        level = T.Level(np.array([j], dtype=np.int64), (hi[j:j + 1], lo[j:j + 1]), codec.gather([payload]))
        inputs[int(owner[j])].append((int(owner[j]), (T.LEVEL, (0, T.states_blob(level, False)))))
    runs: dict[int, list] = {b: [] for b in range(executors)}
    cpu = [0.0] * executors
    number, keys, states = 0, None, 0
    while True:
        nxt: dict[int, list] = {b: [] for b in range(executors)}
        new, level_keys = 0, []
        for b in range(executors):
            T._MODELS = replicas[b]
            started = time.process_time()
            out = list(T.run_step(b, runs[b] + inputs[b], {**job, "level": number,
                                                           "mode": "seed" if number == 0 else "expand"}, recipe, keys))
            cpu[b] += time.process_time() - started
            runs[b] = [(t, r) for t, r in out if t == b and r[0] == T.RUN]
            for t, r in out:
                if t >= 0 and r[0] != T.RUN:
                    nxt[t].append((t, r))
                elif t < 0 and r[0] == T.STATS:
                    new += r[1]["new"]
                    level_keys.append(np.frombuffer(r[1]["keys"], dtype=np.int64))
        states += new
        keys = DriverValue(np.sort(np.concatenate(level_keys)).tobytes())
        inputs, number = nxt, number + 1
        if not new:
            break
    tabulated = [sum(len(g.done) for g in next(iter(r.values())).packed.groups) for r in replicas]
    return {"mode": mode, "executors": executors, "states": states, "tabulated": tabulated, "cpu": cpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--brokers", type=int, default=5)
    parser.add_argument("--rf", type=int, default=3)
    parser.add_argument("--failures", type=int, default=2)
    parser.add_argument("--executors", type=int, action="append", help="default: 2 and 4")
    parser.add_argument("--quick", action="store_true", help="--brokers 3 --rf 2 --failures 1, 2 executors")
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)  # internal: mode executors failures brokers rf
    args = parser.parse_args(argv)
    if args.one:
        mode, *numbers = args.one
        print(json.dumps(simulate(mode, *map(int, numbers))))
        return 0
    if args.quick:
        args.brokers, args.rf, args.failures, args.executors = 3, 2, 1, [2]
    rows = []
    modes = ["whole-state digest (before)", "situation buckets (after)"]
    single = None
    for n in [1, *(args.executors or [2, 4])]:
        for mode in (modes[1:] if n == 1 else modes):
            out = subprocess.run([sys.executable, __file__, "--one", mode, str(n), str(args.failures), str(args.brokers),
                                  str(args.rf)],
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out)
            total = sum(r["tabulated"])
            single = single or total
            rows.append([n, "one replica" if n == 1 else mode, f"{r['states']:,}", f"{total:,}",
                         " / ".join(f"{t:,}" for t in r["tabulated"]), f"{total / single:.2f}x",
                         f"{sum(r['cpu']):.1f}", " / ".join(f"{c:.1f}" for c in r["cpu"])])
    print(f"kraft --brokers {args.brokers} --rf {args.rf} --failures {args.failures}: the Spark tasks' code in process, "
          "one packed-model replica per executor")
    print(tabulate(rows, headers=["executors", "buckets", "states", "situations tabulated", "per replica",
                                  "vs one replica", "task CPU-s", "per replica"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
