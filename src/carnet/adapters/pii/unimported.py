"""Importing a library without one of its optional imports: ``presidio_analyzer`` imports its
Hugging Face NER engine with its package, and that engine imports ``transformers``' pipelines whenever
``transformers`` is installed (the ``[st]`` extra, and the test tools): about 6 s of every process's
start on a 2-core machine, for an engine Carnet never uses (it runs spaCy's). The library's own
fallback for a missing ``transformers`` applies instead."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without(module: str) -> Iterator[None]:
    """Inside, ``import module`` raises ``ImportError`` (``sys.modules[module] = None``, as Python
    documents), unless it was imported already; afterwards it imports as usual."""
    if module in sys.modules:
        yield
        return
    sys.modules[module] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if sys.modules.get(module, 0) is None:
            del sys.modules[module]
