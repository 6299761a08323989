"""The tests that SECURITY.md, the threat model and the operations guide cite as evidence exist.

Each cited `tests/….py::test_name` (or `::test_name` after one, meaning the same file) must name a file of
the suite and a test function or class defined in it: a renamed or deleted test cannot leave a claim with
nothing behind it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["SECURITY.md", "docs/threat-model.md", "docs/operations.md"]
CITATION = re.compile(r"`(tests/[\w/]+\.py)?(::[\w\[\]\-.]+)?`")


def _citations(text: str) -> list[tuple[str, str | None]]:
    cited: list[tuple[str, str | None]] = []
    current = None
    for path, name in CITATION.findall(text):
        if path:
            current = path
        if name and current is None:
            raise AssertionError(f"`{name}` cites no file")
        if path or name:
            cited.append((current or path, name[2:].split("[")[0] if name else None))
    return cited


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


@pytest.mark.parametrize("doc", DOCS)
def test_every_cited_test_exists(doc: str) -> None:
    cited = _citations((ROOT / doc).read_text())
    assert cited, f"{doc} cites no test: the reader no longer matches how it cites them"
    missing = []
    for path, name in cited:
        file = ROOT / path
        if not file.is_file():
            missing.append(path)
        elif name is not None and name not in _defined(file):
            missing.append(f"{path}::{name}")
    assert not missing, f"{doc} cites tests that do not exist: {missing}"


def test_the_citation_reader_reads_continuations() -> None:
    text = "`tests/a.py::test_x`, `::test_y[param]` and `tests/b.py`"
    assert _citations(text) == [("tests/a.py", "test_x"), ("tests/a.py", "test_y"), ("tests/b.py", None)]
