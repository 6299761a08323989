"""Liveness and readiness. Readiness checks each dependency (vector store, catalog, KMS, audit trail, and
the embedding server when the embedder is remote)
and names the one that fails, with its error code, never with a message that could carry a secret."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from carnet.entrypoints.http.auth import Ctr
from carnet.entrypoints.http.presented import presented
from carnet.entrypoints.presenters.health import ReadyOut, ready_out
from carnet.errors import CarnetError

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", response_model=ReadyOut,
            responses={503: {"model": ReadyOut, "description": "A dependency is down; `checks` names it."}})
def readyz(c: Ctr) -> Response:
    checks: dict[str, str] = {}
    probes = (("vector_store", c.deps.index.check), ("catalog", c.deps.catalog.check), ("kms", c.kms.check),
              ("audit", c.audit.log.check), *c.probes.items())
    for name, probe in probes:
        try:
            probe()
            checks[name] = "ok"
        except CarnetError as exc:
            checks[name] = exc.code
    out = ready_out(checks)
    return presented(out, status_code=200 if out.status == "ready" else 503)
