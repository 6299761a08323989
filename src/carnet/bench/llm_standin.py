"""A stand-in for vLLM's OpenAI-compatible server whose answers come from the labels (``llm_labels``).

``POST /v1/chat/completions`` as vLLM answers it (the fields the ``mistralai`` SDK reads: ``id``,
``object``, ``created``, ``model``, ``choices[{index, message{role, content}, finish_reason}]``,
``usage``); the task is read from the request's ``response_format.json_schema.name`` (the names of
``domain.extraction.schemas.SCHEMA_NAMES``) and the answer is validated with that task's answer model
before it is sent, as guided decoding would keep it in schema. ``GET /healthz`` for ``running``. The
Mistral extractor talks to it over real HTTP, through the SDK and its retry policy, exactly as to vLLM.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from carnet.bench.llm_labels import Labels
from carnet.domain.extraction.schemas import ANSWERS, SCHEMA_NAMES

MODEL = "labels"  # the served model name the extractor must ask for
_TASKS = {name: task for task, name in SCHEMA_NAMES.items()}


def app(labels: Labels) -> FastAPI:
    served = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @served.get("/healthz")
    async def healthz() -> Response:
        return Response(status_code=200)

    @served.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        name = str((((body.get("response_format") or {}).get("json_schema")) or {}).get("name"))
        task = _TASKS.get(name)
        if task is None:
            return _error(400, f"response_format names no task of Carnet's: {name!r}")
        if body.get("model") != MODEL:
            return _error(404, f"The model `{body.get('model')}` does not exist.")
        user = next((str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"), "")
        answer = labels.answer(task, user)
        content = ANSWERS[task].model_validate_json(json.dumps(answer)).model_dump_json()
        return JSONResponse(_completion(content, body))

    return served


def _completion(content: str, body: dict[str, Any]) -> dict[str, Any]:
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
    completion = len(content) // 4
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "tool_calls": []},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "Bad Request", "param": None, "code": status}},
                        status_code=status)


@contextmanager
def serving(labels: Labels) -> Iterator[str]:
    """The stand-in on a free loopback port in a thread; yields its base URL (without ``/v1``)."""
    from carnet.entrypoints.http.server import running

    with running(app(labels)) as base:
        yield base
