"""Records a newer note may have made untrue come after it in what a reader is shown. Pure.

Reconcile's judge closes an older record only when it is confident (``close_at``). In its uncertain band
(``[ask_from, close_at)``) it names the candidates, most probable first, and the service marks the first it
contests (``judge_model.contests``: a state said to change; the older of the pair) ``contested_by`` the newer
note, unless an LLM settles the pair (it closes the record, or
the mark is removed: ``services.memories.judge``). The mark changes no status: the record stays true, findable
and listed. When one answer holds both the record and a note contesting it, the record goes after every record
nobody contests (in its order): a question about the current state gets the current answer first, and the
older record is still found by a question the newer note does not answer.

Why ranking and not closing: in that band about one pair in three is a real replacement (the band's
precision, chosen at training). Closing them all would hide a true fact two times in three; leaving them
side by side lets the stale one take the answer's place. Measured leave-one-writer-out in
docs/benchmarks.md ("Contested records ranked after their newer note").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from carnet.domain.records import Memory

T = TypeVar("T")


def contested_last(items: Sequence[T], memory: Callable[[T], Memory]) -> list[T]:
    """``items`` (best first) with those contested by another of ``items`` moved to the end, in order."""
    if not any(memory(i).contested_by for i in items):
        return list(items)
    present = {memory(i).id for i in items}
    moved = [i for i in items if not present.isdisjoint(memory(i).contested_by)]
    gone = {memory(i).id for i in moved}
    return [i for i in items if memory(i).id not in gone] + moved
