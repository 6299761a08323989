"""What the turn filter weighs for each message of a call: does this turn carry a fact about the member?
Pure (DESIGN.md, write path step 2: "a small learned filter picks the turns that carry a fact").

Every feature is read from the pseudonymised call the extractor is handed (never a clear value) and is
general: the turn's place and speaker, its shape, the kinds of value it holds (the PII placeholders and
the amounts, dates and numbers the supersession judge's ``evidence.read`` finds), person and negation
from French grammar, and how much of it is new in the call. None exists for one file's sentence.

| feature | what it measures |
|---|---|
| ``member`` | the member's side speaks (role ``user``) |
| ``position`` | the turn's place in the call, 0 (first) to 1 (last) |
| ``opening`` / ``closing`` | one of the call's first two / last two turns (greetings, identity, goodbyes); none |
| | closes a call that goes on (``ongoing``: a post read after the session's earlier ones) |
| ``length`` | log(1 + content words) |
| ``question`` | the turn ends with a question mark |
| ``answers`` | the turn before, by the other side, ended with a question |
| ``placeholders`` | log(1 + PII placeholders): a value was dictated (phone, IBAN, address, name) |
| ``names_only`` | every placeholder is a person's name (identity checks, greetings) |
| ``amount`` / ``date`` / ``number`` | the turn holds a value of that kind |
| ``first_person`` / ``second_person`` / ``third_person`` | French personal pronouns and possessives |
| ``negation`` / ``change`` | a negation; a cue of change (``evidence``'s, French grammar and usage) |
| ``politeness`` | a French politeness formula (bonjour, merci, au revoir…: general usage) |
| ``novelty`` | share of the turn's content words not said earlier in the call (a read-back is not new) |
| ``echo`` | Jaccard of the turn's content words with the turn before (a confirmation repeats it) |
| ``bias_member_length`` | ``member`` × ``length``: a long member turn tells a story, a long advisor turn explains |
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from carnet.domain.intake import Message
from carnet.domain.pii.pseudonyms import PLACEHOLDER
from carnet.domain.reconcile import evidence
from carnet.domain.text import content_tokens, fold

FEATURES: tuple[str, ...] = (
    "member", "position", "opening", "closing", "length", "question", "answers", "placeholders", "names_only",
    "amount", "date", "number", "first_person", "second_person", "third_person", "negation", "change",
    "politeness", "novelty", "echo", "bias_member_length",
)

MEMBER_ROLES = frozenset({"user", "member", "customer"})
# French personal pronouns and possessive determiners (grammar), on folded text.
_FIRST = re.compile(r"\b(?:je|j'|me|m'|moi|mon|ma|mes|nous|notre|nos)\b")
_SECOND = re.compile(r"\b(?:vous|votre|vos|tu|ton|ta|tes)\b")
_THIRD = re.compile(r"\b(?:il|elle|ils|elles|lui|leur|leurs|son|sa|ses)\b")
# French politeness formulas (general usage, not read from any benchmark file).
_POLITE = re.compile(r"\b(?:bonjour|bonsoir|au revoir|merci|bonne (?:journee|soiree|fin de journee)|je vous en prie)\b")
_NAME_KINDS = frozenset({"person"})


def turn_features(messages: Sequence[Message], *, ongoing: bool = False) -> list[tuple[float, ...]]:
    """One row per message, in ``FEATURES`` order. ``ongoing``: the call goes on after the last message
    (a session posted exchange by exchange), so no turn is known to close it."""
    rows: list[tuple[float, ...]] = []
    seen: set[str] = set()
    previous: frozenset[str] = frozenset()
    last = max(len(messages) - 1, 1)
    for i, m in enumerate(messages):
        words = content_tokens(PLACEHOLDER.sub(" ", m.content))
        rows.append(_row(messages, i, last, words, seen, previous, ongoing))
        seen |= words
        previous = words
    return rows


def _row(messages: Sequence[Message], i: int, last: int, words: frozenset[str], seen: set[str],
         previous: frozenset[str], ongoing: bool = False) -> tuple[float, ...]:
    m = messages[i]
    text = m.content.strip()
    folded = fold(text)
    member = m.role.strip().lower() in MEMBER_ROLES
    reading = evidence.read(text)
    kinds = dict(reading.values)
    placeholders = [p.group(1).lower() for p in PLACEHOLDER.finditer(text)]
    before = messages[i - 1] if i > 0 else None
    length = math.log1p(len(words))
    union = words | previous
    return (
        float(member),
        i / last,
        float(i < 2),
        float(not ongoing and i >= len(messages) - 2),
        length,
        float(text.endswith("?")),
        float(before is not None and before.role != m.role and before.content.strip().endswith("?")),
        math.log1p(len(placeholders)),
        float(bool(placeholders) and set(placeholders) <= _NAME_KINDS),
        float("amount" in kinds),
        float("date" in kinds),
        float("number" in kinds),
        float(_FIRST.search(folded) is not None),
        float(_SECOND.search(folded) is not None),
        float(_THIRD.search(folded) is not None),
        float(evidence.negated(folded)),
        float(reading.change),
        float(_POLITE.search(folded) is not None),
        len(words - seen) / len(words) if words else 0.0,
        len(words & previous) / len(union) if union else 0.0,
        float(member) * length,
    )
