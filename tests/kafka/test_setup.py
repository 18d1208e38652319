"""Finding java/javac and Kafka (a cached release or a distribution's libs/), compiling the adapter with the
release's layer once, the spec and the clear errors (exit 3 for the machine, exit 2 for usage)."""

from __future__ import annotations

import json
import shutil
import zipfile

import pytest
from kreassign.checker.implementations import kafka as K
from kreassign.checker.implementations.kafka import releases
from kreassign.spec import kafka_releases

from kreassign import cli
from kreassign.errors import InfraError, UsageError

KAFKA_39 = "3.9.2"  # as conftest.py: the release these tests pin


def _no_java(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)


def _libs(tmp_path, version=KAFKA_39):
    """A distribution-like libs/ directory holding the cached release's jars."""
    libs = tmp_path / f"libs-{version}"
    libs.mkdir()
    for jar in releases.classpath_for(version).jars:
        (libs / jar.name).symlink_to(jar)
    return libs


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


def test_a_distribution_libs_directory_gives_its_version_from_the_jars(tmp_path):
    with pytest.raises(K.KafkaSetupError, match="holds no .jar files"):
        K.expand_classpath(str(tmp_path))
    libs = _libs(tmp_path)
    setup = K.resolve_setup(str(libs))
    assert setup.version == KAFKA_39 and setup.source == "--kafka-classpath" and setup.layer.name == "v3_9"
    with pytest.raises(UsageError, match="contradicts"):
        K.resolve_setup(str(libs), "4.4.0")
    metadata_only = next(libs.glob("kafka-metadata-*.jar"))  # the controller's classes, no version file
    with pytest.raises(K.KafkaSetupError, match="no kafka-clients jar"):
        K.resolve_setup(str(metadata_only))


def test_every_release_has_a_layer_and_the_newest_layer_not_newer_than_the_release_is_taken():
    for r in kafka_releases.RELEASES:
        layer = K.layer_for(r.version)
        major, minor = (int(x) for x in layer.name[1:].split("_"))
        assert (major, minor) <= tuple(int(x) for x in r.version.split(".")[:2])
    assert K.layer_for("3.9.0").name == "v3_9"


def _layer_files(version):
    return [f"{p.relative_to(K.LAYERS_ROOT).parts[0]}/{p.stem}" for p in K.layer_sources(version)]


def test_each_release_compiles_its_layer_chain_and_the_moved_classes_of_the_newest_layer_that_has_them():
    """Each layer holds only what differs: 4.x's wiring shares nothing with 3.9's (its class starts a chain), and
    4.3 and 4.4 only move classes (RecordBatches: MemoryRecords & co.; LogContexts: LogContext)."""
    assert _layer_files("3.9.2") == ["v3_9/KafkaRelease3_9", "v3_9/LogContexts", "v3_9/RecordBatches"]
    for v in ("4.0.2", "4.1.2", "4.2.2"):
        assert _layer_files(v) == ["v4_0/KafkaRelease4_0", "v3_9/LogContexts", "v3_9/RecordBatches"]
    assert _layer_files("4.3.1") == ["v4_0/KafkaRelease4_0", "v3_9/LogContexts", "v4_3/RecordBatches"]
    assert _layer_files("4.4.0") == ["v4_0/KafkaRelease4_0", "v4_4/LogContexts", "v4_3/RecordBatches"]
    for r in kafka_releases.RELEASES:
        setup = K.KafkaSetup("java", "javac", [], r.version, "test")
        assert setup.sources == [K.CORE_SOURCE, *K.layer_sources(r.version)]
        layer = K.layer_for(r.version)
        assert all(p.relative_to(K.LAYERS_ROOT).parts[0] <= layer.name for p in setup.sources[1:])  # never a newer one
        generated = K.release_class_source(r.version)
        assert f"final class KafkaRelease extends {setup.sources[1].stem} {{" in generated
        assert f'static final String LAYER = "{layer.name}";' in generated


def test_the_layer_chain_follows_extends_and_a_moved_class_comes_from_the_newest_layer(monkeypatch, tmp_path):
    def java(layer, name, text):
        d = tmp_path / layer / K.PACKAGE_DIR
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{name}.java").write_text(f"package org.apache.kafka.controller;\n{text}\n")
    java("v4_0", "KafkaRelease4_0", "class KafkaRelease4_0 { }")
    java("v4_0", "Moved", "final class Moved { }")
    java("v4_1", "KafkaRelease4_1", "class KafkaRelease4_1 extends KafkaRelease4_0 { }")
    java("v4_2", "Moved", "final class Moved { }")
    java("v4_3", "KafkaRelease4_3", "class KafkaRelease4_3 { }")  # starts a chain of its own
    monkeypatch.setattr(K, "LAYERS_ROOT", tmp_path)
    assert _layer_files("4.0.2") == ["v4_0/KafkaRelease4_0", "v4_0/Moved"]
    assert _layer_files("4.2.2") == ["v4_0/KafkaRelease4_0", "v4_1/KafkaRelease4_1", "v4_2/Moved"]
    assert K.layer_for("4.2.2").name == "v4_2" and "extends KafkaRelease4_1 {" in K.release_class_source("4.2.2")
    assert _layer_files("4.4.0") == ["v4_3/KafkaRelease4_3", "v4_2/Moved"]
    java("v4_3", "KafkaRelease4_3", "class KafkaRelease4_3 extends KafkaRelease4_4 { }")
    with pytest.raises(K.KafkaSetupError, match="extends a layer class that is not older"):
        K.layer_sources("4.4.0")
    java("v4_3", "KafkaRelease4_3", "class KafkaRelease4_3 extends KafkaRelease4_2 { }")
    with pytest.raises(K.KafkaSetupError, match="extends KafkaRelease4_2, which no layer"):
        K.layer_sources("4.4.0")


def test_the_adapter_is_compiled_once_into_the_cache_and_keyed_by_release_and_classpath(monkeypatch, tmp_path):
    libs = _libs(tmp_path)  # before the cache moves: the jars stay where `kafka fetch` put them
    setup = K.resolve_setup(str(libs))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = K.compile_adapter(setup)
    assert first.parent == tmp_path / "cache" / "kreassign" and first.name.startswith(f"kafka-adapter-{KAFKA_39}-")
    marker = first / "org/apache/kafka/controller/KreassignAdapter.class"
    mtime = marker.stat().st_mtime_ns
    assert K.compile_adapter(K.resolve_setup(str(libs))) == first and marker.stat().st_mtime_ns == mtime  # cached
    assert [p.name for p in (tmp_path / "cache" / "kreassign").iterdir()] == [first.name]  # no temp dir left behind
    other = tmp_path / "other"
    shutil.copytree(libs, other, symlinks=False)
    assert K._cache_key(K.resolve_setup(str(other))) != K._cache_key(setup)  # another classpath, another key


def test_a_failed_compilation_is_an_infrastructure_error(monkeypatch, tmp_path):
    libs = _libs(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    broken = tmp_path / "KreassignAdapter.java"
    broken.write_text("package org.apache.kafka.controller; class KreassignAdapter { nope }")
    monkeypatch.setattr(K, "CORE_SOURCE", broken)
    with pytest.raises(K.KafkaSetupError, match="javac could not compile"):
        K.compile_adapter(K.resolve_setup(str(libs)))
    assert not any(p.name.startswith("kafka-adapter-") for p in (tmp_path / "cache" / "kreassign").iterdir())


def test_the_spec_carries_version_classpath_metadata_version_and_bug():
    assert K.parse_spec("kafka") == K.KafkaOptions()
    o = K.parse_spec("kafka[version=3.9.2,metadata.version=3.5-IV2,classpath=/a/libs]")
    assert (o.kafka_version, o.metadata_version, o.classpath, o.bug) == ("3.9.2", "3.5-IV2", "/a/libs", None)
    assert K.parse_spec("kafka[bug=wrong-partition]").bug == "wrong-partition"
    assert K.make_spec("/x", "3.5-IV2") == "kafka[metadata.version=3.5-IV2,classpath=/x]"
    assert K.make_spec(None, None, kafka_version="4.1.2") == "kafka[version=4.1.2]"
    assert K.make_spec() == "kafka"
    for bad in ("kafka[color=red]", "kafka[metadata.version=2.8-IV0]", "kafka[bug=nonsense]", "kafka[version=4.9.0]",
                "kafka[version=4.0.2,metadata.version=3.3-IV0]"):  # 4.x dropped the levels before 3.3-IV3
        with pytest.raises(UsageError):
            K.parse_spec(bad)


def test_flags_without_impl_kafka_are_usage_errors(capsys):
    assert cli.main(["check", "--kafka-classpath", "/x", "--profile", "kraft"]) == 2
    assert "--kafka-classpath: applies to --impl kafka only" in capsys.readouterr().err
    assert cli.main(["check", "--impl", "kafka", "--metadata-version", "9.9-IV9"]) == 2
    assert "--metadata-version" in capsys.readouterr().err
    assert cli.main(["check", "--impl", "kafka", "--kafka-version", "4.0.2", "--metadata-version", "3.3-IV1"]) == 2
    assert "not accepted by Kafka 4.0.2" in capsys.readouterr().err
    assert cli.main(["check", "--kafka-version", "2.8.1"]) == 2
    assert "--kafka-version" in capsys.readouterr().err


def test_doctor_reports_java_maven_the_cache_and_the_release(capsys):
    assert cli.main(["doctor", "--kafka-version", KAFKA_39]) == 0
    out = capsys.readouterr().out
    assert f"Kafka            {KAFKA_39} (commit" in out and "javac" in out and "maven" in out
    assert f"Kafka {KAFKA_39}    cached" in out and "layer v3_9" in out
    assert cli.main(["doctor", "--json", "--kafka-version", KAFKA_39]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kafka_version"] == KAFKA_39 and report["metadata_version"] == "3.9-IV0"
    assert report["kafka_source"] == "maven cache" and report["adapter_layer"] == "v3_9"
    assert any(c["version"] == KAFKA_39 for c in report["cached_releases"])


def test_doctor_never_downloads_a_release_that_is_not_cached(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cli.main(["doctor", "--kafka-version", "4.1.2"]) == 3
    captured = capsys.readouterr()
    assert "Kafka 4.1.2 is not cached; run: kreassign kafka fetch 4.1.2" in captured.err
    assert "not cached" in captured.out and not (tmp_path / "kreassign" / "kafka" / "4.1.2").exists()
