"""``carnet bench judge`` and ``carnet judge train``: the supersession judge on labelled files.

Every figure is per file (one writer per file). ``--leave-one-out`` trains on every file but one and
measures on that one, for each in turn: the mean and the worst file are the headline. ``--judge oracle``
answers with the labels, so what candidate generation and dedup alone allow is visible.

Measures, per file:
- ``hidden``: labelled superseded facts that reconcile closed (any closing note at or after the label's);
- ``false_closures``: closures no label supports, as a share of the file's facts (``false_share``);
- ``merges_lost``: facts folded into another record (each labelled fact is a statement of its own);
- ``candidate_recall``: labelled older facts among the records handed to the judge when their newer one
  was written (a fact merged away never reaches the judge: a miss);
- ``late_hidden``: with ``--late``, labelled older facts written after the others that were stored closed;
- ``uncertain``: notes whose best candidate fell in the judge's uncertain band (an LLM would be asked);
- ``ranked_after``: labelled older facts left active but contested by their newer note (or a later
  one), so a search finding both shows the newer first (``domain.contested``); ``shown_current``:
  ``hidden`` plus those, as a share of the labelled; ``false_contested``: facts contested by a note no
  label says replaces them, as a share of facts (a true fact ranked after a note that did not replace it);
- ``llm_calls``: with ``--llm labels``, writes whose uncertain candidates went to the cascade's LLM step,
  answered by the labels (an LLM always right): its ``hidden`` is the bound the cascade can reach, its
  ``llm_calls`` what it costs (``llm_share`` of the facts written).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from carnet.bench.judge_fit import BAND_PRECISION, L2, Choice, train
from carnet.bench.judge_run import Labelled, LlmStep, SubjectRun, choices, closes_by_label, load, run_file
from carnet.bench.report import progress
from carnet.domain.corrections import CorrectionPair
from carnet.domain.reconcile.decide import PairJudge
from carnet.domain.reconcile.evidence import FEATURES
from carnet.domain.reconcile.judge_model import SupersessionModel

MAX_FALSE = 0.03  # the bound on false closures, as a share of facts, used to choose ``close_at``


@dataclass(frozen=True, slots=True)
class FileScore:
    file: str
    facts: int
    labelled: int
    hidden: int
    false_closures: int
    merges_lost: int
    candidate_hits: int
    late: int
    late_hidden: int
    uncertain: int
    llm_calls: int = 0
    ranked_after: int = 0
    false_contested: int = 0
    llm_failed: int = 0  # calls a real model failed (``--llm mistral``)

    @property
    def hidden_share(self) -> float:
        return self.hidden / self.labelled if self.labelled else 1.0

    @property
    def shown_current(self) -> float:
        return (self.hidden + self.ranked_after) / self.labelled if self.labelled else 1.0

    @property
    def false_share(self) -> float:
        return self.false_closures / self.facts if self.facts else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "hidden_share": round(self.hidden_share, 4), "false_share": round(self.false_share, 4),
                "shown_current": round(self.shown_current, 4),
                "false_contested_share": round(self.false_contested / self.facts, 4) if self.facts else 0.0,
                "candidate_recall": round(self.candidate_hits / self.labelled, 4) if self.labelled else 1.0}


def score(name: str, runs: Sequence[SubjectRun], judge: PairJudge | None) -> FileScore:
    facts = labelled = hidden = false = merges = hits = late = late_hidden = uncertain = llm_calls = 0
    after = false_contested = llm_failed = 0
    for run in runs:
        labels = run.subject.labels
        closed_olds = {o for o, _ in run.closed}
        after += len({o for o, _ in labels if o not in closed_olds
                      and any(c == o and closes_by_label(labels, o, b) for c, b in run.contested)})
        false_contested += len({o for o, b in run.contested if not closes_by_label(labels, o, b)})
        asked = {(a.older, a.newer) for a in run.asked}
        facts += len(run.subject.facts)
        labelled += len(labels)
        hidden += sum(o in closed_olds for o, _ in labels)
        false += sum(not closes_by_label(labels, o, b) for o, b in run.closed)
        merges += len(run.merged)
        hits += sum((o, b) in asked for o, b in labels)
        late += len(run.late)
        late_hidden += sum(o in closed_olds for o in run.late)
        llm_calls += run.llm_calls
        llm_failed += run.llm_failed
        if judge is not None:
            uncertain += _uncertain(run, judge)
    return FileScore(name, facts, labelled, hidden, false, merges, hits, late, late_hidden, uncertain, llm_calls,
                     after, false_contested, llm_failed)


def _uncertain(run: SubjectRun, judge: PairJudge) -> int:
    best: dict[int, float] = {}
    for a in run.asked:
        best[a.writing] = max(best.get(a.writing, 0.0), a.p)
    return sum(judge.ask_from <= p < judge.close_at for p in best.values())


def summary(scores: Sequence[FileScore]) -> dict[str, Any]:
    shares = [s.hidden_share for s in scores]
    labelled = sum(s.labelled for s in scores)
    return {
        "hidden_mean": round(sum(shares) / len(shares), 4) if shares else 0.0,
        "hidden_worst": round(min(shares), 4) if shares else 0.0,
        "false_share_mean": round(sum(s.false_share for s in scores) / len(scores), 4) if scores else 0.0,
        "candidate_recall": round(sum(s.candidate_hits for s in scores) / labelled, 4) if labelled else 1.0,
        "merges_lost": sum(s.merges_lost for s in scores),
        "late_hidden": f"{sum(s.late_hidden for s in scores)}/{sum(s.late for s in scores)}",
        "shown_current_mean": round(sum(s.shown_current for s in scores) / len(scores), 4) if scores else 0.0,
        "shown_current_worst": round(min(s.shown_current for s in scores), 4) if scores else 0.0,
        "false_contested_share_mean": round(sum(s.false_contested / s.facts for s in scores if s.facts)
                                            / len(scores), 4) if scores else 0.0,
        "llm_share": round(sum(s.llm_calls for s in scores) / max(sum(s.facts for s in scores), 1), 4),
        "llm_failed": sum(s.llm_failed for s in scores),
        "files": [s.to_dict() for s in scores],
    }


def to_choices(runs: Sequence[SubjectRun]) -> list[Choice]:
    return [Choice(rows, labels) for rows, labels in choices(runs)]


_UNUSED = SupersessionModel("unused", (0.0,) * len(FEATURES), (1.0,) * len(FEATURES), (0.0,) * len(FEATURES), 0.0,
                            1.0, 1.0)


class Session:
    """One temporary embedded store for a whole command; each run writes under its own subject prefix."""

    def __init__(self) -> None:
        from carnet.bootstrap.wiring import build
        from carnet.settings.root import Settings

        self._tmp = tempfile.TemporaryDirectory(prefix="carnet-judge-")
        # Every run hands reconcile its own judge (``Recorder``): the container's is never asked, and the
        # shipped file is not read (it may read other features than this code computes, when training anew).
        self._container = build(Settings(data_dir=Path(self._tmp.name) / "data", locale="fr"), supersession=_UNUSED)
        self.deps = self._container.deps
        self._runs = 0

    def run(self, labelled: Labelled, judge: PairJudge | None, *, late_share: float = 0.0,
            llm: LlmStep | None = None) -> list[SubjectRun]:
        self._runs += 1
        return run_file(self.deps, labelled, judge, prefix=f"r{self._runs}-", late_share=late_share, llm=llm)

    def close(self) -> None:
        self._container.close()
        self._tmp.cleanup()


def oracle_rows(session: Session, files: Sequence[Labelled]) -> dict[str, tuple[list[Choice], int]]:
    """Each file written with the labels as the judgment: the rows a model learns from."""
    out = {}
    for f in files:
        progress(f"judge: reading {f.name} with the labels")
        out[f.name] = (to_choices(session.run(f, None)), f.facts)
    return out


def fit_without(rows: dict[str, tuple[list[Choice], int]], held_out: str | None, *, version: str,
                max_false: float, extra: Sequence[Choice] = (),
                band_precision: float = BAND_PRECISION) -> SupersessionModel:
    kept = [c for name, (cs, _) in sorted(rows.items()) if name != held_out for c in cs] + list(extra)
    facts = sum(n for name, (_, n) in rows.items() if name != held_out)
    return train(kept, facts, version=version, max_false=max_false, band_precision=band_precision)


def leave_one_out(session: Session, files: Sequence[Labelled], rows: dict[str, tuple[list[Choice], int]], *,
                  late_share: float, max_false: float, keep: Path | None = None, llm: LlmStep | None = None,
                  band_precision: float = BAND_PRECISION) -> list[FileScore]:
    """Each file measured by the judge fitted without it; ``keep``: a directory where each of those judges
    is written (``without-<file>.json``), so other benchmarks can measure the file with it."""
    scores = []
    for f in files:
        model = fit_without(rows, f.name, version=f"loo-{f.name}", max_false=max_false,
                            band_precision=band_precision)
        progress(f"judge: {f.name} held out (close_at {model.close_at:.2f}, ask_from {model.ask_from:.2f})")
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            doc = {"model": model.to_mapping(), "manifest": {"held_out": f.path.name, "max_false": max_false}}
            (keep / f"without-{f.name}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        scores.append(score(f.name, session.run(f, model, late_share=late_share, llm=llm), model))
    return scores


def run(*, data: Sequence[Path], judge: str, leave_one_out_: bool, late_share: float, json_out: bool,
        judge_path: Path | None = None, llm: LlmStep | None = None,
        band_precision: float = BAND_PRECISION) -> dict[str, Any]:
    from carnet.adapters.local.judge_file import JUDGE_FILE, load_judge
    from carnet.bootstrap.wiring import CALIBRATION_DIR

    files = [load(p) for p in sorted(data)]
    session = Session()
    try:
        if leave_one_out_:
            rows = oracle_rows(session, files)
            scores = leave_one_out(session, files, rows, late_share=late_share, max_false=MAX_FALSE, llm=llm,
                                   band_precision=band_precision)
            mode = "leave-one-out"
        else:
            shipped = None if judge == "oracle" else load_judge(judge_path or CALIBRATION_DIR / JUDGE_FILE)
            asks = llm if shipped is not None else None
            scores = [score(f.name, session.run(f, shipped, late_share=late_share, llm=asks), shipped) for f in files]
            mode = judge
    finally:
        session.close()
    result = {"mode": mode, "late_share": late_share, "llm": llm.name if llm else None,
              "llm_error": llm.error if llm else 0.0,
              "band_precision": band_precision, **summary(scores)}
    _show(result)
    if json_out:
        print(json.dumps(result, ensure_ascii=False))
    return result


_LLM_SHOWN = {"labels": "always right", "mistral": "the configured Mistral"}


def _show(result: dict[str, Any]) -> None:
    print(f"judge ({result['mode']}): hidden mean {result['hidden_mean']:.3f}, worst {result['hidden_worst']:.3f}; "
          f"false closures {result['false_share_mean']:.3%} of facts; candidate recall "
          f"{result['candidate_recall']:.3f}; merges lost {result['merges_lost']}; late hidden {result['late_hidden']}"
          + (f"; LLM ({_LLM_SHOWN.get(result['llm'], result['llm'])}) called on {result['llm_share']:.1%} of writes"
             + (f", {result['llm_failed']} calls failed (those writes stand)" if result["llm_failed"] else "")
             if result.get("llm") else "")
          + f"\n  hidden or ranked after the newer note (contested): mean {result['shown_current_mean']:.3f}, worst "
            f"{result['shown_current_worst']:.3f}; false contests {result['false_contested_share_mean']:.2%} of facts")
    for f in result["files"]:
        print(f"  {f['file']:30s} hidden {f['hidden']}/{f['labelled']}  false {f['false_closures']} "
              f"({f['false_share']:.1%})  merges lost {f['merges_lost']}  candidates {f['candidate_recall']:.2f}  "
              f"late {f['late_hidden']}/{f['late']}  uncertain {f['uncertain']}  LLM calls {f['llm_calls']}  "
              f"ranked after {f['ranked_after']}  false contests {f['false_contested']}")


def correction_rows(deps: Any, pairs: Sequence[CorrectionPair]) -> list[Choice]:
    """A site's corrections (``services/memories/corrections``) as training rows: each pair is one the
    judge closed and a person restored, so a row labelled "not superseded", its evidence read from the
    pseudonymised texts and their dates as reconcile read them (embedded as ``remember`` embeds a
    note; it was the note's nearest candidate, since the judge closed it; no blind-index token kept)."""
    from carnet.domain.embedding_text import embedding_text
    from carnet.domain.reconcile import evidence

    out = []
    for pair in pairs:
        texts = [embedding_text(t, at=at, locale=deps.locale) for t, at in
                 ((pair.older, pair.older_valid_from), (pair.newer, pair.newer_valid_from))]
        vectors = deps.embedder.embed_passages(texts)
        cosine = float(vectors[0] @ vectors[1])
        sides = [evidence.Side(evidence.read(t), at, frozenset()) for t, at in
                 ((pair.older, pair.older_valid_from), (pair.newer, pair.newer_valid_from))]
        out.append(Choice((evidence.features(sides[0], sides[1], cosine=cosine, rank=1, best=cosine),), (False,)))
    return out


def train_command(*, data: Sequence[Path], out: Path, max_false: float, version: str,
                  keep: Path | None = None, corrections: Sequence[CorrectionPair] = (),
                  band_precision: float = BAND_PRECISION) -> dict[str, Any]:
    """Fit on every file (and a site's corrections, when given); measure leave-one-out with the same
    recipe (the files only); write weights and manifest."""
    files = [load(p) for p in sorted(data)]
    session = Session()
    try:
        rows = oracle_rows(session, files)
        scores = leave_one_out(session, files, rows, late_share=0.0, max_false=max_false, keep=keep,
                               band_precision=band_precision)
        extra = correction_rows(session.deps, corrections)
        model = fit_without(rows, None, version=version, max_false=max_false, extra=extra,
                            band_precision=band_precision)
        progress("judge: the files again with the judge fitted on all of them (a fit, not a held-out figure)")
        fit_scores = [score(f.name, session.run(f, model), model) for f in files]
        embedding_model = session.deps.embedder.model_id
    finally:
        session.close()
    doc = {"model": model.to_mapping(), "manifest": {
        "version": version, "trained_by": "carnet judge train", "commit": _commit(),
        "embedding_model": embedding_model, "max_false": max_false, "band_precision": band_precision,
        "l2": L2, "corrections": len(corrections),
        "data": [{"file": f.path.name, "sha256": hashlib.sha256(f.path.read_bytes()).hexdigest(),
                  "facts": f.facts, "labelled": sum(len(s.labels) for s in f.subjects)} for f in files],
        "leave_one_out": _figures(summary(scores)),
        "fit_on_training_data": _figures(summary(fit_scores)),
        "sample": sample(SupersessionModel.from_mapping(model.to_mapping())),  # the judge as it reads back
    }}
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"judge {version}: written to {out}")
    _show({"mode": "leave-one-out", **summary(scores)})
    return doc


def sample(model: SupersessionModel) -> list[dict[str, Any]]:
    """Fixed evidence rows (the training mean, and one standard deviation either way) with the judge's
    probability: a test re-scores them, so weights that do not read back as written are caught."""
    rows = [list(model.mean), [m + s for m, s in zip(model.mean, model.scale, strict=True)],
            [m - s for m, s in zip(model.mean, model.scale, strict=True)]]
    return [{"x": [round(v, 6) for v in r], "p": round(model.probability([round(v, 6) for v in r]), 6)} for r in rows]


def _figures(s: dict[str, Any]) -> dict[str, Any]:
    return {k: s[k] for k in ("hidden_mean", "hidden_worst", "false_share_mean", "candidate_recall", "merges_lost")} | {
        "per_file": {f["file"]: {k: f[k] for k in ("hidden", "labelled", "false_closures", "facts")}
                     for f in s["files"]}}


def _commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False,
                              cwd=Path(__file__).resolve().parent)
    except OSError:
        return None
    return done.stdout.strip() or None
