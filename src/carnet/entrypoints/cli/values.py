"""The domain's value rules (``carnet.domain.reconcile.values``) as typer option callbacks: a CLI option is
refused like a REST field (exit 2, a fixed message that never quotes the value)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import typer

from carnet.domain.reconcile.values import MAX_SAFE_INT, check_rate, clean_label, parse_instant

MAX_INT = MAX_SAFE_INT


def _optional(check: Callable[[str], str]) -> Callable[[str | None], str | None]:
    """``check`` as the callback of an option that may be left out."""

    def callback(value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return check(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    return callback


rate = _optional(check_rate)  # ``--rate-limit``: a positive amount per a positive period
label = _optional(clean_label)  # a tenant, a subject id, a name: one line without control characters


def labels(values: list[str] | None) -> list[str] | None:
    return None if values is None else [v for v in (label(v) for v in values) if v is not None]


def instant(value: str) -> datetime:
    """An ISO 8601 datetime with a time zone, in the domain's range."""
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
