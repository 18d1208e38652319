"""`kreassign status` and `plan --bootstrap-server` against real clusters (docs/status.md): KRaft of the newest
release (ELR off, as a cluster upgraded from 3.x keeps it) and ZooKeeper-mode 3.9.2, four brokers each. On each,
in order, the four situations the operator meets, each made on the cluster and named by `status` exactly:

1. throttles left behind: kafka-reassign-partitions.sh --execute --throttle on a move that completes, no --verify;
2. a destination broker down: [1,2] -> [1,3] with broker 3 gone before it caught up (KRaft accepts a fenced
   target; the ZooKeeper controller refuses a dead adding replica, so there broker 3 is frozen, the move sent,
   then broker 3 killed);
3. a retained replica out of the ISR under a rule that waits for it: broker 4 down, then a move that keeps it
   (KRaft: [2,4,1] -> [4,1], the replication factor shrinks, so 4.3+ waits for every target replica; 3.9's
   ZooKeeper controller: [2,4] -> [4,1], it always waits);
4. a cancel that would leave the partition leaderless: the move of 2 with brokers 1 and 2 stopped too; the
   cancel is then sent and the partition compared with what `status` said it would be.

Plus: `plan --bootstrap-server` gives the same verdicts as `plan --current` on the same cluster, and a cluster
that cannot be reached exits 3 within its timeout with one line naming the address."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cluster_checks import KAFKA_39, NEWEST
from kreassign.checker.cluster import ClusterSpec, procs, start_cluster
from kreassign.checker.scenarios import reassign_tool as RT
from kreassign.checker.scenarios import znodes

RATE = 1_000_000


def kreassign(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kreassign", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def status(c, *extra: str) -> tuple[int, dict]:
    r = kreassign("status", "--bootstrap-server", c.bootstrap, "--json", "--timeout", "20", *extra)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def part(result: dict, name: str) -> dict:
    return next(p for p in result["partitions"] if p["partition"] == name)


def listed(c, topic: str, timeout_s: float = 10.0) -> bool:
    return any(r["topic"] == topic for r in c.admin.list_reassignments(timeout_s=timeout_s))


def isr(c, topic: str) -> list[int]:
    return c.admin.describe_topics([topic])[topic]["partitions"][0]["isr"]


def gone(c, broker: int) -> None:
    c.wait_for(f"broker {broker} gone from the cluster's metadata",
               lambda: f"{broker} still listed" if broker in c.admin.broker_ids() else None, 60)


@pytest.mark.parametrize("version,mode", [(NEWEST, "kraft"), (KAFKA_39, "zk")])
def test_status_names_each_situation(version, mode, tmp_path):
    spec = ClusterSpec(version=version, mode=mode, brokers=4, elr=False if mode == "kraft" else None)
    with start_cluster(spec) as c:
        retained = {0: [2, 4, 1]} if mode == "kraft" else {0: [2, 4]}
        for topic, assignment in (("moving", {0: [1, 2]}), ("retained", retained), ("thr", {0: [1, 2]}),
                                  ("planned", {0: [1, 2]})):
            c.admin.create_topic(topic, assignment=assignment)
        c.wait_for("the topics in sync", lambda: None if all(
            len(p["partitions"][0]["isr"]) == len(p["partitions"][0]["replicas"])
            for p in c.admin.describe_topics(["moving", "retained", "thr", "planned"]).values()) else "not in sync", 60)

        rc, healthy = status(c)
        assert (rc, healthy["reassigning"], healthy["problems"]) == (0, 0, [])
        assert healthy["rules"]["profile"] == mode
        if mode == "kraft":
            assert healthy["rules"]["kafka_version"] == NEWEST and healthy["rules"]["elr"] == "off"

        # plan --bootstrap-server agrees with plan --current on the same cluster
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "planned", "partition": 0,
                                                                    "replicas": [3, 4]}]}))
        current = tmp_path / "current.json"
        current.write_text(json.dumps({"version": 1, "partitions": [{"topic": "planned", "partition": 0,
                                                                       "replicas": [1, 2]}]}))
        live = kreassign("plan", str(plan), "--bootstrap-server", c.bootstrap, "--json", "--jobs", "1")
        files = kreassign("plan", str(plan), "--current", str(current), "--profile", mode, "--json", "--jobs", "1")
        assert live.returncode == files.returncode, (live.stderr, files.stderr)
        a, b = json.loads(live.stdout), json.loads(files.stdout)
        assert a["profile"] == b["profile"] == mode
        strip = lambda ps: [{k: v for k, v in p.items() if k != "trace"} for p in ps]
        assert [[{k: v for k, v in f.items() if k != "trace"} for f in p["findings"]] for p in a["partitions"]] == \
            [[{k: v for k, v in f.items() if k != "trace"} for f in p["findings"]] for p in b["partitions"]]
        assert [p["verdict"] for p in a["partitions"]] == [p["verdict"] for p in b["partitions"]]
        assert strip(a["partitions"])[0]["phases"] == strip(b["partitions"])[0]["phases"]
        assert a["cluster"]["live"] == [1, 2, 3, 4]

        # 1. throttles left behind: executed with --throttle, completed, never --verify'd
        RT.execute(c, "thr", 0, [1, 3], throttle_bps=RATE)
        c.wait_for("the throttled move done", lambda: "still moving" if listed(c, "thr") else None, 60)
        rc, left = status(c)
        assert rc == 1 and left["reassigning"] == 0
        behind = left["throttles"]["left_behind"]
        assert {"topic": "thr", "config": "leader.replication.throttled.replicas", "replicas": ["0:1", "0:2"]} in behind
        assert {"topic": "thr", "config": "follower.replication.throttled.replicas", "replicas": ["0:3"]} in behind
        assert sorted(e["broker"] for e in behind if "broker" in e) == [1, 2, 3]
        c.admin.alter_configs("topic", "thr", delete=list(RT.TOPIC_THROTTLES))
        for b in (1, 2, 3):
            c.admin.alter_configs("broker", str(b), delete=list(RT.BROKER_THROTTLES))

        # 2. a destination broker down
        if mode == "kraft":
            c.stop(3)
            gone(c, 3)
            assert c.admin.alter_reassignments([("moving", 0, [1, 3])])[0]["error_class"] is None
        else:
            znodes.move_controller_off(c, 3)  # a frozen controller would answer no request
            c.pause(3)  # still registered: the ZooKeeper controller accepts it as an adding replica

            def sent() -> str | None:
                # the Admin client may pick the frozen broker for a request and time out: send it again (the
                # same target: idempotent) until the controller lists it. Short timeouts, so that the frozen
                # broker's ZooKeeper session (6 s) rarely expires first; when it did (seen under CI load) the
                # controller refuses the dead adding replica for good: thaw broker 3 until it registers again,
                # then freeze it anew and resend.
                if listed(c, "moving", timeout_s=3):
                    return None
                error = c.admin.alter_reassignments([("moving", 0, [1, 3])], timeout_s=3)[0]["error_class"]
                if error == "InvalidReplicaAssignmentException":
                    c.resume(3)
                    c.wait_for("broker 3 registered again",
                               lambda: None if 3 in c.admin.broker_ids(timeout_s=3) else "3 not listed", 60)
                    c.pause(3)
                return error or "sent; not listed yet"
            c.wait_for("the move to a frozen broker accepted", sent, 90)
            c.kill(3)
            gone(c, 3)
        c.wait_for("the move listed", lambda: None if listed(c, "moving") else "not listed", 30)
        rc, stuck = status(c)
        p = part(stuck, "moving-0")
        assert rc == 1 and p["verdict"] == "stuck", p
        assert [(w["event"], w["broker"], w["role"]) for w in p["waits_on"]] == \
            [("broker_back", 3, "adding"), ("in_sync", 3, "adding")]
        events = [s["event"] for s in p["completion"] if not s["event"].startswith("the controller")]
        assert events == ["broker 3 comes back", "replica 3 joins the ISR"]
        assert (p["cancel"]["replicas"], p["cancel"]["leaderless"]) == ([1, 2], "no")
        assert p["cancel"]["leader"] in (1, 2)

        # 3. a retained replica out of the ISR, under a rule that waits for it
        c.stop(4)
        gone(c, 4)
        c.wait_for("broker 4 out of the ISR", lambda: "4 in ISR" if 4 in isr(c, "retained") else None, 60)
        assert c.admin.alter_reassignments([("retained", 0, [4, 1])])[0]["error_class"] is None
        c.wait_for("replica 1 in sync", lambda: None if 1 in isr(c, "retained") else "1 not in the ISR", 60)
        rc, waits = status(c)
        r = part(waits, "retained-0")
        assert rc == 1 and r["verdict"] == "stuck", r
        assert ("broker_back", 4, "retained") in [(w["event"], w["broker"], w["role"]) for w in r["waits_on"]]
        assert r["rf_before"] == (3 if mode == "kraft" else 2) and r["rf_after"] == 2

        # 4. a cancel that would leave the partition leaderless: the move of step 2 with its original brokers gone
        c.restart(4)
        for b in (1, 2):
            c.stop(b)
            gone(c, b)
        rc, leaderless = status(c)
        p = part(leaderless, "moving-0")
        assert rc == 1 and p["leader"] is None, p
        cancel = p["cancel"]
        assert cancel["refused"] is None and cancel["leaderless"] == "now", cancel
        (reply,) = c.admin.alter_reassignments([("moving", 0, None)])
        assert reply["error_class"] is None, reply
        c.wait_for("the cancel applied", lambda: "still listed" if listed(c, "moving") else None, 30)
        after = c.admin.describe_topics(["moving"])["moving"]["partitions"][0]
        assert (after["replicas"], after["leader"], sorted(after["isr"])) == \
            (cancel["replicas"], cancel["leader"], sorted(cancel["isr"])), (after, cancel)


def test_unreachable_cluster_exits_3_naming_the_address():
    (port,) = procs.free_ports(1)
    address = f"127.0.0.1:{port}"
    r = kreassign("status", "--bootstrap-server", address, "--timeout", "5")
    assert r.returncode == 3, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("kreassign status: ") and address in lines[-1], r.stderr
    assert "Traceback" not in r.stderr
    assert "within 5 s" in lines[-1]  # ended by Kafka's own timeout, the one --timeout sets
