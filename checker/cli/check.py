"""`kreassign check`: explore every profile's bounded configuration and report each property.

With no arguments it runs the default suite (every profile at small bounds) and prints
a properties × profiles matrix, then one summary line. Exit codes (kreassign/errors.py):
0 nothing unexpected, 1 an unexpected violation, 2 bad usage or configuration (including
bounds whose estimated state space is absurd, unless --force), 3 Spark / an implementation
under test failed, 4 a run limit (--max-states, --max-memory) stopped a search before it
was complete, 130 interrupted (what was explored so far is printed, marked incomplete).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from kreassign.checker.check.junit import junit_xml
from kreassign.checker.check.progress import (
    CI_INTERVAL,
    Discard,
    ProgressReporter,
    shares_stdout,
    summary_line,
)
from kreassign.checker.check.run import (
    FINDING_MISSING,
    HOLDS,
    KNOWN,
    NOT_CHECKED,
    VIOLATED,
    CheckResult,
    check_model,
)
from kreassign.checker.check.search import Search
from kreassign.checker.check.suite import DEFAULT_SUITE, LARGER_SUITE, QUOTA_SUITE, result_names, run_names
from kreassign.checker.config.bound_flags import add_bound_arguments, bound_overrides
from kreassign.checker.config.bounds import Bounds, ConfigError, bounds_from_mapping, load_config
from kreassign.checker.config.engine_options import EngineOptions
from kreassign.checker.config.limits import RunLimits, parse_size, refuse_absurd
from kreassign.checker.explore.bfs import Interrupted
from kreassign.checker.models.registry import QUOTA, REASSIGNMENT, build_model, model_kind
from tabulate import tabulate

from kreassign.errors import FINDING, INCONCLUSIVE, INTERRUPTED, OK, InfraError, KreassignError, UsageError
from kreassign.interrupts import reliable_ctrl_c
from kreassign.outputs import STDOUT, check_outputs, write_output


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", action="append", dest="profiles", metavar="P",
                        help="profile to check (repeatable; default: the whole suite)")
    parser.add_argument("--config", help="TOML file with [bounds] (and optionally [profiles] names)")
    parser.add_argument("--engine", choices=["embedded", "spark"], default="embedded",
                        help="embedded BFS (default) or Apache Spark")
    parser.add_argument("--master", help="Spark master URL (default: spark-submit's --master, spark-defaults.conf's "
                        "spark.master, else local[*])")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="Spark setting (repeatable); wins over spark-submit's and spark-defaults.conf")
    parser.add_argument("--spark-timeout", type=float, metavar="SECONDS",
                        help="Spark: give up when no executor is granted for this long (default 120)")
    parser.add_argument("--spark-layout", choices=["auto", "resident", "levels"], default="auto",
                        help="Spark: resident tasks (one per bucket for the whole search) or one job per level; "
                             "auto (default): resident unless the run needs levels (liveness, checkpoints; docs/spark.md)")
    parser.add_argument("--resume", metavar="DIR", help="Spark: continue an interrupted run from its checkpoint directory")
    parser.add_argument("--checkpoint", metavar="DIR", help="Spark: checkpoint every BFS level to DIR")
    parser.add_argument("--impl", metavar="SPEC",
                        help="check another implementation in lockstep with the reference: module:Class or 'exec:COMMAND'")
    parser.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="machine-readable results on stdout, or written to FILE (then stdout has the text report); "
                             "use FILE under spark-submit, which mixes the driver's stderr into its stdout (docs/ci.md)")
    parser.add_argument("--out", default="kreassign-out", help="directory for counterexample files (default: %(default)s)")
    parser.add_argument("--no-liveness", action="store_true", help="skip the graph (liveness) properties")
    parser.add_argument("--no-minimize", action="store_true", help="keep BFS counterexamples as found")
    parser.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report (docs/report.md)")
    parser.add_argument("--symmetry", action="store_true",
                        help="explore broker-renaming orbits (profiles zk and kip455; use --targets permutations)")
    parser.add_argument("--max-states", type=int, metavar="N",
                        help="stop each search after N distinct states (the result is marked incomplete, exit 4)")
    parser.add_argument("--max-memory", metavar="SIZE",
                        help="stop a search when this process uses more than SIZE memory, e.g. 4G (incomplete, exit 4)")
    parser.add_argument("--force", action="store_true",
                        help="explore even when the estimated state space of the bounds is absurd")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="processes tabulating the reference on the packed path (default: every core; the kraft "
                             "kernels answer in one process; docs/performance.md)")
    parser.add_argument("--no-fast", action="store_true",
                        help="explore with the object engine instead of the packed path (same graph, slower)")
    parser.add_argument("--no-kernel", action="store_true",
                        help="on the packed path, tabulate kraft through the reference model instead of its kernel "
                             "(same graph, slower; docs/performance.md)")
    parser.add_argument("--subsume", action="store_true",
                        help="with --no-liveness: skip states whose request budgets another state dominates "
                             "(fewer states, same verdicts; docs/performance.md)")
    parser.add_argument("--compositional", action="store_true",
                        help="check each partition against the shared brokers instead of the whole cluster "
                             "(same verdicts, checked conditions; docs/performance.md)")
    parser.add_argument("--junit", metavar="FILE",
                        help="also write the verdicts as JUnit XML (one test case per profile x property)")
    parser.add_argument("--progress-interval", type=float, default=CI_INTERVAL, metavar="SECONDS",
                        help="seconds between progress lines when stderr is not a terminal (default: %(default)g)")
    add_bound_arguments(parser)
    from kreassign.checker.oracle.kafka_flags import add_arguments as add_kafka_arguments

    add_kafka_arguments(parser)  # --kafka-classpath, --metadata-version (docs/kafka.md)
    parser.set_defaults(func=run)


def _plan(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """(profile, bounds) pairs to run."""
    overrides = bound_overrides(args)
    base = None
    names = args.profiles
    if args.config:
        base, config_names = load_config(args.config)
        names = names or config_names
    if args.impl and args.engine == "spark":
        raise ConfigError("--impl runs the implementation in this process's lockstep; it cannot run on Spark")
    if args.impl and not names:
        names = ["kraft"]  # an implementation is checked against one profile; kraft unless told otherwise
    whole_suite = not names and not overrides
    names = names or list(DEFAULT_SUITE) + list(QUOTA_SUITE)
    plan = []
    for name in names:
        kind = model_kind(name)
        if kind == REASSIGNMENT:
            start = base or DEFAULT_SUITE.get(name, Bounds())
            plan.append((name, bounds_from_mapping(overrides, base=start, where="flags") if overrides else start))
        else:  # kip599 / kip599-draft: None ("small"); the handlers profiles: [quota_handlers] of --config
            from kreassign.checker.models.quota import quota_bounds_for_check

            plan.append((name, quota_bounds_for_check(name, args.config)))
    if whole_suite:
        plan += list(LARGER_SUITE)
    return plan


def _explorer(args: argparse.Namespace, limits: RunLimits) -> Search:
    """The engine (checker/check/search.py): the embedded one, or Spark (checker/spark/) with the run's options."""
    options = limits.engine_options()
    if args.engine != "spark":
        return Search(limits=options)
    try:
        from kreassign.checker.spark.engine import spark_explorer
        from kreassign.checker.spark.options import SparkOptions
        from kreassign.checker.spark.session import jvm_log_file, spark_conf
    except ModuleNotFoundError as e:
        raise InfraError(f"--engine spark: cannot import {e.name} (pip install 'kreassign[spark]')") from None
    try:
        spark = SparkOptions(master=args.master, conf=spark_conf(args.conf), timeout=args.spark_timeout,
                             checkpoint_dir=args.checkpoint, resume_dir=args.resume,
                             packed=not args.no_fast, layout=args.spark_layout, jvm_stderr=jvm_log_file() if _json_alone(args) else None)
        return Search(engine=spark_explorer(options=spark), limits=options)
    except ValueError as e:
        raise UsageError(f"--resume/--checkpoint: {e}") from None


def _factory(kind: str, args: argparse.Namespace):
    from kreassign.checker.oracle.kafka_flags import check_factory as kafka_factory

    kafka = kafka_factory(args, kind)  # --impl kafka, or the kraft reference at --metadata-version
    if kafka is not None:
        return kafka
    if args.impl:
        from kreassign.checker.oracle.differential import differential_factory
        from kreassign.checker.oracle.kafka_flags import impl_timeout

        return differential_factory(args.impl, impl_timeout(args))
    return lambda p, b: build_model(kind, p, b)


def engine_options(args: argparse.Namespace) -> EngineOptions:
    """The engine flags as one value (checked here: --workers at least 1, --compositional on the packed path)."""
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers: must be at least 1, got {args.workers}")
    if args.compositional and (args.engine == "spark" or args.no_fast or args.symmetry or args.impl):
        raise UsageError("--compositional: runs on the embedded packed path only "
                         "(not with --engine spark, --no-fast, --symmetry or --impl)")
    return EngineOptions(fast=not args.no_fast, kernel=not args.no_kernel, workers=args.workers,
                         subsume=args.subsume, compositional=args.compositional)


def run_one(profile: str, bounds: Any, args: argparse.Namespace, explorer: Any = None,
            progress: Any = None, options: EngineOptions | None = None, run: str | None = None) -> CheckResult:
    kind = model_kind(profile)
    if kind == QUOTA and bounds is None:
        from kreassign.checker.models.quota import default_quota_bounds

        bounds = default_quota_bounds(profile)
    return check_model(
        profile,
        bounds,
        factory=_factory(kind, args),
        explorer=explorer if explorer is not None else _explorer(args, RunLimits()),
        engine=args.engine,
        model_kind=kind,
        out_dir=args.out,
        liveness_check=not args.no_liveness,
        minimize_counterexamples=not args.no_minimize,
        progress=progress,
        symmetry=args.symmetry,
        engine_options=options if options is not None else engine_options(args),
        run=run,
    )


def _cell(v) -> str:
    if v.status == HOLDS:
        return "holds"
    if v.status == KNOWN:
        return f"known ({v.length} steps)"
    if v.status == NOT_CHECKED:
        return "-"
    if v.status == FINDING_MISSING:  # a declared finding no longer occurs (spec/findings.py)
        return f"FINDING MISSING ({', '.join(v.missing)})"
    return f"VIOLATED ({v.length} steps)"


def report(results: list[CheckResult]) -> str:
    names: list[str] = []
    for r in results:
        for n in r.properties:
            if n not in names:
                names.append(n)
    rows = [[n] + [_cell(r.properties[n]) if n in r.properties else "" for r in results] for n in names]
    runs = result_names(results)  # unique per run (checker/check/suite.py), as in --json and --junit
    table = tabulate(rows, headers=["property"] + runs, tablefmt="simple")
    summary = tabulate(
        [[run, f"{r.states:,}", f"{r.transitions:,}", r.depth, f"{r.seconds:.2f}"] for r, run in zip(results, runs)],
        headers=["run", "states", "transitions", "depth", "seconds"],
        tablefmt="simple",
    )
    lines = [table, "", summary]
    for r, run in zip(results, runs):
        if r.reduction is not None:  # the counts above are the projections', not the whole cluster's
            parts = "; ".join(f"partitions {','.join(map(str, p['partitions']))}: {p['states']:,} states"
                              for p in r.reduction["projections"])
            lines.append(f"{run}: {r.reduction['mode']} — one search per distinct partition ({parts})")
    files = [(run, n, v) for r, run in zip(results, runs) for n, v in r.properties.items()
             if v.status in (VIOLATED, KNOWN) and v.counterexample]
    if files:
        lines.append("")
        lines += [f"{'VIOLATED' if v.status == VIOLATED else 'known'} {run} {n}: {v.counterexample}"
                  for run, n, v in files]
    return "\n".join(lines)


def _limits(args: argparse.Namespace) -> RunLimits:
    memory = parse_size(args.max_memory) if args.max_memory is not None else None
    if args.progress_interval <= 0:
        raise UsageError(f"--progress-interval: must be positive, got {args.progress_interval:g}")
    return RunLimits(args.max_states, memory)


def _check_one(profile: str, bounds: Any, args: argparse.Namespace, explorer: Search,
               options: EngineOptions, run: str | None = None) -> CheckResult:
    """One profile, with its failures mapped onto the exit-code contract."""
    reporter = explorer.reporter = ProgressReporter(run or profile, interval=args.progress_interval,
                                                    stream=Discard() if _json_alone(args) else None)
    try:
        result = run_one(profile, bounds, args, explorer, reporter, options, run=run)
    except KreassignError:
        raise
    except ModuleNotFoundError as e:
        raise InfraError(f"{profile}: cannot import {e.name}: {e}") from None
    except ValueError as e:  # e.g. --symmetry on a profile that is not symmetric
        raise UsageError(f"{profile}: {e}") from None
    except RuntimeError as e:  # Spark: a job that failed for good, Java missing (PySpark raises RuntimeErrors)
        if args.engine != "spark":
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InfraError(f"{profile}: Spark failed: {first}") from None
    finally:
        reporter.finish()
    result.stopped = getattr(explorer.last, "stopped", None) if explorer.last is not None else None
    return result


def _json_alone(args: argparse.Namespace) -> bool:
    """Must standard error stay silent so that standard output holds the JSON alone? With `--json` to stdout when
    stderr is the same pipe or file (spark-submit merges the Python driver's stderr into its stdout; `2>&1`):
    no progress and no summary line there then (the JSON carries the summary). On a terminal both still show."""
    return args.json == STDOUT and shares_stdout(sys.stderr)


def _lost_executors(results: list[CheckResult]) -> list[str]:
    """One line per run during which Spark lost executors (it recomputed what they held, or the resident search
    started again: the answers stand), and one per run whose resident search had to start again."""
    lines = []
    for r in results:
        spark = getattr(r, "spark", None) or {}
        lost, restarts = spark.get("executors_lost") or [], spark.get("restarts") or []
        resident = spark.get("layout") == "resident"
        if lost:
            which = "; ".join(f"{e['id']} on {e['host']}: {e['reason']}" for e in lost)
            redone = ("the resident search started again without them" if resident
                      else "Spark recomputed their work from its lineage")
            lines.append(f"{r.name}: Spark lost {len(lost)} executor{'s' if len(lost) != 1 else ''} during the search "
                         f"({which}); {redone}, the results above are complete")
        if restarts:
            lines.append(f"{r.name}: the resident search started again {len(restarts)} time"
                         f"{'s' if len(restarts) != 1 else ''} after a failed task (last: {restarts[-1][:200]}); "
                         "the results above are those of the run that finished")
    return lines


def _interrupted_report(profile: str, partial: Any, stage: str, reporter: ProgressReporter | None = None) -> str:
    """What an interrupted profile had explored, marked incomplete."""
    if partial is None and reporter is not None and reporter.last is not None:
        states, depth, _ = reporter.last  # an engine that could not hand back its partial result
        return (f"interrupted: {profile} {stage} after at least {states:,} states, depth {depth} (incomplete); "
                "verdicts so far unknown")
    if partial is None:
        return f"interrupted: {profile} {stage}; nothing explored yet (incomplete)"
    found = sorted(getattr(partial, "violations", {}) or {})
    findings = [n.replace("::", " / ") for n in found if "::" in n]  # engine names "property::finding"
    unexpected = [n for n in found if "::" not in n]
    line = (f"interrupted: {profile} {stage} after {partial.states:,} states, {partial.transitions:,} transitions, "
            f"depth {partial.depth} (incomplete)")
    line += f"; unexpected violations so far: {', '.join(unexpected) or 'none'}"
    return line + (f"; known findings so far: {', '.join(findings)}" if findings else "")


def _kraft_release(results: list[CheckResult], args: argparse.Namespace) -> str | None:
    """`Kafka 4.4.0, metadata.version 4.4-IV2, ELR on` for the summary line, when a kraft profile ran."""
    from kreassign.spec import kafka_releases

    kraft = [r.bounds for r in results if r.profile == "kraft" and isinstance(r.bounds, dict) and r.bounds.get("kafka_version")]
    if not kraft:
        return None
    version, elr = kraft[0]["kafka_version"], kraft[0].get("elr")
    mv = getattr(args, "metadata_version", None) or kafka_releases.release(version).latest_production
    return f"Kafka {version}, metadata.version {mv}" + (f", ELR {elr}" if elr else "")


def _exit_code(results: list[CheckResult]) -> int:
    if any(r.unexpected for r in results):
        return FINDING
    if any(not r.complete and getattr(r, "stopped", None) for r in results):
        return INCONCLUSIVE
    return OK


def _result_json(r: CheckResult) -> dict[str, Any]:
    d = r.to_json()
    d["complete"] = r.complete
    d["stopped"] = getattr(r, "stopped", None)
    if getattr(r, "spark", None):
        d["spark"] = r.spark  # master, application, executors registered and used, buckets
    return d


def _check_outputs(args: argparse.Namespace) -> None:
    """Every output by the rule of kreassign/outputs.py (docs/outputs.md), before any work: --html and --junit
    only to regular files or new paths, never over --config or each other; --out and a local --checkpoint
    writable directories (a checkpoint URI such as hdfs://... is Spark's to check; --resume may be the same)."""
    import os
    from urllib.parse import urlparse

    checkpoint = args.checkpoint
    if checkpoint and len(urlparse(checkpoint).scheme) > 1:
        checkpoint = None if urlparse(checkpoint).scheme != "file" else urlparse(checkpoint).path
    check_outputs({"--html": args.html, "--junit": args.junit, "--json": args.json}, {"--config": args.config},
                  stdout=("--json",), dirs={"--out": args.out, "--checkpoint": os.path.expanduser(checkpoint) if checkpoint else None})


def run(args: argparse.Namespace) -> int:
    with reliable_ctrl_c():  # a Ctrl-C landing in a __del__ or gc callback is re-delivered, not lost
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    options = engine_options(args)  # the engine flags, passed down as a value (checker/config/engine_options.py)
    limits = _limits(args)
    _check_outputs(args)
    try:
        plan = _plan(args)
    except ValueError as e:  # ConfigError (already a UsageError) or an unknown profile name
        raise UsageError(str(e)) from None
    for profile, bounds in plan:  # judge every profile's bounds before exploring any
        if isinstance(bounds, Bounds):
            # --compositional explores one-partition projections (at most one per partition)
            searched = replace(bounds, partitions=1, initial=None) if args.compositional else bounds
            refuse_absurd(profile, searched, force=args.force)
    explorer = _explorer(args, limits)
    results: list[CheckResult] = []
    interrupted = None
    for (profile, bounds), name in zip(plan, run_names(plan)):  # unique names: the suite runs kraft twice
        try:
            results.append(_check_one(profile, bounds, args, explorer, options, name))
            results[-1].spark = (getattr(explorer.engine, "runs", None) or [None])[-1]  # where Spark ran it
        except KeyboardInterrupt as e:
            if isinstance(e, Interrupted):
                interrupted = _interrupted_report(profile, e.partial, "while exploring", explorer.reporter)
            else:
                last = explorer.last
                stage = ("while checking liveness, minimizing or writing traces" if last is not None
                         else "while exploring" if explorer.reporter and explorer.reporter.last else "while starting")
                interrupted = _interrupted_report(profile, last, stage, explorer.reporter)
            break
    code = INTERRUPTED if interrupted else _exit_code(results)
    not_run = 0 if not interrupted else len(plan) - len(results)
    lost = _lost_executors(results)
    summary = summary_line(results, code, release=_kraft_release(results, args),
                           lost_executors=sum(len((getattr(r, "spark", None) or {}).get("executors_lost") or [])
                                              for r in results)) + (
        f" (interrupted: {not_run} of {len(plan)} profile(s) incomplete or not run)" if not_run else "")
    quiet = _json_alone(args)  # stderr is stdout: only the JSON goes there
    document = None
    if args.json:
        document = json.dumps({"results": [_result_json(r) for r in results],
                               "unexpected_violations": sum(len(r.unexpected) for r in results),
                               "complete": not interrupted and all(r.complete for r in results),
                               "interrupted": interrupted, "exit_code": code, "summary": summary}, indent=1)
    if args.json == STDOUT:
        print(document)
    else:  # (with --json FILE the text report still goes to stdout)
        if results:
            print(report(results))
        stopped = [f"{r.name}: incomplete, stopped by {r.stopped}" for r in results if getattr(r, "stopped", None)]
        for line in stopped + lost:
            print(line)
    if interrupted and not quiet:
        print(f"kreassign check: {interrupted}", file=sys.stderr)
    if args.json and args.json != STDOUT:
        write_output(args.json, document + "\n", "--json")
    if args.junit:
        write_output(args.junit, junit_xml(results), "--junit")
    if getattr(args, "html", None):
        from kreassign.checker.report.html import (
            check_report,  # only when asked: the report is not needed otherwise
        )
        from kreassign.checker.report.write import write_text_atomically

        write_text_atomically(args.html, check_report(results), "--html")
    if args.json == STDOUT:
        if not quiet:
            print(summary, file=sys.stderr)
    else:
        print(f"\n{summary}")
    return code


__all__ = ["DEFAULT_SUITE", "register", "replace", "run"]
