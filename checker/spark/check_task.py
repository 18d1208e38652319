"""The executor side of a level checked but not expanded: where `--max-states` may fall (checker/spark/run.py).

A level whose new states could reach the cap is run in two jobs instead of one: `dedupe_task`
(checker/spark/tasks.py) with `check_task` over its cached output, which checks the bucket's new
states and reports their keys and findings, but expands nothing; then, only if the cap did not fall
in the level, `expand_task` over the same cached states (checker/spark/rounds.py `expand_checked`).
The cap's level is the first `room` states in discovery-key order over every bucket, which no
bucket can know alone, so a bucket cannot stop its own expansion at the cap: the level is first
counted and checked, and expanded only when all of it is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kreassign.checker.spark import tasks as T


def check_task(bucket: int, records: Iterable[Any], job: dict[str, Any], recipe: Any,
               results: Any) -> Iterator[Any]:
    """Check a bucket's new states (its LEVEL record) without expanding them: their count, keys and the
    always/sometimes findings (the smallest key of each) go to the driver through `results`; yields nothing."""
    rt = T.runtime(job, recipe)
    int64 = rt.codec.int64
    new = T.concat_levels([T.level_from_blob(value[1], int64) for _, (tag, value) in records if tag == T.LEVEL],
                          int64)
    found = T.Findings()
    if int64:
        T.check_states_int(rt, new, job, found)
    else:
        T.check_and_expand_bytes(rt, new, job, found, False)
    stats = {**T.new_stats(bucket, new), "violations": found.violations, "examples": found.examples,
             "checked": True, "executors": [T.executor_id()]}
    results.add({(job["level"], bucket, "check"): {T.STATS: [stats]}})
    return iter(())


__all__ = ["check_task"]
