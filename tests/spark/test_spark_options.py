"""SparkOptions, the one value a Spark run is configured by, and the explorer built from it (no session)."""

from __future__ import annotations

import dataclasses

import pytest
from kreassign.checker.spark.options import SEARCH_FIELDS, SparkOptions


def test_resume_checkpoints_into_its_own_directory(tmp_path):
    with pytest.raises(ValueError, match="--resume continues checkpointing into its own directory"):
        SparkOptions(checkpoint_dir=str(tmp_path / "a"), resume_dir=str(tmp_path / "b"))
    same = SparkOptions(checkpoint_dir=str(tmp_path / "a"), resume_dir=str(tmp_path / "a" / "."))
    assert same.resume and same.checkpoint_root == str(tmp_path / "a")
    assert SparkOptions(resume_dir="r").checkpoint_root == "r" and not SparkOptions(checkpoint_dir="c").resume


def test_the_value_is_frozen_and_its_conf_read_only():
    conf = {"spark.executor.memory": "4g"}
    options = SparkOptions(conf=conf)
    conf["spark.executor.memory"] = "8g"  # the caller's dict is copied
    assert options.conf == {"spark.executor.memory": "4g"}
    with pytest.raises(TypeError):
        options.conf["spark.executor.cores"] = "2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.master = "local[2]"


def test_for_search_takes_bfs_explores_options_only():
    base = SparkOptions(master="local[2]", partitions=3)
    searched = base.for_search(max_states=10, keep_graph=True, stop_on_violation=True)
    assert (searched.master, searched.partitions, searched.max_states, searched.keep_graph) == \
        ("local[2]", 3, 10, True)
    assert base.max_states is None  # a new value; the explorer's own options stay as built
    with pytest.raises(TypeError, match="checkpoint_dir"):
        base.for_search(checkpoint_dir="elsewhere")
    assert set(SEARCH_FIELDS) <= {f.name for f in dataclasses.fields(SparkOptions)}


def test_the_explorer_declares_what_it_records():
    pytest.importorskip("pyspark")
    from kreassign.checker.spark.engine import SparkExplorer, spark_explorer

    explorer = spark_explorer(SparkOptions(master="local[2]"))
    assert isinstance(explorer, SparkExplorer) and explorer.options.master == "local[2]"
    assert (explorer.engine, explorer.runs) == ("spark", [])
    assert {f.name for f in dataclasses.fields(SparkExplorer)} == {"options", "engine", "runs"}


def test_a_jvm_kreassign_starts_gets_its_driver_settings_on_the_command_line(tmp_path, monkeypatch):
    """engine.launch_settings: the caller's driver settings Spark reads only at launch, else kreassign's
    DRIVER_DEFAULTS (heap, C1 JIT), each unless the user set it where Spark's launcher reads it
    (spark-defaults.conf, SPARK_DRIVER_MEMORY, PYSPARK_SUBMIT_ARGS)."""
    from kreassign.checker.spark.engine import launch_settings
    from kreassign.checker.spark.session import DRIVER_JAVA_OPTIONS, DRIVER_MEMORY

    memory, options = "spark.driver.memory", "spark.driver.extraJavaOptions"
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.delenv("SPARK_DRIVER_MEMORY", raising=False)
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    assert launch_settings() == {memory: DRIVER_MEMORY, options: DRIVER_JAVA_OPTIONS}
    given = {memory: "7g", options: "-Xss4m", "spark.driver.extraClassPath": "/x.jar", "spark.ui.enabled": "true"}
    assert launch_settings(given) == {k: v for k, v in given.items() if k != "spark.ui.enabled"}
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-memory 3g pyspark-shell")
    assert launch_settings() == {options: DRIVER_JAVA_OPTIONS}
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Xss4m pyspark-shell")
    assert launch_settings() == {memory: DRIVER_MEMORY}
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    assert launch_settings() == {options: DRIVER_JAVA_OPTIONS}
    monkeypatch.delenv("SPARK_DRIVER_MEMORY")
    (tmp_path / "spark-defaults.conf").write_text("# mine\nspark.driver.memory 3g\nspark.driver.extraJavaOptions -Xss4m\n")
    assert launch_settings() == {}
    assert launch_settings({memory: "7g"}) == {memory: "7g"}  # --conf wins
