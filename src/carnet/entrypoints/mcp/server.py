"""The MCP server: the tools of ``tools.TOOLS`` over the facade, for any transport.

Built on the SDK's low-level ``Server`` rather than ``MCPServer``: the tools' argument models are
ours (the same validation on every transport, and errors that name fields without echoing values),
failures become tool errors in one place (``results``), and nothing is configured as a side effect
(``MCPServer`` sets up the root logger when it is built).

The facade is synchronous (embedding, the shard, SQLite): each call runs in a worker thread, so a
slow one does not stall the event loop that ``carnet serve`` shares with REST.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio.to_thread
import mcp_types as types
import structlog
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from carnet import __version__
from carnet.entrypoints.mcp import results
from carnet.entrypoints.mcp.auth import Principals
from carnet.entrypoints.mcp.tools import TOOLS, Args, Json, Tool
from carnet.errors import CarnetError
from carnet.services.facade import Facade

log = structlog.get_logger("carnet.entrypoints.mcp")

INSTRUCTIONS = (
    "Carnet is the long-term memory of this assistant about the people it talks to (members, customers). "
    "Each person is a subject_id from your own systems. Before answering about a person, call assemble_context; "
    "when you learn something that will matter later, call remember with one fact per call; when the person asks "
    "you to forget something, find it (recall or list_memories) and call forget_memory. Errors come back as "
    '{"error": {"code", "message"}}: forbidden means this key may not do that, subject_not_found that nothing is '
    "known about this person yet. Team procedures in the prompt are approved by a supervisor; one marked ⚠ conflicts "
    "with the person's own constraint, which comes first. You may propose a procedure (propose_procedure), "
    "never approve one."
)

def build_server(facade: Facade, *, principal: Principals) -> Server[Any]:
    """An MCP server whose tools call ``facade`` as ``principal(ctx)`` (see ``carnet.entrypoints.mcp.auth``)."""
    listed = [types.Tool(name=t.name, title=t.title, description=t.description, annotations=t.annotations,
                         input_schema=t.arguments.model_json_schema()) for t in TOOLS.values()]

    async def list_tools(_: ServerRequestContext[Any, Any],
                         __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise MCPError(code=types.INVALID_PARAMS, message="unknown tool")  # never echo the name
        started = time.perf_counter()
        outcome, result = await _call(tool, params.arguments or {}, partial(_run, facade, principal, ctx, tool))
        log.info("mcp_tool", tool=tool.name, outcome=outcome, ms=round((time.perf_counter() - started) * 1000, 2))
        return result

    return Server("carnet", version=__version__, title="Carnet", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _run(facade: Facade, principal: Principals, ctx: ServerRequestContext[Any, Any], tool: Tool,
         args: Args) -> Json:
    """In a worker thread: who is calling (a catalog lookup on stdio), then the use case."""
    return tool.run(facade, principal(ctx), args)


async def _call(tool: Tool, arguments: dict[str, Any],
                run: Callable[[Args], Json]) -> tuple[str, types.CallToolResult]:
    """The call's outcome (``ok`` or an error code, for the log) and its result."""
    try:
        args = tool.arguments.model_validate(arguments)
    except ValidationError as exc:
        return "invalid_request", results.invalid_arguments(exc, tool.arguments.model_fields.keys())
    try:
        data = await anyio.to_thread.run_sync(run, args)
    except CarnetError as exc:
        return exc.code, results.failed(exc)
    except Exception as exc:  # translated like the REST edge's last handler: logged by type, never by its text
        log.error("mcp_tool_failed", tool=tool.name, error_type=type(exc).__name__)
        return "internal_error", results.error("internal_error", "internal error")
    return "ok", results.ok(data)
