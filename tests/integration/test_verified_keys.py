"""Keys verified once are answered again without a lookup until any key changes (``apikeys.KeyCache``),
and a revocation made anywhere (this connection, another connection, another process beside a running
server) is seen by the very next request. Real SQLite files, real processes, real HTTP."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Hashable
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carnet.adapters.sqlite.catalog import SqliteCatalog
from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.errors import Unauthenticated
from carnet.ports import ApiKeyRecord
from carnet.services.apikeys import KeyCache, Principal, authenticate, create_key, hash_key, revoke_key

PEPPER = b"p" * 32

_REVOKE_ELSEWHERE = """
import sys
from pathlib import Path
from carnet.adapters.sqlite.catalog import SqliteCatalog
catalog = SqliteCatalog(Path(sys.argv[1]))
assert catalog.revoke_api_key(sys.argv[2])
catalog.close()
"""


class Counting(SqliteCatalog):
    lookups = 0

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        self.lookups += 1
        return super().find_api_key(key_hash)


@pytest.fixture
def catalog(tmp_path: Path) -> Counting:
    return Counting(tmp_path / "catalog.sqlite3")


def test_a_verified_key_is_answered_without_a_lookup_until_a_key_changes(catalog: Counting) -> None:
    cache = KeyCache()
    key, record = create_key(catalog, PEPPER, tenant="t1", roles=["agent"])
    assert cache.cached(catalog, PEPPER, key) is None  # never verified
    who = authenticate(catalog, PEPPER, key, cache)
    assert (who.key_id, who.tenant, who.roles) == (record.key_id, "t1", ("agent",))
    for _ in range(3):
        assert cache.cached(catalog, PEPPER, key) == who
    assert catalog.lookups == 1
    other, _ = create_key(catalog, PEPPER, tenant="t2", roles=["dpo"])  # any change to the keys
    assert cache.cached(catalog, PEPPER, key) is None
    assert authenticate(catalog, PEPPER, key, cache) == who
    assert authenticate(catalog, PEPPER, other, cache).tenant == "t2"
    assert cache.cached(catalog, PEPPER, key) == who and cache.cached(catalog, PEPPER, other) is not None


def test_a_revocation_on_this_connection_is_seen_by_the_next_check(catalog: Counting) -> None:
    cache = KeyCache()
    key, record = create_key(catalog, PEPPER, tenant="t1", roles=["agent"])
    authenticate(catalog, PEPPER, key, cache)
    revoke_key(catalog, key_id=record.key_id)
    assert cache.cached(catalog, PEPPER, key) is None
    with pytest.raises(Unauthenticated):
        authenticate(catalog, PEPPER, key, cache)


def test_a_revocation_by_another_connection_and_by_another_process_is_seen_at_once(
        catalog: Counting, tmp_path: Path) -> None:
    cache = KeyCache()
    first, first_record = create_key(catalog, PEPPER, tenant="t1", roles=["agent"])
    second, second_record = create_key(catalog, PEPPER, tenant="t1", roles=["agent"])
    authenticate(catalog, PEPPER, first, cache)
    authenticate(catalog, PEPPER, second, cache)
    beside = SqliteCatalog(tmp_path / "catalog.sqlite3")  # another connection: data_version moves
    try:
        assert beside.revoke_api_key(first_record.key_id)
    finally:
        beside.close()
    assert cache.cached(catalog, PEPPER, first) is None
    with pytest.raises(Unauthenticated):
        authenticate(catalog, PEPPER, first, cache)
    assert cache.cached(catalog, PEPPER, second) is None  # everything is looked up again
    authenticate(catalog, PEPPER, second, cache)
    subprocess.run([sys.executable, "-c", _REVOKE_ELSEWHERE, str(tmp_path / "catalog.sqlite3"),
                    second_record.key_id], check=True, timeout=120)
    assert cache.cached(catalog, PEPPER, second) is None
    with pytest.raises(Unauthenticated):
        authenticate(catalog, PEPPER, second, cache)


def test_unknown_malformed_and_unversioned_keys_are_never_kept(catalog: Counting, tmp_path: Path) -> None:
    cache = KeyCache()
    key, _ = create_key(catalog, PEPPER, tenant="t1", roles=["agent"])
    unknown = key[:-4] + ("aaaa" if not key.endswith("aaaa") else "bbbb")
    for _ in range(2):
        with pytest.raises(Unauthenticated):
            authenticate(catalog, PEPPER, unknown, cache)
        assert cache.cached(catalog, PEPPER, unknown) is None
    assert catalog.lookups == 2
    assert cache.cached(catalog, PEPPER, None) is None and cache.cached(catalog, PEPPER, "crn_x") is None

    class Unversioned(Counting):
        def api_keys_version(self) -> None:  # as PostgreSQL: no cheap version
            return None

    shared = Unversioned(tmp_path / "catalog.sqlite3")
    authenticate(shared, PEPPER, key, cache)
    assert cache.cached(shared, PEPPER, key) is None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.none(), st.text(max_size=80),
                 st.from_regex(r"crn_[0-9a-f]{12}_[A-Za-z0-9_-]{20,64}", fullmatch=True)))
def test_any_key_never_verified_is_never_answered_from_memory(catalog: Counting, key: str | None) -> None:
    cache = KeyCache()
    valid, _ = create_key(catalog, PEPPER, tenant="t1", roles=["agent"])
    authenticate(catalog, PEPPER, valid, cache)
    if key != valid:
        assert cache.cached(catalog, PEPPER, key) is None
        with pytest.raises(Unauthenticated):
            authenticate(catalog, PEPPER, key, cache)
        assert cache.cached(catalog, PEPPER, key) is None
    assert cache.cached(catalog, PEPPER, valid) is not None


def test_a_lookup_begun_before_a_newer_version_was_seen_is_not_kept() -> None:
    cache = KeyCache()

    class Versioned:
        version: Hashable = 1

        def api_keys_version(self) -> Hashable:
            return self.version

    fake = Versioned()
    key, other = "crn_0123456789ab_" + "a" * 30, "crn_0123456789ac_" + "b" * 30

    cache.cached(fake, PEPPER, key)  # type: ignore[arg-type]  # sees version 1
    cache.keep(1, hash_key(PEPPER, key), Principal("0123456789ab", "t", ("agent",)))
    fake.version = 2
    cache.cached(fake, PEPPER, key)  # type: ignore[arg-type]  # sees version 2: empty
    cache.keep(2, hash_key(PEPPER, other), Principal("0123456789ac", "t", ("agent",)))
    cache.keep(1, hash_key(PEPPER, key), Principal("0123456789ab", "t", ("agent",)))  # read before version 2
    assert cache.cached(fake, PEPPER, key) is None  # type: ignore[arg-type]
    assert cache.cached(fake, PEPPER, other) is not None  # type: ignore[arg-type]


def test_a_key_revoked_by_another_process_beside_a_running_server_is_refused_at_the_next_request(
        container: Container) -> None:
    key, record = create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=["agent"])
    with running(create_app(container)) as base, httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        for _ in range(3):  # verified once, then answered from the cache
            assert http.get("/api/v1/subjects/X-1/memories").status_code == 404
        assert container.facade.verified(key) is not None
        subprocess.run([sys.executable, "-c", _REVOKE_ELSEWHERE, str(container.settings.data_dir / "catalog.sqlite3"),
                        record.key_id], check=True, timeout=120)
        r = http.get("/api/v1/subjects/X-1/memories")
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
