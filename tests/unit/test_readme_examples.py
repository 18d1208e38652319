"""Every `kreassign ...` command of README.md's sh blocks runs as a newcomer would run it from a fresh
clone: from a scratch directory holding the repository's examples/ and counterexamples/, so that
whatever a command writes (ce/, report.html) lands there.

A command's expected exit code is 0 unless its trailing comment says `exit N` (e.g. a plan that finds
a risk). Commands that take minutes are in SKIP, each with the reason and where it is tested instead.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: another README to check before it replaces the real one (a proposed edit)
README = Path(os.environ.get("KREASSIGN_README", ROOT / "README.md"))

#: command prefix -> why it is not run here
SKIP = {
    "kreassign prove": "z3 over clusters of 3..32 brokers takes over a minute (103 s by bench/prove_times.py); tests/unit/test_z3_cli.py runs it small",
    "kreassign fuzz": "hundreds of hypothesis examples; tests/unit/test_stateful.py runs the machines",
    "kreassign check --engine spark": "starts a JVM; tests/spark/ runs the engine",
    "kreassign status --bootstrap-server": "needs a cluster at that address; tests/cluster/test_status_cluster.py runs "
                                           "it on real clusters, tests/unit/test_status.py on saved snapshots",
    "kreassign plan plan.json --bootstrap-server": "needs a cluster; tests/cluster/test_status_cluster.py runs it",
    "kreassign conformance": "real clusters for minutes; tests/cluster/test_conformance_cluster.py runs 20 scenarios "
                             "per mode, tests/unit/test_conformance.py the command on a stand-in",
}


def readme_commands(text: str) -> list[tuple[str, int]]:
    """(command, expected exit code) for every line of a ```sh block that starts with `kreassign `."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL):
        for line in block.splitlines():
            line = line.strip()
            if not line.startswith("kreassign "):
                continue
            command, _, comment = line.partition("  #")
            if " #" in command:  # a single-space comment
                command, _, more = command.partition(" #")
                comment = more + comment
            m = re.search(r"\bexit (\d+)\b", comment)
            out.append((command.strip(), int(m.group(1)) if m else 0))
    return out


COMMANDS = readme_commands(README.read_text())


def test_the_parser_finds_commands_and_exit_codes():
    text = "```sh\nkreassign a x  # exit 1: a risk\n$ not me\nkreassign b   # note\n```\n```python\nkreassign c\n```\n"
    assert readme_commands(text) == [("kreassign a x", 1), ("kreassign b", 0)]
    assert COMMANDS, "README.md has no kreassign commands in sh blocks"


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A scratch directory with the files a fresh clone has that the examples name."""
    d = tmp_path_factory.mktemp("readme")
    for folder in ("examples", "counterexamples"):
        shutil.copytree(ROOT / folder, d / folder, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return d


@pytest.mark.slow
@pytest.mark.parametrize("command, code", COMMANDS, ids=[c for c, _ in COMMANDS])
def test_readme_command_runs(clone, command, code):
    for prefix, reason in SKIP.items():
        if command.startswith(prefix):
            pytest.skip(reason)
    argv = shlex.split(command)
    done = subprocess.run([sys.executable, "-m", "kreassign", *argv[1:]], cwd=clone, stdin=subprocess.DEVNULL, check=False,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == code, f"{command}: exit {done.returncode}\n{done.stderr[-3000:]}"
