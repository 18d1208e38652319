"""`kreassign spark-package`: a zip from which executors import kreassign with nothing else installed."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile

import pytest

from kreassign.cli import main

PROBE = """
import sys
sys.path[:0] = [{zip!r}, {site!r}]  # the zip first; site-packages for numpy and pyspark only (no .pth: no editable kreassign)
import kreassign
assert kreassign.__file__.startswith({zip!r}), kreassign.__file__
from kreassign.checker.spark import tasks
model = tasks.build_model({{"kind": "reassignment", "profile": "kraft", "bounds": {{"brokers": 3, "rf": 2}}}})
print(type(model).__name__, len(model.init_states()))
"""


def test_the_zip_alone_ships_kreassign(tmp_path, capsys):
    pytest.importorskip("pyspark")
    out = tmp_path / "k.zip"
    assert main(["spark-package", "-o", str(out)]) == 0
    assert "--py-files" in capsys.readouterr().out
    names = zipfile.ZipFile(out).namelist()
    assert "kreassign/checker/spark/tasks.py" in names and "kreassign/spec/__init__.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    site = sysconfig.get_paths()["purelib"]
    done = subprocess.run([sys.executable, "-S", "-c", PROBE.format(zip=str(out), site=site)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ReassignmentModel", "1"]


def test_a_missing_directory_is_a_usage_error(tmp_path, capsys):
    assert main(["spark-package", "-o", str(tmp_path / "no" / "k.zip")]) == 2
    assert "no such directory" in capsys.readouterr().err
