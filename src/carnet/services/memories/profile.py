"""The profile tier of ``assemble``: the subject's current profile facts (how to reach and treat the
person, :mod:`carnet.domain.profile`), whatever the query, within their own budget.

Profile records are flagged when written, so the tier is one filtered read of the subject's active,
unexpired profile facts (the caller's special-category policy applied in the same filter as for its
searches), the newest ``CANDIDATES`` chosen by the engine on its ``valid_from`` index (before
2026-12-04 it took the first ones by record id, then sorted them: past that many a newer fact could be
missed), newest first, packed into the tier's budget. Superseded facts never come back: a withdrawn
consent is not shown beside the new one. A flagged record the classifier no longer reads as a profile
fact once opened is left to the ranked facts: the flag was set by the version that wrote it, and one
that entered by typing the prompt's own label ("(consentement)") before 2026-12-06 does not stay in
every context (SECURITY.md, "Stored text is data"). A profile fact a newer one may have made untrue
(``contested_by``) comes after the others (:mod:`carnet.domain.contested`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from carnet.domain.budget import TierBudget, pack
from carnet.domain.contested import contested_last
from carnet.domain.profile import profile_kinds
from carnet.domain.records import Kind, Memory, Scope, Status
from carnet.domain.text import estimate_tokens
from carnet.domain.unreadable import Skipped
from carnet.ports import RecordFilter
from carnet.services.needs import ProfileNeeds

# Profile facts a subject holds are few; past this many, only the newest are looked at.
CANDIDATES = 64
LINE_TOKENS = 12  # the date, bullet and kind label around each line


def cost(m: Memory) -> int:
    return estimate_tokens(m.text) + LINE_TOKENS


def profile_tier(
    deps: ProfileNeeds, scope: Scope, budget: TierBudget, *, now: datetime, hidden_special: tuple[str, ...],
    skipped: Skipped
) -> tuple[list[Memory], int, dict[str, tuple[str, ...]]]:
    """The profile records chosen (newest first), the tokens they use, and each one's kinds
    (``domain.profile.profile_kinds``, read once when it is opened); nothing when the budget is 0."""
    kinds: dict[str, tuple[str, ...]] = {}
    if budget.max_items == 0 or budget.max_tokens == 0:
        return [], 0, kinds
    where = RecordFilter(
        kinds=(Kind.FACT,),
        statuses=(Status.ACTIVE,),
        hidden_special=hidden_special,
        not_expired_at=now,
        profile_only=True,
    )
    found = deps.index.newest(scope, where=where, limit=CANDIDATES, reveal=False, skipped=skipped)
    newest = contested_last(sorted(found, key=lambda m: (m.valid_from, m.recorded_at), reverse=True), lambda m: m)

    def opened(chunk: Sequence[Memory]) -> list[Memory]:  # only records the packing may take are decrypted
        shown = deps.index.reveal(scope, chunk, skipped=skipped)
        kinds.update((m.id, profile_kinds(m.text)) for m in shown)
        return [m for m in shown if kinds[m.id]]

    chosen, tokens = pack(newest, budget, cost, open_chunk=opened)
    return chosen, tokens, kinds
