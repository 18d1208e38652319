"""`kreassign reassign-json`: validate and convert kafka-reassign-partitions.sh JSON (docs/reassign-json.md).

Actions: `validate` (the file checks of ReassignPartitionsCommand's `--execute`, and
with `--state` its cluster checks), `normalize` (what Kafka's formatAsReassignmentJson
writes: sorted, log_dirs included), `to-request` (the request `--execute` or `--cancel`
sends), `rollback` (the JSON `--execute` tells you to save, from a kreassign `--state` or
from Kafka's own current-assignment JSON with `--current`),
`from-request` and `from-list`. `-` reads stdin. Exit 0 on success, 2 for invalid
input, a failed read, an unusable --out or bad usage, 3 when the disk fails a write
(kreassign/errors.py). Every error is one line on
stderr, ``kreassign reassign-json: <path>: <problem>``: <path> is the offending field
of FILE, ``STATE.json: <field>`` for a field of the --state file, or the file itself
when the whole file is at fault. `--out` is written by the output rule of kreassign/outputs.py
(docs/outputs.md): atomically, so an existing file is never clobbered, never over FILE, --state or
--current, a device, FIFO or socket, a symlink written through; `--out -` is standard output.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from kreassign.checker.plan.formats import CURRENT, PlanInputError, guess_format, parse_current
from kreassign.checker.plan.kafka_json import format_as_kafka, rollback_entries
from kreassign.reference.reassign_json import (
    ReassignJsonError,
    ReassignmentPlanJson,
    check_against_cluster,
    format_reassignment_json,
    from_list_response,
    from_request,
    parse_reassignment_json,
    rollback_plan,
    to_cancel_request,
    to_request,
)
from kreassign.spec.codec import DecodeError, from_json, state_from_json, to_json
from kreassign.spec.messages import AlterPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
from kreassign.spec.state import ClusterState

from kreassign.errors import USAGE, KreassignError
from kreassign.outputs import STDOUT, check_outputs, write_output

PROG = "kreassign reassign-json"
STDIN = "-"


class _Failure(Exception):
    """An error to report as `PROG: where: problem` with an exit code."""

    def __init__(self, where: str, problem: str, code: int = USAGE):  # bad input is exit 2, as everywhere
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem
        self.code = code


# -- reading -----------------------------------------------------------------------


def _label(path: str) -> str:
    return "<stdin>" if path == STDIN else path


def _read_text(path: str) -> str:
    """The text of a file (UTF-8, optional BOM) or of stdin for `-`."""
    if path == STDIN:
        stream = getattr(sys.stdin, "buffer", None)  # text only when stdin is replaced, e.g. by a StringIO
        if stream is None:
            return sys.stdin.read()
        data = stream.read()
    else:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise _Failure(path, e.strerror or str(e)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _Failure(_label(path), f"not UTF-8 text (byte {e.start})") from None


def _field_failure(path: str, field: str, problem: str, main: bool) -> _Failure:
    """Name the field; also name the file if it is auxiliary (--state) or the error concerns all of it."""
    if not field:
        return _Failure(_label(path), problem)
    return _Failure(field if main else f"{_label(path)}: {field}", problem)


def _read_plan(args: argparse.Namespace) -> ReassignmentPlanJson:
    text = _read_text(args.file)
    try:
        return parse_reassignment_json(text, allow_original_replicas=args.kip236)
    except ReassignJsonError as e:
        looks = guess_format(text)
        problem = e.problem
        if looks and looks != "a reassignment JSON":  # say which file the user handed over instead
            problem += f" (expected a reassignment JSON; this looks like {looks})"
        raise _field_failure(args.file, e.path, problem, main=True) from None
    except (ValueError, RecursionError) as e:  # an integer beyond Python's digit limit, absurd nesting
        raise _Failure(_label(args.file), f"invalid JSON: {' '.join(str(e).split())[:200]}") from None


def _read_json(path: str) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise _Failure(_label(path), f"invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise _Failure(_label(path), "invalid JSON: nested too deeply") from None
    except ValueError as e:  # an integer beyond Python's digit limit
        raise _Failure(_label(path), f"invalid JSON: {' '.join(str(e).split())[:200]}") from None


def _decode(path: str, decode: Callable[[Any], Any], main: bool) -> Any:
    """Decode a spec value (state, request, response) from a JSON file; DecodeError names the field."""
    try:
        return decode(_read_json(path))
    except DecodeError as e:
        raise _field_failure(path, e.path, e.message, main) from None


def _read_state(args: argparse.Namespace) -> ClusterState:
    try:
        return _decode(args.state, state_from_json, main=False)
    except _Failure as e:
        looks = guess_format(_read_text(args.state)) if args.state != STDIN else None
        if looks in ("a reassignment JSON", "the whole message kafka-reassign-partitions.sh --execute prints"):
            raise _Failure(e.where, f"{e.problem} (expected a kreassign cluster state JSON; this looks like "
                           f"{looks}: pass Kafka's current assignment with --current)") from None
        raise


# -- writing -----------------------------------------------------------------------


def _output_failure(out: str, e: KreassignError) -> _Failure:
    """An --out refused or failed, in this command's own format: `<path>: <problem>` (the OSError's own words
    for a failed write), exit 2, or 3 for a full or failing disk (kreassign/outputs.py)."""
    oserror = getattr(e, "oserror", None)
    problem = oserror.strerror if oserror is not None and oserror.strerror else getattr(e, "problem", str(e))
    return _Failure(out, problem, code=e.exit_code)


def _emit(args: argparse.Namespace, text: str) -> None:
    out = getattr(args, "out", None)
    if out is None or out == STDOUT:
        sys.stdout.write(text + "\n")
        return
    try:
        write_output(out, text + "\n", "--out")
    except KreassignError as e:
        raise _output_failure(out, e) from None


def _check_outputs(args: argparse.Namespace) -> None:
    """--out by the output rule (kreassign/outputs.py), before any file is read: never over FILE, --state or
    --current, never over a device, FIFO or socket; `-` is standard output."""
    out = getattr(args, "out", None)
    try:
        check_outputs({"--out": out}, {"FILE": args.file, "--state": getattr(args, "state", None),
                                       "--current": getattr(args, "current", None)}, stdout={"--out"})
    except KreassignError as e:
        raise _output_failure(out, e) from None


def _compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


# -- actions -------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _validate(args: argparse.Namespace) -> str:
    plan = _read_plan(args)
    checked = ""
    if args.state is not None:
        try:
            check_against_cluster(plan, _read_state(args))
        except ReassignJsonError as e:
            raise _field_failure(args.file, e.path, e.problem, main=True) from None
        checked = f", checked against {_label(args.state)}"
    topics = len({e.topic for e in plan.entries})
    return (
        f"{_label(args.file)}: valid reassignment JSON: "
        f"{_plural(len(plan.entries), 'partition')} in {_plural(topics, 'topic')}{checked}"
    )


def _normalize(args: argparse.Namespace) -> str:
    return format_as_kafka(_read_plan(args))


def _to_request(args: argparse.Namespace) -> str:
    plan = _read_plan(args)
    return _compact(to_json(to_cancel_request(plan) if args.cancel else to_request(plan)))


def _rollback(args: argparse.Namespace) -> str:
    plan = _read_plan(args)
    if (args.state is None) == (args.current is None):
        raise _Failure("rollback", "give the current assignment with exactly one of --current CURRENT.json "
                       "(Kafka's) or --state STATE.json (kreassign's)", code=2)
    if args.current is not None:
        try:
            current = parse_current(_read_text(args.current), _label(args.current))
            return format_as_kafka(rollback_entries(plan, current, _label(args.current)))
        except PlanInputError as e:
            raise _Failure(e.file if not e.where else f"{e.file}: {e.where}", e.problem) from None
        except ReassignJsonError as e:
            raise _field_failure(args.file, e.path, e.problem, main=True) from None
    state = _read_state(args)
    try:
        return format_reassignment_json(rollback_plan(plan, state))
    except ReassignJsonError as e:
        raise _field_failure(args.file, e.path, e.problem, main=True) from None


def _from_message(args: argparse.Namespace, cls: type, convert: Callable[[Any], ReassignmentPlanJson]) -> str:
    message = _decode(args.file, lambda data: from_json(cls, data), main=True)
    try:
        return format_reassignment_json(convert(message))
    except ReassignJsonError as e:
        raise _field_failure(args.file, e.path, e.problem, main=True) from None


def _from_request(args: argparse.Namespace) -> str:
    return _from_message(args, AlterPartitionReassignmentsRequest, from_request)


def _from_list(args: argparse.Namespace) -> str:
    return _from_message(args, ListPartitionReassignmentsResponse, from_list_response)


# -- command line ------------------------------------------------------------------------


def _add_file(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("file", metavar="FILE", help=f"{what} ('-' reads stdin)")


def _add_kip236(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kip236", action="store_true", help='accept KIP-236\'s "original_replicas" key')


def _add_out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", metavar="OUT", help="write to OUT atomically instead of stdout ('-': stdout; docs/outputs.md)")


def _add_state(p: argparse.ArgumentParser, required: bool, help_text: str) -> None:
    p.add_argument("--state", metavar="STATE.json", required=required, help=help_text)


_PLAN = "reassignment JSON file"

#: action -> (help, function producing the output text)
_ACTIONS: dict[str, tuple[str, Callable[[argparse.Namespace], str]]] = {
    "validate": ("check a reassignment JSON file; print a one-line summary", _validate),
    "normalize": ("print the canonical (Kafka-formatted) JSON", _normalize),
    "to-request": ("print the AlterPartitionReassignments request", _to_request),
    "rollback": ("print the rollback JSON: the current replicas of the partitions named", _rollback),
    "from-request": ("reassignment JSON from an AlterPartitionReassignments request", _from_request),
    "from-list": ("reassignment JSON of the targets in a ListPartitionReassignments response", _from_list),
}


def register(parser: argparse.ArgumentParser) -> None:
    """Add the `reassign-json` actions and their arguments to the subcommand's parser."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    parsers = {name: actions.add_parser(name, help=h, description=h) for name, (h, _) in _ACTIONS.items()}
    for name in ("validate", "normalize", "to-request", "rollback"):
        _add_file(parsers[name], _PLAN)
        _add_kip236(parsers[name])
    _add_file(parsers["from-request"], "AlterPartitionReassignmentsRequest JSON (spec.codec form)")
    _add_file(parsers["from-list"], "ListPartitionReassignmentsResponse JSON (spec.codec form)")
    _add_state(
        parsers["validate"], False, "also check topics, partitions and brokers against this cluster state"
    )
    _add_state(parsers["rollback"], False, "the cluster state (kreassign's format) holding the current assignment")
    parsers["rollback"].add_argument("--current", metavar="CURRENT.json",
                                     help=f"{CURRENT}, or the whole message it prints")
    parsers["to-request"].add_argument(
        "--cancel", action="store_true", help="the --cancel request: null replicas for every partition named"
    )
    for name in ("normalize", "to-request", "rollback", "from-request", "from-list"):
        _add_out(parsers[name])
    parser.set_defaults(func=run)


def _check_usage(args: argparse.Namespace) -> None:
    if args.file == STDIN and getattr(args, "state", None) == STDIN:
        raise _Failure("--state", "FILE and --state cannot both read stdin", code=2)
    if args.file == STDIN and getattr(args, "current", None) == STDIN:
        raise _Failure("--current", "FILE and --current cannot both read stdin", code=2)


def run(args: argparse.Namespace) -> int:
    """Run one action; errors are reported on stderr, never as a traceback."""
    try:
        _check_usage(args)
        _check_outputs(args)
        _emit(args, _ACTIONS[args.action][1](args))
    except _Failure as e:
        print(f"{PROG}: {e.where}: {e.problem}", file=sys.stderr)
        return e.code
    return 0
