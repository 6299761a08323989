"""``/docs``, the OpenAPI UI, served whole by Carnet: it works air-gapped.

FastAPI's own ``/docs`` page loads Swagger UI's script and stylesheet from a CDN and its favicon from
FastAPI's site, so on a bank's closed network it stays blank (and, on an open one, tells a third party
who reads the API's documentation). Here the page points at files served by Carnet under
``/docs/assets``, read from the ``swagger-ui-py`` distribution (Apache-2.0, Swagger UI's own licence
file beside the assets), which ships Swagger UI 5: the first major that renders OpenAPI 3.1, which
FastAPI publishes (``swagger-ui-bundle``, the other packaged copy, is still Swagger UI 4). Only the
three files the page uses are served, not the whole directory (the package also ships Swagger Editor).

Swagger UI's online validator is switched off (``validatorUrl: null``): by default the page shows a
badge fetched from validator.swagger.io, with the URL of ``/openapi.json`` in the request.

Like ``/openapi.json``, the page and its assets are public: they carry no data, and the gate
(``carnet.entrypoints.http.gate``) guards only ``/api/v1`` and ``/mcp``. Swagger UI starts from an inline script
(FastAPI's ``get_swagger_ui_html``); Carnet sends no Content-Security-Policy today, and one that
forbids inline scripts would need a nonce there.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.responses import FileResponse, HTMLResponse

DOCS_URL = "/docs"
ASSETS_URL = "/docs/assets"
# The files the page loads, by the name it asks for -> (file in the package's static/, content type).
ASSETS = {
    "swagger-ui-bundle.js": ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
    "swagger-ui.css": ("swagger-ui.css", "text/css; charset=utf-8"),
    "favicon.png": ("favicon-32x32.png", "image/png"),
}
_PACKAGE = "swagger_ui"  # the import name of the swagger-ui-py distribution


def assets_dir() -> Path:
    """Swagger UI's files inside the installed ``swagger-ui-py`` (found, not imported: the package's
    own code, its Jinja2 and YAML handlers, is never loaded)."""
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ImportError("/docs serves Swagger UI from swagger-ui-py: run `pip install swagger-ui-py`")
    return Path(locations[0]) / "static"


def install(app: FastAPI) -> None:
    """Adds ``/docs`` and its assets to ``app`` (built with ``docs_url=None``), out of the schema."""
    static = assets_dir()
    missing = [name for name, (file, _) in ASSETS.items() if not (static / file).is_file()]
    if missing:
        raise ImportError(f"Swagger UI's assets are missing from {static}: {', '.join(missing)} "
                          "(reinstall swagger-ui-py)")
    openapi_url = app.openapi_url or "/openapi.json"
    title = f"{app.title} - API"

    async def page(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}", title=title, oauth2_redirect_url=None,
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None})

    # FastAPI routes, not Starlette ones: the router then names the route in the scope, so the access
    # log and the latency histogram say route=/docs, not <unmatched>.
    app.add_api_route(DOCS_URL, page, methods=["GET"], include_in_schema=False)
    for name, (file, media_type) in ASSETS.items():
        app.add_api_route(f"{ASSETS_URL}/{name}", _asset(static / file, media_type), methods=["GET"],
                          include_in_schema=False)


def _asset(path: Path, media_type: str) -> Callable[[Request], Awaitable[FileResponse]]:
    async def serve(request: Request) -> FileResponse:
        return FileResponse(path, media_type=media_type, headers={"Cache-Control": "public, max-age=86400"})
    return serve
