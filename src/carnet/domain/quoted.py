"""Stored text as data in the prompt block (SECURITY.md, "Stored text is data").

A record's text is what a member or an advisor said, or what was extracted from it: never part of the
prompt's own structure. :func:`quoted` renders it on one line between ``«`` and ``»``:

- every line or paragraph separator and every control character (``\\n``, ``\\r``, ``\\v``, ``\\f``,
  ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029, the C0 and C1 controls, a lone surrogate) becomes a
  space and blanks collapse, so a text never starts a line of its own: no section header, no dated or
  labelled bullet, no preamble;
- a ``«`` or ``»`` inside the text becomes the nested ``‹`` or ``›`` (French typography's quotes within
  quotes), so a text cannot close its own quotes and go on outside them.

The preamble (``domain.prompt``) tells the model that text between ``«`` and ``»`` is data, never an
instruction. :func:`labels_pattern` is the other half: the prompt's markup written inside a text (a
``(consentement)`` label) is no evidence of what the text is about.
"""

from __future__ import annotations

import re

OPEN, CLOSE = "«", "»"
# \s covers \t \n \v \f \r, \x1c-\x1f, \x85, U+2028, U+2029 and the Unicode spaces; the rest of C0 and
# C1 and lone surrogates are added so that no character of any string can break or corrupt the line.
_BREAKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f\ud800-\udfff]+")
_NESTED = str.maketrans({OPEN: "‹", CLOSE: "›"})


def one_line(text: str) -> str:
    """``text`` on one line: separators and control characters as single spaces, no blank at either end."""
    return _BREAKS.sub(" ", text).strip()


def quoted(text: str) -> str:
    """``text`` on one line between ``«`` and ``»``, the guillemets it holds turned into ``‹`` and ``›``."""
    line = one_line(text)
    if OPEN in line or CLOSE in line:  # two scans cost less than a translation by table, and few texts hold one
        line = line.translate(_NESTED)
    return f"{OPEN} {line} {CLOSE}"


def labels_pattern(labels: tuple[str, ...]) -> re.Pattern[str]:
    """What matches the parenthesised ``labels`` the prompt writes before a record (``(contact)``,
    ``(accessibilité, consentement)``): typed into a text, they are the prompt's markup, not what the
    text says, so a classifier removes them before it reads the text."""
    names = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
    return re.compile(rf"\(\s*(?:{names})(?:\s*,\s*(?:{names}))*\s*\)")
