"""The metadata log of a real run (issue 24, items 3-4; docs/scenarios.md "The metadata log"): one scenario on a
KRaft cluster of the newest release, its metadata log dumped by Kafka's own tool and validated against the model —
no divergence — and the same dump with one record planted (a leader outside the ISR) rejected at that record."""

from __future__ import annotations

import json
import time

from cluster_checks import NEWEST, assert_cleaned
from kreassign.checker.cluster import ClusterSpec, start_cluster
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.scenarios.generate import shortest_path
from kreassign.checker.scenarios.metadata_log import dump_metadata_log, validate_metadata_log
from kreassign.checker.scenarios.run import restore, run_scenario

BOUNDS = Bounds(brokers=4, rf=3, reassigns=2, cancels=1, failures=1, failovers=1)


def _plant_leader_outside_isr(text: str, topic: str) -> tuple[str, int]:
    """The dump with the topic's first change record that names a leader and an ISR given a leader outside
    it; the line number planted."""
    lines = text.splitlines()
    tid = next(json.loads(x.split(" payload: ", 1)[1])["data"]["topicId"] for x in lines
               if '"TOPIC_RECORD"' in x and f'"name":"{topic}"' in x)
    for n, line in enumerate(lines):
        if '"PARTITION_CHANGE_RECORD"' in line and f'"topicId":"{tid}"' in line:
            head, body = line.split(" payload: ", 1)
            p = json.loads(body)
            d = p["data"]
            if "leader" in d and d.get("isr"):
                d["leader"] = next(b for b in range(1, 5) if b not in d["isr"])
                lines[n] = f"{head} payload: {json.dumps(p, separators=(',', ':'))}"
                return "\n".join(lines) + "\n", n + 1
    raise AssertionError(f"no change record of {topic} with a leader and an ISR")


def test_a_run_s_metadata_log_agrees_with_the_model_and_a_planted_record_does_not():
    started = time.monotonic()
    s = shortest_path(BOUNDS, "reassigning_with_failed_target", seed=2, kafka_version=NEWEST,
                      topic="metadata-log-check")
    with start_cluster(ClusterSpec(version=NEWEST, mode="kraft", controllers=1, brokers=4)) as c:
        directory, pids = c.directory, list(c.pids().values())
        try:
            result = run_scenario(c, s)
        finally:
            restore(c)
        assert result.ok, result.divergences
        t0 = time.monotonic()
        text = dump_metadata_log(c)
        dumped_in = time.monotonic() - t0
    assert_cleaned(directory, pids)
    assert text.startswith("Dumping ") and '"type":"PARTITION_CHANGE_RECORD"' in text
    assert validate_metadata_log(text, s, result) == []
    broken, line = _plant_leader_outside_isr(text, s.topic)
    found = validate_metadata_log(broken, s, result)
    assert len(found) == 1 and found[0]["kind"] == "metadata_log" and found[0]["line"] == line, found
    assert found[0]["verdict"] == "INVALID" and any(d.startswith("leader:") for d in found[0]["differs"])
    print(f"dump {dumped_in:.1f} s, {len(text)} bytes; all {time.monotonic() - started:.1f} s")
