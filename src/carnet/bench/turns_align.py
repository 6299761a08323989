"""Labelled turns for the turn filter: a labelled file's facts aligned to its calls (``carnet extract train``).

A file (``../shared/bench/fr-train/*.json``, ``fr-dev-2.json``) holds per subject ``facts`` (advisor
notes, in time order, each with its ``at``) and ``calls`` (the same history as transcripts; every fact
is said at or before its own time). Alignment, per fact:

1. the fact's call is the latest one that started at or before the fact's time (a note is written
   during or after the call it records); when no turn of it qualifies (below), the earlier calls;
2. a turn *carries* the fact when the content words they share hold at least ``MIN_SHARE`` of the
   fact's information, information being the words' IDF over the file's facts
   (``scenarios_match.Weights``, the measure the scenario bench maps records to facts with):
   ``w(T ∩ F) / w(F) ≥ MIN_SHARE``. Values said in digits and written in digits match ("212,40"); a
   value dictated in words ("zéro six…") does not, which is why a turn need only hold part of a fact.

3. with ``by_meaning`` (an embedder), a fact no turn holds enough words of (a note that says it in
   other words: "Appel de l'employeur", a number dictated in words) is carried by the turn of its call
   whose embedding is nearest its own: every fact is said (the files' README), and this is where.

A turn is labelled 1 when it carries at least one fact of its subject, else 0. Turns are read as the
extractor reads them: pseudonymised by the write path's detector, with one pseudonym map per subject.
Facts whose words no turn holds enough of are counted (``unaligned``), not guessed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from carnet.bench.scenarios_match import Weights, words
from carnet.domain.extraction.turn_features import turn_features
from carnet.domain.intake import Message

MIN_SHARE = 0.25  # half the median best share of a fact over its call's turns in the files (docs/benchmarks.md)

Pseudonymise = Callable[[str, Any], str]  # (text, the subject's map) -> pseudonymised text


@dataclass(frozen=True, slots=True)
class Call:
    subject: str
    messages: tuple[Message, ...]  # pseudonymised
    labels: tuple[bool, ...]
    rows: tuple[tuple[float, ...], ...]
    facts: int  # facts aligned to this call (their best turn is in it)


@dataclass(frozen=True, slots=True)
class Aligned:
    name: str
    path: Path
    calls: tuple[Call, ...]
    facts: int
    unaligned: int


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value)


def share(turn: frozenset[str], fact: frozenset[str], weights: Weights) -> float:
    whole = weights.weight(fact)
    return weights.weight(turn & fact) / whole if whole else 0.0


Nearest = Callable[[str, Sequence[str]], int]  # (fact, turns) -> index of the turn nearest by meaning


def label_subject(sdata: dict[str, Any], weights: Weights,
                  nearest: Nearest | None = None) -> tuple[list[list[bool]], list[int], int]:
    """Per call, per message: does it carry a fact; per call, the facts aligned to it; facts unaligned
    (by words; with ``nearest``, those are aligned by meaning in their own call and still counted)."""
    calls = sdata.get("calls", [])
    labels = [[False] * len(c["messages"]) for c in calls]
    per_call = [0] * len(calls)
    placed = placements(sdata["facts"], calls, weights, nearest)
    for (k, turns), _ in placed:
        if k < 0:
            continue
        for i in turns:
            labels[k][i] = True
        per_call[k] += 1
    return labels, per_call, sum(1 for _, by_words in placed if not by_words)


def placements(facts: Sequence[dict[str, Any]], calls: Sequence[dict[str, Any]], weights: Weights,
               nearest: Nearest | None = None) -> list[tuple[tuple[int, tuple[int, ...]], bool]]:
    """Per fact: (its call's index, the turns of that call that carry it), or ``(-1, ())`` when none does,
    and whether it was placed by words (False: by meaning, or not at all)."""
    turn_words = [[words(m["content"]) for m in c["messages"]] for c in calls]
    out: list[tuple[tuple[int, tuple[int, ...]], bool]] = []
    for fact in facts:
        fw = words(fact["text"])
        started = [k for k, c in enumerate(calls) if _at(c["at"]) <= _at(fact["at"])]
        place: tuple[int, tuple[int, ...]] = (-1, ())
        for k in sorted(started, reverse=True):
            hits = tuple(i for i, tw in enumerate(turn_words[k]) if share(tw, fw, weights) >= MIN_SHARE)
            if hits:
                place = (k, hits)
                break
        found = place[0] >= 0
        if not found and nearest is not None and started:
            k = max(started)
            place = (k, (nearest(fact["text"], [m["content"] for m in calls[k]["messages"]]),))
        out.append((place, found))
    return out


def align(path: Path, pseudonymise: Pseudonymise, new_map: Callable[[], Any],
          nearest: Nearest | None = None) -> Aligned:
    spec = json.loads(path.read_text(encoding="utf-8"))
    weights = Weights.of(f["text"] for t in spec["tenants"].values() for s in t["subjects"].values()
                         for f in s["facts"])
    out: list[Call] = []
    facts = unaligned = 0
    for _, tdata in sorted(spec["tenants"].items()):
        for sid, sdata in sorted(tdata["subjects"].items()):
            labels, per_call, missed = label_subject(sdata, weights, nearest)
            facts += len(sdata["facts"])
            unaligned += missed
            pmap = new_map()
            for call, call_labels, n in zip(sdata.get("calls", []), labels, per_call, strict=True):
                messages = tuple(Message(m["role"], pseudonymise(m["content"], pmap),
                                         _at(m["at"]) if m.get("at") else None) for m in call["messages"])
                out.append(Call(sid, messages, tuple(call_labels), tuple(turn_features(messages)), n))
    return Aligned(path.stem, path, tuple(out), facts, unaligned)


def write_path_pseudonymiser() -> tuple[Pseudonymise, Callable[[], Any]]:
    """The write path's detector as the settings' defaults build it, and a fresh subject map."""
    from carnet.bootstrap.models import write_detector
    from carnet.domain.pii.pseudonyms import PseudonymMap, pseudonymize
    from carnet.settings.pii import PiiSettings

    detector = write_detector(PiiSettings())

    def run(text: str, pmap: Any) -> str:
        return pseudonymize(text, detector.detect(text), pmap).text

    return run, PseudonymMap


def by_meaning() -> Nearest:
    """The configured embedder (passages on both sides, cosine of normalised vectors)."""
    from carnet.bootstrap.models import build_embedder
    from carnet.settings.root import Settings

    embedder = build_embedder(Settings())

    def nearest(fact: str, turns: Sequence[str]) -> int:
        vectors = embedder.embed_passages([fact, *turns])
        return int((vectors[1:] @ vectors[0]).argmax())

    return nearest


def load_all(paths: Sequence[Path], *, meaning: bool = False) -> list[Aligned]:
    pseudonymise, new_map = write_path_pseudonymiser()
    nearest = by_meaning() if meaning else None
    return [align(p, pseudonymise, new_map, nearest) for p in sorted(paths)]
