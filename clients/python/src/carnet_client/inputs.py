"""What callers send: the closed vocabularies as ``Literal``s, a batch item and context budgets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

Kind = Literal["fact", "episode", "procedure"]
Status = Literal["active", "superseded", "expired", "deleted"]
Role = Literal["agent", "dpo", "admin"]


def iso(at: datetime | None) -> str | None:
    """An aware timestamp as ISO 8601. Naive ones are refused here rather than by a 400 later."""
    if at is None:
        return None
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError("timestamps must be timezone-aware (datetime.now(UTC), not datetime.now())")
    return at.isoformat()


def compact(**fields: Any) -> dict[str, Any]:
    """A JSON body without the fields left out, so the server's defaults apply."""
    return {k: v for k, v in fields.items() if v is not None}


@dataclass(frozen=True, slots=True)
class NewMemory:
    """One item of ``remember_batch``; the fields of ``remember``."""

    text: str
    kind: Kind | None = None
    occurred_at: datetime | None = None
    importance: float | None = None
    category: str | None = None
    tags: Sequence[str] | None = None
    retention: str | None = None
    session_id: str | None = None

    def as_json(self) -> dict[str, Any]:
        return compact(text=self.text, kind=self.kind, occurred_at=iso(self.occurred_at), importance=self.importance,
                       category=self.category, tags=list(self.tags) if self.tags is not None else None,
                       retention=self.retention, session_id=self.session_id)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message handed over with ``submit_messages``; ``at`` needs a time zone."""

    role: Literal["user", "assistant", "advisor", "system"]
    content: str
    at: datetime | None = None

    def as_json(self) -> dict[str, Any]:
        return compact(role=self.role, content=self.content, at=iso(self.at))


@dataclass(frozen=True, slots=True)
class Budgets:
    """Overrides of the deployment's context budgets for one ``assemble`` call (None: the default)."""

    max_memories: int | None = None
    memories_tokens: int | None = None
    max_episodes: int | None = None
    episodes_tokens: int | None = None
    max_procedures: int | None = None
    procedures_tokens: int | None = None
    min_relevance: float | None = None
    max_profile: int | None = None
    profile_tokens: int | None = None

    def as_json(self) -> dict[str, Any]:
        return compact(**asdict(self))
