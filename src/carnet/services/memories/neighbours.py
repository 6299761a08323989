"""The records reconcile compares a new note with (``remember``): the subject's live records of the
note's kind nearest to it, those naming its identifiers, and for a file named by its kind, those naming
that file's reference.

Stored or pending in the same write: a batch's earlier items are neighbours of its later ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

import numpy as np

from carnet.domain.reconcile.topics import file_kinds, names_file_of
from carnet.domain.records import Memory, Scope
from carnet.ports import IndexedMemory, RecordFilter, Vector
from carnet.services.needs import RememberNeeds

RECONCILE_CANDIDATES = 8
LINKED_TOKENS = 2  # identifiers of a note whose records are always candidates (a file reference, a phone)
LINKED_CANDIDATES = 4  # records per identifier


def nearest(deps: RememberNeeds, scope: Scope, record: Memory, vec: Vector, now: datetime, *,
            pending: Mapping[str, IndexedMemory], changed: Mapping[str, Memory]) -> list[tuple[Memory, float]]:
    """The subject's live records of the same kind nearest to ``vec``, stored or pending in this batch,
    and those naming one of the note's identifiers (a file reference, a phone: its blind-index tokens),
    however far their wording: "dossier … clos" must meet "dossier … en attente d'expertise"."""
    where = RecordFilter(kinds=(record.kind,), not_expired_at=now)
    hits = deps.index.hybrid_search(scope, dense=vec, sparse=None, limit=RECONCILE_CANDIDATES, where=where).dense
    for token in record.blind_index[:LINKED_TOKENS]:
        hits += deps.index.hybrid_search(scope, dense=vec, sparse=None, limit=LINKED_CANDIDATES,
                                         where=replace(where, blind_token=token)).dense
    found: dict[str, tuple[Memory, float]] = {}
    # reconcile reads both texts; a neighbour that does not open is no candidate (it is left as it is)
    unique = list({c.memory.id: c for c in hits}.values())
    revealed = {m.id: m for m in deps.index.reveal(scope, [c.memory for c in unique], pseudo_text=True)}
    kinds = file_kinds(record.text)
    if kinds:  # "le dossier grêle est clos": the notes naming the grêle file's reference meet it too
        seen = {c.memory.id for c in unique}
        tokens = {t for m in revealed.values() if names_file_of(m.text, kinds) for t in m.blind_index[:LINKED_TOKENS]}
        more = [c for token in sorted(tokens) for c in deps.index.hybrid_search(
            scope, dense=vec, sparse=None, limit=LINKED_CANDIDATES, where=replace(where, blind_token=token)).dense
            if c.memory.id not in seen]
        more = list({c.memory.id: c for c in more}.values())
        revealed |= {m.id: m for m in deps.index.reveal(scope, [c.memory for c in more], pseudo_text=True)}
        unique += more
    for c in unique:
        if c.memory.id not in revealed:
            continue
        current = changed.get(c.memory.id, revealed[c.memory.id])
        if current.is_live(now):
            found[current.id] = (current, c.score)
    for item in pending.values():
        m = changed.get(item.memory.id, item.memory)
        if m.kind is record.kind and m.is_live(now):
            found[m.id] = (m, float(np.dot(item.dense, vec)))
    ranked = sorted(found.values(), key=lambda mc: mc[1], reverse=True)
    return ranked[: RECONCILE_CANDIDATES + LINKED_TOKENS * LINKED_CANDIDATES]
