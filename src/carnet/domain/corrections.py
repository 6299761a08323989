"""A person's correction of reconcile, kept as a labelled pair a site can retrain its judge on.

When someone restores a superseded record (``services/memories/restore.py``), reconcile was wrong
about that pair: the newer note did not make the older one untrue. The pair is kept as reconcile saw
it, pseudonymised texts only (``pseudo_text``, never the text as written), with the dates that order
it and the label ``not_superseded``. It is member-derived data: sealed under the subject's data key
and erased with the subject (docs/architecture.md, "Corrections by people").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

NOT_SUPERSEDED = "not_superseded"


@dataclass(frozen=True, slots=True)
class CorrectionPair:
    """One labelled pair. ``older``/``newer`` are pseudonymised texts; ``rule`` is what reconcile said
    when it closed the older record (from its history), ``reason`` the person's words, pseudonymised
    like the notes (empty when none was given)."""

    id: str
    older: str
    newer: str
    older_valid_from: datetime
    newer_valid_from: datetime
    closed_at: datetime | None  # the older record's ``valid_to`` before the restore
    corrected_at: datetime
    label: str = NOT_SUPERSEDED
    rule: str = ""
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "older": self.older, "newer": self.newer, "label": self.label,
                "older_valid_from": self.older_valid_from.isoformat(),
                "newer_valid_from": self.newer_valid_from.isoformat(),
                "closed_at": self.closed_at.isoformat() if self.closed_at else None,
                "corrected_at": self.corrected_at.isoformat(), "rule": self.rule, "reason": self.reason}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CorrectionPair:
        closed = d.get("closed_at")
        return cls(id=str(d["id"]), older=str(d["older"]), newer=str(d["newer"]), label=str(d["label"]),
                   older_valid_from=datetime.fromisoformat(d["older_valid_from"]),
                   newer_valid_from=datetime.fromisoformat(d["newer_valid_from"]),
                   closed_at=datetime.fromisoformat(closed) if closed else None,
                   corrected_at=datetime.fromisoformat(d["corrected_at"]), rule=str(d.get("rule", "")),
                   reason=str(d.get("reason", "")))
