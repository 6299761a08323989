"""Forgetting: retention classes per tenant (``CARNET_RETENTION_CLASSES``) and decay (``CARNET_DECAY__*``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field


class RetentionAfter(StrEnum):
    VALID_FROM = "valid_from"  # the record's date (when what it says became true)
    RELATIONSHIP_END = "relationship_end"  # the end of the subject's relationship, recorded per subject


class RetentionClassSettings(BaseModel):
    """A retention class: ``days`` after the record's date, or after the end of the subject's
    relationship (``"after": "relationship_end"``: never while the relationship is open)."""

    model_config = {"extra": "forbid"}

    days: int = Field(ge=1)
    after: RetentionAfter = RetentionAfter.VALID_FROM


# Tenant ("*": every tenant without its own entry) -> class name -> class.
TenantKey = Annotated[str, Field(pattern=r"^(\*|[a-z0-9][a-z0-9_-]{0,62})$")]
RetentionClassName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]


class DecaySettings(BaseModel):
    """Forgetting what does not matter: unimportant records nobody has read, repeated or changed."""

    enabled: bool = True
    importance_below: float = Field(0.1, ge=0, le=1)
    untouched_days: int = Field(120, ge=1, le=1_000_000)  # bounded: now - days must not overflow
