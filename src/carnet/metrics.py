"""Prometheus metrics of one Carnet process. No label ever carries a subject or personal data: routes
are path templates (``/api/v1/subjects/{subject_id}/search``), tenants are tenant names."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from carnet.adapters.extractors.mistral_chat import LlmStats
from carnet.crypto.keyring import Keyring
from carnet.domain.extraction.model import Extraction
from carnet.domain.intake import Intake, QueueStats
from carnet.ports import IntakeStore
from carnet.services.intake.worker import WorkerHooks
from carnet.services.lifecycle.unreadable import UnreadableTally
from carnet.services.memories.query_cache import CachedEmbedder

_LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_SCORE_BUCKETS = tuple(round(0.1 * i, 1) for i in range(1, 11))
_COUNT_BUCKETS = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 100)


class _StateCollector(Collector):
    """Counters the services keep themselves, read at scrape time."""

    def __init__(self, cache: CachedEmbedder, keyring: Keyring, queues: dict[str, Callable[[], int]],
                 intakes: IntakeStore | None) -> None:
        self._cache, self._keyring, self._queues, self._intakes = cache, keyring, queues, intakes

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily("carnet_query_cache_hits", "Query embeddings served from cache",
                                  value=self._cache.hits)
        yield CounterMetricFamily("carnet_query_cache_misses", "Query embeddings computed",
                                  value=self._cache.misses)
        yield CounterMetricFamily("carnet_data_key_cache_hits", "Subject data keys served from the key cache",
                                  value=self._keyring.cache_hits)
        yield CounterMetricFamily("carnet_data_key_cache_misses",
                                  "Subject data keys not in cache (unwrapped by the KMS or created)",
                                  value=self._keyring.cache_misses)
        depth = GaugeMetricFamily("carnet_queue_depth", "Items waiting in a background queue", labels=["queue"])
        for name, size in self._queues.items():
            depth.add_metric([name], size())
        yield depth
        if self._intakes is not None:
            yield from _intake_metrics(self._intakes.stats())


def _intake_metrics(stats: QueueStats) -> Iterator[Metric]:
    """Queue depth by state and the age of the oldest pending intake (0 when none waits)."""
    by_state = GaugeMetricFamily("carnet_intakes", "Intakes not done, by state", labels=["state"])
    for state, n in (("pending", stats.pending), ("processing", stats.processing), ("dead", stats.dead)):
        by_state.add_metric([state], n)
    yield by_state
    age = 0.0 if stats.oldest_pending_at is None else max(0.0, time.time() - stats.oldest_pending_at.timestamp())
    yield GaugeMetricFamily("carnet_intake_oldest_pending_seconds", "Age of the oldest pending intake", value=age)


class _UnreadableCollector(Collector):
    """Records reads left out because they could not be decoded or opened, by operation and reason
    code (never by tenant or subject: the audit trail names them)."""

    def __init__(self, tally: UnreadableTally) -> None:
        self._tally = tally

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily("carnet_unreadable_records",
                                     "Records a read left out (damaged payload, ciphertext or data key)",
                                     labels=["operation", "reason"])
        for (operation, reason), n in sorted(self._tally.counts().items()):
            family.add_metric([operation, reason], n)
        yield family


class _LlmCollector(Collector):
    """The LLM extractor's own counters (calls, retries, failures by reason, facts set aside)."""

    def __init__(self, extractor: str, stats: LlmStats) -> None:
        self._extractor, self._stats = extractor, stats

    def collect(self) -> Iterator[Metric]:
        s = self._stats
        for name, help_, value in (("calls", "Requests to the LLM", s.calls),
                                   ("retries", "Extra attempts after a transient LLM failure", s.retries),
                                   ("set_aside", "Facts the LLM judged not worth remembering", s.set_aside),
                                   ("not_member", "Facts the LLM said are about someone other than the member",
                                    s.not_member)):
            family = CounterMetricFamily(f"carnet_llm_{name}", help_, labels=["extractor"])
            family.add_metric([self._extractor], value)
            yield family
        gate = CounterMetricFamily("carnet_llm_extractions", "Calls the turn filter sent to the LLM or skipped "
                                   "(no turn it keeps)", labels=["extractor", "decision"])
        gate.add_metric([self._extractor, "sent"], s.extractions_sent)
        gate.add_metric([self._extractor, "skipped"], s.extractions_skipped)
        yield gate
        failures = CounterMetricFamily("carnet_llm_failures", "LLM calls that failed, by reason",
                                       labels=["extractor", "reason"])
        for reason, n in sorted(s.failure_reasons.items()):
            failures.add_metric([self._extractor, reason], n)
        yield failures


class _EmbedServerCollector(Collector):
    """The remote embedder's counters (``CARNET_EMBEDDER=remote``) and its circuit's state, one series
    per state, 1 for the current one (alert on ``carnet_embedder_circuit{state="open"} == 1``)."""

    def __init__(self, counts: Callable[[], dict[str, int]], state: Callable[[], str]) -> None:
        self._counts, self._state = counts, state

    def collect(self) -> Iterator[Metric]:
        helps = {"requests": "HTTP requests sent to the embedding server (attempts and probes)",
                 "failed_calls": "Embedding calls that failed after their attempts",
                 "refused_calls": "Embedding calls refused by the open circuit, no request sent"}
        counts = self._counts()
        for name, help_ in helps.items():
            yield CounterMetricFamily(f"carnet_embedder_{name}", help_, value=counts.get(name, 0))
        circuit = GaugeMetricFamily("carnet_embedder_circuit", "The embedding server's circuit breaker: "
                                    "1 for its current state", labels=["state"])
        now = self._state()
        for state in ("closed", "open", "half_open"):
            circuit.add_metric([state], 1.0 if state == now else 0.0)
        yield circuit


class _BackgroundCollector(Collector):
    """``carnet_background_errors_total{thread}``: units of background work that raised (each logged by
    its error code or type, then retried with backoff). ``thread`` is a fixed name: access, audit,
    worker, scheduler."""

    def __init__(self) -> None:
        self.counts: dict[str, Callable[[], int]] = {}

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily("carnet_background_errors",
                                     "Background work that raised (logged by type, retried with backoff)",
                                     labels=["thread"])
        for thread, count in sorted(self.counts.items()):
            family.add_metric([thread], count())
        yield family


class Metrics:
    """The histograms the edge and the facade observe, on one registry per container (never the
    global one: tests build several containers in one process)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self._background = _BackgroundCollector()
        registry.register(self._background)
        self.request_seconds = Histogram(
            "carnet_http_request_duration_seconds", "HTTP request latency by route template",
            ["method", "route", "status"], buckets=_LATENCY_BUCKETS, registry=registry)
        self.returned = Histogram(
            "carnet_retrieval_returned", "Records returned per search or assemble", ["tenant", "operation"],
            buckets=_COUNT_BUCKETS, registry=registry)
        self.top_score = Histogram(
            "carnet_retrieval_top_score", "Best score per search or assemble (drift shows as a shift down)",
            ["tenant", "operation"], buckets=_SCORE_BUCKETS, registry=registry)
        self.mean_score = Histogram(
            "carnet_retrieval_mean_score", "Mean score of what a search or assemble returned",
            ["tenant", "operation"], buckets=_SCORE_BUCKETS, registry=registry)
        self.extraction_seconds = Histogram(
            "carnet_extraction_duration_seconds", "Extractor latency per intake attempt", ["extractor", "outcome"],
            buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120), registry=registry)
        self.extraction_tokens = Counter(
            "carnet_extraction_tokens", "LLM tokens used by extraction", ["extractor", "direction"], registry=registry)
        self.intakes_finished = Counter(
            "carnet_intakes_finished", "Intake attempts by how they ended (done, retry, dead)", ["outcome"],
            registry=registry)
        self.intake_context = Histogram(
            "carnet_intake_context_messages", "Messages of a session's earlier intakes read before an intake's",
            buckets=(0, 2, 5, 10, 20, 50, 100, 200), registry=registry)
        self.intake_seconds = Histogram(
            "carnet_intake_to_done_seconds", "From an intake's arrival to its memories being searchable",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800), registry=registry)
        self.refused = Counter(
            "carnet_http_refused", "Requests refused before their body is read: unauthenticated (401), "
            "address_budget (429, unauthenticated), key_budget (429)", ["reason"], registry=registry)
        self.overloaded = Counter(
            "carnet_http_overloaded", "Requests refused 503 overloaded before their work started, by route "
            "template and reason: queue_full (the waiting room was full), deadline (no slot in time)",
            ["route", "reason"], registry=registry)
        self.admission_waiting = Gauge(
            "carnet_http_admission_waiting", "Requests waiting for an admission slot", registry=registry)
        self.admission_in_flight = Gauge(
            "carnet_http_admission_in_flight", "Requests holding an admission slot", registry=registry)
        self.kms_seconds = Histogram(
            "carnet_kms_request_duration_seconds", "KMS latency on the request path", ["operation"],
            buckets=_LATENCY_BUCKETS, registry=registry)

    def watch_background(self, thread: str, errors: Callable[[], int]) -> None:
        """Report a background thread's error count (its ``Resilient`` guard) as ``thread``."""
        self._background.counts[thread] = errors

    def watch_unreadable(self, tally: UnreadableTally) -> None:
        self.registry.register(_UnreadableCollector(tally))

    def watch_embed_server(self, counts: Callable[[], dict[str, int]], state: Callable[[], str]) -> None:
        self.registry.register(_EmbedServerCollector(counts, state))

    def watch_llm(self, extractor: str, stats: LlmStats) -> None:
        self.registry.register(_LlmCollector(extractor, stats))

    def worker_hooks(self, extractor: str) -> WorkerHooks:
        def extracted(outcome: str, seconds: float, extraction: Extraction | None) -> None:
            self.extraction_seconds.labels(extractor, outcome).observe(seconds)
            if extraction is not None:
                self.extraction_tokens.labels(extractor, "in").inc(extraction.tokens_in)
                self.extraction_tokens.labels(extractor, "out").inc(extraction.tokens_out)

        def finished(outcome: str, intake: Intake) -> None:
            self.intakes_finished.labels(outcome).inc()
            if outcome == "done":
                self.intake_seconds.observe(max(0.0, time.time() - intake.created_at.timestamp()))

        return WorkerHooks(extracted=extracted, finished=finished, context=self.intake_context.observe)

    def retrieval(self, tenant: str, operation: str, scores: list[float]) -> None:
        self.returned.labels(tenant, operation).observe(len(scores))
        if scores:
            self.top_score.labels(tenant, operation).observe(max(scores))
            self.mean_score.labels(tenant, operation).observe(sum(scores) / len(scores))


def metrics_for(cache: CachedEmbedder, keyring: Keyring, queues: dict[str, Callable[[], int]],
                intakes: IntakeStore | None = None) -> Metrics:
    registry = CollectorRegistry(auto_describe=True)
    registry.register(_StateCollector(cache, keyring, queues, intakes))
    metrics = Metrics(registry)
    keyring.kms_timings = lambda operation, seconds: metrics.kms_seconds.labels(operation).observe(seconds)
    return metrics
