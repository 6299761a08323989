"""The learned turn filter: a logistic regression over ``turn_features.FEATURES``. Pure.

``probability`` is the chance that a turn carries a fact about the member; the rule extractor reads only
the turns at or above ``keep_at`` (the others stay context: an advisor's question is still read with the
answer it gets). The weights ship as a small JSON file with a manifest
(``carnet/calibration/turn-filter.json``: the data it was trained on and their checksums, the commit, the
leave-one-writer-out figures), written by ``carnet extract train`` and read back here: plain numbers,
never a pickle.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from carnet.domain.extraction.turn_features import FEATURES, MEMBER_ROLES, turn_features
from carnet.domain.intake import Message


class TurnModelError(ValueError):
    """The turn filter's file is not one this code can use (other features, wrong sizes, bad numbers)."""


@dataclass(frozen=True, slots=True)
class TurnModel:
    version: str
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    keep_at: float

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(w * (v - m) / s for w, v, m, s in zip(self.weights, x, self.mean, self.scale, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def keep(self, messages: Sequence[Message], *, ongoing: bool = False) -> list[bool] | None:
        """For each message of one call: is it read for facts? ``None``: the call is read whole, as
        without a filter. The filter was learned on dialogues (the member's side and the advisor's); a
        text of one side only (dictated notes, a member's messages alone) is outside what it learned."""
        found = self.probabilities(messages, ongoing=ongoing)
        return None if found is None else [p >= self.keep_at for p in found]

    def probabilities(self, messages: Sequence[Message], *, ongoing: bool = False) -> list[float] | None:
        """Each message's probability of carrying a fact; ``None`` outside dialogues (``keep``).
        ``ongoing``: see ``turn_features``."""
        if not dialogue(messages):
            return None
        return [self.probability(x) for x in turn_features(messages, ongoing=ongoing)]

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> TurnModel:
        features = data.get("features")
        if not isinstance(features, list) or tuple(features) != FEATURES:
            raise TurnModelError("the turn filter's features are not the ones this version computes")
        mean, scale, weights = (tuple(_numbers(data, k)) for k in ("mean", "scale", "weights"))
        if not len(mean) == len(scale) == len(weights) == len(FEATURES) or min(scale) <= 0:
            raise TurnModelError("the turn filter's arrays do not match its features")
        keep_at = _number(data, "keep_at")
        if not 0.0 <= keep_at <= 1.0:
            raise TurnModelError("the turn filter's keep_at must be within [0, 1]")
        version = data.get("version")
        if not isinstance(version, str) or not version:
            raise TurnModelError("the turn filter's file names no version")
        return cls(version, mean, scale, weights, _number(data, "bias"), keep_at)

    def to_mapping(self) -> dict[str, object]:
        return {"version": self.version, "features": list(FEATURES), "mean": _rounded(self.mean),
                "scale": _rounded(self.scale), "weights": _rounded(self.weights), "bias": round(self.bias, 6),
                "keep_at": round(self.keep_at, 4)}


def dialogue(messages: Sequence[Message]) -> bool:
    """Both sides speak: the member's (``MEMBER_ROLES``) and the call center's."""
    roles = {m.role.strip().lower() for m in messages} - {"system"}
    return bool(roles & MEMBER_ROLES) and bool(roles - MEMBER_ROLES)


def _numbers(data: Mapping[str, object], key: str) -> list[float]:
    value = data.get(key)
    if not isinstance(value, list) or not all(_is_number(v) for v in value):
        raise TurnModelError(f"the turn filter's {key!r} must be a list of finite numbers")
    return [float(v) for v in value]


def _number(data: Mapping[str, object], key: str) -> float:
    value = data.get(key)
    if not _is_number(value):
        raise TurnModelError(f"the turn filter's {key!r} must be a finite number")
    return float(value)  # type: ignore[arg-type]


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _rounded(values: Sequence[float]) -> list[float]:
    return [round(v, 6) for v in values]
