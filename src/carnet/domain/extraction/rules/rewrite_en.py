"""English statements moved to the third person: "I moved to Leeds" → "The member moved to Leeds."

The simpler sibling of ``rewrite_fr``: the member's "I"/"we" and the advisor's "you" become "the
member" (the household for "we"), the advisor's "I"/"we" become "the advisor", and the one present
tense verb after the subject takes its third-person form ("I live" → "lives", "I'm" → "is").
"""

from __future__ import annotations

import re

from carnet.domain.extraction.rules.french_words import capitalize_first

MEMBER, ADVISOR = "member", "advisor"
_TOKEN = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>|\w+(?:'\w+)?|\s+|.")
_CONTRACTED = {"m": "is", "re": "is", "ve": "has", "ll": "will", "d": "would"}
_THIRD = {"am": "is", "are": "is", "have": "has", "do": "does", "don't": "doesn't", "were": "was", "go": "goes"}
_UNCHANGED = frozenset(
    """
    can could will would should must may might shall had was did got went bought sold lost paid made took
    left sent told said found came became began broke fell felt gave kept knew lent met put ran saw spent
    stole wrote drove heard held hurt won can't couldn't won't wouldn't didn't wasn't shouldn't
    """.split()
)
_ADVERBS = frozenset("also now still just really recently currently already never always usually no longer "
                     "only actually".split())
_OBJECT_BEFORE = frozenset("to for with from at on about by of than".split())
_CONJUNCTIONS = frozenset("and but that if when because so as since while or".split())


def rewrite_en(sentence: str, speaker: str) -> str:
    tokens = _TOKEN.findall(sentence.strip())
    words = [i for i, t in enumerate(tokens) if not t.isspace()]
    for n, i in enumerate(words):
        low = tokens[i].lower()
        head, _, tail = low.partition("'")
        prev = tokens[words[n - 1]].lower() if n else ""
        who = _subject_of(head, prev, speaker)
        if who is not None and (head != "you" or not _is_object(prev)):
            tokens[i] = who + (f" {_CONTRACTED[tail]}" if tail in _CONTRACTED else "")
            if not tail:
                _conjugate(tokens, words[n + 1:])
            continue
        tokens[i] = _other_pronoun(low, speaker, tokens[i], first=n == 0)
    text = re.sub(r"\s{2,}", " ", "".join(tokens)).strip().rstrip(" ,;:-!")
    if not text.endswith((".", "?")):
        text += "."
    return capitalize_first(text)


def _subject_of(head: str, prev: str, speaker: str) -> str | None:
    if head == "i":
        return "the member" if speaker == MEMBER else "the advisor"
    if head == "we":
        return "the member's household" if speaker == MEMBER else "the advisor"
    if head == "you":
        return "the company" if speaker == MEMBER else "the member"
    return None


def _is_object(prev: str) -> bool:
    return bool(prev) and prev not in _CONJUNCTIONS and (prev in _OBJECT_BEFORE or prev.isalpha())


def _conjugate(tokens: list[str], following: list[int]) -> None:
    for k in following:
        low = tokens[k].lower()
        if low in _ADVERBS:
            continue
        if low in _THIRD:
            tokens[k] = _THIRD[low]
        elif low not in _UNCHANGED and low.isalpha() and not _past_or_third(low):
            tokens[k] = _add_s(low)
        return


def _past_or_third(verb: str) -> bool:
    return (verb.endswith("ed") and not verb.endswith("eed")) or (verb.endswith("s") and not verb.endswith("ss"))


def _add_s(verb: str) -> str:
    if verb.endswith(("sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _other_pronoun(low: str, speaker: str, original: str, *, first: bool) -> str:
    """Object and possessive pronouns; a sentence-opening "My"/"Your" names its owner."""
    member_words = {"me": "them", "my": "the member's" if first else "their", "mine": "theirs",
                    "myself": "themselves"}
    if speaker == MEMBER:
        table = {**member_words, "us": "them", "our": "their", "you": "the company", "your": "the company's"}
    else:
        table = {"you": "the member", "your": "the member's", "my": "their", "yours": "the member's",
                 "yourself": "the member", "us": "the company", "our": "the company's"}
    return table.get(low, original)
