"""An embedder whose question embeddings can be held: a request that reaches the model waits until the
test releases it, so a test can hold an admission slot for as long as it needs (admission tests)."""

from __future__ import annotations

import threading

from carnet.ports import Embedder, EmbedderFront, Vector


class HeldEmbedder(EmbedderFront):
    """The real embedder, whose query embeddings wait for ``release`` while ``hold`` is set."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.hold, self.release, self.entered = threading.Event(), threading.Event(), threading.Event()

    def embed_query(self, text: str) -> Vector:
        if self.hold.is_set():
            self.entered.set()
            assert self.release.wait(30), "the test never released the held request"
        return self.inner.embed_query(text)
