"""Every run of `kreassign check` has a unique name, in the text, --json and JUnit alike.

The default suite runs kraft twice (its default bounds, then two partitions at RF 3): both used
to be reported as plain `kraft` (two JSON results with one profile, two JUnit suites with one
name, every test case twice). The runs are named from the real plan of `check` with no
arguments; the outputs are made from results of a tiny configuration standing in for each run,
so that the default suite itself is not explored here.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace
from xml.etree import ElementTree as ET

import pytest
from kreassign.checker.check.junit import junit_xml
from kreassign.checker.check.minimize import bounds_json
from kreassign.checker.check.run import check_model
from kreassign.checker.check.suite import LARGER_SUITE, result_names, run_names
from kreassign.checker.cli import check as check_cli
from kreassign.checker.config.bounds import Bounds

from kreassign.cli import build_parser, main

TINY = Bounds(brokers=2, rf=1, reassigns=1, cancels=0, failures=0)


def _dups(items) -> list:
    return [x for x, n in Counter(items).items() if n > 1]


@pytest.fixture(scope="module")
def suite():
    """(profile, bounds, name) of every run of the default suite, as `check` with no arguments plans it."""
    args = build_parser(["check"]).parse_args(["check"])
    plan = check_cli._plan(args)
    return [(p, b, n) for (p, b), n in zip(plan, run_names(plan))]


@pytest.fixture(scope="module")
def results(suite):
    """One CheckResult per run of the suite, named as `check` names it: a tiny kraft check stands in for
    each (profile and bounds are the run's own, so that names made from them are the suite's)."""
    tiny = check_model("kraft", TINY, liveness_check=False, minimize_counterexamples=False)
    assert tiny.properties
    return [replace(tiny, profile=p, bounds=bounds_json(b) if isinstance(b, Bounds) else tiny.bounds, run=n)
            for p, b, n in suite]


def test_the_default_suite_runs_kraft_twice_under_two_names(suite):
    names = [n for _, _, n in suite]
    assert _dups(names) == []
    kraft = [n for p, _, n in suite if p == "kraft"]
    assert len(kraft) == 2 and kraft[0] == "kraft"
    ((profile, larger),) = LARGER_SUITE
    assert profile == "kraft"
    assert kraft[1] == f"kraft-{larger.partitions}p-rf{larger.rf}" == "kraft-2p-rf3"
    # every other run is its profile
    assert [n for p, _, n in suite if p != "kraft"] == [p for p, _, _ in suite if p != "kraft"]


def test_json_names_are_unique_and_profiles_stay_profiles(suite, results):
    rows = [check_cli._result_json(r) for r in results]
    json.dumps(rows)
    assert [r["name"] for r in rows] == [n for _, _, n in suite]
    assert _dups(r["name"] for r in rows) == []
    assert [r["profile"] for r in rows] == [p for p, _, _ in suite]
    assert Counter(r["profile"] for r in rows)["kraft"] == 2


def test_junit_suites_and_test_cases_are_unique(suite, results):
    root = ET.fromstring(junit_xml(results))
    suites = root.findall("testsuite")
    assert len(suites) == len(suite)
    assert _dups(s.get("name") for s in suites) == []
    assert "kreassign.check.kraft-2p-rf3" in {s.get("name") for s in suites}
    cases = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert _dups(cases) == [] and len(cases) == sum(len(r.properties) for r in results)
    for s in suites:  # a suite's test cases carry its name as their classname, and no other suite's
        assert {c.get("classname") for c in s.iter("testcase")} == {s.get("name")}
        assert s.find("properties/property[@name='profile']").get("value") in {p for p, _, _ in suite}


def test_the_text_report_names_each_run(suite, results):
    text = check_cli.report(results)
    header = text.splitlines()[0].split()
    assert header[1:] == [n for _, _, n in suite]


def test_results_without_a_name_still_get_unique_ones():
    """junit_xml of results made by hand (no `run`): names from profile and shape, `#2` for a repeat."""
    tiny = check_model("kraft", TINY, liveness_check=False, minimize_counterexamples=False)
    larger = replace(tiny, bounds={**tiny.bounds, "partitions": 2})
    assert result_names([tiny, larger, tiny]) == [
        "kraft-rf1-b2", "kraft-2p-rf1-b2", "kraft-rf1-b2#2"]
    root = ET.fromstring(junit_xml([tiny, larger, tiny]))
    assert _dups(s.get("name") for s in root.findall("testsuite")) == []
    assert run_names([("kraft", Bounds(brokers=4, rf=2)), ("kip599", None), ("kraft", Bounds(brokers=4, rf=2))]) == [
        "kraft", "kip599", "kraft#2"]
    # a profile run once keeps its name, whatever its bounds (and its files stay <profile>__<property>.json)
    assert run_names([("kraft", Bounds(brokers=3, rf=1)), ("zk", Bounds(brokers=5))]) == ["kraft", "zk"]
    assert result_names([tiny]) == ["kraft"]


def test_two_runs_of_one_profile_get_two_names(tmp_path, capsys):
    """`--profile kraft --profile kraft`: two runs, two names in --json and JUnit."""
    junit = tmp_path / "j.xml"
    code = main(["check", "--profile", "kraft", "--profile", "kraft", "--brokers", "2", "--rf", "1",
                 "--reassigns", "1", "--cancels", "0", "--failures", "0", "--no-liveness", "--json",
                 "--out", str(tmp_path / "out"), "--junit", str(junit)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in data["results"]] == ["kraft-rf1-b2", "kraft-rf1-b2#2"]
    assert [s.get("name") for s in ET.parse(junit).getroot().findall("testsuite")] == [
        "kreassign.check.kraft-rf1-b2", "kreassign.check.kraft-rf1-b2#2"]


def test_two_runs_of_one_profile_write_their_own_counterexamples(tmp_path, capsys):
    """An unexpected violation in both runs of a profile: two files, one per run, never one over the other."""
    from pathlib import Path

    buggy = f"{Path(__file__).resolve().parents[2] / 'docs' / 'examples' / 'buggy_kraft.py'}:BuggyKraft"
    code = main(["check", "--profile", "kraft", "--profile", "kraft", "--brokers", "3", "--reassigns", "1",
                 "--cancels", "1", "--failures", "0", "--kafka-version", "3.9.2", "--no-liveness", "--no-minimize",
                 "--impl", buggy, "--json", "--out", str(tmp_path)])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    files = [r["properties"]["implementation_matches_reference"]["counterexample"] for r in data["results"]]
    assert [os.path.basename(f) for f in files] == [
        "kraft-b3__implementation_matches_reference.json", "kraft-b3#2__implementation_matches_reference.json"]
    assert all(os.path.exists(f) for f in files)
