"""``carnet bench load --recovery``: the windows after a rate, and when they are back at the first
rate's figures (every later window with nothing refused and its p95 within ``RECOVERED_P95`` times)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from carnet.bench.load import RECOVERED_P95, Outcome, _recovery


def _ok(at: float, ms: float) -> Outcome:
    return Outcome("assemble", ms, at, 0.0, 200)


def _refused(at: float) -> Outcome:
    return Outcome("assemble", 3.0, at, 0.0, 503, "overloaded")


def test_the_first_window_from_which_all_are_normal() -> None:
    slow = [_ok(0.1 * i, 900.0) for i in range(10)]  # second 0: still draining
    refused = [_refused(1.0 + 0.1 * i) for i in range(10)]  # second 1: refusals
    fine = [_ok(2.0 + 0.1 * i, 20.0) for i in range(20)]  # seconds 2 and 3: back
    back = _recovery(10.0, 4.0, slow + refused + fine, reference_p95=20.0)
    assert [w["normal"] for w in back["windows"]] == [False, False, True, True]
    assert back["recovered_after_s"] == 2
    assert [w["sent"] for w in back["windows"]] == [10, 10, 10, 10]


def test_a_bad_last_window_means_not_recovered() -> None:
    outcomes = [_ok(0.5, 20.0), _ok(1.5, 20.0 * RECOVERED_P95 + 1)]
    assert _recovery(10.0, 2.0, outcomes, reference_p95=20.0)["recovered_after_s"] is None


@given(st.lists(st.tuples(st.floats(0, 5.999), st.floats(1, 2000), st.booleans()), max_size=60))
def test_recovered_means_every_window_from_there_is_normal(rows: list[tuple[float, float, bool]]) -> None:
    outcomes = [_ok(at, ms) if ok else _refused(at) for at, ms, ok in rows]
    back = _recovery(10.0, 6.0, outcomes, reference_p95=50.0)
    windows = back["windows"]
    assert sum(w["sent"] for w in windows) == len(outcomes)
    t = back["recovered_after_s"]
    if t is None:
        assert not windows[-1]["normal"]
    else:
        assert all(w["normal"] for w in windows[t:]) and (t == 0 or not windows[t - 1]["normal"])
