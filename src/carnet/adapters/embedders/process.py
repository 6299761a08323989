"""The model in a process of its own: an ``Embedder`` whose forwards run in a child process.

Why (docs/benchmarks.md, "The embedder in its own process"): in ``carnet serve`` the model shares one
interpreter with the request threads, so each of its hundreds of small operators waits for the GIL
behind them, and a forward on a thread other than the one that loaded the model pays GNU OpenMP's
per-thread team. Under load the server saturated at about one core of two. In a child process the
model has an interpreter of its own and always runs on the thread that loaded it; the request threads
only wait on a pipe, which releases the GIL.

- The child is started with ``spawn`` (never ``fork``: the parent has threads and an open shard). It
  builds the embedder with ``factory`` (a picklable callable, e.g. the embedder's class with its
  arguments) and answers one request at a time on a pipe.
- Queries go before passages: passages are sent ``PASSAGE_SLICE`` texts at a time, and a query that
  arrives meanwhile is sent before the next slice.
- A child that dies, or does not answer within ``timeout`` seconds, fails the calls in flight with
  ``DependencyUnavailable`` (503) and is started again by the next call. An error the model raises
  comes back as ``EmbedderFailed`` with the error's type only (never its message: it could quote a
  text).
- The child runs at a lower priority (``niceness``, 10 by default; where a sandbox refuses it, at the
  parent's): the model has the cores the request path leaves, so past capacity the server still
  answers or refuses within its deadline. Questions run
  on ``query_threads`` intra-op threads (one by default), passages on what ``factory`` set.
- ``close`` stops the child; a child whose parent died exits when its end of the pipe closes.

The texts cross the pipe in memory only; they are what the embedder would have been given in the
same process (pseudonymised before embedding).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from carnet.adapters.embedders.base import LoadedModel, ModelTurns
from carnet.errors import CarnetError, DependencyUnavailable
from carnet.ports import Embedder, Vector

PASSAGE_SLICE = 16  # passages per round trip: the longest a waiting query waits behind a bulk ingest
DEFAULT_TIMEOUT = 120.0  # seconds for one round trip (a slice of long passages on a slow CPU stays well within)
_START_TIMEOUT = 600.0  # loading the model in a new interpreter (imports, weights, warm-up)
# The child runs below the request path: under overload a busy model never starves the event loop and
# admission (without it, some answers past capacity took 10–31 s instead of about 1; docs/benchmarks.md).
DEFAULT_NICENESS = 10


class EmbedderFailed(CarnetError):
    """The model raised in the embedder's process (the error's type is in ``reason``): a 500
    ``internal_error``, as the same error raised in this process would be."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the embedder failed: {reason}", reason=reason)


def serve(conn: Connection, factory: Callable[[], Embedder], niceness: int = 0,
          query_threads: int | None = None) -> None:
    """The child's loop: lower its priority by ``niceness``, build the embedder, say who it is, then
    answer ``(kind, texts)`` until the parent's end closes. Module level, so ``spawn`` can find it.
    ``query_threads``: PyTorch's intra-op threads for queries (passages keep what ``factory`` set)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    if niceness:  # a sandbox that refuses setpriority: the model runs at the server's priority
        with contextlib.suppress(OSError):
            os.nice(niceness)
    try:
        embedder = factory()
    except BaseException as exc:  # the parent reports it; the child has nothing more to do
        conn.send(("failed", type(exc).__name__))
        return
    batch = getattr(embedder, "embed_queries", None)
    threads = _Threads(query_threads)
    conn.send(("ready", embedder.model_id, embedder.dim))
    while True:
        try:
            kind, texts = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if kind == "queries":
                threads.for_queries()
                out = batch(texts) if callable(batch) else np.stack([embedder.embed_query(t) for t in texts])
            else:
                threads.for_passages()
                out = embedder.embed_passages(texts)
            conn.send(("ok", np.ascontiguousarray(out, dtype=np.float32)))
        except Exception as exc:
            conn.send(("error", type(exc).__name__))


class _Threads:
    """PyTorch's intra-op threads in the child, one count for queries and another for passages: a small
    query batch on two threads waits at every operator's barrier for a core the API process holds,
    while a bulk of passages gains from both (docs/benchmarks.md). Nothing without PyTorch loaded."""

    def __init__(self, query_threads: int | None) -> None:
        torch = sys.modules.get("torch")
        self._set = getattr(torch, "set_num_threads", None) if query_threads else None
        self._passages = int(torch.get_num_threads()) if self._set is not None and torch is not None else 0
        self._queries = query_threads or 0
        self._now = self._passages

    def for_queries(self) -> None:
        self._use(self._queries)

    def for_passages(self) -> None:
        self._use(self._passages)

    def _use(self, n: int) -> None:
        if self._set is not None and n != self._now:
            self._set(n)
            self._now = n


class _Child:
    """One started child and our end of its pipe."""

    def __init__(self, factory: Callable[[], Embedder], niceness: int, query_threads: int | None) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, theirs = ctx.Pipe()
        self.process = ctx.Process(target=serve, args=(theirs, factory, niceness, query_threads),
                                   name="carnet-embedder", daemon=True)
        self.process.start()
        theirs.close()
        hello = self.receive(_START_TIMEOUT)
        if hello[0] != "ready":
            self.stop()
            raise DependencyUnavailable(f"the embedder's process did not start ({hello[1]})")
        self.model_id: str = hello[1]
        self.dim: int = hello[2]

    def send(self, kind: str, texts: list[str]) -> None:
        try:
            self.conn.send((kind, texts))
        except OSError as exc:  # a broken pipe: the child is gone
            raise DependencyUnavailable("the embedder's process stopped") from exc

    def receive(self, timeout: float) -> tuple[Any, ...]:
        try:
            if not self.conn.poll(timeout):
                raise DependencyUnavailable(f"the embedder's process did not answer within {timeout:.0f} s")
            answer: tuple[Any, ...] = self.conn.recv()
        except (EOFError, OSError) as exc:
            raise DependencyUnavailable("the embedder's process stopped") from exc
        return answer

    def stop(self, grace: float = 5.0) -> None:
        """Close our end (the child's loop ends), wait ``grace`` seconds, then kill it."""
        self.conn.close()
        self.process.join(timeout=grace)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)


class ProcessEmbedder(LoadedModel):
    """``Embedder`` over a child process that runs ``factory()``'s embedder (see the module doc)."""

    def __init__(self, factory: Callable[[], Embedder], *, timeout: float = DEFAULT_TIMEOUT,
                 niceness: int = DEFAULT_NICENESS, query_threads: int | None = 1) -> None:
        self._factory = factory
        self._timeout = timeout
        self._niceness = niceness
        self._query_threads = query_threads
        self._turns = ModelTurns()
        self._closed = False
        self._child: _Child | None = _Child(factory, niceness, query_threads)
        self._id, self._dim = self._child.model_id, self._child.dim

    @property
    def pid(self) -> int | None:
        """The child's process id (None between a failure and the next call)."""
        child = self._child
        return child.process.pid if child is not None else None

    def embed_query(self, text: str) -> Vector:
        return np.asarray(self._call("queries", [text], priority=True)[0], dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return self._no_vectors()
        return self._call("queries", list(texts), priority=True)

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return self._no_vectors()
        texts = list(texts)
        return np.concatenate([self._call("passages", texts[i : i + PASSAGE_SLICE], priority=False)
                               for i in range(0, len(texts), PASSAGE_SLICE)])

    def close(self) -> None:
        self._closed = True
        with self._turns.turn(priority=True):  # after the call in flight, if any
            child, self._child = self._child, None
        if child is not None:
            child.stop()

    def _call(self, kind: str, texts: list[str], *, priority: bool) -> Vector:
        with self._turns.turn(priority=priority):
            try:
                child = self._running()
                child.send(kind, texts)
                answer = child.receive(self._timeout)
                if answer[0] != "ok":
                    raise EmbedderFailed(str(answer[1]))
                vectors = np.asarray(answer[1], dtype=np.float32)
                if vectors.shape != (len(texts), self._dim):
                    raise DependencyUnavailable("the embedder's process answered out of shape")
            except DependencyUnavailable:
                self._discard()
                raise
        return vectors

    def _running(self) -> _Child:
        if self._closed:
            raise DependencyUnavailable("the embedder is closed")
        if self._child is None:  # the last one failed: start another (we hold the model's turn)
            child = _Child(self._factory, self._niceness, self._query_threads)
            if (child.model_id, child.dim) != (self._id, self._dim):
                child.stop()
                raise DependencyUnavailable("the embedder's process came back with another model")
            self._child = child
        return self._child

    def _discard(self) -> None:
        """A child that failed or hangs: no grace (the next call starts another)."""
        child, self._child = self._child, None
        if child is not None:
            child.stop(grace=0.5)
