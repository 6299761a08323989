"""A throwaway PKI for the PostgreSQL tests: a CA, a server certificate for ``localhost``/127.0.0.1,
a client certificate for the ``postgres`` user (``hostssl … cert`` logins) and an unrelated CA, EC
P-256, valid for a day: the test suite's clusters' and the soak's. (``tests.support.tls`` makes server-only
TLS; PostgreSQL needs the client side.)"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class ServerTls:
    ca: Path
    cert: Path
    key: Path


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _issue(subject: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey],
           *, ca: bool = False, san: list[x509.GeneralName] | None = None) -> x509.Certificate:
    now = datetime.now(UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer[0])
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return builder.sign(issuer[1], hashes.SHA256())


def _write(path: Path, cert: x509.Certificate | None = None, key: ec.EllipticCurvePrivateKey | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if cert is not None:
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    if key is not None:
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        os.chmod(path, 0o600)  # libpq and the server refuse a key others can read
    return path


def write_test_pki(client_dir: Path, *, server_dir: Path) -> ServerTls:
    """``client_dir``: ca.pem, client.pem, client.key and other-ca.pem (a CA that signed nothing);
    ``server_dir``: the server's ca.pem, server.pem, server.key."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _issue("carnet test CA", ca_key, (_name("carnet test CA"), ca_key), ca=True)
    server_key, client_key, other_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    san: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = _issue("localhost", server_key, (ca.subject, ca_key), san=san)
    client = _issue("postgres", client_key, (ca.subject, ca_key))
    other = _issue("another CA", other_key, (_name("another CA"), other_key), ca=True)
    for name, cert in (("ca.pem", ca), ("client.pem", client), ("other-ca.pem", other)):
        _write(client_dir / name, cert)
    _write(client_dir / "client.key", key=client_key)
    return ServerTls(ca=_write(server_dir / "ca.pem", ca), cert=_write(server_dir / "server.pem", server),
                     key=_write(server_dir / "server.key", key=server_key))
