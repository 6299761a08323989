"""LoCoMo files, read: conversations, their dated sessions of dialog turns, and the questions with their evidence.

Pure and unit-tested (``load``, ``parse_session_date``, ``normalize_evidence``); the format is in
``docs/benchmarks.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# How many preceding turns of the same session are embedded with a turn (as context, never as
# provenance): a reply such as "Yes, twice!" only makes sense with the question it answers.
CONTEXT_TURNS = 2
CONTEXT_CHARS = 400  # keep the context from drowning the turn itself in the embedding

_MONTHS = {
    name: n
    for n, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
         ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
         ("october", "oct"), ("november", "nov"), ("december", "dec")),
        start=1,
    )
    for name in names
}
_SESSION_DATE = re.compile(
    r"^\s*(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[ap])\.?m\.?\s+on\s+"
    r"(?P<day>\d{1,2})\s+(?P<month>[a-z]+)\.?,?\s+(?P<year>\d{4})\s*$",
    re.IGNORECASE,
)
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$", re.IGNORECASE)
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None = None

    def memory_text(self) -> str:
        """What is remembered: the speaker's name, the words, and the shared image's caption."""
        text = f"{self.speaker}: {self.text.strip()}"
        if self.caption:
            text += f" [shares {self.caption.strip()}]"
        return text


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # normalised dia_ids that exist in the conversation (may be empty)


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    def dia_ids(self) -> frozenset[str]:
        return frozenset(t.dia_id for s in self.sessions for t in s.turns)

    def session_id(self, session: Session) -> str:
        return f"{self.sample_id}/session_{session.number}"


def parse_session_date(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 UTC (LoCoMo's session timestamps carry no zone)."""
    m = _SESSION_DATE.match(value)
    if m is None:
        raise ValueError(f"unrecognised session date: {value!r}")
    month = _MONTHS.get(m["month"].lower())
    if month is None:
        raise ValueError(f"unrecognised month in session date: {value!r}")
    hour = int(m["h"])
    if not 1 <= hour <= 12:
        raise ValueError(f"hour out of range in session date: {value!r}")
    hour = hour % 12 + (12 if m["ampm"].lower() == "p" else 0)
    return datetime(int(m["year"]), month, int(m["day"]), hour, int(m["m"]), tzinfo=UTC)


def normalize_evidence(raw: Iterable[object], valid: AbstractSet[str]) -> tuple[str, ...]:
    """Evidence dia_ids, cleaned: ``"D8:6; D9:17"`` is two ids, ``"D:11:26"`` is ``D11:26``, ``"D30:05"`` is
    ``D30:5``; ids that are not turns of the conversation are dropped; order kept, duplicates removed."""
    out: list[str] = []
    for item in raw:
        for token in _EVIDENCE_SPLIT.split(str(item)):
            m = _EVIDENCE_ID.match(token.strip())
            if m is None:
                continue
            dia_id = f"D{int(m[1])}:{int(m[2])}"
            if dia_id in valid and dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def parse_conversation(raw: dict[str, Any]) -> Conversation:
    conv = raw["conversation"]
    sessions: list[Session] = []
    for key, turns in conv.items():
        m = _SESSION_KEY.match(key)
        if m is None or not isinstance(turns, list) or not turns:
            continue
        number = int(m[1])
        stamp = conv.get(f"session_{number}_date_time")
        if not stamp:
            raise ValueError(f"{raw.get('sample_id')}: session {number} has no date")
        sessions.append(Session(
            number=number,
            at=parse_session_date(stamp),
            turns=tuple(
                Turn(dia_id=t["dia_id"], speaker=t["speaker"], text=t.get("text") or "",
                     caption=t.get("blip_caption") or None)
                for t in turns
            ),
        ))
    sessions.sort(key=lambda s: s.number)
    valid = frozenset(t.dia_id for s in sessions for t in s.turns)
    questions = tuple(
        Question(text=str(q["question"]), category=int(q["category"]),
                 evidence=normalize_evidence(q.get("evidence") or (), valid))
        for q in raw.get("qa", ())
        if "question" in q
    )
    speakers = tuple(conv[k] for k in ("speaker_a", "speaker_b") if conv.get(k))
    return Conversation(str(raw["sample_id"]), speakers, tuple(sessions), questions)


def load(path: Path) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):  # a single conversation
        data = [data]
    return [parse_conversation(c) for c in data]


class UnknownConversation(ValueError):
    """``--conversations`` names a sample id the file does not have."""


def select(conversations: Sequence[Conversation], wanted: Sequence[str] | None) -> list[Conversation]:
    """The conversations named in ``wanted`` (their ``sample_id``), in the file's order; all when
    ``wanted`` is None. A name the file does not have is an error, not an empty run."""
    if wanted is None:
        return list(conversations)
    known = {c.sample_id for c in conversations}
    missing = [w for w in wanted if w not in known]
    if missing:
        raise UnknownConversation(f"no conversation {', '.join(missing)} in the file "
                                  f"(it has {', '.join(sorted(known))})")
    return [c for c in conversations if c.sample_id in set(wanted)]


def turn_context(turns: Sequence[Turn], i: int, n: int = CONTEXT_TURNS,
                 max_chars: int = CONTEXT_CHARS) -> str | None:
    """The ``n`` turns before turn ``i`` of the same session, oldest first, trimmed from the left."""
    if n <= 0 or i == 0:
        return None
    text = " ".join(t.memory_text() for t in turns[max(0, i - n):i])
    return text[-max_chars:] if len(text) > max_chars else text
