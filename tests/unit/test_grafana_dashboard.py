"""The bundled Grafana dashboard (deploy/grafana/carnet-dashboard.json) parses, and every metric its
panels query is one a real container exports (its own registry, with the LLM collector registered as
``CARNET_EXTRACTOR=mistral`` does), so a renamed metric cannot leave a panel silently empty."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from carnet.adapters.extractors.mistral_chat import LlmStats
from carnet.bootstrap.container import Container

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "carnet-dashboard.json"
_METRIC = re.compile(r"\bcarnet_[a-z0-9_]+\b")
_SUFFIXES = {"histogram": ("_bucket", "_count", "_sum"), "counter": ("_total",), "gauge": ("",)}


def _dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


def _panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))
    return out


def _queries(dashboard: dict[str, Any]) -> list[str]:
    exprs = [t["expr"] for p in _panels(dashboard) for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if v.get("type") == "query"]
    return exprs


def _exported_names(container: Container) -> set[str]:
    """Sample names as Prometheus scrapes them, from each family's type (a counter family
    ``carnet_x`` is scraped as ``carnet_x_total``; a histogram as ``_bucket``, ``_count``, ``_sum``)."""
    names: set[str] = set()
    for family in container.metrics.registry.collect():
        names.update(family.name + suffix for suffix in _SUFFIXES.get(family.type, ("",)))
    return names


def test_the_dashboard_parses_with_unique_panel_ids() -> None:
    dashboard = _dashboard()
    assert dashboard["schemaVersion"] >= 39
    ids = [p["id"] for p in _panels(dashboard)]
    assert len(ids) == len(set(ids))
    for panel in _panels(dashboard):
        if panel["type"] != "row":
            assert panel["targets"], panel["title"]


@pytest.mark.parametrize("topic", ["carnet_http_request_duration_seconds_bucket", "carnet_retrieval_top_score",
                                   "carnet_intakes", "carnet_intake_oldest_pending_seconds",
                                   "carnet_intakes_finished_total", "carnet_extraction_duration_seconds",
                                   "carnet_llm_failures_total", "carnet_kms_request_duration_seconds",
                                   "carnet_data_key_cache_hits_total", "carnet_queue_depth"])
def test_the_dashboard_covers(topic: str) -> None:
    assert any(topic in q for q in _queries(_dashboard()))


def test_every_metric_in_a_panel_is_exported(container: Container) -> None:
    container.metrics.watch_llm("mistral", LlmStats())  # what bootstrap does with CARNET_EXTRACTOR=mistral
    exported = _exported_names(container)
    used = {name for query in _queries(_dashboard()) for name in _METRIC.findall(query)}
    assert used, "no metric found in the dashboard"
    assert used - exported == set(), f"metrics no Carnet process exports: {sorted(used - exported)}"
