"""A stand-in for vLLM's OpenAI-compatible server: a real HTTP server (FastAPI on uvicorn, in a
thread of the test process) that answers ``POST /v1/chat/completions`` in vLLM's shape, from a script.
No GPU and no model run in CI; this is what the Mistral extractor's tests talk to, over HTTP, with
the real ``mistralai`` SDK.

What it mirrors of vLLM (``vllm/entrypoints/openai``: the chat-completion protocol, the API server's
validation handler and its API-key middleware):

- the answer: ``id`` "chatcmpl-…", ``object`` "chat.completion", ``created``, ``model`` (the served
  name), ``choices[{index, message{role, content, tool_calls: [], reasoning_content: null, reasoning:
  null}, logprobs: null, finish_reason, stop_reason: null, token_ids: null}]``, ``usage{prompt_tokens,
  completion_tokens, total_tokens, prompt_tokens_details: null}``, and the vLLM-only top-level fields
  ``prompt_logprobs``, ``prompt_token_ids``, ``kv_transfer_params`` (null), ``service_tier``,
  ``system_fingerprint`` (null);
- ``--api-key``: a ``/v1`` request without ``Authorization: Bearer <key>`` gets 401
  ``{"error": "Unauthorized"}``; ``/health`` is open;
- an unknown model gets 404 ``{"error": {"message": "The model `x` does not exist.", "type":
  "NotFoundError", "param": "model", "code": 404}}``;
- invalid requests get 400 ``{"error": {"message", "type": "Bad Request", "param", "code": 400}}``
  (vLLM turns FastAPI's 422 into 400): ``messages`` required; ``tool_choice`` must be "none", "auto",
  "required" or a named function, and needs ``tools`` (so the SDK's ``tool_choice="any"`` is refused);
  ``response_format`` must be text, json_object, json_schema (with its ``json_schema``, which needs a
  ``name``) or structural_tag;
- unknown fields are accepted and ignored, as vLLM's request models do (they allow extras and only
  log them): each recorded request lists them in ``ignored``, so a test sees that the SDK's
  ``random_seed`` is not vLLM's ``seed``.

What it does not do: generate. Replies come from ``script``; when the script is empty the request
gets a 500 and the test fails at teardown. With guided decoding a server cannot answer outside the
requested schema, so a scripted answer that does not follow the request's ``json_schema`` is a test
bug, reported at teardown, unless the reply says ``guided=False`` (a server started without a
structured-output backend, a proxy that dropped ``response_format``: the malformed and
schema-violating cases). Faults: any status with an optional ``Retry-After``, a delay before
answering (past a client's timeout), ``finish_reason`` "length". Not covered: streaming, tools,
logprobs, real token counts (``usage`` is scripted or about a quarter of the characters).
With ``tls`` it serves HTTPS from a test CA (``tests.support.tls``). With ``embeddings`` it also answers
``POST /v1/embeddings`` as a vLLM embedding server does (``tests.support.vllm_embeddings``).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import jsonschema
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, ValidationError

from carnet.entrypoints.http.server import free_port
from tests.support.tls import MtlsFiles, TlsFiles
from tests.support.vllm_embeddings import VllmEmbeddings

# The fields of vLLM's ChatCompletionRequest; anything else is accepted and ignored.
VLLM_FIELDS = frozenset("""
messages model frequency_penalty logit_bias logprobs top_logprobs max_tokens max_completion_tokens n
presence_penalty response_format seed stop stream stream_options temperature top_p tools tool_choice
reasoning_effort thinking_token_budget include_reasoning parallel_tool_calls user use_beam_search top_k min_p
repetition_penalty watermarking length_penalty stop_token_ids include_stop_str_in_output ignore_eos min_tokens
skip_special_tokens spaces_between_special_tokens truncate_prompt_tokens truncation_side prompt_logprobs
logprob_token_ids allowed_token_ids bad_words echo add_generation_prompt continue_final_message
add_special_tokens documents chat_template chat_template_kwargs media_io_kwargs mm_processor_kwargs
structured_outputs priority request_id session_id return_tokens_as_token_ids return_token_ids
routed_experts_prompt_start return_token_offsets return_prompt_text return_mm_kwargs cache_salt
kv_transfer_params ec_transfer_params vllm_xargs repetition_detection stream_interval
""".split())


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    status: int = 200
    retry_after: str | None = None
    delay: float = 0.0  # seconds before answering
    finish_reason: str = "stop"
    guided: bool = True  # the content follows the request's schema, as guided decoding would make it
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; None: a quarter of the characters


def answer(obj: Any, **kw: Any) -> Reply:
    """A JSON answer (it must follow the request's schema)."""
    return Reply(content=json.dumps(obj, ensure_ascii=False), **kw)


def unguided(text: str, **kw: Any) -> Reply:
    """Any content, as a server that ignored ``response_format`` could send it."""
    return Reply(content=text, guided=False, **kw)


def fault(status: int, *, retry_after: str | None = None, **kw: Any) -> Reply:
    return Reply(status=status, retry_after=retry_after, **kw)


@dataclass
class Recorded:
    body: dict[str, Any]
    headers: dict[str, str]
    ignored: frozenset[str]
    status: int = 0

    @property
    def system(self) -> str:
        return str(next(m["content"] for m in self.body["messages"] if m["role"] == "system"))

    @property
    def user(self) -> str:
        return str(next(m["content"] for m in self.body["messages"] if m["role"] == "user"))


class _JsonSchemaFormat(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    name: str
    description: str | None = None
    schema_: dict[str, Any] | None = None
    strict: bool | None = None


class _ResponseFormat(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["text", "json_object", "json_schema", "structural_tag"]
    json_schema: _JsonSchemaFormat | None = None


class _ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    messages: list[dict[str, Any]]
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    response_format: _ResponseFormat | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = "none"
    stream: bool | None = False


class _Invalid(Exception):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param = message, param


@dataclass
class VllmStandIn:
    served_model: str = "mistral-small-3.2"
    api_key: str | None = "vllm-test-key"
    script: deque[Reply] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # test bugs seen by the server, asserted at teardown
    embeddings: VllmEmbeddings | None = None  # POST /v1/embeddings (an embedding model's server)

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def reset(self) -> None:
        self.script.clear()
        self.requests.clear()
        self.problems.clear()

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/health")
        async def health() -> Response:
            return Response(status_code=200)

        @app.get("/v1/models")
        async def list_models(request: Request) -> Response:
            if not self._authorized(request):
                return JSONResponse({"error": "Unauthorized"}, status_code=401)
            return JSONResponse({"object": "list", "data": [
                {"id": self.served_model, "object": "model", "created": int(time.time()), "owned_by": "vllm"}]})

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            return await self._chat(request)

        if self.embeddings is not None:
            self.embeddings.mount(app, self)
        return app

    def _authorized(self, request: Request) -> bool:
        return self.api_key is None or request.headers.get("authorization") == f"Bearer {self.api_key}"

    async def _chat(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"error": "Unauthorized"}, status_code=401)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "Bad Request", "invalid JSON body")
        recorded = Recorded(body if isinstance(body, dict) else {}, dict(request.headers),
                            frozenset(body) - VLLM_FIELDS if isinstance(body, dict) else frozenset())
        self.requests.append(recorded)
        try:
            parsed = _validate(body)
        except _Invalid as exc:
            recorded.status = 400
            return _error(400, "Bad Request", exc.message, exc.param)
        if parsed.model is not None and parsed.model != self.served_model:
            recorded.status = 404
            return _error(404, "NotFoundError", f"The model `{parsed.model}` does not exist.", "model")
        reply = self.script.popleft() if self.script else None
        if reply is None:
            self.problems.append("script exhausted")
            recorded.status = 500
            return _error(500, "InternalServerError", "stand-in: script exhausted")
        if reply.delay:
            await asyncio.sleep(reply.delay)
        recorded.status = reply.status
        if reply.status != 200:
            headers = {"retry-after": reply.retry_after} if reply.retry_after is not None else None
            return _error(reply.status, "InternalServerError" if reply.status >= 500 else "Error", "scripted fault",
                          headers=headers)
        self._check_guided(parsed, reply)
        return JSONResponse(self._completion(parsed, reply))

    def _check_guided(self, parsed: _ChatRequest, reply: Reply) -> None:
        rf = parsed.response_format
        if not reply.guided or rf is None or rf.json_schema is None or rf.json_schema.schema_ is None:
            return
        try:
            jsonschema.validate(json.loads(reply.content or ""), rf.json_schema.schema_)
        except (ValueError, jsonschema.ValidationError) as exc:
            self.problems.append(f"scripted answer outside the requested schema: {exc}")

    def _completion(self, parsed: _ChatRequest, reply: Reply) -> dict[str, Any]:
        content = reply.content or ""
        prompt_chars = sum(len(str(m.get("content", ""))) for m in parsed.messages)
        prompt_tokens, completion_tokens = reply.usage or (prompt_chars // 4, len(content) // 4)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.served_model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None, "annotations": None,
                            "audio": None, "function_call": None, "tool_calls": [], "reasoning_content": None,
                            "reasoning": None},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
                "stop_reason": None,
                "token_ids": None,
            }],
            "service_tier": None,
            "system_fingerprint": None,
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + completion_tokens,
                      "completion_tokens": completion_tokens, "prompt_tokens_details": None},
            "prompt_logprobs": None,
            "prompt_token_ids": None,
            "kv_transfer_params": None,
        }


def _validate(body: Any) -> _ChatRequest:
    """The checks vLLM's request model makes that matter here, in its words."""
    if not isinstance(body, dict):
        raise _Invalid("Input should be a valid dictionary")
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema" and rf.get("json_schema") is None:
        raise _Invalid("When response_format type is 'json_schema', the 'json_schema' field must be provided.",
                       "response_format")
    _check_tool_choice(body)
    try:
        data = dict(body)
        if isinstance(rf, dict) and isinstance(rf.get("json_schema"), dict):
            js = dict(rf["json_schema"])
            js["schema_"] = js.pop("schema", None)
            data["response_format"] = {**rf, "json_schema": js}
        return _ChatRequest.model_validate(data)
    except ValidationError as exc:
        raise _Invalid(str(exc)) from None


def _check_tool_choice(body: dict[str, Any]) -> None:
    if body.get("tools") == []:
        raise _Invalid("`tools` must not be an empty array. Either provide at least one tool or omit the field "
                       "entirely.", "tools")
    choice = body.get("tool_choice", "auto" if body.get("tools") else None)
    if choice is None or choice == "none":
        return
    if body.get("tools") is None:
        raise _Invalid("When using `tool_choice`, `tools` must be set.", "tool_choice")
    if choice not in ("auto", "required") and not isinstance(choice, dict):
        raise _Invalid(f'Invalid value for `tool_choice`: {choice}! Only named tools, "none", "auto" or '
                       '"required" are supported.', "tool_choice")


def _error(status: int, kind: str, message: str, param: str | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": status}},
                        status_code=status, headers=headers)


@contextmanager
def serving(stand_in: VllmStandIn, *, tls: TlsFiles | None = None, mtls: MtlsFiles | None = None) -> Iterator[str]:
    """Serve ``stand_in`` on a free port in a background thread; yields the base URL (no ``/v1``).
    ``mtls``: HTTPS from its server files, client certificates from its CA required."""
    port = free_port()
    tls = mtls.server if mtls is not None else tls
    config = uvicorn.Config(stand_in.app(), host="127.0.0.1", port=port, access_log=False, log_config=None,
                            lifespan="off", timeout_graceful_shutdown=1,
                            ssl_certfile=str(tls.cert) if tls else None, ssl_keyfile=str(tls.key) if tls else None,
                            ssl_ca_certs=str(mtls.server.ca_cert) if mtls else None,
                            ssl_cert_reqs=ssl.CERT_REQUIRED if mtls else ssl.CERT_NONE)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="vllm-stand-in", daemon=True)
    thread.start()
    base = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    try:
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(tls.ca_cert)) if tls else True
        if mtls is not None and isinstance(verify, ssl.SSLContext):
            verify.load_cert_chain(mtls.client_cert, mtls.client_key)
        _wait_ready(base, thread, verify=verify)
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _wait_ready(base: str, thread: threading.Thread, *, verify: ssl.SSLContext | bool, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not thread.is_alive():
            raise RuntimeError("the vLLM stand-in stopped before it was ready")
        try:
            if httpx.get(f"{base}/health", timeout=1.0, verify=verify).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.02)  # poll interval, not a wait for readiness
    raise TimeoutError(f"the vLLM stand-in at {base} was not ready after {timeout}s")
