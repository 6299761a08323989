"""``carnet bench pii --notes``: pseudonymisation on labelled notes and calls written outside the team.

The scenario files (``../shared/bench/fr-train/*.json``, ``fr-dev-2.json``) list, per subject, its
personal data with every spelling used (``pii``). Each subject's facts go through the write path
(``for_write``, as ``remember``), then each call's messages as an intake reads them (``for_extraction``,
then ``grow``), with the subject's own pseudonym map. Two figures:

- ``survived``: occurrences of a labelled value still readable in the text that is embedded (recall on
  real notes; ``pii_survival.survives`` decides, as for ``--data``);
- ``over_masked``: placeholders that replace text overlapping no labelled value of the subject
  (precision on real notes: "Volontés :" read as a speaker, "du 10/10/2025. Budget serr" as an IBAN,
  "plus" as part of a company's name). Some are names the writer did not label (a garage owner's, a
  doctor's): the examples say which; the count is an upper bound of the words lost.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carnet.bench.pii_survival import BadCorpus, survives
from carnet.domain.pii.pseudonyms import PLACEHOLDER
from carnet.domain.records import Scope
from carnet.services.pii import Pii, for_extraction, for_write, grow

_EXAMPLES = 40


@dataclass(frozen=True, slots=True)
class Subject:
    file: str
    scope: Scope
    facts: tuple[str, ...]
    calls: tuple[tuple[str, ...], ...]  # each call's messages
    values: tuple[str, ...]  # every spelling of every labelled value


def subjects(paths: Sequence[Path]) -> Iterator[Subject]:
    """``BadCorpus`` for a file that is not a scenario file (``tenants`` → ``subjects`` → ``facts``,
    ``calls`` with ``messages``, ``pii``), whatever part of it is malformed."""
    for path in paths:
        for file in sorted(path.glob("*.json")) if path.is_dir() else [path]:
            try:
                yield from list(_file_subjects(file))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                raise BadCorpus(f"{file}: not a scenario file with tenants and subjects ({exc!r})") from exc


def _file_subjects(file: Path) -> Iterator[Subject]:
    spec = json.loads(file.read_text(encoding="utf-8"))
    for tenant, tdata in sorted(spec["tenants"].items()):
        for sid, sub in sorted(tdata["subjects"].items()):
            facts = tuple(f["text"] if isinstance(f, dict) else str(f) for f in sub.get("facts", []))
            calls = tuple(tuple(str(m["content"]) for m in call.get("messages", [])) for call in sub.get("calls", []))
            groups = [[g] if isinstance(g, str) else list(g) for g in sub.get("pii", [])]  # flat in fr-dev*
            values = tuple(v for group in groups for v in group if isinstance(v, str) and v.strip())
            yield Subject(file.stem, Scope(str(tenant), str(sid)), facts, calls, values)


def _pseudonymised(pii: Pii, item: Subject) -> Iterator[tuple[str, str]]:
    """(text, pseudo_text) of the subject's facts, then of its calls' messages, as the service makes them."""
    for text in item.facts:
        yield text, for_write(pii, item.scope, [text])[0].pseudo_text
    for call in item.calls:
        seen = for_extraction(pii, item.scope, list(call))
        grow(pii, item.scope, seen.found)
        yield from zip(call, seen.pseudo, strict=True)


def replaced(text: str, pseudo: str) -> list[tuple[str, str]] | None:
    """(kind, original text) of each placeholder of ``pseudo``, aligned on the literal pieces between them;
    None when the texts do not align (a text that held a placeholder-like string itself)."""
    pieces = PLACEHOLDER.split(pseudo)  # literal, kind, number, literal, kind, number, …
    literals, kinds = pieces[0::3], pieces[1::3]
    if not text.startswith(literals[0]):
        return None
    out, at = [], len(literals[0])
    for kind, literal in zip(kinds, literals[1:], strict=True):
        end = text.find(literal, at + 1) if literal else len(text)
        if end < 0:
            return None
        out.append((kind, text[at:end]))
        at = end + len(literal)
    return out


def measure(pii: Pii, items: Sequence[Subject]) -> dict[str, Any]:
    present: Counter[str] = Counter()
    survived: Counter[str] = Counter()
    masked: Counter[str] = Counter()
    over: Counter[str] = Counter()
    examples: list[dict[str, str]] = []
    texts = unaligned = 0
    for item in items:
        folded = [v.casefold() for v in item.values if len(v) >= 3]
        for text, pseudo in _pseudonymised(pii, item):
            texts += 1
            for value in item.values:
                if value in text:
                    present[item.file] += 1
                    survived[item.file] += survives(value, pseudo)
            pieces = replaced(text, pseudo)
            if pieces is None:
                unaligned += 1
                continue
            for kind, original in pieces:
                masked[kind] += 1
                low = re.sub(r"\s+", " ", original.casefold()).strip()
                if low and not any(low in v or v in low for v in folded):
                    over[kind] += 1
                    if len(examples) < _EXAMPLES:
                        examples.append({"file": item.file, "kind": kind, "text": original})
    return {"subjects": len(items), "texts": texts, "unaligned": unaligned,
            "values_present": sum(present.values()), "survived": sum(survived.values()),
            "survived_by_file": {f: f"{survived[f]}/{present[f]}" for f in sorted(present)},
            "placeholders": sum(masked.values()), "over_masked": sum(over.values()),
            "over_masked_by_type": dict(sorted(over.items())), "placeholders_by_type": dict(sorted(masked.items())),
            "over_masked_examples": examples}
