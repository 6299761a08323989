"""One thread for every call of a model: its load, its warm-up and each forward, queries first.

PyTorch's CPU build runs its operators on OpenMP (GNU libgomp). Each thread that starts a parallel
region becomes the master of a team of its own, and libgomp keeps that team's threads for the life of
its master. Once the threads libgomp manages outnumber the cores, it stops spinning between parallel
regions ("throttled" waiting): every one of the model's hundreds of small operators then pays a
sleep and a wake-up. A server runs each request on whichever worker thread is free, so the forwards
came from many threads and each started a team: measured on a 2-core Xeon, embedding a question took
4.6 ms on the thread that loaded the model and 13.4 ms on any other (9.3 ms when two threads took turns;
docs/benchmarks.md, "The model on one thread"). Run on one thread from its load on, the model has one
team, whoever asks.

One forward runs at a time (PyTorch already uses every core it was given for one call): a caller waits
for its own. A query (``priority``) goes before the bulk work waiting (a batch of passages is submitted
sub-batch by sub-batch, so a question waits for one sub-batch at most). A call that raises raises in
its caller; the thread goes on. A call made from the model thread itself (a load that warms up) runs at
once.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

T = TypeVar("T")

_QUERY, _BULK = 0, 1
_STOP = (2, 0, None, None)  # after everything queued
_CHECK_SECONDS = 1.0  # how often a waiting caller checks that the thread still runs


class ModelStopped(RuntimeError):
    """The model's thread was stopped (``close``): nothing runs any more."""


class ModelThread:
    def __init__(self, name: str = "carnet-model") -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Callable[[], Any] | None, Future[Any] | None]] = (
            queue.PriorityQueue())
        self._order = itertools.count()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def run(self, fn: Callable[[], T], *, priority: bool = False) -> T:
        """``fn()`` on the model thread, once the calls before it are done; its result or its exception."""
        if threading.current_thread() is self._thread:
            return fn()
        if self._closed or not self._thread.is_alive():
            raise ModelStopped("the model's thread is stopped")
        done: Future[T] = Future()
        self._queue.put((_QUERY if priority else _BULK, next(self._order), fn, done))
        while True:
            try:
                return done.result(timeout=_CHECK_SECONDS)
            except FutureTimeout:
                if not self._thread.is_alive() and not done.done():  # queued as it stopped
                    raise ModelStopped("the model's thread is stopped") from None

    def close(self) -> None:
        """Stop once what is queued has run; later calls raise ``ModelStopped``."""
        if not self._closed:
            self._closed = True
            self._queue.put(_STOP)
            self._thread.join(timeout=30)

    def _serve(self) -> None:
        while True:
            _, _, fn, done = self._queue.get()
            if fn is None or done is None:
                self._fail_waiting()
                return
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(fn())
            except BaseException as exc:  # the caller's to handle; this thread serves the next call
                done.set_exception(exc)

    def _fail_waiting(self) -> None:
        """Calls queued after ``close`` began: told, never left waiting."""
        while True:
            try:
                _, _, _, done = self._queue.get_nowait()
            except queue.Empty:
                return
            if done is not None and done.set_running_or_notify_cancel():
                done.set_exception(ModelStopped("the model's thread is stopped"))
