"""Personal data: the detector, the per-subject pseudonym maps and the sealing of subject ids."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from carnet.domain.pii.pseudonyms import PseudonymMap
from carnet.domain.pii.spans import Span
from carnet.domain.records import Scope


class PiiDetector(Protocol):
    """Finds personal data in texts (spans with a type and a score)."""

    def detect(self, text: str) -> list[Span]: ...

    def detect_batch(self, texts: Sequence[str]) -> list[list[Span]]: ...

    def is_word(self, word: str) -> bool:
        """``word`` (lower case) is a word of the texts' language (False without a lexicon): a name the
        subject's map knows is not looked for where the text uses it as an ordinary word."""
        ...


class PseudonymMaps(Protocol):
    """Each subject's pseudonym map, stored sealed under the subject's data key."""

    def load(self, scope: Scope) -> PseudonymMap: ...

    def save(self, scope: Scope, pmap: PseudonymMap) -> None:
        """Raise ``Conflict`` if another writer saved the subject's map since it was loaded."""
        ...

    def forget(self, scope: Scope) -> None:
        """Drop any cached copy (erasure)."""
        ...

    def forget_tenant(self, tenant: str) -> None:
        """Drop the tenant's cached copies (a tenant shred elsewhere)."""
        ...

    def clear(self) -> None:
        """Drop every cached copy."""
        ...


class SubjectIdSealer(Protocol):
    """Keeps subject ids (personal data) sealed, so hashes can be recomputed when the hash key rotates."""

    def seal_id(self, scope: Scope, subject_id: str) -> bytes: ...

    def open_id(self, scope: Scope, sealed: bytes) -> str: ...

    def seal_value(self, scope: Scope, name: str, value: str) -> bytes:
        """Another of the subject's values (a legal-hold reference), sealed and bound to ``name``."""
        ...

    def open_value(self, scope: Scope, name: str, sealed: bytes) -> str: ...
