"""Nothing of a cluster outlives it: not after an exception inside the `with`, not after Ctrl-C of `kreassign
cluster start`, not after SIGKILL of the driver (the watchdog's job), not when a node cannot start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_checks import KAFKA_39, NEWEST, alive, assert_cleaned
from kreassign.checker.cluster import ClusterSpec, start_cluster


def test_an_exception_inside_the_with_leaves_nothing():
    seen = {}
    with pytest.raises(RuntimeError, match="a failing test"), \
            start_cluster(ClusterSpec(version=NEWEST, controllers=3, brokers=3)) as c:
        seen.update(directory=c.directory, pids=list(c.pids().values()))
        assert len(seen["pids"]) == 7 and all(alive(p) for p in seen["pids"])
        assert sorted(v["id"] for v in c.admin.quorum()["voters"]) == [3000, 3001, 3002]
        assert c.active_controller() in (3000, 3001, 3002)
        raise RuntimeError("a failing test")
    assert_cleaned(seen["directory"], seen["pids"])


def _start_cli(*flags: str) -> tuple[subprocess.Popen, dict]:
    """`kreassign cluster start --json` in its own process; its JSON line once the cluster is up."""
    # a background job's SIGINT may be ignored (SIG_IGN is inherited): give the child the default, as a terminal does
    proc = subprocess.Popen([sys.executable, "-m", "kreassign", "cluster", "start", "--json", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        raise AssertionError(f"kreassign cluster start ended (exit {proc.wait()}): {proc.stderr.read()}")
    return proc, json.loads(line)


def test_ctrl_c_stops_the_cli_cluster_with_exit_0_and_leaves_nothing():
    proc, info = _start_cli("--kafka-version", NEWEST)
    try:
        assert (info["kafka_version"], info["mode"], info["active_controller"]) == (NEWEST, "kraft", 3000)
        brokers = [n for n in info["nodes"] if n["role"] == "broker"]
        assert info["bootstrap"] == ",".join(f"127.0.0.1:{n['port']}" for n in brokers)
        assert [n["name"] for n in info["nodes"]] == ["controller-3000", "broker-1", "broker-2", "broker-3"]
        pids = [n["pid"] for n in info["nodes"]]
        assert all(alive(p) for p in pids)
        proc.send_signal(signal.SIGINT)
        # the stop's own bounds: each JVM and the Admin helper reaped within 15 s / 10 s of SIGKILL, the watchdog
        # within 20 s (Cluster.close); stderr is read meanwhile, so a full pipe cannot hold the driver up
        _, err = proc.communicate(timeout=4 * 15 + 10 + 20 + 30)
        assert proc.returncode == 0, err
    finally:
        proc.kill()
    assert "removed" in err
    assert_cleaned(Path(info["directory"]), pids)


def test_sigkill_of_the_driver_leaves_no_jvm_and_no_directory():
    proc, info = _start_cli("--kafka-version", KAFKA_39, "--mode", "zk")
    pids = [n["pid"] for n in info["nodes"]]
    assert [n["name"] for n in info["nodes"]] == ["zookeeper", "broker-1", "broker-2", "broker-3"]
    assert all(alive(p) for p in pids) and Path(info["directory"]).is_dir()
    os.kill(proc.pid, signal.SIGKILL)  # no clean-up code of the driver runs
    proc.wait()
    assert_cleaned(Path(info["directory"]), pids)


def test_a_cluster_that_cannot_start_is_exit_3_naming_the_node_with_its_log():
    proc = subprocess.run([sys.executable, "-m", "kreassign", "cluster", "start", "--kafka-version", KAFKA_39,
                           "--mode", "zk", "--broker-config", "num.io.threads=0"],
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 3, proc.stderr
    err = proc.stderr
    assert "exited (code 1) while waiting for every broker registered and unfenced" in err
    assert "num.io.threads" in err and "--- last lines of broker-" in err and "Traceback" not in err
    directory = next(line.split(" in ", 1)[1] for line in err.splitlines()
                     if line.startswith("cluster: starting"))
    assert_cleaned(Path(directory), [])
