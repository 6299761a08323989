"""Administration (role ``admin``): the tenant's API keys (create, shown once; revoke) and the
retention classes in force; and the audit trail with its chain check (roles ``dpo`` or ``admin``).
Each is the facade's use case, with its audit entry, as under ``/api/v1/admin`` and ``/api/v1/audit``.

The admin page also shows the tenant's intake queue (its counts and latest dead letters, with retry) and
a metrics summary (``metrics_view``). Not yet here (issue 18, later parts): team procedures
(``proposed → approved``, role ``supervisor``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from starlette.responses import Response

from carnet.entrypoints.http.console import metrics_view, views
from carnet.entrypoints.http.console.web import (
    PREFIX,
    ConsoleRoute,
    FormText,
    Posted,
    Seen,
    Viewer,
    console_of,
    facade_of,
    render,
)
from carnet.errors import InvalidInput
from carnet.services.apikeys import grantable

router = APIRouter(prefix=PREFIX, route_class=ConsoleRoute, include_in_schema=False)

AUDIT_SHOWN = 100  # the latest entries the audit page lists (the full trail: GET /api/v1/audit)


def _admin_page(request: Request, v: Viewer, *, new_key: str | None = None, done: str | None = None,
                requeued: int = 0) -> Response:
    api = facade_of(request)
    keys = api.admin.list_keys(v.who)  # the role check (admin) comes first, in the facade's door
    metrics = metrics_view.summary(console_of(request).container.metrics.registry, tenant=v.who.tenant)
    return render(request, "admin.html", v=v, keys=sorted(keys, key=lambda k: k.created_at, reverse=True),
                  grantable=grantable(v.who.roles),  # dpo and supervisor only to their holders (SECURITY.md)
                  classes=api.retention_classes(v.who), queue=api.intake_queue(v.who), new_key=new_key, done=done,
                  requeued=requeued, metrics=metrics)


@router.get("/admin")
def admin_home(request: Request, v: Seen) -> Response:
    return _admin_page(request, v)


@router.post("/admin/keys")
def create_key(request: Request, v: Posted, roles: Annotated[list[str] | None, Form()] = None,
               name: FormText = "") -> Response:
    """The key is on this page only: it is never stored, only its keyed hash."""
    if not roles:
        raise InvalidInput("choose at least one role")
    key, _ = facade_of(request).admin.create_key(v.who, roles=roles, name=name.strip() or None)
    return _admin_page(request, v, new_key=key)


@router.post("/admin/keys/revoke")
def revoke_key(request: Request, v: Posted, key_id: FormText = "") -> Response:
    facade_of(request).admin.revoke_key(v.who, key_id=key_id.strip())
    return _admin_page(request, v, done="revoked")


@router.post("/admin/intakes/retry")
def retry_intakes(request: Request, v: Posted, intake_id: FormText = "") -> Response:
    """One dead intake (its id posted), or every dead intake of the tenant (none posted)."""
    chosen = views.intake_id(intake_id) if intake_id.strip() else None
    count = facade_of(request).retry_intakes(v.who, intake_id=chosen)
    return _admin_page(request, v, done="requeued", requeued=count)


@router.get("/audit")
def audit(request: Request, v: Seen) -> Response:
    """The chain check of the whole trail, then its latest entries (newest first)."""
    api = facade_of(request)
    verdict = api.admin.audit_verify(v.who)
    after = max(0, verdict.entries - AUDIT_SHOWN)
    entries = list(api.admin.audit_entries(v.who, after_seq=after))[-AUDIT_SHOWN:]
    return render(request, "audit.html", v=v, verdict=verdict, entries=list(reversed(entries)))
