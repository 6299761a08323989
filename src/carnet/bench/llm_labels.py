"""An LLM that extracts right, answering from the labels (``bench scenarios --from calls --llm labels``).

A labelled file holds, per subject, the advisor's notes (``facts``) and the calls they were written
from; ``turns_align.placements`` puts each fact in the call and the turns that say it (the facts said in
that call). ``Labels`` answers the three requests the Mistral extractor makes, as an LLM that is always
right would:

- ``facts``: the request's call is the labelled call whose content words the transcript shares most
  (Jaccard; the transcript is pseudonymised, its content words mostly are not); the answer is the facts
  placed in that call whose turns lie within the stretch of the call the transcript holds (as many
  turns as it has lines, around those most of whose words it holds: a turn whose values became
  placeholders holds few of its words; a call posted in several parts gets each fact once, with the
  part that says it), as the file writes them, ``about: membre``, dated by the call
  (``valid_from`` null), and no summary (no episode). A fact no turn holds the words of is placed in
  the latest call started at or before its time, as a whole (``by_call``);
- ``obsolete``: the new fact and each known one are matched to the subject's facts by words
  (``scenarios_match.coverage``), and a known fact is named when the labels say the new one makes it
  untrue (``judge_run.closes_by_label``: labelled so, or by a later restatement);
- ``summary`` (a call longer than the transcript budget): the facts its part says, joined.

So the figures measured with it are a **bound**: what extraction reaches when the LLM writes exactly
the file's notes of each call, one per note, about the member; a real Mistral writes other sentences,
misses some, adds some. Two things it does that an LLM could not: it writes values in clear that the
transcript holds as placeholders (the write path pseudonymises them again), and it knows the writer's
own wording. The labels of the file measured are what it answers with; nothing is learned from them.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from carnet.bench.judge_run import closes_by_label
from carnet.bench.scenarios_calls import calls_of
from carnet.bench.scenarios_match import Weights, coverage, words
from carnet.bench.turns_align import placements
from carnet.domain.extraction.schemas import MAX_FACT_CHARS, MAX_FACTS, MAX_SUMMARY_CHARS, MEMBER

TURN_PRESENT = 0.5  # share of a turn's content words the transcript must hold for the turn to be in it
_SPEAKER_CHARS = 20  # a transcript line's speaker label is shorter than this
MIN_CALL_MATCH = 0.2  # the least Jaccard of content words between a request and its labelled call
_NUMBERED = re.compile(r"^(\d+)\.\s?(.*)$")


@dataclass(frozen=True, slots=True)
class _Call:
    subject: str  # "file/tenant/subject"
    words: frozenset[str]
    turns: tuple[frozenset[str], ...]
    facts: tuple[tuple[int, tuple[int, ...]], ...]  # (fact index, the turns that say it)


@dataclass(frozen=True, slots=True)
class _Subject:
    file: str
    facts: tuple[str, ...]
    fact_words: tuple[frozenset[str], ...]
    labels: frozenset[tuple[int, int]]  # (old, by)
    weights: Weights


@dataclass
class Tally:
    """What the labelled LLM was asked and answered (for the report and the tests)."""

    facts_requests: int = 0
    obsolete_requests: int = 0
    summary_requests: int = 0
    facts_answered: int = 0
    facts_cut: int = 0  # placed in one part beyond the answer's MAX_FACTS
    named: int = 0  # known facts named obsolete
    facts_not_sent: int = 0  # facts said in calls the turn filter did not send (``not_sent``)
    unmatched: int = 0  # requests no labelled call or fact matched (answered with nothing)
    wrong: int = 0  # contradiction answers turned wrong on purpose (``Labels.error``)


@dataclass
class Labels:
    calls: list[_Call] = field(default_factory=list)
    subjects: dict[str, _Subject] = field(default_factory=dict)
    only: str | None = None  # the file being measured: requests are matched to its calls only
    by_call: int = 0  # facts no turn holds the words of, placed in their call as a whole
    tally: Tally = field(default_factory=Tally)
    # The share of its contradiction answers turned wrong (each candidate's, the same each run), to see what
    # a fallible LLM costs; its extractions stay right.
    error: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, paths: Sequence[Path]) -> Labels:
        out = cls()
        for path in paths:
            out.add(path.stem, json.loads(path.read_text(encoding="utf-8")))
        return out

    def add(self, name: str, spec: dict[str, Any]) -> None:
        """A labelled file's subjects and calls (``calls_of``: a subject without calls is told as its facts)."""
        every = [f for t in spec["tenants"].values() for s in t["subjects"].values() for f in s["facts"]]
        weights = Weights.of(f["text"] for f in every)
        for tenant, tdata in sorted(spec["tenants"].items()):
            for sid, sdata in sorted(tdata["subjects"].items()):
                key = f"{name}/{tenant}/{sid}"
                texts = tuple(f["text"] for f in sdata["facts"])
                self.subjects[key] = _Subject(name, texts, tuple(words(t) for t in texts),
                                              frozenset((int(p["old"]), int(p["by"]))
                                                        for p in sdata.get("superseded", ())), weights)
                calls = calls_of(sdata)
                placed = [_in_call(place, fact, calls) if not by_words else place
                          for (place, by_words), fact in zip(placements(sdata["facts"], calls, weights),
                                                             sdata["facts"], strict=True)]
                self.by_call += sum(1 for (c, turns) in placed if c >= 0 and not turns)
                for k, call in enumerate(calls):
                    turns = tuple(words(m["content"]) for m in call["messages"])
                    facts = tuple((i, turns_of) for i, (c, turns_of) in enumerate(placed) if c == k)
                    self.calls.append(_Call(key, frozenset().union(*turns), turns, facts))

    def focus(self, name: str | None) -> None:
        """Match requests to this file's calls and facts only (None: every file's)."""
        self.only = name

    def answer(self, task: str, user: str) -> dict[str, Any]:
        """The JSON answer to a request of ``task`` ("facts", "obsolete", "summary") whose user message is ``user``."""
        with self._lock:
            if task == "facts":
                self.tally.facts_requests += 1
                said = self._said(user)
                return {"facts": [_fact(text) for text in said], "summary": ""}
            if task == "summary":
                self.tally.summary_requests += 1
                return {"summary": " ; ".join(self._said(user, count=False))[:MAX_SUMMARY_CHARS]}
            self.tally.obsolete_requests += 1
            return {"obsolete_ids": self._obsolete(user)}

    def not_sent(self, transcript: str) -> None:
        """A call the turn filter kept from the LLM: count the labelled facts said in it (lost to the gate)."""
        with self._lock:
            self.tally.facts_not_sent += len(self._said(transcript, count=False))

    def _said(self, user: str, *, count: bool = True) -> list[str]:
        """The facts placed in the request's call whose turns the request holds (or whose text it
        quotes: an earlier part's summary)."""
        spoken = _spoken(user)
        seen = words(spoken)
        call = self._call(seen)
        if call is None:
            self.tally.unmatched += 1
            return []
        subject = self.subjects[call.subject]
        span = _span(call.turns, seen, len(spoken.splitlines()))
        texts = [subject.facts[i] for i, turns in call.facts
                 if not turns or subject.facts[i] in user or any(t in span for t in turns)]
        texts = list(dict.fromkeys(t[:MAX_FACT_CHARS] for t in texts))
        if count:
            self.tally.facts_answered += min(len(texts), MAX_FACTS)
            self.tally.facts_cut += max(0, len(texts) - MAX_FACTS)
        return texts[:MAX_FACTS]

    def _call(self, seen: frozenset[str]) -> _Call | None:
        best, score = None, 0.0
        for call in self.calls:
            if self.only is not None and self.subjects[call.subject].file != self.only:
                continue
            union = len(call.words | seen)
            jaccard = len(call.words & seen) / union if union else 0.0
            if jaccard >= MIN_CALL_MATCH and jaccard > score:
                best, score = call, jaccard
        return best

    def _obsolete(self, user: str) -> list[str]:
        lines = [line.strip() for line in user.splitlines() if line.strip()]
        new_text = lines[0].split(":", 1)[1] if lines and ":" in lines[0] else ""
        known = [(m.group(1), m.group(2)) for m in map(_NUMBERED.match, lines[1:]) if m]
        found = self._fact(new_text, None, latest=True)
        if found is None:
            self.tally.unmatched += 1
            return []
        key, new = found
        labels = self.subjects[key].labels
        named = []
        for number, text in known:
            old = self._fact(text, key, latest=False)
            closes = old is not None and closes_by_label(labels, old[1], new)
            if self.error and random.Random(f"{key}:{new}:{text}").random() < self.error:
                closes = not closes
                self.tally.wrong += 1
            if closes:
                named.append(number)
        self.tally.named += len(named)
        return named

    def _fact(self, text: str, subject: str | None, *, latest: bool) -> tuple[str, int] | None:
        """The labelled fact ``text`` says (best coverage, at least ``CARRY_SHARE``-like 0.5), in
        ``subject`` or any subject of the focused file; ties: the latest (a new fact) or the earliest."""
        seen = words(text)
        best: tuple[float, int, str, int] | None = None
        for key, s in self.subjects.items():
            if (subject is not None and key != subject) or (self.only is not None and s.file != self.only):
                continue
            for i, fw in enumerate(s.fact_words):
                c = coverage(seen, fw, s.weights)
                rank = (c, i if latest else -i)
                if c >= 0.5 and (best is None or rank > best[:2]):
                    best = (c, rank[1], key, i)
        return None if best is None else (best[2], best[3])


def _in_call(place: tuple[int, tuple[int, ...]], fact: dict[str, Any],
             calls: Sequence[dict[str, Any]]) -> tuple[int, tuple[int, ...]]:
    """A fact no turn holds enough words of (said in other words, a value dictated in words): every fact
    is said at or before its time, so in the latest call started by then, as a whole (no turn named)."""
    started = [k for k, c in enumerate(calls) if datetime.fromisoformat(c["at"]) <= datetime.fromisoformat(fact["at"])]
    return (max(started), ()) if started else place


def _spoken(user: str) -> str:
    """What the transcript's speakers said: without the prompt's headings ("Échange du … :") and each
    line's speaker ("Client : "), whose words no call holds (``prompts._conversation``, ``transcript.lines``)."""
    said = []
    for line in user.splitlines():
        line = line.strip()
        if not line or line.endswith(":"):
            continue
        head, sep, rest = line.partition(":")
        said.append(rest if sep and len(head) <= _SPEAKER_CHARS else line)
    return "\n".join(said)


def _span(turns: Sequence[frozenset[str]], seen: frozenset[str], lines: int) -> range:
    """The turns of the call a request of ``lines`` lines holds: a window of that many turns around those
    most of whose words it holds (a turn whose values became placeholders holds few of its words)."""
    present = [t for t, words_of in enumerate(turns) if _present(words_of, seen)]
    if not present or lines >= len(turns):
        return range(len(turns))
    start = max(0, min(present[0], len(turns) - lines))
    return range(start, max(start + lines, present[-1] + 1))


def _present(turn: frozenset[str], seen: frozenset[str]) -> bool:
    return not turn or len(turn & seen) >= TURN_PRESENT * len(turn)


def _fact(text: str) -> dict[str, Any]:
    return {"text": text, "category": "autre", "importance": 3, "valid_from": None, "worth_remembering": True,
            "about": MEMBER}
