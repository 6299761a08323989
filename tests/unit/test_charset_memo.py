"""Regular expressions compiled with memoised character classes are the same programs (charset_memo)."""

from __future__ import annotations

import re
from re import _compiler, _parser

import pytest
from hypothesis import given
from hypothesis import strategies as st
from spacy.lang.char_classes import ALPHA, ALPHA_LOWER
from spacy.lang.fr.punctuation import ELISION, HYPHENS

from carnet.adapters.pii.charset_memo import charsets_memoized


def _program(pattern: str, flags: int = 0) -> list[int]:
    """What ``re`` hands to the matching engine for ``pattern`` (its opcodes)."""
    return list(_compiler._code(_parser.parse(pattern, flags), flags))


# Shaped as spaCy's French tokenizer pattern: many alternatives repeating the same large classes.
_SPACY_LIKE = "(?iu)" + "|".join(
    f"(?:^{prefix}[{HYPHENS}][{ALPHA_LOWER}][{HYPHENS}{ALPHA_LOWER}{ELISION}]*$)"
    for prefix in ("anti", "archi", "auto", "contre", "demi", "extra", "grand", "mal", "néo", "semi")
) + f"|(?:^[{ALPHA}]+[{HYPHENS}]la[{HYPHENS}](?:l[{ELISION}])?[{ALPHA}]+$)"


def test_a_pattern_shaped_as_spacys_compiles_to_the_same_program() -> None:
    plain = _program(_SPACY_LIKE)
    with charsets_memoized():
        memoized = _program(_SPACY_LIKE)
    assert memoized == plain


_CLASS_ITEM = st.one_of(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\\]^-["),
    st.tuples(st.characters(min_codepoint=48, max_codepoint=0x2FFF, blacklist_categories=("Cs",)),
              st.integers(0, 400)).map(lambda t: (t[0], chr(min(ord(t[0]) + t[1], 0x2FFF)))),
    st.sampled_from([r"\d", r"\w", r"\s", r"\W"]),
)


def _class(items: list[str | tuple[str, str]], negate: bool) -> str:
    body = "".join(re.escape(i) if isinstance(i, str) and len(i) == 1 else
                   (i if isinstance(i, str) else f"{re.escape(i[0])}-{re.escape(i[1])}") for i in items)
    return f"[{'^' if negate else ''}{body}]"


@given(
    classes=st.lists(st.tuples(st.lists(_CLASS_ITEM, min_size=1, max_size=6), st.booleans()), min_size=1, max_size=4),
    repeats=st.integers(1, 3),
    flags=st.sampled_from([0, re.IGNORECASE, re.IGNORECASE | re.ASCII]),
    probe=st.text(max_size=12),
)
def test_any_classes_repeated_compile_to_the_same_program_and_match_alike(
    classes: list[tuple[list[str | tuple[str, str]], bool]], repeats: int, flags: int, probe: str
) -> None:
    pattern = "|".join("".join(_class(items, neg) + "+" for items, neg in classes) for _ in range(repeats))
    plain = _program(pattern, flags)
    with charsets_memoized():
        memoized = _program(pattern, flags)
        compiled = re.compile(pattern + "(?#memo)", flags)  # not in re's cache: compiled inside the block
    assert memoized == plain
    assert bool(compiled.search(probe)) == bool(re.search(pattern, probe, flags))


def test_the_standard_compiler_is_back_after_the_block_even_after_an_error() -> None:
    before = _compiler._optimize_charset
    with pytest.raises(RuntimeError), charsets_memoized():
        assert _compiler._optimize_charset is not before
        raise RuntimeError("inside")
    assert _compiler._optimize_charset is before
