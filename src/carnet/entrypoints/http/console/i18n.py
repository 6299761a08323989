"""The console's words, French first, English beside, each language a message catalog of its own
(``words/fr.json``, ``words/en.json``: key → sentence, shipped as package data). A key missing in English
falls back to French; an error code without its own sentence gets the generic one (an error's own
message, English and technical, is never shown)."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.resources import files

LANGS = ("fr", "en")
DEFAULT = "fr"


def _catalog(lang: str) -> dict[str, str]:
    loaded = json.loads((files(__package__) / "words" / f"{lang}.json").read_text(encoding="utf-8"))
    if not isinstance(loaded, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in loaded.items()):
        raise ValueError(f"the console's {lang} catalog must map keys to sentences")
    return loaded


FR: dict[str, str] = _catalog("fr")
EN: dict[str, str] = _catalog("en")
_WORDS = {"fr": FR, "en": EN}


def translator(lang: str) -> Callable[[str], str]:
    words = _WORDS.get(lang, FR)

    def t(key: str) -> str:
        found = words.get(key) or FR.get(key)
        if found is not None:
            return found
        return t("error.generic") if key.startswith("error.") else key

    return t


def labeller(t: Callable[[str], str]) -> Callable[[str, str], str]:
    """``label("action", "memory.list")``: the words of a code (an audit action, an outcome, a category),
    or the code itself when the catalog has none (a category a caller made up)."""

    def label(family: str, code: str) -> str:
        key = f"{family}.{code}"
        found = t(key)
        return code if found == key else found

    return label


def counter(t: Callable[[str], str], lang: str) -> Callable[..., str]:
    """``n("timeline.count", 5)``: the sentence of ``key.one`` or ``key.other`` with the number in it. French
    counts 0 and 1 as one ("0 enregistrement"), English 1 only."""

    def n(key: str, count: int, *more: object) -> str:
        one = count in (0, 1) if lang == "fr" else count == 1
        return t(f"{key}.{'one' if one else 'other'}") % (count, *more)

    return n
