"""The embedded shard's records kept decoded, by point id, in the one process that owns the shard.

Why: qdrant-edge converts each hit's payload from Rust with the interpreter lock held, then
``payload.from_payload`` builds the record in Python. On the 100k store of ``carnet bench latency``
a hybrid query for 60 + 60 candidates took 3.8 ms that way against 0.75 ms asking the engine for ids
and scores only and taking the records from here (docs/benchmarks.md, "Records kept decoded").

What stays true:

- The engine still decides which records match: every query filters on the stored payload (scope,
  status, expiry…) and returns ids; this only saves decoding a payload already decoded. Ids are looked
  up here after a scoped engine query returned them, or for ``get``, whose only filter is the scope:
  a record is taken from here only when its own scope is the one asked, else it is read from the
  engine (scoped) as before.
- A write (upsert, payload, move, delete) drops the ids it touched *after* the engine applied it,
  even when it failed, and moves the generation on. Access statistics once written are set on the
  kept records too (``touched``: the same two values the engine stored); if that write failed they
  are dropped like the others. A read keeps what it fetched only if no write ended meanwhile (same
  generation before and after), so a record replaced during a read never comes back from here.
- Records are as stored: texts sealed, subject and identifiers as keyed hashes. Nothing in clear.
  A record damaged on disk behind this process after it was kept is served as it was decoded until it
  is written again or the process restarts.
- A record a search fetches (``keep_at_once``: the adapter's ``hybrid_search`` and ``newest``, what
  ``assemble`` and ``search`` read) is kept at once: the next turn of the call asks about the same
  member. A record any other read fetches (``get``: a lookup by id, a write's check of its own ids) is kept the
  second time: the first time only its id is noted (at most ``capacity`` ids), so a subject read once
  that way costs what it did before the cache and does not push out the records of members whose
  assistants ask again and again during a call.
- At most ``capacity`` records (``CARNET_RECORD_CACHE_SIZE``, 100,000 by default: ~1.5 KB each, ~150 MB);
  the least recently fetched go first. 0: nothing kept, every query's records read once, scoped.
- A record is kept as a tuple of plain values (strings, numbers, dates and tuples of them), which the
  garbage collector stops tracking: kept as ``Memory`` objects, 100k records made each of the server's
  full collections 50–130 ms longer, stalling every request under load. Rebuilding the ``Memory``
  costs ~4 µs, decoding its payload ~15 µs.

The Qdrant server has no such cache: other replicas of Carnet write to the same collection."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from itertools import islice
from typing import Any

from carnet.domain.records import Kind, Memory, Scope, Source, Status

Kept = tuple[Any, ...]  # a record's fields in ``Memory``'s order, as plain values (``flat``)

_FIELDS = tuple(f.name for f in fields(Memory))
_SOURCE_FIELDS = tuple(f.name for f in fields(Source))
_SCOPE, _KIND, _STATUS, _SOURCES = (_FIELDS.index(n) for n in ("scope", "kind", "status", "sources"))
_COUNT, _LAST = (_FIELDS.index(n) for n in ("access_count", "last_accessed_at"))
_KINDS = {k.value: k for k in Kind}
_STATUSES = {s.value: s for s in Status}


def flat(m: Memory) -> Kept:
    """``m`` as plain values only, so that the tuple is not tracked by the garbage collector."""
    values = [getattr(m, f) for f in _FIELDS]
    values[_SCOPE] = (m.scope.tenant, m.scope.subject)
    values[_KIND] = m.kind.value
    values[_STATUS] = m.status.value
    values[_SOURCES] = tuple(tuple(getattr(s, f) for f in _SOURCE_FIELDS) for s in m.sources)
    return tuple(values)


def rebuilt(kept: Kept, scope: Scope) -> Memory:
    """The ``Memory`` of ``flat``'s tuple, whose scope is ``scope`` (checked by the caller)."""
    values = list(kept)
    values[_SCOPE] = scope
    values[_KIND] = _KINDS[kept[_KIND]]
    values[_STATUS] = _STATUSES[kept[_STATUS]]
    values[_SOURCES] = tuple(Source(*s) for s in kept[_SOURCES])
    return Memory(*values)


class RecordCache:
    def __init__(self, capacity: int) -> None:
        if capacity < 0:
            raise ValueError("capacity must be 0 or more")
        self._capacity = capacity
        self._records: dict[str, Kept] = {}
        self._seen: dict[str, None] = {}  # ids fetched once, not kept yet (oldest first)
        self._generation = 0
        self._lock = threading.Lock()  # writers of ``_records``, ``_seen`` and ``_generation``; lookups go without

    def __len__(self) -> int:
        return len(self._records)

    def records(self, scope: Scope, ids: Iterable[str], fetch: Callable[[list[str]], Sequence[Memory]], *,
                keep_at_once: bool = False) -> dict[str, Memory]:
        """The records of ``ids`` found in ``scope``: from here, or through ``fetch`` (a scoped read of
        the engine, which notes and leaves out what does not decode) for the others. An id neither here
        nor fetched is absent. ``keep_at_once``: what is fetched is kept now, not at its second fetch (a
        search's records: module doc)."""
        generation = self._generation  # before the fetch: a write ending after it makes the fetch stale
        found: dict[str, Memory] = {}
        missing: list[str] = []
        lookup = self._records.get
        owner = (scope.tenant, scope.subject)
        for i in ids:
            kept = lookup(i)
            if kept is not None and kept[_SCOPE] == owner:
                found[i] = rebuilt(kept, scope)
            else:
                missing.append(i)
        if missing:
            fetched = fetch(missing)
            self._keep(generation, fetched, keep_at_once)
            found.update((m.id, m) for m in fetched)
        return found

    def access(self, scope: Scope, ids: Iterable[str]) -> dict[str, tuple[int, datetime | None]]:
        """The access count and last access time of the kept records of ``ids`` in ``scope``: what the
        engine stores for them, since every write of a kept record sets the same values here or drops it
        (module doc). The caller holds the scope's lock, so none is written meanwhile."""
        owner = (scope.tenant, scope.subject)
        out: dict[str, tuple[int, datetime | None]] = {}
        for i in ids:
            kept = self._records.get(i)
            if kept is not None and kept[_SCOPE] == owner:
                out[i] = (kept[_COUNT], kept[_LAST])
        return out

    def _keep(self, generation: int, fetched: Sequence[Memory], at_once: bool) -> None:
        if not self._capacity or not fetched:
            return
        with self._lock:
            if generation != self._generation:
                return
            records, seen = self._records, self._seen
            for m in fetched:
                if seen.pop(m.id, 0) is None or at_once or m.id in records:  # fetched before, or a search's: kept
                    records.pop(m.id, None)  # to the end: the least recently fetched go first
                    records[m.id] = flat(m)
                else:
                    seen[m.id] = None
            for held in (records, seen):
                excess = len(held) - self._capacity
                if excess > 0:
                    for key in list(islice(held, excess)):
                        del held[key]

    def changed(self, ids: Iterable[str]) -> None:
        """After a write of these ids (applied or failed): drop them, and no read begun before keeps
        what it fetched."""
        with self._lock:
            self._generation += 1
            for i in ids:
                self._records.pop(i, None)

    def touched(self, ids: Iterable[str], values: Mapping[str, Any]) -> None:
        """After a write that set these fields (``Memory`` field name to its new value) on these ids and
        nothing else, applied: the kept records take the same values instead of being dropped (the
        access statistics of the records a search showed are written every 30 s by default, and those
        are the records asked for again). No read begun before keeps what it fetched."""
        at = [(_FIELDS.index(name), value) for name, value in values.items()]
        with self._lock:
            self._generation += 1
            records = self._records
            for i in ids:
                kept = records.get(i)
                if kept is not None:
                    changed = list(kept)
                    for index, value in at:
                        changed[index] = value
                    records[i] = tuple(changed)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._records.clear()
            self._seen.clear()
