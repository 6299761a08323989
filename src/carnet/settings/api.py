"""The HTTP API's limits (``CARNET_API__*``): sizes, rate limits, admission, trusted proxies."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator


class ApiSettings(BaseModel):
    max_text_chars: int = Field(8000, ge=1)
    max_batch: int = Field(500, ge=1)
    max_query_chars: int = Field(2000, ge=1)
    max_k: int = Field(100, ge=1)
    # Request bodies over this size get 413 before they are read (chunked bodies are counted too).
    max_body_bytes: int = Field(5 * 1024 * 1024, ge=1024)
    # A request's whole body must arrive within this (from its first byte read), or 408 request_timeout and the
    # connection closed. Bodies are read before admission, so a slow client never holds a slot.
    body_read_deadline_ms: int = Field(10_000, ge=1, le=300_000)
    # Bodies one API key may have being read at once; one more gets 429 rate_limited at once.
    body_reads_per_key: int = Field(16, ge=1, le=10_000)
    # A request's target and headers together, and their count: beyond either, 431 headers_too_large and the
    # connection closed, before any of it reaches the app (carnet.entrypoints.http.protocol).
    max_header_bytes: int = Field(32 * 1024, ge=4096, le=1024 * 1024)
    max_headers: int = Field(100, ge=16, le=1000)
    # Each key's request budget when the key has none of its own ("N/second", "N/minute"); "" = unlimited.
    rate_limit: str = "300/second"
    # Each client address's budget of requests that fail authentication (401), then 429; "" = unlimited.
    unauthenticated_rate_limit: str = "60/minute"
    # Admission (carnet.entrypoints.http.admission): requests under /api/v1 waiting for a slot beyond those at work;
    # one more gets 503 overloaded at once.
    max_queue: int = Field(64, ge=0)
    # The longest a request waits for a slot before 503 overloaded (its work never started).
    request_deadline_ms: int = Field(500, ge=1, le=60_000)
    # A request that finds every slot taken is refused at once (503 overloaded) when the wait it can expect
    # (those ahead of it, times the recent time a request holds a slot, over the slots) is longer than this.
    queue_target_ms: int = Field(150, ge=1, le=60_000)
    # Requests at work at once; None: one per CPU core, at most half the worker-thread pool (the rest
    # keeps /healthz, /readyz and /metrics from waiting behind them). Raise it for network-bound backends.
    max_concurrency: int | None = Field(None, ge=1)
    # Proxies (addresses or networks) whose X-Forwarded-For names the client; none by default.
    trusted_proxies: list[str] = Field(default_factory=list)

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, v: list[str]) -> list[str]:
        import ipaddress

        for net in v:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError as exc:
                raise ValueError("trusted_proxies must be IP addresses or networks like 10.0.0.0/8") from exc
        return v

    @field_validator("rate_limit", "unauthenticated_rate_limit")
    @classmethod
    def _rate(cls, v: str) -> str:
        if v:
            from carnet.domain.reconcile.values import check_rate

            try:
                check_rate(v)
            except ValueError:
                raise ValueError("rate_limit must look like '300/second' or '6000/minute'") from None
        return v
