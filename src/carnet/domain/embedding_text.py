"""What is embedded for a record: its pseudonymised text, optionally its date and some context.

The date helps questions anchored in time ("what did she do in May?"); context (for instance the
preceding turn of a dialogue) helps short replies ("Yes, twice!") carry their topic. Neither ever
becomes provenance: the record's sources stay its own.
"""

from __future__ import annotations

from datetime import datetime

from carnet.domain.pii.render import for_embedding

_MONTHS = {
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
           "octobre", "novembre", "décembre"),
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"),
}


def human_date(at: datetime, locale: str) -> str:
    months = _MONTHS.get(locale, _MONTHS["en"])
    return f"{at.day} {months[at.month - 1]} {at.year}"


def embedding_text(pseudo_text: str, *, at: datetime | None, locale: str, context: str | None = None) -> str:
    """``context`` is pseudonymised too. Placeholders are read as plain words (``domain.pii.render``)."""
    parts = []
    if at is not None:
        parts.append(f"[{human_date(at, locale)}]")
    if context:
        parts.append(context.strip())
    parts.append(pseudo_text)
    return for_embedding(" ".join(parts), locale)


def query_text(pseudo_query: str, *, locale: str) -> str:
    """What is embedded for a question: the pseudonymised question, placeholders read as words."""
    return for_embedding(pseudo_query, locale)
