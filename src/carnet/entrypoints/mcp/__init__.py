"""The MCP edge: Carnet's memory tools for LLM agents, over stdio and streamable HTTP.

    tools.py    the seven tools: argument models (their JSON schemas are what the LLM reads), the facade
                call, a result in the REST API's shape (``carnet.entrypoints.presenters``) or a compact one
    compact.py  the compact results (what a model needs to read a record and act on it)
    results.py  tool results and tool errors: ``{"error": {"code", "message"}}``, never a traceback
    server.py   the MCP server (the SDK's low-level ``Server``): list and call the tools
    auth.py     who is calling: the key from the environment (stdio) or the request's bearer key (HTTP)
    http.py     ``/mcp`` inside the FastAPI app: the bearer-key gate and the session manager's lifespan
    stdio.py    ``carnet mcp``: checks its key, builds its own container, serves stdin/stdout

Every tool goes through ``carnet.services.facade.Facade``, like REST: the role check, the
special-category policy of the key and the audit happen there, not here.
"""

from carnet.entrypoints.mcp.server import build_server

__all__ = ["build_server"]
