"""Liveness in each release's own words on Kafka's own controllers (spec/awaited_replicas.py): each release's
KRaft controller, stepped in lockstep, keeps its own words, and is caught held to the words of a release that
waits on less."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kreassign.checker.check.run import HOLDS, VIOLATED, check_model
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.oracle.kafka_lockstep import kafka_factory
from kreassign.spec import awaited_replicas as W

P = W.PROPERTY
BOUNDS = Bounds(brokers=3, rf=2, reassigns=2, cancels=1, failures=1, fair=True)


def run(version: str, words: str | None):
    factory = kafka_factory(f"kafka[version={version}]")

    def held(profile, bounds):
        model = factory(profile, bounds)
        if words is not None:
            model.completion_words = lambda: words
        return model

    try:
        result = check_model("kraft", replace(BOUNDS, kafka_version=version), factory=held,
                             minimize_counterexamples=False)
    finally:
        factory.close()
    assert factory.stats.mismatches == 0
    return result.properties[P]


@pytest.mark.parametrize("version, other_words", [("3.9.2", W.ADDING), ("4.4.0", W.TARGET)])
def test_kafkas_controller_keeps_its_own_words_and_breaks_words_that_wait_on_less(version, other_words):
    assert run(version, None).status == HOLDS
    v = run(version, other_words)
    # 3.9 waits on the retained replicas 3.7's words leave out; 4.4 on a stale adding replica 4.2's words name
    assert v.status == VIOLATED and v.length == 3
