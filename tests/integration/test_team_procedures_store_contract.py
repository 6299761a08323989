"""The ``TeamProcedures`` contract, run against SQLite (the reference) and a real PostgreSQL: a
proposal made once, tenants kept apart, status filters, and a decision that only one of two
concurrent supervisors wins."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from carnet.adapters.sqlite.procedures import SqliteTeamProcedures
from carnet.domain.procedures import ProcedureStatus, TeamProcedure
from carnet.ports import TeamProcedures

T0 = datetime(2026, 12, 1, 9, 0, 0, 250000, tzinfo=UTC)
S = ProcedureStatus


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TeamProcedures]:
    s: TeamProcedures
    if request.param == "sqlite":
        s = SqliteTeamProcedures(tmp_path / "catalog.sqlite3")
    else:
        from carnet.adapters.postgres.procedures import PostgresTeamProcedures
        from tests.support.postgres import open_test_pool

        s = PostgresTeamProcedures(open_test_pool(request.getfixturevalue("postgres_dsn"), size=2))
    yield s
    s.close()


def _p(pid: str, text: str = "Demander des photos avant l'expert.", *, tenant: str = "t1") -> TeamProcedure:
    return TeamProcedure(pid, tenant, text, S.PROPOSED, "k1", T0, T0, agent_id=None, queue="sinistres",
                         applies_when=("dégât des eaux", "fuite"))


def test_add_get_round_trip_and_tenants_apart(store: TeamProcedures) -> None:
    p = _p("p1")
    assert store.add(p) == p
    assert store.get("t1", "p1") == p
    assert store.get("t2", "p1") is None and store.get("t1", "nope") is None
    assert store.list("t2") == []


def test_the_same_text_is_proposed_once_while_live(store: TeamProcedures) -> None:
    first = store.add(_p("p1"))
    again = store.add(_p("p2", "demander des PHOTOS avant l'expert"))
    assert again == first and [p.id for p in store.list("t1")] == ["p1"]
    other_tenant = store.add(_p("p3", tenant="t2"))
    assert other_tenant.id == "p3"
    store.decide("t1", "p1", expected=S.PROPOSED, status=S.REJECTED, decided_by="sup", at=T0)
    assert store.add(_p("p4")).id == "p4"  # rejected: it may be proposed again


def test_status_filter_and_order(store: TeamProcedures) -> None:
    for i in range(3):
        store.add(_p(f"p{i}", f"Procédure numéro {i}."))
    store.decide("t1", "p1", expected=S.PROPOSED, status=S.APPROVED, decided_by="sup", at=T0)
    assert [p.id for p in store.list("t1")] == ["p0", "p1", "p2"]
    assert [p.id for p in store.list("t1", status=S.APPROVED)] == ["p1"]
    assert [p.id for p in store.list("t1", status=S.PROPOSED)] == ["p0", "p2"]
    assert [p.id for p in store.list("t1", limit=1)] == ["p0"]


def test_a_decision_applies_once_from_the_expected_status(store: TeamProcedures) -> None:
    store.add(_p("p1"))
    later = T0 + timedelta(minutes=5)
    done = store.decide("t1", "p1", expected=S.PROPOSED, status=S.APPROVED, decided_by="sup1", at=later)
    assert done == replace(_p("p1"), status=S.APPROVED, decided_by="sup1", updated_at=later)
    assert store.decide("t1", "p1", expected=S.PROPOSED, status=S.REJECTED, decided_by="sup2", at=later) is None
    assert store.decide("t2", "p1", expected=S.APPROVED, status=S.RETIRED, decided_by="x", at=later) is None
    assert store.get("t1", "p1") == done


def test_a_derived_procedure_goes_with_its_member_unless_a_person_adopted_it(store: TeamProcedures) -> None:
    """Issue 46: ``forget_origin`` deletes every procedure read from that member's calls, whatever its
    status, and only those of that tenant; a person proposing the same text clears the origin."""
    store.add(replace(_p("p1", "Pour un vol, porter plainte."), origin="h-member"))
    store.add(replace(_p("p2", "Pour un bris de glace, photos."), origin="h-member"))
    store.add(replace(_p("p3", "Pour un incendie, expert."), origin="h-member"))
    store.add(replace(_p("p4", "Pour un vol, porter plainte.", tenant="t2"), origin="h-member"))
    store.add(replace(_p("p5", "Pour un dégât des eaux, photos."), origin="h-other"))
    store.decide("t1", "p2", expected=S.PROPOSED, status=S.APPROVED, decided_by="sup", at=T0)
    adopted = store.add(_p("p6", "pour un INCENDIE, expert"))  # a person's proposal of the same text
    assert adopted.id == "p3" and adopted.origin is None
    assert sorted(store.forget_origin("t1", "h-member")) == ["p1", "p2"]
    assert [p.id for p in store.list("t1")] == ["p3", "p5"]
    assert [p.id for p in store.list("t2")] == ["p4"]
    assert store.forget_origin("t1", "h-member") == []
