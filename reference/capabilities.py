"""The actions of the optional capabilities (issue 14), applied the same way by every user.

`Profile.apply` knows Kafka's controller actions. The capabilities the bounds switch on add
actions that run *beside* or *over* the profile, so they are not profile methods:

- `ToolExecute` / `ToolCancel` / `ToolVerify`: `kafka-reassign-partitions.sh` over the
  profile (`throttles.ReassignTool`);
- `CreatePartitions`: a topic grows (`topic_changes.create_partitions`);
- `BrokerReplay`: a broker acts on the metadata it has replayed (`broker_replicas`);
- `AutoLeaderBalance`: the controller's periodic preferred-leader balancing (`leader_balance`).
- `ReplicaFetch` / `LagExpire` / `LeaderMaybeShrinkIsr` / `AlterPartitionArrive`: the leaders' ISR
  maintenance and the followers' fetchers (`broker_isr`, `broker_isr.LeaderIsrManager`);
- `ZnodeReassignBatch` / `ZnodeDelete`: /admin/reassign_partitions batches and the forced
  cancel before KIP-455 (`znode_batch`, `zk_znode_batch.ZnodeBatch`);
- `ControllerResign` / `ControllerElect`: the zk controller's identity (`zk_events`, `zk_events.ControllerElection`).
- `RebalancerRead` / `RebalancerMove` / `RebalancerCancel`, `AutoThrottlerRead` / `AutoThrottlerWrite`,
  `OperatorExecute` / `OperatorVerify` / `OperatorClear`, `BadPlanExecute` / `BadPlanAlter`: tools and
  automation acting beside the controller (`actors`, `actors.ActorRules`).

`Capabilities.apply(profile, state, action)` is the single dispatch for all of them (and
hands every other action to `profile.apply`): the explorer's model, the oracle, the
differential checker and trace validation all call it, so a trace or request using a new
action means the same thing everywhere. Each rule is a replaceable strategy (a field), so a
test can plant a deliberately broken variant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kreassign.spec import actions as A
from kreassign.spec.state import ClusterState

from .actors import ActorRules
from .broker_isr import LeaderIsrManager
from .broker_replicas import BrokerReplicaManager
from .enabled_actions import get_partition
from .kraft import KraftProfile
from .leader_balance import auto_leader_balance
from .profile_base import Profile
from .steps import ActionNotSupported, Step
from .throttles import TOOL_ACTIONS, ReassignTool
from .topic_changes import RfRule, create_partitions, delete_topic, partition_zero_replicas
from .zk_events import KAFKA_ELECTION, ControllerElection
from .zk_znode_batch import ZnodeBatch

#: the action types `Capabilities.apply` handles itself (everything else goes to the profile)
CAPABILITY_ACTIONS: tuple[type, ...] = TOOL_ACTIONS + (A.CreatePartitions, A.BrokerReplay, A.AutoLeaderBalance,
                                                        *A.TOPIC_DELETION_ACTIONS, *A.ZNODE_BATCH_ACTIONS,
                                                        *A.ZK_EVENT_ACTIONS, *A.BROKER_ISR_ACTIONS, *A.ACTOR_ACTIONS)


@dataclass(frozen=True)
class Capabilities:
    """The rules of the capability actions; Kafka's by default, each replaceable by a test."""

    tool: ReassignTool = field(default_factory=ReassignTool)  # kafka-reassign-partitions.sh
    rf_rule: RfRule = partition_zero_replicas  # CreatePartitions' replication factor (partition 0's replicas)
    replicas: BrokerReplicaManager = field(default_factory=BrokerReplicaManager)  # the logs brokers host
    balance_skips_reassigning: bool = False  # Kafka < 3.4 (KAFKA-10149)
    topic_deletion: Any = delete_topic  # DeleteTopic / ResumeTopicDeletion: (profile, state, action) -> Step
    election: ControllerElection = KAFKA_ELECTION  # zk: ControllerResign / ControllerElect (bounds: zk_events)
    znode_batch: ZnodeBatch = field(default_factory=ZnodeBatch)  # ZnodeReassignBatch / ZnodeDelete (zk_znode_batch)
    isr: LeaderIsrManager = field(default_factory=LeaderIsrManager)  # the leaders' ISR maintenance (broker_isr)
    actors: ActorRules = field(default_factory=ActorRules)  # tools and automation beside the controller (actors)

    def apply(self, profile: Profile, state: ClusterState, action: Any) -> Step:
        """The reference's step for one action: a capability's, or the profile's (with the leaders' ISR
        maintenance on, `broker_isr`, every step goes through it: reference/broker_isr.py)."""
        if state.broker_isr is not None:
            return self.isr.apply(profile, state, action, self._apply)
        return self._apply(profile, state, action)

    def _apply(self, profile: Profile, state: ClusterState, action: Any) -> Step:
        if isinstance(action, A.ACTOR_ACTIONS):  # first: some subclass the tool's and the admin's actions
            return self.actors.apply(profile, state, action, self.tool)
        if isinstance(action, TOOL_ACTIONS):
            get_partition(state, action.topic, action.partition)  # the tool's JSON names a partition that exists
            return self.tool.apply(profile, state, action)
        if isinstance(action, A.CreatePartitions):
            if state.zk is not None or state.kip236 is not None:
                # the controller keeps per-partition state CreatePartitions does not update yet
                raise ActionNotSupported(f"profile {profile.name}: CreatePartitions is not modelled for a "
                                         "controller with per-partition state")
            kraft = isinstance(profile, KraftProfile)
            return create_partitions(state, action.topic, action.count, self.rf_rule, kraft=kraft,
                                     cordon_wording=kraft and profile.placer_names_cordoned_dirs)
        if isinstance(action, A.BrokerReplay):
            return self.replicas.replay(state, action.broker)
        if isinstance(action, A.AutoLeaderBalance):
            return auto_leader_balance(profile, state, skip_while_reassigning=self.balance_skips_reassigning)
        if isinstance(action, A.TOPIC_DELETION_ACTIONS):
            return self.topic_deletion(profile, state, action)
        if isinstance(action, A.ZK_EVENT_ACTIONS):
            return self.election.apply(state, action)
        if isinstance(action, A.ZNODE_BATCH_ACTIONS):
            return self.znode_batch.apply(profile, state, action)
        return profile.apply(state, action)

    def allows(self, state: ClusterState, action: Any) -> bool:
        """Is `action` possible at all given what the brokers host? A follower without the partition's
        log cannot fetch, so cannot join the ISR (only while the brokers' logs are modelled)."""
        if state.hosted is not None and isinstance(action, A.LeaderExpandIsr):
            return self.replicas.can_fetch(state, action.topic, action.partition, action.broker)
        return True


#: Kafka's rules, for the callers that have no broken variant to plant
KAFKA = Capabilities()


def apply_action(profile: Profile, state: ClusterState, action: Any) -> Step:
    """`KAFKA.apply`: any spec action, the capability actions included, with Kafka's rules."""
    return KAFKA.apply(profile, state, action)


__all__ = ["CAPABILITY_ACTIONS", "KAFKA", "Capabilities", "apply_action"]
