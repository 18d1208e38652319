"""Outputs that cannot harm (docs/outputs.md, issue 29): every output flag of every subcommand, run for real
through `kreassign.cli.main`, against the targets that used to be destroyed or silently overwritten.

Each case checks the documented outcome: the exit code, one line on stderr naming the flag and the path, no
traceback, and the target untouched (a device node still the same device, an input byte-identical, no
temporary file left). Device nodes are private ones made in tmp_path with os.mknod (root only: those cases
are skipped otherwise), never the system's /dev files. A full disk is os.fsync failing with ENOSPC.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kreassign.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TRACE = ROOT / "counterexamples" / "kip236__adding_removing_disjoint__drop_rule_ignores_target.json"
AS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="device nodes are made with os.mknod, which needs root")
SMALL = """[bounds]
brokers = 3
rf = 2
reassigns = 1
cancels = 1
failures = 0

[profiles]
names = ["kraft"]
"""
PRECIOUS = b"precious: the user's own file\n"
NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)  # what /dev/null and /dev/full are, made privately


@dataclass(frozen=True)
class Output:
    """One output flag of one subcommand: the command line writing to `o`, the codes of a normal run, and the
    input of the same run the flag could overwrite (a file of the inputs folder, with the flags naming it)."""

    name: str
    argv: Callable[[Path, str], list[str]]
    ok: tuple[int, ...]
    victim: str | None = None  # a file in the inputs folder
    label: str = ""  # how the refusal names that input
    victim_argv: Callable[[Path], list[str]] = field(default=lambda d: [])  # flags that make it an input

    def __str__(self) -> str:
        return self.name


def _check(d: Path, *flags: str) -> list[str]:
    return ["check", "--config", str(d / "small.toml"), "--no-liveness", "--workers", "1", "--out", str(d / "cx"),
            *flags]


def _plan(d: Path, *flags: str) -> list[str]:
    return ["plan", str(d / "plan.json"), "--current", str(d / "current.json"), "--jobs", "1", "--failures", "0",
            "--no-cancel", "--no-liveness", *flags]


def _plan_traces(d: Path, out: str) -> list[str]:
    """A plan with risks, hence traces in --out (zk: a cancel changes the preferred leader)."""
    return ["plan", str(d / "plan.json"), "--current", str(d / "current.json"), "--jobs", "1", "--failures", "0",
            "--no-liveness", "--profile", "zk", "--out", out]


FILES = [
    Output("check --html", lambda d, o: _check(d, "--html", o), (0,), "small.toml", "--config"),
    Output("check --junit", lambda d, o: _check(d, "--junit", o), (0,), "small.toml", "--config"),
    Output("conformance --junit", lambda d, o: ["conformance", "--scenarios", "1", "--junit", o], (0,),
           "scenario.json", "--replay", lambda d: ["--replay", str(d / "scenario.json")]),
    Output("conformance --html", lambda d, o: ["conformance", "--scenarios", "1", "--html", o], (0,),
           "scenario.json", "--replay", lambda d: ["--replay", str(d / "scenario.json")]),
    Output("plan --html", lambda d, o: _plan(d, "--html", o), (0, 1), "current.json", "--current"),
    Output("plan --rollback-out", lambda d, o: _plan(d, "--rollback-out", o), (0, 1), "plan.json", "PLAN.json"),
    Output("status --html", lambda d, o: ["status", "--snapshot", str(d / "status.json"), "--html", o], (1,),
           "status.json", "--snapshot"),
    Output("reassign-json --out", lambda d, o: ["reassign-json", "normalize", str(d / "plan.json"), "--out", o],
           (0,), "plan.json", "FILE"),
    Output("report --out", lambda d, o: ["report", str(d / "trace.json"), "-o", o], (0,), "trace.json", "TRACE"),
    Output("spark-package --output", lambda d, o: ["spark-package", "-o", o], (0,)),
]
DIRS = [
    Output("check --out", lambda d, o: _check(d, "--out", o), (0,), "small.toml"),
    Output("check --checkpoint", lambda d, o: _check(d, "--checkpoint", o), (0,), "small.toml"),
    Output("conformance --out", lambda d, o: ["conformance", "--scenarios", "1", "--out", o], (0,), "scenario.json",
           victim_argv=lambda d: ["--replay", str(d / "scenario.json")]),
    Output("fuzz --out", lambda d, o: ["fuzz", "--examples", "2", "--steps", "3", "--seed", "1", "--no-exhaustive",
                                      "--config", str(d / "small.toml"), "--out", o], (0,), "small.toml"),
    Output("plan --out", _plan_traces, (0, 1), "plan.json"),
]
FLAG = {o.name: o.name.split()[1] for o in FILES + DIRS}


def named(out: Output, path: Path) -> str:
    """How the error line names the output: `--flag PATH`; reassign-json keeps its own `<path>: <problem>`
    format (docs/reassign-json.md)."""
    return f"reassign-json: {path}: " if out.name.startswith("reassign-json") else f"{FLAG[out.name]} {path}"


@pytest.fixture
def d(tmp_path: Path) -> Path:
    """The inputs folder: every command's input files, small."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name, source in (("plan.json", EXAMPLES / "plan.json"), ("current.json", EXAMPLES / "current.json"),
                         ("status.json", EXAMPLES / "status-snapshot.json"), ("trace.json", TRACE)):
        (folder / name).write_bytes(source.read_bytes())
    (folder / "small.toml").write_text(SMALL)
    (folder / "scenario.json").write_text("{}\n")  # never read: the output is refused first
    return folder


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch):
    """`conformance` runs no cluster here: its campaign comes back empty, so that its outputs are written."""
    from kreassign.checker.conformance import campaign

    monkeypatch.setattr(campaign.Campaign, "run", lambda self, scenarios=None: campaign.CampaignResult(self.options))


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def refused(code: int, err: str, expected: int, *words: str) -> str:
    """The documented refusal: `expected` exit code, one line on stderr with every word, no traceback."""
    lines = err.strip().splitlines()
    assert code == expected, err
    assert "Traceback" not in err
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


# -- non-regular targets: refused before any work, left as they were ------------------------------------------


def _node(path: Path, kind: str) -> object:
    """Make a private non-regular file; returns what must still hold afterwards."""
    if kind in ("null", "full"):
        os.mknod(path, 0o666 | stat.S_IFCHR, NULL if kind == "null" else FULL)
        return ("chr", os.lstat(path).st_rdev)
    if kind == "fifo":
        os.mkfifo(path)
        return ("fifo",)
    sock = socket.socket(socket.AF_UNIX)
    cwd = os.getcwd()
    os.chdir(path.parent)  # a relative name: tmp paths may be longer than a socket address
    try:
        sock.bind(path.name)
    finally:
        os.chdir(cwd)
    return ("sock", sock)


def _still(path: Path, kind: str, before: object) -> None:
    st = os.lstat(path)
    if kind in ("null", "full"):
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == before[1]
    elif kind == "fifo":
        assert stat.S_ISFIFO(st.st_mode)
    else:
        assert stat.S_ISSOCK(st.st_mode)
        before[1].close()


NODES = [pytest.param("null", marks=AS_ROOT), pytest.param("full", marks=AS_ROOT), "fifo", "socket"]
WHAT = {"null": "character device", "full": "character device", "fifo": "FIFO", "socket": "socket"}


@pytest.mark.parametrize("kind", NODES)
@pytest.mark.parametrize("out", FILES, ids=str)
def test_an_output_file_over_a_device_fifo_or_socket_is_refused(out, kind, d, tmp_path, capsys):
    target = tmp_path / "node"
    before = _node(target, kind)
    reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None  # a writer would not block
    try:
        code, _, err = run(capsys, out.argv(d, str(target)))
    finally:
        if reader is not None:
            os.close(reader)
    refused(code, err, 2, named(out, target), WHAT[kind], "not a regular file")
    _still(target, kind, before)
    assert listing(tmp_path) == {"in", "node"}


@pytest.mark.parametrize("kind", NODES)
@pytest.mark.parametrize("out", DIRS, ids=str)
def test_an_output_directory_over_a_device_fifo_or_socket_is_refused(out, kind, d, tmp_path, capsys):
    target = tmp_path / "node"
    before = _node(target, kind)
    code, _, err = run(capsys, out.argv(d, str(target)))
    refused(code, err, 2, named(out, target), "not a directory")
    _still(target, kind, before)


# -- symlinks: written through to a regular target, atomically; dangling into nowhere refused ------------------


@pytest.mark.parametrize("out", FILES, ids=str)
def test_a_symlink_is_written_through_and_kept(out, d, tmp_path, capsys):
    real = tmp_path / "real"
    real.write_bytes(PRECIOUS)
    os.chmod(real, 0o640)
    link = tmp_path / "link"
    link.symlink_to(real)
    code, _, err = run(capsys, out.argv(d, str(link)))
    assert code in out.ok and "Traceback" not in err, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    data = real.read_bytes()
    assert data and data != PRECIOUS
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640  # the replaced file keeps its mode
    if out.name.startswith("spark-package"):
        assert zipfile.is_zipfile(real)
    assert listing(tmp_path) == {"in", "real", "link"}  # no temporary file left


def test_a_dangling_symlink_into_an_existing_folder_creates_its_target(d, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "new.html")
    code, _, err = run(capsys, ["report", str(d / "trace.json"), "-o", str(link)])
    assert code == 0, err
    assert link.is_symlink() and (tmp_path / "new.html").read_text().startswith("<!DOCTYPE html")


@pytest.mark.parametrize("out", FILES, ids=str)
def test_a_dangling_symlink_into_a_missing_folder_is_refused(out, d, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere" / "x")
    code, _, err = run(capsys, out.argv(d, str(link)))
    refused(code, err, 2, named(out, link), "is a symlink to", "does not exist")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("out", DIRS, ids=str)
def test_an_output_directory_may_be_a_symlink_to_one_but_not_a_dangling_one(out, d, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    code, _, err = run(capsys, out.argv(d, str(link)))
    refused(code, err, 2, named(out, link), "dangling symlink")
    link.unlink()
    (tmp_path / "real").mkdir()
    link.symlink_to(tmp_path / "real")
    code, _, err = run(capsys, out.argv(d, str(link)))
    assert code in out.ok and "Traceback" not in err, err
    assert link.is_symlink()


def test_a_symlink_loop_is_refused(d, tmp_path, capsys):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code, _, err = run(capsys, ["report", str(d / "trace.json"), "-o", str(tmp_path / "a")])
    refused(code, err, 2, f"--out {tmp_path / 'a'}")


# -- the run's own inputs and outputs: refused up front, byte-identical --------------------------------------


@pytest.mark.parametrize("out", [o for o in FILES if o.victim], ids=str)
def test_an_output_file_that_is_an_input_of_the_same_run_is_refused(out, d, capsys):
    victim = d / out.victim
    before = victim.read_bytes()
    code, _, err = run(capsys, [*out.argv(d, str(victim)), *out.victim_argv(d)])
    refused(code, err, 2, named(out, victim), f"is also the {out.label} input", "refusing to overwrite")
    assert victim.read_bytes() == before and listing(d) == {"plan.json", "current.json", "status.json",
                                                            "trace.json", "small.toml", "scenario.json"}


@pytest.mark.parametrize("out", [o for o in FILES if o.victim], ids=str)
def test_an_input_reached_through_a_symlink_or_a_hard_link_is_still_an_input(out, d, tmp_path, capsys):
    victim = d / out.victim
    before = victim.read_bytes()
    for alias, make in (("soft", lambda p: p.symlink_to(victim)), ("hard", lambda p: os.link(victim, p))):
        path = tmp_path / alias
        make(path)
        code, _, err = run(capsys, [*out.argv(d, str(path)), *out.victim_argv(d)])
        refused(code, err, 2, named(out, path), f"is also the {out.label} input")
        assert victim.read_bytes() == before


@pytest.mark.parametrize("out", [o for o in DIRS if o.victim], ids=str)
def test_an_output_directory_that_is_an_input_file_is_refused(out, d, capsys):
    victim = d / out.victim
    before = victim.read_bytes()
    code, _, err = run(capsys, [*out.argv(d, str(victim)), *out.victim_argv(d)])
    refused(code, err, 2, named(out, victim), "not a directory")
    assert victim.read_bytes() == before


@pytest.mark.parametrize("argv", [
    lambda d, o: _check(d, "--html", o, "--junit", o),
    lambda d, o: _plan(d, "--html", o, "--rollback-out", o),
    lambda d, o: ["conformance", "--junit", o, "--html", o],
], ids=["check", "plan", "conformance"])
def test_two_outputs_of_one_run_on_one_path_are_refused(argv, d, tmp_path, capsys):
    target = tmp_path / "same"
    target.write_bytes(PRECIOUS)
    code, _, err = run(capsys, argv(d, str(target)))
    refused(code, err, 2, str(target), "is also the", "output")
    assert target.read_bytes() == PRECIOUS


def test_check_out_and_html_cannot_be_one_path(d, tmp_path, capsys):
    target = tmp_path / "x"
    code, _, err = run(capsys, _check(d, "--out", str(target), "--html", str(target)))
    refused(code, err, 2, str(target), "is also the --html output")


def test_check_junit_onto_its_config_is_the_issue_example(d, capsys):
    config = d / "small.toml"
    code, _, err = run(capsys, _check(d, "--junit", str(config)))
    assert refused(code, err, 2).endswith(f"--junit {config}: is also the --config input; refusing to overwrite it")
    assert config.read_text() == SMALL


# -- a missing folder: noticed before the run, not after it ------------------------------------------------


@pytest.mark.parametrize("out", FILES, ids=str)
def test_an_output_file_in_a_missing_folder_is_refused_up_front(out, d, tmp_path, capsys, monkeypatch):
    from kreassign.checker.cli import check, plan

    def ran(*a, **k):
        pytest.fail("the command ran before its outputs were checked")

    monkeypatch.setattr(plan, "run_plan", ran)
    monkeypatch.setattr(check, "check_model", ran)
    target = tmp_path / "missing" / "out"
    code, _, err = run(capsys, out.argv(d, str(target)))
    refused(code, err, 2, named(out, target), "no such directory")
    assert not (tmp_path / "missing").exists()


def test_an_output_directory_is_made_when_missing(d, tmp_path, capsys):
    target = tmp_path / "new" / "deeper"
    code, _, err = run(capsys, _plan_traces(d, str(target)))
    assert code in (0, 1) and "Traceback" not in err
    assert any(p.suffix == ".json" for p in target.iterdir())


def test_an_output_directory_under_a_file_is_refused(d, tmp_path, capsys):
    target = d / "plan.json" / "traces"
    code, _, err = run(capsys, _plan(d, "--out", str(target)))
    refused(code, err, 2, f"--out {target}", "is not a directory")


def test_an_unwritable_folder_is_refused_up_front(d, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    real_access, ro = os.access, os.path.realpath(folder)  # root may write anywhere: the check is what is tested
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if os.path.realpath(p) == ro else real_access(p, mode, **k))
    code, _, err = run(capsys, ["report", str(d / "trace.json"), "-o", str(folder / "r.html")])
    refused(code, err, 2, "is not writable")


# -- standard output: only where the flag says so ----------------------------------------------------------


def test_dash_is_stdout_for_report_and_reassign_json(d, capsys):
    code, out, err = run(capsys, ["report", str(d / "trace.json"), "-o", "-"])
    assert code == 0 and out.startswith("<!DOCTYPE html") and "1 trace(s)" in err
    code, out, _ = run(capsys, ["reassign-json", "normalize", str(d / "plan.json"), "--out", "-"])
    assert code == 0 and out.startswith('{"version":1')
    assert not (Path.cwd() / "-").exists()


@pytest.mark.parametrize("argv", [
    lambda d: _check(d, "--junit", "-"), lambda d: _check(d, "--html", "-"), lambda d: _plan(d, "--html", "-"),
    lambda d: _plan(d, "--rollback-out", "-"), lambda d: ["status", "--snapshot", str(d / "status.json"), "--html", "-"],
    lambda d: ["conformance", "--junit", "-"], lambda d: ["spark-package", "-o", "-"],
], ids=["check-junit", "check-html", "plan-html", "plan-rollback", "status-html", "conformance-junit", "spark-package"])
def test_dash_is_refused_where_stdout_is_taken(argv, d, capsys):
    code, _, err = run(capsys, argv(d))
    refused(code, err, 2, "-: writes a file, not standard output", "./-")
    assert not (Path.cwd() / "-").exists()


# -- a full disk: exit 3, one line, the old file untouched, no temporary file ------------------------------


def _disk_full(monkeypatch) -> None:
    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("out", FILES, ids=str)
def test_a_full_disk_is_exit_3_and_the_old_file_is_untouched(out, d, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "o"
    folder.mkdir()
    target = folder / "old"
    target.write_bytes(PRECIOUS)
    _disk_full(monkeypatch)
    code, _, err = run(capsys, out.argv(d, str(target)))
    assert code == 3, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if str(target) in line]
    assert len(lines) == 1 and "No space left on device" in lines[0], err
    assert named(out, target) in lines[0] and (out.name.startswith("reassign-json") or "left as it was" in lines[0])
    assert lines[0] == err.strip().splitlines()[-1]
    assert target.read_bytes() == PRECIOUS and listing(folder) == {"old"}


def test_a_full_disk_under_an_output_directory_is_exit_3(d, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "traces"
    _disk_full(monkeypatch)
    code, _, err = run(capsys, _plan_traces(d, str(folder)))
    assert code == 3 and "Traceback" not in err
    assert "No space left on device" in err.strip().splitlines()[-1]
    assert listing(folder) == set()  # the temporary file removed


def test_a_full_disk_before_the_temporary_file_exists_is_exit_3(d, tmp_path, capsys, monkeypatch):
    import tempfile

    def mkstemp(*a, **k):
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    target = tmp_path / "r.html"
    code, _, err = run(capsys, ["report", str(d / "trace.json"), "-o", str(target)])
    refused(code, err, 3, f"--out {target}", "nothing was written")
    assert not target.exists()


def test_a_failing_rename_keeps_the_old_file_and_is_exit_3(d, tmp_path, capsys, monkeypatch):
    target = tmp_path / "r.json"
    target.write_bytes(PRECIOUS)

    def replace(src, dst):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "replace", replace)
    code, _, err = run(capsys, ["reassign-json", "normalize", str(d / "plan.json"), "--out", str(target)])
    refused(code, err, 3, f"reassign-json: {target}: Input/output error")
    assert target.read_bytes() == PRECIOUS and listing(tmp_path) == {"in", "r.json"}


# -- the writer itself ---------------------------------------------------------------------------------


def test_as_root_a_replaced_file_keeps_its_owner(tmp_path):
    from kreassign.outputs import write_output

    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    target = tmp_path / "f"
    target.write_text("old")
    os.chown(target, 12345, 23456)
    write_output(str(target), "new", "--x")
    st = os.stat(target)
    assert target.read_text() == "new" and (st.st_uid, st.st_gid) == (12345, 23456)


def test_the_spark_log_configuration_lives_in_a_private_folder(tmp_path, monkeypatch):
    import tempfile

    from kreassign.checker.spark import session

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    uid = os.getuid()
    (tmp_path / f"kreassign-{uid}").symlink_to(tmp_path)  # planted: never followed
    path = session.log4j2_file()
    folder = Path(path).parent
    assert folder != tmp_path and not folder.is_symlink() and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert Path(path).read_text() == session.LOG4J2
