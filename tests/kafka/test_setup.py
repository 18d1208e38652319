"""Finding java/javac and Kafka, compiling the adapter once, the spec and the clear errors (exit 3)."""

from __future__ import annotations

import os
import shutil
import zipfile

import pytest
from kreassign.checker.oracle import kafka as K

from kreassign import cli
from kreassign.errors import InfraError, UsageError


def _no_java(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv(K.JAVA_ENV, raising=False)


def test_missing_java_is_an_infrastructure_error_naming_java_and_javac(monkeypatch, tmp_path, capsys):
    _no_java(monkeypatch, tmp_path)
    with pytest.raises(InfraError, match="java and javac not found") as e:
        K.resolve_setup()
    assert e.value.exit_code == 3
    assert cli.main(["check", "--impl", "kafka", "--profile", "kraft", "--brokers", "3"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "java and javac not found" in err[0] and "Traceback" not in err[0]


def test_missing_javac_alone_is_named(monkeypatch, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(K.find_java_tools()[0])
    _no_java(monkeypatch, tmp_path)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(K.KafkaSetupError, match=r"needs a JDK .*: javac not found"):
        K.resolve_setup()


def test_a_classpath_without_kafka_names_the_missing_controller_class(tmp_path, capsys):
    jar = tmp_path / "not-kafka.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("org/example/Nothing.class", b"")
    with pytest.raises(K.KafkaSetupError, match="lacks Kafka's KRaft controller classes") as e:
        K.resolve_setup(str(jar))
    assert "org.apache.kafka.controller.ReplicationControlManager" in str(e.value)
    assert cli.main(["doctor", "--kafka-classpath", str(jar)]) == 3
    assert "ReplicationControlManager" in capsys.readouterr().err
    assert cli.main(["check", "--impl", "kafka", "--kafka-classpath", str(tmp_path / "missing"), "--brokers", "3"]) == 3
    assert "no such file or directory" in capsys.readouterr().err


def test_a_directory_classpath_takes_its_jars_and_an_empty_one_is_refused(tmp_path):
    with pytest.raises(K.KafkaSetupError, match="holds no .jar files"):
        K.expand_classpath(str(tmp_path))
    libs = tmp_path / "libs"
    libs.mkdir()
    shared = K.default_kafka_classpath()
    (libs / "kafka-controller.jar").symlink_to(shared)
    setup = K.resolve_setup(str(libs))
    assert setup.kafka_jars == [libs / "kafka-controller.jar"] and setup.version == "3.9.0"
    assert any(j.name.startswith("jackson-databind-") for j in setup.runtime_jars)  # from pyspark's jars/


def test_the_adapter_is_compiled_once_into_the_cache_and_keyed_by_the_classpath(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    setup = K.resolve_setup()
    first = K.compile_adapter(setup)
    assert first.parent == tmp_path / "kreassign"
    marker = first / "org/apache/kafka/controller/KreassignAdapter.class"
    mtime = marker.stat().st_mtime_ns
    assert K.compile_adapter(K.resolve_setup()) == first and marker.stat().st_mtime_ns == mtime  # cached
    assert [p.name for p in (tmp_path / "kreassign").iterdir()] == [first.name]  # no temp dir left behind
    libs = tmp_path / "libs"
    libs.mkdir()
    shutil.copy(K.default_kafka_classpath(), libs / "k.jar")
    assert K._cache_key(K.resolve_setup(str(libs))) != K._cache_key(setup)  # another classpath, another key


def test_a_failed_compilation_is_an_infrastructure_error(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    broken = tmp_path / "KreassignAdapter.java"
    broken.write_text("package org.apache.kafka.controller; class KreassignAdapter { nope }")
    monkeypatch.setattr(K, "ADAPTER_SOURCE", broken)
    with pytest.raises(K.KafkaSetupError, match="javac could not compile"):
        K.compile_adapter(K.resolve_setup())
    assert not any(p.name.startswith("kafka-adapter-") for p in (tmp_path / "kreassign").iterdir())


def test_the_spec_carries_classpath_metadata_version_and_bug():
    assert K.parse_spec("kafka") == K.KafkaOptions()
    o = K.parse_spec("kafka[metadata.version=3.5-IV2,classpath=/a/libs]")
    assert (o.metadata_version, o.classpath, o.bug) == ("3.5-IV2", "/a/libs", None)
    assert K.parse_spec("kafka[bug=wrong-partition]").bug == "wrong-partition"
    assert K.make_spec("/x", "3.5-IV2") == "kafka[metadata.version=3.5-IV2,classpath=/x]"
    assert K.make_spec(None, "3.9-IV0") == "kafka"
    for bad in ("kafka[color=red]", "kafka[metadata.version=2.8-IV0]", "kafka[bug=nonsense]"):
        with pytest.raises(UsageError):
            K.parse_spec(bad)


def test_flags_without_impl_kafka_are_usage_errors(capsys):
    assert cli.main(["check", "--kafka-classpath", "/x", "--profile", "kraft"]) == 2
    assert "--kafka-classpath: applies to --impl kafka only" in capsys.readouterr().err
    assert cli.main(["check", "--impl", "kafka", "--metadata-version", "9.9-IV9"]) == 2
    assert "--metadata-version" in capsys.readouterr().err


def test_doctor_reports_java_and_kafka(capsys):
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "Kafka            3.9.0 (commit dd5272687e8adf9e)" in out and "javac" in out
    assert cli.main(["doctor", "--json"]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["kafka_version"] == "3.9.0" and report["metadata_version"] == "3.9-IV0"
    assert os.path.basename(report["kafka_classpath"][0]) == K.SHARED_JAR_NAME
