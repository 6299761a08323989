"""Pseudonymisation on both paths, with the subject's own pseudonym map.

Write path (``for_write``): the full detector (NER + patterns + the tenant's formats) over a batch of
texts, plus the names the subject's map already knows; every value found becomes the subject's
placeholder for it, new ones are added to the map, and the map is saved (sealed). The record keeps
its original text (sealed) and gets the ``pseudo_text``, the only text that is embedded or
keyword-hashed, and blind-index tokens for the exact identifiers found.

Read path (``for_query``): patterns and a dictionary match of the subject's known names only (no
model): a name in a question meets the same placeholder as in the memories, and an identifier in
it becomes a blind-index lookup. The map is read, never changed. A map that does not open (the
subject's data key damaged) does not block the read: the query goes on without the subject's names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from carnet.domain.pii.canonical import canonical, phone_digits
from carnet.domain.pii.detector import answered_birthdates, find_all
from carnet.domain.pii.normalise import views
from carnet.domain.pii.patterns import Recognizer
from carnet.domain.pii.pseudonyms import PLACEHOLDER, Pseudonymized, PseudonymMap, find_known_names, pseudonymize
from carnet.domain.pii.spans import BUILT_IN, IDENTIFIERS, PERSON, PHONE, Span, settle
from carnet.domain.records import Scope
from carnet.errors import CarnetError, DependencyUnavailable
from carnet.ports import PiiDetector, PseudonymMaps

log = structlog.get_logger(__name__)

ALL_TENANTS = "*"


@dataclass(frozen=True, slots=True)
class Pii:
    """What pseudonymisation needs (built by the bootstrap). ``enabled=False`` turns it off: texts are
    embedded as they are (a benchmark comparison; never the default)."""

    detector: PiiDetector  # write path
    query_detector: PiiDetector  # read path: patterns only
    maps: PseudonymMaps
    patterns: Mapping[str, tuple[Recognizer, ...]] = field(default_factory=dict)  # tenant (or "*") → formats
    threshold: float = 0.5
    enabled: bool = True

    def tenant_recognizers(self, tenant: str) -> tuple[Recognizer, ...]:
        return (*self.patterns.get(ALL_TENANTS, ()), *self.patterns.get(tenant, ()))


@dataclass(frozen=True, slots=True)
class Extracting:
    """A call's messages as the extractor sees them, with what ``restore`` and ``grow`` need."""

    pseudo: list[str]  # each message with placeholders
    back: dict[str, str]  # placeholder -> the value as written
    found: tuple[tuple[str, str], ...]  # (kind, value) of every value replaced, in order


@dataclass(frozen=True, slots=True)
class Prepared:
    """A text once pseudonymised, with the canonical identifiers found in it (for blind indexes)."""

    pseudo_text: str
    identifiers: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # the types of personal data found
    names: tuple[str, ...] = ()  # the people it names, as written (in memory only: never stored nor logged)


def for_write(pii: Pii, scope: Scope, texts: Sequence[str]) -> list[Prepared]:
    if not pii.enabled or not texts:
        return [Prepared(t) for t in texts]
    pmap = pii.maps.load(scope)
    extra = pii.tenant_recognizers(scope.tenant)
    out = []
    for text, spans in zip(texts, pii.detector.detect_batch(texts), strict=True):
        out.append(_prepared(pseudonymize(text, _with(text, spans, extra, pii.threshold), pmap,
                                          known=find_known_names(text, pmap, pii.detector.is_word))))
    if pmap.changed:
        pii.maps.save(scope, pmap)
    return out


def for_extraction(pii: Pii, scope: Scope, texts: Sequence[str]) -> Extracting:
    """Messages as an extractor sees them (placeholders: an LLM never reads the personal data), and
    each placeholder's value as it was written (a phone number dictated in words: in digits), to put
    the values back into the facts it returns (``restore``). New values get placeholders in a copy of
    the subject's map that is not saved here: an intake worker extracts outside the subject's lock, and
    a save there would write the map (and create a data key) for a subject erased meanwhile. ``found``
    lists the values, for ``grow`` to add to the map under the lock."""
    if not pii.enabled or not texts:
        return Extracting(list(texts), {}, ())
    pmap = pii.maps.load(scope)
    extra = pii.tenant_recognizers(scope.tenant)
    pseudo: list[str] = []
    back: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for i, (text, spans) in enumerate(zip(texts, pii.detector.detect_batch(texts), strict=True)):
        known = find_known_names(text, pmap, pii.detector.is_word)
        if i:  # a date of birth asked in the turn before and answered alone in this one
            spans = [*spans, *answered_birthdates(texts[i - 1], text)]
        done = pseudonymize(text, _with(text, spans, extra, pii.threshold), pmap, known=known)
        pseudo.append(done.text)
        found.extend(done.found)
        for kind, value in done.found:
            back.setdefault(pmap.placeholder(kind, value, create=False), _written(kind, value))
    return Extracting(pseudo, back, tuple(found))


def _written(kind: str, value: str) -> str:
    """A value as a fact gives it back: as it was written, but a phone number dictated in words in
    digits ("zéro six, soixante et onze, …" → "06 71 …"), as the advisor's read-back and the notes write
    it: a memory's number is one to dial."""
    if kind == PHONE and any(c.isalpha() for c in value):
        return phone_digits(value) or value
    return value


def grow(pii: Pii, scope: Scope, found: Sequence[tuple[str, str]]) -> None:
    """The subject's map given a placeholder for each value found in a call (``for_extraction``), in
    order, and saved. Call it holding the subject's lock, once the intake is known to be still there
    (an erasure deletes it under the same lock): the names a call taught are then known to the later
    detection of the subject's texts (``find_known_names``), even where the detector misses them."""
    if not pii.enabled or not found:
        return
    pmap = pii.maps.load(scope)
    for kind, value in found:
        pmap.placeholder(kind, value)
    if pmap.changed:
        pii.maps.save(scope, pmap)


def restore(text: str, back: Mapping[str, str]) -> str:
    """An extracted fact with its placeholders replaced by the values they stand for (unknown ones
    are left as they are: the extractor may not invent values)."""
    return PLACEHOLDER.sub(lambda m: back.get(m.group(0), m.group(0)), text)


def for_query(pii: Pii, scope: Scope, text: str) -> Prepared:
    if not pii.enabled:
        return Prepared(text)
    pmap = _readable_map(pii, scope)
    return _prepared(pseudonymize(text, _patterns(pii, scope.tenant, text), pmap,
                                  known=find_known_names(text, pmap, pii.detector.is_word), create=False))


def _readable_map(pii: Pii, scope: Scope) -> PseudonymMap:
    try:
        return pii.maps.load(scope)
    except DependencyUnavailable:
        raise
    except CarnetError as exc:  # damaged: the reads still answer, the records' own damage is reported
        log.warning("pseudonym_map_unreadable", error=exc.code)
        return PseudonymMap()


def identifiers_in(pii: Pii, tenant: str, text: str) -> tuple[str, ...]:
    """The canonical identifiers a stored text names (patterns only: no identifier needs the model)."""
    spans = _patterns(pii, tenant, text)
    return tuple(dict.fromkeys(canonical(s.kind, s.text(text)) for s in spans if _is_identifier(s.kind)))


def identifier_of(pii: Pii, tenant: str, value: str) -> str:
    """The canonical form of an identifier typed by a caller (lookup): the patterns say what it is."""
    spans = _patterns(pii, tenant, value)
    whole = [s for s in spans if s.start == 0 and s.end == len(value.strip()) and _is_identifier(s.kind)]
    return canonical(whole[0].kind, value) if whole else value


def _patterns(pii: Pii, tenant: str, text: str) -> list[Span]:
    """The read path's detector with the tenant's formats: no model."""
    return _with(text, pii.query_detector.detect(text), pii.tenant_recognizers(tenant), pii.threshold)


def _with(text: str, spans: Sequence[Span], extra: Sequence[Recognizer], threshold: float) -> list[Span]:
    """The detector's spans and the tenant's formats, found on the normalised text as the detector's are."""
    if not extra:
        return list(spans)
    return settle([*spans, *(s for view in views(text) for s in find_all(extra, view))], threshold=threshold)


def _is_identifier(kind: str) -> bool:
    return kind in IDENTIFIERS or kind not in BUILT_IN  # the tenant's formats are identifiers too


def _prepared(p: Pseudonymized) -> Prepared:
    ids = tuple(dict.fromkeys(canonical(k, v) for k, v in p.found if _is_identifier(k)))
    return Prepared(p.text, ids, tuple(dict.fromkeys(k for k, _ in p.found)),
                    tuple(dict.fromkeys(v for k, v in p.found if k == PERSON)))


def personal_data_kinds(pii: Pii, tenant: str, text: str) -> tuple[str, ...]:
    """The types of personal data the write-path detector (and the tenant's formats) finds in a text
    that belongs to no subject (a team procedure): nothing is pseudonymised, the caller refuses it."""
    if not pii.enabled:
        return ()
    spans = _with(text, pii.detector.detect(text), pii.tenant_recognizers(tenant), pii.threshold)
    return tuple(dict.fromkeys(s.kind for s in spans))
