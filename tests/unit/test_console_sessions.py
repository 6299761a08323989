"""Console sessions (``carnet.entrypoints.http.console.sessions``): idle and absolute timeouts, logout, the cap, and
a token never stored as such; and the console's words (every English key has its French one)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from carnet.entrypoints.http.console import i18n
from carnet.entrypoints.http.console.sessions import SessionStore
from carnet.settings.console import ConsoleSettings


class Clock:
    def __init__(self) -> None:
        self.at = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.at

    def tick(self, **delta: float) -> None:
        self.at += timedelta(**delta)


def _store(clock: Clock, *, max_sessions: int = 10) -> SessionStore:
    return SessionStore(idle=timedelta(minutes=15), absolute=timedelta(hours=8), max_sessions=max_sessions,
                        now=clock)


def _open(store: SessionStore) -> str:
    return store.open(key_hash="h", key_id="k", tenant="t")[0]


def test_a_session_used_within_its_idle_time_lives_until_the_absolute_limit() -> None:
    clock = Clock()
    store = _store(clock)
    token = _open(store)
    for _ in range(34):  # 34 × 14 min = 7 h 56 min, each step within the idle time
        clock.tick(minutes=14)
        assert store.get(token) is not None
    clock.tick(minutes=14)  # 8 h 10 min: gone however used
    assert store.get(token) is None


def test_an_idle_session_is_gone_for_good() -> None:
    clock = Clock()
    store = _store(clock)
    token = _open(store)
    clock.tick(minutes=16)
    assert store.get(token) is None
    clock.tick(minutes=-16)
    assert store.get(token) is None  # not merely hidden: deleted


def test_logout_ends_the_session_and_unknown_tokens_are_nobody() -> None:
    store = _store(Clock())
    token = _open(store)
    assert store.close(token) is not None and store.get(token) is None
    assert store.get(None) is None and store.get("forged") is None


def test_the_store_keeps_a_digest_of_the_token_never_the_token() -> None:
    store = _store(Clock())
    token = _open(store)
    assert token not in repr(store._sessions) and len(token) >= 43  # 256 bits


def test_beyond_the_cap_the_oldest_login_ends_and_logins_sweep_expired_sessions() -> None:
    clock = Clock()
    store = _store(clock, max_sessions=2)
    first, second, third = _open(store), _open(store), _open(store)
    assert store.get(first) is None and store.get(second) and store.get(third)
    clock.tick(minutes=20)
    _open(store)
    assert len(store) == 1


def test_idle_cannot_exceed_absolute() -> None:
    with pytest.raises(ValidationError):
        ConsoleSettings(idle_minutes=90, absolute_minutes=60)


def test_every_english_word_has_its_french_one_and_errors_fall_back() -> None:
    assert set(i18n.EN) <= set(i18n.FR)
    t = i18n.translator("en")
    assert t("error.some_new_code") == t("error.generic") and t("nav.dpo") == "DPO"
