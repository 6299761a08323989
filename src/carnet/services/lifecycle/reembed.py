"""Re-embedding: copy every record into a new vector store, with vectors from another model.

Changing the embedding model is a migration (DESIGN.md): vectors of two models cannot share a store.
``reembed`` reads each registered subject's records from the live store (texts opened: the new
vectors are computed from ``pseudo_text``, as on the write path, never from ``text``), embeds them
with the new model using the write path's recipe (``embedding_text``: date when dates are embedded,
the pseudonymised text, placeholders read as words), recomputes the keyword vector with the same
keyed encoder (identical to the stored one) and writes record and vectors into ``target``, which
seals the texts again under the subject's data key. Then it checks that the subject has as many
records in the new store as in the old.

The live store is only read: an interrupted run leaves it untouched and in use. Switching stores is
the caller's business (``cli_maintain``: the pointer file of the embedded store).

What cannot be reproduced: a dialogue turn embedded with its neighbouring turn as context gets its
vector from its own text only (the context is never stored, it is not provenance).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from carnet.domain.embedding_text import embedding_text
from carnet.domain.reconcile.topics import keyword_text
from carnet.domain.records import Memory, Scope
from carnet.errors import Conflict
from carnet.ports import Embedder, IndexedMemory, RecordFilter, RecordStore
from carnet.services.needs import ReembedNeeds

_PAGE = 256
Progress = Callable[[str, int, int], None]  # tenant, subjects done, subjects of the tenant


@dataclass(slots=True)
class ReembedReport:
    model_from: str
    model_to: str
    dim_from: int
    dim_to: int
    tenants: int = 0
    subjects: int = 0
    records: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {"model_from": self.model_from, "model_to": self.model_to, "dim_from": self.dim_from,
                "dim_to": self.dim_to, "tenants": self.tenants, "subjects": self.subjects,
                "records": self.records, "seconds": round(self.seconds, 3)}


def record_embedding_text(m: Memory, *, embed_dates: bool, locale: str) -> str:
    """What ``remember`` embedded for ``m`` (its date is ``valid_from``), context aside."""
    return embedding_text(m.pseudo_text, at=m.valid_from if embed_dates else None, locale=locale)


def reembed(deps: ReembedNeeds, *, target: RecordStore, embedder: Embedder, progress: Progress | None = None,
            batch: int = 64) -> ReembedReport:
    """Copy every registered subject's records from ``deps.index`` into ``target`` with vectors from
    ``embedder``. Raises ``Conflict`` if a subject's record count differs afterwards."""
    started = time.perf_counter()
    report = ReembedReport(deps.embedder.model_id, embedder.model_id, deps.embedder.dim, embedder.dim)
    for tenant in deps.catalog.registered_tenants():
        subjects = deps.catalog.registered_subjects(tenant)
        report.tenants += 1
        for n, registered in enumerate(subjects, 1):
            report.records += _copy_subject(deps, registered.scope, target, embedder, batch)
            report.subjects += 1
            if progress is not None:
                progress(tenant, n, len(subjects))
    report.seconds = time.perf_counter() - started
    return report


def _copy_subject(deps: ReembedNeeds, scope: Scope, target: RecordStore, embedder: Embedder, batch: int) -> int:
    every = RecordFilter(statuses=None)
    copied = 0
    offset: str | None = None
    while True:
        page, offset = deps.index.scroll(scope, where=every, limit=_PAGE, offset=offset)
        for start in range(0, len(page), batch):
            chunk = page[start:start + batch]
            texts = [record_embedding_text(m, embed_dates=deps.embed_dates, locale=deps.locale) for m in chunk]
            vectors = embedder.embed_passages(texts)
            target.upsert(scope, [IndexedMemory(m, vec, deps.sparse.encode_document(scope, keyword_text(m.pseudo_text)))
                                  for m, vec in zip(chunk, vectors, strict=True)])
        copied += len(page)
        if offset is None:
            break
    if target.count(scope, where=every) != deps.index.count(scope, where=every):
        raise Conflict(f"re-embedding left a subject of tenant {scope.tenant} with a different number of records")
    return copied
