"""The quota-handlers models with issue 26's `[quota_handlers]` keys (retry, permissive_sizes, validate_only_sizes,
controller) in the oracle (`quota_handlers_init` / `_step` / `_check`) and in `validate-trace` (Format 4).

- the oracle answers the model's own step: the next state, the client's answer, the properties' verdicts;
- the answer it reads off the model's ghost is the reference's answer (reference/quota_retry.py) on every edge
  of small configurations of both sensors;
- a planted wrong implementation — validateOnly that consumes quota under `controller = "zk"` — is caught by
  `quota_handlers_check` at its first validateOnly step, and the right one matches on every step;
- validate-trace: a client retrying after its throttle time is VALID as the reference runs it; a trace whose
  retry is admitted where the reference rejects it (the rounding finding) is INVALID at that line; unlogged
  ticks are found; bad input exits 2 naming the line and the field.
"""

from __future__ import annotations

import json
from fractions import Fraction as F

from kreassign.checker.models import quota_handlers as qh
from kreassign.checker.oracle.server import Oracle
from kreassign.checker.traces import quota_handlers_step as QS
from kreassign.checker.traces.validation import SearchLimits, validate_text
from kreassign.reference import quota as ref
from kreassign.reference import quota_retry as qr
from test_exit_codes import run

from kreassign.errors import FINDING, OK, USAGE

ZK_VALIDATE_ONLY = {"handlers": 1, "quota_changes": [], "validate_only_sizes": [1], "controller": "zk"}


def ask(**request):
    reply = Oracle().handle({"id": 1, **request})
    assert reply["ok"], reply
    return reply["result"]


def error(**request):
    reply = Oracle().handle({"id": 1, **request})
    assert not reply["ok"], reply
    return reply["error"]["code"], reply["error"]["message"]


# -- the oracle: the model's own step -------------------------------------------------------------------------


def test_step_validate_only_under_each_controller():
    state = {"tokens": 2, "bucket_updated_ms": 0, "sensor_rate": 1}
    action = {"type": "SendValidateOnly", "n": 1}
    zk = ask(op="quota_handlers_step", quota_handlers=ZK_VALIDATE_ONLY, state=state, action=action)
    kraft = ask(op="quota_handlers_step", quota_handlers={**ZK_VALIDATE_ONLY, "controller": "kraft"},
                state=state, action=action)
    assert (zk["state"]["tokens"], kraft["state"]["tokens"]) == (2, 1)  # ZkAdminManager skips, KRaft records
    assert zk["response"] == kraft["response"] == {"error_code": 0, "throttle_time_ms": None}
    assert zk["violated"] == []
    assert [(v["name"], v["promised"]) for v in kraft["violated"]] == [("validate_only_never_consumes_quota", False)]
    verdicts = {p["name"]: p["holds"] for p in kraft["properties"]}
    assert verdicts["validate_only_never_consumes_quota"] is False and verdicts["unquoted_never_throttled"] is True
    assert {"type": "SendValidateOnly", "n": 1} in zk["enabled"]


def test_step_retry_is_the_model_step_and_names_the_rounding_finding():
    table = {"handlers": 1, "quota_changes": [], "retry": True, "rate": 3, "samples": 1, "sizes": [1, 4],
             "ticks": [1000], "horizon_ms": 1000}
    state = ask(op="quota_handlers_init", quota_handlers=table)["state"]
    answers = []
    for action in ({"type": "Send", "handler": 0, "n": 4}, {"type": "Send", "handler": 0, "n": 1},
                   {"type": "RetryAfterThrottle"}):
        out = ask(op="quota_handlers_step", quota_handlers=table, state=state, action=action)
        state = out["state"]
        answers.append(out["response"])
    assert answers == [{"error_code": 0, "throttle_time_ms": 0}, {"error_code": 89, "throttle_time_ms": 333},
                       {"error_code": 89, "throttle_time_ms": 0}]
    assert state["now_ms"] == 333 and state["tokens"] == "-1/1000"
    assert [v["name"] for v in out["violated"]] == ["retry_after_throttle_time_admitted"]


def test_the_answer_read_off_the_ghost_is_the_references_on_every_edge():
    """response_of reads the model's ghost; on every edge it equals reference/quota_retry.py's answer."""
    for profile in QS.PROFILES:
        for controller in ("kraft", "zk"):
            model = QS.handlers_model(profile, {"handlers": 1, "quota_changes": ["1/2"], "retry": True,
                                                "permissive_sizes": [2], "validate_only_sizes": [1],
                                                "controller": controller, "horizon_ms": 1500})
            todo, seen, edges = list(model.init_states()), set(model.init_states()), 0
            while todo:
                s = todo.pop()
                for a, n in model.successors(s):
                    got = QS.response_of(a, n)
                    cfg = model._config(s)
                    sensor = model._sensor(s)
                    if isinstance(a, qh.Send | qh.SendOld):
                        ans = (qr.strict if isinstance(a, qh.Send) else qr.permissive)(sensor, cfg, a.n, s.now_ms)
                        assert got == {"error_code": 0 if ans.admitted else 89, "throttle_time_ms": ans.throttle_ms}
                    elif isinstance(a, qh.SendValidateOnly):
                        ans = qr.validate_only(sensor, cfg, a.n, s.now_ms, qr.controller_accounting(controller))
                        assert got["error_code"] == (0 if ans.admitted else 89)
                    elif isinstance(a, qh.RetryAfterThrottle):
                        mutations, strict, wait = s.client.retry
                        later = model._config(s)
                        send = qr.strict if strict else qr.permissive
                        ans = send(sensor, later, mutations, s.now_ms + wait)
                        assert got == {"error_code": 0 if ans.admitted else 89, "throttle_time_ms": ans.throttle_ms}
                    else:
                        assert got is None
                    edges += 1
                    if n not in seen:
                        seen.add(n)
                        todo.append(n)
            assert edges > 100, (profile, controller, edges)


# -- the oracle: judging an implementation -------------------------------------------------------------------


class TinyQuota:
    """A client-side implementation of the token bucket under test, built on reference/quota.py's bucket;
    `validate_only_records` plants KRaft's accounting where the controller is ZooKeeper."""

    def __init__(self, validate_only_records: bool):
        self.validate_only_records = validate_only_records
        self.cfg = ref.QuotaConfig(F(1), 2, 1000)

    def apply(self, state: dict, action: dict) -> tuple[dict, dict | None]:
        now = state["now_ms"]
        bucket = None if state["tokens"] is None else ref.TokenBucket(F(state["tokens"]), state["bucket_updated_ms"])
        if action["type"] == "Tick":
            return {**state, "now_ms": now + action["ms"]}, None
        if action["type"] == "SendValidateOnly" and not self.validate_only_records:
            return state, {"error_code": 0}  # ZkAdminManager: a dry run meets no quota
        tokens, bucket = ref.measure(bucket, self.cfg, now)
        if tokens < 0:
            return self._json(state, bucket), {"error_code": 89}
        bucket = ref.record(bucket, self.cfg, action["n"], now)
        return self._json(state, bucket), {"error_code": 0}

    @staticmethod
    def _json(state: dict, bucket: ref.TokenBucket) -> dict:
        t = bucket.tokens
        return {**state, "sensor_rate": 1, "tokens": t.numerator if t.denominator == 1 else str(t),
                "bucket_updated_ms": bucket.last_update_ms}


RUN = [{"type": "Send", "handler": 0, "n": 1}, {"type": "Tick", "ms": 500}, {"type": "SendValidateOnly", "n": 1},
       {"type": "Send", "handler": 0, "n": 3}, {"type": "SendValidateOnly", "n": 1}]


def _first_mismatch(impl: TinyQuota):
    state = {"now_ms": 0, "rate": 1, "sensor_rate": None, "tokens": None, "bucket_updated_ms": None}
    for i, action in enumerate(RUN):
        observed, response = impl.apply(state, action)
        request = {"op": "quota_handlers_check", "quota_handlers": ZK_VALIDATE_ONLY, "state": state, "action": action,
                   "observed_state": observed}
        if response is not None:
            request["observed_response"] = response
        out = ask(**request)
        if out["verdict"] == "mismatch":
            return i, out["diff"]
        state = observed
    return None


def test_check_catches_validate_only_that_consumes_quota_under_zk():
    assert _first_mismatch(TinyQuota(validate_only_records=False)) is None
    step, diff = _first_mismatch(TinyQuota(validate_only_records=True))
    assert RUN[step]["type"] == "SendValidateOnly" and step == 2
    # ZooKeeper leaves the bucket as it was (1 token, updated at 0); the planted one refilled it and took a token
    assert diff == ["state.tokens: reference 1, implementation \"1/2\"",
                    "state.bucket_updated_ms: reference 0, implementation 500"]


def test_check_judges_the_properties_on_the_observed_ghost():
    state = {"tokens": 2, "bucket_updated_ms": 0, "sensor_rate": 1}
    action = {"type": "SendValidateOnly", "n": 1}
    out = ask(op="quota_handlers_check", quota_handlers=ZK_VALIDATE_ONLY, state=state, action=action,
              observed_state={"tokens": 1, "client": {"validate_only": [False, False, True]}})
    assert out["verdict"] == "mismatch"
    assert [(v["name"], v["reference_also"]) for v in out["violated"]] == [("validate_only_never_consumes_quota", False)]
    ok = ask(op="quota_handlers_check", quota_handlers=ZK_VALIDATE_ONLY, state=state, action=action,
             observed_state={"tokens": 2}, observed_response={"error_code": 0, "throttle_time_ms": 0})
    assert (ok["verdict"], ok["violated"]) == ("match", [])  # a validateOnly throttle time is not recorded


def test_bad_oracle_input_names_the_field():
    assert error(op="quota_handlers_step", quota_handlers={"controller": "x"}, action={"type": "Tick", "ms": 500}) == (
        "invalid_field", "quota_handlers.controller: expected one of kraft, zk, got 'x'")
    assert error(op="quota_handlers_step", profile="kip599", action={"type": "Tick", "ms": 500})[1].startswith(
        "profile: expected one of kip599-handlers, kip599-handlers-rate")
    assert error(op="quota_handlers_step", state={"tokens": "x"}, action={"type": "Tick", "ms": 500}) == (
        "invalid_field", "state.tokens: not an exact rational: 'x'")
    assert error(op="quota_handlers_step", action={"type": "Send", "handler": 0, "n": "3"}) == (
        "invalid_field", "action.n: expected an integer >= 1, got '3'")
    assert error(op="quota_handlers_step", action={"type": "Tick"}) == ("invalid_field", "action.ms: missing required field")
    assert error(op="quota_handlers_check", action={"type": "Tick", "ms": 500}) == (
        "invalid_field", "observed_state: missing required field (or observed_response)")
    assert error(op="quota_handlers_step", action={"type": "Tick", "ms": 500}, stat={})[1] == \
        "stat: unknown field for op 'quota_handlers_step'"
    code, message = error(op="quota_handlers_step", action={"type": "RetryAfterThrottle"})
    assert code == "invalid_action" and message.startswith("NotEnabled: RetryAfterThrottle() is not a step")


# -- validate-trace ----------------------------------------------------------------------------------------


def _trace(table: dict, *lines: dict, profile: str = "kip599-handlers") -> str:
    return "\n".join(json.dumps(x) for x in ({"profile": profile, "quota_handlers": table}, *lines)) + "\n"


RETRY = {"handlers": 1, "quota_changes": [], "retry": True, "ticks": [1000]}
ROUNDING = {"handlers": 1, "quota_changes": [], "retry": True, "rate": 3, "samples": 1, "sizes": [1, 4],
            "ticks": [1000], "horizon_ms": 1000}


def test_validate_trace_follows_a_retry_with_unlogged_ticks():
    text = _trace(RETRY,
                  {"action": {"type": "Send", "handler": 0, "n": 3}, "state": {"tokens": -1}},
                  {"action": {"type": "Send", "handler": 0, "n": 1}, "response": {"error_code": 89, "throttle_time_ms": 1000}},
                  {"action": {"type": "RetryAfterThrottle"}, "response": {"error_code": 0}, "state": {"now_ms": 1000}},
                  {"state": {"now_ms": 2000}})
    result = validate_text(text, "jsonl")
    assert result.verdict == "VALID"
    assert [str(a) for a in result.explanation[-1].actions] == ["Tick(1000ms)"]


def test_validate_trace_rejects_a_retry_admitted_where_the_reference_rejects_it(tmp_path, capsys):
    text = _trace(ROUNDING,
                  {"action": {"type": "Send", "handler": 0, "n": 4}},
                  {"action": {"type": "Send", "handler": 0, "n": 1}, "response": {"error_code": 89, "throttle_time_ms": 333}},
                  {"action": {"type": "RetryAfterThrottle"}, "response": {"error_code": 0}})
    result = validate_text(text, "jsonl")
    assert (result.verdict, result.failed.number) == ("INVALID", 4)
    assert result.closest.differs == [("response.error_code", 89, 0)]
    # the same run as the reference has it is VALID, and the line names the finding it breaks
    right = validate_text(text.replace('"error_code": 0}}\n', '"error_code": 89}}\n'), "jsonl")
    assert right.verdict == "VALID" and right.explanation[-1].violated == ("retry_after_throttle_time_admitted",)
    path = tmp_path / "retry.jsonl"
    path.write_text(text)
    code, out, _ = run(["validate-trace", str(path)], capsys)
    assert code == FINDING and "INVALID at line 4" in out and "response.error_code: the trace has 0" in out


def test_validate_trace_catches_validate_only_that_consumes_quota(tmp_path, capsys):
    line = {"action": {"type": "SendValidateOnly", "n": 1}, "state": {"tokens": 0}}  # it took a token
    bad = validate_text(_trace(ZK_VALIDATE_ONLY, {"action": {"type": "Send", "handler": 0, "n": 1}}, line), "jsonl")
    assert (bad.verdict, bad.failed.number, bad.closest.differs) == ("INVALID", 3, [("state.tokens", 1, 0)])
    good = _trace({**ZK_VALIDATE_ONLY, "controller": "kraft"}, {"action": {"type": "Send", "handler": 0, "n": 1}},
                  line)
    path = tmp_path / "kraft.jsonl"
    path.write_text(good)
    code, out, _ = run(["validate-trace", str(path), "--json"], capsys)
    data = json.loads(out)
    assert code == OK and data["verdict"] == "VALID"
    assert data["explanation"][-1]["violated"] == ["validate_only_never_consumes_quota"]


def test_validate_trace_bad_input_exits_2_naming_line_and_field(tmp_path, capsys):
    cases = [
        (_trace({"controller": "x"}), "line 1: quota_handlers.controller: expected one of kraft, zk"),
        (_trace({}, {"action": {"type": "Send", "handler": 0}}), "line 2: action.n: missing required field"),
        (_trace({}, {"action": {"type": "Tick", "ms": 500}, "state": {"tokenz": 1}}), "line 2: state.tokenz: unknown field"),
        (_trace({}, {"state": {"now_ms": 0}, "response": {"error_code": 0}}), "line 2: response: an answer belongs"),
    ]
    for text, message in cases:
        path = tmp_path / "bad.jsonl"
        path.write_text(text)
        code, _, err = run(["validate-trace", str(path)], capsys)
        assert code == USAGE and message in err and len(err.strip().splitlines()) == 1, err
    path.write_text(_trace({}))
    code, _, err = run(["validate-trace", str(path), "--profile", "kip599-handlers-rate"], capsys)
    assert code == USAGE and "profile: the trace names 'kip599-handlers', --profile says" in err


def test_validate_trace_search_limit_is_inconclusive():
    text = _trace({}, {"state": {"now_ms": 2000, "tokens": 99}})
    result = validate_text(text, "jsonl", limits=SearchLimits(max_states=50))
    assert result.verdict == "INCONCLUSIVE" and result.failed.number == 2
