"""The domain's value rules (``carnet.domain.reconcile.values``) as typer option callbacks: a CLI option is
refused like a REST field (exit 2, a fixed message that never quotes the value)."""

from __future__ import annotations

from datetime import datetime

import typer

from carnet.domain.reconcile.values import MAX_SAFE_INT, check_rate, clean_label, parse_instant

MAX_INT = MAX_SAFE_INT


def rate(value: str | None) -> str | None:
    """``--rate-limit``: a positive amount per a positive period."""
    if value is None:
        return None
    try:
        return check_rate(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def label(value: str | None) -> str | None:
    """A tenant, a subject id, a name: one line without control characters."""
    if value is None:
        return None
    try:
        return clean_label(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def labels(values: list[str] | None) -> list[str] | None:
    return None if values is None else [v for v in (label(v) for v in values) if v is not None]


def instant(value: str) -> datetime:
    """An ISO 8601 datetime with a time zone, in the domain's range."""
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
