"""When a fact became true: the message's time, or an explicit earlier date the sentence gives.

"Depuis le 3 mars", "le 12/05/2024", "hier", "since March 3": a fact that says when it started is
dated then. A date after the message is a plan or an appointment ("un expert passera le 15 mars"):
the fact itself (the commitment) became true during the call, so it keeps the message's time; the
date stays in the text, where the slot rules read appointments. A day without a year takes the
message's year, or the year before when that would put it more than half a year after the message
("depuis le 3 décembre", said in January).

Only dates within a year before the message count: ``valid_from`` also starts a record's retention
period and its recency decay, so "client depuis 1998" dated 1998 would be born expired. Such a
date stays in the text; the fact is dated by the call.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from carnet.domain.text import fold

_MONTHS = {
    "janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7, "aout": 8,
    "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12, "january": 1, "february": 2, "march": 3,
    "april": 4, "may": 5, "june": 6, "july": 7, "august": 8, "september": 9, "october": 10, "november": 11,
    "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE = re.compile(
    rf"""
    \b(?P<y1>\d{{4}})-(?P<m1>\d{{1,2}})-(?P<d1>\d{{1,2}})\b
  | \b(?P<d2>\d{{1,2}})[/.](?P<m2>\d{{1,2}})(?:[/.](?P<y2>\d{{2}}|\d{{4}}))?\b
  | \b(?P<d3>\d{{1,2}})(?:er|st|nd|rd|th)?\s+(?:of\s+)?(?P<m3>{_MONTH})\b\.?(?:,?\s+(?P<y3>\d{{4}}))?
  | \b(?P<m4>{_MONTH})\s+(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y4>\d{{4}}))?
    """,
    re.VERBOSE,
)
_LOOKBACK = timedelta(days=366)
_ROLLBACK = timedelta(days=183)
_RELATIVE = {"avant-hier": 2, "hier": 1, "the day before yesterday": 2, "yesterday": 1}
_RELATIVE_RE = re.compile(r"\b(?:avant-hier|hier|the day before yesterday|yesterday)\b")


def valid_from(text: str, at: datetime | None) -> datetime | None:
    """The earliest explicit date of ``text`` in the year before ``at``, else ``at``. Without ``at``
    nothing anchors "hier" or a year-less day: None, and the service dates the fact when it stores it."""
    if at is None:
        return None
    found = [d for d in _dates(fold(text), at) if at - _LOOKBACK <= d <= at]
    return min(found) if found else at


def _dates(folded: str, anchor: datetime) -> list[datetime]:
    out: list[datetime] = []
    for m in _DATE.finditer(folded):
        d = _from_match(m, anchor)
        if d is not None:
            out.append(d)
    for m in _RELATIVE_RE.finditer(folded):
        day = anchor - timedelta(days=_RELATIVE[m.group(0)])
        out.append(day.replace(hour=0, minute=0, second=0, microsecond=0))
    return out


def _from_match(m: re.Match[str], anchor: datetime) -> datetime | None:
    for n in "1234":
        day = m.group(f"d{n}")
        if day is None:
            continue
        month = m.group(f"m{n}")
        month_no = int(month) if month.isdigit() else _MONTHS[month]
        year = m.group(f"y{n}")
        if year is None:
            return day_of(anchor, month_no, int(day))
        full = int(year) + (2000 if len(year) == 2 else 0)
        return _make(full, month_no, int(day), anchor)
    return None


def day_of(anchor: datetime, month: int, day: int) -> datetime | None:
    """The day ``day``/``month`` said without a year at ``anchor``: in the anchor's year, or the year
    before when that would put it more than half a year after the anchor; None if it cannot exist."""
    guess = _make(anchor.year, month, day, anchor)
    if guess is not None and guess > anchor + _ROLLBACK:
        return _make(anchor.year - 1, month, day, anchor)
    return guess


def _make(year: int, month: int, day: int, anchor: datetime) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=anchor.tzinfo or UTC)
    except ValueError:
        return None
