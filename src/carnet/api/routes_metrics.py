"""``GET /metrics`` in Prometheus text format."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import generate_latest

from carnet.api.auth import Ctr

router = APIRouter(tags=["metrics"])


@router.get("/metrics")
def metrics(c: Ctr) -> Response:
    return Response(generate_latest(c.metrics), media_type="text/plain; version=0.0.4")
