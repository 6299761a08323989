"""No module of ``src/carnet`` is over 400 lines (issue 15: a layout a newcomer can read).

A long module is several ideas in one file; split it into modules of one idea each. The one
exception is a declarative table (patterns, word lists, slot definitions: data, not code), which
says so in the first line of its docstring: ``Declarative table: …``. Its functions still go elsewhere.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "carnet"
MAX_LINES = 400
TABLE = "Declarative table:"


def _is_table(text: str) -> bool:
    docstring = ast.get_docstring(ast.parse(text))
    return docstring is not None and docstring.splitlines()[0].startswith(TABLE)


def _offenders() -> list[str]:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_LINES and not _is_table(text):
            offenders.append(f"{path.relative_to(ROOT)} ({lines} lines)")
    return offenders


def test_modules_are_at_most_400_lines_unless_declarative_tables() -> None:
    assert len(list(SRC.rglob("*.py"))) > 50, f"no modules found under {SRC}"
    offenders = _offenders()
    assert not offenders, (
        f"modules over {MAX_LINES} lines (split them by idea, or start a table's docstring with "
        f"{TABLE!r}): " + ", ".join(offenders)
    )


def test_a_table_is_recognised_by_its_docstring_first_line_only() -> None:
    assert _is_table('"""Declarative table: the slots.\n\nMore."""\nX = 1\n')
    assert not _is_table('"""The slots.\n\nDeclarative table: not on the first line."""\nX = 1\n')
    assert not _is_table("X = 1  # no docstring\n")
