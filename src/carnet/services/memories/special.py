"""What a tenant decides for special categories: how long such records live, and who may read them.

Per tenant (with a default for all): a retention in days per category (the record expires at the
earlier of its own retention and the category's), and the categories an ``agent`` key may not read
(they are left out of its searches, contexts and listings; ``dpo`` and ``admin`` keys see everything).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from carnet.domain.pii.special import (
    ETHNIC_ORIGIN,
    JUDICIAL,
    POLITICAL,
    RELIGION,
    SEXUAL_ORIENTATION,
    UNION,
)
from carnet.domain.reconcile.values import later

ALL_TENANTS = "*"
# An assistant helping with a claim may need health and disability; the rest is not its business.
DEFAULT_HIDDEN = frozenset({RELIGION, UNION, JUDICIAL, SEXUAL_ORIENTATION, POLITICAL, ETHNIC_ORIGIN})
SEES_ALL = frozenset({"dpo", "admin"})


@dataclass(frozen=True, slots=True)
class CategoryPolicy:
    retention_days: Mapping[str, int] = field(default_factory=dict)
    hidden_from_agents: frozenset[str] = DEFAULT_HIDDEN


@dataclass(frozen=True, slots=True)
class SpecialPolicy:
    tenants: Mapping[str, CategoryPolicy] = field(default_factory=dict)

    def for_tenant(self, tenant: str) -> CategoryPolicy:
        return self.tenants.get(tenant) or self.tenants.get(ALL_TENANTS) or CategoryPolicy()

    def hidden_for(self, tenant: str, roles: Iterable[str]) -> tuple[str, ...]:
        if SEES_ALL.intersection(roles):
            return ()
        return tuple(sorted(self.for_tenant(tenant).hidden_from_agents))

    def expires_at(self, tenant: str, categories: Iterable[str], start: datetime,
                   default: datetime | None) -> datetime | None:
        days = [d for c in categories if (d := self.for_tenant(tenant).retention_days.get(c)) is not None]
        if not days:
            return default
        mine = later(start, min(days))
        return mine if default is None else min(mine, default)
