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
