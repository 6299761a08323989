"""The console over plain HTTP for tests against a real server: its cookies are ``Secure`` (``__Host-``),
which httpx keeps for https only, so they are carried here by hand."""

from __future__ import annotations

import re
from http.cookies import SimpleCookie
from typing import Any

import httpx

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


class PlainBrowser:
    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base, timeout=30)
        self.cookies: dict[str, str] = {}

    def __enter__(self) -> PlainBrowser:
        return self

    def __exit__(self, *_: object) -> None:
        self.http.close()

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        r = self.http.request(method, path, headers=headers, follow_redirects=False, **kw)
        for raw in r.headers.get_list("set-cookie"):
            for name, morsel in SimpleCookie(raw).items():
                if morsel.value:
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)
        return r

    def csrf(self, path: str) -> tuple[str, str]:
        """The CSRF token of the form on ``path``, and the page."""
        page = self.request("GET", path).text
        found = _CSRF.search(page)
        assert found, page[:500]
        return found.group(1), page

    def login(self, key: str) -> httpx.Response:
        token, _ = self.csrf("/console/login")
        return self.request("POST", "/console/login", data={"api_key": key, "csrf": token})
