"""The sealing decorator over a real shard, dev KMS and file key store."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from carnet.adapters.keystores.files import FileKeyStore
from carnet.adapters.kms.dev import DevKms
from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.crypto.errors import EnvelopeError, KeyDestroyed
from carnet.crypto.keyring import Keyring
from carnet.crypto.sealed_index import PREFIX, SealedIndex
from carnet.domain.records import Kind, Memory, Scope
from carnet.domain.unreadable import Unreadable
from carnet.ports import IndexedMemory, RecordFilter, SparseVector

AT = datetime(2026, 1, 1, tzinfo=UTC)
S = Scope("t", "subject-hash")


def _m(mid: str, text: str) -> Memory:
    return Memory(id=mid, scope=S, kind=Kind.FACT, text=text, pseudo_text=text, recorded_at=AT, valid_from=AT,
                  updated_at=AT)


def _item(m: Memory) -> IndexedMemory:
    return IndexedMemory(m, np.ones(4, dtype=np.float32) / 2, SparseVector([7], [1.0]))


@pytest.fixture
def parts(tmp_path: Path) -> tuple[SealedIndex, EdgeVectorIndex, Keyring]:
    inner = EdgeVectorIndex(tmp_path / "data" / "vectors", 4)
    kms = DevKms(tmp_path / "keys" / "kms", data_dir=tmp_path / "data")
    keyring = Keyring(kms, FileKeyStore(tmp_path / "keys" / "subjects", data_dir=tmp_path / "data"))
    return SealedIndex(inner, keyring, kms), inner, keyring


A = "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11"
B = "7a2d1e5f-4a1c-4b54-8b2e-3e0a5c9b7c22"


def test_fields_are_sealed_in_the_store_and_open_through_the_decorator(parts: tuple[SealedIndex, EdgeVectorIndex,
                                                                                  Keyring]) -> None:
    sealed, inner, _ = parts
    sealed.upsert(S, [_item(_m(A, "habite à Lyon 7e"))])
    raw = inner.get(S, [A])[0]
    assert raw.text.startswith(PREFIX) and "Lyon" not in raw.text and raw.pseudo_text != raw.text
    assert sealed.get(S, [A])[0].text == "habite à Lyon 7e"
    hits = sealed.hybrid_search(S, dense=np.ones(4, dtype=np.float32) / 2, sparse=SparseVector([7], [1.0]),
                                limit=5, where=RecordFilter())
    # candidates stay sealed (ranking reads no text); reveal opens text, and pseudo_text when asked
    assert [c.memory.id for c in hits.dense] == [A]
    assert hits.dense[0].memory.text.startswith(PREFIX) and hits.dense[0].memory.pseudo_text.startswith(PREFIX)
    shown = sealed.reveal(S, [c.memory for c in hits.dense])
    assert shown[0].text == "habite à Lyon 7e" and shown[0].pseudo_text.startswith(PREFIX)
    both = sealed.reveal(S, [c.memory for c in hits.dense], pseudo_text=True)
    assert [(m.text, m.pseudo_text) for m in both] == [("habite à Lyon 7e", "habite à Lyon 7e")]
    assert sealed.reveal(S, both) == both  # a record already readable comes back as it is
    assert not hasattr(inner, "reveal")  # the bare store has nothing to reveal: records come as stored


def test_a_ciphertext_moved_to_another_record_fails(parts: tuple[SealedIndex, EdgeVectorIndex, Keyring]) -> None:
    sealed, inner, _ = parts
    sealed.upsert(S, [_item(_m(A, "budget 600 euros")), _item(_m(B, "budget 750 euros"))])
    a = inner.get(S, [A])[0]
    b = inner.get(S, [B])[0]
    inner.replace_payload(S, [replace(b, text=a.text)])
    skipped: list[Unreadable] = []
    assert sealed.get(S, [B], skipped=skipped) == [] and skipped == [Unreadable(B, "envelope_invalid")]
    assert [m.text for m in sealed.get(S, [A, B])] == ["budget 600 euros"]  # the other one still opens


def test_a_plaintext_record_is_refused_not_passed_through(parts: tuple[SealedIndex, EdgeVectorIndex,
                                                                       Keyring]) -> None:
    sealed, inner, _ = parts
    inner.upsert(S, [_item(_m(A, "en clair"))])
    skipped: list[Unreadable] = []
    assert sealed.get(S, [A], skipped=skipped) == [] and skipped == [Unreadable(A, "envelope_invalid")]


def test_after_shredding_the_subject_key_its_records_cannot_be_opened(parts: tuple[SealedIndex, EdgeVectorIndex,
                                                                                   Keyring]) -> None:
    sealed, _, keyring = parts
    sealed.upsert(S, [_item(_m(A, "habite à Lyon 7e"))])
    assert keyring.shred(S.tenant, S.subject)
    skipped: list[Unreadable] = []
    assert sealed.scroll(S, where=RecordFilter(), limit=10, skipped=skipped)[0] == []
    assert skipped == [Unreadable(A, KeyDestroyed.code)]



def test_writing_back_an_unrevealed_candidate_is_refused(parts: tuple[SealedIndex, EdgeVectorIndex,
                                                                        Keyring]) -> None:
    sealed, _, _ = parts
    sealed.upsert(S, [_item(_m(A, "habite à Lyon 7e"))])
    hits = sealed.hybrid_search(S, dense=np.ones(4, dtype=np.float32) / 2, sparse=None, limit=5,
                                where=RecordFilter())
    with pytest.raises(EnvelopeError):
        sealed.replace_payload(S, [hits.dense[0].memory])


def test_caller_metadata_is_sealed_and_the_category_filter_matches_its_keyed_hash(
        parts: tuple[SealedIndex, EdgeVectorIndex, Keyring]) -> None:
    from carnet.domain.records import Source

    sealed, inner, _ = parts
    meta = replace(_m(A, "rappeler le matin"), category="Jean Dupont", tags=("06 12 34 56 78",), session_id="call-9",
                   sources=(Source("api", "key-0612", "call-9", "req", "fp"),))
    sealed.upsert(S, [_item(meta), _item(_m(B, "a un chien"))])
    raw = inner.get(S, [A])[0]
    assert raw.meta is not None and raw.meta.startswith(PREFIX)
    assert (raw.tags, raw.session_id, raw.sources) == ((), None, ())
    assert raw.category is not None and raw.category.startswith("h1:") and "Jean" not in raw.category
    assert sealed.get(S, [A]) == [meta]
    assert sealed.reveal(S, [raw]) == [replace(meta, pseudo_text=raw.pseudo_text)]
    listed, _ = sealed.scroll(S, where=RecordFilter(category="Jean Dupont"), limit=10)
    assert [m.id for m in listed] == [A]
    assert sealed.count(S, where=RecordFilter(category="Jean")) == 0
    assert sealed.count(Scope("t", "never-written"), where=RecordFilter(category="Jean Dupont")) == 0
    # the envelope is bound to its record: moved to another, it does not open
    b = inner.get(S, [B])[0]
    inner.replace_payload(S, [replace(b, meta=raw.meta)])
    skipped: list[Unreadable] = []
    assert sealed.get(S, [B], skipped=skipped) == [] and skipped == [Unreadable(B, "envelope_invalid")]


def test_a_record_stored_before_metadata_was_sealed_reads_back_as_stored(
        parts: tuple[SealedIndex, EdgeVectorIndex, Keyring]) -> None:
    sealed, inner, _ = parts
    sealed.upsert(S, [_item(_m(A, "habite à Lyon"))])
    old = replace(inner.get(S, [A])[0], category="adresse", tags=("t",), session_id="s", meta=None)
    inner.replace_payload(S, [old])
    got = sealed.get(S, [A])[0]
    assert (got.text, got.category, got.tags, got.session_id) == ("habite à Lyon", "adresse", ("t",), "s")
