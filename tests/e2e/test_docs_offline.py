"""`/docs` works air-gapped: the page and every file it loads come from Carnet, none from another host."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

from carnet.bootstrap.container import Container
from carnet.entrypoints.http.app import create_app
from carnet.entrypoints.http.server import running


class _References(HTMLParser):
    """Every URL the page makes the browser load: ``src`` and ``href`` of any tag."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []
        self.inline_scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        self.urls += [(tag, value) for name, value in attrs if name in ("src", "href") and value is not None]

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_scripts.append(data)


def test_docs_page_and_its_assets_are_served_by_carnet_without_a_key(container: Container) -> None:
    with running(create_app(container)) as base, httpx.Client(base_url=base, timeout=30) as http:
        page = http.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        refs = _References()
        refs.feed(page.text)
        assert "http://" not in page.text and "https://" not in page.text
        assert {tag for tag, _ in refs.urls} == {"script", "link"} and len(refs.urls) == 3, refs.urls
        types = {}  # asset name -> content type
        for tag, url in refs.urls:
            absolute = urljoin(f"{base}/docs", url)
            assert urlsplit(url).netloc == "" and absolute.startswith(f"{base}/docs/assets/"), url
            asset = http.get(absolute)  # no key: like /openapi.json, public
            assert asset.status_code == 200, url
            types[url.rsplit("/", 1)[1]] = asset.headers["content-type"]
            minimum = 500_000 if tag == "script" else 1_000  # sizes only the real files reach
            assert len(asset.content) > minimum, (url, len(asset.content))
        assert types["swagger-ui-bundle.js"].startswith("text/javascript")
        assert types["swagger-ui.css"].startswith("text/css")
        assert types["favicon.png"] == "image/png"
        assert http.get("/docs/assets/favicon.png").content.startswith(b"\x89PNG")
        # The start script asks for this server's schema, and for no online validator.
        (start,) = refs.inline_scripts
        assert "url: '/openapi.json'" in start and '"validatorUrl": null' in start
        schema = http.get("/openapi.json")
        assert schema.status_code == 200 and schema.json()["openapi"].startswith("3.1")
        assert not any(p.startswith("/docs") for p in schema.json()["paths"])
        assert http.get("/docs/assets/swagger-editor-bundle.js").status_code == 404  # only the three files


def test_the_bundled_swagger_ui_renders_openapi_3_1(container: Container) -> None:
    """Swagger UI 4 refuses an ``openapi: 3.1.x`` document ("Unable to render this definition");
    FastAPI publishes 3.1, so the bundled script must be Swagger UI 5 or later."""
    with running(create_app(container)) as base:
        js = httpx.get(f"{base}/docs/assets/swagger-ui-bundle.js", timeout=30).text
    assert "isOAS31" in js or "isOpenAPI31" in js
