"""Ctrl-C in every subcommand that runs long enough to be interrupted (issue 29): exit 130, no traceback,
one line on stderr, no process left.

Each case starts `python -m kreassign ...` in a process group of its own, waits until the run is
demonstrably working, never on a fixed sleep alone:

- a line on stderr (check's progress lines, prove's `[prove]` lines, cluster start's `launched`);
- its own processes in the group (check's and plan's forked workers, the JVM of `--impl kafka`, Maven);
- a reply on stdout (oracle);
- for the commands that print nothing while they work (fuzz, validate-trace, status --snapshot, report):
  more CPU time than a whole small run of the same command takes, start-up and output included, so
  the start-up is over and the work has begun (`_small_run_cpu`);

then sends SIGINT to the whole group, as a terminal's Ctrl-C does, and, for the commands with processes of
their own, also (in a second run) to the leader alone, as `kill -INT PID` does. Every case asserts:
exit code 130; no traceback (nor "Exception ignored", nor a logged ERROR) anywhere on stderr; what stderr
says after the signal is one line, `kreassign NAME: ...interrupted...` (progress lines the run had
already printed aside); and no process of the group is left (/proc; zombies aside), within 15 s. The
oracle's stdout is a protocol: its line goes to stderr like every other's, stdout gets nothing more.

These cases are marked slow; the last two tests check the handler's rules in this process. The Spark
engine's cases (`check --engine spark`, a JVM and its Python workers) are in
tests/spark/test_spark_interrupts.py.

Not here, and why:

- conformance: it drives real clusters (the cluster tier); its Ctrl-C (exit 130, what ran is reported) is
  not tested anywhere yet;
- cluster start once the cluster is up: Ctrl-C is how it is stopped (exit 0, tests/cluster/
  test_cluster_cleanup.py); here it is interrupted while it starts (130), which nothing else tests;
- status --bootstrap-server and plan --bootstrap-server: they need a live cluster (tests/cluster);
- replay (also with --impl kafka, whose JVM answers within half a second), show, reassign-json,
  spark-package, doctor, kafka list: each ends within about a second on the largest input the repository
  has; there is nothing to interrupt but the start-up, whose KeyboardInterrupt kreassign.cli.main turns into
  one line and 130 like any other (test_exit_codes.py::test_keyboard_interrupt_in_any_subcommand_is_130);
  the JVM of --impl kafka is interrupted here in `check`, which drives it the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import plan_cluster
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
ZK_LOG = FIXTURES / "seed003_zk_reassignment.log"
SNAPSHOT = ROOT / "examples" / "status-snapshot.json"
TRACES = sorted((ROOT / "counterexamples").glob("*.json"))

READY_TIMEOUT = 120.0  # seconds a run may take to show it is working (a loaded machine starts JVMs slowly)
EXIT_TIMEOUT = 60.0  # seconds from SIGINT to exit
GONE_TIMEOUT = 15.0  # seconds for the group's last processes (a JVM whose stdin closed) to end


# -- processes ------------------------------------------------------------------------------------------------


def _stat_fields(pid: int | str) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state first); None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def proc_stat(pid: int | str) -> tuple[str, int, int] | None:
    """(state, parent, process group); None when the process is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else (fields[0], int(fields[1]), int(fields[2]))


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def group_members(pgid: int) -> dict[int, str]:
    """The live processes of process group `pgid` (zombies, which have ended, aside): pid -> command line."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(name)
            if st is not None and st[2] == pgid and st[0] not in ("Z", "X"):
                out[int(name)] = cmdline(int(name))
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU of `pid` and of the children it has waited for."""
    fields = _stat_fields(pid)
    return 0.0 if fields is None else sum(int(fields[k]) for k in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    """`python -m kreassign ARGV` in a process group of its own (its pid is the group's id), its stdout and
    stderr collected line by line as they come."""

    argv: list[str]
    proc: subprocess.Popen
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def command(self) -> str:
        return next(a for a in self.argv if not a.startswith("-"))

    def stderr(self) -> str:
        return "".join(self.err)


def start(argv: list[str], cwd: Path, *, stdin=subprocess.DEVNULL, env: dict[str, str] | None = None) -> Run:
    # a background job's SIGINT may be ignored (SIG_IGN is inherited): give the run the default (resetting a
    # disposition takes no lock, so the fork-with-threads hazard PLW1509 warns of does not apply)
    proc = subprocess.Popen([sys.executable, "-m", "kreassign", *argv], cwd=cwd, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0,
                            env={**os.environ, **(env or {})},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    run = Run(argv, proc)
    for stream, lines in ((proc.stdout, run.out), (proc.stderr, run.err)):
        reader = threading.Thread(target=lambda s=stream, acc=lines: acc.extend(iter(s.readline, "")), daemon=True)
        reader.start()
        run.readers.append(reader)
    return run


def kill_group(run: Run) -> None:
    """Clean-up whatever happened: nothing of a failed case outlives it."""
    if group_members(run.pid):
        with contextlib.suppress(OSError):
            os.killpg(run.pid, signal.SIGKILL)
    if run.proc.poll() is None:
        run.proc.kill()
        run.proc.wait(10)


@pytest.fixture
def runs():
    started: list[Run] = []
    yield started
    for run in started:
        kill_group(run)


def wait_until(run: Run, ready: Callable[[Run], bool], what: str, timeout: float = READY_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not ready(run):
        assert run.proc.poll() is None, \
            f"kreassign {run.command} ended (exit {run.proc.returncode}) before {what}:\n{run.stderr()[-3000:]}"
        assert time.monotonic() < deadline, f"kreassign {run.command}: no {what} within {timeout:g} s:\n" \
                                            f"{run.stderr()[-3000:]}"
        time.sleep(0.05)
    assert run.proc.poll() is None, f"kreassign {run.command} ended before it could be interrupted"


def on_stderr(text: str) -> Callable[[Run], bool]:
    return lambda run: any(text in line for line in list(run.err))


def processes(count: int, containing: str = "") -> Callable[[Run], bool]:
    """At least `count` processes in the group besides the leader (whose command line contains `containing`)."""
    return lambda run: sum(1 for pid, cmd in group_members(run.pid).items()
                           if pid != run.pid and containing in cmd) >= count


def cpu_beyond(seconds: float) -> Callable[[Run], bool]:
    return lambda run: cpu_seconds(run.pid) > seconds


def busy_workers(count: int, seconds: float = 0.2) -> Callable[[Run], bool]:
    """At least `count` processes in the group besides the leader that have each used `seconds` of CPU (a
    pool's workers that are working, not just started)."""
    return lambda run: sum(1 for pid in group_members(run.pid) if pid != run.pid and cpu_seconds(pid) >= seconds) \
        >= count


def _small_run_cpu(argv: list[str], cwd: Path) -> float:
    """The CPU time a whole small run of a command takes (its start-up, a small input's work, its output):
    a long run that has used more than this is past its start-up."""
    proc = subprocess.Popen([sys.executable, "-m", "kreassign", *argv], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode in (0, 1), f"the small run of {argv} failed: exit {proc.returncode}"
    return usage.ru_utime + usage.ru_stime


#: lines a run prints while it works, which may still arrive after the signal was sent
PROGRESS = ("progress ", "[prove] ", "cluster: ", "kafka fetch: ")
#: what must never be on stderr: a traceback, an exception Python swallowed, a library's logged error
NOISE = ("Traceback", "Exception ignored", "ERROR", "Exception in thread", "Process ForkPoolWorker", "KeyboardInterrupt")


def interrupt(run: Run, to: str) -> tuple[int, str, str, list[str]]:
    """SIGINT to the whole group ("group", a terminal's Ctrl-C) or to the leader alone ("leader"); then wait
    for the exit: (exit code, stdout, stderr, stderr's lines since the signal)."""
    seen = len(run.err)
    if to == "group":
        os.killpg(run.pid, signal.SIGINT)
    else:
        os.kill(run.pid, signal.SIGINT)
    try:
        code = run.proc.wait(EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"kreassign {run.command} did not end within {EXIT_TIMEOUT:g} s of SIGINT:\n{run.stderr()[-3000:]}")
    deadline = time.monotonic() + GONE_TIMEOUT
    for reader in run.readers:  # they end at end of file, once no process of the group holds the pipes
        reader.join(max(0.0, deadline - time.monotonic()))
    return code, "".join(run.out), run.stderr(), run.err[seen:]


def group_left(run: Run) -> dict[int, str]:
    """What is left of the run's process group once GONE_TIMEOUT has passed (nothing, when all is well)."""
    deadline = time.monotonic() + GONE_TIMEOUT
    left = group_members(run.pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = group_members(run.pid)
    return left


def assert_interrupted(run: Run, to: str) -> tuple[str, str]:
    """The contract of issue 29; (stdout, stderr)."""
    code, out, err, after = interrupt(run, to)
    noise = [line for line in err.splitlines() if any(n in line for n in NOISE)]
    assert not noise, f"kreassign {run.command} (SIGINT to the {to}): {noise[0]!r} on stderr:\n{err[-3000:]}"
    assert code == 130, f"kreassign {run.command} (SIGINT to the {to}): exit {code}, not 130:\n{err[-3000:]}"
    said = [line.rstrip("\n") for line in after if line.strip() and not line.startswith(PROGRESS)]
    assert len(said) == 1 and said[0].startswith(f"kreassign {run.command}: ") and "interrupted" in said[0], \
        f"kreassign {run.command} (SIGINT to the {to}): stderr after the signal is not one line:\n{''.join(after)}"
    assert err.rstrip("\n").splitlines()[-1] == said[0]
    left = group_left(run)
    assert not left, f"kreassign {run.command} (SIGINT to the {to}) left processes of its group: {left}"
    return out, err


# -- the cases ------------------------------------------------------------------------------------------------

#: a kraft configuration whose check runs for minutes (it is interrupted within seconds)
BIG_KRAFT = ["--profile", "kraft", "--brokers", "5", "--rf", "3", "--reassigns", "2", "--failures", "2"]


@pytest.mark.slow
def test_check_on_the_embedded_engine(tmp_path, runs) -> None:
    run = start(["check", *BIG_KRAFT, "--progress-interval", "0.2", "--out", str(tmp_path / "out")], tmp_path)
    runs.append(run)
    wait_until(run, on_stderr("progress kraft:"), "progress line")
    out, err = assert_interrupted(run, "group")
    assert "kreassign check: interrupted: kraft while exploring after" in err
    assert out.rstrip().endswith("exit 130 (interrupted: 1 of 1 profile(s) incomplete or not run)")


@pytest.mark.slow
@pytest.mark.parametrize("to", ["group", "leader"])
def test_check_with_worker_processes(to, tmp_path, runs) -> None:
    """--workers 2 forks a pool that tabulates the reference (--no-kernel: the kraft kernel answers in one
    process); a worker that got the Ctrl-C too used to print "Process ForkPoolWorker-1:" and its traceback."""
    run = start(["check", *BIG_KRAFT, "--no-kernel", "--workers", "2", "--no-liveness", "--progress-interval", "0.2",
                 "--out", str(tmp_path / "out")], tmp_path)
    runs.append(run)
    wait_until(run, busy_workers(1), "forked worker at work")
    assert_interrupted(run, to)


@pytest.mark.slow
def test_prove(tmp_path, runs) -> None:
    run = start(["prove", "--out", str(tmp_path / "out")], tmp_path)
    runs.append(run)
    wait_until(run, on_stderr("[prove]"), "[prove] line")
    out, _ = assert_interrupted(run, "group")
    assert "unknown" not in out  # z3 used to swallow the Ctrl-C: every property "unknown", exit 0


@pytest.mark.slow
def test_fuzz(tmp_path, runs) -> None:
    small = _small_run_cpu(["fuzz", "--examples", "1", "--steps", "5", "--no-exhaustive", "--seed", "1",
                            "--out", str(tmp_path / "small")], tmp_path)
    run = start(["fuzz", "--examples", "1000000", "--steps", "50", "--no-exhaustive", "--seed", "1",
                 "--out", str(tmp_path / "out")], tmp_path)
    runs.append(run)
    wait_until(run, cpu_beyond(2 * small), f"CPU beyond {2 * small:.2f} s (twice a whole small run)")
    assert_interrupted(run, "group")


@pytest.mark.slow
def test_validate_trace_on_a_search_that_runs_for_minutes(tmp_path, runs) -> None:
    small = _small_run_cpu(["validate-trace", str(ZK_LOG)], tmp_path)
    run = start(["validate-trace", str(ZK_LOG), "--max-unlogged", "12", "--max-requests", "4", "--all-explanations",
                 "--max-states", "100000000"], tmp_path)
    runs.append(run)
    wait_until(run, cpu_beyond(2 * small), f"CPU beyond {2 * small:.2f} s (twice a whole default validation)")
    assert_interrupted(run, "group")


@pytest.mark.slow
def test_oracle_waiting_for_its_next_request(tmp_path, runs) -> None:
    run = start(["oracle"], tmp_path, stdin=subprocess.PIPE)
    runs.append(run)
    run.proc.stdin.write('{"id": 1, "op": "ops"}\n')
    run.proc.stdin.flush()
    wait_until(run, lambda r: bool(r.out), "reply on stdout")
    assert json.loads(run.out[0])["id"] == 1
    code, _, err, after = interrupt(run, "group")
    # the oracle's stdout is its protocol: nothing more there; the one line goes to stderr as everywhere
    assert code == 130 and "Traceback" not in err
    assert [a.strip() for a in after if a.strip()] == ["kreassign oracle: interrupted"], after
    assert not group_left(run)


def _big_snapshot(path: Path, count: int) -> None:
    """A snapshot of `count` reassignments of RF 4 from live brokers onto the other two live brokers and the
    two fenced ones (7, 8) of eight: seconds of analysis each."""
    snap = json.loads(SNAPSHOT.read_text())
    fenced = (7, 8)
    snap["brokers"] = {str(b): {"rack": None, "fenced": b in fenced} for b in range(1, 9)}
    snap["partitions"], snap["topic_configs"], snap["broker_configs"] = [], {}, {}
    for k, original in enumerate([(1, 2, 3, 4), (1, 2, 3, 5), (1, 2, 4, 6), (2, 3, 5, 6)][:count]):
        target = [*(b for b in range(1, 7) if b not in original), *fenced]
        topic = f"t{k}"
        snap["partitions"].append({"topic": topic, "partition": 0, "replicas": [*target, *original],
                                   "isr": list(original), "leader": original[0], "elr": [], "last_known_elr": [],
                                   "adding": target, "removing": list(original), "reassigning": True})
        snap["topic_configs"][topic] = {"min.insync.replicas": str(1 + k % 2),
                                        "unclean.leader.election.enable": "false",
                                        "leader.replication.throttled.replicas": "",
                                        "follower.replication.throttled.replicas": ""}
    path.write_text(json.dumps(snap))


@pytest.mark.slow
def test_status_on_a_big_snapshot(tmp_path, runs) -> None:
    small = _small_run_cpu(["status", "--snapshot", str(SNAPSHOT)], tmp_path)
    big = tmp_path / "big.json"
    _big_snapshot(big, 4)
    run = start(["status", "--snapshot", str(big), "--html", str(tmp_path / "status.html")], tmp_path)
    runs.append(run)
    wait_until(run, cpu_beyond(2 * small), f"CPU beyond {2 * small:.2f} s (twice a whole run on {SNAPSHOT.name})")
    assert_interrupted(run, "group")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json"]  # no report, no temp file


@pytest.mark.slow
def test_report_of_thousands_of_traces(tmp_path, runs) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    for k in range(60):  # every curated trace, 60 times over (links: no copies)
        for t in TRACES:
            os.link(t, traces / f"{k:02d}-{t.name}")
    (tmp_path / "small").mkdir()
    small = _small_run_cpu(["report", str(TRACES[0]), "-o", str(tmp_path / "small" / "one.html")], tmp_path)
    out_dir = tmp_path / "html"
    out_dir.mkdir()
    run = start(["report", str(traces), "-o", str(out_dir / "report.html")], tmp_path)
    runs.append(run)
    wait_until(run, cpu_beyond(2 * small), f"CPU beyond {2 * small:.2f} s (twice a whole report of one trace)")
    assert_interrupted(run, "group")
    assert list(out_dir.iterdir()) == []  # nothing half-written, no temp file


@pytest.mark.slow
@pytest.mark.parametrize("to", ["group", "leader"])
def test_plan_with_two_worker_processes(to, tmp_path, runs) -> None:
    paths, _, _ = plan_cluster.write_files(tmp_path)
    run = start(["plan", paths["plan.json"], "--current", paths["current.json"], "--describe", paths["describe.txt"],
                 "--jobs", "2"], tmp_path)
    runs.append(run)
    wait_until(run, busy_workers(2), "two shape workers at work")
    assert_interrupted(run, to)


# -- with Java: Kafka's controller, Maven, a real cluster -------------------------------------------------------


@pytest.mark.slow
@pytest.mark.kafka
@pytest.mark.parametrize("to", ["group", "leader"])
def test_check_against_kafkas_controller(to, tmp_path, runs) -> None:
    """--impl kafka: Kafka's KRaft controller in a JVM of the group (a Ctrl-C to the group ends it at once)."""
    run = start(["check", "--impl", "kafka", "--kafka-version", "3.9.2", "--profile", "kraft", "--brokers", "4",
                 "--rf", "3", "--reassigns", "2", "--failures", "1", "--progress-interval", "0.2",
                 "--out", str(tmp_path / "out")], tmp_path)
    runs.append(run)
    wait_until(run, lambda r: processes(1, "java")(r) and on_stderr("progress kraft:")(r), "JVM and progress line")
    assert_interrupted(run, to)


@pytest.mark.slow
@pytest.mark.kafka
@pytest.mark.parametrize("to", ["group", "leader"])
def test_kafka_fetch_while_maven_resolves(to, tmp_path, runs) -> None:
    """A fetch into an empty cache of its own: Maven (a JVM) resolves from ~/.m2; interrupted, it leaves nothing."""
    cache = tmp_path / "cache"
    run = start(["kafka", "fetch", "3.9.2"], tmp_path, env={"XDG_CACHE_HOME": str(cache)})
    runs.append(run)
    wait_until(run, lambda r: on_stderr("kafka fetch: resolving")(r) and processes(1, "java")(r), "Maven running")
    assert_interrupted(run, to)
    assert not list((cache / "kreassign" / "kafka").iterdir())  # no release, no half-made temp folder


@pytest.mark.slow
@pytest.mark.cluster
def test_cluster_start_before_the_cluster_is_up(tmp_path, runs) -> None:
    """Its nodes run in process groups of their own: they are found by their directory, which must be gone too."""
    run = start(["cluster", "start"], tmp_path)
    runs.append(run)
    wait_until(run, on_stderr("cluster: launched"), "nodes launched")
    directory = next(line.split(" in ", 1)[1].strip() for line in run.err if line.startswith("cluster: starting"))
    _, err = assert_interrupted(run, "group")
    assert "every process ended and its directory removed" in err
    deadline = time.monotonic() + GONE_TIMEOUT
    while (nodes := [p for p in map(int, filter(str.isdigit, os.listdir("/proc"))) if directory in cmdline(p)]) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not nodes and not Path(directory).exists()


# -- the handler's rules, in this process (kreassign/interrupts.py) ---------------------------------------------


def _frame_inside_json():
    """A frame whose stack passes through the json package's code (as the driver's through Py4J's)."""
    seen = []
    json.loads('{"a": 1}', object_hook=lambda d: seen.append(sys._getframe()) or d)
    return seen[0]


@pytest.fixture
def default_sigint():
    """The handler these rules start from: Python's default. A test run earlier in the same process may have
    left another (an in-process SparkContext installs PySpark's), and reliable_ctrl_c then leaves SIGINT to it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_inside_a_deferred_library_is_handed_to_the_caller_once(default_sigint) -> None:
    from kreassign import interrupts

    ended = threading.Event()
    with interrupts.reliable_ctrl_c():
        assert interrupts.defer_inside("json", on_interrupt=ended.set)
        interrupts._handler(signal.SIGINT, _frame_inside_json())  # deferred: no exception here
        assert ended.wait(5)  # what the library waits on is ended, from a thread of its own
        assert interrupts.interrupt_pending()
        assert interrupts.take_interrupt() and not interrupts.take_interrupt()  # the caller raises it, once
        time.sleep(0.2)  # the scheduled re-delivery finds it taken: no second KeyboardInterrupt
        with pytest.raises(KeyboardInterrupt):  # elsewhere, Ctrl-C is raised at once
            interrupts._handler(signal.SIGINT, sys._getframe())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not interrupts.defer_inside("json")  # outside a block: nothing changes


def test_a_process_forked_inside_the_block_ends_quietly_on_ctrl_c(default_sigint) -> None:
    """A pool's worker inherits the handler: it dies of SIGINT as by default, without a traceback."""
    from kreassign import interrupts

    with interrupts.reliable_ctrl_c():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            os.dup2(write, 2)
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            finally:
                os._exit(3)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        with os.fdopen(read) as f:
            said = f.read()
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT and said == ""
