"""A Spark standalone cluster on this machine (a master and N workers), for the tests and benches that need one.

Every process binds to 127.0.0.1, runs in its own process group (a worker's executors are in its group) and is
stopped when the `with` block ends — SIGTERM to each group, then SIGKILL — also when the block fails or is
interrupted (Ctrl-C). Waits are conditions on the master's JSON status page with a timeout, never fixed sleeps.

    with standalone_cluster(tmp_dir, os.environ, workers=2, cores=1, memory="1g") as cluster:
        kreassign check --engine spark --master {cluster.url} ...
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kreassign.checker.spark.session import LOG4J2

START_SECONDS = 180.0  # bounds every wait: a loaded 2-core machine starts a JVM in 5-30 s


@dataclass
class Cluster:
    url: str  # spark://127.0.0.1:PORT, the master
    ui: int  # the master's web UI port (its /json/ status)
    env: dict[str, str]  # the environment its processes run in (SPARK_HOME, SPARK_CONF_DIR, ...)
    root: Path  # its configuration, logs and work directories
    home: str  # SPARK_HOME (pyspark's)
    processes: list[subprocess.Popen] = field(default_factory=list)

    def state(self) -> dict:
        return master_state(self.ui)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def master_state(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as r:
        return json.load(r)


def wait_for(what: str, condition: Callable[[], bool], seconds: float = START_SECONDS) -> None:
    """Poll `condition` until it holds; TimeoutError naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except OSError:  # (the master's page is not up yet)
            pass
        time.sleep(0.5)
    raise TimeoutError(f"timed out after {seconds:.0f} s waiting for {what}")


def stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM each process group started here, then SIGKILL what is left."""
    for p in processes:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in processes:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


@contextmanager
def standalone_cluster(root: Path, base_env: Mapping[str, str], workers: int = 2, cores: int = 1, memory: str = "1g",
                       defaults: dict[str, str] | None = None) -> Iterator[Cluster]:
    """A master and `workers` workers of `cores` cores and `memory` each, configured under `root`
    (`defaults`: spark-defaults.conf lines); its processes run in `base_env` (the caller's environment, as a
    value) plus Spark's settings."""
    from pyspark.find_spark_home import _find_spark_home

    home = _find_spark_home()
    root = Path(root)
    conf = root / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "log4j2.properties").write_text(LOG4J2)
    (conf / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in (defaults or {}).items()))
    env = {**base_env, "SPARK_HOME": home, "SPARK_CONF_DIR": str(conf), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_WORKER_DIR": str(root / "work"), "SPARK_LOG_DIR": str(root / "logs"), "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    port, ui = free_port(), free_port()
    spark_class = os.path.join(home, "bin", "spark-class")
    cluster = Cluster(f"spark://127.0.0.1:{port}", ui, env, root, home)

    def launch(name: str, *args: str) -> None:
        with open(root / f"{name}.log", "w") as log:  # (the process keeps its own descriptor)
            cluster.processes.append(subprocess.Popen([spark_class, *args], env=env, stdout=log,
                                                      stderr=subprocess.STDOUT, start_new_session=True))

    try:
        launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
               "--webui-port", str(ui))
        wait_for("the Spark master", lambda: master_state(ui)["status"] == "ALIVE")
        for i in range(1, workers + 1):
            launch(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", str(cores),
                   "--memory", memory, "--webui-port", str(free_port()), cluster.url)
        wait_for(f"{workers} Spark workers", lambda: len(master_state(ui)["workers"]) == workers)
        yield cluster
    finally:
        stop(cluster.processes)


__all__ = ["Cluster", "free_port", "master_state", "standalone_cluster", "stop", "wait_for"]
