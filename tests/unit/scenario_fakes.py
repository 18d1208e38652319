"""A stand-in for a real cluster that does what the model does (no JVM): the scenario runner and conformance
campaigns are tested against it, with a planted difference where a test needs a divergence."""

from kreassign.checker.scenarios import mapping
from kreassign.spec import actions as A

#: error code -> Kafka's exception class, the other way round from mapping.EXCEPTION_CODES
EXCEPTION_OF = {code: name for name, code in mapping.EXCEPTION_CODES.items()}


class ModelAdmin:
    """Kafka's Admin client answered from the model's settled state (optionally with a planted difference)."""

    def __init__(self, model, wrong_cancel=False):
        self.model, self.wrong_cancel = model, wrong_cancel
        self.state = mapping.settle(model, model.init_states()[0])[0]
        self.topic = None

    def apply(self, action):
        nxt, label = self.model.step(self.state, action)
        self.state = mapping.settle(self.model, nxt)[0]
        return label

    def create_topic(self, name, assignment, configs):
        assert assignment == {0: [1, 2, 3]} and configs["min.insync.replicas"] == "1"
        self.topic = name

    def alter_reassignments(self, changes):
        [(topic, p, target)] = changes
        action = A.Cancel("t", p) if target is None else A.Reassign("t", p, tuple(target))
        code = mapping.response_code(self.apply(action).response, p)
        if self.wrong_cancel and target is None:
            code = 0 if code else 85
        return [{"topic": topic, "partition": p, "error_class": EXCEPTION_OF[code] if code else None}]

    def describe_topics(self, names):
        c = self.state.cluster
        parts = [{"partition": i, "replicas": list(p.replicas), "isr": list(p.isr),
                  "leader": p.leader if p.leader >= 0 else None, "elr": list(p.elr)}
                 for i, p in enumerate(c.topic("t").partitions)]
        return {self.topic: {"partitions": parts}}

    def list_reassignments(self):
        return [{"topic": self.topic, "partition": i, "adding": list(p.adding), "removing": list(p.removing)}
                for i, p in enumerate(self.state.cluster.topic("t").partitions) if p.reassigning]

    def broker_ids(self):
        return [b.id for b in self.state.cluster.brokers if b.active]

    def quorum(self):
        return {"leader": 3000}


class ModelCluster:
    controllers = (3000,)

    def __init__(self, model, **kw):
        from types import SimpleNamespace

        from kreassign.checker.cluster import ClusterSpec

        self.spec = ClusterSpec(version="4.4.0", mode="kraft", controllers=1, brokers=4)
        self.admin = ModelAdmin(model, **kw)
        self.nodes = [SimpleNamespace(name=f"broker-{b}", role="broker", state="running") for b in (1, 2, 3, 4)]

    def wait_for(self, what, check, timeout_s, nodes=None):
        from kreassign.checker.cluster import ClusterError

        missing = check()
        if missing is not None:
            raise ClusterError(f"{what} did not happen within {timeout_s:.0f} s: {missing}")

    def kill(self, node):
        if node != 3000:
            self.admin.apply(A.BrokerFail(node))

    stop = kill

    def restart(self, node):
        self.admin.apply(A.ControllerFailover() if node == 3000 else A.BrokerRecover(node))

    def active_controller(self):
        return 3000


def tool_through_admin(monkeypatch):
    """Steps sent through Kafka's reassignment tool reach the stand-in's Admin answers (no JVM to run it in);
    the tool's own driver is tested in test_reassign_tool.py and the cluster tier."""
    from kreassign.checker.scenarios import reassign_tool

    monkeypatch.setattr(reassign_tool, "execute", lambda cluster, topic, partition, target, **kw:
                        cluster.admin.alter_reassignments([(topic, partition, list(target))])[0])
    monkeypatch.setattr(reassign_tool, "cancel", lambda cluster, topic, partition, **kw:
                        cluster.admin.alter_reassignments([(topic, partition, None)])[0])
