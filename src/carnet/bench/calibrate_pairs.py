"""The labelled pairs calibration reads: (stored note, new note, label), and what each label expects."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Label = Literal["duplicate", "contradiction", "related", "unrelated"]
LABELS: tuple[Label, ...] = ("duplicate", "contradiction", "related", "unrelated")
Outcome = Literal["merge", "supersede", "create"]
EXPECTED: dict[Label, Outcome] = {
    "duplicate": "merge", "contradiction": "supersede", "related": "create", "unrelated": "create",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class LabelledPair:
    a: str  # the stored note
    b: str  # the new note
    label: Label


def load_pairs(path: Path) -> list[LabelledPair]:
    """Read ``{"a", "b", "label"}`` lines; blank lines are skipped, a bad label is an error."""
    pairs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("label") not in LABELS:
            raise ValueError(f"{path}:{n}: label must be one of {', '.join(LABELS)}")
        pairs.append(LabelledPair(a=str(row["a"]), b=str(row["b"]), label=row["label"]))
    return pairs


def digest(pairs: Iterable[LabelledPair]) -> str:
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps([p.a, p.b, p.label], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()
