"""The aggregate audit of refused requests, and the client address it is keyed by (no server)."""

from __future__ import annotations

import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from carnet.adapters.sqlite.audit import SqliteAuditLog
from carnet.entrypoints.http.client_address import ClientAddress
from carnet.services.audit import AuditTrail
from carnet.services.refusals import OTHER, RefusalTally

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class _Clock:
    def __init__(self) -> None:
        self.at = T0

    def now(self) -> datetime:
        return self.at


def _tally(tmp_path: Path, *, max_sources: int = 1000) -> tuple[RefusalTally, AuditTrail, _Clock]:
    clock = _Clock()
    audit = AuditTrail(SqliteAuditLog(tmp_path / "audit.sqlite3"), clock)
    return RefusalTally(audit, clock, pepper=b"p" * 32, max_sources=max_sources), audit, clock


events = st.lists(st.tuples(st.sampled_from(["203.0.113.7", "198.51.100.1", "2001:db8::/64"]),
                            st.integers(min_value=0, max_value=200), st.booleans()), max_size=60)


@settings(max_examples=30, deadline=None)
@given(events)
def test_one_entry_per_source_and_window_carrying_the_count(seq: list[tuple[str, int, bool]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        tally, audit, clock = _tally(Path(d))
        elapsed = 0
        for address, step, limited in seq:
            elapsed += step
            clock.at = T0 + timedelta(seconds=elapsed)
            tally.note(address, rate_limited=limited)
            tally.tick()
        tally.close()
        audit.flush()
        details = [e.event.detail for e in audit.log.entries("_system")]
        elapsed, expected = 0, Counter[tuple[int, str]]()
        for address, step, _ in seq:
            elapsed += step
            expected[(int((T0 + timedelta(seconds=elapsed)).timestamp()) // 60, tally.source_of(address))] += 1
        got = {(int(datetime.fromisoformat(str(d["window_start"])).timestamp()) // 60, str(d["source"])): d["count"]
               for d in details}
        assert got == dict(expected)
        assert sum(int(str(d["rate_limited"])) for d in details) == sum(limited for *_, limited in seq)
        assert not any(address in str(details) for address, *_ in seq)
        audit.log.close()


def test_a_window_is_written_when_it_closes_and_sources_are_bounded(tmp_path: Path) -> None:
    tally, audit, clock = _tally(tmp_path, max_sources=3)
    for i in range(10):
        tally.note(f"203.0.113.{i}", rate_limited=False)
    tally.tick()
    audit.flush()
    assert list(audit.log.entries("_system")) == []  # the window is still open
    clock.at = T0 + timedelta(seconds=61)
    tally.tick()
    audit.flush()
    details = [e.event.detail for e in audit.log.entries("_system")]
    assert len(details) == 4 and {d["source"] for d in details} >= {OTHER}
    assert sum(int(str(d["count"])) for d in details) == 10
    assert audit.verify("_system").ok
    audit.log.close()


def _scope(peer: str, forwarded: str | None = None) -> dict[str, object]:
    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded is not None else []
    return {"type": "http", "client": (peer, 5000), "headers": headers}


def test_x_forwarded_for_only_from_a_trusted_proxy() -> None:
    off = ClientAddress()
    assert off.source(_scope("198.51.100.2", "203.0.113.9")) == "198.51.100.2"
    proxy = ClientAddress(["10.0.0.0/8"])
    assert proxy.source(_scope("198.51.100.2", "203.0.113.9")) == "198.51.100.2"  # not a trusted peer
    assert proxy.source(_scope("10.1.2.3", "203.0.113.9")) == "203.0.113.9"
    # Read from the right: a client cannot choose its address by prepending one.
    assert proxy.source(_scope("10.1.2.3", "192.0.2.66, 203.0.113.9, 10.9.9.9")) == "203.0.113.9"
    assert proxy.source(_scope("10.1.2.3", "garbage, 203.0.113.9")) == "203.0.113.9"
    assert proxy.source(_scope("10.1.2.3")) == "10.1.2.3"


def test_ipv6_clients_share_their_64_and_unknown_peers_one_key() -> None:
    a = ClientAddress()
    assert a.source(_scope("2001:db8:1:2::1")) == a.source(_scope("2001:db8:1:2:ffff::9")) == "2001:db8:1:2::/64"
    assert a.source(_scope("::ffff:203.0.113.5")) == "203.0.113.5"
    assert a.source({"type": "http", "client": None, "headers": []}) == "unknown"
