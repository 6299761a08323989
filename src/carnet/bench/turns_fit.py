"""Fitting the turn filter (``carnet extract train``): the supersession judge's recipe on labelled turns.

Rows are the turns of the labelled files' calls (``turns_align``: a turn is 1 when it carries one of the
member's facts); the model is ``judge_fit.fit`` (L2 logistic regression by Newton's method, classes
balanced, deterministic). ``keep_at`` is chosen on the training rows only: the probability that
maximises F1 of the kept turns against the labels (precision and recall weighed alike; no figure of a
held-out file, no target of the issue enters it).

Figures, per file (one writer per file), turn level: ``kept_per_call`` (turns the extractor reads),
``recall`` (labelled turns kept), ``precision`` (kept turns that are labelled), ``facts_per_call``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from carnet.bench.judge import _commit
from carnet.bench.judge_fit import L2, fit
from carnet.bench.report import progress
from carnet.bench.turns_align import MIN_SHARE, Aligned, load_all
from carnet.domain.extraction.turn_features import FEATURES
from carnet.domain.extraction.turn_model import TurnModel
from carnet.ports.llm import Extractor


def _xy(files: Sequence[Aligned]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([r for a in files for c in a.calls for r in c.rows], dtype=float)
    y = np.array([float(lab) for a in files for c in a.calls for lab in c.labels])
    return x, y


def choose_keep_at(p: np.ndarray, y: np.ndarray) -> float:
    """The probability (rounded to 4 decimals) at or above which kept turns have the best F1."""
    order = np.argsort(-p, kind="stable")
    ps, ys = np.round(p[order], 4), y[order]
    kept_pos = np.cumsum(ys)
    kept = np.arange(1, len(ys) + 1)
    f1 = 2 * kept_pos / (kept + ys.sum())
    last_of_tie = np.r_[ps[1:] != ps[:-1], True]  # a threshold keeps every turn of its probability
    best = int(np.argmax(np.where(last_of_tie, f1, -1.0)))
    return float(ps[best])


def train(files: Sequence[Aligned], *, version: str, l2: float = L2) -> TurnModel:
    x, y = _xy(files)
    mean, scale, weights, bias = fit(x, y, l2=l2)
    draft = TurnModel(version, tuple(float(v) for v in mean), tuple(float(v) for v in scale),
                      tuple(float(v) for v in weights), bias, 0.5)
    p = np.array([draft.probability(r) for r in x])
    return TurnModel(draft.version, draft.mean, draft.scale, draft.weights, draft.bias, choose_keep_at(p, y))


def score(model: TurnModel, aligned: Aligned) -> dict[str, Any]:
    kept = labelled = hits = 0
    for call in aligned.calls:
        for row, label in zip(call.rows, call.labels, strict=True):
            k = model.probability(row) >= model.keep_at
            kept += k
            labelled += label
            hits += k and label
    calls = len(aligned.calls) or 1
    return {"file": aligned.name, "calls": len(aligned.calls), "turns": sum(len(c.rows) for c in aligned.calls),
            "kept_per_call": round(kept / calls, 3), "labelled_per_call": round(labelled / calls, 3),
            "facts_per_call": round(aligned.facts / calls, 3),
            "recall": round(hits / labelled, 4) if labelled else None,
            "precision": round(hits / kept, 4) if kept else None, "unaligned_facts": aligned.unaligned}


def fit_without(files: Sequence[Aligned], held_out: str | None, *, version: str) -> TurnModel:
    return train([a for a in files if a.name != held_out and a.calls], version=version)


def leave_one_out(files: Sequence[Aligned]) -> list[dict[str, Any]]:
    out = []
    for a in files:
        if not a.calls:
            continue
        model = fit_without(files, a.name, version=f"loo-{a.name}")
        out.append({**score(model, a), "keep_at": model.keep_at})
    return out


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float:
        values = [float(r[key]) for r in rows if r.get(key) is not None]
        return round(sum(values) / len(values), 4) if values else 0.0

    return {"recall_mean": mean("recall"), "recall_worst": min((r["recall"] for r in rows if r["recall"] is not None),
                                                                default=0.0),
            "precision_mean": mean("precision"), "kept_per_call_mean": mean("kept_per_call"), "files": list(rows)}


def train_command(*, data: Sequence[Path], out: Path, version: str, meaning: bool = False) -> dict[str, Any]:
    """Align every file (``meaning``: facts no turn holds the words of, by the embedder too), measure
    leave-one-writer-out, fit on all of them; write weights and manifest."""
    progress(f"turns: aligning {len(data)} file(s) (pseudonymised by the write path's detector)")
    files = load_all(data, meaning=meaning)
    held_out = leave_one_out(files)
    model = fit_without(files, None, version=version)
    fitted = [score(model, a) for a in files if a.calls]
    doc: dict[str, Any] = {"model": model.to_mapping(), "manifest": {
        "version": version, "trained_by": "carnet extract train", "commit": _commit(), "l2": L2,
        "min_share": MIN_SHARE, "aligned_by_meaning": meaning, "features": list(FEATURES),
        "data": [{"file": a.path.name, "sha256": hashlib.sha256(a.path.read_bytes()).hexdigest(),
                  "calls": len(a.calls), "turns": sum(len(c.rows) for c in a.calls), "facts": a.facts,
                  "unaligned": a.unaligned} for a in files],
        "leave_one_out": summary(held_out),
        "fit_on_training_data": summary(fitted),
        "sample": sample(TurnModel.from_mapping(model.to_mapping())),
    }}
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    _show(summary(held_out), version, out)
    return doc


def sample(model: TurnModel) -> list[dict[str, Any]]:
    """Fixed rows (the training mean, one standard deviation either way) with the model's probability: a
    test re-scores them, so weights that do not read back as written are caught."""
    rows = [list(model.mean), [m + s for m, s in zip(model.mean, model.scale, strict=True)],
            [m - s for m, s in zip(model.mean, model.scale, strict=True)]]
    return [{"x": [round(v, 6) for v in r], "p": round(model.probability([round(v, 6) for v in r]), 6)} for r in rows]


def fold_extractors(paths: Sequence[Path], *, join_runs: bool = False, weigh: bool = False,
                    meaning: bool = False) -> Callable[[Sequence[Path]], Extractor | None]:
    """For ``bench scenarios --leave-one-out``: the files aligned once, then for each fold the rule
    extractor with a turn filter fitted on the files it may learn from."""
    from carnet.adapters.extractors.rules import RuleExtractor

    files = load_all([p for p in paths if _has_calls(p)], meaning=meaning)

    def make(others: Sequence[Path]) -> Extractor | None:
        names = {p.stem for p in others}
        kept = [a for a in files if a.name in names and a.calls]
        return RuleExtractor(train(kept, version="fold"), join_runs=join_runs, weigh=weigh) if kept else None

    return make


def _has_calls(path: Path) -> bool:
    spec = json.loads(path.read_text(encoding="utf-8"))
    return any("calls" in s for t in spec["tenants"].values() for s in t["subjects"].values())


def _show(s: dict[str, Any], version: str, out: Path) -> None:
    print(f"turn filter {version}: written to {out}")
    print(f"leave-one-out: recall of labelled turns {s['recall_mean']:.3f} mean, {s['recall_worst']:.3f} worst; "
          f"precision {s['precision_mean']:.3f}; turns kept per call {s['kept_per_call_mean']:.2f}")
    for f in s["files"]:
        print(f"  {f['file']:28s} kept/call {f['kept_per_call']:.2f} (labelled {f['labelled_per_call']:.2f}, "
              f"facts {f['facts_per_call']:.2f})  recall {f['recall']}  precision {f['precision']}  "
              f"keep_at {f.get('keep_at', '')}")
