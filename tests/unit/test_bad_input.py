"""The bad-input corpus: every subcommand, fed what users really feed it, fails cleanly.

Each case runs `kreassign.cli.main(argv)` in process and asserts the exit code of the
contract (kreassign/errors.py), that no traceback reaches the user, that the message names
the culprit (file, flag, field path or line), and that no file that existed before the run
was changed. Static inputs live in tests/fixtures/bad_input/; the rest are derived from a
valid trace there (one defect each) in a temporary directory. Interrupts need real signals
and run as subprocesses in tests/unit/test_exit_codes.py.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from kreassign.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bad_input"
BIG = "9" * 5000  # beyond Python's 4300-digit int/str conversion limit
IMPL = f"{FIXTURES / 'raising_impl.py'}"


def _trace_variants() -> dict[str, object]:
    """name -> the defective trace (a JSON value, or raw text/bytes), each with one defect."""
    base = json.loads((FIXTURES / "valid_trace.json").read_text())

    def edit(change):
        d = json.loads(json.dumps(base))
        change(d)
        return d

    return {
        "empty": "",
        "not_an_object": [1, 2],
        "wrong_format": edit(lambda d: d.update(format="something-else")),
        "future_version": edit(lambda d: d.update(format_version=99)),
        "no_steps": edit(lambda d: d.pop("steps")),
        "steps_not_a_list": edit(lambda d: d.update(steps={"a": 1})),
        "step_not_an_object": edit(lambda d: d["steps"].__setitem__(0, 5)),
        "step_without_state": edit(lambda d: d["steps"][1].pop("state")),
        "step_state_not_an_object": edit(lambda d: d["steps"][1].update(state=[1])),
        "initial_state_a_list": edit(lambda d: d.update(initial_state=[])),
        "initial_without_ghosts": edit(lambda d: d["initial_state"].pop("ghosts")),
        "step_without_budget": edit(lambda d: d["steps"][2]["state"].pop("budget")),
        "step_cluster_garbage": edit(lambda d: d["steps"][0]["state"].update(cluster=5)),
        "unknown_action": edit(lambda d: d["steps"][0].update(action={"type": "Nope"})),
        "bounds_not_integer": edit(lambda d: d["bounds"].update(brokers="x")),
        "bounds_absurd": edit(lambda d: d["bounds"].update(brokers=10000)),
        "bounds_huge_integer": re.sub(r'"brokers": \d+', f'"brokers": {BIG}', json.dumps(base), count=1),
        "unknown_kind": edit(lambda d: d.update(kind="weird")),
        "loop_start_out_of_range": edit(lambda d: d.update(loop_start=99)),
        "unknown_profile": edit(lambda d: d.update(profile="no-such-profile")),
        "unknown_model": edit(lambda d: d.update(model="no-such-model")),
        "nested_too_deep": "[" * 100_000,
    }


#: name -> substrings the message must contain besides the file name
TRACE_CULPRITS = {
    "empty": ["empty file"], "not_an_object": ["JSON object"], "wrong_format": ["format"],
    "future_version": ["format_version"], "no_steps": ["steps: missing"], "steps_not_a_list": ["steps"],
    "step_not_an_object": ["steps[0]"], "step_without_state": ["steps[1].state: missing"],
    "step_state_not_an_object": ["steps[1].state"], "initial_state_a_list": ["initial_state"],
    "initial_without_ghosts": ["initial_state", "ghosts"], "step_without_budget": ["steps[2].state", "budget"],
    "step_cluster_garbage": ["steps[0].state"], "unknown_action": ["steps[0].action"],
    "bounds_not_integer": ["bounds.brokers"], "bounds_absurd": ["bounds"],
    "bounds_huge_integer": ["invalid JSON"], "unknown_kind": ["kind"], "loop_start_out_of_range": ["loop_start"],
    "unknown_profile": ["no-such-profile"], "unknown_model": ["no-such-model"], "nested_too_deep": ["JSON"],
}


@dataclass
class Case:
    id: str
    argv: list[str]  # {tmp} and {fx} are replaced by the temporary and fixture directories
    code: int
    culprits: list[str]  # each must appear in stderr (after the same replacement)
    stdin: str | bytes | None = None  # oracle: the session's input (replies on stdout are checked instead)


def _cases() -> list[Case]:
    cases: list[Case] = []
    fixed = {
        "binary": ("{fx}/binary.bin", ["{fx}/binary.bin", "not UTF-8"]),
        "truncated": ("{fx}/truncated_trace.json", ["{fx}/truncated_trace.json", "truncated JSON", "line"]),
        "missing_initial_state": ("{fx}/no_initial_state.json", ["{fx}/no_initial_state.json", "initial_state: missing"]),
        "missing_ghosts": ("{fx}/step_missing_ghosts.json", ["{fx}/step_missing_ghosts.json", "steps[1].state", "ghosts"]),
        "no_such_file": ("{tmp}/nope.json", ["{tmp}/nope.json", "no such file"]),
        "directory": ("{tmp}/adir", ["{tmp}/adir", "directory"]),
    }
    for cmd in ("show", "replay"):
        for name, (path, culprits) in fixed.items():
            cases.append(Case(f"{cmd}-{name}", [cmd, path], 2, culprits))
        for name in TRACE_CULPRITS:
            cases.append(Case(f"{cmd}-{name}", [cmd, f"{{tmp}}/trace-{name}.json"], 2,
                              [f"{{tmp}}/trace-{name}.json", *TRACE_CULPRITS[name]]))
    cases += [
        Case("show-format-dot-binary", ["show", "--format", "dot", "{fx}/binary.bin"], 2, ["binary.bin"]),
        Case("replay-json-truncated", ["replay", "--json", "{fx}/truncated_trace.json"], 2, ["truncated_trace.json"]),
        Case("replay-impl-apply-raises", ["replay", "{fx}/valid_trace.json", "--impl", f"{IMPL}:ApplyRaises"], 3,
             ["ApplyRaises", "RuntimeError", "boom from the implementation"]),
        Case("replay-impl-no-such-module", ["replay", "{fx}/valid_trace.json", "--impl", "no_such_mod:X"], 2,
             ["no_such_mod"]),
        Case("replay-impl-no-such-class", ["replay", "{fx}/valid_trace.json", "--impl", f"{IMPL}:Nope"], 2, ["Nope"]),
    ]
    # -- check -------------------------------------------------------------------------------------------
    k = ["check", "--profile", "kraft"]
    cases += [
        Case("check-out-is-a-file", [*k, "--out", "{tmp}/afile"], 2, ["--out", "{tmp}/afile", "not a directory"]),
        Case("check-out-under-a-file", [*k, "--out", "{tmp}/afile/sub"], 2, ["--out", "{tmp}/afile"]),
        Case("check-config-directory", [*k, "--config", "{tmp}/adir"], 2, ["{tmp}/adir", "directory"]),
        Case("check-impl-timeout-zero", [*k, "--impl", "exec:true", "--impl-timeout", "0"], 2, ["--impl-timeout", "positive"]),
        Case("check-config-missing", [*k, "--config", "{tmp}/nope.toml"], 2, ["{tmp}/nope.toml", "no such file"]),
        Case("check-config-binary", [*k, "--config", "{fx}/binary.bin"], 2, ["binary.bin", "TOML"]),
        Case("check-config-profiles-5", ["check", "--config", "{fx}/profiles_5.toml"], 2, ["profiles_5.toml", "profiles"]),
        Case("check-config-bigint", [*k, "--config", "{fx}/bigint_bounds.toml"], 2, ["bigint_bounds.toml"]),
        Case("check-config-names-5", ["check", "--config", "{tmp}/names5.toml"], 2, ["names5.toml", "profiles.names"]),
        Case("check-config-brokers-string", [*k, "--config", "{tmp}/brokers_str.toml"], 2, ["bounds.brokers"]),
        Case("check-config-unknown-key", [*k, "--config", "{tmp}/unknown_key.toml"], 2, ["bounds.brokerz", "unknown key"]),
        Case("check-config-unknown-table", [*k, "--config", "{tmp}/unknown_table.toml"], 2, ["[oops]"]),
        Case("check-config-invalid-toml", [*k, "--config", "{tmp}/invalid.toml"], 2, ["invalid.toml", "invalid TOML"]),
        Case("check-config-bounds-not-table", [*k, "--config", "{tmp}/bounds5.toml"], 2, ["bounds5.toml", "bounds"]),
        Case("check-config-rf-too-big", [*k, "--config", "{tmp}/rf_big.toml"], 2, ["rf"]),
        Case("check-config-targets-word", [*k, "--config", "{tmp}/targets_word.toml"], 2, ["targets"]),
        Case("check-config-initial-length", [*k, "--config", "{tmp}/initial_len.toml"], 2, ["initial"]),
        Case("check-config-brokers-above-cap", [*k, "--config", "{tmp}/brokers_cap.toml"], 2, ["bounds.brokers", "1,000,000"]),
        Case("check-brokers-10000", [*k, "--brokers", "10000"], 2, ["--brokers", "states", "--force"]),
        Case("check-brokers-10000-suite", ["check", "--brokers", "10000"], 2, ["--brokers", "states"]),
        Case("check-partitions-absurd", [*k, "--partitions", "500"], 2, ["--partitions", "states"]),
        Case("check-brokers-bigint", [*k, "--brokers", BIG], 2, ["--brokers"]),
        Case("check-brokers-zero", [*k, "--brokers", "0"], 2, ["brokers"]),
        Case("check-brokers-negative", [*k, "--brokers", "-3"], 2, ["brokers"]),
        Case("check-rf-above-brokers", [*k, "--rf", "5", "--brokers", "3"], 2, ["rf"]),
        Case("check-unknown-profile", ["check", "--profile", "nope"], 2, ["nope"]),
        Case("check-targets-garbage", [*k, "--targets", "1,x"], 2, ["--targets"]),
        Case("check-initial-duplicate", [*k, "--initial", "1,1"], 2, ["initial"]),
        Case("check-elections-garbage", [*k, "--elections", "BOGUS"], 2, ["BOGUS"]),
        Case("check-max-states-zero", [*k, "--max-states", "0"], 2, ["--max-states"]),
        Case("check-max-memory-garbage", [*k, "--max-memory", "12Q"], 2, ["--max-memory", "12Q"]),
        Case("check-max-memory-zero", [*k, "--max-memory", "0"], 2, ["--max-memory"]),
        Case("check-progress-interval-zero", [*k, "--progress-interval", "0"], 2, ["--progress-interval"]),
        Case("check-junit-directory", [*k, "--junit", "{tmp}/adir"], 2, ["--junit", "{tmp}/adir"]),
        Case("check-junit-missing-directory", [*k, "--junit", "{tmp}/nodir/j.xml"], 2, ["--junit", "nodir"]),
        Case("check-impl-no-such-module", [*k, "--impl", "no_such_mod:X"], 2, ["no_such_mod"]),
        Case("check-impl-malformed-spec", [*k, "--impl", "noclass"], 2, ["noclass"]),
        Case("check-impl-no-such-file", [*k, "--impl", "{tmp}/nope.py:X"], 2, ["nope.py"]),
        Case("check-impl-apply-raises", [*k, "--impl", f"{IMPL}:ApplyRaises", "--no-liveness"], 3,
             ["ApplyRaises", "boom from the implementation"]),
        Case("check-impl-constructor-raises", [*k, "--impl", f"{IMPL}:InitRaises"], 3, ["InitRaises", "boom"]),
        Case("check-impl-on-spark", [*k, "--impl", f"{IMPL}:ApplyRaises", "--engine", "spark"], 2, ["--impl", "Spark"]),
        Case("check-symmetry-not-symmetric", [*k, "--symmetry"], 2, ["symmetric"]),
        Case("check-unknown-flag", [*k, "--frobnicate"], 2, ["--frobnicate"]),
    ]
    # -- fuzz ---------------------------------------------------------------------------------------------
    f = ["fuzz", "--examples", "2", "--steps", "3", "--no-exhaustive", "--seed", "1"]
    cases += [
        Case("fuzz-examples-zero", ["fuzz", "--examples", "0"], 2, ["--examples"]),
        Case("fuzz-unknown-profile", ["fuzz", "--profile", "nope"], 2, ["nope"]),
        Case("fuzz-config-directory", [*f, "--config", "{tmp}/adir"], 2, ["{tmp}/adir"]),
        Case("fuzz-config-bigint", [*f, "--config", "{fx}/bigint_bounds.toml"], 2, ["bigint_bounds.toml"]),
        Case("fuzz-brokers-10000", [*f, "--brokers", "10000"], 2, ["--brokers", "states"]),
        Case("fuzz-out-is-a-file", [*f, "--out", "{tmp}/afile"], 2, ["--out", "{tmp}/afile"]),
        Case("fuzz-impl-no-such-module", [*f, "--impl", "no_such_mod:X"], 2, ["no_such_mod"]),
        Case("fuzz-impl-apply-raises", [*f, "--impl", f"{IMPL}:ApplyRaises", "--out", "{tmp}/fuzz-out"], 3,
             ["boom from the implementation"]),
        Case("fuzz-impl-on-quota", ["fuzz", "--profile", "kip599", "--impl", "x:Y"], 2, ["--impl"]),
    ]
    # -- prove --------------------------------------------------------------------------------------------
    cases += [
        Case("prove-unknown-profile", ["prove", "--profile", "nope"], 2, ["--profile", "nope"]),
        Case("prove-min-brokers-zero", ["prove", "--min-brokers", "0"], 2, ["--min-brokers"]),
        Case("prove-max-brokers-too-wide", ["prove", "--max-brokers", "100"], 2, ["--max-brokers"]),
        Case("prove-unknown-property", ["prove", "--property", "nope"], 2, ["--property", "nope"]),
        Case("prove-out-is-a-file", ["prove", "--profile", "kraft", "--out", "{tmp}/afile"], 2, ["--out", "{tmp}/afile"]),
        Case("prove-max-brokers-bigint", ["prove", "--max-brokers", BIG], 2, ["--max-brokers"]),
    ]
    # -- validate-trace -------------------------------------------------------------------------------------
    v = ["validate-trace"]
    cases += [
        Case("validate-missing", [*v, "{tmp}/nope.jsonl"], 2, ["{tmp}/nope.jsonl", "no such file"]),
        Case("validate-directory", [*v, "{tmp}/adir"], 2, ["{tmp}/adir", "directory"]),
        Case("validate-binary", [*v, "{fx}/binary.bin"], 2, ["binary.bin", "line"]),
        Case("validate-unknown-profile", [*v, "{fx}/valid_trace.json", "--profile", "nope"], 2, ["--profile", "nope"]),
        Case("validate-negative-limit", [*v, "{fx}/valid_trace.json", "--max-unlogged", "-1"], 2, ["--max-unlogged"]),
        Case("validate-bad-elections", [*v, "{fx}/valid_trace.json", "--elections", "BOGUS"], 2, ["BOGUS"]),
        Case("validate-jsonl-garbage-line", [*v, "{tmp}/garbage.jsonl"], 2, ["garbage.jsonl", "line 2"]),
        Case("validate-jsonl-bigint", [*v, "{tmp}/bigint.jsonl"], 2, ["bigint.jsonl"]),
        Case("validate-jsonl-not-objects", [*v, "--format", "jsonl", "{tmp}/array.jsonl"], 2, ["array.jsonl", "line 1"]),
        Case("validate-max-candidates-zero", [*v, "{fx}/valid_trace.json", "--max-candidates", "0"], 2,
             ["--max-candidates"]),
        Case("validate-topic-not-metadata", [*v, "{fx}/valid_trace.json", "--topic", "t"], 2, ["--topic"]),
    ]
    # -- reassign-json ----------------------------------------------------------------------------------------
    r = ["reassign-json"]
    cases += [
        Case("rj-validate-missing", [*r, "validate", "{tmp}/nope.json"], 2, ["{tmp}/nope.json"]),
        Case("rj-validate-binary", [*r, "validate", "{fx}/binary.bin"], 2, ["binary.bin", "UTF-8"]),
        Case("rj-validate-bigint", [*r, "validate", "{fx}/bigint_plan.json"], 2, ["bigint_plan.json"]),
        Case("rj-validate-directory", [*r, "validate", "{tmp}/adir"], 2, ["{tmp}/adir"]),
        Case("rj-validate-invalid-json", [*r, "validate", "{tmp}/invalid.json"], 2, ["invalid.json", "line 1"]),
        Case("rj-validate-duplicate-broker", [*r, "validate", "{tmp}/dup.json"], 2, ["partitions[0].replicas[1]"]),
        Case("rj-validate-state-missing", [*r, "validate", "{tmp}/plan.json", "--state", "{tmp}/nostate.json"], 2,
             ["nostate.json"]),
        Case("rj-validate-state-bigint", [*r, "validate", "{tmp}/plan.json", "--state", "{tmp}/bigstate.json"], 2,
             ["bigstate.json"]),
        Case("rj-normalize-out-directory", [*r, "normalize", "{tmp}/plan.json", "--out", "{tmp}/adir"], 2,
             ["{tmp}/adir"]),
        Case("rj-normalize-out-under-a-file", [*r, "normalize", "{tmp}/plan.json", "--out", "{tmp}/afile/x.json"], 2,
             ["{tmp}/afile/x.json"]),
        Case("rj-normalize-bad-plan-keeps-out", [*r, "normalize", "{tmp}/dup.json", "--out", "{tmp}/afile"], 2,
             ["partitions[0]"]),
        Case("rj-to-request-bigint", [*r, "to-request", "{fx}/bigint_plan.json"], 2, ["bigint_plan.json"]),
        Case("rj-from-request-garbage", [*r, "from-request", "{tmp}/invalid.json"], 2, ["invalid.json"]),
        Case("rj-from-list-bigint", [*r, "from-list", "{fx}/bigint_plan.json"], 2, ["bigint_plan.json"]),
        Case("rj-no-action", [*r], 2, ["reassign-json"]),
    ]
    # -- plan, report, doctor ---------------------------------------------------------------------------------
    pl = ["plan", "{tmp}/plan.json", "--current", "{tmp}/current.json"]
    cases += [
        Case("plan-missing", ["plan", "{tmp}/nope.json"], 2, ["{tmp}/nope.json"]),
        Case("plan-binary", ["plan", "{fx}/binary.bin"], 2, ["binary.bin", "UTF-8"]),
        Case("plan-bigint", ["plan", "{fx}/bigint_plan.json", "--current", "{tmp}/current.json"], 2,
             ["bigint_plan.json", "invalid JSON"]),
        Case("plan-current-bigint", ["plan", "{tmp}/plan.json", "--current", "{fx}/bigint_plan.json"], 2,
             ["bigint_plan.json"]),
        Case("plan-current-missing", ["plan", "{tmp}/plan.json", "--current", "{tmp}/nope.json"], 2, ["nope.json"]),
        Case("plan-live-garbage", [*pl, "--live", "x,y"], 2, ["--live"]),
        Case("plan-failures-negative", [*pl, "--failures", "-1"], 2, ["--failures"]),
        Case("plan-out-is-a-file", [*pl, "--out", "{tmp}/afile"], 2, ["--out", "{tmp}/afile"]),
        Case("plan-html-directory", [*pl, "--html", "{tmp}/adir"], 2, ["{tmp}/adir"]),
        Case("plan-rollback-out-directory", [*pl, "--rollback-out", "{tmp}/adir"], 2, ["{tmp}/adir"]),
        Case("status-snapshot-missing", ["status", "--snapshot", "{tmp}/nope.json"], 2, ["{tmp}/nope.json"]),
        Case("status-snapshot-not-json", ["status", "--snapshot", "{tmp}/invalid.json"], 2, ["invalid.json", "line 1"]),
        Case("status-snapshot-not-a-snapshot", ["status", "--snapshot", "{tmp}/plan.json"], 2,
             ["plan.json", "not a kreassign status snapshot"]),
        Case("status-no-cluster", ["status"], 2, ["--bootstrap-server"]),
        Case("status-bootstrap-garbage", ["status", "--bootstrap-server", "no port here"], 2, ["--bootstrap-server"]),
        Case("status-timeout-zero", ["status", "--snapshot", "{tmp}/plan.json", "--timeout", "0"], 2, ["--timeout"]),
        Case("status-html-directory", ["status", "--snapshot", "{tmp}/plan.json", "--html", "{tmp}/adir"], 2,
             ["{tmp}/adir"]),
        Case("report-missing", ["report", "--out", "{tmp}/r.html", "{tmp}/nope.json"], 2, ["{tmp}/nope.json"]),
        Case("report-binary", ["report", "--out", "{tmp}/r.html", "{fx}/binary.bin"], 2, ["binary.bin"]),
        Case("report-truncated", ["report", "--out", "{tmp}/r.html", "{fx}/truncated_trace.json"], 2,
             ["truncated_trace.json", "truncated JSON"]),
        Case("report-out-directory", ["report", "--out", "{tmp}/adir", "{fx}/valid_trace.json"], 2, ["{tmp}/adir"]),
        Case("report-out-existing-kept", ["report", "--out", "{tmp}/afile", "{fx}/binary.bin"], 2, ["binary.bin"]),
        Case("spark-package-output-directory", ["spark-package", "-o", "{tmp}/adir"], 2, ["{tmp}/adir", "directory"]),
        Case("spark-package-output-under-a-file", ["spark-package", "-o", "{tmp}/afile/k.zip"], 2, ["{tmp}/afile"]),
        Case("spark-package-no-venv-pack", ["spark-package", "--venv", "{tmp}/nope"], 2, ["--venv", "{tmp}/nope"]),
        Case("doctor-no-such-classpath", ["doctor", "--kafka-classpath", "{tmp}/nope"], 3, ["--kafka-classpath"]),
        Case("doctor-unsupported-release", ["doctor", "--kafka-version", "2.8.1"], 2, ["--kafka-version", "2.8.1"]),
        Case("kafka-fetch-not-a-version", ["kafka", "fetch", "latest"], 2, ["latest", "not a Kafka release"]),
        Case("kafka-fetch-unsupported-minor", ["kafka", "fetch", "3.8.1"], 2, ["3.8.1", "not supported"]),
        Case("kafka-fetch-nothing", ["kafka", "fetch"], 2, ["--all"]),
        Case("kafka-no-action", ["kafka"], 2, ["fetch", "list"]),
        Case("cluster-too-few-brokers", ["cluster", "start", "--brokers", "2"], 2, ["--brokers", "from 3 to 6"]),
        Case("cluster-zk-on-4x", ["cluster", "start", "--mode", "zk"], 2, ["--mode", "Kafka 3.9"]),
        Case("cluster-own-listeners", ["cluster", "start", "--broker-config", "listeners=PLAINTEXT://0.0.0.0:9092"], 2,
             ["--broker-config", "listeners"]),
        Case("cluster-fetch-unsupported-minor", ["cluster", "fetch", "3.8.1"], 2, ["3.8.1", "not supported"]),
        Case("cluster-no-action", ["cluster"], 2, ["start", "fetch"]),
        Case("conformance-unknown-fault", ["conformance", "--faults", "kill,flood"], 2, ["--faults", "flood"]),
        Case("conformance-zk-on-4x", ["conformance", "--mode", "zk", "--kafka-version", "4.4.0"], 2,
             ["--kafka-version", "Kafka 3.9"]),
        Case("conformance-replay-missing", ["conformance", "--replay", "{tmp}/none.json"], 2,
             ["{tmp}/none.json", "no such file"]),
        Case("conformance-replay-not-json", ["conformance", "--replay", "{fx}/binary.bin"], 2,
             ["{fx}/binary.bin", "not UTF-8"]),
        Case("conformance-junit-dir", ["conformance", "--junit", "{tmp}"], 2, ["--junit", "is a directory"]),
        Case("check-kafka-version-garbage", ["check", "--profile", "kraft", "--kafka-version", "4.4"], 2,
             ["--kafka-version", "'4.4'"]),
        Case("check-elr-on-3-9", ["check", "--profile", "kraft", "--kafka-version", "3.9.2", "--elr", "on"], 2,
             ["elr", "4.0-IV1"]),
        Case("check-min-insync-zero", ["check", "--profile", "kraft", "--min-insync", "0"], 2, ["min_insync"]),
    ]
    # -- oracle: a malformed line gets an error reply and the session goes on (exit 0) ------------------------
    o = ["oracle"]
    cases += [
        Case("oracle-bigint-line", o, 0, ["invalid JSON"], stdin='{"op":' + BIG + '}\n{"op":"profiles"}\n'),
        Case("oracle-deep-nesting", o, 0, ["invalid JSON"], stdin="[" * 100_000 + "\n"),
        Case("oracle-binary-line", o, 0, ["invalid JSON"], stdin=b'\xff\xfe{"op": 1}\n'),
        Case("oracle-not-an-object", o, 0, ["expected a JSON object"], stdin="[1, 2]\n"),
        Case("oracle-unknown-op", o, 0, ["unknown op"], stdin='{"op": "frobnicate"}\n'),
        Case("oracle-bigint-in-state", o, 0, ['"ok":false'], stdin='{"op":"apply","state":{"brokers":[' + BIG + ']}}\n'),
        Case("oracle-unknown-profile", [*o, "--profile", "nope"], 2, ["nope"]),
        Case("no-such-subcommand", ["frobnicate"], 2, ["frobnicate"]),
    ]
    return cases


CASES = _cases()


def _setup(tmp: Path) -> None:
    (tmp / "afile").write_text("precious\n")
    (tmp / "adir").mkdir()
    (tmp / "adir" / "inside").write_text("precious too\n")
    for name, data in _trace_variants().items():
        text = data if isinstance(data, str) else json.dumps(data, indent=1)
        (tmp / f"trace-{name}.json").write_text(text)
    configs = {
        "names5.toml": "[profiles]\nnames = 5\n",
        "brokers_str.toml": '[bounds]\nbrokers = "four"\n',
        "unknown_key.toml": "[bounds]\nbrokerz = 4\n",
        "unknown_table.toml": "[oops]\nx = 1\n",
        "invalid.toml": "[bounds\nbrokers = 4\n",
        "bounds5.toml": "bounds = 5\n",
        "rf_big.toml": "[bounds]\nbrokers = 2\nrf = 3\n",
        "targets_word.toml": '[bounds]\ntargets = "some"\n',
        "initial_len.toml": "[bounds]\npartitions = 2\ninitial = [[1, 2]]\n",
        "brokers_cap.toml": "[bounds]\nbrokers = 2000000\n",
    }
    for name, text in configs.items():
        (tmp / name).write_text(text)
    initial = json.loads((FIXTURES / "valid_trace.json").read_text())["initial_state"]["cluster"]
    (tmp / "garbage.jsonl").write_text(json.dumps({"initial_state": initial}) + '\n{not json\n')
    (tmp / "bigint.jsonl").write_text('{"profile": "kraft", "n": ' + BIG + "}\n")
    (tmp / "array.jsonl").write_text("[1, 2, 3]\n")
    (tmp / "invalid.json").write_text('{"version": 1, "partitions": [}\n')
    (tmp / "plan.json").write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}\n')
    (tmp / "current.json").write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],'
                                      '"log_dirs":["any","any"]}]}\n')
    (tmp / "dup.json").write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}\n')
    (tmp / "bigstate.json").write_text('{"brokers": [' + BIG + "]}\n")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_fails_cleanly(case: Case, tmp_path: Path, capsys, monkeypatch) -> None:
    _setup(tmp_path)
    monkeypatch.chdir(tmp_path)  # the default --out kreassign-out lands here
    if case.stdin is not None:
        data = case.stdin.encode() if isinstance(case.stdin, str) else case.stdin
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    before, fixtures_before = _snapshot(tmp_path), _snapshot(FIXTURES)
    subst = {"{tmp}": str(tmp_path), "{fx}": str(FIXTURES)}

    def fill(text: str) -> str:
        for k, v in subst.items():
            text = text.replace(k, v)
        return text

    try:
        code = main([fill(a) for a in case.argv])
    except SystemExit as e:  # argparse's own usage errors
        code = e.code
    out, err = capsys.readouterr()
    assert code == case.code, f"exit {code}, expected {case.code}; stderr: {err[-2000:]}"
    assert "Traceback" not in err and "Traceback" not in out
    where = out if case.stdin is not None else err
    for culprit in case.culprits:
        assert fill(culprit) in where, f"{fill(culprit)!r} not named in: {where[-2000:]}"
    if case.code == 2 and case.stdin is None:
        lines = [ln for ln in err.splitlines() if ln.startswith("kreassign")]
        assert len(lines) == 1 or "usage:" in err, err  # one line (argparse adds its usage first)
    after = _snapshot(tmp_path)
    for name, data in before.items():
        assert after.get(name) == data, f"{name} was changed or removed"
    assert _snapshot(FIXTURES) == fixtures_before


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write into read-only directories")
@pytest.mark.parametrize("argv", [
    ["check", "--profile", "kraft", "--out", "{ro}"],
    ["check", "--profile", "kraft", "--out", "{ro}/sub"],
    ["reassign-json", "normalize", "{plan}", "--out", "{ro}/x.json"],
    ["check", "--profile", "kraft", "--junit", "{ro}/j.xml"],
    ["fuzz", "--out", "{ro}"],
    ["prove", "--out", "{ro}"],
], ids=["check-out", "check-out-sub", "reassign-json-out", "check-junit", "fuzz-out", "prove-out"])
def test_read_only_directory_is_refused(argv, tmp_path: Path, capsys) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}\n')
    ro.chmod(0o555)
    try:
        code = main([a.replace("{ro}", str(ro)).replace("{plan}", str(plan)) for a in argv])
    finally:
        ro.chmod(0o755)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and str(ro) in err
    assert list(ro.iterdir()) == []


def test_corpus_is_large_and_covers_every_subcommand() -> None:
    from kreassign.cli import SUBCOMMANDS

    assert len(CASES) >= 80
    covered = {c.argv[0] for c in CASES}
    assert set(SUBCOMMANDS) <= covered, set(SUBCOMMANDS) - covered


def test_debug_shows_the_traceback(tmp_path: Path, capsys) -> None:
    shutil.copy(FIXTURES / "truncated_trace.json", tmp_path / "t.json")
    with pytest.raises(Exception) as e:
        main(["--debug", "show", str(tmp_path / "t.json")])
    assert "truncated JSON" in str(e.value)


@pytest.mark.parametrize("argv", [
    ["check", "--profile", "kraft", "--out", "{ro}"],
    ["check", "--profile", "kraft", "--out", "{ro}/sub"],
    ["check", "--profile", "kraft", "--junit", "{ro}/j.xml"],
    ["fuzz", "--out", "{ro}"],
    ["prove", "--out", "{ro}"],
], ids=["check-out", "check-out-sub", "check-junit", "fuzz-out", "prove-out"])
def test_unwritable_directory_is_refused_before_the_run(argv, tmp_path: Path, capsys, monkeypatch) -> None:
    """The same refusals whoever runs the tests (root ignores mode bits): the directory reports no write access."""
    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if os.path.abspath(p) == str(ro) else real_access(p, mode))
    code = main([a.replace("{ro}", str(ro)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and str(ro) in err and "writable" in err
    assert list(ro.iterdir()) == []
