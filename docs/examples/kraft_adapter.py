#!/usr/bin/env python3
"""A standalone KRaft reassignment implementation speaking kreassign's adapter protocol.

It does not import kreassign: it is what an adapter in another language looks like. It
reads one JSON request per line on stdin and writes one JSON reply per line on stdout
(docs/adapters.md):

    {"op": "reset", "profile": "kraft", "state": {...}}  -> {"ok": true}
    {"op": "apply", "action": {...}}                     -> {"ok": true, "state": {...}, "response": {...}}
    {"op": "close"}                                      -> {"ok": true}, then exit

and works on the JSON form of states and actions itself (docs/state-format.md), with
its own implementation of the KRaft controller's rules (KAFKA-SEMANTICS.md, "kraft"):
planning, AlterPartitionReassignments with Kafka's checks and messages, cancellation
(revert), ListPartitionReassignments, AlterPartition / ISR changes, broker fencing and
unfencing, PREFERRED / UNCLEAN elections, the replication layer (Produce, FollowerFetch,
high watermark). Profiles: kraft and kraft-3.7.

Run with `--bug cancel-keeps-adding-in-isr` to plant the bug of docs/examples/buggy_kraft.py
(the revert forgets to drop the adding replicas from the ISR). Diagnostics go to stderr.

Usage: kreassign check --profile kraft --impl "exec:python3 docs/examples/kraft_adapter.py"
"""

import argparse
import copy
import json
import sys

NO_LEADER = -1
NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
NOT_LEADER_OR_FOLLOWER = 6
INVALID_REPLICA_ASSIGNMENT = 39
INVALID_REQUEST = 42
OPERATION_NOT_ATTEMPTED = 55
FENCED_LEADER_EPOCH = 74
ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
ELECTION_NOT_NEEDED = 84
PREFERRED_LEADER_NOT_AVAILABLE = 80
NO_REASSIGNMENT_IN_PROGRESS = 85
INVALID_UPDATE_VERSION = 95
INELIGIBLE_REPLICA = 107
NEW_LEADER_ELECTED = 108

NOT_CONTROLLER = 41
STALE_BROKER_EPOCH = 77

# ElectLeaders answers the errors' default messages (Kafka's ApiError(Errors.X))
MESSAGES = {
    ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
}

NAMES = {
    NOT_CONTROLLER: "NOT_CONTROLLER", STALE_BROKER_EPOCH: "STALE_BROKER_EPOCH",
    INELIGIBLE_REPLICA: "INELIGIBLE_REPLICA", OPERATION_NOT_ATTEMPTED: "OPERATION_NOT_ATTEMPTED",
    NOT_LEADER_OR_FOLLOWER: "NOT_LEADER_OR_FOLLOWER", FENCED_LEADER_EPOCH: "FENCED_LEADER_EPOCH",
    INVALID_UPDATE_VERSION: "INVALID_UPDATE_VERSION", INVALID_REQUEST: "INVALID_REQUEST",
    NEW_LEADER_ELECTED: "NEW_LEADER_ELECTED", ELECTION_NOT_NEEDED: "ELECTION_NOT_NEEDED",
    PREFERRED_LEADER_NOT_AVAILABLE: "PREFERRED_LEADER_NOT_AVAILABLE",
    ELIGIBLE_LEADERS_NOT_AVAILABLE: "ELIGIBLE_LEADERS_NOT_AVAILABLE", LEADER_NOT_AVAILABLE: "LEADER_NOT_AVAILABLE",
}


class Refused(Exception):
    """The action names something that does not exist: answered {"ok": false}."""


class ApiError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def minus(a, b):
    """a − b keeping a's order."""
    return [x for x in a if x not in b]


def ack(code=NONE, message=None):
    return {"type": "Ack", "error_code": code, "error_message": message}


class Kraft:
    def __init__(self, profile, bug=None):
        if profile not in ("kraft", "kraft-3.7"):
            raise Refused(f"profile: this adapter implements kraft and kraft-3.7, not {profile!r}")
        self.profile = profile
        self.bug = bug
        self.state = None

    # -- lookups ------------------------------------------------------------------------------
    def broker(self, b):
        for x in self.state["brokers"]:
            if x["id"] == b:
                return x
        return None

    def registered(self, b):
        x = self.broker(b)
        return x is not None and x["registered"]

    def active(self, b):
        x = self.broker(b)
        return x is not None and x["registered"] and x["active"]

    def topic(self, name):
        for t in self.state["topics"]:
            if t["name"] == name:
                return t
        return None

    def partition(self, name, index):
        t = self.topic(name)
        if t is None:
            raise Refused(f"unknown topic {name!r}")
        if not 0 <= index < len(t["partitions"]):
            raise Refused(f"unknown partition {name}-{index}")
        return t["partitions"][index]

    def election_of(self, name):
        t = self.topic(name)
        return "UNCLEAN" if t is not None and t["unclean_leader_election"] else "ONLINE"

    # -- PartitionChangeBuilder ------------------------------------------------------------------
    def complete(self, r, i, ar, rr):
        if not ar and not rr:
            return r, i, ar, rr
        if rr:
            i2, r2 = minus(i, rr), minus(r, rr)
        else:
            i2, r2 = i, r
        if not i2 or not r2:
            return r, i, ar, rr
        done = set(ar) <= set(i2) if self.profile == "kraft-3.7" else set(r2) <= set(i2)
        return (r2, i2, [], []) if done else (r, i, ar, rr)

    def elect(self, leader, replicas, isr, election):
        def valid(b):
            return b in isr and self.active(b)

        if election == "PREFERRED":
            if replicas and valid(replicas[0]):
                return replicas[0], False
            if leader != NO_LEADER and valid(leader):
                return leader, False
            for b in replicas[1:]:
                if valid(b):
                    return b, False
            return NO_LEADER, False
        if leader != NO_LEADER and valid(leader):
            return leader, False
        for b in replicas:
            if valid(b):
                return b, False
        if election == "UNCLEAN":
            for b in replicas:
                if self.active(b):
                    return b, True
        return NO_LEADER, False

    def build(self, p, replicas=None, isr=None, adding=None, removing=None, election="ONLINE"):
        """The change record (a dict of fields), or None when nothing changes."""
        r = p["replicas"] if replicas is None else replicas
        i = p["isr"] if isr is None else isr
        ar = p["adding"] if adding is None else adding
        rr = p["removing"] if removing is None else removing
        r, i, ar, rr = self.complete(list(r), list(i), list(ar), list(rr))
        rec = {}
        leader, unclean = self.elect(p["leader"], r, i, election)
        if leader != p["leader"]:
            rec["leader"] = leader
            if unclean:
                rec["isr"] = [leader]
        if "leader" not in rec and not set(p["replicas"]) <= set(r):
            rec["leader"] = p["leader"]
        if "isr" not in rec and i and i != p["isr"]:
            rec["isr"] = i
        if r and r != p["replicas"]:
            rec["replicas"] = r
        if rr != p["removing"]:
            rec["removing"] = rr
        if ar != p["adding"]:
            rec["adding"] = ar
        return rec or None

    @staticmethod
    def merge(p, rec):
        if not rec:
            return p
        q = dict(p)
        q.update(rec)
        if "leader" in rec:
            q["leader_epoch"] = p["leader_epoch"] + 1
        q["partition_epoch"] = p["partition_epoch"] + 1
        return q

    def put(self, name, index, p):
        self.topic(name)["partitions"][index] = p

    # -- AlterPartitionReassignments ------------------------------------------------------------
    def alter_reassignments(self, request):
        topics = request.get("topics")
        if topics is None or any(t.get("partitions") is None for t in topics):
            return {"type": "AlterPartitionReassignmentsResponse", "error_code": INVALID_REQUEST,
                    "error_message": "null topics or partitions are not supported", "responses": [],
                    "throttle_time_ms": 0}
        records, responses = [], []
        for t in topics:
            parts = []
            for rp in t["partitions"]:
                code, msg = NONE, None
                try:
                    rec = self.alter_one(t["name"], rp["partition_index"], rp["replicas"])
                    if rec:
                        records.append((t["name"], rp["partition_index"], rec))
                except ApiError as e:
                    code, msg = e.code, e.message
                parts.append({"partition_index": rp["partition_index"], "error_code": code, "error_message": msg})
            responses.append({"name": t["name"], "partitions": parts})
        for name, index, rec in records:
            self.put(name, index, self.merge(self.topic(name)["partitions"][index], rec))
        return {"type": "AlterPartitionReassignmentsResponse", "error_code": NONE, "error_message": None,
                "responses": responses, "throttle_time_ms": 0}

    def alter_one(self, name, index, replicas):
        t = self.topic(name)
        if t is None:
            raise ApiError(UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}.")
        if not 0 <= index < len(t["partitions"]):
            raise ApiError(UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {name}:{index}.")
        p = t["partitions"][index]
        if replicas is None:
            return self.cancel(name, index, p)
        if not replicas:
            raise ApiError(INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")
        prev = None
        for b in sorted(replicas):
            if not self.registered(b):
                raise ApiError(INVALID_REPLICA_ASSIGNMENT,
                               f"The manual partition assignment includes broker {b}, but no such broker is registered.")
            if b == prev:
                raise ApiError(INVALID_REPLICA_ASSIGNMENT,
                               f"The manual partition assignment includes the broker {b} more than once.")
            prev = b
        current = p["replicas"]
        removing = sorted(set(current) - set(replicas))
        adding = sorted(set(replicas) - set(current))
        planned = list(replicas) + removing
        targets = {}
        if planned != current:
            targets["replicas"] = planned
        if removing:
            targets["removing"] = removing
        if adding:
            targets["adding"] = adding
        return self.build(p, **targets)

    def cancel(self, name, index, p):
        if not p["adding"] and not p["removing"]:
            raise ApiError(NO_REASSIGNMENT_IN_PROGRESS, None)
        replicas = minus(p["replicas"], p["adding"])
        if self.bug == "cancel-keeps-adding-in-isr":
            isr = list(p["isr"])  # BUG: the adding replicas that joined the ISR stay in it
        else:
            isr = minus(p["isr"], p["adding"])
        unclean = False
        if not isr:
            isr, unclean = [replicas[0]], True
        election = self.election_of(name)
        if unclean and election != "UNCLEAN":
            raise ApiError(INVALID_REPLICA_ASSIGNMENT,
                           f"Unable to revert partition assignment for {name}:{index} because it would require an "
                           "unclean leader election.")
        return self.build(p, replicas=replicas, isr=isr, adding=[], removing=[], election=election)

    def list_reassignments(self, request):
        if request.get("topics") is None:
            wanted = [(t["name"], range(len(t["partitions"]))) for t in self.state["topics"]]
        else:
            wanted = [(t["name"], t["partition_indexes"]) for t in request["topics"]]
        out = []
        for name, indexes in wanted:
            t = self.topic(name)
            ongoing = []
            for i in indexes:
                if t is None or not 0 <= i < len(t["partitions"]):
                    continue
                p = t["partitions"][i]
                if p["adding"] or p["removing"]:
                    ongoing.append({"partition_index": i, "replicas": p["replicas"], "adding_replicas": p["adding"],
                                    "removing_replicas": p["removing"]})
            if ongoing:
                out.append({"name": name, "partitions": ongoing})
        return {"type": "ListPartitionReassignmentsResponse", "error_code": NONE, "error_message": None,
                "topics": out, "throttle_time_ms": 0}

    # -- AlterPartition ------------------------------------------------------------------------------
    def alter_partition(self, name, index, leader, new_isr, leader_epoch, partition_epoch, version=3):
        # ReplicationControlManager.validateAlterPartitionData's order (checked against Kafka 3.9, docs/kafka.md)
        x = self.broker(leader)
        if x is None or not x["registered"]:
            return ack(STALE_BROKER_EPOCH, NAMES[STALE_BROKER_EPOCH])
        p = self.partition(name, index)
        if leader_epoch > p["leader_epoch"] or partition_epoch > p["partition_epoch"]:
            return ack(NOT_CONTROLLER, NAMES[NOT_CONTROLLER])
        if leader_epoch < p["leader_epoch"]:
            return ack(FENCED_LEADER_EPOCH, NAMES[FENCED_LEADER_EPOCH])
        if leader != p["leader"]:
            return ack(INVALID_REQUEST, NAMES[INVALID_REQUEST])
        if partition_epoch < p["partition_epoch"]:
            return ack(INVALID_UPDATE_VERSION, NAMES[INVALID_UPDATE_VERSION])
        if len(set(new_isr)) != len(new_isr) or any(b < 0 or b not in p["replicas"] for b in new_isr):
            return ack(INVALID_REQUEST, NAMES[INVALID_REQUEST])
        if leader not in new_isr:
            return ack(INVALID_REQUEST, NAMES[INVALID_REQUEST])
        if any(not self.active(b) for b in new_isr):
            code = INELIGIBLE_REPLICA if version > 1 else OPERATION_NOT_ATTEMPTED
            return ack(code, NAMES[code])
        rec = self.build(p, isr=list(new_isr), election=self.election_of(name))
        self.put(name, index, self.merge(p, rec))
        if rec and "leader" in rec and rec["leader"] != leader:
            code = NEW_LEADER_ELECTED if version > 1 else FENCED_LEADER_EPOCH
            return ack(code, NAMES[code])
        return ack()

    def isr_change(self, name, index, new_isr):
        p = self.partition(name, index)
        return self.alter_partition(name, index, p["leader"], new_isr, p["leader_epoch"], p["partition_epoch"])

    # -- brokers and elections ------------------------------------------------------------------------
    def need_broker(self, b):
        x = self.broker(b)
        if x is None:
            raise Refused(f"unknown broker {b}")
        return x

    def broker_fail(self, b):
        x = self.need_broker(b)
        if not x["active"]:
            return ack()
        x["active"] = False
        for t in self.state["topics"]:
            for i, p in enumerate(t["partitions"]):
                if b in p["isr"]:
                    rec = self.build(p, isr=[r for r in p["isr"] if r != b], election=self.election_of(t["name"]))
                    t["partitions"][i] = self.merge(p, rec)
        return ack()

    def broker_recover(self, b):
        x = self.need_broker(b)
        if x["active"] or not x["registered"]:
            return ack()
        x["active"] = True
        for t in self.state["topics"]:
            for i, p in enumerate(t["partitions"]):
                if p["leader"] == NO_LEADER:
                    t["partitions"][i] = self.merge(p, self.build(p, election=self.election_of(t["name"])))
        return ack()

    def elect_leaders(self, name, index, election):
        # ReplicationControlManager.electLeader: the errors' default messages; a failed election writes nothing
        if election not in ("PREFERRED", "UNCLEAN"):
            raise Refused(f"unknown election type {election!r}")
        p = self.partition(name, index)
        preferred = p["replicas"][0] if p["replicas"] else NO_LEADER
        if (election == "PREFERRED" and p["leader"] == preferred) or (election == "UNCLEAN" and p["leader"] != NO_LEADER):
            return ack(ELECTION_NOT_NEEDED, MESSAGES[ELECTION_NOT_NEEDED])
        rec = self.build(p, election=election)
        if not rec:
            code = PREFERRED_LEADER_NOT_AVAILABLE if election == "PREFERRED" else ELIGIBLE_LEADERS_NOT_AVAILABLE
            return ack(code, MESSAGES[code])
        self.put(name, index, self.merge(p, rec))
        return ack()

    # -- replication layer --------------------------------------------------------------------------------
    @staticmethod
    def log_of(log, b):
        for x, entries in log["logs"]:
            if x == b:
                return list(entries)
        return []

    @staticmethod
    def with_log(log, b, entries):
        d = {x: e for x, e in log["logs"]}
        d[b] = entries
        return dict(log, logs=[[x, d[x]] for x in sorted(d)])

    @staticmethod
    def prefix(a, b):
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n

    def refresh(self, p):
        log = p["log"]
        if log is None or p["leader"] == NO_LEADER:
            return p
        lead = self.log_of(log, p["leader"])
        shared = min((self.prefix(lead, self.log_of(log, b)) for b in p["isr"]), default=len(lead))
        hw = min(max(log["hw"], shared), len(lead))
        committed = log["committed"]
        if hw > len(committed) and lead[: len(committed)] == committed:
            committed = lead[:hw]
        if hw == log["hw"] and committed == log["committed"]:
            return p
        return dict(p, log=dict(log, hw=hw, committed=committed))

    def produce(self, name, index):
        p = self.partition(name, index)
        if p["log"] is None:
            raise Refused(f"{name}-{index} has no replication layer")
        if p["leader"] == NO_LEADER:
            return ack(LEADER_NOT_AVAILABLE, NAMES[LEADER_NOT_AVAILABLE])
        entries = self.log_of(p["log"], p["leader"]) + [p["leader_epoch"]]
        self.put(name, index, self.refresh(dict(p, log=self.with_log(p["log"], p["leader"], entries))))
        return ack()

    def follower_fetch(self, name, index, b):
        p = self.partition(name, index)
        if p["log"] is None:
            raise Refused(f"{name}-{index} has no replication layer")
        if p["leader"] == NO_LEADER or b == p["leader"] or b not in p["replicas"]:
            return ack(NOT_LEADER_OR_FOLLOWER, NAMES[NOT_LEADER_OR_FOLLOWER])
        lead = self.log_of(p["log"], p["leader"])
        n = self.prefix(lead, self.log_of(p["log"], b))
        new = lead[: n + 1] if n < len(lead) else lead[:n]
        self.put(name, index, self.refresh(dict(p, log=self.with_log(p["log"], b, new))))
        return ack()

    # -- dispatch ------------------------------------------------------------------------------------------
    def apply(self, a):
        if self.state is None:
            raise Refused("apply before reset")
        kind = a.get("type")
        if kind == "Reassign":
            req = {"topics": [{"name": a["topic"], "partitions": [{"partition_index": a["partition"],
                                                                  "replicas": a["replicas"]}]}]}
            response = self.alter_reassignments(req)
        elif kind == "Cancel":
            req = {"topics": [{"name": a["topic"], "partitions": [{"partition_index": a["partition"], "replicas": None}]}]}
            response = self.alter_reassignments(req)
        elif kind == "AlterReassignments":
            response = self.alter_reassignments(a["request"])
        elif kind == "ListReassignments":
            response = self.list_reassignments(a.get("request") or {"topics": None})
        elif kind == "LeaderExpandIsr":
            p = self.partition(a["topic"], a["partition"])
            self.need_broker(a["broker"])
            response = self.isr_change(a["topic"], a["partition"], p["isr"] + [a["broker"]])
        elif kind == "LeaderShrinkIsr":
            p = self.partition(a["topic"], a["partition"])
            response = self.isr_change(a["topic"], a["partition"], [b for b in p["isr"] if b != a["broker"]])
        elif kind == "AlterPartition":
            response = self.alter_partition(a["topic"], a["partition"], a["leader"], a["new_isr"], a["leader_epoch"],
                                            a["partition_epoch"], a.get("version", 3))
        elif kind == "BrokerFail":
            response = self.broker_fail(a["broker"])
        elif kind == "BrokerRecover":
            response = self.broker_recover(a["broker"])
        elif kind == "ElectLeaders":
            response = self.elect_leaders(a["topic"], a["partition"], a.get("election", "PREFERRED"))
        elif kind == "ControllerFailover":
            response = ack()  # the metadata log holds everything: nothing changes
        elif kind == "Produce":
            response = self.produce(a["topic"], a["partition"])
        elif kind == "FollowerFetch":
            response = self.follower_fetch(a["topic"], a["partition"], a["broker"])
        else:
            raise Refused(f"action {kind!r} is not supported by the kraft profile")
        # with the replication layer on, every high watermark is refreshed after an action
        for t in self.state["topics"]:
            t["partitions"] = [self.refresh(p) for p in t["partitions"]]
        return response


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bug", choices=["cancel-keeps-adding-in-isr"], help="plant a bug (for demonstrations)")
    args = parser.parse_args(argv)
    impl = None

    def reply(obj):
        sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "reset":
                impl = Kraft(req["profile"], args.bug)
                impl.state = copy.deepcopy(req["state"])
                reply({"ok": True})
            elif op == "apply":
                if impl is None:
                    raise Refused("apply before reset")
                before = copy.deepcopy(impl.state)
                try:
                    response = impl.apply(req["action"])
                except Exception:
                    impl.state = before  # an action either applies whole or not at all
                    raise
                reply({"ok": True, "state": impl.state, "response": response})
            elif op == "close":
                reply({"ok": True})
                return 0
            else:
                reply({"ok": False, "error": f"op: unknown op {op!r}"})
        except Refused as e:
            reply({"ok": False, "error": str(e)})
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            print(f"kraft_adapter: bad request {line.strip()[:200]}: {type(e).__name__}: {e}", file=sys.stderr)
            reply({"ok": False, "error": f"bad request: {type(e).__name__}: {e}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
