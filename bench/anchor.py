"""Benchmark the embedded BFS on the TLA+ anchor against TLC's figures (prints, never asserts).

    python bench/anchor.py                       # every configuration, as a table
    python bench/anchor.py --config N6_fail --json
    python bench/anchor.py --quick               # N4_nofail and N4_fail only: a smoke run

Each configuration is explored twice: once for the time, once under tracemalloc for the
peak memory (numpy reports its buffers to tracemalloc), so tracing does not slow the
timed run. TLC's figures are those of shared/anchor/README.md (TLC 2.20, one worker, on
a 2-core machine like ours).
"""

from __future__ import annotations

import argparse
import json
import sys
import tracemalloc
from typing import NamedTuple

from anchor_model import CONFIGS, anchor_model
from kreassign.checker.explore.bfs import ExploreResult, explore
from tabulate import tabulate


class TlcRun(NamedTuple):
    distinct: int
    generated: int  # TLC's "states generated" = transitions + 1
    depth: int
    seconds: float  # wall time, one worker (midpoint where the README gives a range)


TLC = {
    "N4_nofail": TlcRun(336, 1_849, 11, 1.3),
    "N5_nofail": TlcRun(3_000, 18_961, 13, 1.5),
    "N6_nofail": TlcRun(15_120, 101_641, 14, 2.5),
    "N4_fail": TlcRun(1_992, 15_649, 11, 1.5),
    "N5_fail": TlcRun(32_910, 313_201, 13, 1.75),
    "N6_fail": TlcRun(314_640, 3_412_441, 15, 7.7),
    "N7_fail": TlcRun(2_176_440, 26_221_441, 16, 39.0),
}


def run(config: str) -> ExploreResult:
    return explore(anchor_model(config), check_deadlock=True)


def peak_bytes(config: str) -> int:
    """Peak traced memory of one exploration."""
    tracemalloc.start()
    try:
        run(config)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def same_as_tlc(config: str, result: ExploreResult) -> bool:
    tlc = TLC[config]
    return (result.states, result.transitions + 1, result.depth) == (tlc.distinct, tlc.generated, tlc.depth)


def table_row(config: str) -> list[object]:
    result = run(config)
    tlc = TLC[config]
    return [
        config,
        f"{result.states:,}",
        f"{result.transitions:,}",
        result.depth,
        "yes" if same_as_tlc(config, result) else "NO",
        f"{result.seconds:.2f}",
        f"{result.states / result.seconds:,.0f}",
        f"{peak_bytes(config) / result.states:.0f}",
        f"{tlc.seconds:g}",
        f"{tlc.seconds / result.seconds:.1f}x",
    ]


HEADERS = ["config", "distinct", "transitions", "depth", "= TLC", "seconds", "states/s", "bytes/state",
           "TLC s", "TLC s / ours"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=list(CONFIGS), help="one configuration (default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per configuration")
    parser.add_argument("--quick", action="store_true", help="the two smallest configurations, N4_nofail and N4_fail")
    args = parser.parse_args(argv)
    configs = [args.config] if args.config else ["N4_nofail", "N4_fail"] if args.quick else list(CONFIGS)
    if args.json:
        for config in configs:
            r = run(config)
            print(json.dumps({"config": config, "distinct": r.states, "transitions": r.transitions,
                              "depth": r.depth, "seconds": round(r.seconds, 3)}))
    else:
        print(tabulate([table_row(c) for c in configs], headers=HEADERS, stralign="right"))
        print("TLC's times for the small configurations are mostly JVM start-up (shared/anchor/README.md).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
