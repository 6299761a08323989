"""`/metrics` carries route templates and tenant names, never a subject; `/readyz` names the failing
dependency."""

from __future__ import annotations

import re

import httpx

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running
from carnet.services.apikeys import create_key

SUBJECT = "ADH-31337"


def test_metrics_by_route_template_and_tenant_without_subjects(container: Container) -> None:
    key, _ = create_key(container.deps.catalog, container.pepper, tenant="assur-nord", roles=["agent"])
    with running(create_app(container)) as base, httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as api:
        api.post(f"/api/v1/subjects/{SUBJECT}/memories", json={"text": "Le membre a un contrat habitation MRH."})
        api.post(f"/api/v1/subjects/{SUBJECT}/search", json={"query": "contrat habitation"})
        api.post("/api/v1/context/assemble", json={"subject_id": SUBJECT, "query": "contrat"})
        api.get("/api/v1/subjects/NOBODY/memories")
        text = httpx.get(f"{base}/metrics").text
    assert SUBJECT not in text and "NOBODY" not in text
    assert re.search(r'carnet_http_request_duration_seconds_count\{method="POST",'
                     r'route="/api/v1/subjects/\{subject_id\}/search",status="200"\} 1\.0', text)
    assert 'route="/api/v1/subjects/{subject_id}/memories",status="404"' in text
    for name in ("returned", "top_score", "mean_score"):
        assert re.search(rf'carnet_retrieval_{name}_count\{{operation="search",tenant="assur-nord"\}} 1\.0', text)
        assert re.search(rf'carnet_retrieval_{name}_count\{{operation="assemble",tenant="assur-nord"\}} 1\.0', text)
    top = re.search(r'carnet_retrieval_top_score_sum\{operation="search",tenant="assur-nord"\} ([0-9.]+)', text)
    assert top and float(top.group(1)) > 0
    assert re.search(r'carnet_kms_request_duration_seconds_count\{operation="generate_data_key"\} [1-9]', text)
    hits = re.search(r"carnet_data_key_cache_hits_total ([0-9.]+)", text)
    assert hits and float(hits.group(1)) > 0
    assert 'carnet_queue_depth{queue="audit_reads"}' in text
    for thread in ("access", "audit"):  # each background thread's errors are counted (none here)
        assert f'carnet_background_errors_total{{thread="{thread}"}} 0.0' in text


def test_readyz_names_the_failing_dependency(container: Container) -> None:
    with running(create_app(container)) as base:
        ok = httpx.get(f"{base}/readyz")
        assert ok.status_code == 200 and ok.json()["checks"] == {
            "vector_store": "ok", "catalog": "ok", "kms": "ok", "audit": "ok"}
        container.audit.log.close()
        down = httpx.get(f"{base}/readyz")
    assert down.status_code == 503
    assert down.json() == {"status": "not_ready", "checks": {
        "vector_store": "ok", "catalog": "ok", "kms": "ok", "audit": "audit_unavailable"}}
