"""`kreassign prove`: z3 proofs of the set-level properties for every cluster size, and quota bounds.

Prints a table of property, profile, cluster sizes, verdict (proved / refuted with the
counterexample file / unknown) and seconds, or `--json`, then one summary line in the form
`kreassign check` ends with (`summary_line`):

    12 properties proved, 26 refuted as declared findings, 0 unexpected, 5 unknown — exit 0

Each verdict is classified against spec/findings.py as `check` classifies a violation
(checker/z3/results.py): a refutation is a declared finding when that finding's signature
matches its counterexample, and is unexpected otherwise; a proof of a property with a
finding declared within the proved sizes is a finding missing (which would mean the
encoding or the declaration is wrong). Exit codes (kreassign/errors.py): 0 when every
refutation is a declared finding of its profile (at the encoded release, for kraft) and no
finding is missing, 1 otherwise (each one is named), 2 for usage errors, 130 when
interrupted (Ctrl-C reaches Python even while z3 solves; see `_interruptible`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time

from kreassign.checker.z3.prove import ALL_PROFILES, PROVED, REFUTED, prove
from kreassign.checker.z3.reassign import TARGET_MODES
from kreassign.checker.z3.results import FINDING_MISSING, INVARIANT, KNOWN, VIOLATED, ProofResult
from kreassign.spec.reassign_properties import PROPERTIES as REASSIGN_PROPERTIES
from tabulate import tabulate

from kreassign.errors import FINDING, OK, UsageError
from kreassign.interrupts import reliable_ctrl_c
from kreassign.outputs import check_out_dir

#: widest encoding: broker counts up to this (counters are 8 bits wide)
MAX_WIDTH = 64


def _quota_property_names() -> list[str]:
    from kreassign.checker.z3.quota import QUOTA_PROPERTY_NAMES

    return list(QUOTA_PROPERTY_NAMES)


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", action="append", dest="profiles", metavar="P",
                        help=f"profile to prove (repeatable; default: all of {', '.join(ALL_PROFILES)})")
    parser.add_argument("--max-brokers", type=int, default=32, metavar="N",
                        help="prove for every cluster of min..N brokers (default: %(default)s)")
    parser.add_argument("--min-brokers", type=int, default=3, metavar="N",
                        help="smallest cluster size covered (default: %(default)s)")
    parser.add_argument("--property", action="append", dest="properties", metavar="NAME",
                        help="property to prove (repeatable; default: all)")
    parser.add_argument("--targets", choices=TARGET_MODES, default="rf",
                        help="reassignment targets: 'rf' keeps the initial replication factor, as the explorer's "
                             "bounds do (default); 'any' allows every non-empty broker set")
    parser.add_argument("--kafka-version", metavar="X.Y.Z",
                        help="the Kafka release whose rules the kraft profile's proofs encode (default: the newest, "
                             "see docs/proofs.md 'Which Kafka'); the other profiles have no release")
    parser.add_argument("--json", action="store_true", help="machine-readable results on stdout")
    parser.add_argument("--out", default="kreassign-out", metavar="DIR",
                        help="directory for counterexample files (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=run)


def _usage(message: str) -> int:
    raise UsageError(message)


@contextlib.contextmanager
def _interruptible():
    """Make Ctrl-C reach Python while z3 solves.

    z3 installs its own SIGINT handler during a query and turns Ctrl-C into an "unknown"
    verdict, so an interrupted `prove` used to print every property as unknown and exit 0.
    Here z3's handler is switched off (`ctrl_c=false`); Python's handler then only sets a
    flag, which the C solver never looks at, so a watcher thread woken by the signal
    (`signal.set_wakeup_fd`) calls `Z3_interrupt`: the query returns at once and Python
    raises KeyboardInterrupt (exit 130). Main thread only (signals are delivered there).
    """
    import z3

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    z3.set_param("ctrl_c", False)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter thread after all
        os.close(read_fd)
        os.close(write_fd)
        yield
        return

    hit = []

    def watch() -> None:
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                hit.append(True)
                z3.main_ctx().interrupt()

    watcher = threading.Thread(target=watch, name="z3-ctrl-c", daemon=True)
    watcher.start()
    try:
        yield
    except Exception:  # a query cancelled by the interrupt surfaces as Z3Exception("canceled"): it is Ctrl-C
        if hit:
            raise KeyboardInterrupt from None
        raise
    else:
        if hit:  # cancelled queries came back "unknown": never report them, never exit 0
            raise KeyboardInterrupt
    finally:
        signal.set_wakeup_fd(previous)
        os.close(write_fd)  # ends the watcher (read returns b"")
        watcher.join(timeout=1)
        os.close(read_fd)
        z3.set_param("ctrl_c", True)


def summary_line(results: list[ProofResult], exit_code: int) -> str:
    """`P properties proved, K refuted as declared findings, U unexpected, N unknown[, kraft at ...] — exit E`.

    One fixed form whatever the counts, as `check`'s (checker/check/progress.py): unexpected counts the
    refutations no declared finding matches and the proofs whose declared finding is missing, exactly
    what makes the exit code 1; the strengthening rows (inductive_invariant) are not properties."""
    rows = [r for r in results if r.property != INVARIANT]
    proved = sum(r.verdict == PROVED and not r.unexpected for r in rows)
    known = sum(r.status == KNOWN for r in rows)
    unexpected = sum(r.unexpected for r in rows)
    unknown = len(rows) - proved - known - unexpected
    kraft = next((r.encodes for r in results if r.profile == "kraft" and r.encodes), None)
    return (f"{proved} properties proved, {known} refuted as declared findings, {unexpected} unexpected, "
            f"{unknown} unknown" + (f", kraft at {kraft}" if kraft else "") + f" — exit {exit_code}")


def _verdict(r: ProofResult) -> str:
    """The verdict cell: the verdict, the counterexample file, and what spec/findings.py makes of it."""
    if r.verdict == REFUTED:
        text = f"refuted ({r.counterexample})" if r.counterexample else "refuted"
        if r.status == KNOWN:
            return f"{text}  known: {', '.join(r.findings)}"
        return f"{text}  UNEXPECTED"
    if r.status == FINDING_MISSING:
        return f"{r.verdict}  FINDING MISSING ({', '.join(r.missing)})"
    return r.verdict


def _why(r: ProofResult) -> str:
    """One line naming an unexpected verdict and why it fails the run."""
    where = f" ({r.counterexample})" if r.counterexample else ""
    if r.status == VIOLATED:
        declared = [f.name for f in r.declared()]
        return (f"UNEXPECTED {r.profile} {r.property}: refuted{where}; "
                + (f"no declared finding ({', '.join(declared)}) matches the counterexample" if declared
                   else "spec/findings.py declares no finding: the profile promises it"))
    span = "" if r.brokers is None else f" for {r.brokers[0]}..{r.brokers[1]} brokers"
    return (f"FINDING MISSING {r.profile} {r.property}: proved{span}, but spec/findings.py declares "
            f"{', '.join(r.missing)} there")


def run(args: argparse.Namespace) -> int:
    profiles = args.profiles or list(ALL_PROFILES)
    for p in profiles:
        if p not in ALL_PROFILES:
            return _usage(f"--profile: unknown profile {p!r}; known: {', '.join(ALL_PROFILES)}")
    if not 1 <= args.min_brokers <= args.max_brokers <= MAX_WIDTH:
        return _usage(f"--min-brokers/--max-brokers: need 1 <= min <= max <= {MAX_WIDTH}, "
                      f"got {args.min_brokers}..{args.max_brokers}")
    if args.properties:
        known = {p.name for p in REASSIGN_PROPERTIES} | set(_quota_property_names())
        for name in args.properties:
            if name not in known:
                return _usage(f"--property: unknown property {name!r}; known: {', '.join(sorted(known))}")
    kafka_version = None
    if args.kafka_version is not None:
        from kreassign.spec.kafka_releases import parse_version

        try:
            kafka_version = parse_version(args.kafka_version)
        except ValueError as e:
            return _usage(f"--kafka-version: {e}")
        if "kraft" not in profiles:
            return _usage(f"--kafka-version: applies to the kraft profile only; --profile gives "
                          f"{', '.join(profiles)}")
    check_out_dir(args.out)
    progress = None if args.quiet or args.json else (lambda msg: print(f"[prove] {msg}", file=sys.stderr))
    started = time.perf_counter()
    import z3  # noqa: F401 - loaded by the imports above; named here so that its frames count as unsafe

    with reliable_ctrl_c("z3"), _interruptible():  # Ctrl-C is raised in our code, never inside z3's wrappers
        results = prove(profiles, max_brokers=args.max_brokers, min_brokers=args.min_brokers, targets=args.targets,
                        properties=args.properties, out_dir=args.out, progress=progress, kafka_version=kafka_version)
    total = time.perf_counter() - started
    unexpected = [r for r in results if r.unexpected]
    code = FINDING if unexpected else OK
    summary = summary_line(results, code)
    if args.json:
        print(json.dumps({"results": [r.to_json() for r in results], "seconds": round(total, 3),
                          "unexpected": [f"{r.profile}:{r.property}" for r in unexpected],
                          "exit_code": code, "summary": summary}, indent=1))
        print(summary, file=sys.stderr)
    else:
        rows = []
        for r in results:
            span = "" if r.brokers is None else (f"{r.brokers[0]}" if r.brokers[0] == r.brokers[1]
                                                 else f"{r.brokers[0]}..{r.brokers[1]}")
            rows.append([r.property, r.profile, span, _verdict(r), f"{r.seconds:.2f}", r.note])
        print(tabulate(rows, headers=["property", "profile", "brokers", "verdict", "seconds", "note"]))
        print(f"\n{len(results)} results in {total:.1f}s")
        for r in unexpected:
            print(_why(r))
        print(summary)
    return code
