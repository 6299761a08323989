"""The ``Catalog`` contract, run against SQLite (the reference) and a real PostgreSQL: the same calls
give the same answers, errors and orderings on both."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from carnet.adapters.sqlite.catalog import SqliteCatalog
from carnet.domain.records import HistoryEntry, Scope
from carnet.domain.retention import SubjectRetention
from carnet.errors import Conflict
from carnet.ports import Catalog

AT = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)
A = Scope("assur-nord", "a" * 64)
B = Scope("assur-nord", "b" * 64)

OpenCatalog = Callable[[], Catalog]


@pytest.fixture(params=["sqlite", "postgres"])
def open_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenCatalog]:
    """Opens catalogs on one store (several instances = several processes sharing it)."""
    opened: list[Catalog] = []
    if request.param == "sqlite":
        def make() -> Catalog:
            return SqliteCatalog(tmp_path / "catalog.sqlite3")
    else:
        from carnet.adapters.postgres.catalog import PostgresCatalog
        from tests.support.postgres import open_test_pool

        dsn: str = request.getfixturevalue("postgres_dsn")

        def make() -> Catalog:
            return PostgresCatalog(open_test_pool(dsn))

    def opener() -> Catalog:
        opened.append(make())
        return opened[-1]

    yield opener
    for c in opened:
        c.close()


@pytest.fixture
def catalog(open_catalog: OpenCatalog) -> Catalog:
    return open_catalog()


def test_api_keys(catalog: Catalog) -> None:
    first = catalog.add_api_key(key_id="k1", key_hash="h1", tenant="t1", roles=["agent"])
    catalog.add_api_key(key_id="k2", key_hash="h2", tenant="t2", roles=["dpo", "admin"], rate_limit="5/second",
                        name="ivr-bot")
    catalog.add_api_key(key_id="k0", key_hash="h0", tenant="t1", roles=[])
    found = catalog.find_api_key("h2")
    assert found is not None and found.roles == ("dpo", "admin") and found.rate_limit == "5/second"
    assert found.name == "ivr-bot" and found.tenant == "t2" and not found.revoked
    assert found.created_at.tzinfo is not None and abs(found.created_at - first.created_at) < timedelta(seconds=5)
    assert catalog.find_api_key("nope") is None
    assert [k.key_id for k in catalog.api_keys()] == ["k1", "k2", "k0"]  # oldest first
    assert [k.key_id for k in catalog.api_keys("t1")] == ["k1", "k0"]
    with pytest.raises(Conflict):
        catalog.add_api_key(key_id="k1", key_hash="other", tenant="t1", roles=[])
    with pytest.raises(Conflict):
        catalog.add_api_key(key_id="k9", key_hash="h1", tenant="t1", roles=[])
    assert catalog.revoke_api_key("k2", tenant="t1") is False  # another tenant's key
    assert catalog.revoke_api_key("missing") is False
    assert catalog.revoke_api_key("k2", tenant="t2") is True
    assert catalog.revoke_api_key("k2") is True  # already revoked: still that key
    revoked = catalog.find_api_key("h2")
    assert revoked is not None and revoked.revoked


def test_history_and_aliases(catalog: Catalog) -> None:
    entries = [HistoryEntry("m1", AT, "created", "k1", {"kind": "fact"}),
               HistoryEntry("m2", AT, "created", "k1"),
               HistoryEntry("m1", AT + timedelta(hours=1), "superseded", "k1", {"by": "m3", "é": "\u0000"})]
    catalog.append_history(A, entries)
    catalog.append_history(A, [])
    catalog.append_history(B, [HistoryEntry("m1", AT, "created", "k2")])
    assert catalog.history(A, "m1") == [entries[0], entries[2]]
    assert catalog.history(A, "m1")[0].at.tzinfo is not None
    assert catalog.history(B, "m1")[0].actor == "k2"
    assert catalog.history(A, "unknown") == []

    catalog.add_aliases(A, {"w1": "m1", "w2": "m2"})
    catalog.add_aliases(A, {"w2": "m1"})  # replaced
    catalog.add_aliases(A, {})
    assert catalog.resolve_aliases(A, ["w1", "w2", "w3"]) == {"w1": "m1", "w2": "m1"}
    assert catalog.resolve_aliases(B, ["w1"]) == {}
    assert catalog.resolve_aliases(A, []) == {}


def test_subject_registry_sorts_bytewise(catalog: Catalog) -> None:
    subjects = ["b", "B", "a-c", "ab", "a_b", "é"]
    for s in subjects:
        assert catalog.register_subject(Scope("t1", s), hash_key="~t1-hash-key", sealed_id=b"\x00sealed" + s.encode())
    assert catalog.register_subject(Scope("t1", "b"), hash_key="other", sealed_id=b"x") is False
    catalog.register_subject(Scope("t-0", "x"), hash_key="~k", sealed_id=b"")
    listed = catalog.registered_subjects("t1")
    assert [r.scope.subject for r in listed] == sorted(subjects, key=lambda s: s.encode())
    assert listed[0].hash_key == "~t1-hash-key"
    assert listed[0].sealed_id == b"\x00sealed" + listed[0].scope.subject.encode()
    assert catalog.is_registered(Scope("t1", "ab")) and not catalog.is_registered(Scope("t2", "ab"))
    assert catalog.registered_tenants() == ["t-0", "t1"]


def test_hash_key_entries_and_tenants(catalog: Catalog) -> None:
    assert catalog.hash_key_entry("t1") is None
    catalog.set_hash_key_entry("t1", "~t1-hash-key")
    catalog.set_hash_key_entry("t1", "~t1-hash-key.2")
    catalog.set_hash_key_entry("t_only_key", "~x")
    catalog.register_subject(Scope("t-subject", "s"), hash_key="~k", sealed_id=b"s")
    assert catalog.hash_key_entry("t1") == "~t1-hash-key.2"
    assert catalog.tenants() == ["t-subject", "t1", "t_only_key"]


def test_subject_retention(catalog: Catalog) -> None:
    assert catalog.subject_retention(A) == SubjectRetention()
    paris = timezone(timedelta(hours=2))
    catalog.set_legal_hold(A, held=True, at=AT.astimezone(paris), reference="case 42")
    catalog.set_relationship_end(A, AT + timedelta(days=3))
    r = catalog.subject_retention(A)
    assert r == SubjectRetention(legal_hold=True, hold_since=AT, hold_reference="case 42",
                                 relationship_end=AT + timedelta(days=3))
    assert r.hold_since is not None and r.hold_since.utcoffset() == timedelta(0)
    catalog.set_legal_hold(A, held=False, at=AT, reference="ignored")
    assert catalog.subject_retention(A) == SubjectRetention(relationship_end=AT + timedelta(days=3))
    catalog.set_relationship_end(A, None)
    assert catalog.subject_retention(A) == SubjectRetention()
    catalog.set_relationship_end(B, AT)
    assert catalog.subject_retention(B).relationship_end == AT and not catalog.subject_retention(B).legal_hold


def test_pseudonym_map_compare_and_set(catalog: Catalog) -> None:
    assert catalog.pseudonym_map(A) is None
    assert catalog.put_pseudonym_map(A, b"v1", version=1) is False  # nothing at version 1 yet
    assert catalog.put_pseudonym_map(A, b"v1", version=0) is True
    assert catalog.put_pseudonym_map(A, b"other", version=0) is False  # someone created it first
    assert catalog.pseudonym_map(A) == (b"v1", 1)
    assert catalog.put_pseudonym_map(A, b"v2", version=1) is True
    assert catalog.put_pseudonym_map(A, b"stale", version=1) is False
    assert catalog.pseudonym_map(A) == (b"v2", 2)
    assert catalog.pseudonym_map(B) is None


def _fill(catalog: Catalog, scope: Scope) -> None:
    catalog.register_subject(scope, hash_key="~k", sealed_id=b"id")
    catalog.append_history(scope, [HistoryEntry("m1", AT, "created", "k1"), HistoryEntry("m1", AT, "accessed", "k1")])
    catalog.add_aliases(scope, {"w1": "m1"})
    catalog.put_pseudonym_map(scope, b"map", version=0)
    catalog.set_legal_hold(scope, held=True, at=AT)


def test_erase_subject_takes_every_row_of_the_subject_only(catalog: Catalog) -> None:
    _fill(catalog, A)
    _fill(catalog, B)
    assert catalog.erase_subject(A) == 6
    assert catalog.erase_subject(A) == 0
    assert not catalog.is_registered(A) and catalog.history(A, "m1") == [] and catalog.pseudonym_map(A) is None
    assert catalog.resolve_aliases(A, ["w1"]) == {} and catalog.subject_retention(A) == SubjectRetention()
    assert catalog.is_registered(B) and len(catalog.history(B, "m1")) == 2 and catalog.pseudonym_map(B) is not None


def test_move_subject(catalog: Catalog) -> None:
    _fill(catalog, A)
    new = Scope(A.tenant, "c" * 64)
    catalog.move_subject(A, new, hash_key="~k.2", sealed_id=b"resealed", sealed_map=b"map for c")
    assert not catalog.is_registered(A) and catalog.history(A, "m1") == []
    [moved] = catalog.registered_subjects(A.tenant)
    assert moved.scope == new and moved.hash_key == "~k.2" and moved.sealed_id == b"resealed"
    assert len(catalog.history(new, "m1")) == 2 and catalog.resolve_aliases(new, ["w1"]) == {"w1": "m1"}
    assert catalog.pseudonym_map(new) == (b"map for c", 1) and catalog.subject_retention(new).legal_hold
    with pytest.raises(ValueError):
        catalog.move_subject(new, Scope("another-tenant", "d"), hash_key="~k", sealed_id=b"")
    catalog.move_subject(new, A, hash_key="~k.3", sealed_id=b"back")  # no map given: the map is kept as is
    assert catalog.pseudonym_map(A) == (b"map for c", 1)


def test_concurrent_compare_and_set_loses_no_update(open_catalog: OpenCatalog) -> None:
    """Several processes (catalog instances) x threads read-modify-write one map: every success is
    one version, so nothing written was overwritten unseen."""
    catalogs = [open_catalog() for _ in range(3)]
    successes: list[int] = []
    lock = threading.Lock()

    def writer(c: Catalog, n: int) -> None:
        done = 0
        while done < 10:
            current = c.pseudonym_map(A)
            version = 0 if current is None else current[1]
            if c.put_pseudonym_map(A, f"writer {n} #{done}".encode(), version=version):
                done += 1
        with lock:
            successes.append(done)

    threads = [threading.Thread(target=writer, args=(catalogs[n % 3], n)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    final = catalogs[0].pseudonym_map(A)
    assert final is not None and final[1] == sum(successes) == 60


def test_check(catalog: Catalog) -> None:
    catalog.check()


def test_corrections_are_the_subjects_rows(catalog: Catalog) -> None:
    """People's corrections (sealed blobs, issue 47): listed per tenant oldest first, counted per subject,
    replaced by id, erased and moved with the subject's other rows."""
    catalog.add_correction(A, correction_id="c2", at=AT, sealed=b"sealed 2")
    catalog.add_correction(A, correction_id="c1", at=AT, sealed=b"sealed 1")
    catalog.add_correction(B, correction_id="c0", at=AT - timedelta(days=1), sealed=b"sealed 0")
    catalog.add_correction(A, correction_id="c2", at=AT, sealed=b"sealed 2 again")  # a restore retried
    assert [(c.scope, c.id, c.at, c.sealed) for c in catalog.corrections(A.tenant)] == [
        (B, "c0", AT - timedelta(days=1), b"sealed 0"), (A, "c1", AT, b"sealed 1"), (A, "c2", AT, b"sealed 2 again")]
    assert catalog.corrections("another-tenant") == []
    assert (catalog.subject_corrections(A), catalog.subject_corrections(B)) == (2, 1)
    new = Scope(A.tenant, "c" * 64)
    catalog.move_subject(A, new, hash_key="~k.2", sealed_id=b"resealed")
    assert (catalog.subject_corrections(A), catalog.subject_corrections(new)) == (0, 2)
    assert catalog.erase_subject(new) == 3  # the registry row and both corrections
    assert [c.id for c in catalog.corrections(A.tenant)] == ["c0"]
