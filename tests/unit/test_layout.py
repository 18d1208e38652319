"""The package's shape: no import cycles, lower layers never import upper ones, and a
fast start (`--version`/`--help` import no heavy dependency).

Imports are read from the source (every `import` statement, at module level or inside a
function), so a cycle cannot hide behind a deferred import.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: import root -> folder (pyproject's package-dir)
PACKAGE_DIRS = {"kreassign": "kreassign", "kreassign.spec": "spec", "kreassign.reference": "reference",
                "kreassign.checker": "checker"}

#: layers, lowest first: a module may import its own layer and the ones below, never above
LAYERS = [
    ["kreassign._version", "kreassign.errors", "kreassign.interrupts", "kreassign.outputs", "kreassign.flag_values",
     "kreassign.spec"],
    ["kreassign.reference"],
    ["kreassign.checker.config"],  # run configuration: bounds, limits, engine options (values, no engine)
    ["kreassign.checker.explore", "kreassign.checker.kafka_logs"],
    ["kreassign.checker.models", "kreassign.checker.implementations", "kreassign.checker.cluster"],
    ["kreassign.checker.packed"],
    ["kreassign.checker.traces"],
    ["kreassign.checker.scenarios"],  # scenarios drawn from the model, replayed on a real cluster
    ["kreassign.checker.check", "kreassign.checker.oracle", "kreassign.checker.fuzz", "kreassign.checker.spark",
     "kreassign.checker.z3", "kreassign.checker.plan", "kreassign.checker.report",
     "kreassign.checker.conformance",  # campaigns of scenarios on real clusters
     "kreassign.checker.status"],  # a live cluster's reassignments explained by the model
    ["kreassign.checker.cli", "kreassign.cli", "kreassign.__main__", "kreassign"],
]


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for f in base.rglob("*.py"):
            rel = f.relative_to(base).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((pkg, *rel))
            # a nested package mapped elsewhere (kreassign.checker under kreassign/) is not ours to claim
            if pkg == "kreassign" and rel and f"kreassign.{rel[0]}" in PACKAGE_DIRS:
                continue
            out[name] = f
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for t in targets:
            while t and t not in known:  # `from pkg import name`: the module pkg.name, else pkg
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def import_graph() -> nx.DiGraph:
    mods = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        for t in _imports(name, path, set(mods)):
            # importing a submodule imports its package's __init__ too, which is fine (empty)
            if not name.startswith(t + "."):
                g.add_edge(name, t)
    return g


def _layer(module: str) -> int:
    best, level = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, level = len(p), i
    assert level is not None, f"{module} is in no layer: add it to LAYERS"
    return level


def test_no_import_cycles():
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:10])


def test_lower_layers_never_import_upper_ones():
    bad = [f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
           for a, b in import_graph().edges if _layer(b) > _layer(a)]
    assert not bad, "\n".join(bad)


def test_checker_root_holds_only_the_package_marker():
    assert sorted(p.name for p in (ROOT / "checker").glob("*.py")) == ["__init__.py"]


def test_cli_holds_one_module_per_subcommand_and_nothing_else():
    from kreassign.cli import SUBCOMMANDS

    registered = {target.split(":")[0].rsplit(".", 1)[1] for _, target in SUBCOMMANDS.values()}
    modules = {p.stem for p in (ROOT / "checker" / "cli").glob("*.py")} - {"__init__"}
    assert modules == registered, f"not a subcommand: {sorted(modules - registered)}"


def test_a_missing_optional_engine_names_its_extra(monkeypatch, capsys):
    """pyspark / z3 / hypothesis are extras: without one, its subcommand says what to install, exit 3."""
    from kreassign import cli

    def needs_z3(_parser):
        raise ModuleNotFoundError("No module named 'z3'", name="z3")

    monkeypatch.setitem(cli.SUBCOMMANDS, "prove", ("prove", "fake.module:register"))
    monkeypatch.setattr(cli, "import_module", lambda _m: SimpleNamespace(register=needs_z3))
    assert cli.main(["prove"]) == 3
    assert "pip install 'kreassign[prove]'" in capsys.readouterr().err


def test_the_graph_sees_deferred_imports(tmp_path):
    # the walker must see an import inside a function (else a deferred import hides a cycle)
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from kreassign.spec import state\n")
    assert "kreassign.spec.state" in _imports("kreassign.checker.x.m", f, set(_modules()))


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_fast_start_imports_no_heavy_dependency(argv):
    code = ("import sys; from kreassign.cli import main\n"
            "try:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in ('z3', 'pyspark', 'hypothesis', 'numpy', 'networkx') if m in sys.modules)\n"
            "print('HEAVY:' + ','.join(heavy))" % argv)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    heavy = out.strip().splitlines()[-1]
    assert heavy == "HEAVY:", f"{argv} imported {heavy[6:]}"


# -- the engine flags travel as a value, not through the environment (issue 23) ---------------------------

#: the environment variables that once carried `kreassign check`'s engine flags (now one frozen value,
#: checker/config/engine_options.py); spelled in pieces so that this file holds none of them either
RETIRED_ENGINE_VARIABLES = tuple("KREASSIGN_" + n for n in ("FAST", "KERNEL", "WORKERS", "SUBSUME", "COMPOSITIONAL"))

#: the repository's own text: code, tests, benchmarks, docs (not the virtualenv, caches or run outputs)
TEXT_ROOTS = ("checker", "spec", "reference", "kreassign", "bench", "tests", "docs", "deploy", "examples",
              "README.md", "pyproject.toml")

#: environment writes checker/ may make: variables read by another program, never one of kreassign's
#: own switches (Spark's launcher: the JVM's options, the Python its local workers run)
ENVIRON_WRITES_ALLOWED = {("checker/spark/engine.py", "SPARK_SUBMIT_OPTS"), ("checker/spark/engine.py", "PYSPARK_PYTHON")}

_ENVIRON_METHODS = {"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def _text_files():
    for name in TEXT_ROOTS:
        p = ROOT / name
        for f in [p] if p.is_file() else sorted(p.rglob("*")) if p.is_dir() else []:
            if f.is_file() and "__pycache__" not in f.parts:
                yield f


def _is_environ(node: ast.AST) -> bool:
    """`os.environ`, or `environ` (from os import environ)."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
            and node.value.id == "os") or (isinstance(node, ast.Name) and node.id == "environ")


def _key(node: ast.AST | None) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else "?"


def environ_writes(path: Path) -> list[tuple[int, str]]:
    """(line, variable or "?") of every write to the process environment in one module: an item assigned
    or deleted, a mutating method of os.environ, os.putenv / os.unsetenv."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            if isinstance(t, ast.Subscript) and _is_environ(t.value):
                found.append((node.lineno, _key(t.slice)))
        if isinstance(node, ast.Call):
            f = node.func
            first = node.args[0] if node.args else None
            if isinstance(f, ast.Attribute) and f.attr in _ENVIRON_METHODS and _is_environ(f.value):
                found.append((node.lineno, _key(first) if f.attr != "update" else "?"))
            elif (isinstance(f, ast.Attribute) and f.attr in ("putenv", "unsetenv") and isinstance(f.value, ast.Name)
                  and f.value.id == "os") or (isinstance(f, ast.Name) and f.id in ("putenv", "unsetenv")):
                found.append((node.lineno, _key(first)))
    return sorted(found)


def test_no_retired_engine_variable_is_named_anywhere():
    """The engine flags reach the engine as `EngineOptions` (check_model / explore_classified ->
    packed_explorer, PackedReassignment, compositional_explorer); no module, test, bench script or doc
    names the variables that once carried them."""
    bad = [f"{f.relative_to(ROOT)}: {name}" for f in _text_files()
           for name in RETIRED_ENGINE_VARIABLES if name in f.read_text(errors="replace")]
    assert not bad, "pass EngineOptions (checker/config/engine_options.py) or the check flag instead:\n" + "\n".join(bad)


def test_checker_writes_no_environment_variable():
    """checker/ never sets the process environment to pass a switch on (a value travels as a parameter);
    the only writes are the few another program reads (ENVIRON_WRITES_ALLOWED)."""
    bad = []
    for f in sorted((ROOT / "checker").rglob("*.py")):
        rel = f.relative_to(ROOT).as_posix()
        bad += [f"{rel}:{line}: {name}" for line, name in environ_writes(f) if (rel, name) not in ENVIRON_WRITES_ALLOWED]
    assert not bad, "an os.environ write in checker/ (pass the value as a parameter instead):\n" + "\n".join(bad)


def test_the_environ_walker_sees_every_kind_of_write(tmp_path):
    # the rule above must see each form (else a write hides behind another spelling)
    f = tmp_path / "m.py"
    f.write_text("import os\nfrom os import environ, putenv\n"
                 "def f(n):\n"
                 "    os.environ['A'] = '1'\n    os.environ['B'] += '1'\n    del os.environ['C']\n"
                 "    os.environ.setdefault('D', '1')\n    os.environ.update(E='1')\n    os.environ.pop('F', None)\n"
                 "    environ['G'] = str(n)\n    os.putenv('H', '1')\n    putenv('I', '1')\n    os.unsetenv('J')\n"
                 "    os.environ.get('K'), os.environ['L'], os.getenv('M')\n")
    assert [name for _, name in environ_writes(f)] == ["A", "B", "C", "D", "?", "F", "G", "H", "I", "J"]


# -- reads of the environment: kreassign's own variables only where the command line is parsed (issue 23) --

#: where the process environment may be read for kreassign's own settings: the command line's layer
CLI_LAYER = ("checker/cli/", "kreassign/")

#: variables other programs define, which the code that starts or finds those programs reads where it needs
#: them (they describe the machine, they carry no kreassign switch): JDK, XDG base directories, Spark
FOREIGN_VARIABLES = {"JAVA_HOME", "XDG_CACHE_HOME", "SPARK_HOME", "SPARK_CONF_DIR", "SPARK_SUBMIT_OPTS",
                     "PYSPARK_GATEWAY_PORT", "PYSPARK_PYTHON", "PYSPARK_SUBMIT_ARGS", "SPARK_DRIVER_MEMORY"}


def environ_reads(path: Path) -> list[tuple[int, str]]:
    """(line, variable or "?") of every read of the process environment in one module: os.environ[...],
    os.environ.get(...), os.getenv(...), and a bare os.environ handed on (copied, iterated)."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(path.read_text(), str(path))
    handled: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            found.append((node.lineno, _key(node.slice)))
            handled.add(id(node.value))
        elif isinstance(node, ast.Call):
            f = node.func
            first = node.args[0] if node.args else None
            if isinstance(f, ast.Attribute) and _is_environ(f.value):
                handled.add(id(f.value))
                if f.attr in ("get", "__getitem__", "__contains__"):
                    found.append((node.lineno, _key(first)))
            elif (isinstance(f, ast.Attribute) and f.attr == "getenv" and isinstance(f.value, ast.Name)
                  and f.value.id == "os") or (isinstance(f, ast.Name) and f.id == "getenv"):
                found.append((node.lineno, _key(first)))
    for node in ast.walk(tree):  # the mapping itself, passed on or iterated: counts as reading all of it
        if _is_environ(node) and id(node) not in handled and not isinstance(getattr(node, "ctx", None), ast.Store):
            found.append((node.lineno, "?"))
    return sorted(set(found))


def test_kreassign_settings_are_read_from_the_environment_only_by_the_command_line():
    """Options travel as values: outside checker/cli/ and kreassign/, a module reads only the variables of
    other programs (FOREIGN_VARIABLES), never one of kreassign's own, never the whole environment."""
    bad = []
    for folder in ("checker", "spec", "reference"):
        for f in sorted((ROOT / folder).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if rel.startswith(CLI_LAYER):
                continue
            bad += [f"{rel}:{line}: {name}" for line, name in environ_reads(f) if name not in FOREIGN_VARIABLES]
    assert not bad, "read in the CLI layer and pass the value down instead:\n" + "\n".join(bad)


def test_the_environ_read_walker_sees_every_kind_of_read(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import os\nfrom os import environ, getenv\n"
                 "a = os.environ['A']\nb = os.environ.get('B')\nc = os.getenv('C')\nd = getenv('D')\n"
                 "e = environ.get('E', '1')\nf = dict(os.environ)\n")
    assert [name for _, name in environ_reads(f)] == ["A", "B", "C", "D", "E", "?"]


# -- private names stay in their module (issue 23) --------------------------------------------------------

#: private-looking names of other libraries' public API (namedtuple's) or of PySpark's internals we must reach
THIRD_PARTY_PRIVATE = {"_replace", "_asdict", "_fields", "_make", "_jsc", "_jvm", "_jrdd", "_gateway",
                       "_active_spark_context", "_ensure_initialized", "_bypass_serializer"}


def _private_definitions(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            names.add(n.attr)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.alias):
            names.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in n.targets):
            names |= {c.value for c in ast.walk(n.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return {x for x in names if x.startswith("_") and not x.startswith("__")}


def cross_module_private_uses(mods: dict[str, Path]) -> list[str]:
    """Every `from kreassign... import _x`, and every `obj._x` where `_x` is defined in another of our modules
    and not in this one (a private helper, method or attribute reached from outside its module)."""
    trees = {name: ast.parse(path.read_text(), str(path)) for name, path in mods.items()}
    defined = {name: _private_definitions(tree) for name, tree in trees.items()}
    owners: dict[str, set[str]] = {}
    for name, privates in defined.items():
        for x in privates:
            owners.setdefault(x, set()).add(name)
    bad = []
    for name, tree in trees.items():
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("kreassign"):
                bad += [f"{name}:{n.lineno}: imports {a.name} from {n.module}" for a in n.names
                        if a.name.startswith("_") and not a.name.startswith("__") and a.name != "_version"]
            elif (isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__")
                  and n.attr not in THIRD_PARTY_PRIVATE and n.attr not in defined[name] and n.attr in owners):
                bad.append(f"{name}:{n.lineno}: uses {n.attr} of {', '.join(sorted(owners[n.attr]))}")
    return bad


def test_no_private_name_is_used_outside_its_module():
    bad = cross_module_private_uses(_modules())
    assert not bad, "make it public (a name without _, with a docstring) or keep it in its module:\n" + "\n".join(bad)


def test_the_private_name_rule_catches_a_planted_use(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("def _helper():\n    pass\nclass C:\n    def _m(self):\n        pass\n")
    b.write_text("from kreassign.x.a import _helper\ndef f(c):\n    return c._m()\n")
    bad = cross_module_private_uses({"kreassign.x.a": a, "kreassign.x.b": b})
    assert [line.split(": ", 1)[1] for line in bad] == ["imports _helper from kreassign.x.a", "uses _m of kreassign.x.a"]


# -- the packed engine reads only what its protocol declares (issue 23) ------------------------------------


def test_the_packed_model_provides_the_protocol_and_the_engine_reads_only_it():
    """PackedReassignment has every member of PackedModel (checker/packed/protocol.py), and the packed BFS
    (checker/packed/bfs.py) reads no member of its model the protocol does not declare."""
    from kreassign.checker.config.bounds import Bounds
    from kreassign.checker.models.reassign import ReassignmentModel
    from kreassign.checker.packed.protocol import MEMBERS, PackedModel
    from kreassign.checker.packed.reassignment import PackedReassignment

    packed = PackedReassignment(ReassignmentModel("kraft", Bounds(brokers=3, rf=2, reassigns=1)))
    assert isinstance(packed, PackedModel)
    assert not [m for m in MEMBERS if not hasattr(packed, m)]
    declared = {n for n in PackedModel.__annotations__} | {n for n in vars(PackedModel) if not n.startswith("_")}
    assert set(MEMBERS) == declared - {"MEMBERS"}
    source = (ROOT / "checker" / "packed" / "bfs.py").read_text()
    read = {n.attr for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Attribute)
            and isinstance(n.value, (ast.Name, ast.Attribute))
            and (getattr(n.value, "id", None) == "model" or getattr(n.value, "attr", None) == "m")}
    assert read <= set(MEMBERS), f"the packed engine reads undeclared members: {sorted(read - set(MEMBERS))}"
