"""The ``<scheme>:v<N>:<body>`` form that every wrapped key of Carnet's KMS adapters takes (Transit's
own form, which the dev and HSM adapters follow): the tenant-key version is readable without the key."""

from __future__ import annotations

import re

from carnet.errors import UnwrapFailed


class VersionedForm:
    """``scheme:vN:body`` for one scheme; ``what`` names it in the error of a text not of that form."""

    def __init__(self, scheme: str, what: str) -> None:
        self._scheme = scheme
        self._what = what
        self._prefix = re.compile(rf"^{re.escape(scheme)}:v([1-9][0-9]{{0,9}}):")

    def join(self, version: int, body: str) -> str:
        return f"{self._scheme}:v{version}:{body}"

    def split(self, ciphertext: str) -> tuple[int, str]:
        """(version, body); ``UnwrapFailed`` when ``ciphertext`` is not of this form."""
        match = self._prefix.match(ciphertext)
        if match is None:
            raise UnwrapFailed(f"not {self._what} (no {self._scheme}:vN: prefix)")
        return int(match.group(1)), ciphertext[match.end() :]

    def version(self, ciphertext: str) -> int:
        """The tenant-key version (``vault:v3:…`` → 3)."""
        return self.split(ciphertext)[0]
