"""The domain's value rules: one rule per value type, checked once at every edge (REST, MCP, CLI).

Each rule is a plain function (for the CLI and the services) and a pydantic ``Annotated`` type (for
request bodies, query and header parameters, and MCP tool arguments):

- ``Instant``: an aware datetime, ISO 8601 text only (no epoch number, no bare digits), whose UTC
  value lies in [``EARLIEST``, ``LATEST``). Any aware datetime can be parsed, but one whose UTC value
  leaves years 1-9999 cannot be compared, stored or exported; the range also leaves room for the
  retention periods added to it (``later``), which saturate at ``CEILING`` rather than overflow.
- ``Int``: a JSON integer (not ``"10"``, not ``true``, not ``10.0``) within bounds; every integer a
  caller sends has its own bounds, inside +/-``MAX_SAFE_INT`` (which every JSON parser holds exactly
  and every store takes).
- ``Fraction``: a finite number in [0, 1] (an integer is a number; ``true`` is not).
- ``Text`` (free text: memories, messages, queries): no NUL and no control character other than
  newline and tab (``\\r\\n`` becomes ``\\n``), no lone surrogate.
- ``Label`` (identifiers, categories, tags, references, keys): one line of text, no control
  character at all, with a bounded length.
- ``RateLimit``: ``N/second``, ``N per 5 minutes``... with a positive amount and a positive period.

Rejections never quote the value: the messages below are fixed texts, and ``error_fields`` turns a
pydantic error list into field names (known ones only) and fixed messages.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, Strict
from pydantic_core import PydanticCustomError

EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)  # exclusive
CEILING = datetime(9000, 1, 1, tzinfo=UTC)  # where computed dates (expiry) saturate
RANGE_TEXT = "between 1900-01-01T00:00:00Z and 2199-12-31T23:59:59Z"
MAX_SAFE_INT = 2**53 - 1
UNKNOWN_FIELD = "<unknown field>"

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")
_RATE = re.compile(r"([0-9]{1,9})\s*(?:/|\s+per\s+)\s*(?:([0-9]{1,6})\s+)?(second|minute|hour|day|month|year)s?")
_CRLF = re.compile(r"\r\n")


def _refuse(kind: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(kind, message)


# --- datetimes -------------------------------------------------------------------------------------

DATETIME_MESSAGE = f"must be an ISO 8601 date and time with a time zone, {RANGE_TEXT}"


def in_range(at: datetime) -> bool:
    """Whether ``at`` is aware and its UTC value lies in [EARLIEST, LATEST)."""
    if at.tzinfo is None or at.utcoffset() is None:
        return False
    try:
        utc = at.astimezone(UTC)
    except (OverflowError, ValueError):
        return False
    return EARLIEST <= utc < LATEST


def parse_instant(text: str) -> datetime:
    """``text`` as an in-range aware datetime, or ``ValueError`` with a fixed message (CLI options)."""
    if not _ISO.match(text):
        raise ValueError(DATETIME_MESSAGE)
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(DATETIME_MESSAGE) from None
    if not in_range(at):
        raise ValueError(DATETIME_MESSAGE)
    return at


def _instant_text(value: object) -> object:
    """JSON gives text: an ISO 8601 string only (never a number, a bool, or digits read as epoch)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _ISO.match(value):
        raise _refuse("invalid_datetime", DATETIME_MESSAGE)
    return value


def _instant_range(at: datetime) -> datetime:
    if not in_range(at):
        raise _refuse("datetime_out_of_range", DATETIME_MESSAGE)
    return at


Instant = Annotated[datetime, BeforeValidator(_instant_text), AfterValidator(_instant_range),
                    Field(json_schema_extra={"format": "date-time", "description": f"ISO 8601 with a time zone, "
                                                                                  f"{RANGE_TEXT} (UTC)."})]


def later(start: datetime, days: int) -> datetime:
    """``start`` plus ``days``, saturating at ``CEILING`` (never an overflow, whatever the days)."""
    try:
        utc = start.astimezone(UTC)
    except (OverflowError, ValueError):
        return CEILING
    room = (CEILING - utc).days
    if days >= room:
        return CEILING
    return min(start + timedelta(days=max(days, 0)), CEILING)


# --- numbers ---------------------------------------------------------------------------------------

Int = Annotated[int, Strict(), Field(ge=-MAX_SAFE_INT, le=MAX_SAFE_INT)]
"""A JSON integer (not ``"10"``, ``true`` or ``10.0``); give it its own bounds:
``Annotated[Int, Field(ge=1, le=500)]``."""


Fraction = Annotated[float, Strict(), Field(ge=0, le=1, allow_inf_nan=False)]
"""A number in [0, 1] (``1`` counts, ``"1"``, ``true``, NaN do not)."""

Seconds = Annotated[float, Field(gt=0, le=3600, allow_inf_nan=False)]
"""A duration in a query parameter (text by nature, so not strict): finite, positive, bounded."""

# --- text ------------------------------------------------------------------------------------------

LABEL_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$"  # also in the OpenAPI schema; _label adds lone surrogates
TEXT_MESSAGE = "must be text without NUL or control characters (other than newline and tab)"
LABEL_MESSAGE = "must be one line of text without control characters"


def _bad_char(c: str, allowed: str) -> bool:
    return c not in allowed and unicodedata.category(c) in ("Cc", "Cs")


def clean_text(text: str) -> str:
    """``text`` with ``\\r\\n`` as ``\\n``, or ``ValueError`` if a control character other than newline
    and tab (or a lone surrogate) remains."""
    text = _CRLF.sub("\n", text)
    if any(_bad_char(c, "\n\t") for c in text):
        raise ValueError(TEXT_MESSAGE)
    return text


def is_clean(text: str) -> bool:
    """Whether ``text`` holds no control character other than newline, tab and ``\r\n``."""
    try:
        clean_text(text)
    except ValueError:
        return False
    return True


def clean_label(text: str) -> str:
    if any(_bad_char(c, "") for c in text) or "\u2028" in text or "\u2029" in text:
        raise ValueError(LABEL_MESSAGE)
    return text


def _refusing(check: Callable[[str], str], code: str, message: str) -> Callable[[str], str]:
    """``check`` as a field validator: its ``ValueError`` becomes the refusal ``code`` with the fixed
    ``message`` (which never quotes the value)."""

    def validate(value: str) -> str:
        try:
            return check(value)
        except ValueError:
            raise _refuse(code, message) from None

    return validate


_text = _refusing(clean_text, "invalid_text", TEXT_MESSAGE)
_label = _refusing(clean_label, "invalid_label", LABEL_MESSAGE)


Text = Annotated[str, Strict(), Field(min_length=1), AfterValidator(_text)]
"""Free text (a memory, a message, a query), 1 character at least; the services bound its length."""

Label = Annotated[str, Strict(), Field(min_length=1, max_length=256, pattern=LABEL_PATTERN),
                  AfterValidator(_label)]
"""A one-line identifier or label; narrow its length: ``Annotated[Label, Field(max_length=64)]``."""

HEADER_KEY_PATTERN = r"^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$"
IdempotencyKey = Annotated[str, Field(min_length=1, max_length=200, pattern=HEADER_KEY_PATTERN,
                                      description="1-200 printable ASCII characters.")]

# --- rate limits -----------------------------------------------------------------------------------

RATE_MESSAGE = "rate limit must be a positive amount per a positive period, like '100/second' or '6000/minute'"


def check_rate(value: str) -> str:
    """``value`` if it is a rate with a positive amount per a positive period, else ``ValueError``."""
    m = _RATE.fullmatch(value.strip())
    if m is None or int(m.group(1)) < 1 or (m.group(2) is not None and int(m.group(2)) < 1):
        raise ValueError(RATE_MESSAGE)
    return value


_rate = _refusing(check_rate, "invalid_rate_limit", RATE_MESSAGE)


RateLimit = Annotated[str, Strict(), Field(min_length=1, max_length=32, examples=["50/second"]),
                      AfterValidator(_rate)]

# --- errors ----------------------------------------------------------------------------------------

# pydantic error types whose message states only the schema (bounds, types, enum values), never
# the input; any other type gets a fixed message.
_SAFE_TYPES = frozenset({
    "missing", "extra_forbidden", "string_type", "string_too_short", "string_too_long", "string_pattern_mismatch",
    "int_type", "int_parsing", "int_from_float", "float_type", "float_parsing", "bool_type", "bool_parsing",
    "greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number", "too_short",
    "too_long", "list_type", "dict_type", "model_type", "model_attributes_type", "literal_error", "enum",
    "datetime_type", "datetime_parsing", "datetime_from_date_parsing", "timezone_aware", "uuid_type",
    "union_tag_invalid", "union_tag_not_found", "json_invalid", "json_type", "none_required",
    "invalid_datetime", "datetime_out_of_range", "number_type", "invalid_text", "invalid_label",
    "invalid_rate_limit",
})
_LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})


def error_fields(errors: Iterable[Mapping[str, Any]], known: Callable[[str], bool] | Collection[str]
                 ) -> list[dict[str, object]]:
    """Pydantic errors as ``{"loc", "type", "msg"}`` that name known fields only (an unknown field is
    ``UNKNOWN_FIELD``) and never carry the rejected value."""
    is_known = known if callable(known) else known.__contains__
    out: list[dict[str, object]] = []
    for err in errors:
        kind = str(err.get("type", "value_error"))
        loc = _safe_loc(err.get("loc", ()), is_known, unknown_last=kind == "extra_forbidden")
        msg = str(err.get("msg", "")) if kind in _SAFE_TYPES else "invalid value"
        out.append({"loc": loc, "type": kind, "msg": msg})
    return out


def _safe_loc(loc: Sequence[object], is_known: Callable[[str], bool], *, unknown_last: bool) -> list[str]:
    """Each part as text: an index, a known name, or ``UNKNOWN_FIELD``."""
    out: list[str] = []
    for n, part in enumerate(loc):
        last = n == len(loc) - 1
        if isinstance(part, int) and not isinstance(part, bool):
            out.append(str(part))
        elif isinstance(part, str) and not (last and unknown_last) and (part in _LOCATIONS or is_known(part)):
            out.append(part)
        else:
            out.append(UNKNOWN_FIELD)
    return out
