"""``GET /metrics`` in Prometheus text format."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from carnet.entrypoints.http.auth import Ctr

router = APIRouter(tags=["metrics"])


@router.get("/metrics", response_class=PlainTextResponse, responses={200: {
    "description": "Prometheus text exposition format.",
    "content": {CONTENT_TYPE_LATEST.split(";")[0]: {
        "example": "carnet_http_request_duration_seconds_bucket{...} 3.0\n"}}}})
def metrics(c: Ctr) -> PlainTextResponse:
    """Labels are route templates, methods, statuses, tenant names and KMS operations: never a subject."""
    return PlainTextResponse(generate_latest(c.metrics.registry), media_type=CONTENT_TYPE_LATEST)
