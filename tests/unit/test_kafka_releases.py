"""Kafka's releases from Maven: version checks, the POM handed to Maven, the cache, and the errors (no JVM)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from kreassign.checker.implementations.kafka import releases
from kreassign.spec import kafka_releases

from kreassign import cli
from kreassign.errors import UsageError


def _fake_mvn(tmp_path, script: str):
    """A `mvn` on a PATH of its own (and nothing else), running `script` with bash."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    mvn = bin_dir / "mvn"
    mvn.write_text("#!/bin/bash\n" + script)
    mvn.chmod(mvn.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def test_versions_are_released_versions_of_supported_minors():
    assert releases.parse_version("4.4.0") == "4.4.0" and releases.parse_version("3.9.1") == "3.9.1"
    for bad, words in (("4.4", "not a Kafka release"), ("latest", "not a Kafka release"), ("3.8.1", "not supported"),
                       ("5.0.0", "not supported"), ("4.4.0-rc1", "not a Kafka release")):
        with pytest.raises(UsageError, match=words):
            releases.parse_version(bad)
    assert releases.RELEASES == tuple(r.version for r in kafka_releases.RELEASES)
    assert releases.DEFAULT_RELEASE == releases.NEWEST == kafka_releases.NEWEST


def test_the_pom_lists_the_controller_artifacts_and_no_repository():
    text = releases.pom("4.1.2")
    for artifact in releases.CONTROLLER_ARTIFACTS:
        assert f"<artifactId>{artifact}</artifactId><version>4.1.2</version>" in text
    assert "repositor" not in text.lower() and "http" not in text.replace("http://maven.apache.org/POM/4.0.0", "")


def test_no_maven_is_exit_3_with_the_command_to_run(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn
    assert cli.main(["kafka", "fetch", "4.2.2"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Maven (mvn) was not found" in err[0] and "run: kreassign kafka fetch 4.2.2" in err[0]


def test_a_failed_resolution_is_exit_3_and_leaves_nothing_behind(monkeypatch, tmp_path, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("PATH", str(_fake_mvn(tmp_path, "echo '[ERROR] Could not transfer artifact: network is unreachable'; exit 1\n")))
    assert cli.main(["kafka", "fetch", "4.0.2"]) == 3
    err = capsys.readouterr().err
    assert "network is unreachable" in err and "kreassign kafka fetch 4.0.2" in err and "Traceback" not in err
    assert list((cache / "kreassign" / "kafka").iterdir()) == []  # no half-made release, no temp dir
    assert releases.cached("4.0.2") is None


def test_a_fetch_is_cached_complete_or_not_at_all(monkeypatch, tmp_path, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    calls = tmp_path / "calls"
    # a Maven that "resolves" by writing two jars where -DoutputDirectory says, and records its arguments
    script = ('echo "$@" >> ' + str(calls) + '\nfor a in "$@"; do case $a in -DoutputDirectory=*) d=${a#*=};; esac; done\n'
              '/bin/mkdir -p "$d" && : > "$d/kafka-metadata-4.3.1.jar" && : > "$d/kafka-clients-4.3.1.jar"\n')
    monkeypatch.setenv("PATH", str(_fake_mvn(tmp_path, script)))
    assert cli.main(["kafka", "fetch", "4.3.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["releases"][0]["jars"] == 2 and not out["releases"][0]["was_cached"]
    got = releases.cached("4.3.1")
    assert got is not None and {j.name for j in got.jars} == {"kafka-metadata-4.3.1.jar", "kafka-clients-4.3.1.jar"}
    args = calls.read_text()
    assert "dependency:copy-dependencies" in args and "-B" in args
    assert cli.main(["kafka", "fetch", "4.3.1"]) == 0  # cached: Maven is not asked again
    assert "(cached)" in capsys.readouterr().out and len(calls.read_text().splitlines()) == 1
    os.remove(got.jars[0])  # a jar gone: the release is not usable, and is fetched again
    assert releases.cached("4.3.1") is None
    assert cli.main(["kafka", "list", "--json"]) == 0
    listed = {r["version"]: r["cached"] for r in json.loads(capsys.readouterr().out)["releases"]}
    assert listed == {v: False for v in releases.RELEASES}


def test_fetch_usage_errors_are_exit_2(capsys):
    assert cli.main(["kafka", "fetch"]) == 2
    assert cli.main(["kafka", "fetch", "4.4.0", "--all"]) == 2
    assert cli.main(["kafka", "fetch", "2.8.0"]) == 2
    assert "not supported" in capsys.readouterr().err
    assert cli.main(["kafka"]) == 2


def test_the_release_table_is_ordered_and_each_release_accepts_its_own_range():
    versions = [r.version for r in kafka_releases.RELEASES]
    assert versions == sorted(versions, key=releases.version_key)
    for r in kafka_releases.RELEASES:
        assert r.metadata_versions[0] == r.oldest_level and r.metadata_versions[-1] == r.latest_production
        assert kafka_releases.release(r.version[:-1] + "0") is r  # any patch release of the minor
    with pytest.raises(ValueError, match="not a supported release"):
        kafka_releases.release("3.8.0")


def test_an_unwritable_cache_is_exit_3_naming_the_folder(monkeypatch, tmp_path, capsys):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")  # the cache root lies under a regular file: nothing can be made there
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert cli.main(["kafka", "fetch", "4.1.2"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write the Kafka cache" in err[0] and str(blocked) in err[0]
    assert blocked.read_text() == "not a folder"
