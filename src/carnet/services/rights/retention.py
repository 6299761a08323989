"""Per-subject retention facts the tenant records: a legal hold, and the end of the relationship.

- A legal hold (litigation, a regulator's request) suspends forgetting for the subject: retention,
  relationship-end expiry and decay delete nothing of theirs while it stands. It does not widen
  reads: records past their expiry stay hidden from recall, they are only kept.
- The end of the relationship (account closed, contract ended) starts the clock of the classes
  counted from it (``"after": "relationship_end"``, e.g. AML records kept five years after). Clearing
  it (``ended_at=None``) reopens the relationship.

Each change is made under the subject's lock, so it never lands in the middle of a maintenance pass
over the same subject: once ``set_legal_hold`` returns, nothing of the subject is being deleted.
The subject must be known (have been written to): a hold on a mistyped id must fail loudly rather
than protect no one.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from carnet.domain.reconcile.values import DATETIME_MESSAGE, in_range
from carnet.domain.records import Scope
from carnet.domain.retention import SubjectRetention
from carnet.errors import InvalidInput, SubjectNotFound
from carnet.services.needs import RetentionNeeds
from carnet.services.scope import scope_for

# A case or matter reference ("LIT-2026-014"), not free text: it must not carry personal data.
_REFERENCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")


_HOLD_REFERENCE = "hold_reference"


def retention_status(deps: RetentionNeeds, *, tenant: str, subject_id: str) -> SubjectRetention:
    return _status(deps, _known(deps, tenant, subject_id))


def _status(deps: RetentionNeeds, scope: Scope) -> SubjectRetention:
    """The catalog's row, the hold's reference opened (it is stored sealed under the subject's data key:
    a case reference may name a person, and erasure must leave it unreadable)."""
    found = deps.catalog.subject_retention(scope)
    if found.hold_reference is None:
        return found
    return replace(found, hold_reference=deps.subjects.open_value(scope, _HOLD_REFERENCE, found.hold_reference))


def check_reference(reference: str | None) -> None:
    """A hold's reference is a case reference, never free text (``InvalidInput``)."""
    if reference is not None and not _REFERENCE.match(reference):
        raise InvalidInput("reference must be 1-64 letters, digits and . _ : / - (a case reference, "
                           "never personal data)")


def set_legal_hold(deps: RetentionNeeds, *, tenant: str, subject_id: str,
                   reference: str | None = None) -> SubjectRetention:
    """Place (or re-place, with a new reference) a legal hold on the subject."""
    check_reference(reference)
    scope = _known(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        sealed = None if reference is None else deps.subjects.seal_value(scope, _HOLD_REFERENCE, reference)
        deps.catalog.set_legal_hold(scope, held=True, at=deps.clock.now(), reference=sealed)
    return _status(deps, scope)


def clear_legal_hold(deps: RetentionNeeds, *, tenant: str, subject_id: str) -> SubjectRetention:
    """Lift the hold: the next maintenance pass applies retention and decay again (what expired
    meanwhile goes then)."""
    scope = _known(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        deps.catalog.set_legal_hold(scope, held=False, at=deps.clock.now())
    return _status(deps, scope)


def set_relationship_end(deps: RetentionNeeds, *, tenant: str, subject_id: str,
                         ended_at: datetime | None) -> SubjectRetention:
    """Record when the relationship ended (a date in the future is allowed: a contract ending at the
    end of the month); ``None`` reopens it."""
    if ended_at is not None and not in_range(ended_at):
        raise InvalidInput(f"ended_at {DATETIME_MESSAGE}")
    scope = _known(deps, tenant, subject_id)
    with deps.locks.for_scope(scope):
        deps.catalog.set_relationship_end(scope, ended_at)
    return _status(deps, scope)


def _known(deps: RetentionNeeds, tenant: str, subject_id: str) -> Scope:
    scope = scope_for(deps, tenant, subject_id)
    if not deps.catalog.is_registered(scope):
        raise SubjectNotFound()
    return scope
