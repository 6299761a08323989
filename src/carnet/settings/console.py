"""The web console's sessions (``CARNET_CONSOLE__*``)."""

from __future__ import annotations

from typing import Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator, model_validator


class ConsoleSettings(BaseModel):
    """The web console at ``/console`` (``carnet.entrypoints.http.console``): server-side sessions in this process's
    memory (several processes behind one address need sticky sessions: docs/console.md)."""

    enabled: bool = True
    # A session unused this long is gone; one older than ``absolute_minutes`` is gone however used.
    idle_minutes: int = Field(15, ge=1, le=24 * 60)
    absolute_minutes: int = Field(8 * 60, ge=1, le=7 * 24 * 60)
    # Sessions held at once by this process; a login beyond it ends the oldest one of the tenant holding the most.
    max_sessions: int = Field(1000, ge=1, le=100_000)
    # Sessions one tenant holds at once; a login beyond it ends that tenant's oldest (never another tenant's).
    max_sessions_per_tenant: int = Field(100, ge=1, le=100_000)
    # The zone the pages show dates in (an IANA name), stated beside each date.
    time_zone: str = "Europe/Paris"

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"console time_zone: unknown zone {value!r} (an IANA name, e.g. Europe/Paris)") from None
        return value

    @model_validator(mode="after")
    def _idle_within_absolute(self) -> Self:
        if self.idle_minutes > self.absolute_minutes:
            raise ValueError("console idle_minutes cannot exceed absolute_minutes")
        return self
