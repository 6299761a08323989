"""A conversation as an extraction prompt shows it: one line per message, and, when it is too long
for one prompt, older chunks to summarize first (summarize-then-forget) and a recent tail.

System messages are left out: they are the assistant's own instructions, often including the memory
block Carnet assembled for it; extracting from them would store old memories again as new facts.
Line breaks inside a message are folded into spaces so that a message cannot pass itself off as
another speaker's line. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from carnet.domain.intake import Message

_SPEAKERS = {
    "fr": {"user": "Client", "advisor": "Conseiller", "assistant": "Assistant"},
    "en": {"user": "Customer", "advisor": "Advisor", "assistant": "Assistant"},
}
SKIPPED_ROLES = frozenset({"system"})


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    day: date | None  # the message's date, when it has one


@dataclass(frozen=True, slots=True)
class Split:
    """``older``: chunks to summarize in order, each within the budget; ``recent``: the tail kept verbatim."""

    older: tuple[tuple[Line, ...], ...]
    recent: tuple[Line, ...]


def lines(messages: Sequence[Message], locale: str) -> list[Line]:
    speakers = _SPEAKERS.get(locale, _SPEAKERS["en"])
    out = []
    for m in messages:
        if m.role in SKIPPED_ROLES or not m.content.strip():
            continue
        who = speakers.get(m.role, m.role.capitalize())
        text = " ".join(m.content.split())
        stamp = f"[{m.at:%H:%M}] " if m.at else ""
        out.append(Line(f"{stamp}{who} : {text}" if locale == "fr" else f"{stamp}{who}: {text}",
                        m.at.date() if m.at else None))
    return out


def last_day(chunk: Sequence[Line]) -> date | None:
    """The reference date of a stretch of conversation (relative dates are resolved from it)."""
    return max((line.day for line in chunk if line.day), default=None)


def size(chunk: Sequence[Line]) -> int:
    return sum(len(line.text) + 1 for line in chunk)


def split(all_lines: Sequence[Line], budget: int) -> Split:
    """Everything in ``recent`` when it fits in ``budget`` characters. Otherwise the recent tail takes
    up to half the budget (at least one line), and what comes before is cut into chunks of at most
    ``budget`` characters (a single longer line is a chunk of its own)."""
    if size(all_lines) <= budget:
        return Split((), tuple(all_lines))
    cut = len(all_lines) - 1
    while cut > 0 and size(all_lines[cut - 1:]) <= budget // 2:
        cut -= 1
    chunks: list[tuple[Line, ...]] = []
    current: list[Line] = []
    for line in all_lines[:cut]:
        if current and size(current) + len(line.text) + 1 > budget:
            chunks.append(tuple(current))
            current = []
        current.append(line)
    if current:
        chunks.append(tuple(current))
    return Split(tuple(chunks), tuple(all_lines[cut:]))


def tail(all_lines: Sequence[Line], budget: int) -> str:
    """The last whole lines within ``budget`` characters, one per line ("" when none fits)."""
    kept: list[str] = []
    used = 0
    for line in reversed(all_lines):
        if used + len(line.text) + 1 > budget:
            break
        kept.append(line.text)
        used += len(line.text) + 1
    return "\n".join(reversed(kept))
