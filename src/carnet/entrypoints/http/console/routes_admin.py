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
from carnet.entrypoints.http.console.screens import Screen
from carnet.entrypoints.http.console.web import (
    PREFIX,
    ConsoleRoute,
    FormText,
    Posted,
    Seen,
    Viewer,
    after,
    console_of,
    facade_of,
    render,
)
from carnet.errors import InvalidInput
from carnet.services.apikeys import grantable

router = APIRouter(prefix=PREFIX, route_class=ConsoleRoute, include_in_schema=False)

AUDIT_SHOWN = 100  # the latest entries the audit page lists (the full trail: GET /api/v1/audit)


def _admin_page(request: Request, v: Viewer, screen: Screen | None) -> Response:
    api = facade_of(request)
    keys = api.admin.list_keys(v.who)  # the role check (admin) comes first, in the facade's door
    metrics = metrics_view.summary(console_of(request).container.metrics.registry, tenant=v.who.tenant)
    return render(request, "admin.html", v=v, keys=sorted(keys, key=lambda k: k.created_at, reverse=True),
                  grantable=grantable(v.who.roles),  # dpo and supervisor only to their holders (SECURITY.md)
                  classes=api.retention_classes(v.who), queue=api.intake_queue(v.who),
                  new_key=screen.secret if screen else None, done=screen.done if screen else None,
                  requeued=screen.count if screen else 0, metrics=metrics)


@router.get("/admin")
def admin_home(request: Request, v: Seen, view: str = "") -> Response:
    """The page, with what a form left on screen (``?view=``): a new key is shown by the first GET only."""
    return _admin_page(request, v, v.session.screens.show(view, page="admin"))


@router.post("/admin/keys")
def create_key(request: Request, v: Posted, roles: Annotated[list[str] | None, Form()] = None,
               name: FormText = "") -> Response:
    """The key is shown once, by the page this form leads to (held in the session until that page takes it);
    the store keeps only its keyed hash."""
    if not roles:
        raise InvalidInput("choose at least one role")
    key, _ = facade_of(request).admin.create_key(v.who, roles=roles, name=name.strip() or None)
    return after(v, Screen("admin", secret=key))


@router.post("/admin/keys/revoke")
def revoke_key(request: Request, v: Posted, key_id: FormText = "") -> Response:
    facade_of(request).admin.revoke_key(v.who, key_id=key_id.strip())
    return after(v, Screen("admin", done="revoked"))


@router.post("/admin/intakes/retry")
def retry_intakes(request: Request, v: Posted, intake_id: FormText = "") -> Response:
    """One dead intake (its id posted), or every dead intake of the tenant (none posted)."""
    chosen = views.intake_id(intake_id) if intake_id.strip() else None
    count = facade_of(request).retry_intakes(v.who, intake_id=chosen)
    return after(v, Screen("admin", done="requeued", count=count))


@router.get("/audit")
def audit(request: Request, v: Seen) -> Response:
    """The chain check of the whole trail, then the latest of the entries it verified (newest first): the
    entries written since (this page's own reading among them) wait for the next check, so the two
    counts on the page speak of the same entries."""
    api = facade_of(request)
    verdict = api.admin.audit_verify(v.who)
    start = max(0, verdict.entries - AUDIT_SHOWN)
    entries = [e for e in api.admin.audit_entries(v.who, after_seq=start) if e.seq <= verdict.entries]
    return render(request, "audit.html", v=v, verdict=verdict, entries=list(reversed(entries[-AUDIT_SHOWN:])))
