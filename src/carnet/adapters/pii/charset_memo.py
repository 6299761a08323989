"""Compiling spaCy's French tokenizer pattern in one second instead of four.

Loading the French pipeline imports ``spacy.lang.fr.tokenizer_exceptions``, which compiles one regular
expression of 1.45 million characters: some 300 alternatives, each repeating the same large Unicode
character classes (every lower-case letter, every hyphen, every apostrophe). CPython's compiler
optimises each class again where it appears: 805 optimisations of 18 distinct classes, about 2.5 s of
the 3.6 s that import costs every process that detects PII (``carnet serve``, each worker, each CLI
command that writes), on the 2-core AMD EPYC of docs/benchmarks.md ("Process start").

Inside :func:`charsets_memoized`, the compiler's class optimisation (``re._compiler._optimize_charset``,
a pure function of its arguments) answers a class it has already seen from memory. The compiled program
is the same, opcode for opcode (``tests/unit/test_charset_memo.py``); only the time changes. Outside the
block the compiler is the standard one again. On a Python whose compiler has no such function the block
changes nothing.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any


def _compiler() -> ModuleType | None:
    """CPython's regular-expression compiler (``re._compiler`` since 3.11; not in typeshed)."""
    try:
        return importlib.import_module("re._compiler")
    except ImportError:  # another Python: nothing is memoised there
        return None


_NAME = "_optimize_charset"
_patching = threading.Lock()  # one block at a time swaps the function (nested blocks are not needed)


def _memoizing(optimize: Callable[..., Any]) -> Callable[..., Any]:
    """``optimize`` answering repeated arguments from a dictionary. A charset is a list of
    ``(opcode, argument)`` pairs of ints and tuples; one that does not hash is optimised as usual."""
    seen: dict[tuple[Any, ...], tuple[list[Any], Any]] = {}

    def memoized(charset: list[Any], iscased: Any = None, fixup: Any = None, fixes: Any = None) -> Any:
        try:
            key = (tuple(charset), iscased, fixup, id(fixes) if fixes is not None else None)
            hash(key)
        except TypeError:
            return optimize(charset, iscased, fixup, fixes)
        found = seen.get(key)
        if found is None:
            found = seen[key] = optimize(charset, iscased, fixup, fixes)
        out, hascased = found
        return list(out), hascased  # a fresh list: the caller owns what it is given

    return memoized


@contextmanager
def charsets_memoized() -> Iterator[None]:
    """Regular expressions compiled inside this block optimise each distinct character class once."""
    compiler = _compiler()
    optimize = getattr(compiler, _NAME, None)
    if compiler is None or optimize is None:
        yield
        return
    with _patching:
        setattr(compiler, _NAME, _memoizing(optimize))
        try:
            yield
        finally:
            setattr(compiler, _NAME, optimize)
