"""Which client a request comes from, for the budget of unauthenticated requests.

The peer of the TCP connection, unless that peer is one of the trusted proxies
(``CARNET_API__TRUSTED_PROXIES``, none by default): then ``X-Forwarded-For`` is read from the right,
skipping trusted proxies, and the first address that is not one is the client. A header from an
untrusted peer is ignored, so a client cannot pick the budget it spends from.

The result is a budget key, not an address to keep: IPv4 addresses as they are, IPv6 addresses
reduced to their /64 (one host usually holds a whole /64, so a finer key would let it rotate
addresses to escape its budget).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.types import Scope

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

UNKNOWN = "unknown"


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.7:5000"
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def budget_key(address: Address) -> str:
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class ClientAddress:
    def __init__(self, trusted_proxies: Iterable[str] = ()) -> None:
        self._trusted: tuple[Network, ...] = tuple(ipaddress.ip_network(n, strict=False) for n in trusted_proxies)

    def _is_trusted(self, address: Address) -> bool:
        return any(address.version == net.version and address in net for net in self._trusted)

    def client(self, scope: Scope) -> Address | None:
        """The client's address (``None`` when the server does not know its peer)."""
        peer_info = scope.get("client")
        peer = _address(str(peer_info[0])) if peer_info else None
        if peer is None or not self._trusted or not self._is_trusted(peer):
            return peer
        forwarded = b",".join(v for k, v in scope["headers"] if k == b"x-forwarded-for").decode("latin-1")
        client = peer
        for hop in reversed([h for h in forwarded.split(",") if h.strip()]):
            address = _address(hop)
            if address is None:  # garbage from further left cannot be trusted: stop at the last good hop
                break
            client = address
            if not self._is_trusted(address):
                break
        return client

    def source(self, scope: Scope) -> str:
        """The budget key of the request's client (``"unknown"`` without a peer)."""
        address = self.client(scope)
        return UNKNOWN if address is None else budget_key(address)
