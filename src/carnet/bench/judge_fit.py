"""Fitting the supersession judge (``carnet judge train``): L2-regularised logistic regression by
Newton's method, classes balanced, deterministic (no random state: the same rows give the same
weights to the last digit). Pure numpy, so ``carnet judge train`` needs nothing the service does not
already have.

The thresholds are chosen on the training rows only (``choose_thresholds``): ``close_at`` is the lowest
probability at which the training writers' false closures stay within ``max_false`` of their facts,
``ask_from`` the lowest at which the judge's misses would be worth a question to an LLM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from carnet.domain.reconcile.judge_model import SupersessionModel

L2 = 1.0  # the penalty on standardised weights (chosen leave-one-writer-out, docs/benchmarks.md)


BAND_PRECISION = 0.5  # the LLM is asked where the judge is no better than a coin: one note in two is a closure


def fit(x: np.ndarray, y: np.ndarray, *, l2: float = L2, iterations: int = 50) -> tuple[np.ndarray, np.ndarray,
                                                                                           np.ndarray, float]:
    """``(mean, scale, weights, bias)`` of a logistic regression on standardised ``x`` (rows × features)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    pos = max(int(y.sum()), 1)
    weight = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * max(len(y) - pos, 1)))
    theta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not penalised
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ theta, -60, 60)))
        grad = z.T @ (weight * (p - y)) + penalty * theta
        hess = (z * (weight * p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return mean, scale, theta[:-1], float(theta[-1])


@dataclass(frozen=True, slots=True)
class Choice:
    """One new note's candidates: their evidence rows and whether each is the labelled older record."""

    rows: tuple[tuple[float, ...], ...]
    labels: tuple[bool, ...]


def _tops(judge: SupersessionModel, choices: Sequence[Choice]) -> list[tuple[float, bool]]:
    """Each note's most probable candidate: its probability and whether it is the labelled one."""
    out = []
    for c in choices:
        if c.rows:
            scores = [judge.probability(r) for r in c.rows]
            best = max(range(len(scores)), key=lambda k: scores[k])
            out.append((scores[best], c.labels[best]))
    return out


def closures(judge: SupersessionModel, choices: Sequence[Choice], threshold: float) -> tuple[int, int]:
    """(right, wrong) closures when each note closes its most probable candidate at or above ``threshold``."""
    tops = [label for p, label in _tops(judge, choices) if p >= threshold]
    return sum(tops), len(tops) - sum(tops)


def choose_thresholds(judge: SupersessionModel, choices: Sequence[Choice], facts: int, *,
                      max_false: float, band_precision: float = BAND_PRECISION) -> tuple[float, float]:
    """``(close_at, ask_from)`` on the training rows: the lowest of the notes' top probabilities (rounded
    to 4 decimals) at which the false closures stay within ``max_false`` of ``facts``; below it, the
    lowest at which one note in two (``band_precision``) of the band it opens is a right closure (the
    band an LLM is asked about: a cost bound on its calls, not a figure tuned on a file). Every
    threshold tried is a probability the training notes reach: no grid to clamp at."""
    tops = sorted(((round(p, 4), label) for p, label in _tops(judge, choices)), reverse=True)
    right = wrong = 0
    counted: list[tuple[float, int, int]] = []  # (threshold, right, wrong) for closing at or above it
    for k, (p, label) in enumerate(tops):
        right, wrong = right + label, wrong + (not label)
        if k + 1 == len(tops) or tops[k + 1][0] != p:
            counted.append((p, right, wrong))
    within = [t for t, _, w in counted if w <= max_false * facts]
    close_at = min(within) if within else 1.0
    base = next(((r, w) for t, r, w in counted if t == close_at), (0, 0))
    band = [t for t, r, w in counted if t < close_at
            and (r - base[0]) >= band_precision * ((r - base[0]) + (w - base[1]))]
    ask_from = min(band) if band else close_at
    return close_at, ask_from


def train(choices: Sequence[Choice], facts: int, *, version: str, max_false: float,
          l2: float = L2, band_precision: float = BAND_PRECISION) -> SupersessionModel:
    """Fit on every candidate row of ``choices``, then choose the thresholds on the same notes."""
    x = np.array([r for c in choices for r in c.rows], dtype=float)
    y = np.array([float(lab) for c in choices for lab in c.labels])
    mean, scale, weights, bias = fit(x, y, l2=l2)
    draft = SupersessionModel(version, tuple(float(v) for v in mean), tuple(float(v) for v in scale),
                              tuple(float(v) for v in weights), bias, 0.5, 0.5)
    close_at, ask_from = choose_thresholds(draft, choices, facts, max_false=max_false, band_precision=band_precision)
    return SupersessionModel(draft.version, draft.mean, draft.scale, draft.weights, draft.bias, close_at, ask_from)
