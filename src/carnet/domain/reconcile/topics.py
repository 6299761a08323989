"""Topics: what a note is about, in the words advisors use (``topic_rules.TOPICS``). Pure.

Three uses, none of them a supersession rule (the learned judge decides those, ``judge_model``):

- ``keyword_text``: what the keyword retriever indexes for a note: its text, then the names of what it
  is about, so a two-word question ("Adresse ?") finds a note that never names its attribute;
- ``file_kinds`` / ``names_file_of``: a note that names a file by its kind only ("le dossier grêle est
  clos") gets, as reconcile's candidates, the records naming the reference of a file of that kind.
"""

from __future__ import annotations

import re

from carnet.domain.linking import references
from carnet.domain.reconcile.topic_rules import CASE_KINDS, CASE_NOUNS, ELSEWHERE, TOPICS, Topic
from carnet.domain.text import fold

_NAME = re.compile(r"\b[A-ZÀ-ÖØ-Þ][\w'’-]+")
# What comes just before a capitalised word that is not a name: a sentence's start or a title.
_NOT_A_NAME_BEFORE = re.compile(r"(?:[.!?:;(]\s*|\b(?:M|Mme|Mlle|Dr|Me|Mr|Mrs|Ms)\.?\s+)$")
_TITLES = frozenset({"m", "mme", "mlle", "dr", "me", "mr", "mrs", "ms"})
CASE_WORDS = "dossier file"


def keyword_text(pseudo_text: str) -> str:
    """What the keyword retriever indexes for a note: its text, then the names advisors give to what it
    is about, in French and English ("À compter du 1er juillet, <ADDRESS_1>." also reads "adresse
    domicile address home"), so a two-word question ("Adresse ?") finds a note that never names its
    attribute. Read on the pseudonymised text: the added words are the table's, never a value."""
    folded = fold(pseudo_text)  # the whole note: what its parts are about, it is about
    words = [" ".join(t.words) for t in sorted(_holds(pseudo_text, folded), key=lambda t: t.name)]
    if CASE_NOUNS.search(folded) and references(pseudo_text):
        words.append(CASE_WORDS)
    return f"{pseudo_text} {' '.join(words)}" if words else pseudo_text


def exclusive_topics(pseudo_text: str, folded: str | None = None) -> frozenset[str]:
    """The attributes of one value at a time the note is about (the table's ``exclusive`` rows): the judge's
    ``same_topic`` evidence. ``folded``: ``text.fold(pseudo_text)`` when the caller has it."""
    folded = fold(pseudo_text) if folded is None else folded
    return frozenset(t.name for t in _holds(pseudo_text, folded) if t.exclusive)


def _holds(text: str, folded: str) -> list[Topic]:
    """The table's rows the note is about and holds what they need, in the table's order."""
    return [t for t in TOPICS if _about(t, text, folded) and _has_needs(t, text, folded)]


def _has_needs(topic: Topic, text: str, folded: str) -> bool:
    """What else a note about ``topic`` must hold: the pattern ``needs``, a name for a named one."""
    if topic.needs is not None and topic.needs.search(folded) is None:
        return False
    return not topic.named or bool(_names(text))


def _about(topic: Topic, text: str, folded: str) -> bool:
    if topic.cue.search(folded) is not None:
        return True
    if topic.name_after is not None and topic.name_after.search(text) is not None:
        return True
    return topic.shape is not None and topic.shape.search(text) is not None and ELSEWHERE.search(folded) is None


def _names(text: str) -> frozenset[str]:
    """Capitalised words that do not start a sentence nor follow a title."""
    return frozenset(fold(m.group(0)) for m in _NAME.finditer(text) if _is_name(text, m.start())) - _TITLES


def _is_name(text: str, start: int) -> bool:
    """Only the few characters before the word are read: a long note costs no more per word."""
    return start > 0 and _NOT_A_NAME_BEFORE.search(text[max(0, start - 8) : start]) is None


def case_kinds(folded: str) -> frozenset[str]:
    """The kinds of file a note names (``CASE_KINDS``), for a note about a file (``CASE_NOUNS``)."""
    if CASE_NOUNS.search(folded) is None:
        return frozenset()
    return frozenset(name for name, pattern in CASE_KINDS if pattern.search(folded))


def file_kinds(text: str) -> frozenset[str]:
    """The kinds of file a note names when it names no reference ("le dossier grêle est clos"): its
    candidates then include the records naming a file of that kind (``neighbours.nearest``)."""
    return frozenset() if references(text) else case_kinds(fold(text))


def names_file_of(text: str, kinds: frozenset[str]) -> bool:
    """``text`` names a file by reference, and the file is of one of ``kinds``."""
    return bool(references(text)) and bool(case_kinds(fold(text)) & kinds)
