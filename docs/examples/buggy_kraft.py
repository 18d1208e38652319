"""A deliberately buggy KRaft implementation, for `--impl docs/examples/buggy_kraft.py:BuggyKraft`.

It is the reference's `kraft` profile at Kafka 3.9 (check it with `--kafka-version 3.9.2`) with one
bug planted in cancellation
(PartitionReassignmentRevert): the revert forgets to drop the adding replicas from the
ISR, so a replica that joined the ISR during the reassignment stays in it after the
cancel, although it is no longer a replica. The differential checker reports the first
cancel where this shows (`implementation_matches_reference`), and the spec property
`isr_in_replicas` fails on the implementation's states.

A plain module, not part of a package: load it by path (docs/adapters.md).
"""

from __future__ import annotations

from dataclasses import replace

from kreassign.reference.kraft import KraftProfile
from kreassign.spec import actions as A
from kreassign.spec.messages import NONE


class BuggyKraft:
    """The Implementation protocol (reset / apply / close) over kraft, with the cancel bug."""

    def __init__(self) -> None:
        self.kraft = KraftProfile(kafka_version="3.9.2")
        self.state = None

    def reset(self, profile_name: str, state) -> None:
        self.state = state

    def apply(self, action):
        before = self.state
        step = self.kraft.apply(before, action)
        state = step.state
        if isinstance(action, A.Cancel):
            code = step.response.partition_error(action.topic, action.partition)[0]
            old = before.partition(action.topic, action.partition)
            new = state.partition(action.topic, action.partition)
            if code == NONE and old is not None and old.adding:
                # BUG: the revert keeps the adding replicas that had joined the ISR
                kept = tuple(b for b in old.isr if b in new.isr or b in old.adding)
                state = state.with_partition(action.topic, action.partition, replace(new, isr=kept))
        self.state = state
        return state, step.response

    def close(self) -> None:
        self.state = None
