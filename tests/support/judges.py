"""Judge files for tests of the LLM cascade: written as `carnet judge train` writes them and loaded through
``CARNET_JUDGE_PATH``, so the wiring's real loading path is used; their answer does not depend on the
learned weights (every feature weighted 0: every pair gets the same probability, 0.5)."""

from __future__ import annotations

import json
from pathlib import Path

from carnet.domain.reconcile.decide import Incoming
from carnet.domain.reconcile.evidence import FEATURES
from carnet.domain.records import Memory


def judge_file(directory: Path, *, close_at: float, ask_from: float, bias: float = 0.0) -> Path:
    n = len(FEATURES)
    path = directory / f"judge-{close_at}-{ask_from}-{bias}.json"
    path.write_text(json.dumps({"model": {
        "version": "test", "features": list(FEATURES), "mean": [0.0] * n, "scale": [1.0] * n,
        "weights": [0.0] * n, "bias": bias, "close_at": close_at, "ask_from": ask_from}, "manifest": {}}),
        encoding="utf-8")
    return path


def always_uncertain(directory: Path) -> Path:
    """Every candidate in the uncertain band: the LLM is asked about each one (a pair showing no sign of change,
    ``evidence.says_change``, is not contested meanwhile, nor when no LLM answers: ``judge_model.contests``)."""
    return judge_file(directory, close_at=0.9, ask_from=0.4)


def never_uncertain(directory: Path) -> Path:
    """Every candidate below the band: nothing closed, the LLM never asked."""
    return judge_file(directory, close_at=0.9, ask_from=0.9)


class Pairs:
    """A ``PairJudge`` that closes exactly the (older text, newer text) pairs a test's story names, for tests
    of what happens around a closure (candidates, summaries, history), not of the learned weights."""

    close_at, ask_from = 0.5, 0.5

    def contests(self, x: tuple[float, ...]) -> bool:  # every uncertain pair is contested until settled
        return True

    def __init__(self, *pairs: tuple[str, str]) -> None:
        self.pairs = set(pairs)
        self.asked: list[tuple[str, str]] = []

    def judge(self, older: Memory | Incoming, newer: Memory | Incoming, x: tuple[float, ...]) -> float:
        self.asked.append((older.text, newer.text))
        return 1.0 if (older.text, newer.text) in self.pairs else 0.0
