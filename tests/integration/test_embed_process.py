"""The embedder in a child process (``adapters/embedders/process``): real spawned processes, real pipes.

The fast cases use ``HashEmbedder`` (no model to load, the same vectors in every process); one case
runs the real e5 model both ways and compares the vectors."""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carnet.adapters.embedders.process import PASSAGE_SLICE, EmbedderFailed, ProcessEmbedder, _Threads
from carnet.errors import DependencyUnavailable
from carnet.ports import Embedder
from tests.support.shared_index import HashEmbedder


class Raising(HashEmbedder):
    """Raises on a text that asks for it, with a message that must not travel (it quotes the text)."""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if any("boom" in t for t in texts):
            raise ValueError(f"cannot embed {texts[0]!r}")
        return super().embed_passages(texts)


class Hanging(HashEmbedder):
    def embed_query(self, text: str) -> np.ndarray:
        if text == "hang":
            time.sleep(60)
        return super().embed_query(text)


def refusing() -> HashEmbedder:
    raise RuntimeError("no model here")


@pytest.fixture(scope="module")
def child() -> Iterator[ProcessEmbedder]:
    emb = ProcessEmbedder(Raising)
    yield emb
    emb.close()


def test_the_childs_vectors_are_the_models_own(child: ProcessEmbedder) -> None:
    local = HashEmbedder()
    assert (child.model_id, child.dim) == (local.model_id, local.dim)
    assert child.pid is not None and child.pid != os.getpid()
    parent = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, child.pid) == min(19, parent + 10)  # below the request path
    np.testing.assert_array_equal(child.embed_query("Adresse du membre ?"), local.embed_query("Adresse du membre ?"))
    texts = [f"note {i} sur le contrat {i % 7}" for i in range(PASSAGE_SLICE * 2 + 3)]  # three slices
    np.testing.assert_array_equal(child.embed_passages(texts), local.embed_passages(texts))
    np.testing.assert_array_equal(child.embed_queries(["a b", "c"]), np.stack([local.embed_query("a b"),
                                                                               local.embed_query("c")]))
    assert child.embed_passages([]).shape == (0, local.dim)
    assert child.embed_queries([]).shape == (0, local.dim)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(max_size=80), max_size=40))
def test_any_texts_come_back_in_order_and_exact(child: ProcessEmbedder, texts: list[str]) -> None:
    texts = [t for t in texts if "boom" not in t]
    np.testing.assert_array_equal(child.embed_passages(texts), HashEmbedder().embed_passages(texts))


def test_a_models_error_reaches_its_caller_by_type_only_and_the_child_lives_on(child: ProcessEmbedder) -> None:
    pid = child.pid
    with pytest.raises(EmbedderFailed) as info:
        child.embed_passages(["boom, le 06 12 34 56 78"])
    assert info.value.context == {"reason": "ValueError"}
    assert "06 12" not in str(info.value)
    assert child.pid == pid
    assert child.embed_query("encore").shape == (child.dim,)


def test_concurrent_calls_each_get_their_own_vectors(child: ProcessEmbedder) -> None:
    local = HashEmbedder()
    errors: list[str] = []

    def ask(n: int) -> None:
        for i in range(20):
            text = f"question {n} {i}"
            if not np.array_equal(child.embed_query(text), local.embed_query(text)):
                errors.append(text)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    bulk = [f"passage {i}" for i in range(100)]
    np.testing.assert_array_equal(child.embed_passages(bulk), local.embed_passages(bulk))
    for t in threads:
        t.join()
    assert errors == []


def test_a_killed_child_fails_the_call_then_a_new_one_answers() -> None:
    emb = ProcessEmbedder(HashEmbedder)
    try:
        first = emb.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        time.sleep(0.2)
        with pytest.raises(DependencyUnavailable):
            emb.embed_query("after the kill")
        assert emb.pid is None
        np.testing.assert_array_equal(emb.embed_query("again"), HashEmbedder().embed_query("again"))
        assert emb.pid not in (None, first)
    finally:
        emb.close()


def test_a_child_that_does_not_answer_is_stopped_and_replaced() -> None:
    emb = ProcessEmbedder(Hanging, timeout=0.5)
    try:
        stuck = emb.pid
        started = time.monotonic()
        with pytest.raises(DependencyUnavailable):
            emb.embed_query("hang")
        assert time.monotonic() - started < 15
        assert emb.embed_query("fine").shape == (emb.dim,)
        assert emb.pid != stuck
    finally:
        emb.close()


def test_a_model_that_cannot_load_is_a_clear_error() -> None:
    with pytest.raises(DependencyUnavailable, match="RuntimeError"):
        ProcessEmbedder(refusing)


def test_a_refused_priority_change_still_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox may refuse ``setpriority`` (a seccomp filter): the child then runs at the parent's
    priority rather than not at all. The child's loop, run here on a real pipe."""
    import multiprocessing

    from carnet.adapters.embedders import process

    def refused(_: int) -> int:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(process.os, "nice", refused)
    monkeypatch.setattr(process.signal, "signal", lambda *_: None)  # the loop runs on a thread here
    ours, theirs = multiprocessing.Pipe()
    loop = threading.Thread(target=process.serve, args=(theirs, HashEmbedder, 10), daemon=True)
    loop.start()
    assert ours.recv()[0] == "ready"
    ours.send(("queries", ["bonjour"]))
    status, vectors = ours.recv()
    assert status == "ok" and np.allclose(vectors[0], HashEmbedder().embed_query("bonjour"))
    ours.close()
    loop.join(timeout=10)
    assert not loop.is_alive()


def test_close_stops_the_child_and_refuses_later_calls() -> None:
    emb = ProcessEmbedder(HashEmbedder)
    child = emb._child
    assert child is not None and child.process.is_alive()
    emb.close()
    assert not child.process.is_alive()
    with pytest.raises(DependencyUnavailable):
        emb.embed_query("closed")


@pytest.mark.slow
def test_the_e5_model_gives_the_same_vectors_in_its_own_process(embedder: Embedder) -> None:
    from carnet.adapters.embedders.e5_fast import E5FastEmbedder

    local = embedder  # the session's model, in this process (its thread count left as it is)
    # the same engines (questions through ONNX Runtime, as configured by default) and the same threads
    emb = ProcessEmbedder(functools.partial(E5FastEmbedder, query_engine="onnx"), query_threads=None)
    try:
        texts = ["Le membre habite 12 rue des Lilas.", "Sinistre déclaré le 3 mars.", "x" * 3000]
        np.testing.assert_allclose(emb.embed_passages(texts), local.embed_passages(texts), atol=1e-5)
        np.testing.assert_allclose(emb.embed_query("Adresse ?"), local.embed_query("Adresse ?"), atol=1e-5)
        assert emb.model_id == local.model_id
    finally:
        emb.close()


def test_queries_and_passages_get_their_own_thread_counts_in_the_child() -> None:
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        threads = _Threads(1)
        threads.for_queries()
        assert torch.get_num_threads() == 1
        threads.for_passages()
        assert torch.get_num_threads() == 2
        _Threads(None).for_queries()  # no count asked: left alone
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
