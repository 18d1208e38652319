"""Real Kafka clusters on demand, from a released Kafka resolved by Maven (issue 24, docs/cluster.md).

`start_cluster(ClusterSpec(...))` starts controllers (KRaft) or a ZooKeeper server (zk, Kafka 3.9) and
brokers, each its own JVM on 127.0.0.1, and returns a `Cluster` to use in a `with` block; leaving it, by any
way, removes every process and file of the cluster.
"""

from .admin import AdminError, AdminRequestError, ClusterAdmin
from .cluster import Cluster, ClusterError, NodeInfo, start_cluster
from .config import ClusterSpec, ClusterSpecError
from .external import ClusterUnreachable, ExternalAdmin, connect, reach

__all__ = ["AdminError", "AdminRequestError", "Cluster", "ClusterAdmin", "ClusterError", "ClusterSpec",
           "ClusterSpecError", "ClusterUnreachable", "ExternalAdmin", "NodeInfo", "connect", "reach",
           "start_cluster"]
