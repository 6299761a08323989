"""The kind of answer a question wants, and whether a text gives one. Pure, no I/O.

An advisor's "Combien paie-t-il par mois ?" or "Quand a eu lieu le dégât des eaux ?" wants an amount
or a date, and a note that holds one ("cotisation de 48 € par mois", "sinistre du 3 février") is more
likely the answer than one that only shares the topic ("il trouve sa cotisation trop chère"). Search
uses this to lift, among its first candidates, those that give what the question asks
(``services.memories.recall.lift_answers``).

Only two types, read from the question's interrogative words and from the shape of the value in the
text (a number with a currency, a day with a month, a month with a year, a numeric date, a year):
general forms of French and English, no word of any benchmark's sentences. "Combien de …" asks for a
count or a duration, not an amount, and is left alone.
"""

from __future__ import annotations

import re
from enum import Enum

from carnet.domain.text import fold


class Answer(Enum):
    AMOUNT = "amount"
    DATE = "date"


_ASKS_AMOUNT = re.compile(
    r"\bcombien\b(?!\s+(?:de|d'|des)\b)|\bmontants?\b|\bprix\b|\btarifs?\b"
    r"|\bhow much\b|\bwhat amount\b|\bhow many (?:euros|dollars)\b"
)
_ASKS_DATE = re.compile(r"\bquand\b|\bquelle date\b|\ba quelle date\b|\bdate d[eu']|\bwhen\b|\bwhat date\b")

_MONTHS_FR = r"janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre"
_MONTHS_EN = (r"january|february|march|april|may|june|july|august|september|october|november|december"
              r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_MONTH = rf"(?:{_MONTHS_FR}|{_MONTHS_EN})"

_GIVES_AMOUNT = re.compile(
    r"\d(?:[\d\s.,]*\d)?\s?(?:€|eur\b|euros?\b|k€|\$|usd\b|dollars?\b)|[€$]\s?\d"
)
_GIVES_DATE = re.compile(
    rf"\b(?:[12]?\d|3[01])(?:er)?\s+{_MONTH}\b"            # 12 mars, 1er avril, 3 June
    rf"|\b{_MONTH}\s+(?:[12]?\d|3[01])(?:st|nd|rd|th)?\b"  # March 12th
    rf"|\b{_MONTH}\s+(?:19|20)\d\d\b"                      # mars 2025
    r"|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{1,2}[.-]\d{1,2}[.-]\d{2,4}\b"  # 12/03, 12.03.2025
    r"|\b(?:19|20)\d\d-\d\d-\d\d\b"                        # 2025-03-12
    r"|\b(?:en|in|depuis|since|from) (?:19|20)\d\d\b"   # en 2019, since 2021
)


def asked(question: str) -> Answer | None:
    """The answer type the question asks for, or ``None`` (most questions ask for neither)."""
    text = fold(question)
    if _ASKS_AMOUNT.search(text):
        return Answer.AMOUNT
    if _ASKS_DATE.search(text):
        return Answer.DATE
    return None


def gives(text: str, wanted: Answer) -> bool:
    """Whether ``text`` states a value of the type ``wanted``."""
    pattern = _GIVES_AMOUNT if wanted is Answer.AMOUNT else _GIVES_DATE
    return bool(pattern.search(fold(text)))
