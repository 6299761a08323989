"""A presented model as a ready JSON response, for the hot paths (assemble, search, readiness).

The model is serialised by pydantic-core in one native call: no intermediate dict, no standard-library
encoder, no second validation of the answer by FastAPI. The body is compact UTF-8 JSON with the model's
fields in order, as ``plain.as_json`` gives them to the MCP tools and the CLI."""

from __future__ import annotations

from fastapi.responses import Response
from pydantic import BaseModel


def presented(out: BaseModel, *, status_code: int = 200) -> Response:
    return Response(out.model_dump_json(), status_code=status_code, media_type="application/json")
