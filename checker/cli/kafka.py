"""`kreassign kafka fetch|list`: Kafka's released controller jars, resolved by Maven into the cache.

    kreassign kafka fetch 4.4.0            # one release (a no-op when it is cached)
    kreassign kafka fetch --all            # every release of the matrix (docs/kafka.md)
    kreassign kafka list                   # the supported releases, and which are cached

Exit codes (kreassign/errors.py): 0 done, 2 bad usage (a version that is not a supported
release), 3 Maven missing or unable to resolve (the message gives the command to run).
"""

from __future__ import annotations

import argparse
import json
import sys

from kreassign.errors import UsageError


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kafka_command", metavar="ACTION")
    fetch = sub.add_parser("fetch", help="resolve releases with Maven into the cache",
                           description="Resolve the KRaft controller's jars of Kafka releases with Maven "
                           "(the user's own Maven configuration) into the per-user cache.")
    fetch.add_argument("versions", nargs="*", metavar="VERSION", help="releases, e.g. 4.4.0 3.9.2")
    fetch.add_argument("--all", action="store_true", help="every release of the matrix")
    fetch.add_argument("--force", action="store_true", help="resolve again even if cached")
    fetch.add_argument("--json", action="store_true", help="machine-readable output")
    fetch.set_defaults(func=run_fetch)
    lst = sub.add_parser("list", help="the supported releases and which are cached")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.set_defaults(func=run_list)
    parser.set_defaults(func=_usage(parser))


def _usage(parser: argparse.ArgumentParser):
    def run(args: argparse.Namespace) -> int:
        raise UsageError("expected an action: fetch VERSION... | fetch --all | list")

    return run


def run_fetch(args: argparse.Namespace) -> int:
    from kreassign.checker.implementations.kafka import releases

    versions = releases.requested_versions(args.versions, args.all)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    done = []
    for v in versions:
        was_cached = releases.cached(v) is not None and not args.force
        got = releases.fetch(v, force=args.force, log=log)
        done.append({"version": v, "lib": str(got.lib), "jars": len(got.jars), "was_cached": was_cached})
    if args.json:
        print(json.dumps({"releases": done}, indent=1))
    else:
        for d in done:
            print(f"Kafka {d['version']}: {d['jars']} jars in {d['lib']}" + (" (cached)" if d["was_cached"] else ""))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from kreassign.checker.implementations.kafka import releases
    from kreassign.spec import kafka_releases

    rows = []
    for r in kafka_releases.RELEASES:
        c = releases.cached(r.version)
        rows.append({"version": r.version, "cached": c is not None, "lib": str(c.lib) if c else None,
                     "metadata_versions": [r.metadata_versions[0], r.metadata_versions[-1]],
                     "elr_default": r.elr_default})
    extra = [c.version for c in releases.cached_releases() if c.version not in releases.RELEASES]
    if args.json:
        print(json.dumps({"cache": str(releases.cache_root() / "kafka"), "releases": rows,
                          "other_cached": extra}, indent=1))
        return 0
    from tabulate import tabulate

    print(tabulate([[r["version"], "yes" if r["cached"] else "no",
                     f"{r['metadata_versions'][0]} .. {r['metadata_versions'][1]}",
                     "on" if r["elr_default"] else "off"] for r in rows],
                   headers=["release", "cached", "metadata.version", "ELR for a new cluster"]))
    print(f"\ncache: {releases.cache_root() / 'kafka'}" + (f" (also cached: {', '.join(extra)})" if extra else ""))
    return 0


__all__ = ["register", "run_fetch", "run_list"]
