"""``carnet bench pii --data FILE``: what personal data survives in the text that is embedded.

FILE is a JSON list of ``{"text": ..., "values": [...], "type": ...}``: the values are those that must
not survive, ``type`` (optional) groups them in the report. Each text goes through the write path's
pseudonymisation (``services.pii.for_write``, the detector the server builds from the default
settings, each text as a new member's), and each value is looked for in its ``pseudo_text``, the
only text that is embedded or keyword-hashed.

A value survives when the pseudonymised text still holds it, compared without case, accents, spacing
or separators (NFKC first): the whole value, or a run of at least half its characters (at least 5)
for a value with digits or an "@" (half an IBAN is a leak), or, for any other value (a name, an
address), one of its words of three letters or more that is not a function word (a surname left
beside a placeholder is a leak). Names' precision: the share of the people the detector found in a
text that share a word with one of its values (of any type: an address names its street after a
person), over the distinct texts.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from carnet.domain.pii.pseudonyms import PseudonymMap
from carnet.domain.records import Scope
from carnet.services.pii import Pii, Prepared, for_write

UNTYPED = "untyped"
# Words of names and addresses that say nothing of a person (French and English grammar words).
# Words of a value that say nothing of the person when they alone survive: particles, street words, titles
# ("monsieur Pellissier" with the surname replaced), the spelled e-mail's markers and its example domain.
_GRAMMAR = frozenset("de du des la le les van von ben bin el al et the and of rue avenue bis ter monsieur madame "
                     "mademoiselle maître maitre mme mlle point arobase example".split())


class BadCorpus(ValueError):
    """The --data file is missing, not JSON, or not a list of {"text", "values", "type"?}."""


@dataclass(frozen=True, slots=True)
class Case:
    text: str
    values: tuple[str, ...]
    kind: str


def load(path: Path) -> list[Case]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadCorpus(f"{path}: cannot be read ({exc.strerror})") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadCorpus(f"{path}: not a JSON file ({exc})") from exc
    if not isinstance(doc, list):
        raise BadCorpus(f"{path}: expected a JSON list of {{\"text\", \"values\", \"type\"?}}")
    return [_case(i, item, path) for i, item in enumerate(doc)]


def _case(i: int, item: object, path: Path) -> Case:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise BadCorpus(f"{path}: item {i} is not an object with a \"text\" string")
    values = item.get("values", [])
    if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
        raise BadCorpus(f"{path}: item {i}: \"values\" must be a list of non-empty strings")
    kind = item.get("type", UNTYPED)
    if not isinstance(kind, str) or not kind:
        raise BadCorpus(f"{path}: item {i}: \"type\" must be a non-empty string")
    return Case(item["text"], tuple(values), kind)


def measure(pii: Pii, cases: Sequence[Case]) -> dict[str, Any]:
    """Each case pseudonymised as a new member's first text (its own, empty pseudonym map)."""
    prepared = [for_write(pii, Scope("bench", f"case-{i}"), [case.text])[0] for i, case in enumerate(cases)]
    return report(cases, prepared)


@dataclass(slots=True)
class MemoryMaps:
    """``PseudonymMaps`` in memory: a bench has no member to seal a map for."""

    maps: dict[Scope, PseudonymMap] = field(default_factory=dict)

    def load(self, scope: Scope) -> PseudonymMap:
        return self.maps.get(scope, PseudonymMap()).copy()

    def save(self, scope: Scope, pmap: PseudonymMap) -> None:
        self.maps[scope] = pmap.copy()

    def forget(self, scope: Scope) -> None:
        self.maps.pop(scope, None)

    def forget_tenant(self, tenant: str) -> None:
        for scope in [s for s in self.maps if s.tenant == tenant]:
            del self.maps[scope]

    def clear(self) -> None:
        self.maps.clear()


def report(cases: Sequence[Case], prepared: Sequence[Prepared]) -> dict[str, Any]:
    by_type: dict[str, dict[str, int]] = defaultdict(lambda: {"values": 0, "survived": 0})
    examples: list[dict[str, str]] = []
    labelled: dict[str, set[str]] = defaultdict(set)  # a text given once per type holds all their values
    for case in cases:
        labelled[case.text].update(case.values)
    names: dict[str, tuple[str, ...]] = {}
    for case, done in zip(cases, prepared, strict=True):
        for value in case.values:
            by_type[case.kind]["values"] += 1
            if survives(value, done.pseudo_text):
                by_type[case.kind]["survived"] += 1
                examples.append({"type": case.kind, "pseudo_text": done.pseudo_text})
        names[case.text] = done.names
    names_found = sum(len(found) for found in names.values())
    names_wrong = sum(1 for text, found in names.items() for n in found
                      if not any(_same_person(n, v) for v in labelled[text]))
    total = sum(t["values"] for t in by_type.values())
    survived = sum(t["survived"] for t in by_type.values())
    return {"texts": len(cases), "values": total, "survived": survived,
            "by_type": {k: {**v, "recall": round(1 - v["survived"] / v["values"], 4) if v["values"] else None}
                        for k, v in sorted(by_type.items())},
            "names_found": names_found,
            "names_precision": round(1 - names_wrong / names_found, 4) if names_found else None,
            "survivors": examples[:20]}


def survives(value: str, pseudo_text: str) -> bool:
    v, t = _flat(value), _flat(pseudo_text)
    if not v:
        return False
    if v in t:
        return True
    if any(c.isdigit() for c in v) or "@" in value or "＠" in value:
        run = SequenceMatcher(None, v, t, autojunk=False).find_longest_match(0, len(v), 0, len(t)).size
        return run >= max(5, (len(v) + 1) // 2)
    words = set(_words(pseudo_text))
    return any(w in words for w in _words(value) if len(w) >= 3 and w not in _GRAMMAR)


def _same_person(found: str, value: str) -> bool:
    a, b = set(_words(found)), set(_words(value))
    return bool(a & b)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _flat(text: str) -> str:
    return re.sub(r"[\W_]+", "", _fold(text))


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", _fold(text))
