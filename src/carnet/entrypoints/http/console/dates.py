"""Dates as a person reads them, in the console's zone (``CARNET_CONSOLE__TIME_ZONE``, Europe/Paris by
default), which every date states: "10 juin 2024 à 14:05 (Europe/Paris)", "10 June 2024 at 14:05
(Europe/Paris)". A page may state the zone once, in a column's heading, and leave it off the cells.

Month names and the sentence's order are words of the message catalogs (``month.1`` … ``date.at``): two
languages need 24 words, not a locale library. A day typed in a form is read as the console writes it,
``jj/mm/aaaa`` (an ISO ``aaaa-mm-jj`` is taken too), whatever the browser's locale."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from carnet.errors import InvalidInput

_TYPED = re.compile(r"^\s*(\d{1,2})\s*[/.\-]\s*(\d{1,2})\s*[/.\-]\s*(\d{4})\s*$")


class Dates:
    """The date filters of one page: ``t`` is the page's translator."""

    def __init__(self, *, zone: ZoneInfo, t: Callable[[str], str]) -> None:
        self.zone, self._t = zone, t

    @property
    def zone_name(self) -> str:
        return str(self.zone.key)

    def when(self, at: datetime, *, seconds: bool = False, zone: bool = True) -> str:
        """"10 juin 2024 à 14:05 (Europe/Paris)"; the zone left off where a heading states it."""
        local = at.astimezone(self.zone)
        clock = local.strftime("%H:%M:%S" if seconds else "%H:%M")
        said = self._t("date.at").format(day=self._day(local.date()), clock=clock)
        return f"{said} ({self.zone_name})" if zone else said

    def day(self, at: datetime) -> str:
        """The day ``at`` falls on in the console's zone: "3 mars 2031"."""
        return self._day(at.astimezone(self.zone).date())

    def calendar(self, at: datetime) -> str:
        """A day stored as midnight UTC (the end of a relationship): the same day in every zone."""
        return self._day(at.astimezone(UTC).date())

    def typed(self, at: datetime | None) -> str:
        """A stored day as a form field shows it: ``30/06/2026``."""
        return at.astimezone(UTC).strftime("%d/%m/%Y") if at else ""

    def _day(self, d: date) -> str:
        first = self._t("date.first")
        return self._t("date.day").format(day=first if d.day == 1 else d.day, month=self._t(f"month.{d.month}"),
                                          year=d.year)


def parse_day(raw: str) -> date | None:
    """A day typed in a form: ``30/06/2026`` (``30-06-2026``, ``30.06.2026``) or ``2026-06-30``; empty: None."""
    text = raw.strip()
    if not text:
        return None
    found = _TYPED.match(text)
    try:
        if found:
            day, month, year = (int(g) for g in found.groups())
            return date(year, month, day)
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput("a date is dd/mm/yyyy") from None
