"""The intake queue's per-subject advisory lock on PostgreSQL: a subject another worker is deciding
about (its lock held) is skipped by a lease, not waited for, and an add of that subject waits its turn."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import psycopg

from carnet.adapters.postgres.intakes import _SUBJECT_KEY, _SUBJECT_LOCKS, PostgresIntakeStore
from carnet.domain.intake import Intake, IntakeStatus
from tests.support.postgres import open_test_pool

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


def _intake(subject: str, n: int = 0) -> Intake:
    return Intake(id=f"{subject}-{n}", tenant="t1", subject=subject, status=IntakeStatus.PENDING, created_at=T0,
                  updated_at=T0, actor="k1", sealed=b"x")


def test_a_locked_subject_is_skipped_and_its_adds_wait(postgres_dsn: str) -> None:
    store = PostgresIntakeStore(open_test_pool(postgres_dsn))
    try:
        store.add(_intake("a"))
        store.add(_intake("b"))
        with psycopg.connect(postgres_dsn) as other:  # another worker, inside its lease of subject "a"
            other.execute(f"SELECT pg_advisory_xact_lock({_SUBJECT_LOCKS}, {_SUBJECT_KEY})",
                          {"tenant": "t1", "subject": "a"})
            assert [i.id for i in store.lease(owner="w1", now=T0, seconds=30, limit=5)] == ["b-0"]
            added = threading.Event()
            adder = threading.Thread(target=lambda: (store.add(_intake("a", 1)), added.set()))
            adder.start()
            assert not added.wait(0.3)  # blocked behind the other transaction's lock
            other.commit()
            assert added.wait(10)
            adder.join()
        assert [i.id for i in store.lease(owner="w1", now=T0 + timedelta(seconds=1), seconds=30)] == ["a-0"]
    finally:
        store.close()
