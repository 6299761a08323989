"""The intake's retry schedule: its own failures back off and end in the dead letter; a dependency's
outage is tried again at a steady pace, uncounted, until the outage limit after the intake's arrival."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from carnet.domain.intake import RetryPolicy

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def test_own_failures_back_off_exponentially_capped_then_give_up() -> None:
    policy = RetryPolicy(max_attempts=5, base_seconds=2, max_seconds=10)
    delays = [policy.next_attempt(n, T0) for n in range(1, 6)]
    assert [(d - T0).total_seconds() for d in delays[:4] if d] == [2, 4, 8, 10]
    assert delays[4] is None


@given(waited=st.floats(min_value=0, max_value=86399), outage=st.floats(min_value=0.01, max_value=600))
def test_an_outage_is_tried_again_at_its_pace_until_the_limit(waited: float, outage: float) -> None:
    policy = RetryPolicy(outage_seconds=outage, outage_max_seconds=86400)
    now = T0 + timedelta(seconds=waited)
    assert policy.after_outage(T0, now) == now + timedelta(seconds=outage)


@given(over=st.floats(min_value=0, max_value=1e7))
def test_past_the_outage_limit_the_intake_goes_to_the_dead_letter(over: float) -> None:
    policy = RetryPolicy(outage_max_seconds=3600)
    assert policy.after_outage(T0, T0 + timedelta(seconds=3600 + over)) is None
