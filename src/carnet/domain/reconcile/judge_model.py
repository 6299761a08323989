"""The learned supersession judge: a logistic regression over ``evidence.FEATURES``. Pure.

Its weights ship as a small JSON file with a manifest (``carnet/judge/supersession.json``: the data it was
trained on and their checksums, the commit, the leave-one-writer-out figures), written by ``carnet judge
train`` and read back here: plain numbers, never a pickle. ``probability`` is the chance that the newer note
makes the older record untrue; at or above ``close_at`` reconcile closes the record, in ``[ask_from,
close_at)`` the pair is uncertain (an LLM, when configured, decides), below it the two stand side by side.
A pair whose evidence shows no way of saying a state changed is never closed by the model alone (``judge``)
and never ranks the older record after the newer note (``contests``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from carnet.domain.reconcile.evidence import FEATURES, says_change


class ModelFileError(ValueError):
    """The judge's file is not one this code can use (other features, wrong sizes, bad numbers)."""


@dataclass(frozen=True, slots=True)
class SupersessionModel:
    version: str
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    close_at: float
    ask_from: float

    def judge(self, older: object, newer: object, x: Sequence[float]) -> float:
        """``decide``'s ``PairJudge``: the evidence alone decides (the notes themselves are not read). A pair
        whose evidence shows no way of saying a state changed (``evidence.says_change``) that the model
        would close is only uncertain, just below ``close_at``: an LLM decides, or the record is contested."""
        p = self.probability(x)
        if p >= self.close_at and not says_change(x):
            return math.nextafter(self.close_at, 0.0)
        return p

    def contests(self, x: Sequence[float]) -> bool:
        """While an uncertain pair waits for an LLM's answer, or has none (no LLM configured, or its call
        failed), is the older record ranked after the newer note (``domain.contested``)? Only when the
        evidence says a state changed (``evidence.says_change``): two notes that are only alike are two
        facts, however sure the model is of their likeness ("a un chien, un labrador" then "a aussi un
        chat"), and a contest would rank a true record after a note that did not replace them. An LLM is
        asked about every pair of the band all the same: a wrong "no" there costs one call, not a true
        record's rank. (Against also contesting what the model alone would close: docs/benchmarks.md, "No
        contest on likeness alone".)"""
        return says_change(x)

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(w * (v - m) / s for w, v, m, s in zip(self.weights, x, self.mean, self.scale, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> SupersessionModel:
        if tuple(_strings(data, "features")) != FEATURES:
            raise ModelFileError("the judge's features are not the ones this version computes")
        mean, scale, weights = (tuple(_numbers(data, k)) for k in ("mean", "scale", "weights"))
        if not len(mean) == len(scale) == len(weights) == len(FEATURES) or min(scale) <= 0:
            raise ModelFileError("the judge's arrays do not match its features")
        close_at, ask_from = _number(data, "close_at"), _number(data, "ask_from")
        if not 0.0 <= ask_from <= close_at <= 1.0:
            raise ModelFileError("the judge's thresholds must satisfy 0 <= ask_from <= close_at <= 1")
        version = data.get("version")
        if not isinstance(version, str) or not version:
            raise ModelFileError("the judge's file names no version")
        return cls(version, mean, scale, weights, _number(data, "bias"), close_at, ask_from)

    def to_mapping(self) -> dict[str, object]:
        return {"version": self.version, "features": list(FEATURES), "mean": _rounded(self.mean),
                "scale": _rounded(self.scale), "weights": _rounded(self.weights), "bias": round(self.bias, 6),
                "close_at": self.close_at, "ask_from": self.ask_from}


def _strings(data: Mapping[str, object], key: str) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ModelFileError(f"the judge's {key!r} must be a list of strings")
    return [str(v) for v in value]


def _numbers(data: Mapping[str, object], key: str) -> list[float]:
    value = data.get(key)
    if not isinstance(value, list) or not all(_is_number(v) for v in value):
        raise ModelFileError(f"the judge's {key!r} must be a list of finite numbers")
    return [float(v) for v in value]


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number(data: Mapping[str, object], key: str) -> float:
    value = data.get(key)
    if not isinstance(value, int | float) or not _is_number(value):
        raise ModelFileError(f"the judge's {key!r} must be a finite number")
    return float(value)


def _rounded(values: Sequence[float]) -> list[float]:
    return [round(v, 6) for v in values]
