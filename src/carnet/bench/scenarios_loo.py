"""``carnet bench scenarios`` over several files (one writer per file): per file, the mean and the worst.

With ``--leave-one-out`` every learned part is one fitted without the file it is measured on: the
supersession judge is ``DIR/without-<file>.json`` (written by ``carnet judge train --keep-held-out DIR``;
without ``--judge-dir`` the shipped judge is used, which saw every file: the report says so), and with
``--from calls`` the turn filter is fitted on the other files (``turn_fit``) at the start of each fold.

Per file, from calls: records per call against the file's facts per call (and their ratio), noise,
recall@3 on what is said (``said_any`` when the file has it: ``said_basis``), superseded hidden (from
searches), false closures (superseded records that carry no labelled old fact). With the LLM path
(``scenarios_llm``), the share of calls the turn filter sent to the LLM (``llm_share``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from carnet.bench.report import progress
from carnet.bench.scenarios import Source, measure
from carnet.bench.scenarios_calls import MAX_MESSAGES
from carnet.bench.scenarios_report import summary
from carnet.ports.llm import Extractor

# A fold's extractor, given the files it may learn from (None: the rule extractor as configured).
ExtractorFor = Callable[[Sequence[Path]], Extractor | None]
# For each figure: whether the worst file is the lowest (True) or the highest (False).
LOWER_IS_WORSE = {"recall_at_3": True, "recall_at_3_said": True, "superseded_hidden": True,
                  "superseded_hidden_of_all": True, "noise": False,
                  "records_ratio": False, "false_superseded": False, "stale": False, "llm_share": False}
_KEPT = ("recall_at_3", "recall_at_3_said", "said_basis", "expected_said", "superseded_hidden",
         "superseded_hidden_count", "superseded_checked", "superseded_total", "false_superseded",
         "false_superseded_kept", "stale", "records", "episodes", "calls", "facts_per_call", "file_facts_per_call",
         "noise", "dead_intakes", "seconds")


def file_figures(name: str, out: dict[str, Any]) -> dict[str, Any]:
    row = {"file": name, **{k: out.get(k) for k in _KEPT}}
    per_call, file_per_call = out.get("facts_per_call"), out.get("file_facts_per_call")
    total = out.get("superseded_total")
    row["superseded_hidden_of_all"] = round(out["superseded_hidden_count"] / total, 4) if total else None
    row["records_ratio"] = round(per_call / file_per_call, 3) if per_call is not None and file_per_call else None
    return row


def aggregate(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean and worst file of each figure (files where it is ``null`` left out)."""
    out: dict[str, Any] = {}
    for key, lower_is_worse in LOWER_IS_WORSE.items():
        values = [float(r[key]) for r in rows if r.get(key) is not None]
        if values:
            out[key] = {"mean": round(sum(values) / len(values), 4),
                        "worst": min(values) if lower_is_worse else max(values)}
    return out


def run(*, data: Sequence[Path], source: Source, leave_one_out: bool, judge_dir: Path | None,
        judge_path: Path | None, extractor_for: ExtractorFor | None, json_out: bool,
        extraction: str = "as configured", per_post: int = MAX_MESSAGES) -> dict[str, Any]:
    """``extraction`` names what ``extractor_for`` gives (None: the configured extractor), for the report."""
    rows = []
    for path in data:
        others = [p for p in data if p != path] if leave_one_out else list(data)
        judge = judge_dir / f"without-{path.stem}.json" if judge_dir is not None and leave_one_out else judge_path
        if judge is not None and not judge.is_file():
            raise FileNotFoundError(f"no fold judge {judge} (write them with carnet judge train --keep-held-out)")
        extractor = extractor_for(others) if extractor_for is not None else None  # from facts: a judgment only
        progress(f"scenarios: {path.name} (judge {judge.name if judge else 'shipped'})")
        row = file_figures(path.stem, summary(measure(data=path, source=source, judge_path=judge,
                                                      extractor=extractor, per_post=per_post)))
        figures = getattr(extractor, "figures", None)  # the LLM path's (``scenarios_llm.LabelledFold``)
        rows.append({**row, **figures()} if callable(figures) else row)
    result = {"mode": "leave-one-out" if leave_one_out else "fixed", "from": source,
              "judge": "fold judges" if judge_dir is not None and leave_one_out else
              (str(judge_path) if judge_path else "shipped (fitted on every file)"),
              "extraction": extraction if source == "calls" or extractor_for is not None else None,
              "messages_per_post": per_post if source == "calls" else None,
              **aggregate(rows), "files": rows}
    _show(result)
    if json_out:
        print(json.dumps(result, ensure_ascii=False))
    return result


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _llm(row: dict[str, Any]) -> str:
    """The LLM path's counts: the calls sent (from calls) and the judgments asked (the band's writes)."""
    if "llm_sent" not in row:
        return ""
    asked = row.get("llm_labels", {}).get("obsolete_requests", 0)
    return f"  to the LLM {row['llm_sent']}/{row['llm_sent'] + row['llm_skipped']} calls, {asked} judgments"


def _show(result: dict[str, Any]) -> None:
    posted = result.get("messages_per_post")
    print(f"scenarios ({result['mode']}, from {result['from']}, judge: {result['judge']}, "
          f"extraction: {result['extraction']}"
          + (f", posted {posted} messages at a time" if posted and posted < MAX_MESSAGES else "") + ")")
    for r in result["files"]:
        print(f"  {r['file']:28s} recall@3 said {_fmt(r['recall_at_3_said'])} ({r['said_basis']}, "
              f"{r['expected_said']})  recall@3 {_fmt(r['recall_at_3'])}  hidden {r['superseded_hidden_count']}/"
              f"{r['superseded_checked']} of {r['superseded_total']}  false {r['false_superseded']}  records/call "
              f"{_fmt(r['facts_per_call'])} (file {_fmt(r['file_facts_per_call'])}, x{_fmt(r['records_ratio'])})  "
              f"noise {_fmt(r['noise'])}" + _llm(r))
    for key in LOWER_IS_WORSE:
        if key in result:
            print(f"  {key:20s} mean {result[key]['mean']:.3f}  worst {result[key]['worst']:.3f}")
