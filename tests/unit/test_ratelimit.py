"""The per-key budgets' sliding window counter, on a clock the test moves: what it admits, and that
the ``Retry-After`` it gives is honest."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.errors import RateLimited
from carnet.services import ratelimit
from carnet.services.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _admitted(limiter: RateLimiter, key: str = "k") -> bool:
    try:
        limiter.hit(key)
    except RateLimited:
        return False
    return True


@settings(max_examples=200, deadline=None)
@given(amount=st.integers(1, 20), gaps=st.lists(st.floats(0, 2.5), min_size=1, max_size=120))
def test_no_fixed_window_admits_more_than_the_budget_and_a_quiet_key_is_admitted(amount: int,
                                                                                 gaps: list[float]) -> None:
    clock = Clock()
    limiter = RateLimiter(f"{amount}/second", clock=clock)
    per_window: dict[int, int] = {}
    last_admitted = -math.inf
    for gap in gaps:
        clock.now += gap
        quiet = clock.now - last_admitted >= 2.0  # nothing admitted in this window or the one before
        if _admitted(limiter):
            window = math.floor(clock.now)
            per_window[window] = per_window.get(window, 0) + 1
            last_admitted = clock.now
        else:
            assert not quiet
    assert all(n <= amount for n in per_window.values())


@settings(max_examples=200, deadline=None)
@given(amount=st.integers(1, 10), burst=st.integers(1, 30), start=st.floats(0, 0.999))
def test_retry_after_is_enough(amount: int, burst: int, start: float) -> None:
    """A client that waits the exact wait it was given (before ``Retry-After`` rounds it up) is admitted."""
    clock = Clock()
    clock.now += start
    limiter = RateLimiter(f"{amount}/second", clock=clock)
    waits: list[float] = []
    real = ratelimit.wait_before_next

    def spy(*args: float) -> float:
        waits.append(real(*args))  # type: ignore[arg-type]
        return waits[-1]

    ratelimit.wait_before_next = spy  # type: ignore[assignment]
    try:
        refused = [not _admitted(limiter) for _ in range(burst)]
    finally:
        ratelimit.wait_before_next = real
    assert refused == [False] * min(amount, burst) + [True] * max(0, burst - amount)
    if waits:
        assert all(0 <= w <= 2.0 for w in waits)
        clock.now += waits[-1] + 1e-6
        assert _admitted(limiter)


def test_keys_are_independent_and_finished_counters_are_swept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ratelimit, "SWEEP_EVERY", 4)
    clock = Clock()
    limiter = RateLimiter("1/second", clock=clock)
    assert _admitted(limiter, "a") and not _admitted(limiter, "a") and _admitted(limiter, "b")
    assert limiter.tracked() == 2
    clock.now += 5
    assert _admitted(limiter, "c")  # the fourth hit sweeps: a and b are two windows behind
    assert limiter.tracked() == 1
    with pytest.raises(RateLimited) as refused:
        limiter.hit("c")
    assert refused.value.context["retry_after"] >= 1
    assert RateLimiter(None).hit("anyone") is None  # no budget: nothing counted
    limiter.hit("d", own="5/minute")  # a key's own budget is its own counter
    assert limiter.tracked() == 2
