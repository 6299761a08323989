"""Concurrent query embeddings run as one batch, and a lone query waits for nobody.

Many advisors at once means many ``embed_query`` calls at once, each from its own request thread.
The model embeds a batch of queries for little more than one (on this project's 2-core machine: 160
queries/s one at a time, about 280/s in batches of 8; docs/benchmarks.md), but called one by one the
calls only queue on the model's lock. ``QueryBatcher`` wraps an embedder so that:

- a query that finds the model idle is embedded at once, alone: no window, no added latency;
- queries that arrive while the model is busy wait together, and when it frees the first of them
  embeds all of them (up to ``max_batch``) in one call, and hands over to the next waiting one;
- a failure reaches exactly the queries of the batch that failed, as the exception the model raised.

The wait is therefore bounded by the batches ahead of a query, never by a timer. Passages (the write
path, already batched) go straight to the wrapped embedder. An embedder without ``embed_queries``
is called once per query of the batch, in order: correct, only without the gain.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from carnet.ports import Embedder, EmbedderFront, Vector

DEFAULT_MAX_BATCH = 16


@dataclass(eq=False)
class _Job:
    text: str
    ready: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # set by the previous leader: this job runs the next batch
    vector: Vector | None = None
    error: BaseException | None = None


class QueryBatcher(EmbedderFront):
    """An ``Embedder`` whose concurrent ``embed_query`` calls share model calls (see the module doc)."""

    def __init__(self, inner: Embedder, *, max_batch: int = DEFAULT_MAX_BATCH) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        super().__init__(inner)
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._waiting: list[_Job] = []
        self._busy = False
        batch = getattr(inner, "embed_queries", None)
        self._embed_many: Callable[[Sequence[str]], Vector] = batch if callable(batch) else self._one_by_one

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._embed_many(texts)

    def embed_query(self, text: str) -> Vector:
        job = _Job(text)
        with self._lock:
            if self._busy:
                self._waiting.append(job)
            else:
                self._busy = True
                job.lead = True
        if not job.lead:
            job.ready.wait()
        if job.lead:  # idle model, or handed over: run one batch (this job's and those waiting with it)
            self._run(job)
        if job.error is not None:
            raise job.error
        assert job.vector is not None
        return job.vector

    def _run(self, leader: _Job) -> None:
        with self._lock:
            batch = [leader, *self._waiting[: self.max_batch - 1]]
            del self._waiting[: self.max_batch - 1]
        try:
            vectors = self._embed_many([j.text for j in batch])
            for j, v in zip(batch, vectors, strict=True):
                j.vector = np.asarray(v, dtype=np.float32)
        except BaseException as exc:  # every query of the batch gets the model's error, none hangs
            for j in batch:
                j.error = exc
        with self._lock:
            if self._waiting:  # the next batch's first query leads it, in its own thread
                nxt = self._waiting.pop(0)
                nxt.lead = True
                nxt.ready.set()
            else:
                self._busy = False
        for j in batch[1:]:
            j.ready.set()

    def _one_by_one(self, texts: Sequence[str]) -> Vector:
        return np.stack([self.inner.embed_query(t) for t in texts])
