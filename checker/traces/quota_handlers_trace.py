"""`validate-trace` for the quota-handlers models (`kip599-handlers`, `kip599-handlers-rate`, with the
`[quota_handlers]` keys of issue 26: clients that retry after the throttle time, validateOnly requests):
is an observed run of a mutation quota one the reference produces? (docs/validate-trace.md, "Format 4".)

A JSON-lines trace: a header naming the profile, the `[quota_handlers]` table and optionally the initial
state; then one line per observation — an action with the state after it and the client's answer (any of
their keys), or a state alone, reached by up to `--max-unlogged` unlogged actions of the model (ticks, quota
changes, ...). The candidate states are kept as in the reassignment validator (checker/traces/validation.py),
every step is the model's own (checker/traces/quota_handlers_step.py), and the first line no candidate
explains is reported with the fields that differ. Exit codes as validate-trace's: 0 VALID, 1 INVALID,
4 INCONCLUSIVE (the search hit --max-states), 2 unreadable input naming the line and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kreassign.checker.models import quota_handlers as qh
from kreassign.checker.traces import quota_handlers_step as QS
from kreassign.checker.traces.diff import show_json
from kreassign.spec.quota import number_from_json, number_to_json
from kreassign.spec.quota_client_properties import ClientGhost

from kreassign.errors import UsageError

HEADER_KEYS = ("profile", "quota_handlers", "initial_state")
LINE_KEYS = ("action", "state", "response")
NUMBER_KEYS = ("rate", "sensor_rate", "tokens")


class HandlersTraceError(UsageError, ValueError):
    """Unreadable trace (exit 2): the message names the line and the field."""


def header_profile(text: str) -> str | None:
    """The profile the first non-blank line names, if it is a quota-handlers profile (else None)."""
    for line in text.splitlines():
        if line.strip():
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                return None
            p = data.get("profile") if isinstance(data, dict) else None
            return p if p in QS.PROFILES else None
    return None


def is_handlers_trace(text: str, profile: Any) -> bool:
    """Is this JSON-lines trace one of a quota-handlers model (by --profile, else by its header)?"""
    if isinstance(profile, str):
        return profile in QS.PROFILES
    return profile is None and header_profile(text) is not None


# -- reading -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    action: Any  # None: a state reached by unlogged actions
    state: dict[str, Any] | None  # the keys it gives, canonical JSON
    response: dict[str, Any] | None


def canonical_state(model: qh.QuotaHandlersModel, data: Any, where: str) -> dict[str, Any]:
    """The keys an observed state gives, in the model's JSON form ("4/2" is 2); StepInputError names the field."""
    if not isinstance(data, dict):
        raise QS.StepInputError(f"{where}: expected an object, got {data!r}")
    known = QS.state_keys(model)
    out: dict[str, Any] = {}
    for k, v in data.items():
        if k not in known:
            raise QS.StepInputError(f"{where}.{k}: unknown field for profile {model.config.profile} (known: "
                                    f"{', '.join(known)})")
        try:
            if k in NUMBER_KEYS:
                out[k] = number_to_json(number_from_json(v, f"{where}.{k}"))
            elif k == "samples" and v is not None:
                if not isinstance(v, list) or not all(isinstance(x, list) and len(x) == 4 for x in v):
                    raise ValueError(f"{where}.samples: expected null or a list of [start_ms, last_event_ms, value, "
                                     f"event_count], got {v!r}")
                out[k] = [[a, b, number_to_json(number_from_json(c, f"{where}.samples[{i}].value", nullable=False)), d]
                          for i, (a, b, c, d) in enumerate(v)]
            elif k == "client" and v is not None:
                out[k] = ClientGhost.from_json(v).to_json()
            else:
                out[k] = v
        except ValueError as e:
            text = str(e)
            raise QS.StepInputError(text if text.startswith(where) else f"{where}.{text}") from None
    return out


def read(text: str, profile: str | None) -> tuple[qh.QuotaHandlersModel, qh.HState, list[Line], int]:
    """(the model, the initial state, the observations, the number of lines); HandlersTraceError names the line."""
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    if not lines:
        raise HandlersTraceError("line 1: empty trace (the first line names the profile and the [quota_handlers] table)")

    def load(n: int, ln: str) -> dict[str, Any]:
        try:
            data = json.loads(ln)
        except json.JSONDecodeError as e:
            raise HandlersTraceError(f"line {n}: invalid JSON at column {e.colno}: {e.msg}") from None
        except (ValueError, RecursionError) as e:
            raise HandlersTraceError(f"line {n}: invalid JSON: {' '.join(str(e).split())[:200]}") from None
        if not isinstance(data, dict):
            raise HandlersTraceError(f"line {n}: expected a JSON object, got {ln.strip()[:60]}")
        return data

    n0, first = lines[0]
    head = load(n0, first)
    for k in head:
        if k not in HEADER_KEYS:
            raise HandlersTraceError(f"line {n0}: {k}: unknown field of the header (known: {', '.join(HEADER_KEYS)})")
    named = head.get("profile")
    if profile is not None and named is not None and named != profile:
        raise HandlersTraceError(f"line {n0}: profile: the trace names {named!r}, --profile says {profile!r}")
    try:
        model = QS.handlers_model(profile or named, head.get("quota_handlers"))
        initial = QS.decode_state(model, head.get("initial_state"), "initial_state")
    except QS.StepInputError as e:
        raise HandlersTraceError(f"line {n0}: {e}") from None
    out = []
    for n, ln in lines[1:]:
        data = load(n, ln)
        for k in data:
            if k not in LINE_KEYS:
                raise HandlersTraceError(f"line {n}: {k}: unknown field (known: {', '.join(LINE_KEYS)})")
        if "action" not in data and "state" not in data:
            raise HandlersTraceError(f"line {n}: action: missing required field (or state)")
        if "response" in data and "action" not in data:
            raise HandlersTraceError(f"line {n}: response: an answer belongs to a logged action (no action here)")
        try:
            action = QS.decode_action(model, data["action"]) if "action" in data else None
            state = canonical_state(model, data["state"], "state") if "state" in data else None
            response = QS.decode_response(data["response"]) if "response" in data else None
        except QS.StepInputError as e:
            raise HandlersTraceError(f"line {n}: {e}") from None
        out.append(Line(n, ln.strip(), action, state, response))
    return model, initial, out, len(text.splitlines())


# -- judging ---------------------------------------------------------------------------------------------------


@dataclass
class Explained:
    line: int
    actions: tuple[Any, ...]  # the unlogged ones first, then the logged one
    logged: bool
    state: qh.HState
    response: dict[str, Any] | None
    violated: tuple[str, ...]  # the properties the line's last step breaks


@dataclass
class Closest:
    actions: tuple[Any, ...]
    state: qh.HState | None  # None: the logged action is not a step of the model there
    response: dict[str, Any] | None
    differs: list[tuple[str, Any, Any]]


@dataclass
class HandlersTraceResult:
    model: qh.QuotaHandlersModel
    profile: str
    config: dict[str, Any]
    initial: qh.HState
    observations: int
    total_lines: int
    verdict: str = "VALID"
    reason: str = ""
    failed: Line | None = None
    previous: int | None = None  # the last line explained (None: the initial state)
    before: list[qh.HState] = field(default_factory=list)
    closest: Closest | None = None
    explanation: list[Explained] = field(default_factory=list)
    states_searched: int = 0

    @property
    def valid(self) -> bool:
        return self.verdict == "VALID"


def _differs(model: qh.QuotaHandlersModel, line: Line, nxt: qh.HState, response: dict[str, Any] | None
             ) -> list[tuple[str, Any, Any]]:
    out: list[tuple[str, Any, Any]] = []
    if line.state is not None:
        ref = model.state_to_json(nxt)
        out += [(f"state.{k}", ref[k], v) for k, v in line.state.items() if ref[k] != v]
    if line.response is not None:
        if response is None:
            out.append(("response", None, line.response))
        else:  # a value the model does not record (a validateOnly request's throttle time) is not compared
            out += [(f"response.{k}", response[k], v) for k, v in line.response.items()
                    if response[k] is not None and response[k] != v]
    return out


def validate(model: qh.QuotaHandlersModel, initial: qh.HState, lines: list[Line], total_lines: int,
             max_unlogged: int = 8, max_states: int = 200_000) -> HandlersTraceResult:
    """Follow the trace with the model: the first line no candidate explains makes it INVALID."""
    result = HandlersTraceResult(model, model.config.profile, model.describe(), initial, len(lines), total_lines)
    # each candidate state with the explanation that reached it (the shortest: the first found)
    cands: dict[qh.HState, list[Explained]] = {initial: []}
    searched, previous = 0, None
    for line in lines:
        new: dict[qh.HState, list[Explained]] = {}
        best: Closest | None = None
        if line.action is not None:
            for c, path in cands.items():
                searched += 1
                nxt = model.next_state(c, line.action)
                if nxt is None:
                    best = best or Closest((line.action,), None, None, [])
                    continue
                resp = QS.response_of(line.action, nxt)
                differs = _differs(model, line, nxt, resp)
                if not differs:
                    new.setdefault(nxt, path + [Explained(line.number, (line.action,), True, nxt, resp,
                                                          _violated(model, c, line.action, nxt))])
                elif best is None or best.state is None or len(differs) < len(best.differs):
                    best = Closest((line.action,), nxt, resp, differs)
        else:  # a state reached by up to max_unlogged unlogged actions: breadth first, the fewest that match
            frontier = {c: (path, ()) for c, path in cands.items()}
            seen = set(frontier)
            for depth in range(max_unlogged + 1):
                for c, (path, acts) in frontier.items():
                    differs = _differs(model, line, c, None)
                    if not differs:
                        new.setdefault(c, path + [Explained(line.number, acts, False, c, None, ())])
                    elif best is None or len(differs) < len(best.differs):
                        best = Closest(acts, c, None, differs)
                if new or depth == max_unlogged:
                    break
                nxt_frontier: dict[qh.HState, tuple[list[Explained], tuple[Any, ...]]] = {}
                for c, (path, acts) in frontier.items():
                    for a, n in model.successors(c):
                        searched += 1
                        if searched > max_states:
                            result.states_searched = searched
                            result.verdict, result.failed = "INCONCLUSIVE", line
                            result.reason = f"the search hit --max-states ({max_states:,}) before line {line.number}"
                            return result
                        if n not in seen:
                            seen.add(n)
                            nxt_frontier[n] = (path, acts + (a,))
                frontier = nxt_frontier
        if not new:
            result.states_searched = searched
            result.verdict, result.failed, result.closest = "INVALID", line, best
            result.before = list(cands)[:3]
            result.previous = previous
            if line.action is not None and best is not None and best.state is None:
                result.reason = f"{line.action} is not a step of {model.config.profile} here (not enabled)"
            elif line.action is not None:
                result.reason = "the reference's state or answer after this action differs"
            else:
                result.reason = f"no run of up to {max_unlogged} unlogged actions reaches this state"
            return result
        cands, previous = new, line.number
    result.states_searched = searched
    result.explanation = next(iter(cands.values()))
    return result


def _violated(model: qh.QuotaHandlersModel, prev: qh.HState, action: Any, nxt: qh.HState) -> tuple[str, ...]:
    return tuple(p["name"] for p in QS.judge(model, prev, action, nxt) if not p["holds"])


def validate_handlers_text(text: str, profile: str | None, max_unlogged: int = 8,
                           max_states: int = 200_000) -> HandlersTraceResult:
    """Read and validate a quota-handlers JSON-lines trace (HandlersTraceError: unreadable, names the line)."""
    model, initial, lines, total = read(text, profile)
    return validate(model, initial, lines, total, max_unlogged, max_states)


# -- rendering -----------------------------------------------------------------------------------------------


def describe(model: qh.QuotaHandlersModel, s: qh.HState) -> str:
    d = model.state_to_json(s)
    keep = [k for k in d if k not in ("client", "throttled_unquoted", "pending")]
    return " ".join(f"{k}={show_json(d[k])}" for k in keep)


def _answer(r: dict[str, Any] | None) -> str:
    if r is None:
        return ""
    t = r["throttle_time_ms"]
    return f"  answer: error_code {r['error_code']}" + ("" if t is None else f", throttle_time_ms {t}")


def report(result: HandlersTraceResult, path: str) -> str:
    model = result.model
    lines = [f"kreassign validate-trace: {path} (jsonl, profile {result.profile})",
             f"{result.observations} observations",
             "  initial: " + describe(model, result.initial)]
    if result.valid:
        lines.append(f"VALID: every observation is the reference's ({result.states_searched:,} states searched)")
        lines.append("one explanation (unlogged actions in parentheses):")
        for e in result.explanation:
            acts = " ".join(str(a) if (e.logged and i == len(e.actions) - 1) else f"({a})"
                            for i, a in enumerate(e.actions)) or "(no action)"
            lines.append(f"  line {e.line:4} {acts}{_answer(e.response)}")
            lines.append(f"            -> {describe(model, e.state)}")
            if e.violated:
                lines.append(f"            breaks: {', '.join(e.violated)}")
        return "\n".join(lines)
    obs = result.failed
    assert obs is not None
    lines.append(f"{result.verdict} at line {obs.number}: {result.reason}")
    lines.append(f"  line {obs.number}: {obs.text}")
    lines.append(f"  last matched: line {result.previous}" if result.previous is not None
                 else "  last matched: the initial state")
    lines.append(f"  candidate state(s) before it ({len(result.before)} shown):")
    lines += [f"    {describe(model, s)}" for s in result.before]
    c = result.closest
    if c is not None and c.state is not None:
        acts = ", ".join(str(a) for a in c.actions) or "no action"
        lines.append(f"  the reference ({acts}): {describe(model, c.state)}{_answer(c.response)}")
        lines += [f"    differs: {f}: the trace has {show_json(o)}, the reference {show_json(r)}" for f, r, o in c.differs]
    return "\n".join(lines)


def result_json(result: HandlersTraceResult, path: str) -> dict[str, Any]:
    model = result.model
    out: dict[str, Any] = {
        "file": path, "format": "jsonl", "profile": result.profile, "config": result.config,
        "verdict": result.verdict, "valid": result.valid, "inconclusive": result.verdict == "INCONCLUSIVE",
        "reason": result.reason, "observations": result.observations, "lines": result.total_lines,
        "initial_state": model.state_to_json(result.initial), "states_searched": result.states_searched,
        "explanation": [{"line": e.line, "actions_json": [model.action_to_json(a) for a in e.actions],
                         "actions": [str(a) for a in e.actions], "logged": e.logged,
                         "state": model.state_to_json(e.state), "response": e.response, "violated": list(e.violated)}
                        for e in result.explanation],
    }
    if result.failed is None:
        out["failure"] = None
    else:
        c = result.closest
        out["failure"] = {
            "line": result.failed.number, "text": result.failed.text, "reason": result.reason,
            "previous_line": result.previous, "before": [model.state_to_json(s) for s in result.before],
            "closest": None if c is None or c.state is None else {
                "actions": [str(a) for a in c.actions], "state": model.state_to_json(c.state), "response": c.response,
                "differs": [f"{f}: the trace has {show_json(o)}, the reference {show_json(r)}" for f, r, o in c.differs]},
        }
    return out


__all__ = ["HandlersTraceError", "HandlersTraceResult", "is_handlers_trace", "read", "report", "result_json",
           "validate", "validate_handlers_text"]
