"""The KRaft metadata-log fixtures (tests/fixtures/kraft_metadata) are what Kafka's code prints today."""

from __future__ import annotations

import filecmp
import importlib.util
import json
import os
import re

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "kraft_metadata")
NAMES = ("full_reassignment", "cancellation", "fenced_broker", "election")


def _generator():
    spec = importlib.util.spec_from_file_location("kraft_metadata_generate", os.path.join(FIXTURES, "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_the_fixtures_gives_the_committed_files(tmp_path, capsys):
    assert _generator().main(str(tmp_path)) == 0
    for name in NAMES:
        for ext in ("txt", "json"):
            assert filecmp.cmp(tmp_path / f"{name}.{ext}", os.path.join(FIXTURES, f"{name}.{ext}"), shallow=False), name


def test_the_dump_lines_follow_dump_log_segments_format_and_the_steps_point_at_their_batches():
    batch = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .* position: (\d+) CreateTime: \d+ size: (\d+) "
                       r"magic: 2 compresscodec: none crc: \d+ isvalid: true$")
    record = re.compile(r"^\| offset: (\d+) CreateTime: \d+ keySize: -1 valueSize: \d+ sequence: -1 headerKeys: \[\] "
                        r"payload: (\{.*\})$")
    for name in NAMES:
        with open(os.path.join(FIXTURES, f"{name}.txt"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        assert lines[:2] == ["Dumping 00000000000000000000.log", "Log starting offset: 0"]
        payloads, position, expect_offset = {}, 0, 0
        for line in lines[2:]:
            m = batch.match(line)
            if m:
                assert int(m.group(4)) == position
                position += int(m.group(5))
                continue
            m = record.match(line)
            assert m, line
            assert int(m.group(1)) == expect_offset
            expect_offset += 1
            payloads[int(m.group(1))] = json.loads(m.group(2))
        with open(os.path.join(FIXTURES, f"{name}.json"), encoding="utf-8") as f:
            steps = json.load(f)["steps"]
        for s in steps:
            if s["offsets"] is not None:
                types = {payloads[o]["type"] for o in range(s["offsets"][0], s["offsets"][1] + 1)}
                assert types <= {"PARTITION_CHANGE_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD"}, (name, s["action"])
