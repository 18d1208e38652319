"""ZooKeeper mode: what ZooKeeper holds about a scenario's topic, read with ZooKeeper's own client (the cluster's
Admin helper, `ClusterAdmin.znodes`), in the shape `mapping.znode_expectation` gives the model's:

- `/brokers/topics/<t>`: the assignment (`partitions`, `adding_replicas`, `removing_replicas`: TopicZNode);
- `/brokers/topics/<t>/partitions/<p>/state`: leader, isr, leader_epoch, controller_epoch (and its zkVersion);
- `/admin/reassign_partitions`: the topic's entries (written only by the legacy znode route: Kafka 3.9's
  KafkaController.processApiPartitionReassignment only ever removes entries, maybeRemoveFromZkReassignment);
- `/brokers/ids`: the registered brokers (ephemeral: a broker's session gone, its znode is gone);
- `/controller`, `/controller_epoch`: the controller broker and the epoch of its election.

The controller is moved (the model's ControllerFailover, no broker dying) by deleting `/controller`: every broker
watches it (KafkaController.ControllerChangeHandler.handleDeletion -> Reelect: maybeResign, then elect, which
increments `/controller_epoch` and runs onControllerFailover from what ZooKeeper holds).
"""

from __future__ import annotations

import json
from typing import Any

from kreassign.checker.cluster import Cluster

REASSIGN = "/admin/reassign_partitions"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
BROKER_IDS = "/brokers/ids"


def _connect(cluster: Cluster) -> str:
    return cluster.address("zookeeper")


def _json(node: dict[str, Any]) -> Any:
    return json.loads(node["data"]) if node.get("exists") and node.get("data") else None


def read(cluster: Cluster, paths: list[str], timeout_s: float = 10.0) -> dict[str, dict[str, Any]]:
    """The raw znodes ({path: {"exists", "data", "version", "children"}})."""
    return cluster.admin.znodes(_connect(cluster), paths, timeout_s)


def controller(cluster: Cluster) -> tuple[int | None, int | None]:
    """(the controller broker from /controller or None, the epoch in /controller_epoch or None)."""
    z = read(cluster, [CONTROLLER, CONTROLLER_EPOCH])
    c, e = _json(z[CONTROLLER]), _json(z[CONTROLLER_EPOCH])
    return (c["brokerid"] if isinstance(c, dict) else None), (e if isinstance(e, int) else None)


def observe(cluster: Cluster, topic: str, partitions: list[int]) -> dict[str, Any]:
    """The topic as ZooKeeper holds it: {"partitions": {p: {"replicas", "adding", "removing", "leader", "isr"
    (sorted), "leader_epoch", "zk_version"}}, "reassign_partitions": the topic's entries, "brokers",
    "controller", "controller_epoch"}."""
    tpath = f"/brokers/topics/{topic}"
    states = {p: f"{tpath}/partitions/{p}/state" for p in partitions}
    z = read(cluster, [tpath, *states.values(), REASSIGN, BROKER_IDS, CONTROLLER, CONTROLLER_EPOCH])
    assignment = _json(z[tpath]) or {}
    parts: dict[str, Any] = {}
    for p in partitions:
        key = str(p)
        state = _json(z[states[p]]) or {}
        parts[key] = {
            "replicas": assignment.get("partitions", {}).get(key),
            "adding": assignment.get("adding_replicas", {}).get(key, []),
            "removing": assignment.get("removing_replicas", {}).get(key, []),
            "leader": state.get("leader"), "isr": sorted(state.get("isr", [])),
            "leader_epoch": state.get("leader_epoch"),
            "zk_version": z[states[p]].get("version") if z[states[p]].get("exists") else None}
    reassign = _json(z[REASSIGN]) or {}
    entries = sorted(({"partition": e["partition"], "replicas": e["replicas"]}
                      for e in reassign.get("partitions", []) if e.get("topic") == topic),
                     key=lambda e: e["partition"])
    ctrl, epoch = _json(z[CONTROLLER]), _json(z[CONTROLLER_EPOCH])
    return {"partitions": parts, "reassign_partitions": entries,
            "brokers": sorted(int(b) for b in z[BROKER_IDS].get("children", [])),
            "controller": ctrl["brokerid"] if isinstance(ctrl, dict) else None,
            "controller_epoch": epoch if isinstance(epoch, int) else None}


def registered(cluster: Cluster, broker: int) -> bool:
    """Is /brokers/ids/<broker> there (the broker's ZooKeeper session alive)?"""
    return bool(read(cluster, [f"{BROKER_IDS}/{broker}"])[f"{BROKER_IDS}/{broker}"]["exists"])


def reelect_controller(cluster: Cluster, timeout_s: float = 60.0) -> dict[str, Any]:
    """Delete /controller and wait until a controller of a higher epoch is elected and known to the brokers;
    {"before", "after", "epoch"}. A controller elected from scratch may be the same broker again."""
    before, epoch = controller(cluster)
    cluster.admin.delete_znode(_connect(cluster), CONTROLLER)
    found: dict[str, Any] = {}

    def elected() -> str | None:
        now, new_epoch = controller(cluster)
        if now is None or new_epoch is None or epoch is None or new_epoch <= epoch:
            return f"no controller elected after epoch {epoch} (/controller: {now}, epoch {new_epoch})"
        if cluster.admin.describe_cluster(timeout_s=5)["controller"] != now:
            return f"broker {now} elected (epoch {new_epoch}), not yet the brokers' controller"
        found.update(after=now, epoch=new_epoch)
        return None

    cluster.wait_for("a controller re-elected after /controller was deleted", elected, timeout_s)
    return {"before": before, **found}




def move_controller_off(cluster: Cluster, broker: int, tries: int = 6, timeout_s: float = 60.0) -> int:
    """Re-elect (delete /controller) until the controller is not `broker`; how many re-elections it took. A
    broker failure in the model is onBrokerFailure run by a surviving controller; the controller broker's own
    failure would be a failover too (its successor's onControllerFailover), a different path of Kafka's."""
    moves = 0
    while controller(cluster)[0] == broker:
        if moves == tries:
            raise ValueError(f"broker {broker} re-elected itself {tries} times as the controller")
        reelect_controller(cluster, timeout_s)
        moves += 1
    return moves


__all__ = ["BROKER_IDS", "CONTROLLER", "CONTROLLER_EPOCH", "REASSIGN", "controller", "move_controller_off", "observe",
           "read", "reelect_controller", "registered"]
