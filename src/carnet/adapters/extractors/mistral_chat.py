"""One structured chat completion against vLLM's OpenAI-compatible server, through the ``mistralai``
SDK (3.x: ``from mistralai.client import Mistral``; ``server_url`` without ``/v1``, the SDK adds it).

``POST {server_url}/v1/chat/completions`` with ``response_format = {"type": "json_schema",
"json_schema": {"name", "schema", "strict": true}}``, which vLLM turns into guided decoding, and
``temperature`` 0. Nothing else: the SDK's ``random_seed`` is not vLLM's ``seed`` (vLLM would ignore
it), and greedy decoding needs no seed.

One retry policy, Carnet's: the SDK's own retries are off, and ``tenacity`` retries transient
failures (429, 5xx, timeouts, connection errors) a few times with exponential backoff and jitter,
honouring a small ``Retry-After`` (a larger one ends the call at once: the intake worker's long
backoff is the right place to wait). Everything else fails at once.

Failures become ``ExtractionFailed(reason)`` with a code: ``http_<status>``, ``timeout``,
``connection``, ``tls`` (certificate refused: not retried), ``malformed_response`` (a 200 that is no
chat completion), ``truncated`` (the answer hit ``max_tokens``). They are raised without their cause:
the SDK's errors quote the server's body, which can echo the conversation. For the same reason the
SDK's debug logger (``MISTRAL_DEBUG`` logs request bodies) and its OpenTelemetry export
(``MISTRAL_SDK_TELEMETRY``, which would send spans to api.mistral.ai) are switched off here, whatever
the environment says.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx2
import structlog
from mistralai.client import Mistral, errors, models
from mistralai.client.utils.logger import NoOpLogger
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from carnet.domain.extraction.prompts import Prompt
from carnet.errors import ExtractionFailed

log = structlog.get_logger(__name__)

Observe = Callable[[str, float], None]


@dataclass(frozen=True, slots=True)
class Completion:
    content: str
    tokens_in: int
    tokens_out: int


@dataclass
class LlmStats:
    """Counters for the metrics (read at scrape time). ``calls`` counts requests Carnet made, each
    possibly in several attempts (``retries`` counts the extra ones); ``failures`` counts calls that
    raised, by reason in ``failure_reasons``."""

    calls: int = 0
    retries: int = 0
    failures: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    last_seconds: float = 0.0
    failure_reasons: dict[str, int] = field(default_factory=dict)
    set_aside: int = 0  # facts the model flagged not worth remembering
    not_member: int = 0  # facts the model said are about someone other than the member (a relative, a guardian…)
    extractions_sent: int = 0  # calls the turn filter sent to the LLM (``adapters.extractors.gated``)
    extractions_skipped: int = 0  # calls it did not send: no turn it keeps
    foreign_ids: int = 0  # obsolete ids the model gave that were not among those it was shown
    made_up_placeholders: int = 0  # placeholders in facts that no message had
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)

    def failed(self, reason: str) -> None:
        with self._lock:
            self.failures += 1
            self.failure_reasons[reason] = self.failure_reasons.get(reason, 0) + 1


class _Attempt(Exception):
    """A failed attempt: its reason code, whether trying again may help, and the server's wait."""

    def __init__(self, reason: str, *, transient: bool, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.transient, self.retry_after = reason, transient, retry_after


@dataclass(frozen=True, slots=True)
class CallRetry:
    max_retries: int = 2  # attempts after the first
    backoff: float = 0.5  # first wait, doubled each time, plus up to as much jitter
    max_backoff: float = 8.0
    max_retry_after: float = 10.0  # a longer Retry-After is left to the intake worker's backoff


class MistralChat:
    """The SDK client, its HTTP client (CA, timeouts) and the retry policy. Thread-safe."""

    def __init__(self, server_url: str, api_key: str | None, model: str, *, ca_cert: Path | None = None,
                 client_cert: tuple[Path, Path] | None = None, timeout: float = 30.0, max_tokens: int = 1024,
                 temperature: float = 0.0, retry: CallRetry | None = None, stats: LlmStats | None = None,
                 observe: Observe | None = None) -> None:
        self.model, self.max_tokens, self.temperature = model, max_tokens, temperature
        self.retry = retry or CallRetry()
        self._backoff = wait_exponential_jitter(multiplier=self.retry.backoff, max=self.retry.max_backoff,
                                                jitter=self.retry.backoff)
        self.stats = stats or LlmStats()
        self._observe = observe
        self._timeout_ms = int(timeout * 1000)
        verify: ssl.SSLContext | bool = True
        if ca_cert is not None or client_cert is not None:
            verify = ssl.create_default_context(cafile=str(ca_cert) if ca_cert is not None else None)
            if client_cert is not None:  # mutual TLS: (certificate, key)
                verify.load_cert_chain(client_cert[0], client_cert[1])
        self._http = httpx2.Client(verify=verify, timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)))
        # A callable key: with ``None`` the SDK would fall back on MISTRAL_API_KEY from the environment.
        self._sdk = Mistral(api_key=lambda: api_key, server_url=server_url.rstrip("/"), client=self._http,
                            retry_config=None, timeout_ms=self._timeout_ms, debug_logger=NoOpLogger())
        self._sdk.sdk_configuration.__dict__["telemetry"] = False  # read by the SDK's tracing hook

    def complete(self, operation: str, prompt: Prompt, *, schema_name: str, schema: dict[str, Any]) -> Completion:
        """One answer following ``schema``; ``ExtractionFailed`` once the attempts are spent.
        ``operation`` names the task in logs and in ``observe``."""
        started = time.perf_counter()
        retrying = Retrying(
            stop=stop_after_attempt(self.retry.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(self._worth_retrying),
            before_sleep=lambda state: self._before_sleep(operation, state),
            reraise=True,
        )
        self.stats.add(calls=1)
        try:
            done = retrying(self._attempt, prompt, schema_name, schema)
        except _Attempt as exc:
            self.stats.failed(exc.reason)
            log.warning("llm_call_failed", operation=operation, reason=exc.reason, model=self.model)
            raise ExtractionFailed(exc.reason) from None
        finally:
            seconds = time.perf_counter() - started
            self.stats.last_seconds = seconds
            if self._observe is not None:
                self._observe(operation, seconds)
        self.stats.add(tokens_in=done.tokens_in, tokens_out=done.tokens_out)
        return done

    def close(self) -> None:
        self._http.close()

    def _attempt(self, prompt: Prompt, schema_name: str, schema: dict[str, Any]) -> Completion:
        """``POST /v1/chat/completions`` once, errors turned into ``_Attempt``."""
        messages: list[models.ChatCompletionRequestMessage] = [
            models.SystemMessage(content=prompt.system), models.UserMessage(content=prompt.user)]
        try:
            res = self._sdk.chat.complete(
                model=self.model,
                messages=messages,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                response_format=models.ResponseFormat(type="json_schema", json_schema=models.JSONSchema.model_validate(
                    {"name": schema_name, "schema": schema, "strict": True})),
                timeout_ms=self._timeout_ms,
            )
        except errors.ResponseValidationError:
            raise _Attempt("malformed_response", transient=False) from None
        except errors.MistralError as exc:
            raise _http_failure(exc.status_code, exc.headers) from None
        except httpx2.TimeoutException:
            raise _Attempt("timeout", transient=True) from None
        except (httpx2.TransportError, errors.NoResponseError) as exc:
            tls = _caused_by(exc, ssl.SSLError)
            raise _Attempt("tls" if tls else "connection", transient=not tls) from None
        return _completion(res)

    def _worth_retrying(self, exc: BaseException) -> bool:
        if not isinstance(exc, _Attempt) or not exc.transient:
            return False
        return exc.retry_after is None or exc.retry_after <= self.retry.max_retry_after

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Attempt) and exc.retry_after is not None:
            return exc.retry_after
        return float(self._backoff(state))

    def _before_sleep(self, operation: str, state: RetryCallState) -> None:
        self.stats.add(retries=1)
        exc = state.outcome.exception() if state.outcome is not None else None
        reason = exc.reason if isinstance(exc, _Attempt) else "unknown"
        log.info("llm_call_retry", operation=operation, reason=reason, attempt=state.attempt_number)


def _completion(res: models.ChatCompletionResponse) -> Completion:
    choice = res.choices[0] if res.choices else None
    if choice is None or choice.message is None or not isinstance(choice.message.content, str):
        raise _Attempt("malformed_response", transient=False)
    if choice.finish_reason == "length":
        raise _Attempt("truncated", transient=False)
    usage = res.usage
    return Completion(choice.message.content, usage.prompt_tokens or 0, usage.completion_tokens or 0)


def _http_failure(status: int, headers: httpx2.Headers) -> _Attempt:
    if 200 <= status < 300:  # a success the SDK could not read as JSON
        return _Attempt("malformed_response", transient=False)
    return _Attempt(f"http_{status}", transient=status == 429 or status >= 500,
                    retry_after=_retry_after(headers.get("retry-after")))


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
