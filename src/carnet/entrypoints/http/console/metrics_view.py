"""The admin page's metrics summary, read from this process's Prometheus registry (what ``GET /metrics``
serves): the tenant's own retrieval figures (searches and assembles, records returned, top score), and
the process's HTTP figures, which ``/metrics`` shows anyone on the monitoring network anyway (no tenant
in their labels). Counts since this process started."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry


@dataclass(slots=True)
class Retrieval:
    calls: int = 0
    returned_sum: float = 0.0
    scored: int = 0  # calls that returned something (the top score is observed for those only)
    top_sum: float = 0.0

    @property
    def mean_returned(self) -> float:
        return self.returned_sum / self.calls if self.calls else 0.0

    @property
    def mean_top(self) -> float:
        return self.top_sum / self.scored if self.scored else 0.0


@dataclass(slots=True)
class Summary:
    retrieval: dict[str, Retrieval] = field(default_factory=lambda: defaultdict(Retrieval))
    requests: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # by status class: 2xx, 4xx…
    refused: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # by reason


def summary(registry: CollectorRegistry, *, tenant: str) -> Summary:
    out = Summary()
    for metric in registry.collect():
        for s in metric.samples:
            if metric.name.startswith("carnet_retrieval_") and s.labels.get("tenant") == tenant:
                r = out.retrieval[s.labels.get("operation", "?")]
                if metric.name == "carnet_retrieval_returned" and s.name.endswith("_count"):
                    r.calls = int(s.value)
                elif metric.name == "carnet_retrieval_returned" and s.name.endswith("_sum"):
                    r.returned_sum = s.value
                elif metric.name == "carnet_retrieval_top_score" and s.name.endswith("_sum"):
                    r.top_sum = s.value
                elif metric.name == "carnet_retrieval_top_score" and s.name.endswith("_count"):
                    r.scored = int(s.value)
            elif metric.name == "carnet_http_request_duration_seconds" and s.name.endswith("_count"):
                out.requests[s.labels.get("status", "?")[:1] + "xx"] += int(s.value)
            elif metric.name == "carnet_http_refused" and s.name.endswith("_total"):
                out.refused[s.labels.get("reason", "?")] += int(s.value)
    return out
