"""Response shapes, each defined once: a pydantic model (what the OpenAPI document publishes) and the
presenter that turns a service result into it (``memory_out``, ``context_out``…). The REST routes
return the model (or, on the hot paths, its JSON), the MCP tools ``as_json`` of the same model, and the
CLI prints it: one shape, one place, so the API, the tools and the document cannot drift apart.

A presenter passes every field explicitly (never a model default): a route answering with
``response_model_exclude_unset`` leaves out only what a presenter chose not to set."""
