"""The SDK's decisions that a real server does not easily provoke: codes this client does not know,
answers that are not Carnet's, the retry policy, TLS options. The network is ``httpx.MockTransport``."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest
from carnet_client import (
    ApiError,
    AsyncCarnetClient,
    CarnetClient,
    ChatMessage,
    Conflict,
    KmsUnavailable,
    Overloaded,
    RateLimited,
    Retry,
    ServerError,
    ServiceUnavailable,
    StoreLocked,
    UnexpectedResponse,
)
from carnet_client._options import tls
from carnet_client._retry import retry_after

KEY = "crn_0123456789ab_" + "s" * 40
Handler = Callable[[httpx.Request], httpx.Response]


def _client(handler: Handler, retry: Retry | None = None) -> CarnetClient:
    return CarnetClient("http://carnet.test", KEY, retry=retry, transport=httpx.MockTransport(handler))


def _error(status: int, code: str, **extra: object) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": "m", **extra}})


def _counting(*answers: httpx.Response) -> tuple[list[httpx.Request], Handler]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[min(len(seen), len(answers)) - 1]

    return seen, handler


@pytest.mark.parametrize(("answer", "kind", "code"), [
    (_error(409, "store_locked"), StoreLocked, "store_locked"),
    (_error(409, "restore_refused"), Conflict, "restore_refused"),  # unknown code: its status family
    (_error(503, "kms_unavailable"), KmsUnavailable, "kms_unavailable"),
    (_error(418, "teapot"), ApiError, "teapot"),
    (httpx.Response(502, text="<html>Bad gateway</html>"), ServerError, "http_502"),
    (httpx.Response(503), ServiceUnavailable, "http_503"),
])
def test_errors_map_by_code_then_status(answer: httpx.Response, kind: type[ApiError], code: str) -> None:
    with _client(lambda _: answer) as carnet, pytest.raises(kind) as error:
        carnet.search("ADH-1", "q")
    assert error.value.code == code and error.value.status == answer.status_code
    assert KEY not in str(error.value) and "ADH-1" not in str(error.value)


def test_a_success_that_is_not_carnet_s_is_unexpected() -> None:
    with _client(lambda _: httpx.Response(200, text="<html>portal</html>")) as carnet:
        with pytest.raises(UnexpectedResponse):
            carnet.get_memory("ADH-1", "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11")
        with pytest.raises(UnexpectedResponse):
            carnet.export("ADH-1")


def test_the_key_is_only_in_the_authorization_header() -> None:
    seen, handler = _counting(httpx.Response(200, json={"status": "ok"}))
    with _client(handler) as carnet:
        assert carnet.health()
        assert KEY not in repr(carnet) and KEY not in repr(carnet._http.headers)
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    with pytest.raises(ValueError, match="api_key"):
        CarnetClient("http://carnet.test", "crn_x\nInjected: 1")


def test_reads_are_retried_after_503_writes_only_with_an_idempotency_key() -> None:
    unavailable = _error(503, "dependency_unavailable")
    ok = httpx.Response(200, json={"results": []})
    seen, handler = _counting(unavailable, ok)
    with _client(handler, Retry(backoff=0)) as carnet:
        assert carnet.search("ADH-1", "q") == ()
    assert len(seen) == 2

    seen, handler = _counting(unavailable)
    with _client(handler, Retry(backoff=0)) as carnet, pytest.raises(ServiceUnavailable):
        carnet.remember("ADH-1", "texte")
    assert len(seen) == 1
    seen, handler = _counting(unavailable)
    with _client(handler, Retry(attempts=2, backoff=0)) as carnet, pytest.raises(ServiceUnavailable):
        carnet.remember("ADH-1", "texte", idempotency_key="turn-1")
    assert len(seen) == 3  # the first try and two more, then the error


def test_429_is_retried_when_the_wait_is_short_and_raised_when_it_is_not() -> None:
    limited = _error(429, "rate_limited", retry_after=0)
    seen, handler = _counting(limited, httpx.Response(204))
    with _client(handler, Retry()) as carnet:
        carnet.forget("ADH-1", "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11")  # never processed: safe for any method
    assert len(seen) == 2

    later = httpx.Response(429, json={"error": {"code": "rate_limited", "message": "m"}}, headers={"Retry-After": "60"})
    seen, handler = _counting(later)
    with _client(handler, Retry(max_wait=5)) as carnet, pytest.raises(RateLimited) as error:
        carnet.health()
    assert len(seen) == 1 and error.value.retry_after == 60  # from the header when the body has none


def _overloaded(seconds: int) -> httpx.Response:
    return httpx.Response(503, json={"error": {"code": "overloaded", "message": "m", "retry_after": seconds}},
                          headers={"Retry-After": str(seconds)})


def test_503_overloaded_waits_retry_after_then_sends_even_a_write_again() -> None:
    accepted = httpx.Response(202, json={"intake_id": "6f1c0f4e-3f0b-4a43-9a1d-2d9f4b8a6b11", "status": "pending"})
    seen, handler = _counting(_overloaded(1), accepted)
    with _client(handler, Retry(backoff=0)) as carnet:
        started = time.monotonic()
        # No Idempotency-Key: safe to send again all the same, nothing of it ran.
        carnet.submit_messages("ADH-1", [ChatMessage("user", "Je déménage à Lyon.")])
        waited = time.monotonic() - started
    assert len(seen) == 2 and 0.95 <= waited < 3.0  # Retry-After, not the zero backoff

    seen, handler = _counting(_overloaded(60))
    with _client(handler, Retry(max_wait=5)) as carnet, pytest.raises(Overloaded) as error:
        carnet.remember("ADH-1", "texte")
    assert len(seen) == 1 and error.value.retry_after == 60  # longer than max_wait: raised at once

    seen, handler = _counting(_overloaded(1))
    with _client(handler) as carnet, pytest.raises(Overloaded):  # retries off: raised, never resent
        carnet.health()
    assert len(seen) == 1


def test_async_client_waits_retry_after_when_overloaded() -> None:
    answers = iter([_overloaded(1), httpx.Response(200, json={"status": "ok"})])

    async def scenario() -> float:
        transport = httpx.MockTransport(lambda _: next(answers))
        async with AsyncCarnetClient("http://carnet.test", KEY, retry=Retry(backoff=0), transport=transport) as c:
            started = time.monotonic()
            assert await c.health()
            return time.monotonic() - started

    assert 0.95 <= asyncio.run(scenario()) < 3.0


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after(httpx.Headers({"Retry-After": "3"})) == 3.0
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (retry_after(httpx.Headers({"Retry-After": soon})) or 0) <= 30
    assert retry_after(httpx.Headers({"Retry-After": "whenever"})) is None
    assert retry_after(httpx.Headers()) is None


def test_async_client_shares_the_retry_and_error_mapping() -> None:
    answers = iter([_error(503, "audit_unavailable"), httpx.Response(200, json={"status": "ok"})])

    async def scenario() -> None:
        transport = httpx.MockTransport(lambda _: next(answers))
        async with AsyncCarnetClient("http://carnet.test", KEY, retry=Retry(backoff=0), transport=transport) as c:
            assert await c.health()

    asyncio.run(scenario())


def test_tls_options(tmp_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "carnet-test")])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + timedelta(days=1))
            .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))

    assert tls(True, None) is True and tls(False, None) is False
    context = tls(tmp_path / "cert.pem", (tmp_path / "cert.pem", tmp_path / "key.pem"))
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED
    assert context.cert_store_stats()["x509"] == 1  # the private CA alone, not the system store
    with pytest.raises(ValueError, match="SSLContext"):
        tls(ssl.create_default_context(), tmp_path / "cert.pem")
