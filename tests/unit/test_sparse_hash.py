"""HashedSparseEncoder: keyed, deterministic, BM25-shaped, and never a word in clear."""

from __future__ import annotations

import re

import pytest

from carnet.adapters.embedders.sparse_hash import HashedSparseEncoder
from carnet.domain.records import Scope
from carnet.ports import SparseEncoder, SparseVector

BANK = Scope(tenant="banque-a", subject="h1")
INSURER = Scope(tenant="assureur-b", subject="h1")
TEXT = "Le sociétaire habite à Villeurbanne, budget voiture 750 €, voiture hybride"


class Keys:
    def __init__(self, keys: dict[str, bytes]) -> None:
        self.keys = keys
        self.calls: list[str] = []

    def token_key(self, tenant: str) -> bytes:
        self.calls.append(tenant)
        return self.keys[tenant]


def encoder(**kwargs: float) -> tuple[HashedSparseEncoder, Keys]:
    keys = Keys({"banque-a": b"k" * 32, "assureur-b": b"q" * 32})
    return HashedSparseEncoder(keys, **kwargs), keys


def test_implements_the_port() -> None:
    enc: SparseEncoder = encoder()[0]
    assert isinstance(enc.encode_query(BANK, "x"), SparseVector)


def test_deterministic_across_instances() -> None:
    assert encoder()[0].encode_document(BANK, TEXT) == encoder()[0].encode_document(BANK, TEXT)
    assert encoder()[0].encode_query(BANK, TEXT) == encoder()[0].encode_query(BANK, TEXT)


def test_tenant_keys_give_different_indices() -> None:
    enc, _ = encoder()
    bank, insurer = enc.encode_document(BANK, TEXT), enc.encode_document(INSURER, TEXT)
    assert len(bank.indices) == len(insurer.indices)
    assert not set(bank.indices) & set(insurer.indices)


def test_no_word_in_clear_anywhere_in_the_output() -> None:
    enc, _ = encoder()
    for vector in (enc.encode_document(BANK, TEXT), enc.encode_query(BANK, TEXT)):
        assert all(type(i) is int for i in vector.indices)
        assert all(type(v) is float for v in vector.values)
        assert vector.__slots__ == ("indices", "values")  # nothing else travels with it
        assert re.fullmatch(r"[\d\s.,\[\]e+-]*", f"{vector.indices}{vector.values}")


def test_indices_are_31_bit_sorted_and_unique() -> None:
    vector = encoder()[0].encode_document(BANK, TEXT)
    assert vector.indices == sorted(set(vector.indices))
    assert all(0 <= i < 2**31 for i in vector.indices)


def test_query_is_one_per_distinct_token_and_meets_the_document() -> None:
    enc, _ = encoder()
    query = enc.encode_query(BANK, "voitures hybrides à Villeurbanne")
    assert query.values == [1.0] * len(query.indices) and len(query.indices) == 3
    assert set(query.indices) <= set(enc.encode_document(BANK, TEXT).indices)  # stems meet


def test_document_values_are_bm25_term_frequency_saturation() -> None:
    enc, _ = encoder(avg_doc_len=4.0, k1=1.2, b=0.75)
    vector = enc.encode_document(BANK, "voiture voiture hybride")  # 3 terms, tf 2 and 1
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 4.0)
    expected = sorted([2 * 2.2 / (2 + norm), 1 * 2.2 / (1 + norm)])
    assert sorted(vector.values) == pytest.approx(expected)


def test_repeats_saturate() -> None:
    enc, _ = encoder()
    once = enc.encode_document(BANK, "voiture").values[0]
    many = enc.encode_document(BANK, " ".join(["voiture"] * 50)).values[0]
    assert once < many < 1.2 + 1.0


def test_empty_text_gives_an_empty_vector() -> None:
    enc, _ = encoder()
    assert enc.encode_document(BANK, "le la les") == SparseVector([], [])
    assert enc.encode_query(BANK, "") == SparseVector([], [])


def test_tenant_key_is_cached_and_forgotten_on_demand() -> None:
    enc, keys = encoder()
    enc.encode_document(BANK, TEXT)
    enc.encode_query(BANK, TEXT)
    assert keys.calls == ["banque-a"]
    enc.forget("banque-a")
    enc.encode_query(BANK, TEXT)
    assert keys.calls == ["banque-a", "banque-a"]


def test_long_keys_are_accepted_and_empty_keys_refused() -> None:
    long_key = HashedSparseEncoder(Keys({"banque-a": b"x" * 100}))
    assert long_key.encode_query(BANK, TEXT).indices
    with pytest.raises(ValueError, match="empty"):
        HashedSparseEncoder(Keys({"banque-a": b""})).encode_query(BANK, TEXT)


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        HashedSparseEncoder(Keys({}), avg_doc_len=0)
