"""`kreassign spark-package`: the zip to ship kreassign to Spark executors (--py-files).

Executors need `kreassign` and `numpy` only (docs/spark.md). The zip holds the package's
Python sources (kreassign, kreassign.spec, kreassign.reference, kreassign.checker: the layout
the import system expects, whatever the source tree looks like), written by the output rule of
kreassign/outputs.py (docs/outputs.md).
`--venv DIR` also packs a whole environment instead (Python, numpy, kreassign) with
`venv-pack`, for executors without numpy or with another Python.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

from kreassign.errors import InfraError, UsageError
from kreassign.outputs import check_outputs, replacing

#: the distribution's top-level packages (pyproject.toml's package-dir): the rest are subpackages
ROOTS = ("kreassign", "kreassign.spec", "kreassign.reference", "kreassign.checker")
SKIP_DIRS = {"__pycache__", "tests", ".pytest_cache"}


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", default="kreassign-spark.zip",
                        help="the zip to write (default: %(default)s); ship it with spark-submit --py-files")
    parser.add_argument("--venv", metavar="DIR",
                        help="instead pack the virtualenv DIR (which must have kreassign and venv-pack installed) "
                             "as a .tar.gz for spark-submit --archives")
    parser.set_defaults(func=run)


def package_files() -> list[tuple[str, Path]]:
    """(name in the zip, file) of every source file of the installed package."""
    import importlib

    out: list[tuple[str, Path]] = []
    dirs = {root: Path(importlib.import_module(root).__file__).resolve().parent for root in ROOTS}
    for root, directory in dirs.items():
        prefix = root.replace(".", "/")
        others = [d for r, d in dirs.items() if r != root and directory in d.parents]  # (roots nested in it)
        for path in sorted(directory.rglob("*")):
            rel = path.relative_to(directory)
            if path.is_dir() or SKIP_DIRS & set(rel.parts) or path.suffix in (".pyc", ".pyo"):
                continue
            if any(d in path.parents for d in others):
                continue
            out.append((f"{prefix}/{rel.as_posix()}", path))
    return out


def write_zip(output: str) -> int:
    """Write the zip by the output rule (kreassign/outputs.py): atomically, only to a regular file or a new path,
    a symlink written through; return the number of files."""
    check_outputs({"--output": output})  # before reading the package
    files = package_files()
    with replacing(output, "--output", suffix=".zip") as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, path in files:
            z.write(path, name)
    return len(files)


def pack_venv(venv: str, output: str) -> None:
    tool = Path(venv) / "bin" / "venv-pack"
    target = output if output.endswith((".tar.gz", ".tgz")) else "kreassign-env.tar.gz"
    check_outputs({"--output": target}, {"--venv": venv})
    if not tool.exists():
        raise UsageError(f"--venv {venv}: no bin/venv-pack there (pip install venv-pack into it)")
    with replacing(target, "--output", suffix=".tar.gz") as tmp:
        done = subprocess.run([str(tool), "-p", venv, "-o", tmp, "--force"], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise InfraError(f"venv-pack failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    print(f"wrote {target}: spark-submit --archives {target}#environment "
          "--conf spark.pyspark.python=./environment/bin/python ...")


def run(args: argparse.Namespace) -> int:
    if args.venv:
        pack_venv(args.venv, args.output)
        return 0
    n = write_zip(args.output)
    print(f"wrote {args.output} ({n} files): spark-submit --py-files {args.output} ... "
          "(the executors' Python needs numpy)", file=sys.stdout)
    return 0
