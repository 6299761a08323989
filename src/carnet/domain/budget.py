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


def pack(items: Sequence[T], budget: TierBudget, cost: Callable[[T], int]) -> tuple[list[T], int]:
    """Greedy in rank order: take each item that still fits; skip (not stop at) one that does not,
    so a long record never hides shorter, lower-ranked ones. Returns the items and tokens used."""
    chosen: list[T] = []
    used = 0
    for item in items:
        if len(chosen) >= budget.max_items:
            break
        c = cost(item)
        if used + c > budget.max_tokens:
            continue
        chosen.append(item)
        used += c
    return chosen, used
