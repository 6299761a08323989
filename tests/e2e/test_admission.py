"""Admission control over real HTTP: one slot, a waiting room of one, requests held in the embedder.

A held assemble takes the only slot; the next request waits; the one after finds the waiting room full.
Each refusal is 503 ``overloaded`` with ``Retry-After``, counted by route template; health and metrics
still answer; a refused write wrote nothing."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.gate import LOOKUP_THREADS
from carnet.entrypoints.http.server import running
from carnet.ports import Embedder
from carnet.services.apikeys import create_key
from carnet.settings.root import Settings
from tests.support.held_embedder import HeldEmbedder

SUBJECT, OTHER = "ADH-4242", "ADH-0007"
# "At once" for a refusal: far below the deadlines and holds it is told apart from (20 s, 30 s), with room
# for a CI machine under the whole suite's load.
_PROMPT_S = 5.0


def _served(tmp_path: Path, embedder: Embedder, *, deadline_ms: int) -> Iterator[tuple[httpx.Client, HeldEmbedder,
                                                                                        Container]]:
    held = HeldEmbedder(embedder)
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys",
                        # No refusal on the expected wait (its own tests: tests/unit/test_admission.py): these
                        # tests fill the waiting room and outwait the deadline, and the one request served
                        # before them (a remember, slower under a loaded suite) must not set the average.
                        api={"max_concurrency": 1, "max_queue": 1, "request_deadline_ms": deadline_ms,
                             "queue_target_ms": 60_000})
    container = build(settings, embedder=held)
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=["agent"])
    try:
        with running(create_app(container)) as base, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as api:
            assert api.post(f"/api/v1/subjects/{SUBJECT}/memories",
                            json={"text": "Le membre a un contrat habitation."}).status_code == 201
            yield api, held, container
            held.release.set()
    finally:
        held.release.set()
        container.close()


@pytest.fixture
def slow_deadline(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[httpx.Client, HeldEmbedder, Container]]:
    yield from _served(tmp_path, embedder, deadline_ms=20_000)


@pytest.fixture
def short_deadline(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[httpx.Client, HeldEmbedder, Container]]:
    yield from _served(tmp_path, embedder, deadline_ms=200)


def _assemble(api: httpx.Client, query: str) -> httpx.Response:
    return api.post("/api/v1/context/assemble", json={"subject_id": SUBJECT, "query": query})


def _gauge(api: httpx.Client, name: str) -> float:
    found = re.search(rf"^{name} ([0-9.]+)$", api.get("/metrics").text, re.MULTILINE)
    assert found, name
    return float(found.group(1))


def _until(check: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not callable(check) or not check():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def _overloaded(r: httpx.Response) -> None:
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == "overloaded"
    assert int(r.headers["Retry-After"]) >= 1


def _hold_the_slot(pool: ThreadPoolExecutor, api: httpx.Client, held: HeldEmbedder) -> Future[httpx.Response]:
    held.hold.set()
    first = pool.submit(_assemble, api, "Quel est le contrat du membre ?")
    assert held.entered.wait(10)
    held.hold.clear()  # only the first request is held
    return first


def test_a_full_waiting_room_refuses_at_once_and_writes_nothing(
        slow_deadline: tuple[httpx.Client, HeldEmbedder, Container]) -> None:
    api, held, container = slow_deadline
    with ThreadPoolExecutor(2) as pool:
        first = _hold_the_slot(pool, api, held)
        second = pool.submit(_assemble, api, "Le membre a-t-il un sinistre en cours ?")
        _until(lambda: _gauge(api, "carnet_http_admission_waiting") == 1)
        assert _gauge(api, "carnet_http_admission_in_flight") == 1

        started = time.monotonic()
        _overloaded(_assemble(api, "Quand rappeler le membre ?"))
        remembered = api.post(f"/api/v1/subjects/{OTHER}/memories", json={"text": "Le membre déménage à Lyon."})
        messages = api.post(f"/api/v1/subjects/{OTHER}/messages",
                            json={"messages": [{"role": "user", "content": "Je déménage à Lyon en mai."}]})
        # At once, not after the 20 s deadline: three requests, with room for a loaded CI machine (one
        # run under the full suite's load took 3.1 s).
        assert time.monotonic() - started < _PROMPT_S
        _overloaded(remembered)
        _overloaded(messages)
        for path in ("/healthz", "/readyz", "/metrics"):  # never gated, never refused
            assert api.get(path).status_code == 200, path

        held.release.set()
        assert first.result(30).status_code == 200 and second.result(30).status_code == 200

    assert api.get(f"/api/v1/subjects/{OTHER}/memories").status_code == 404  # the refused writes wrote nothing
    assert container.deps.intakes.stats().pending == 0
    text = api.get("/metrics").text
    for route in ("/api/v1/context/assemble", "/api/v1/subjects/{subject_id}/memories",
                  "/api/v1/subjects/{subject_id}/messages"):  # counted by route template, never by subject
        assert f'carnet_http_overloaded_total{{reason="queue_full",route="{route}"}} 1.0' in text, route
    assert SUBJECT not in text and OTHER not in text
    assert re.search(r'carnet_http_request_duration_seconds_count\{method="POST",'
                     r'route="/api/v1/context/assemble",status="503"\} 1\.0', text)


def test_a_request_that_cannot_start_within_the_deadline_is_refused(
        short_deadline: tuple[httpx.Client, HeldEmbedder, Container]) -> None:
    api, held, _ = short_deadline
    with ThreadPoolExecutor(1) as pool:
        first = _hold_the_slot(pool, api, held)
        started = time.monotonic()
        refused = _assemble(api, "Quel est le montant de la cotisation ?")
        waited = time.monotonic() - started
        _overloaded(refused)
        assert 0.15 < waited < _PROMPT_S  # after the 200 ms deadline, not when the held request ends
        held.release.set()
        assert first.result(30).status_code == 200
    assert _assemble(api, "Le membre préfère-t-il le courriel ?").status_code == 200  # the slot came back
    assert 'carnet_http_overloaded_total{reason="deadline",route="/api/v1/context/assemble"} 1.0' in api.get(
        "/metrics").text


def test_a_key_lookup_that_cannot_get_a_thread_in_time_is_refused_at_the_door(
        short_deadline: tuple[httpx.Client, HeldEmbedder, Container], monkeypatch: pytest.MonkeyPatch) -> None:
    api, _, container = short_deadline
    catalog = container.deps.catalog
    find, release = catalog.find_api_key, threading.Event()
    entered = threading.Semaphore(0)

    def held_lookup(key_hash: str) -> object:
        entered.release()
        assert release.wait(30), "the test never released the held lookups"
        return find(key_hash)

    monkeypatch.setattr(catalog, "find_api_key", held_lookup)
    create_key(catalog, container.pepper, tenant="other", roles=["agent"])  # a key changed: every key is looked up
    with ThreadPoolExecutor(LOOKUP_THREADS) as pool:
        held = [pool.submit(api.get, f"/api/v1/subjects/{SUBJECT}/memories") for _ in range(LOOKUP_THREADS)]
        for _ in range(LOOKUP_THREADS):  # every lookup thread is taken
            assert entered.acquire(timeout=10)
        started = time.monotonic()
        refused = _assemble(api, "Quel est le dossier en cours ?")
        assert time.monotonic() - started < _PROMPT_S
        release.set()
        for late in held:  # their key checks took longer than the deadline: their work never started
            _overloaded(late.result(30))
    _overloaded(refused)
    text = api.get("/metrics").text
    assert 'carnet_http_overloaded_total{reason="deadline",route="/api/v1/context/assemble"} 1.0' in text
    memories = "/api/v1/subjects/{subject_id}/memories"
    assert f'carnet_http_overloaded_total{{reason="deadline",route="{memories}"}} {LOOKUP_THREADS}.0' in text
