"""The actors' controller requests (reference/actors.py) against Kafka's own KRaft controller.

What reaches the controller is an AlterPartitionReassignments (RebalancerMove / RebalancerCancel /
BadPlanAlter send exactly the Reassign / Cancel the Kafka tier implements), so each one is stepped on
Kafka as that request and compared with the reference's step of the actor's action. Reads
(RebalancerRead, OperatorVerify, AutoThrottlerRead), the tool's validation (BadPlanExecute) and the
throttle configs (AutoThrottlerWrite, OperatorClear) never reach the controller: the Kafka tier has no
config store, so those stay reference-only (docs: the actors' section).
"""

from __future__ import annotations

from dataclasses import replace

from kreassign.checker.oracle.differential import compare_step
from kreassign.checker.oracle.kafka_lockstep import reference_profile
from kreassign.reference.capabilities import KAFKA
from kreassign.spec import actions as A
from kreassign.spec.state import ActorMemory, make_cluster


def test_actor_requests_are_answered_by_kafka_as_by_the_reference(kafka):
    ref = reference_profile(kafka.metadata_version, kafka_version=kafka.setup.version)
    idle = ref.initial_state(make_cluster([1, 2, 3], {"t": [[1, 2]]}))
    moving = ref.apply(idle, A.Reassign("t", 0, (2, 3))).state
    read = {"idle": replace(idle, actors=ActorMemory(snapshot=())),
            "moving": replace(moving, actors=ActorMemory(snapshot=(("t", 0, (2, 3)),)))}
    cases = [("idle", A.RebalancerMove("t", 0, (1, 3)), A.Reassign("t", 0, (1, 3))),
             ("moving", A.RebalancerCancel("t", 0), A.Cancel("t", 0)),
             ("idle", A.BadPlanAlter("t", 0, (1, 4)), A.Reassign("t", 0, (1, 4))),  # INVALID_REPLICA_ASSIGNMENT
             ("idle", A.BadPlanAlter("t", 1, (1, 2)), A.Reassign("t", 1, (1, 2)))]  # UNKNOWN_TOPIC_OR_PARTITION
    for name, actor_action, request in cases:
        before = read[name]
        ours = KAFKA.apply(ref, before, actor_action)
        kafka.reset("kraft", replace(before, actors=None))  # the controller knows nothing of the actor's memory
        state, response = kafka.apply(request)
        assert compare_step(replace(ours.state, actors=None), ours.response, state, response) == [], actor_action
