"""Dates said in a call, written out in full: a memory is read months after the call.

On the phone nobody says the year: "je l'ai déposé le 22 avril", "l'avenant prend effet le 1er juin",
"vendredi, le 9", "le versement est parti hier". Stored as said, such a note loses its meaning as
time passes (which 22 April? which Friday?) and cannot answer "quand ?" with a date. So a French
fact's dates are completed from the message's time:

- a day and a month without a year (nor a two-digit one: "né le 3 avril 97") get the year ``dates``
  gives them (the message's year, or the year before when that would put the day more than half a
  year after the message), and in a range ("du 20 décembre au 5 janvier") the end is never before
  the start;
- a weekday and a day of the month without a month ("vendredi, le 9") get the month and year of the
  latest such day at most eight weeks before the message (a call tells what happened, and a plan
  names its month);
- a day named from the call ("hier", "avant-hier", "aujourd'hui", "ce soir", "cette nuit", "demain",
  "après-demain") keeps its words and gets the date in parentheses: "hier (21 juillet 2025)", unless
  the date follows ("avant-hier, le 1er juillet").

A date already complete, or one that cannot exist (31 février), is left as it was. English text is
left alone (its rewrite has no such rule yet). Pure: the message's time is the only clock.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from carnet.domain.extraction.rules.dates import day_of

MONTH_NAMES = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
               "octobre", "novembre", "décembre")  # fmt: skip
_MONTH_FORMS = {**{name: n for n, name in enumerate(MONTH_NAMES, 1)}, "fevrier": 2, "aout": 8, "decembre": 12}
_MONTH = "|".join(sorted(_MONTH_FORMS, key=len, reverse=True))
_DAY_MONTH = re.compile(
    rf"\b(?P<day>[0-3]?\d)(?P<ord>er|ᵉʳ)?\s+(?P<month>{_MONTH})\b(?!\s*(?:\d{{4}}|['’]?\d{{2}}\b))", re.IGNORECASE
)
_RANGE_END = re.compile(r"(?:\bau|\bjusqu['’]au|-)\s*$", re.IGNORECASE)
_WEEKDAYS = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
_WEEKDAY_DAY = re.compile(
    rf"\b(?P<weekday>{'|'.join(_WEEKDAYS)})\s*,?\s+(?:le\s+)?(?P<day>[0-3]?\d)(?P<ord>er)?\b(?!\s*(?:h\b|:|/|\d|{_MONTH}))",
    re.IGNORECASE,
)
_RELATIVE_DAYS = {
    "avant-hier": -2, "hier": -1, "aujourd'hui": 0, "ce matin": 0, "ce midi": 0, "cet après-midi": 0,
    "cet apres-midi": 0, "ce soir": 0, "cette nuit": 0, "après-demain": 2, "apres-demain": 2, "demain": 1,
}  # fmt: skip
_RELATIVE_WORDS = "|".join(w.replace("'", "['’]") for w in sorted(_RELATIVE_DAYS, key=len, reverse=True))
_RELATIVE = re.compile(
    rf"(?<![\w-])(?P<word>{_RELATIVE_WORDS})(?![\w-])(?!\s*\()(?!\s*,?\s*(?:le\s+)?[0-3]?\d(?:er)?\s+(?:{_MONTH})\b)",
    re.IGNORECASE,
)
_WEEKDAY_LOOKBACK = 56  # days


def with_years(text: str, at: datetime | None) -> str:
    """``text`` with its partial dates completed from ``at`` (see the module doc); as is without ``at``."""
    if at is None:
        return text
    text = _complete_day_months(text, at)
    text = _WEEKDAY_DAY.sub(lambda m: _weekday(m, at), text)
    return _RELATIVE.sub(lambda m: _relative(m, at), text)


def spelled(day: datetime) -> str:
    """``1er juin 2025``, ``22 avril 2025``."""
    return f"{'1er' if day.day == 1 else day.day} {MONTH_NAMES[day.month - 1]} {day.year}"


def _complete_day_months(text: str, at: datetime) -> str:
    out: list[str] = []
    last = 0
    previous: datetime | None = None
    for m in _DAY_MONTH.finditer(text):
        day = day_of(at, _MONTH_FORMS[m.group("month").lower()], int(m.group("day")))
        if day is None:
            continue
        if previous is not None and day < previous and _RANGE_END.search(text[last : m.start()]):
            day = day.replace(year=day.year + 1) if _exists(day.year + 1, day.month, day.day) else day
        out.append(text[last : m.end()])
        out.append(f" {day.year}")
        last = m.end()
        previous = day
    out.append(text[last:])
    return "".join(out)


def _weekday(m: re.Match[str], at: datetime) -> str:
    wanted = _WEEKDAYS.index(m.group("weekday").lower())
    number = int(m.group("day"))
    for back in range(_WEEKDAY_LOOKBACK + 1):
        day = at - timedelta(days=back)
        if day.day == number and day.weekday() == wanted:
            return f"{m.group('weekday')} {spelled(day)}"
    return m.group(0)


def _relative(m: re.Match[str], at: datetime) -> str:
    day = at + timedelta(days=_RELATIVE_DAYS[m.group("word").lower().replace("’", "'")])
    return f"{m.group('word')} ({spelled(day)})"


def _exists(year: int, month: int, day: int) -> bool:
    try:
        datetime(year, month, day)
    except ValueError:
        return False
    return True
