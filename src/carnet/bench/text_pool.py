"""The bulk builder of ``carnet bench latency --text-pool N``: memories drawn from a pool of N distinct
synthetic facts, each embedded once (and run once through the PII model), then reused across subjects.

Every memory is written by ``services.remember.insert_new``: the records ``remember`` creates for a
note with no neighbour (same id, pseudonymisation with the subject's own map, embedding text, record,
keyword vector, sealing under the subject's data key, upsert, ``created`` history row), in batches of
the service's largest request, without reconcile. Within a subject the texts are drawn without
replacement, so no two of its records are the same text; reconcile would still merge or supersede some
of them (they share slots: "a un contrat auto…"), so a store built this way holds exactly the asked
number of live records, where one built through ``remember`` holds fewer (at 100k: 64 % created).

What is reused, and why it changes nothing else: a pool item is a (text, date) pair, so its embedding
text (date, pseudonymised text) is the same for every subject whose map gives it the same placeholders
(the synthetic facts name no person: the pseudonymised text is the text). The two memo wrappers below
key on the exact text they are given, so a text that differs is embedded or detected afresh.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from carnet.bench.report import progress
from carnet.bench.synthetic import fact
from carnet.domain.pii.spans import Span
from carnet.ports import Embedder, EmbedderFront, PiiDetector, Vector

BUILDER = "text-pool"
PROGRESS_EVERY_S = 10.0
WARM_BATCH = 256


class PoolTooSmall(ValueError):
    def __init__(self, pool: int, per_subject: int) -> None:
        super().__init__(f"--text-pool {pool} is smaller than the {per_subject} memories of a subject: "
                         "texts are drawn without replacement within a subject")


class MemoEmbedder(EmbedderFront):
    """Passages embedded once per distinct text (the bench's texts are synthetic: no personal data is
    kept); ``misses`` counts the texts actually embedded."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self._memo: dict[str, Vector] = {}
        self.misses = 0

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        new = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if new:
            for t, vec in zip(new, self.inner.embed_passages(new), strict=True):
                self._memo[t] = vec
            self.misses += len(new)
        return np.stack([self._memo[t] for t in texts])

    def embed_query(self, text: str) -> Vector:
        return self.inner.embed_query(text)


class MemoDetector:
    """The write path's PII detector (the NER model), run once per distinct text; the spans are
    pseudonymised with each subject's own map by the service, as always."""

    def __init__(self, inner: PiiDetector) -> None:
        self._inner = inner
        self._memo: dict[str, list[Span]] = {}
        self.misses = 0

    def detect(self, text: str) -> list[Span]:
        return self.detect_batch([text])[0]

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]:
        new = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if new:
            for t, spans in zip(new, self._inner.detect_batch(new), strict=True):
                self._memo[t] = spans
            self.misses += len(new)
        return [list(self._memo[t]) for t in texts]

    def is_word(self, word: str) -> bool:
        return self._inner.is_word(word)


def pool_items(size: int) -> list[Any]:
    """``size`` distinct synthetic facts, each with its own date (as ``served.ingest`` draws them)."""
    from carnet.services.memories.remember import NewMemory

    rng = random.Random(7)
    base = datetime(2024, 1, 1, tzinfo=UTC)
    texts: dict[str, None] = {}
    while len(texts) < size:
        texts[fact(rng)] = None
    return [NewMemory(text=t, occurred_at=base + timedelta(hours=rng.randint(0, 24 * 700))) for t in texts]


def _shares(memories: int, subjects: int) -> tuple[int, int]:
    """Memories per subject, and the last subject's (the rest), as ``served.ingest`` spreads them."""
    per_subject = max(1, memories // subjects)
    return per_subject, memories - per_subject * (subjects - 1)


def check_pool(memories: int, subjects: int, pool: int) -> None:
    """``PoolTooSmall`` unless every subject's memories can be distinct texts of the pool."""
    most = max(_shares(memories, subjects))
    if most > pool:
        raise PoolTooSmall(pool, most)


def _warm(deps: Any, items: Sequence[Any], detector: MemoDetector, embedder: MemoEmbedder) -> None:
    """The pool through the PII model, then the texts it finds nothing in through the embedder, in
    batches of ``WARM_BATCH`` (a subject's batch is small: embedding it alone is several times slower).
    Such a text is its own pseudonymised text for any subject whose map names no one in it; for a
    subject where it is not, the service asks for another text, and the memo embeds that one then."""
    from carnet.services.memories.remember import passage_text

    texts = [item.text for item in items]
    started = time.perf_counter()
    plain = []
    for at in range(0, len(texts), WARM_BATCH):
        spans = detector.detect_batch(texts[at:at + WARM_BATCH])
        plain += [item for item, found in zip(items[at:at + WARM_BATCH], spans, strict=True) if not found]
    now = deps.clock.now()
    passages = [passage_text(deps, item, item.text, None, now) for item in plain]
    for at in range(0, len(passages), WARM_BATCH):
        embedder.embed_passages(passages[at:at + WARM_BATCH])
        progress(f"pool: {min(at + WARM_BATCH, len(passages))}/{len(passages)} texts embedded "
                 f"({time.perf_counter() - started:.0f} s)")


def ingest_pooled(container: Any, memories: int, subjects: int, pool: int, *, tenant: str,
                  subject_id: Callable[[int], str]) -> dict[str, Any]:
    """Build the load with ``insert_new``; the same figures as ``served.ingest`` (the rate leaves out the
    pool's warm-up, ``pool_s``) plus how it was built."""
    from carnet.services.memories.query_cache import CachedEmbedder
    from carnet.services.memories.remember import insert_new

    check_pool(memories, subjects, pool)
    per_subject, last = _shares(memories, subjects)
    deps = container.deps
    embedder = MemoEmbedder(deps.embedder.inner)
    detector = MemoDetector(deps.pii.detector)
    deps = replace(deps, embedder=CachedEmbedder(embedder, size=0), pii=replace(deps.pii, detector=detector))
    items = pool_items(pool)
    warm_started = time.perf_counter()
    _warm(deps, items, detector, embedder)
    pool_s = time.perf_counter() - warm_started
    rng = random.Random(7)
    chunk = deps.limits.max_batch
    started = last_report = time.perf_counter()
    done = 0
    for s in range(subjects):
        drawn = [items[i] for i in rng.sample(range(pool), per_subject if s < subjects - 1 else last)]
        for at in range(0, len(drawn), chunk):
            done += insert_new(deps, tenant=tenant, subject_id=subject_id(s), items=drawn[at:at + chunk],
                               actor="bench")
        now = time.perf_counter()
        if now - last_report >= PROGRESS_EVERY_S or s == subjects - 1:
            last_report = now
            rate = done / (now - started)
            progress(f"built {done}/{memories} memories ({rate:.0f}/s, {subjects - s - 1} subjects left, "
                     f"ETA {(memories - done) / rate:.0f} s)")
    elapsed = time.perf_counter() - started
    return {"ingest_per_s": round(memories / elapsed, 1), "ingest_s": round(elapsed, 1),
            "ingest_outcomes": {"created": done}, "ingest_builder": BUILDER, "text_pool": pool,
            "pool_embedded": embedder.misses, "pool_detected": detector.misses, "pool_s": round(pool_s, 1)}
