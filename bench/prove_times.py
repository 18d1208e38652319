"""Per-proof times of `kreassign prove` (z3), and how the strengthening scales with the bit-width.

    python bench/prove_times.py                      # the full run: every profile, brokers 3..32
    python bench/prove_times.py --widths 4,8,16,32   # also: Houdini's cost per width and profile
    python bench/prove_times.py --profile zk --max-brokers 16
    python bench/prove_times.py --quick              # kraft, brokers 3..4, Houdini at width 4: a smoke run

Prints figures, never asserts on time (bench/ convention). Each row of the first table is
one verdict: a proof (its own base case and inductive step, or one step under the
invariant), a refutation (bounded model checking, then re-execution and replay against
the reference), or the profile's shared strengthening (`inductive_invariant`, Houdini).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time

from kreassign.checker.z3.prove import ALL_PROFILES, INVARIANT, REASSIGNMENT_PROFILES, prove
from tabulate import tabulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", action="append", dest="profiles", metavar="P")
    parser.add_argument("--max-brokers", type=int, help="default: 32 (with --quick 4)")
    parser.add_argument("--widths", help="comma-separated bit-widths to time Houdini at (default: none; --quick 4)")
    parser.add_argument("--quick", action="store_true", help="the kraft profile, brokers 3..4, Houdini at width 4")
    args = parser.parse_args(argv)
    if args.quick:
        args.profiles = args.profiles or ["kraft"]
    args.max_brokers = args.max_brokers or (4 if args.quick else 32)
    args.widths = args.widths if args.widths is not None else ("4" if args.quick else "")
    profiles = args.profiles or list(ALL_PROFILES)
    import z3

    print(f"z3 {z3.get_version_string()}, Python {platform.python_version()}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        results = prove(profiles, max_brokers=args.max_brokers, out_dir=out)
        total = time.perf_counter() - started
    rows = []
    for r in sorted(results, key=lambda r: -r.seconds):
        span = "" if r.brokers is None else f"{r.brokers[0]}..{r.brokers[1]}"
        rows.append([r.profile, r.property, r.verdict, span, f"{r.seconds:.3f}"])
    print(tabulate(rows, headers=["profile", "property", "verdict", "brokers", "seconds"]))
    per_profile = {}
    for r in results:
        per_profile.setdefault(r.profile, [0.0, 0.0])
        per_profile[r.profile][0] += r.seconds
        if r.property == INVARIANT:
            per_profile[r.profile][1] += r.seconds
    print()
    print(tabulate([[p, f"{t:.2f}", f"{h:.2f}"] for p, (t, h) in per_profile.items()],
                   headers=["profile", "seconds (all rows)", "of which strengthening"]))
    print(f"\nwhole run: {total:.1f}s for {len(results)} verdicts")
    widths = [int(w) for w in args.widths.split(",") if w.strip()]
    if widths:
        from kreassign.checker.z3.encoding import houdini
        from kreassign.checker.z3.profiles import encoding

        rows = []
        for profile in [p for p in profiles if p in REASSIGNMENT_PROFILES]:
            row = [profile]
            for w in widths:
                enc = encoding(profile, w, epochs=False, min_brokers=min(3, w))
                t0 = time.perf_counter()
                h = houdini(enc, enc.candidates(), enc.KINDS, pure_bv=True)
                row.append(f"{time.perf_counter() - t0:.2f} ({len(h.inductive)})")
            rows.append(row)
        print("\nHoudini from every candidate, seconds (conjuncts kept), per bit-width:")
        print(tabulate(rows, headers=["profile"] + [f"width {w}" for w in widths]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
