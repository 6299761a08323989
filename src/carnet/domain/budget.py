"""Packing records into per-tier token budgets."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class TierBudget:
    max_items: int
    max_tokens: int

    def __post_init__(self) -> None:
        if self.max_items < 0 or self.max_tokens < 0:
            raise ValueError("budgets cannot be negative")


def pack(items: Sequence[T], budget: TierBudget, cost: Callable[[T], int], *,
         open_chunk: Callable[[Sequence[T]], Sequence[T]] | None = None) -> tuple[list[T], int]:
    """Greedy in rank order: take each item that still fits; skip (not stop at) one that does not,
    so a long record never hides shorter, lower-ranked ones. Returns the items and tokens used.

    ``open_chunk`` makes the items readable (decrypts them) before their cost is known. It is called
    on as few items as the packing can need: as many as there are places left, again while places
    remain, so a record that cannot be chosen is never opened."""
    chosen: list[T] = []
    used = 0
    start = 0
    while start < len(items) and len(chosen) < budget.max_items:
        chunk = items[start : start + budget.max_items - len(chosen)]
        start += len(chunk)
        for item in open_chunk(chunk) if open_chunk is not None else chunk:
            c = cost(item)
            if used + c > budget.max_tokens:
                continue
            chosen.append(item)
            used += c
    return chosen, used
