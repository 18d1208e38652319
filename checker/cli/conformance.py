"""`kreassign conformance`: scenarios drawn from the model, with faults, run on a real Kafka cluster of a
release and checked step by step against the reference (docs/conformance.md).

    kreassign conformance --scenarios 20                       # the newest release, KRaft, every fault
    kreassign conformance --kafka-version 3.9.2 --mode zk --scenarios 20 --seed 7 --json
    kreassign conformance --faults kill,pause --junit c.xml --html c.html --out runs/
    kreassign conformance --replay runs/conformance-3.minimized.json

Progress lines and the summary go to stderr (one line per scenario, also in CI logs); `--json` prints the whole
result on stdout. Exit codes (kreassign/errors.py): 0 every scenario agrees with the reference, 1 a divergence
(the scenario minimized and printed, replayable), 2 a bad flag or scenario file (named), 3 a cluster that cannot
start or a scenario the cluster could not run, 130 Ctrl-C (what was run so far is reported; every JVM is gone).
"""

from __future__ import annotations

import argparse
import json

from kreassign.errors import INTERRUPTED, UsageError
from kreassign.flag_values import integer, say
from kreassign.interrupts import reliable_ctrl_c


def register(parser: argparse.ArgumentParser) -> None:
    from kreassign.checker.scenarios.generate import FAULTS

    parser.add_argument("--kafka-version", metavar="V",
                        help="the release (default: the newest supported; 3.9.x for --mode zk)")
    parser.add_argument("--mode", default="kraft", metavar="kraft|zk", help="KRaft (default) or ZooKeeper (3.9)")
    parser.add_argument("--scenarios", type=integer("--scenarios"), default=20, metavar="N",
                        help="how many scenarios to draw (20)")
    parser.add_argument("--seed", type=integer("--seed"), default=0, metavar="S",
                        help="the first scenario's seed; the n-th uses S+n (0)")
    parser.add_argument("--faults", default=",".join(FAULTS), metavar="LIST",
                        help=f"the faults scenarios may inject, comma-separated, among {', '.join(FAULTS)} "
                        "(default: all); 'none' for requests only")
    parser.add_argument("--brokers", type=integer("--brokers"), default=4, metavar="N", help="brokers: 3 to 6 (4)")
    parser.add_argument("--length", type=integer("--length"), default=7, metavar="N",
                        help="driven actions per scenario before the closing restarts (7)")
    parser.add_argument("--minimize-runs", type=integer("--minimize-runs"), default=6, metavar="N",
                        help="cluster runs to spend minimizing each divergent scenario (6; 0: none)")
    parser.add_argument("--replay", action="append", default=[], metavar="FILE",
                        help="run these scenario files (from --out, or a divergence's) instead of drawing "
                        "(repeatable; all of one release and mode)")
    parser.add_argument("--out", metavar="DIR", help="write each scenario, its run and any minimized scenario here")
    parser.add_argument("--json", action="store_true", help="the result as JSON on stdout")
    parser.add_argument("--junit", metavar="FILE", help="JUnit XML: one test case per scenario")
    parser.add_argument("--html", metavar="FILE", help="one self-contained HTML report")
    parser.set_defaults(func=run)


def options_from_args(args: argparse.Namespace, scenarios: list) -> object:
    """ConformanceOptions from the flags (or from the replayed files); a bad value names its flag."""
    from kreassign.checker.conformance.options import ConformanceOptions
    from kreassign.checker.implementations.kafka import releases
    from kreassign.checker.scenarios.generate import DEFAULT_VERSIONS
    from kreassign.spec import kafka_releases

    faults = tuple(f.strip() for f in args.faults.split(",") if f.strip() and f.strip() != "none")
    if scenarios:
        first = scenarios[0]
        for path, s in zip(args.replay, scenarios):
            if (s.kafka_version, s.mode, s.brokers) != (first.kafka_version, first.mode, first.brokers):
                raise UsageError(f"--replay {path}: Kafka {s.kafka_version} ({s.mode}, {s.brokers} brokers), but "
                                 f"{args.replay[0]} is Kafka {first.kafka_version} ({first.mode}, {first.brokers} "
                                 "brokers): replay one release and mode at a time")
        version, mode, brokers = first.kafka_version, first.mode, first.brokers
    else:
        mode = args.mode
        if mode not in ("kraft", "zk"):
            raise UsageError(f"--mode: kraft or zk, not {mode!r}")
        version = releases.parse_version(args.kafka_version) if args.kafka_version else \
            DEFAULT_VERSIONS.get(mode, kafka_releases.NEWEST)
        brokers = args.brokers
        if mode == "zk" and not version.startswith("3."):
            raise UsageError(f"--kafka-version: ZooKeeper mode ends with Kafka 3.9, not {version}")
    try:
        return ConformanceOptions(kafka_version=version, mode=mode, scenarios=len(scenarios) or args.scenarios,
                                  seed=args.seed, faults=faults, brokers=brokers, length=args.length,
                                  minimize_runs=args.minimize_runs)
    except ValueError as e:
        field = str(e).split(":", 1)[0].replace("_", "-")
        raise UsageError(f"--{field}: {str(e).split(': ', 1)[1]}") from None


def checks_for(mode: str) -> tuple:
    """The extra checks after each scenario: which brokers hold its logs on disk (no stray, none missing), and
    its records in the metadata log (KRaft, dumped with Kafka's own dump-log tool) or its lines in the
    controller's and state-change logs (ZooKeeper), validated against the profile by validate-trace."""
    from kreassign.checker.scenarios.log_dirs import check_log_dirs

    def log_dirs(cluster, scenario, run):
        return check_log_dirs(cluster, scenario, run.steps[-1].get("expected") if run.steps else None)

    if mode == "zk":
        from kreassign.checker.scenarios.zk_logs import validate_zk_logs

        def controller_logs(cluster, scenario, _run):
            return validate_zk_logs(cluster, scenario)

        return (controller_logs, log_dirs)
    from kreassign.checker.scenarios.metadata_log import dump_metadata_log, validate_metadata_log

    def metadata_log(cluster, scenario, run):
        text = dump_metadata_log(cluster)
        found = validate_metadata_log(text, scenario, run)
        lines = text.splitlines()
        for d in found:  # the records around the one refused, so that a divergence can be read without its cluster
            if isinstance(d.get("line"), int):
                d["excerpt"] = lines[max(0, d["line"] - 40):d["line"] + 5]
        return found

    return (metadata_log, log_dirs)


def run(args: argparse.Namespace) -> int:
    from kreassign.checker.conformance.campaign import Campaign
    from kreassign.checker.conformance.outputs import html_report, junit_xml
    from kreassign.checker.report.write import write_text_atomically
    from kreassign.checker.scenarios.format import read_scenario

    from kreassign.outputs import check_outputs

    # every output by the rule of kreassign/outputs.py (docs/outputs.md), before any cluster starts
    check_outputs({"--junit": args.junit, "--html": args.html}, {"--replay": args.replay}, dirs={"--out": args.out})
    scenarios = [read_scenario(p) for p in args.replay]
    options = options_from_args(args, scenarios)
    o = options
    say(f"conformance: {len(scenarios) or o.scenarios} scenario(s) on Kafka {o.kafka_version} ({o.mode}), "
            f"faults {', '.join(o.faults) or 'none'}, {o.brokers} brokers, seed {o.seed}")
    campaign = Campaign(options, log=say, checks=checks_for(o.mode), out_dir=args.out)
    with reliable_ctrl_c():
        result = campaign.run(scenarios or None)
    t = result.totals()
    faults = ", ".join(f"{k} {v}" for k, v in t["faults"].items()) or "none"
    known = "".join(f", {n} show {issue}" for issue, n in t["known_kafka_bugs"].items())
    say(f"conformance: {t['scenarios']} scenarios on Kafka {o.kafka_version} ({o.mode}): {t['agree']} agree, "
            f"{t['diverge']} diverge{known}, {t['errors']} could not run; {t['steps']} steps; faults {faults}; "
            f"{t['seconds']} s ({t['scenarios_per_minute']} scenarios/min, {t['cluster_starts']} cluster start(s))"
            + (" -- interrupted" if result.stopped else ""))
    for out in result.outcomes:
        if out.verdict == "diverges":
            m = out.minimized
            smaller = f"; minimized to {len(m.scenario.steps)} steps in {m.runs} runs" if m else ""
            where = f" ({args.out}/{out.scenario.topic}.scenario.json)" if args.out else " (--json has it)"
            say(f"conformance: DIVERGES {out.scenario.topic}{where}{smaller}")
    if args.json:
        print(json.dumps(result.to_json(), indent=1), flush=True)
    if args.junit:
        write_text_atomically(args.junit, junit_xml(result), "--junit")
    if args.html:
        write_text_atomically(args.html, html_report(result), "--html")
    return INTERRUPTED if result.stopped else result.exit_code


__all__ = ["checks_for", "options_from_args", "register", "run"]
