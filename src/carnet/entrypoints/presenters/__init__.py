"""Response shapes, each defined once: a pydantic model (what the OpenAPI document publishes) and the
presenter that turns a service result into it (``memory_out``, ``context_out``…). The REST routes
return the model (or, on the hot paths, its JSON in a ready ``JSONResponse``), the MCP tools' full
format ``as_json`` of the same model, and ``carnet apikey list`` prints the REST key shape: one shape,
one place, so the API, the tools and the OpenAPI document cannot drift apart. Where a service reports
its own result (``MaintainReport.as_dict``, ``ErasureReceipt.as_dict``…, which the CLI prints), the
presenter validates that report into the model.

A presenter passes every field explicitly (never a model default): a route answering with
``response_model_exclude_unset`` leaves out only what a presenter chose not to set."""
