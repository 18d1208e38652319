"""Run limits on Spark stop where the embedded engine stops, with its exit code and JSON (issue 28).

`--max-states` keeps the embedded engine's states and reports `stopped: "max-states"`, exit 4; the level
the cap falls in is deduplicated and checked but never expanded (checker/spark/check_task.py); a level
the cap could have fallen in but did not is expanded after its check, with every answer unchanged;
`--max-memory` (a `watch`) stops before a level with its reason.
"""

from __future__ import annotations

import json

import pytest
from kreassign.checker.config.bounds import Bounds
from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.registry import build_model

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")

from kreassign.checker.spark.engine import explore_spark
from kreassign.checker.spark.options import SparkOptions
from kreassign.checker.spark.rounds import Rounds

from kreassign.cli import main

SMALL_KIP455 = Bounds(brokers=3, rf=2, reassigns=1, cancels=1, failures=1)  # 457 states, 10 levels
FLAGS = ["--profile", "kip455", "--brokers", "3", "--rf", "2", "--reassigns", "1", "--cancels", "1", "--failures", "1"]


def summary(result):
    return (result.states, result.depth, result.complete, result.stopped, sorted(result.violations),
            sorted(result.examples), {n: len(v.path) for n, v in result.violations.items()})


def test_max_states_stops_where_the_embedded_engine_does_without_expanding_the_cap_level(sc, monkeypatch):
    model = build_model("reassignment", "kip455", SMALL_KIP455)
    full = explore(model)
    cap = full.states * 2 // 3
    log: list[dict] = []
    spark = explore_spark(model, SparkOptions(max_states=cap, warmup=False, layout="levels"), sc=sc, level_log=log)
    embedded = explore(model, max_states=cap)
    assert summary(spark) == summary(embedded) and spark.stopped == "max-states"
    *expanded, capped = log
    kept_before = sum(level["new_states"] for level in expanded)
    assert kept_before < cap < kept_before + capped["new_states"]  # the cap fell inside the last level...
    assert capped["edges"] == 0 and all(level["edges"] for level in expanded)  # ...which was never expanded

    # a cap the search only just does not reach: the levels it could have fallen in are checked, then expanded
    # (two jobs each), with the answers of an uncapped run, down to edges per action and counterexample paths
    checked_then_expanded: list[int] = []
    expand_checked = Rounds.expand_checked
    monkeypatch.setattr(Rounds, "expand_checked", lambda self, level, *a: (
        checked_then_expanded.append(level.number), expand_checked(self, level, *a))[1])
    exact = explore_spark(model, SparkOptions(max_states=full.states, warmup=False, layout="levels"), sc=sc)
    assert checked_then_expanded  # (else this part would test nothing)
    assert (exact.states, exact.transitions, exact.depth, exact.complete, exact.stopped, exact.per_action_edges) == \
        (full.states, full.transitions, full.depth, True, None, full.per_action_edges)
    assert {n: v.path for n, v in exact.violations.items()} == {n: v.path for n, v in full.violations.items()}
    assert exact.examples == full.examples


def test_resident_max_states_stops_where_the_embedded_engine_does_without_expanding_the_cap_level(sc):
    model = build_model("reassignment", "kip455", SMALL_KIP455)
    full = explore(model)
    for cap in (full.states * 2 // 3, full.states):
        log: list[dict] = []
        spark = explore_spark(model, SparkOptions(max_states=cap, layout="resident"), sc=sc, level_log=log)
        embedded = explore(model, max_states=cap)
        assert summary(spark) == summary(embedded)
        assert {n: v.path for n, v in spark.violations.items()} == {n: v.path for n, v in embedded.violations.items()}
        if cap < full.states:
            *expanded, capped = log
            kept_before = sum(level["new_states"] for level in expanded)
            assert spark.stopped == "max-states" and kept_before < cap < kept_before + capped["new_states"]
            assert capped["edges"] == 0 and all(level["edges"] for level in expanded)  # never expanded
        else:
            assert spark.complete and spark.stopped is None


def test_a_watch_stops_the_search_before_a_level_with_its_reason(sc):
    model = build_model("reassignment", "kip455", SMALL_KIP455)
    asked: list[int] = []

    def watch(states: int) -> str | None:
        asked.append(states)
        return "max-memory: 9.9 GB in use, limit 1.0 GB" if states >= 100 else None

    result = explore_spark(model, SparkOptions(watch=watch), sc=sc)
    assert result.stopped == "max-memory: 9.9 GB in use, limit 1.0 GB" and not result.complete
    assert asked[-1] == result.states >= 100 > asked[-2]  # asked before each level; the last answer stopped it
    assert result.states < explore(model).states


def test_check_max_states_on_spark_exits_4_with_the_embedded_engines_json(sc, capsys, tmp_path):
    code = main(["check", "--engine", "spark", *FLAGS, "--max-states", "100", "--json", "--no-minimize",
                 "--no-liveness", "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    (result,) = out["results"]
    assert code == out["exit_code"] == 4
    assert (result["complete"], result["stopped"], result["states"]) == (False, "max-states", 100)
    assert out["summary"].endswith("— exit 4")
