"""Liveness and readiness. Readiness checks each dependency and says which one failed."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from carnet.api.auth import Ctr
from carnet.errors import CarnetError

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
def readyz(c: Ctr) -> JSONResponse:
    checks: dict[str, str] = {}
    for name, probe in (("vector_store", c.deps.index.check), ("catalog", c.deps.catalog.check)):
        try:
            probe()
            checks[name] = "ok"
        except CarnetError as exc:
            checks[name] = exc.code
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"status": "ready" if ready else "not_ready", "checks": checks},
                        status_code=200 if ready else 503)
