"""The exit codes the README and docs/*.md quote are the ones the code returns.

Every "exit N", "exit code N", "exits N", "Exit status: N; M ..." and every row of a table of
exit codes is found, attributed to the subcommand it is about and checked:

- every code is one of the contract's (kreassign/errors.py: 0, 1, 2, 3, 4, 130);
- a code quoted for a subcommand is one that subcommand can return (`command_codes`, read
  from each subcommand's module: only a module that returns a finding can exit 1, only one
  that returns INCONCLUSIVE can exit 4; 0, 2, 3 and 130 any subcommand can, by
  kreassign/cli.py's `main`);
- a code quoted next to an error class (``ImplementationError` (exit code 3``) is that
  class's `exit_code`;
- a code quoted for a missing optional dependency ("not installed", "pip install 'kreassign[...]'") is 3,
  which is what `main` and `check --engine spark` return for one (tested here too).

A mention is attributed to the subcommand named nearest before it in its paragraph, list
item, table row or code line (`kreassign NAME` or a backticked `NAME ...`), else nearest after
it there, else the subcommand(s) the document is about (`DOC_COMMANDS`; any subcommand for the
others). A table row names several: the code must suit each. Mentions of something else's exit
code (a child process, a bench script, Kafka's own tool) are listed in `NOT_KREASSIGN`.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from kreassign.cli import SUBCOMMANDS, main
from kreassign.errors import FINDING, INCONCLUSIVE, INFRA, INTERRUPTED, OK, USAGE, KreassignError

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CONTRACT = {OK, FINDING, USAGE, INFRA, INCONCLUSIVE, INTERRUPTED}

#: the subcommands a document is about, for a mention that names none
DOC_COMMANDS = {
    "adapters.md": ("check", "replay", "fuzz"),
    "checking.md": ("check",),
    "findings.md": ("check",),
    "performance.md": ("check",),
    "spark.md": ("check",),
    "proofs.md": ("prove",),
    "fuzz.md": ("fuzz",),
    "trace-format.md": ("replay",),
    "validate-trace.md": ("validate-trace",),
    "reassign-json.md": ("reassign-json",),
    "oracle.md": ("oracle",),
    "cluster.md": ("cluster",),
    "conformance.md": ("conformance",),
    "scenarios.md": ("conformance",),
    "status.md": ("status",),
    "plan.md": ("plan",),
}

#: (document, text at the mention) of exit codes that are not kreassign's, and whose they are
NOT_KREASSIGN = {
    ("adapters.md", "closed its stdout (exit code 3)"): "the implementation's own exit status, in an error message",
    ("performance.md", "the script exits 1"): "bench/real_models.py",
    ("scenarios.md", "are active.` (exit 0)"): "kafka-reassign-partitions.sh --cancel",
}

MENTION = re.compile(r"\b[Ee]xit(?:s|ed)?(?:\s+(?:codes?|status))?\s*:?\s*(?:\*\*)?\s*`?(\d+)\b")
#: "Exit status: 0 on success; 1 when ...; 2 for ..." and "exits 0 when ... and 1 when ...": the codes after
#: the first, until the end of the segment
MORE = re.compile(r"(?:;|,|\band\b|\bor\b)\s*(?:\*\*)?(\d{1,3})(?:\*\*)?"
                  r"(?=:|\s+(?!(?:s|ms|seconds?|minutes?|steps?|states?|brokers?|workers?|partitions?|replicas?|"
                  r"topics?|lines?|times?|cores?)\b)[A-Za-z(])")
NAMED = re.compile(r"`(?:kreassign\s+)?([a-z][a-z-]*)(?=[` ])|\bkreassign\s+([a-z][a-z-]*)")
ERROR_CLASS = re.compile(r"`?([A-Z]\w*(?:Error|Unreachable|Mismatch))`?\s*\((?:an?\s+`?[A-Z]\w*`?,\s*)?"
                         r"exit(?:\s+code)?\s+(\d+)")
EXIT_CODE_HEADING = re.compile(r"exit.?codes?", re.IGNORECASE)
MISSING_DEPENDENCY = re.compile(r"not installed|cannot import|pip install '?kreassign\[", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(*])")


def command_codes() -> dict[str, set[int]]:
    """What each subcommand can return, read from its module (kreassign/cli.py's SUBCOMMANDS)."""
    out = {}
    for name, (_, target) in SUBCOMMANDS.items():
        source = Path(importlib.util.find_spec(target.split(":")[0]).origin).read_text()
        codes = {OK, USAGE, INFRA, INTERRUPTED}  # success, UsageError/argparse, InfraError/a missing module, Ctrl-C
        if re.search(r"\bFINDING\b|\breturn 1\b|\b1 if\b|\belse 1\b|\bresult\.exit_code\b", source):
            codes.add(FINDING)
        if re.search(r"\bINCONCLUSIVE\b", source):
            codes.add(INCONCLUSIVE)
        out[name] = codes
    return out


def error_codes() -> dict[str, int]:
    """Every KreassignError subclass by name, with its exit code."""
    for module in ("kreassign.checker.implementations.adapters", "kreassign.checker.implementations.kafka",
                   "kreassign.checker.cluster.cluster", "kreassign.checker.cluster.external",
                   "kreassign.checker.cluster.admin", "kreassign.checker.scenarios.run",
                   "kreassign.checker.scenarios.format", "kreassign.checker.config.bounds",
                   "kreassign.checker.traces.format", "kreassign.checker.plan.formats",
                   "kreassign.checker.packed.kraft_kernel", "kreassign.checker.status.snapshot"):
        importlib.import_module(module)
    out, todo = {}, [KreassignError]
    while todo:
        cls = todo.pop()
        out[cls.__name__] = cls.exit_code
        todo += cls.__subclasses__()
    return out


def segments(text: str):
    """(kind, heading, table header, line number, text): a paragraph or list item ("prose"), a table row
    ("row"), a line of a code block ("code"); the heading above it as written."""
    heading, header, block, start, fenced = "", None, [], 0, False

    def flush():
        if block:
            yield "prose", heading, None, start, " ".join(block)

    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            yield from flush()
            block, fenced = [], not fenced
            continue
        if fenced:
            yield "code", heading, None, i, line
            continue
        if stripped.startswith("|"):
            yield from flush()
            block = []
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(set(c) <= set("-: ") for c in cells):
                continue
            if header is None:
                header = [c.lower().strip("`* ") for c in cells]
                continue
            yield "row", heading, header, i, stripped
            continue
        header = None
        if stripped.startswith("#"):
            yield from flush()
            block, heading = [], stripped.lstrip("#").strip()
            continue
        if not stripped or re.match(r"([-*]|\d+\.)\s", stripped):
            yield from flush()
            block, start = ([stripped], i) if stripped else ([], i)
            continue
        if not block:
            start = i
        block.append(stripped)
    yield from flush()


def mentions(doc: Path):
    """(line, code, where in the text, the text) of every exit code the document quotes."""
    for kind, heading, header, line, text in segments(doc.read_text()):
        if kind == "row":
            cells = [c.strip() for c in text.strip("|").split("|")]
            column = (header.index("exit") if "exit" in header
                      else 0 if EXIT_CODE_HEADING.search(heading) and header[0] == "code" else None)
            if column is not None and column < len(cells) and cells[column].strip("`* ").isdigit():
                yield line, int(cells[column].strip("`* ")), 0, text, heading
            continue
        for m in MENTION.finditer(text):
            yield line, int(m.group(1)), m.start(), text, heading
            tail = text[m.end():]
            end = SENTENCE_END.search(tail)
            for more in MORE.finditer(tail[:end.start()] if end else tail):
                yield line, int(more.group(1)), m.end() + more.start(), text, heading


def _named(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(1) or m.group(2)) for m in NAMED.finditer(text)
            if (m.group(1) or m.group(2)) in SUBCOMMANDS]


def attributed(doc: Path, at: int, text: str, heading: str) -> tuple[str, ...]:
    """The subcommand(s) a mention at `at` of `text` is about (see the module doc)."""
    named = _named(text)
    if text.startswith("|"):  # a table row: every subcommand it names
        found = tuple(dict.fromkeys(n for _, n in named))
    else:
        before = [n for p, n in named if p < at]
        after = [n for p, n in named if p >= at]
        found = (before[-1],) if before else (after[0],) if after else ()
    return found or tuple(dict.fromkeys(n for _, n in _named(heading))) or DOC_COMMANDS.get(doc.name, ())


def _sentence(text: str, at: int) -> str:
    starts = [0] + [m.end() for m in SENTENCE_END.finditer(text) if m.end() <= at]
    end = SENTENCE_END.search(text, at)
    return text[starts[-1]:end.start() if end else len(text)]


def quoted():
    """Every mention that is kreassign's: (document, line, code, position, text, heading)."""
    for doc in DOCS:
        for line, code, at, text, heading in mentions(doc):
            if any(d == doc.name and 0 <= at - text.find(s) < len(s) for d, s in NOT_KREASSIGN if s in text):
                continue
            yield doc, line, code, at, text, heading


# -- what the code returns ---------------------------------------------------------------------------------


def test_the_codes_each_subcommand_can_return_are_read_from_the_code():
    codes = command_codes()
    assert {c for c, v in codes.items() if FINDING in v} == {
        "check", "prove", "fuzz", "replay", "validate-trace", "plan", "status", "conformance"}
    assert {c for c, v in codes.items() if INCONCLUSIVE in v} == {"check", "validate-trace"}
    assert all(v <= CONTRACT for v in codes.values())


def test_a_missing_optional_dependency_is_exit_3(monkeypatch, capsys):
    """What the docs' "not installed" mentions must say: `main` and `check --engine spark` give 3."""
    real = importlib.import_module

    def without_z3(name, *a, **kw):
        if name == "kreassign.checker.cli.prove":
            raise ModuleNotFoundError("No module named 'z3'", name="z3")
        return real(name, *a, **kw)

    monkeypatch.setattr("kreassign.cli.import_module", without_z3)
    assert main(["prove", "--profile", "kip599"]) == INFRA
    assert "pip install 'kreassign[prove]'" in capsys.readouterr().err
    monkeypatch.undo()
    for name in [m for m in sys.modules if m == "pyspark" or m.startswith(("pyspark.", "kreassign.checker.spark"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # `import pyspark` raises ModuleNotFoundError
    assert main(["check", "--engine", "spark", "--profile", "kraft", "--brokers", "2", "--rf", "1"]) == INFRA
    assert "pip install 'kreassign[spark]'" in capsys.readouterr().err


# -- what the docs say ------------------------------------------------------------------------------------------


def test_the_docs_quote_exit_codes():
    """The search finds the mentions it is meant to (so that the checks below check something)."""
    found = {(doc.name, code) for doc, _, code, _, _, _ in quoted()}
    assert {("README.md", 4), ("validate-trace.md", 4), ("ci.md", 130), ("conformance.md", 3),
            ("reassign-json.md", 2), ("adapters.md", 3), ("fuzz.md", 1)} <= found


def test_every_quoted_code_is_in_the_contract():
    bad = [f"{doc.name}:{line}: exit {code}" for doc, line, code, _, _, _ in quoted() if code not in CONTRACT]
    assert bad == []


def test_every_quoted_code_is_one_the_subcommand_returns():
    codes = command_codes()
    bad = []
    for doc, line, code, at, text, heading in quoted():
        for command in attributed(doc, at, text, heading):
            if code not in codes[command]:
                bad.append(f"{doc.name}:{line}: exit {code} for `kreassign {command}`, which returns only "
                           f"{sorted(codes[command])}: {text[max(0, at - 80):at + 40]!r}")
    assert bad == []


def test_a_code_quoted_for_an_error_is_its_exit_code():
    errors = error_codes()
    bad, seen = [], 0
    for doc in DOCS:
        for _, _, _, _, text in segments(doc.read_text()):
            for m in ERROR_CLASS.finditer(text):
                if m.group(1) in errors:
                    seen += 1
                    if int(m.group(2)) != errors[m.group(1)]:
                        bad.append(f"{doc.name}: {m.group(0)!r}: {m.group(1)} exits {errors[m.group(1)]}")
    assert seen >= 4 and bad == []


def _clause(text: str, at: int, others: list[int]) -> str:
    """What a code at `at` is quoted for: up to the next code quoted in its sentence, from the sentence's
    start when it is the first code there ("Exit code: 0 when ..., 3 when z3 is not installed, ...")."""
    sentence = _sentence(text, at)
    start = text.find(sentence)
    later = [p for p in others if at < p < start + len(sentence)]
    first = not [p for p in others if start <= p < at]
    return text[start if first else at:min(later) if later else start + len(sentence)]


def test_a_missing_dependency_is_quoted_as_exit_3():
    found = list(quoted())
    bad = []
    for doc, line, code, at, text, _ in found:
        clause = _clause(text, at, [p for d, _, _, p, t, _ in found if d == doc and t == text])
        if MISSING_DEPENDENCY.search(clause) and code != INFRA:
            bad.append(f"{doc.name}:{line}: exit {code}: {clause!r}")
    assert bad == []


@pytest.mark.parametrize("doc,text", sorted(NOT_KREASSIGN))
def test_the_exceptions_still_exist(doc, text):
    """Each exception is still in its document (a stale one would hide nothing, but mislead)."""
    assert text in (ROOT / ("README.md" if doc == "README.md" else f"docs/{doc}")).read_text().replace("\n", " ")
