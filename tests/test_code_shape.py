"""The habits that keep the code readable, held by the quality gate (docs/development.md): short
modules, short docstrings, and data in data files rather than in Python literals."""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Final

import pytest

from tests.paths import REPO_ROOT

MAX_IDP_MODULE_LINES: Final = 500
MAX_MODULE_LINES: Final = 700  # any .py outside tests/
MAX_DOCSTRING_LINES: Final = 25  # in idp/
# A top-level literal this long in a benchmark is data: it belongs in benchmarks/corpora/.
MAX_BENCHMARK_LITERAL_LINES: Final = 9


def _tracked_python() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [REPO_ROOT / name for name in listed if (REPO_ROOT / name).is_file()]


PYTHON: Final = _tracked_python()


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _relative(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix()


def _syntax_trees(folder: str) -> Iterator[tuple[str, ast.Module]]:
    """(path, syntax tree) of each Python file under `folder` ("idp/")."""
    for path in PYTHON:
        if _relative(path).startswith(folder):
            yield _relative(path), ast.parse(path.read_text(encoding="utf-8"))


def test_no_module_in_idp_is_over_500_lines() -> None:
    long = {
        _relative(path): _lines(path)
        for path in PYTHON
        if _relative(path).startswith("idp/") and _lines(path) > MAX_IDP_MODULE_LINES
    }
    assert not long, f"split these modules (at most {MAX_IDP_MODULE_LINES} lines): {long}"


def test_no_python_file_outside_the_tests_is_over_700_lines() -> None:
    long = {
        _relative(path): _lines(path)
        for path in PYTHON
        if not _relative(path).startswith("tests/") and _lines(path) > MAX_MODULE_LINES
    }
    assert not long, f"split these files (at most {MAX_MODULE_LINES} lines): {long}"


def _docstrings(tree: ast.Module) -> list[tuple[str, int]]:
    """(name, lines) of every module, class and function docstring in the tree."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if ast.get_docstring(node, clean=False) is None:
            continue
        first = node.body[0]
        name = getattr(node, "name", "module")
        found.append((name, (first.end_lineno or first.lineno) - first.lineno + 1))
    return found


def _offenders(
    folder: str, find: Callable[[ast.Module], Sequence[tuple[object, int]]]
) -> list[str]:
    """ "path: where (N lines)" for each place `find` reports in the Python files of `folder`."""
    return [
        f"{path}: {where} ({lines} lines)"
        for path, tree in _syntax_trees(folder)
        for where, lines in find(tree)
    ]


def test_no_docstring_in_idp_is_over_25_lines() -> None:
    long = _offenders(
        "idp/",
        lambda tree: [(n, lines) for n, lines in _docstrings(tree) if lines > MAX_DOCSTRING_LINES],
    )
    assert not long, (
        f"docstrings say what and why in at most {MAX_DOCSTRING_LINES} lines; how a threshold "
        f"was set goes to docs/thresholds.md: {long}"
    )


def _long_literals(tree: ast.Module) -> list[tuple[int, int]]:
    """(line, lines) of each top-level assignment of a literal (a constant, a container or a
    comprehension, not a call) that spans more than MAX_BENCHMARK_LITERAL_LINES lines."""
    literal = (ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.Set, ast.JoinedStr)
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, literal):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_BENCHMARK_LITERAL_LINES:
                found.append((node.lineno, lines))
    return found


def test_the_benchmarks_keep_their_corpora_in_data_files() -> None:
    long = _offenders("benchmarks/", _long_literals)
    assert not long, f"move these literals to benchmarks/corpora/ (TOML, JSON, .txt): {long}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('"""One line."""\nX = 1\n', [("module", 1)]),
        ('def f():\n    """A\n\n    long\n    one."""\n', [("f", 4)]),
    ],
)
def test_docstrings_are_measured_from_their_first_to_their_last_line(
    source: str, expected: list[tuple[str, int]]
) -> None:
    assert _docstrings(ast.parse(source)) == expected


def test_a_long_literal_is_found_and_a_long_call_is_not() -> None:
    # GIVEN a ten-line tuple literal and a ten-line call at the top level
    items = "".join(f"    {n},\n" for n in range(8))
    tree = ast.parse(f"A = (\n{items})\nB = f(\n{items})\n")

    # THEN only the literal counts as data written as code
    assert _long_literals(tree) == [(1, 10)]
