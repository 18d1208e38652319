"""The one way Java sources are compiled into the cache (checker/implementations/javac.py)."""

from __future__ import annotations

import shutil

import pytest
from kreassign.checker.implementations.javac import compile_into

pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="needs javac (Java 17)")


class Failed(Exception):
    pass


def test_compiles_once_into_place_with_generated_sources_removed(tmp_path):
    src = tmp_path / "A.java"
    src.write_text("public class A { B b; }\n")
    target = tmp_path / "cache" / "demo-1"
    out = compile_into(target, target / "A.class", shutil.which("javac"), ["-cp", str(tmp_path), str(src)],
                       "the demo", Failed, generated={"B.java": "public class B {}\n"})
    assert out == target and sorted(p.name for p in target.iterdir()) == ["A.class", "B.class"]
    assert [p.name for p in target.parent.iterdir()] == ["demo-1"]  # no temporary directory left
    src.write_text("this does not compile")
    assert compile_into(target, target / "A.class", "javac-not-called", [], "the demo", Failed) == target


def test_a_javac_failure_names_what_and_leaves_nothing(tmp_path):
    src = tmp_path / "Broken.java"
    src.write_text("public class Broken { int x = ; }\n")
    target = tmp_path / "cache" / "demo-2"
    with pytest.raises(Failed, match=r"javac could not compile the demo:\n.*Broken.java"):
        compile_into(target, target / "Broken.class", shutil.which("javac"), [str(src)], "the demo", Failed)
    assert not target.exists() and list(target.parent.iterdir()) == []
