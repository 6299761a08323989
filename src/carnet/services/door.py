"""The one door of every use case: the caller's role, the action's own rules, then its audit entry.

REST, MCP, the CLI and the scheduler call the same service methods (the ``Facade``, and ``Admin``
for what runs beside a server without the vector store), and each of those passes here first, so no
entrypoint can skip a rule:

1. the role: a caller (an API key, or a local ``operator``) without one of the action's roles is
   refused (``Forbidden``);
2. the action's checks, before anything changes: the input (``InvalidInput``), an unknown subject
   (``SubjectNotFound`` and the other ``NotFound``), a legal hold (``LegalHold`` and the other
   ``Conflict``);
3. only then the audit entry: a write's is stored before the write runs (and a ``failed`` one
   follows if the write fails all the same), a read's is queued once it has run.

A refusal at step 1 or 2 leaves exactly one entry, ``outcome="refused"`` with the error's code,
never an ``ok`` entry followed by a ``failed`` one. A refused write's entry is stored at once, a
refused read's queued like reads. If the trail cannot take it, the refusal still stands: it is
logged, and the caller sees why it was refused, not ``audit_unavailable``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar

import structlog

from carnet.domain.audit import AuditEvent, DetailValue
from carnet.domain.records import Scope
from carnet.errors import CarnetError, Conflict, Forbidden, InvalidInput, NotFound
from carnet.services.apikeys import TENANT, Principal
from carnet.services.audit import SYSTEM_CHAIN, AuditTrail

log = structlog.get_logger(__name__)

T = TypeVar("T")

# What a check may refuse with: the caller's fault, or the subject's state; nothing was changed.
REFUSALS: tuple[type[CarnetError], ...] = (Forbidden, InvalidInput, NotFound, Conflict)
REFUSED = "refused"

ScopeOf = Callable[[], Scope]
Check = Callable[[], object]


def operator(tenant: str, actor: str, *roles: str) -> Principal:
    """A person at the server's console (``carnet subject erase``, ``carnet apikey create``...): a
    principal like an API key's, with the roles the command needs and ``actor`` ("cli:subject") in
    the audit trail. It passes through the same door as a key, so the same rules apply. ``_system``
    is the chain of store-wide acts (and of a command on a key whose tenant is unknown)."""
    if tenant != SYSTEM_CHAIN and not TENANT.match(tenant):
        raise InvalidInput("tenant must be 1-63 characters of lowercase letters, digits, '_' and '-'")
    return Principal(key_id=actor, tenant=tenant, roles=tuple(roles))


class Door:
    def __init__(self, audit: AuditTrail) -> None:
        self.audit = audit

    @contextmanager
    def write(self, who: Principal, action: str, roles: Sequence[str], *, scope: ScopeOf | None = None,
              check: Check | None = None, targets: tuple[str, ...] = (),
              detail: Mapping[str, DetailValue] | None = None) -> Iterator[Scope | None]:
        """Steps 1 and 2, then the entry stored before the block runs (``AuditTrail.recorded``).
        Yields the subject's scope (``scope()``, computed once the role has passed)."""
        found = self._admit(who, action, roles, scope=scope, check=check, targets=targets, write=True)
        event = self._event(who, action, found, targets, detail)
        with self.audit.recorded(event):
            yield found

    def read(self, who: Principal, action: str, roles: Sequence[str], run: Callable[[], T], *,
             seen: Callable[[T], Sequence[str]], scope: ScopeOf | None = None,
             detail: Callable[[T], Mapping[str, DetailValue]] | None = None, at_once: bool = False) -> T:
        """Steps 1 and 2 (``run`` may refuse too: an unknown subject is only found out by looking), then
        the entry naming the ids ``seen`` in the result: queued, or stored ``at_once`` (an export)."""
        found = self._admit(who, action, roles, scope=scope, check=None, targets=(), write=at_once)
        try:
            result = run()
        except REFUSALS as exc:
            self._refused(who, action, exc, found, (), write=at_once)
            raise
        ids = tuple(seen(result))
        event = self._event(who, action, found, ids, detail(result) if detail else {"count": len(ids)})
        if at_once:
            self.audit.record(event)
        else:
            self.audit.read(event)
        return result

    def allow(self, who: Principal, action: str, roles: Sequence[str], *, write: bool = False) -> None:
        """Step 1 alone, for an action that leaves no entry of its own (a status poll, a verification)."""
        self._role(who, action, roles, write=write)

    # ---- steps 1 and 2 --------------------------------------------------------------------------

    def _admit(self, who: Principal, action: str, roles: Sequence[str], *, scope: ScopeOf | None,
               check: Check | None, targets: tuple[str, ...], write: bool) -> Scope | None:
        self._role(who, action, roles, write=write)
        found: Scope | None = None
        try:
            found = scope() if scope is not None else None
            if check is not None:
                check()
        except REFUSALS as exc:
            self._refused(who, action, exc, found, targets, write=write)
            raise
        return found

    def _role(self, who: Principal, action: str, roles: Sequence[str], *, write: bool) -> None:
        try:
            who.require(*roles)
        except Forbidden as exc:
            self._refused(who, action, exc, None, (), write=write)
            raise

    def _refused(self, who: Principal, action: str, exc: CarnetError, scope: Scope | None,
                 targets: tuple[str, ...], *, write: bool) -> None:
        event = self.audit.event(tenant=who.tenant, actor=who.key_id, action=action,
                                 subject=scope.subject if scope else None, targets=targets, outcome=REFUSED,
                                 detail={"error": exc.code})
        if not write:
            self.audit.read(event)
            return
        try:
            self.audit.record(event)
        except CarnetError as failure:  # the refusal stands; that it went unrecorded is logged
            log.error("audit_refusal_not_recorded", action=action, error=failure.code)

    def _event(self, who: Principal, action: str, scope: Scope | None, targets: tuple[str, ...],
               detail: Mapping[str, DetailValue] | None) -> AuditEvent:
        return self.audit.event(tenant=who.tenant, actor=who.key_id, action=action,
                                subject=scope.subject if scope else None, targets=targets, detail=detail)
