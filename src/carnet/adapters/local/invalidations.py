"""``KeyInvalidations`` for one process (the embedded default, SQLite): the process that destroys a
key is the only one that caches it, and its keyring has forgotten it already. Nothing to tell."""

from __future__ import annotations

from carnet.ports import CacheEvictions


class InProcessInvalidations:
    errors = 0  # no listener, nothing to lose

    def publish(self, tenant: str, subject: str | None) -> None:
        """No other process to tell."""

    def subscribe(self, evictions: CacheEvictions) -> None:
        """No other process to hear."""

    def close(self) -> None:
        """Nothing open."""
