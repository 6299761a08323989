"""PII never reaches an embedding, a stored field in clear, a file, or a log line; identifiers in a
query are found through the blind index. The real stack: Presidio with spaCy's French model, the
qdrant-edge shard, SQLite."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from carnet.bootstrap.container import Container
from carnet.bootstrap.wiring import build
from carnet.crypto.sealed_index import SealedIndex
from carnet.ports import Embedder, EmbedderFront, RecordFilter, Vector
from carnet.services.memories import reads as memories
from carnet.services.memories import recall
from carnet.services.memories.assemble import assemble, budgets
from carnet.services.memories.remember import NewMemory, remember
from carnet.services.scope import scope_for
from carnet.settings.root import Settings

PII = {
    "ADH-7001": [
        ("Jean-Baptiste Lefèvre a donné son nouvel IBAN FR76 3000 6000 0112 3456 7890 189 pour les remboursements.",
         ["Jean-Baptiste", "Lefèvre", "FR76 3000 6000 0112 3456 7890 189", "FR7630006000011234567890189"]),
        ("M. Lefèvre souhaite être rappelé au 06 12 34 56 78 après 18h.", ["Lefèvre", "06 12 34 56 78"]),
        ("Sa fille Emma Lefèvre est hospitalisée ; écrire à emma.lefevre@orange.fr.",
         ["Emma", "emma.lefevre@orange.fr"]),
    ],
    "ADH-7002": [
        ("La cliente habite au 12 bis rue des Lilas, 69007 Lyon, née le 3 mai 1980.",
         ["rue des Lilas", "3 mai 1980"]),
        ("Numéro de sécurité sociale 2 80 05 69 123 456 23 ; carte 4970 1012 3456 7893 refusée.",
         ["2 80 05 69 123 456", "4970 1012 3456 7893"]),
        ("sophie girard signale le sinistre du véhicule AB-123-CD.", ["sophie girard", "AB-123-CD"]),
    ],
}
VALUES = sorted({v for facts in PII.values() for _, vs in facts for v in vs})


class SpyEmbedder(EmbedderFront):
    """The real embedder, recording every text it is given."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.texts: list[str] = []

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        self.texts += texts
        return self.inner.embed_passages(texts)

    def embed_query(self, text: str) -> Vector:
        self.texts.append(text)
        return self.inner.embed_query(text)


@pytest.fixture
def spied(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[Container, SpyEmbedder]]:
    spy = SpyEmbedder(embedder)
    c = build(Settings(data_dir=tmp_path / "data", key_dir=tmp_path / "keys"), embedder=spy)
    try:
        yield c, spy
    finally:
        c.close()


def _leaks(blob: str) -> list[str]:
    folded = blob.casefold()
    return [v for v in VALUES if v.casefold() in folded]


@pytest.mark.slow
def test_no_pii_reaches_an_embedding_a_field_a_file_or_a_log(spied: tuple[Container, SpyEmbedder],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    c, spy = spied
    for subject, facts in PII.items():
        remember(c.deps, tenant="t", subject_id=subject, actor="a", items=[NewMemory(text=t) for t, _ in facts])
    recall.search(c.deps, tenant="t", subject_id="ADH-7001", query=recall.Query("Que sait-on de Jean-Baptiste ?"))
    assemble(c.deps, tenant="t", subject_id="ADH-7002", query="Où habite sophie girard ?",
             budget=budgets(c.deps, overrides={}))

    assert spy.texts and not [t for t in spy.texts if _leaks(t)], "PII reached the embedder"
    index = c.deps.index
    assert isinstance(index, SealedIndex)
    for subject in PII:
        scope = scope_for(c.deps, "t", subject)
        opened, _ = index.scroll(scope, where=RecordFilter(statuses=None), limit=50)
        assert opened and not [m.pseudo_text for m in opened if _leaks(m.pseudo_text)]  # what is embedded/hashed
        assert all("<" in m.pseudo_text for m in opened)
        raw, _ = index.inner.scroll(scope, where=RecordFilter(statuses=None), limit=50)  # as stored
        assert not [m for m in raw if _leaks(repr(m))]
    hits = recall.search(c.deps, tenant="t", subject_id="ADH-7001",
                         query=recall.Query("Quel est l'IBAN de Jean-Baptiste Lefèvre ?", k=3))
    assert any("FR76 3000" in h.memory.text for h in hits)  # the caller still gets the original text back
    settings = c.settings
    c.close()
    for root in (settings.data_dir, settings.resolved_key_dir):
        for path in root.rglob("*"):
            if path.is_file():
                assert not _leaks(path.read_bytes().decode("latin-1")), path
    captured = capsys.readouterr()
    assert not _leaks(captured.out + captured.err)


def test_identifiers_in_a_query_are_found_through_the_blind_index(spied: tuple[Container, SpyEmbedder]) -> None:
    c, _ = spied
    remember(c.deps, tenant="t", subject_id="ADH-8001", actor="a", items=[
        NewMemory(text="Le membre a un contrat habitation et un contrat auto."),
        NewMemory(text="Prélèvement mensuel sur le compte FR76 3000 6000 0112 3456 7890 189."),
        NewMemory(text="Le membre a demandé une attestation d'assurance scolaire."),
        NewMemory(text="Numéro de portable : 06 12 34 56 78."),
        NewMemory(text="Le membre préfère être appelé le matin."),
    ])
    # written differently from the record: compact, another country prefix
    by_iban = recall.search(c.deps, tenant="t", subject_id="ADH-8001",
                            query=recall.Query("fr7630006000011234567890189", k=2))
    assert by_iban[0].memory.text.startswith("Prélèvement mensuel")
    by_phone = recall.search(c.deps, tenant="t", subject_id="ADH-8001",
                             query=recall.Query("Qui appelle du +33 6 12 34 56 78 ?", k=2))
    assert by_phone[0].memory.text == "Numéro de portable : 06 12 34 56 78."
    found = memories.lookup(c.deps, tenant="t", subject_id="ADH-8001", identifier="0033 6 12 34 56 78")
    assert [m.text for m in found] == ["Numéro de portable : 06 12 34 56 78."]
    # another subject's identical IBAN is not found from this one (tokens are scoped by the subject)
    remember(c.deps, tenant="t", subject_id="ADH-8002", actor="a",
             items=[NewMemory(text="Compte FR76 3000 6000 0112 3456 7890 189 (joint).")])
    other = memories.lookup(c.deps, tenant="t", subject_id="ADH-8001", identifier="FR7630006000011234567890189")
    assert [m.text for m in other] == ["Prélèvement mensuel sur le compte FR76 3000 6000 0112 3456 7890 189."]
    assert np.isfinite(by_iban[0].score)


FULLWIDTH_IBAN = "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in "FR76 3000 6000 0112 3456 7890 189")
EVASIVE = [  # issue 46, finding 2: spellings a red team got into the stored pseudonymised text
    ("Nouveau RIB FR76-3000-6000-0112-3456-7890-189 pour les remboursements.", "FR76-3000-6000-0112-3456-7890-189"),
    (f"IBAN {FULLWIDTH_IBAN} confirmé.", FULLWIDTH_IBAN),
    ("Rappeler au 06\u200b12\u200b34\u200b56\u200b78 demain.", "06\u200b12\u200b34\u200b56\u200b78"),
    ("Rappeler au zéro six douze trente-quatre cinquante-six soixante-dix-huit.",
     "zéro six douze trente-quatre cinquante-six soixante-dix-huit"),
    ("Sécu 1.84.12.76.451.089.46 transmise.", "1.84.12.76.451.089.46"),
    ("Carte 2221 0000 0000 0009 refusée.", "2221 0000 0000 0009"),
    ("Écrire à jean.dupont[at]gmail[dot]com pour la suite.", "jean.dupont[at]gmail[dot]com"),
    ("Sinistre sur le véhicule 1234 AB 75.", "1234 AB 75"),
    ("Née le douze mars mille neuf cent quatre-vingt-cinq.", "douze mars mille neuf cent quatre-vingt-cinq"),
    ("Appel de nour el houda bouazizi ce matin pour son devis.", "nour el houda bouazizi"),
    ("Anahit Petrossian said the payment failed twice.", "Anahit Petrossian"),
]


@pytest.mark.slow
def test_no_evasive_spelling_reaches_an_embedding_or_the_stored_pseudo_text(
        spied: tuple[Container, SpyEmbedder]) -> None:
    from carnet.bench.pii_survival import survives

    c, spy = spied
    remember(c.deps, tenant="t", subject_id="ADH-9001", actor="a", items=[NewMemory(text=t) for t, _ in EVASIVE])
    assert spy.texts and not [(v, t) for _, v in EVASIVE for t in spy.texts if survives(v, t)]
    index = c.deps.index
    assert isinstance(index, SealedIndex)
    opened, _ = index.scroll(scope_for(c.deps, "t", "ADH-9001"), where=RecordFilter(statuses=None), limit=50)
    assert len(opened) == len(EVASIVE)
    assert not [(v, m.pseudo_text) for _, v in EVASIVE for m in opened if survives(v, m.pseudo_text)]
    # one value, one blind-index token, however it was written
    found = memories.lookup(c.deps, tenant="t", subject_id="ADH-9001", identifier="FR7630006000011234567890189")
    assert sorted(m.text.split()[0] for m in found) == ["IBAN", "Nouveau"]
