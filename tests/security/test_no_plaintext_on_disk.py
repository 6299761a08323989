"""A record's text never reaches a file in clear: vector store (segments and WAL), catalog, key store."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from carnet.adapters.vectors.qdrant_edge import EdgeVectorIndex
from carnet.bootstrap.wiring import build
from carnet.crypto.sealed_index import SealedIndex
from carnet.domain.records import Kind, Memory, Scope
from carnet.ports import Embedder, IndexedMemory, SparseVector
from carnet.services.memories import reads as memories
from carnet.services.memories import recall
from carnet.services.memories.remember import NewMemory, remember
from carnet.settings.root import Settings

WORDS = (b"Quarteron", "Zéphyrin".encode(), b"Lilas")
TEXT = "Le membre Zéphyrin Quarteron habite rue des Lilas, il rappelle pour son sinistre."


def _files_with_words(*roots: Path) -> list[str]:
    return [str(p) for root in roots for p in root.rglob("*")
            if p.is_file() and any(w in p.read_bytes() for w in WORDS)]


def test_sealed_text_is_nowhere_on_disk_and_reads_back(tmp_path: Path, embedder: Embedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    c = build(settings, embedder=embedder)
    assert isinstance(c.deps.index, SealedIndex)
    out = remember(c.deps, tenant="t", subject_id="S", actor="a",
                   items=[NewMemory(text=TEXT), NewMemory(text="Visite de l'expert prévue.", kind=Kind.EPISODE)])
    c.close()  # the engine flushes its segments and WAL
    assert _files_with_words(settings.data_dir, settings.resolved_key_dir) == []

    c = build(settings, embedder=embedder)
    try:
        got = memories.get_memory(c.deps, tenant="t", subject_id="S", memory_id=out[0].memory.id)
        assert got.text == TEXT
        hits = recall.search(c.deps, tenant="t", subject_id="S", query=recall.Query("Quarteron sinistre", k=1))
        assert hits[0].memory.text == TEXT
    finally:
        c.close()


def test_the_scan_sees_plaintext_written_without_the_seal(tmp_path: Path) -> None:
    """Control: the same text written to the bare store stays readable in its files, so the scan above
    can fail."""
    index = EdgeVectorIndex(tmp_path / "vectors", 4)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    m = Memory(id="6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11", scope=Scope("t", "s"), kind=Kind.FACT, text=TEXT,
               pseudo_text=TEXT, recorded_at=at, valid_from=at, updated_at=at)
    index.upsert(m.scope, [IndexedMemory(m, np.ones(4, dtype=np.float32) / 2, SparseVector([1], [1.0]))])
    index.close()
    assert _files_with_words(tmp_path)


CORPUS = {
    "ADH-2231-XQ": ["L'adhérente travaille de nuit comme infirmière et ne répond jamais avant quatorze heures.",
                    "Elle conteste le remboursement du dossier SIN-48213-K, une consultation d'orthodontie."],
    "CPT-90412-ZR": ["La cliente souhaite financer une voiture électrique avec un apport personnel.",
                     "Elle est en congé maternité et voudrait décaler la première échéance."],
}


def test_corpus_sweep_no_text_or_subject_id_in_clear_and_every_field_is_a_bound_envelope(
    tmp_path: Path, embedder: Embedder
) -> None:
    import base64

    from carnet.crypto.envelope import Aad, header_key_id, open_text
    from carnet.crypto.errors import EnvelopeError
    from carnet.crypto.sealed_index import PREFIX
    from carnet.ports import RecordFilter
    from carnet.services.scope import scope_for

    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    c = build(settings, embedder=embedder)
    for subject, facts in CORPUS.items():
        remember(c.deps, tenant="t", subject_id=subject, actor="a", items=[NewMemory(text=f) for f in facts])
    scopes = {s: scope_for(c.deps, "t", s) for s in CORPUS}
    c.close()

    words = [w.encode() for facts in CORPUS.values() for f in facts for w in f.split() if len(w) > 8]
    words += [s.encode() for s in CORPUS]
    for root in (settings.data_dir, settings.resolved_key_dir):
        for path in root.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert not [w for w in words if w in data], path

    c = build(settings, embedder=embedder)
    try:
        index = c.deps.index
        assert isinstance(index, SealedIndex)
        for subject, scope in scopes.items():
            raw, _ = index._inner.scroll(scope, where=RecordFilter(statuses=None), limit=100)
            assert len(raw) == len(CORPUS[subject])
            # the claim reference is stored as a blind-index token only, and found by it
            expected = [0, 1] if subject == "ADH-2231-XQ" else [0, 0]
            assert sorted(len(m.blind_index) for m in raw) == expected
            if subject == "ADH-2231-XQ":
                found = memories.lookup(c.deps, tenant="t", subject_id=subject, identifier="sin 48213 k")
                assert [m.text for m in found] == [CORPUS[subject][1]]
            for m in raw:
                for name in ("text", "pseudo_text"):
                    assert getattr(m, name).startswith(PREFIX)
                    blob = base64.b64decode(getattr(m, name).removeprefix(PREFIX))
                    key = c.deps.keys.read_key(scope.tenant, scope.subject, header_key_id(blob))  # type: ignore[attr-defined]
                    own = Aad(scope.tenant, scope.subject, m.id, name)
                    assert open_text(key, aad=own, blob=blob) in CORPUS[subject]
                    other_field = "pseudo_text" if name == "text" else "text"
                    for wrong in (Aad(scope.tenant, scope.subject, m.id, other_field),
                                  Aad("other", scope.subject, m.id, name),
                                  Aad(scope.tenant, "0" * 32, m.id, name),
                                  Aad(scope.tenant, scope.subject, "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11", name)):
                        with pytest.raises(EnvelopeError):
                            open_text(key, aad=wrong, blob=blob)
    finally:
        c.close()


# -- caller metadata (issue 13, defect 4) -------------------------------------------------------------

MARKERS = {
    "tag": "QZTAGMARK0611223344", "category": "QZCATMARK", "session": "QZSESSMARK0622",
    "key": "QZKEYMARK0633", "batch_key": "QZBATCHKEYMARK", "msg_session": "QZMSGSESSMARK", "msg_key": "QZMSGKEYMARK",
    "hold": "QZHOLDMARK-2026",
}


def _files_with_markers(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            hits = [m for m in MARKERS.values() if m.encode() in data or m.encode("utf-16-le") in data]
            if hits:
                found[str(p.relative_to(root))] = hits
    return found


@pytest.mark.slow
def test_caller_metadata_is_nowhere_in_clear_before_and_after_erasure(tmp_path: Path, embedder: Embedder) -> None:
    """Tags, category, session ids, idempotency keys (remember and messages) and the legal-hold reference
    never reach a file in clear (shard, WAL, payload indexes, catalog, intakes, audit, key store), they
    read back through the API, and erasure leaves nothing of them behind."""
    import httpx

    from carnet.entrypoints.http.app import create_app
    from carnet.entrypoints.http.server import running
    from carnet.services.apikeys import create_key

    settings = Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys")
    c = build(settings, embedder=embedder)
    agent, _ = create_key(c.deps.catalog, c.pepper, tenant="t", roles=["agent", "dpo"])
    base_path = "/api/v1/subjects/ADH-5512"
    try:
        with running(create_app(c)) as base, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {agent}"}, timeout=30) as http:
            one = http.post(f"{base_path}/memories", headers={"Idempotency-Key": MARKERS["key"]}, json={
                "text": "Le membre préfère être rappelé le matin.", "category": MARKERS["category"],
                "tags": [MARKERS["tag"], "rappel"], "session_id": MARKERS["session"]})
            assert one.status_code == 201, one.text
            batch = http.post(f"{base_path}/memories", headers={"Idempotency-Key": MARKERS["batch_key"]}, json={
                "memories": [{"text": "Le membre a un chien.", "tags": [MARKERS["tag"]]},
                             {"text": "Le membre part en vacances en août.", "category": MARKERS["category"]}]})
            assert batch.status_code == 201, batch.text
            got = http.get(f"{base_path}/memories/{one.json()['memory']['id']}").json()
            assert got["category"] == MARKERS["category"] and MARKERS["tag"] in got["tags"]
            assert got["session_id"] == MARKERS["session"]
            assert [s["ref"] for s in got["sources"]] == [MARKERS["key"]]
            listed = http.get(f"{base_path}/memories", params={"category": MARKERS["category"]}).json()["items"]
            assert len(listed) == 2
            sent = http.post(f"{base_path}/messages", headers={"Idempotency-Key": MARKERS["msg_key"]}, json={
                "session_id": MARKERS["msg_session"],
                "messages": [{"role": "user", "content": "Je voudrais changer mon adresse."}]})
            assert sent.status_code == 202, sent.text
            again = http.post(f"{base_path}/messages", headers={"Idempotency-Key": MARKERS["msg_key"]}, json={
                "session_id": MARKERS["msg_session"],
                "messages": [{"role": "user", "content": "Je voudrais changer mon adresse."}]})
            assert again.json()["intake_id"] == sent.json()["intake_id"]
            status = http.get(f"/api/v1/intakes/{sent.json()['intake_id']}").json()
            assert status["session_id"] == MARKERS["msg_session"]
            held = http.put(f"{base_path}/legal-hold", json={"reference": MARKERS["hold"]})
            assert held.status_code == 200, held.text
            assert http.get(f"{base_path}/retention").json()["hold_reference"] == MARKERS["hold"]
    finally:
        c.close()  # the hold stands: its reference is on disk now
    assert _files_with_markers(tmp_path) == {}

    c = build(settings, embedder=embedder)
    try:
        with running(create_app(c)) as base, httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {agent}"}, timeout=30) as http:
            assert http.get(f"{base_path}/retention").json()["hold_reference"] == MARKERS["hold"]
            assert http.delete(f"{base_path}/legal-hold").status_code == 200
            assert http.delete(base_path).json()["complete"] is True
    finally:
        c.close()
    assert _files_with_markers(tmp_path) == {}
