"""The reference as an oracle: one op per algorithm, JSON in, JSON out (docs/oracle.md).

`Oracle.handle_line(line)` answers one request line of `kreassign oracle`:
``{"id": any, "op": "...", ...params}`` → ``{"id": same, "ok": true, "result": ...}`` or
``{"id": same, "ok": false, "error": {"code": "...", "message": "..."}}``. It never
raises: a malformed line (invalid JSON, unknown op, a missing or ill-typed field) gets an
error naming the problem, and the session goes on. The ops call the reference
(`kreassign.reference`) and nothing else; this module only decodes parameters and
encodes results.

Error codes: `invalid_json`, `invalid_request` (not an object, no op), `unknown_op`,
`invalid_field` (missing / ill-typed / out-of-range parameter; the message starts with
the field's path), `invalid_action` (the reference refuses the action: unknown topic,
partition or broker, or an action the profile does not model), `internal_error`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kreassign.checker.implementations.adapters import decode_response, response_to_json
from kreassign.checker.oracle.differential import compare_step
from kreassign.reference import PROFILES, ActionNotSupported, ActionSpace, InvalidAction, Profile
from kreassign.reference import profile as get_profile
from kreassign.reference import quota as Q
from kreassign.reference.capabilities import apply_action
from kreassign.spec import messages as M
from kreassign.spec import quota as SQ
from kreassign.spec.codec import DecodeError, decode_action, from_json, state_from_json, to_json
from kreassign.spec.properties import ALWAYS, TRANSITION
from kreassign.spec.reassign_properties import Ghost, ModelState, Transition
from kreassign.spec.state import ClusterState, Partition

QUOTA_PROFILES = ("kip599", "kip599-draft")

INVALID_JSON = "invalid_json"
INVALID_REQUEST = "invalid_request"
UNKNOWN_OP = "unknown_op"
INVALID_FIELD = "invalid_field"
INVALID_ACTION = "invalid_action"
INTERNAL_ERROR = "internal_error"

#: keys every request may carry besides its op's parameters
COMMON_KEYS = ("id", "op", "profile", "kafka_version", "elr")


class OracleError(Exception):
    """An error reply: a code and a message naming the offending field."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def field_error(name: str, message: str) -> OracleError:
    return OracleError(INVALID_FIELD, f"{name}: {message}")


# -- parameter decoding --------------------------------------------------------------------------------

_MISSING = object()


def _describe(v: Any) -> str:
    text = json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."


class Params:
    """The parameters of one request, with typed getters whose errors name the field."""

    def __init__(self, req: dict[str, Any], session: Oracle):
        self.req = req
        self.session = session
        self.used: set[str] = set(COMMON_KEYS)

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        self.used.add(name)
        if name not in self.req:
            if default is _MISSING:
                raise field_error(name, "missing required field")
            return default
        return self.req[name]

    def int(self, name: str, default: Any = _MISSING, *, minimum: int | None = None) -> Any:
        v = self.raw(name, default)
        if v is None and default is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise field_error(name, f"expected an integer, got {_describe(v)}")
        if minimum is not None and v < minimum:
            raise field_error(name, f"must be >= {minimum}, got {v}")
        return v

    def str(self, name: str, default: Any = _MISSING) -> Any:
        v = self.raw(name, default)
        if not isinstance(v, str):
            raise field_error(name, f"expected a string, got {_describe(v)}")
        return v

    def bool(self, name: str, default: Any = _MISSING) -> Any:
        v = self.raw(name, default)
        if not isinstance(v, bool):
            raise field_error(name, f"expected true or false, got {_describe(v)}")
        return v

    def ints(self, name: str, default: Any = _MISSING) -> tuple[int, ...]:
        v = self.raw(name, default)
        if not isinstance(v, list):
            raise field_error(name, f"expected a list of integers, got {_describe(v)}")
        for i, x in enumerate(v):
            if isinstance(x, bool) or not isinstance(x, int):
                raise field_error(f"{name}[{i}]", f"expected an integer, got {_describe(x)}")
        return tuple(v)

    def number(self, name: str, default: Any = _MISSING, *, nullable: bool = False) -> Fraction | None:
        v = self.raw(name, default)
        if v is None and nullable:
            return None
        try:
            return SQ.number_from_json(v, name, nullable=False)
        except ValueError as e:
            raise OracleError(INVALID_FIELD, str(e)) from None

    def decode(self, name: str, cls: type, default: Any = _MISSING) -> Any:
        v = self.raw(name, default)
        if v is default and default is not _MISSING:
            return v
        try:
            return from_json(cls, v, name)
        except DecodeError as e:
            raise OracleError(INVALID_FIELD, str(e)) from None

    # -- reassignment values -----------------------------------------------------------------------
    def profile(self) -> Profile:
        name = self.req.get("profile", self.session.profile)
        if not isinstance(name, str):
            raise field_error("profile", f"expected a string, got {_describe(name)}")
        if name not in PROFILES:
            hint = " (a quota profile: use the quota ops)" if name in QUOTA_PROFILES else ""
            raise field_error("profile", f"unknown reassignment profile {name!r}{hint}; known: {', '.join(PROFILES)}")
        version, elr = self.req.get("kafka_version"), self.req.get("elr")
        if version is None and elr is None:
            return get_profile(name)
        return _release_profile(name, version, elr)

    def state(self, profile: Profile, name: str = "state") -> ClusterState:
        v = self.raw(name)
        try:
            state = state_from_json(v)
        except DecodeError as e:
            raise OracleError(INVALID_FIELD, f"{name}.{e}" if e.path else f"{name}: {e.message}") from None
        # a state without the profile's bookkeeping (zk: "zk": null) starts a fresh controller
        return profile.initial_state(state)

    def action(self, name: str = "action") -> Any:
        v = self.raw(name)
        try:
            return decode_action(v, name)
        except DecodeError as e:
            raise OracleError(INVALID_FIELD, str(e)) from None

    def partition_value(self, name: str = "partition") -> Partition:
        return self.decode(name, Partition)

    def check_unknown(self, op: str) -> None:
        extra = sorted(k for k in self.req if k not in self.used)
        if extra:
            raise field_error(extra[0], f"unknown field for op {op!r}")


# -- encoding ----------------------------------------------------------------------------------------


def step_result(state: ClusterState, response: Any) -> dict[str, Any]:
    return {"state": to_json(state), "response": response_to_json(response)}


def num(x: Any) -> Any:
    if x is None:
        return None
    return SQ.number_to_json(Fraction(x))


def bucket_json(b: Q.TokenBucket | None) -> Any:
    return None if b is None else {"tokens": num(b.tokens), "last_update_ms": b.last_update_ms}


def config_json(c: Q.QuotaConfig | None) -> Any:
    return None if c is None else {"rate": num(c.rate), "samples": c.samples, "window_ms": c.window_ms,
                                   "burst": num(c.burst)}


def manager_json(s: Q.QuotaManagerState) -> dict[str, Any]:
    return {
        "quotas": [{"entity": {"user": e.user, "client_id": e.client_id}, "rate": num(r)} for e, r in s.quotas],
        "buckets": [{"key": list(k), "tokens": num(b.tokens), "last_update_ms": b.last_update_ms} for k, b in s.buckets],
        "samples": s.samples,
        "window_ms": s.window_ms,
    }


# -- quota values --------------------------------------------------------------------------------------


def _obj(v: Any, name: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise field_error(name, f"expected an object, got {_describe(v)}")
    for k in v:
        if k not in allowed:
            raise field_error(f"{name}.{k}", f"unknown field (known: {', '.join(allowed)})")
    return v


_SUBFIELD = re.compile(r"^(?:topics\[\]\.)?([A-Za-z_][\w.]*(?:\[\d+\])?): (.*)$", re.DOTALL)


def _wrap(name: str, fn: Callable[[], Any]) -> Any:
    """Run a constructor whose ValueError messages may name a sub-field; report `name.sub-field`."""
    try:
        return fn()
    except OracleError:
        raise
    except ValueError as e:
        m = _SUBFIELD.match(str(e))
        if not name:
            raise OracleError(INVALID_FIELD, str(e)) from None
        if m:
            sub = m.group(1)
            field = sub if sub == name or sub.startswith((name + ".", name + "[")) else f"{name}.{sub}"
            raise field_error(field, m.group(2)) from None
        raise field_error(name, str(e)) from None


def quota_config(p: Params, name: str = "config", nullable: bool = False) -> Q.QuotaConfig | None:
    v = p.raw(name, None if nullable else _MISSING)
    if v is None:
        if nullable:
            return None
        raise field_error(name, "must not be null")
    d = _obj(v, name, ("rate", "samples", "window_ms", "burst"))
    if "rate" not in d:
        raise field_error(f"{name}.rate", "missing required field")
    try:
        rate = SQ.number_from_json(d["rate"], f"{name}.rate", nullable=False)
    except ValueError as e:
        raise OracleError(INVALID_FIELD, str(e)) from None
    samples = d.get("samples", Q.DEFAULT_SAMPLES)
    window = d.get("window_ms", Q.DEFAULT_WINDOW_MS)
    return _wrap(name, lambda: Q.QuotaConfig(rate, samples, window))


def token_bucket(v: Any, name: str) -> Q.TokenBucket | None:
    if v is None:
        return None
    d = _obj(v, name, ("tokens", "last_update_ms"))
    for k in ("tokens", "last_update_ms"):
        if k not in d:
            raise field_error(f"{name}.{k}", "missing required field")
    try:
        tokens = SQ.number_from_json(d["tokens"], f"{name}.tokens", nullable=False)
    except ValueError as e:
        raise OracleError(INVALID_FIELD, str(e)) from None
    return _wrap(name, lambda: Q.TokenBucket(tokens, d["last_update_ms"]))


def principal(v: Any, name: str = "principal") -> SQ.Principal:
    d = _obj(v, name, ("user", "client_id"))
    return _wrap(name, lambda: SQ.Principal(d.get("user", "ANONYMOUS"), d.get("client_id", "")))


def quota_entity(v: Any, name: str = "entity") -> SQ.QuotaEntity:
    d = _obj(v, name, ("user", "client_id"))
    return _wrap(name, lambda: SQ.QuotaEntity(d.get("user"), d.get("client_id")))


def manager_state(v: Any, name: str = "quota_state") -> Q.QuotaManagerState:
    if v is None:
        return Q.QuotaManagerState()
    d = _obj(v, name, ("quotas", "buckets", "samples", "window_ms"))
    quotas = []
    for i, q in enumerate(d.get("quotas", [])):
        qd = _obj(q, f"{name}.quotas[{i}]", ("entity", "rate"))
        if "entity" not in qd or "rate" not in qd:
            raise field_error(f"{name}.quotas[{i}]", "needs \"entity\" and \"rate\"")
        try:
            rate = SQ.check_rate(SQ.number_from_json(qd["rate"], f"{name}.quotas[{i}].rate", nullable=False),
                                 f"{name}.quotas[{i}].rate")
        except ValueError as e:
            raise OracleError(INVALID_FIELD, str(e)) from None
        quotas.append((quota_entity(qd["entity"], f"{name}.quotas[{i}].entity"), rate))
    buckets = []
    for i, b in enumerate(d.get("buckets", [])):
        bd = _obj(b, f"{name}.buckets[{i}]", ("key", "tokens", "last_update_ms"))
        key = bd.get("key")
        if not (isinstance(key, list) and len(key) == 2 and all(isinstance(x, str) for x in key)):
            raise field_error(f"{name}.buckets[{i}].key", f"expected [user, client_id] strings, got {_describe(key)}")
        bucket = token_bucket({k: bd[k] for k in ("tokens", "last_update_ms") if k in bd}, f"{name}.buckets[{i}]")
        buckets.append((tuple(key), bucket))
    samples = d.get("samples", Q.DEFAULT_SAMPLES)
    window = d.get("window_ms", Q.DEFAULT_WINDOW_MS)
    state = _wrap(name, lambda: Q.QuotaManagerState((), (), samples, window))
    for entity, rate in quotas:
        state = Q.set_quota(state, entity, rate)
    from dataclasses import replace

    return replace(state, buckets=tuple(sorted(buckets)))


def _assignments(v: Any, name: str, nullable: bool) -> Any:
    if v is None and nullable:
        return None
    if not isinstance(v, list) or not all(
        isinstance(r, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in r) for r in v
    ):
        raise field_error(name, f"expected a list of lists of broker ids, got {_describe(v)}")
    return tuple(tuple(r) for r in v)


def mutation_request(v: Any, name: str = "request") -> Any:
    """CreateTopics / DeleteTopics / CreatePartitions (or AlterPartitionReassignments, counted by nothing)."""
    d = _obj(v, name, ("api", "version", "topics", "topic_names", "timeout_ms", "validate_only"))
    api = d.get("api")
    if api not in SQ.MUTATION_APIS and api != SQ.ALTER_PARTITION_REASSIGNMENTS:
        raise field_error(f"{name}.api", f"expected one of {', '.join(SQ.MUTATION_APIS)}, "
                          f"{SQ.ALTER_PARTITION_REASSIGNMENTS}; got {_describe(api)}")
    if api == SQ.ALTER_PARTITION_REASSIGNMENTS:
        return M.AlterPartitionReassignmentsRequest(topics=())
    common: dict[str, Any] = {}
    for k in ("version", "timeout_ms"):
        if k in d:
            if isinstance(d[k], bool) or not isinstance(d[k], int):
                raise field_error(f"{name}.{k}", f"expected an integer, got {_describe(d[k])}")
            common[k] = d[k]
    if api == SQ.DELETE_TOPICS:
        names = d.get("topic_names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise field_error(f"{name}.topic_names", f"expected a list of topic names, got {_describe(names)}")
        return _wrap(name, lambda: SQ.DeleteTopicsRequest(tuple(names), **common))
    if "validate_only" in d:
        if not isinstance(d["validate_only"], bool):
            raise field_error(f"{name}.validate_only", f"expected true or false, got {_describe(d['validate_only'])}")
        common["validate_only"] = d["validate_only"]
    topics = d.get("topics")
    if not isinstance(topics, list):
        raise field_error(f"{name}.topics", f"expected a list, got {_describe(topics)}")
    out = []
    for i, t in enumerate(topics):
        where = f"{name}.topics[{i}]"
        if api == SQ.CREATE_TOPICS:
            td = _obj(t, where, ("name", "num_partitions", "replication_factor", "assignments"))
            if "name" not in td:
                raise field_error(f"{where}.name", "missing required field")
            assignments = _assignments(td.get("assignments", []), f"{where}.assignments", False)
            out.append(_wrap(where, lambda td=td, a=assignments: SQ.CreatableTopic(
                td["name"], td.get("num_partitions", -1), td.get("replication_factor", -1), a)))
        else:
            td = _obj(t, where, ("name", "count", "assignments"))
            for k in ("name", "count"):
                if k not in td:
                    raise field_error(f"{where}.{k}", "missing required field")
            assignments = _assignments(td.get("assignments"), f"{where}.assignments", True)
            out.append(_wrap(where, lambda td=td, a=assignments: SQ.CreatePartitionsTopic(td["name"], td["count"], a)))
    cls = SQ.CreateTopicsRequest if api == SQ.CREATE_TOPICS else SQ.CreatePartitionsRequest
    return _wrap(name, lambda: cls(tuple(out), **common))


def quota_rule(p: Params) -> Q.AdmissionRule:
    name = p.req.get("profile")
    if name is None:
        name = p.session.profile if p.session.profile in QUOTA_PROFILES else "kip599"
    if name not in QUOTA_PROFILES:
        raise field_error("profile", f"expected a quota profile ({', '.join(QUOTA_PROFILES)}), got {_describe(name)}")
    return Q.rule(name)


# -- the ops -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    name: str
    func: Callable[[Params], Any]
    summary: str
    params: str  # one line: the parameters, '?' marks optional ones


OPS: dict[str, Op] = {}


def op(name: str, params: str, summary: str):
    def register(func: Callable[[Params], Any]) -> Callable[[Params], Any]:
        OPS[name] = Op(name, func, summary, params)
        return func

    return register


_RELEASE_PROFILES: dict[tuple[str, bool | None], Profile] = {}


def _release_profile(name: str, version: Any, elr: Any) -> Profile:
    """The kraft profile at a Kafka release ("kafka_version", "elr": true/false), as `check --kafka-version`."""
    from kreassign.reference.kraft import KraftProfile
    from kreassign.spec.kafka_releases import NEWEST, parse_version

    if name != "kraft":
        raise field_error("kafka_version" if version is not None else "elr",
                          f"applies to the kraft profile only, not {name!r}")
    if version is not None and not isinstance(version, str):
        raise field_error("kafka_version", f"expected a string like \"{NEWEST}\", got {_describe(version)}")
    if elr is not None and not isinstance(elr, bool):
        raise field_error("elr", f"expected true or false, got {_describe(elr)}")
    try:
        version = parse_version(version) if version is not None else NEWEST
        key = (version, elr)
        if key not in _RELEASE_PROFILES:
            _RELEASE_PROFILES[key] = KraftProfile(kafka_version=version, elr=elr)
    except ValueError as e:
        raise field_error("kafka_version" if "elr" not in str(e).lower() else "elr", str(e)) from None
    return _RELEASE_PROFILES[key]


def _apply(p: Params, profile: Profile, state: ClusterState, action: Any) -> Any:
    try:  # the profile's step, or a capability's (ToolExecute, CreatePartitions, ...): reference/capabilities.py
        return apply_action(profile, state, action)
    except (InvalidAction, ActionNotSupported) as e:
        raise OracleError(INVALID_ACTION, f"{type(e).__name__}: {e}") from None


def _action_op(p: Params, type_name: str, fields: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """An op that is one spec action: its fields are the request's parameters."""
    profile = p.profile()
    state = p.state(profile)
    data: dict[str, Any] = {"type": type_name}
    for f in fields:
        data[f] = p.raw(f)
    for f in optional:
        if f in p.req:
            data[f] = p.raw(f)
    try:
        action = decode_action(data)
    except DecodeError as e:
        raise OracleError(INVALID_FIELD, str(e)) from None
    step = _apply(p, profile, state, action)
    return step_result(step.state, step.response)


# meta


@op("ops", "", "the ops of this oracle, with their parameters")
def op_ops(p: Params) -> Any:
    return [{"op": o.name, "params": o.params, "summary": o.summary} for o in OPS.values()]


@op("profiles", "", "the reassignment and quota profiles")
def op_profiles(p: Params) -> Any:
    return {"reassignment": [{"name": n, "description": get_profile(n).description} for n in PROFILES],
            "quota": list(QUOTA_PROFILES), "default": p.session.profile}


# the reassignment algorithms


@op("plan", "profile?, current, target", "the planned replicas / adding / removing of a reassignment")
def op_plan(p: Params) -> Any:
    profile = p.profile()
    plan = profile.plan(p.ints("current"), p.ints("target"))
    return {"replicas": list(plan.replicas), "adding": list(plan.adding), "removing": list(plan.removing)}


@op("alter_partition_reassignments", "profile?, state, request",
    "AlterPartitionReassignments: the new state and the response")
def op_alter(p: Params) -> Any:
    return _action_op(p, "AlterReassignments", ("request",))


@op("list_partition_reassignments", "profile?, state, request?", "ListPartitionReassignments: the response")
def op_list(p: Params) -> Any:
    profile = p.profile()
    state = p.state(profile)
    request = p.decode("request", M.ListPartitionReassignmentsRequest, M.ListPartitionReassignmentsRequest())
    return {"response": response_to_json(profile.list_partition_reassignments(state, request))}


@op("cancel", "profile?, state, topic, partition", "cancel (revert) one partition's reassignment through the API")
def op_cancel(p: Params) -> Any:
    return _action_op(p, "Cancel", ("topic", "partition"))


@op("revert", "profile?, partition", "kraft: PartitionReassignmentRevert of a partition: replicas, isr, unclean?")
def op_revert(p: Params) -> Any:
    profile = p.profile()
    part = p.partition_value()
    revert = getattr(profile, "revert", None)
    if revert is None:
        raise OracleError(INVALID_ACTION, f"profile {profile.name} has no revert function (use the cancel op)")
    if not part.reassigning:
        return {"reassigning": False, "replicas": list(part.replicas), "isr": list(part.isr), "unclean": False}
    replicas, isr, unclean = revert(part)
    return {"reassigning": True, "replicas": list(replicas), "isr": list(isr), "unclean": unclean}


@op("complete", "profile?, replicas, isr, adding, removing",
    "kraft: completeReassignmentIfNeeded on target lists: complete? and the resulting lists")
def op_complete(p: Params) -> Any:
    from kreassign.reference.kraft_change import complete_if_needed

    profile = p.profile()
    rule = getattr(profile, "completion_rule", None)
    if rule is None:
        raise OracleError(INVALID_ACTION, f"profile {profile.name} completes in controller steps "
                          "(use pending_step / controller_step)")
    lists = [p.ints(k) for k in ("replicas", "isr", "adding", "removing")]
    r, i, ar, rr = complete_if_needed(*lists, rule)
    done = bool(lists[2] or lists[3]) and not ar and not rr
    return {"complete": done, "replicas": list(r), "isr": list(i), "adding": list(ar), "removing": list(rr)}


@op("elect", "profile?, state, leader, replicas, isr, election",
    "kraft: PartitionChangeBuilder.electLeader over target replicas and ISR: leader, unclean?")
def op_elect(p: Params) -> Any:
    from kreassign.reference.kraft_change import elect

    profile = p.profile()
    if getattr(profile, "completion_rule", None) is None:
        raise OracleError(INVALID_ACTION, f"profile {profile.name} has no PartitionChangeBuilder election "
                          "(use elect_leaders)")
    state = p.state(profile)
    election = p.str("election")
    if election not in ("ONLINE", "PREFERRED", "UNCLEAN"):
        raise field_error("election", f"expected ONLINE, PREFERRED or UNCLEAN, got {_describe(election)}")
    leader, unclean = elect(state, p.int("leader"), p.ints("replicas"), p.ints("isr"), election)
    return {"leader": leader, "unclean": unclean}


@op("elect_leaders", "profile?, state, topic, partition, election?", "ElectLeaders (PREFERRED or UNCLEAN)")
def op_elect_leaders(p: Params) -> Any:
    return _action_op(p, "ElectLeaders", ("topic", "partition"), ("election",))


@op("alter_partition", "profile?, state, topic, partition, leader, new_isr, leader_epoch, partition_epoch, version?",
    "AlterPartition (an ISR change from the leader)")
def op_alter_partition(p: Params) -> Any:
    return _action_op(p, "AlterPartition", ("topic", "partition", "leader", "new_isr", "leader_epoch",
                                            "partition_epoch"), ("version",))


@op("broker_fail", "profile?, state, broker", "a broker is fenced / dies")
def op_broker_fail(p: Params) -> Any:
    return _action_op(p, "BrokerFail", ("broker",))


@op("broker_recover", "profile?, state, broker", "a broker is unfenced / comes back")
def op_broker_recover(p: Params) -> Any:
    return _action_op(p, "BrokerRecover", ("broker",))


# the optional capabilities (issue 14; docs/checking.md): the same steps the explorer takes


@op("tool_execute", "profile?, state, topic, partition, replicas",
    "kafka-reassign-partitions.sh --execute --additional --throttle: set the throttles, then alter")
def op_tool_execute(p: Params) -> Any:
    return _action_op(p, "ToolExecute", ("topic", "partition", "replicas"))


@op("tool_cancel", "profile?, state, topic, partition",
    "kafka-reassign-partitions.sh --cancel: cancel the partition's move, then clear all throttles")
def op_tool_cancel(p: Params) -> Any:
    return _action_op(p, "ToolCancel", ("topic", "partition"))


@op("tool_verify", "profile?, state, topic, partition",
    "kafka-reassign-partitions.sh --verify: clear all throttles once no reassignment is in progress")
def op_tool_verify(p: Params) -> Any:
    return _action_op(p, "ToolVerify", ("topic", "partition"))


@op("create_partitions", "profile?, state, topic, count",
    "CreatePartitions: grow a topic to `count` partitions (kraft, kraft-3.7, kip455)")
def op_create_partitions(p: Params) -> Any:
    return _action_op(p, "CreatePartitions", ("topic", "count"))


@op("broker_replay", "profile?, state, broker",
    "a live broker acts on the metadata it has replayed: creates / deletes the logs it hosts (state.hosted)")
def op_broker_replay(p: Params) -> Any:
    return _action_op(p, "BrokerReplay", ("broker",))


@op("auto_leader_balance", "profile?, state",
    "one run of the controller's periodic preferred-leader balancing (auto.leader.rebalance.enable)")
def op_auto_leader_balance(p: Params) -> Any:
    return _action_op(p, "AutoLeaderBalance", ())


@op("pending_step", "profile?, state, topic, partition",
    "zk / kip455 / kip236: the controller's next step on a partition (null: none)")
def op_pending_step(p: Params) -> Any:
    from kreassign.reference import zk_controller

    profile = p.profile()
    state = p.state(profile)
    topic, partition = p.str("topic"), p.int("partition")
    if state.partition(topic, partition) is None:
        raise OracleError(INVALID_ACTION, f"InvalidAction: unknown partition {topic}-{partition}")
    if state.zk is not None and profile.name == "zk":
        return {"step": zk_controller.next_step(state.zk, topic, partition)}
    pending = getattr(profile, "pending_step", None)
    return {"step": pending(state, topic, partition) if pending is not None else None}


@op("controller_step", "profile?, state, topic, partition", "zk: run the next onPartitionReassignment step")
def op_controller_step(p: Params) -> Any:
    return _action_op(p, "ControllerStep", ("topic", "partition"))


@op("controller_failover", "profile?, state", "the controller fails over (zk: rebuilds from ZooKeeper and resumes)")
def op_failover(p: Params) -> Any:
    return _action_op(p, "ControllerFailover", ())


#: the bounds keys `enabled_actions` takes in `capabilities` (docs/checking.md): those that add actions,
#: and those that add none but are accepted so that a check's bounds can be passed as they are
ENABLING_CAPABILITIES = ("throttles", "create_partitions", "broker_replicas", "leader_balance", "delete_topic",
                         "kraft_actions", "zk_versions", "broker_view", "fair", "broker_isr",
                         "zk_events")


def capability_model(p: Params, profile: Profile, state: ClusterState, space: ActionSpace) -> Any:
    """The explorer's model of `profile` with the request's `capabilities` switched on and its `space`:
    its `actions` are the one enumeration the explorer, fuzz and this op share."""
    from dataclasses import replace

    from kreassign.checker.config.bounds import ConfigError, bounds_from_mapping
    from kreassign.checker.models.reassign import TOPIC, ReassignmentModel

    caps = p.raw("capabilities", {})
    if not isinstance(caps, dict):
        raise field_error("capabilities", f"expected an object of bounds keys, got {_describe(caps)}")
    for key in caps:
        if key not in ENABLING_CAPABILITIES:
            raise field_error(f"capabilities.{key}", f"unknown capability (known: {', '.join(ENABLING_CAPABILITIES)})")
    try:
        model = ReassignmentModel(profile, bounds_from_mapping(caps, where="capabilities"))
    except ConfigError as e:  # a capability the profile does not model (delete_topic under kip455 ...)
        text = str(e)
        raise OracleError(INVALID_FIELD, text if text.startswith("capabilities") else f"capabilities.{text}") from None
    if model.bounds.create_partitions and state.topic(TOPIC) is None:
        raise field_error("capabilities.create_partitions", f"the model's CreatePartitions grows topic {TOPIC!r}, "
                                                            "which the state does not have")
    # as in the explorer: with the throttles the admin moves replicas only through the tool
    model.space = replace(space, reassign=False, cancel=False) if model.bounds.throttles else space
    return model


@op("enabled_actions", "profile?, state, space?, capabilities?",
    "the actions of an ActionSpace (and of the capabilities switched on) enabled in a state, in order")
def op_enabled(p: Params) -> Any:
    profile = p.profile()
    state = p.state(profile)
    space = p.decode("space", ActionSpace, ActionSpace())
    model = capability_model(p, profile, state, space)
    budget = (1,) * 5  # the oracle spends no budget: every request kind stays possible
    actions = model.actions(ModelState(state, tuple(Ghost() for _ in state.partitions()), budget))
    return {"actions": [to_json(a) for a in actions]}


@op("step", "profile?, state, action", "any spec action: the expected state and response")
def op_step(p: Params) -> Any:
    profile = p.profile()
    state = p.state(profile)
    action = p.action()
    step = _apply(p, profile, state, action)
    return step_result(step.state, step.response)


def _ghosts_before(state: ClusterState, p: Params) -> tuple[Ghost, ...]:
    """The admin's intent before the step: given, or read off the partitions (origin / target)."""
    n = sum(1 for _ in state.partitions())
    if "ghosts" in p.req:
        v = p.raw("ghosts")
        if not isinstance(v, list) or len(v) != n:
            raise field_error("ghosts", f"expected a list of {n} [original, requested, cancelled] entries")
        out = []
        for i, g in enumerate(v):
            ok = isinstance(g, list) and len(g) == 3 and isinstance(g[2], bool) and all(
                x is None or (isinstance(x, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in x))
                for x in g[:2])
            if not ok:
                raise field_error(f"ghosts[{i}]", f"expected [original|null, requested|null, cancelled], got {_describe(g)}")
            out.append(Ghost(tuple(g[0]) if g[0] is not None else None, tuple(g[1]) if g[1] is not None else None, g[2]))
        return tuple(out)
    return tuple(Ghost(q.origin, q.target, False) if q.reassigning else Ghost() for _, _, q in state.partitions())


def capability_bounds(profile: Profile, state: ClusterState, action: Any) -> Any:
    """Bounds switching on the capabilities a step uses, so that their properties are judged too."""
    from kreassign.checker.config.bounds import Bounds
    from kreassign.reference.throttles import TOOL_ACTIONS
    from kreassign.spec import actions as A

    creates = isinstance(action, A.CreatePartitions) and state.zk is None and state.kip236 is None
    throttles = state.throttles is not None or isinstance(action, TOOL_ACTIONS)
    deleting = isinstance(action, A.TOPIC_DELETION_ACTIONS) or bool(state.zk is not None and state.zk.deleting)
    kraft_action = {A.BrokerControlledShutdown: "controlled-shutdown", A.BrokerRestart: "restart",
                    A.BalanceLeaders: "balance-leaders", A.ElectUncleanLeaders: "elect-unclean"}.get(type(action))
    # znode_batch: a batch written, the znode deleted, or a znode that holds entries (zk)
    batch = profile.name == "zk" and state.zk is not None and (
        isinstance(action, A.ZNODE_BATCH_ACTIONS) or bool(state.zk.admin_znode))
    znode_batch = {"znode": True, "znode_batch": True, "partitions": 2} if batch else {}
    return Bounds(**znode_batch,
                  throttles=throttles, broker_replicas=state.hosted is not None, create_partitions=1 if creates else 0,
                  broker_isr=state.broker_isr is not None,
                  delete_topic=deleting and profile.name in ("kraft", "kraft-3.7", "zk") and not (
                      throttles or creates or state.hosted is not None),
                  zk_versions=profile.name == "zk" and state.zk is not None and state.zk.leadership is not None,
                  zk_events=profile.name == "zk" and state.zk is not None and state.zk.controller_id is not None,
                  kraft_actions=(kraft_action,) if kraft_action and hasattr(profile, "controller_actions") else ())


def violated_properties(profile: Profile, state: ClusterState, action: Any, after: ClusterState, response: Any,
                        ghosts: tuple[Ghost, ...]) -> list[dict[str, Any]]:
    """The state and transition properties that fail on the step state --action--> after.

    The properties of a capability (docs/checking.md) are included when the step uses it: the
    throttles (a tool action, or throttles in the state), the brokers' logs (`hosted` in the
    state), CreatePartitions, topic deletion (its actions, or zk.deleting), the zk controller's
    cache (zk.leadership), the KRaft controller's own actions."""
    from kreassign.checker.models.reassign import ReassignmentModel

    model = ReassignmentModel(profile, capability_bounds(profile, state, action))
    prev = ModelState(state, ghosts, (0, 0, 0, 0))
    new_ghosts, endings = model.ghosts_after(prev, action, after, response)
    new_ghosts += (Ghost(),) * (sum(1 for _ in after.partitions()) - len(new_ghosts))  # created partitions
    nxt = ModelState(after, new_ghosts, (0, 0, 0, 0))
    label = Transition(action, response, endings, after)
    out = []
    for prop in model.properties():
        if prop.kind == ALWAYS:
            bad = not prop.predicate(nxt)
        elif prop.kind == TRANSITION:
            bad = not prop.predicate(prev, label, nxt)
        else:
            continue
        if bad:
            out.append({"name": prop.name, "kind": prop.kind, "description": prop.description})
    return out


def _observe_impl(p: Params, state: ClusterState, action: Any) -> tuple[Profile, ClusterState, Any]:
    """The check op's "impl": run the step on Kafka (the reference at Kafka's metadata.version)."""
    from kreassign.checker.implementations.kafka import is_kafka_spec, parse_spec
    from kreassign.checker.oracle.kafka_lockstep import observe, reference_profile

    spec = p.str("impl")
    if not is_kafka_spec(spec):
        raise OracleError(INVALID_FIELD, "impl: only 'kafka' or 'kafka[metadata.version=V]' (other implementations: "
                                         "kreassign check --impl)")
    try:
        parse_spec(spec)
        impl, observed, response = observe(spec, state, action)
    except Exception as e:  # noqa: BLE001 - Java missing, Kafka refused the action: one error reply, the session goes on
        raise OracleError(INTERNAL_ERROR if not isinstance(e, ValueError) else INVALID_FIELD,
                          f"impl: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    return (reference_profile(impl.metadata_version, (), impl.options.zk_migration, impl.setup.version, impl.elr),
            observed, response)


@op("check", "profile?, state, action, observed_state | impl, observed_response?, ghosts?",
    "judge an observed step: verdict, field-level diff, violated properties")
def op_check(p: Params) -> Any:
    profile = p.profile()
    state = p.state(profile)
    action = p.action()
    if "impl" in p.req:  # {"impl": "kafka"}: observe the step on Kafka's KRaft controller (docs/kafka.md)
        profile, observed, observed_response = _observe_impl(p, state, action)
    else:
        observed = p.state(profile, "observed_state")
        observed_response = None
    if "observed_response" in p.req and "impl" not in p.req:
        try:
            observed_response = decode_response(p.raw("observed_response"), action, "observed_response")
        except DecodeError as e:
            raise OracleError(INVALID_FIELD, str(e)) from None
    ghosts = _ghosts_before(state, p)
    step = _apply(p, profile, state, action)
    diff = compare_step(step.state, step.response if observed_response is not None else None,
                        observed, observed_response)
    violated = violated_properties(profile, state, action, observed, observed_response or step.response, ghosts)
    expected_violations = {v["name"] for v in
                           violated_properties(profile, state, action, step.state, step.response, ghosts)}
    for v in violated:
        v["reference_also"] = v["name"] in expected_violations
    return {
        "verdict": "match" if not diff else "mismatch",
        "diff": diff,
        "violated": violated,
        "expected": step_result(step.state, step.response),
    }


# the quota


@op("bucket_refill", "config, bucket?, now_ms", "TokenBucket.refill (a null bucket is full)")
def op_refill(p: Params) -> Any:
    config = quota_config(p)
    bucket = token_bucket(p.raw("bucket", None), "bucket")
    now = p.int("now_ms")
    return {"bucket": bucket_json(_wrap("now_ms", lambda: Q.refill(bucket, config, now)))}


@op("bucket_record", "config?, bucket?, value, now_ms", "TokenBucket.record: refill, then take `value` tokens")
def op_record(p: Params) -> Any:
    config = quota_config(p, nullable=True)
    bucket = token_bucket(p.raw("bucket", None), "bucket")
    value = p.number("value")
    now = p.int("now_ms")
    return {"bucket": bucket_json(_wrap("now_ms", lambda: Q.record(bucket, config, value, now)))}


@op("bucket_measure", "config?, bucket?, now_ms", "TokenBucket.measure: the tokens at now (null + unbounded without a quota)")
def op_measure(p: Params) -> Any:
    config = quota_config(p, nullable=True)
    bucket = token_bucket(p.raw("bucket", None), "bucket")
    now = p.int("now_ms")
    tokens, b = _wrap("now_ms", lambda: Q.measure(bucket, config, now))
    unbounded = isinstance(tokens, float) and math.isinf(tokens)
    return {"tokens": None if unbounded else num(tokens), "unbounded": unbounded, "violated": (not unbounded) and tokens < 0,
            "bucket": bucket_json(b)}


@op("throttle_time", "tokens, rate, recorded_ms?, now_ms?, request_throttle_ms?",
    "the throttle of a deficit (Math.round(-tokens/rate*1000)), decayed to now, maxed with the request quota's")
def op_throttle(p: Params) -> Any:
    tokens = p.number("tokens")
    rate = p.number("rate")
    _wrap("rate", lambda: SQ.check_rate(rate, "rate"))
    throttle = Q.throttle_time_ms(tokens, rate) if tokens < 0 else 0
    recorded = p.int("recorded_ms", None)
    now = p.int("now_ms", None)
    if (recorded is None) != (now is None):
        raise field_error("now_ms" if now is None else "recorded_ms", "recorded_ms and now_ms go together")
    decayed = Q.decayed_throttle_ms(throttle, recorded, now) if recorded is not None else throttle
    response = Q.response_throttle_ms(decayed, p.int("request_throttle_ms", 0, minimum=0))
    return {"throttle_ms": throttle, "decayed_ms": decayed, "response_throttle_ms": response,
            "channel_muted": Q.channel_muted(response)}


@op("admit", "profile?, config?, bucket?, counts, now_ms, strict",
    "admit one request's topics against one bucket (strict or permissive): bucket, admitted, throttle")
def op_admit(p: Params) -> Any:
    rule = quota_rule(p)
    config = quota_config(p, nullable=True)
    bucket = token_bucket(p.raw("bucket", None), "bucket")
    counts = p.raw("counts")
    if not isinstance(counts, list):
        raise field_error("counts", f"expected a list of integers or nulls, got {_describe(counts)}")
    now = p.int("now_ms")
    strict = p.bool("strict")
    adm = _wrap("counts", lambda: Q.admit(bucket, config, counts, now, strict=strict, rule=rule))
    return {"bucket": bucket_json(adm.bucket), "admitted": list(adm.admitted), "throttle_ms": adm.throttle_ms}


@op("quota_admit", "profile?, quota_state?, principal, request, now_ms, metadata?, controller?, response_ms?, "
    "request_throttle_ms?, default_partitions?",
    "the mutation quota on one CreateTopics / DeleteTopics / CreatePartitions request")
def op_quota_admit(p: Params) -> Any:
    rule = quota_rule(p)
    state = manager_state(p.raw("quota_state", None))
    who = principal(p.raw("principal"))
    request = mutation_request(p.raw("request"))
    now = p.int("now_ms")
    metadata = p.raw("metadata", {})
    if not isinstance(metadata, dict):
        raise field_error("metadata", f"expected an object topic -> partition count, got {_describe(metadata)}")
    controller = p.str("controller", Q.KRAFT)
    response_ms = p.int("response_ms", None)
    request_throttle = p.int("request_throttle_ms", 0)
    default_partitions = p.int("default_partitions", 1)
    out = _wrap("", lambda: Q.handle_request(
        state, who, request, now, metadata=metadata, controller=controller, rule=rule, response_ms=response_ms,
        request_throttle_ms=request_throttle, default_partitions=default_partitions))
    return {
        "quota_state": manager_json(out.state),
        "response": to_json(out.response) if out.response is not None else None,
        "counted": list(out.counted),
        "throttle_time_ms": out.throttle_time_ms,
        "channel_muted": out.channel_muted,
    }


@op("quota_resolve", "quota_state?, principal", "which quota applies to a principal, and its sensor key")
def op_quota_resolve(p: Params) -> Any:
    state = manager_state(p.raw("quota_state", None))
    key, config = Q.resolve_quota(state, principal(p.raw("principal")))
    return {"key": list(key), "config": config_json(config)}


@op("quota_set", "quota_state?, entity, rate", "AlterClientQuotas controller_mutation_rate (rate null removes it)")
def op_quota_set(p: Params) -> Any:
    state = manager_state(p.raw("quota_state", None))
    entity = quota_entity(p.raw("entity"))
    rate = p.number("rate", nullable=True)
    return {"quota_state": manager_json(_wrap("rate", lambda: Q.set_quota(state, entity, rate)))}


# the quota-handlers models with the [quota_handlers] keys (issue 26: retries, validateOnly), the model's own
# step: checker/oracle/quota_handlers_oracle.py


def _quota_handlers(p: Params, name: str) -> Any:
    from kreassign.checker.oracle import quota_handlers_oracle as QH

    given = {f: p.raw(f) for f in QH.FIELDS[name] if f in p.req}
    try:
        return QH.OPS[name](p.req.get("profile"), given)
    except QH.NotEnabled as e:
        raise OracleError(INVALID_ACTION, f"NotEnabled: {e}") from None
    except ValueError as e:
        raise OracleError(INVALID_FIELD, str(e)) from None


@op("quota_handlers_init", "profile?, quota_handlers?",
    "kip599-handlers[-rate]: the [quota_handlers] configuration as read, the initial state, the enabled actions")
def op_quota_handlers_init(p: Params) -> Any:
    return _quota_handlers(p, "quota_handlers_init")


@op("quota_handlers_step", "profile?, quota_handlers?, state?, action",
    "kip599-handlers[-rate]: the model's step: next state, the client's answer, the properties' verdicts")
def op_quota_handlers_step(p: Params) -> Any:
    return _quota_handlers(p, "quota_handlers_step")


@op("quota_handlers_check", "profile?, quota_handlers?, state?, action, observed_state? | observed_response?",
    "kip599-handlers[-rate]: judge an observed step: verdict, field-level diff, violated properties")
def op_quota_handlers_check(p: Params) -> Any:
    return _quota_handlers(p, "quota_handlers_check")


# -- the session ---------------------------------------------------------------------------------------


class Oracle:
    """One oracle session: a default profile and the op table."""

    def __init__(self, profile: str = "kraft"):
        if profile not in PROFILES and profile not in QUOTA_PROFILES:
            raise ValueError(f"unknown profile {profile!r}; known: {', '.join(list(PROFILES) + list(QUOTA_PROFILES))}")
        self.profile = profile
        self.requests = 0
        self.errors = 0

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one decoded request (never raises)."""
        self.requests += 1
        rid = request.get("id") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict):
                raise OracleError(INVALID_REQUEST, f"expected a JSON object, got {_describe(request)}")
            name = request.get("op")
            if name is None:
                raise OracleError(INVALID_REQUEST, "op: missing required field")
            if not isinstance(name, str):
                raise OracleError(INVALID_REQUEST, f"op: expected a string, got {_describe(name)}")
            entry = OPS.get(name)
            if entry is None:
                raise OracleError(UNKNOWN_OP, f"op: unknown op {name!r} (known: {', '.join(OPS)})")
            params = Params(request, self)
            result = entry.func(params)
            params.check_unknown(name)
            return {"id": rid, "ok": True, "result": result}
        except OracleError as e:
            self.errors += 1
            return {"id": rid, "ok": False, "error": {"code": e.code, "message": e.message}}
        except RecursionError as e:  # pragma: no cover - absurdly nested input
            self.errors += 1
            return {"id": rid, "ok": False, "error": {"code": INVALID_REQUEST, "message": f"input too deep: {e}"}}
        except Exception as e:  # noqa: BLE001 - an oracle must not die on one request
            self.errors += 1
            return {"id": rid, "ok": False, "error": {"code": INTERNAL_ERROR, "message": f"{type(e).__name__}: {e}"}}

    def handle_line(self, line: str) -> dict[str, Any]:
        """Answer one request line (never raises)."""
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            message = f"invalid JSON at column {e.colno}: {e.msg}"
        except (ValueError, RecursionError) as e:  # an integer beyond Python's digit limit, nesting too deep
            message = f"invalid JSON: {' '.join(str(e).split())[:200]}"
        else:
            return self.handle(request)
        self.requests += 1
        self.errors += 1
        return {"id": None, "ok": False, "error": {"code": INVALID_JSON, "message": message}}


__all__ = ["OPS", "Oracle", "OracleError", "violated_properties"]
