"""The domain's value rules (carnet.domain.reconcile.values), property by property."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from carnet.domain.reconcile import values
from carnet.domain.reconcile.values import (
    CEILING,
    EARLIEST,
    LATEST,
    MAX_SAFE_INT,
    UNKNOWN_FIELD,
    Fraction,
    Instant,
    Int,
    Label,
    RateLimit,
    Text,
)
from carnet.domain.records import RetentionClass


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    at: Instant | None = None
    n: Annotated[Int, Field(ge=1, le=500)] = 1
    f: Fraction | None = None
    text: Text = "x"
    label: Annotated[Label, Field(max_length=64)] | None = None
    rate: RateLimit | None = None


def _refused(**fields: Any) -> ValidationError:
    with pytest.raises(ValidationError) as refused:
        Body.model_validate(fields)
    return refused.value


offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
any_aware = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=offsets)


# --- datetimes -------------------------------------------------------------------------------------

@given(any_aware)
def test_an_aware_datetime_is_accepted_exactly_when_its_utc_value_is_in_range(at: datetime) -> None:
    inside = EARLIEST <= at.astimezone(UTC) < LATEST
    assert values.in_range(at) is inside
    if inside:
        assert Body.model_validate({"at": at.isoformat()}).at == at
    else:
        _refused(at=at.isoformat())


@given(st.integers(1, 9999), st.sampled_from(["+14:00", "-14:00", "Z"]))
def test_extremes_of_the_calendar_never_raise_anything_but_a_refusal(year: int, offset: str) -> None:
    for text in (f"{year:04d}-12-31T23:59:59{offset}", f"{year:04d}-01-01T00:00:00{offset}"):
        try:
            at = values.parse_instant(text)
        except ValueError as exc:
            assert str(exc) == values.DATETIME_MESSAGE
        else:
            assert values.in_range(at)


@given(st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False), st.integers(0, 2**40).map(str),
                 st.text(max_size=12)))
def test_only_iso_text_is_a_datetime(value: object) -> None:
    if isinstance(value, str) and len(value) >= 16 and value[4] == "-":
        return  # could be ISO text; the property above covers those
    _refused(at=value)


@given(st.datetimes(min_value=datetime(1950, 1, 1), max_value=datetime(2100, 1, 1)))
def test_a_naive_datetime_is_refused(at: datetime) -> None:
    _refused(at=at.isoformat())


@settings(max_examples=60)
@given(any_aware, st.integers(-(10**12), 10**12))
def test_computed_dates_saturate_and_never_overflow(start: datetime, days: int) -> None:
    end = values.later(start, days)
    assert end <= CEILING
    assert RetentionClass("c", days if days > 0 else 1).expires_at(start) is not None


def test_the_issue_example() -> None:
    err = _refused(at="9999-12-31T23:59:59-14:00")
    assert "9999" not in str(values.error_fields(err.errors(), {"at"}))


# --- integers and numbers --------------------------------------------------------------------------

@given(st.integers())
def test_integers_are_held_to_their_bounds(n: int) -> None:
    if 1 <= n <= 500:
        assert Body.model_validate({"n": n}).n == n
    else:
        _refused(n=n)


@given(st.one_of(st.integers(1, 500).map(str), st.booleans(), st.floats(1, 500), st.none()))
def test_an_integer_is_a_json_integer(value: object) -> None:
    _refused(n=value)


def test_every_integer_type_is_bounded() -> None:
    assert Int.__metadata__  # type: ignore[attr-defined]
    _refused(n=MAX_SAFE_INT + 1)


@given(st.one_of(st.floats(allow_nan=True), st.integers(-5, 5), st.booleans(), st.text(max_size=4)))
def test_a_fraction_is_a_finite_number_in_0_1(value: object) -> None:
    good = (not isinstance(value, bool | str) and isinstance(value, int | float)
            and value == value and 0 <= value <= 1)
    if good:
        assert Body.model_validate({"f": value}).f == float(value)  # type: ignore[arg-type]
    else:
        _refused(f=value)


# --- text ------------------------------------------------------------------------------------------

def _is_control(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs")


@given(st.text(alphabet=st.characters(codec=None), min_size=1, max_size=40))
def test_text_is_refused_exactly_when_it_holds_a_control_character(text: str) -> None:
    bad = any(_is_control(c) and c not in "\n\t" for c in text.replace("\r\n", "\n"))
    if bad:
        _refused(text=text)
    else:
        assert Body.model_validate({"text": text}).text == text.replace("\r\n", "\n")


@given(st.integers(1, 50))
def test_a_text_of_only_nul_is_refused(n: int) -> None:
    _refused(text="\x00" * n)


@given(st.text(alphabet=st.characters(codec=None), min_size=1, max_size=40))
def test_a_label_is_one_line_without_any_control_character(text: str) -> None:
    bad = any(_is_control(c) for c in text) or "\u2028" in text or "\u2029" in text or len(text) > 64
    if bad:
        _refused(label=text)
    else:
        assert Body.model_validate({"label": text}).label == text


@given(st.one_of(st.integers(), st.booleans(), st.just([]), st.just({})))
def test_a_string_is_a_json_string(value: object) -> None:
    _refused(text=value)
    _refused(label=value)


# --- rate limits -----------------------------------------------------------------------------------

@given(st.integers(1, 10**6), st.sampled_from(["/", " per "]), st.sampled_from(["", "1 ", "5 "]),
       st.sampled_from(["second", "minute", "hour", "day", "seconds", "minutes"]))
def test_a_positive_amount_per_a_positive_period_is_a_rate(amount: int, sep: str, n: str, unit: str) -> None:
    rate = f"{amount}{sep}{n}{unit}"
    assert Body.model_validate({"rate": rate}).rate == rate
    from limits import parse

    item = parse(rate)
    assert item.amount == amount


@given(st.one_of(st.sampled_from(["1/0 second", "0/second", "0 per minute", "-1/second", "1/second; 2/minute",
                                  "1/0 minutes", "/second", "1/", "many/second"]),
                 st.text(alphabet="0/ abc", max_size=12)))
def test_anything_else_is_not_a_rate(rate: str) -> None:
    err = _refused(rate=rate)
    fields = values.error_fields(err.errors(), {"rate"})
    if len(rate) >= 4:
        assert rate not in str(fields).replace(values.RATE_MESSAGE, "")


# --- errors never echo -------------------------------------------------------------------------------

@given(st.text(min_size=1, max_size=30).filter(lambda k: k not in Body.model_fields))
def test_an_unknown_field_is_never_named(name: str) -> None:
    err = _refused(**{name: 1})
    fields = values.error_fields(err.errors(), Body.model_fields.keys())
    assert fields == [{"loc": [UNKNOWN_FIELD], "type": "extra_forbidden", "msg": "Extra inputs are not permitted"}]


@given(st.text(alphabet="abcdefghij", min_size=8, max_size=20))
def test_messages_never_carry_the_value(secret: str) -> None:
    class Ids(BaseModel):
        id: UUID

    with pytest.raises(ValidationError) as refused:
        Ids.model_validate({"id": secret})
    fields = values.error_fields(refused.value.errors(), {"id"})
    assert secret not in str(fields) and fields[0]["loc"] == ["id"]
    for char in set(secret):  # pydantic's own uuid message quotes a character of the input
        assert f"`{char}`" not in str(fields)
